"""A shard whose Ray worker dies silently is run again, and the receipt and the log say so
(issue 31, item 13), with the killed attempt's temporary folder removed from its node.

Ray itself is not needed: a stand-in ``ray`` module runs each task in a thread of this process.
A "killed" attempt's thread stops inside the shard's run and never returns (so its ``finally``
never runs, as under SIGKILL) while its result reports ``WorkerCrashedError``; the driver must
then retry it on its own (tasks are submitted with ``max_retries=0``: Ray's own retries say
nothing), record the attempt's node and cause, and remove the folder it left.
"""

from __future__ import annotations

import sys
import threading
import types
from pathlib import Path

import pytest

from conformance.contract.corpus import Selection
from conformance.runner import ray_executor
from conformance.runner.job import JobError
from conformance.runner.request import RunRequest

REPO = Path(__file__).resolve().parents[2]


class RayTaskError(Exception):
    pass


class WorkerCrashedError(Exception):
    pass


class Ref:
    def __init__(self):
        self.done = threading.Event()
        self.value = self.error = None


class FakeRay(types.ModuleType):
    """The part of Ray the executor uses: remote functions and actors, wait, get, nodes."""

    def __init__(self, killed: set[int]):
        super().__init__("ray")
        self.exceptions = types.SimpleNamespace(RayTaskError=RayTaskError, WorkerCrashedError=WorkerCrashedError)
        self.killed, self.entered, self.release = killed, threading.Event(), threading.Event()
        self.options_seen, self.attempt_count, self.removed_on = [], 0, []
        self.node = threading.local()

    def is_initialized(self):
        return True

    def nodes(self):
        return [{"Alive": True, "NodeID": "n1", "Resources": {"CPU": 2.0, "memory": 4 * 2**30}}]

    def get_runtime_context(self):
        return types.SimpleNamespace(get_node_id=lambda: "n1")

    def remote(self, target):
        fake = self
        if isinstance(target, type):
            class Actor:
                def options(self, **kw):
                    return self

                def remote(self, *a):
                    instance = target(*a)
                    return types.SimpleNamespace(**{name: _Now(getattr(instance, name))
                                                    for name in dir(instance) if not name.startswith("_")})
            return Actor()

        class Task:
            def __init__(self, options=None):
                self.opts = options or {}

            def options(self, **kw):
                fake.options_seen.append((target.__name__, kw))
                return Task(kw)

            def remote(self, *args):
                ref = Ref()
                if target.__name__ != "shard_task":
                    fake.removed_on.append(self.opts.get("scheduling_strategy"))
                    ref.value, _ = target(*args), ref.done.set()
                    return ref
                fake.attempt_count += 1
                dies = fake.attempt_count in fake.killed

                def body():
                    try:
                        ref.value = target(*args)
                    except Exception as exc:  # noqa: BLE001 - the shard's own error
                        ref.error = RayTaskError(str(exc))
                    ref.done.set()
                thread = threading.Thread(target=body, daemon=True)
                if dies:
                    fake.entered.clear()
                thread.start()
                if dies:  # the worker is killed once the shard runs: no result, no finally
                    assert fake.entered.wait(60)
                    ref.error, ref.value = WorkerCrashedError("The worker died unexpectedly"), None
                    ref.done.set()
                return ref
        return Task()

    def wait(self, refs, num_returns=1):
        while True:
            ready = [r for r in refs if r.done.is_set()]
            if ready:
                return ready[:num_returns], [r for r in refs if r not in ready[:num_returns]]
            refs[0].done.wait(0.05)

    def get(self, ref, timeout=None):
        assert ref.done.wait(timeout or 600)
        if ref.error is not None:
            raise ref.error
        return ref.value

    def cancel(self, ref, force=False):
        pass


class _Now:
    """An actor method whose ``.remote()`` runs at once."""

    def __init__(self, method):
        self.method = method

    def remote(self, *a):
        ref = Ref()
        ref.value = self.method(*a)
        ref.done.set()
        return ref


class NodeAffinitySchedulingStrategy:
    def __init__(self, node_id, soft):
        self.node_id, self.soft = node_id, soft


@pytest.fixture
def fake_ray(monkeypatch, request):
    fake = FakeRay(killed=set(request.param))
    strategies = types.ModuleType("ray.util.scheduling_strategies")
    strategies.NodeAffinitySchedulingStrategy = NodeAffinitySchedulingStrategy
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setitem(sys.modules, "ray.util", types.ModuleType("ray.util"))
    monkeypatch.setitem(sys.modules, "ray.util.scheduling_strategies", strategies)
    real_run = ray_executor.run
    left: list[Path] = []

    def run(req):
        if fake.attempt_count in fake.killed:
            left.append(Path(req.records_dir).parent)
            fake.entered.set()
            fake.release.wait()  # killed: never returns
            raise RuntimeError("killed")
        return real_run(req)
    monkeypatch.setattr(ray_executor, "run", run)
    fake.left = left
    yield fake
    fake.release.set()


def request_for(tmp_path) -> RunRequest:
    return RunRequest(adapters=["keyword"], fixtures_dir=REPO / "fixtures", gold_dir=REPO / "gold",
                      records_dir=tmp_path / "runs", selection=Selection(patterns=("cod-short-001",)), n_boot=100,
                      reference=False)


@pytest.mark.parametrize("fake_ray", [(1,)], indirect=True)
def test_a_silently_killed_shard_is_retried_recorded_and_its_folder_removed(fake_ray, tmp_path):
    lines: list[str] = []
    doc = ray_executor.run_on_ray(request_for(tmp_path), shards=1, log=lines.append)
    assert doc.complete
    assert all(kw.get("max_retries") == 0 for name, kw in fake_ray.options_seen if name == "shard_task")
    shard = doc.receipt.config["merged_from"][0]["executor"]["ray"]
    retry, = shard["retries"]
    assert retry["attempt"] == 1 and retry["node_id"] == "n1" and "WorkerCrashedError" in retry["cause"]
    assert retry["temp_folder"] == str(fake_ray.left[0]) and retry["temp_folder_removed"] is True
    assert not fake_ray.left[0].exists()  # removed on its node by a task pinned there
    pinned, = fake_ray.removed_on
    assert pinned.node_id == "n1" and pinned.soft is False
    assert any("shard 1/1" in line and "attempt 1" in line and "WorkerCrashedError" in line and "again" in line
               for line in lines)


@pytest.mark.parametrize("fake_ray", [(1, 2, 3, 4)], indirect=True)
def test_a_shard_killed_on_every_attempt_fails_naming_each(fake_ray, tmp_path):
    with pytest.raises(JobError) as caught:
        ray_executor.run_on_ray(request_for(tmp_path), shards=1)
    message = str(caught.value)
    assert f"{ray_executor.MAX_ATTEMPTS} attempts" in message and "WorkerCrashedError" in message
    assert not any(p.exists() for p in fake_ray.left)

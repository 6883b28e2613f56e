"""The mem0 adapter, end to end over gRPC, in its own virtualenv (mem0ai is not in the runner's).

Builds (once, cached by a hash of requirements.txt) the adapter's virtualenv under
``~/.cache/drift-conformance/test-venvs/``, starts ``adapters/mem0/adapter.py`` as a
subprocess with only a copy of ``drift_sdk`` on its PYTHONPATH, waits for health SERVING,
then talks to it through the stubs in ``drift_sdk.v1``. Skips when the virtualenv cannot be
built because no package index is reachable. The ad-hoc process code below is local to this
test on purpose; the runner's own launcher lives in ``conformance/backend/``.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from drift_sdk.v1 import memory_backend_pb2 as pb
from drift_sdk.v1 import memory_backend_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = ROOT / "adapters" / "mem0"
SDK_EXTRAS = ("grpcio", "grpcio-health-checking", "protobuf")
STARTUP_TIMEOUT_S = 180
NETWORK_TROUBLE = re.compile(
    r"NewConnectionError|Failed to establish a new connection|Temporary failure in name resolution|"
    r"Name or service not known|Network is unreachable|ConnectTimeout|ReadTimeout|ProxyError|"
    r"\(from versions: none\)")


def _venv_dir() -> Path:
    digest = hashlib.sha256((ADAPTER / "requirements.txt").read_bytes())
    digest.update(" ".join(SDK_EXTRAS).encode())
    digest.update(f"{sys.version_info.major}.{sys.version_info.minor} {platform.machine()}".encode())
    return Path.home() / ".cache" / "drift-conformance" / "test-venvs" / f"mem0-{digest.hexdigest()[:12]}"


def _adapter_python() -> Path:
    """The venv's python, building the venv if needed; skips when no index is reachable."""
    env_dir = _venv_dir()
    python, done = env_dir / "bin" / "python", env_dir / ".complete"
    if done.exists():
        return python
    env_dir.parent.mkdir(parents=True, exist_ok=True)
    with open(env_dir.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return python
        shutil.rmtree(env_dir, ignore_errors=True)
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
        proc = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--retries", "1",
             "--timeout", "20", "-r", str(ADAPTER / "requirements.txt"), *SDK_EXTRAS],
            capture_output=True, text=True)
        if proc.returncode != 0:
            shutil.rmtree(env_dir, ignore_errors=True)
            output = proc.stdout + proc.stderr
            tail = "\n".join(output.strip().splitlines()[-15:])
            if NETWORK_TROUBLE.search(output):
                pytest.skip(f"mem0 adapter venv cannot be built: no package index reachable\n{tail}")
            pytest.fail(f"pip could not install adapters/mem0/requirements.txt:\n{tail}")
        done.write_text(f"built in {time.monotonic() - started:.1f} s\n")
    return python


class RunningAdapter:
    def __init__(self, tmp: Path):
        python = _adapter_python()
        sdk = tmp / "sdk"
        shutil.copytree(ROOT / "drift_sdk", sdk / "drift_sdk", ignore=shutil.ignore_patterns("__pycache__"))
        self.workdir, self.home = tmp / "work", tmp / "home"
        self.workdir.mkdir()
        self.home.mkdir()
        port_file = tmp / "port"
        self.log = tmp / "adapter.log"
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home),
               "PYTHONPATH": str(sdk), "PYTHONUNBUFFERED": "1", "PYTHONNOUSERSITE": "1",
               "DRIFT_BACKEND_ADDRESS": "127.0.0.1:0", "DRIFT_BACKEND_PORT_FILE": str(port_file)}
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen([str(python), str(ADAPTER / "adapter.py")], cwd=self.workdir, env=env,
                                         stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        started = time.monotonic()
        try:
            while not port_file.exists():
                self._wait_step(started, "bind a port")
            self.channel = grpc.insecure_channel(f"127.0.0.1:{int(port_file.read_text())}")
            health = health_pb2_grpc.HealthStub(self.channel)
            while True:
                try:
                    status = health.Check(health_pb2.HealthCheckRequest(service="drift.v1.MemoryBackend"),
                                          timeout=2).status
                    if status == health_pb2.HealthCheckResponse.SERVING:
                        break
                except grpc.RpcError:
                    pass
                self._wait_step(started, "report SERVING")
        except BaseException:
            self.close()
            raise
        self.startup_s = time.monotonic() - started
        self.stub = pb_grpc.MemoryBackendStub(self.channel)

    def _wait_step(self, started: float, what: str) -> None:
        if self.proc.poll() is not None:
            pytest.fail(f"mem0 adapter exited with code {self.proc.returncode} before it could {what}:\n"
                        f"{self.log_tail()}")
        if time.monotonic() - started > STARTUP_TIMEOUT_S:
            pytest.fail(f"mem0 adapter did not {what} within {STARTUP_TIMEOUT_S} s:\n{self.log_tail()}")
        time.sleep(0.1)

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def close(self) -> None:
        if getattr(self, "channel", None) is not None:
            self.channel.close()
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


@pytest.fixture(scope="module")
def adapter(tmp_path_factory):
    running = RunningAdapter(tmp_path_factory.mktemp("mem0"))
    yield running
    running.close()


def _message(mid, author, role, text, ts):
    return pb.Message(message_id=mid, author=author, role=role, text=text, timestamp=ts, scope="shared")


SESSIONS = [
    pb.Session(session_id="s1", index=0, time="2026-03-02T10:00:00Z", participants=["alice", "agent"], messages=[
        _message("s1-m1", "alice", "user", "I just adopted a beagle puppy and named him Rufus.", "2026-03-02T10:00:00Z"),
        _message("s1-m2", "agent", "assistant", "Congratulations! Beagles are energetic dogs.", "2026-03-02T10:00:20Z"),
        _message("s1-m3", "alice", "user", "My sister Carla moved to Lisbon to work as a nurse.", "2026-03-02T10:01:00Z"),
    ]),
    pb.Session(session_id="s2", index=1, time="2026-03-09T18:30:00Z", participants=["alice", "agent"], messages=[
        _message("s2-m1", "alice", "user", "I'm training for the Berlin marathon in September.", "2026-03-09T18:30:00Z"),
        _message("s2-m2", "agent", "assistant", "Great goal. How many kilometres do you run each week?",
                 "2026-03-09T18:30:30Z"),
        _message("s2-m3", "alice", "system", "Reminder: alice prefers green tea over coffee.", "2026-03-09T18:31:00Z"),
    ]),
]
ALL_IDS = {m.message_id for s in SESSIONS for m in s.messages}


def _store_all(stub, ns):
    stub.Reset(pb.ResetRequest(namespace=ns), timeout=60)
    stored = [stub.Store(pb.StoreRequest(namespace=ns, session=s), timeout=60).items_stored for s in SESSIONS]
    assert stored == [3, 3]
    assert stub.Flush(pb.FlushRequest(namespace=ns, timeout_s=30), timeout=60).ready is True


def _retrieve(stub, ns, query, k=3):
    return list(stub.Retrieve(pb.RetrieveRequest(namespace=ns, query=query, k=k, querying_entity="alice",
                                                 now="2026-03-10T09:00:00Z"), timeout=60).hits)


def _snapshot(stub, ns):
    return list(stub.Snapshot(pb.SnapshotRequest(namespace=ns), timeout=60))


def test_manifest_validates_against_the_launcher_schema():
    from conformance.backend.manifest import load_manifest

    manifest = load_manifest(ADAPTER)
    assert manifest.name == "mem0" and manifest.entry == "adapter.py"
    assert manifest.startup_timeout_s >= 60


@pytest.mark.slow
def test_describe(adapter):
    d = adapter.stub.Describe(pb.DescribeRequest(), timeout=30)
    assert d.name == "mem0" and d.version.startswith("mem0ai-2.2.")
    c = d.capabilities
    assert c.provenance and c.snapshot and c.forget and c.flush_signal and c.deterministic
    assert not c.scopes and not c.time_aware
    assert list(d.internal_models) == ["sentence-transformers/all-MiniLM-L6-v2 (int8 ONNX)"]
    assert d.settings["infer"] == "false" and d.settings["mem0_version"].startswith("2.2.")


@pytest.mark.slow
def test_store_retrieve_snapshot_reset(adapter):
    stub = adapter.stub
    _store_all(stub, "run-a")

    hits = _retrieve(stub, "run-a", "Which city does Carla live in?")
    assert 1 <= len(hits) <= 3
    assert list(hits[0].source_ids) == ["s1-m3"] and "Lisbon" in hits[0].text
    assert hits[0].timestamp == "2026-03-02T10:01:00Z"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert list(_retrieve(stub, "run-a", "What is the name of alice's dog?", k=1)[0].source_ids) == ["s1-m1"]
    # a system message is stored too (mem0 itself would drop it with infer=False)
    assert list(_retrieve(stub, "run-a", "Does alice drink tea or coffee?", k=1)[0].source_ids) == ["s2-m3"]

    items = _snapshot(stub, "run-a")
    assert {sid for i in items for sid in i.source_ids} == ALL_IDS
    assert all(len(i.source_ids) == 1 and i.item_id and i.timestamp for i in items)
    assert any(i.text == "alice: My sister Carla moved to Lisbon to work as a nurse." for i in items)

    stub.Reset(pb.ResetRequest(namespace="run-a"), timeout=60)
    assert _snapshot(stub, "run-a") == []
    assert _retrieve(stub, "run-a", "Which city does Carla live in?") == []


@pytest.mark.slow
def test_namespaces_are_isolated_and_reruns_are_identical(adapter):
    stub = adapter.stub
    _store_all(stub, "run-b")
    stub.Reset(pb.ResetRequest(namespace="run-c"), timeout=60)
    stub.Store(pb.StoreRequest(namespace="run-c", session=pb.Session(
        session_id="x1", index=0, time="2026-03-02T10:00:00Z", participants=["bob"],
        messages=[_message("x1-m1", "bob", "user", "Bob's cat is called Miso.", "2026-03-02T10:00:00Z")])),
        timeout=60)
    assert {sid for i in _snapshot(stub, "run-c") for sid in i.source_ids} == {"x1-m1"}
    queries = ["What pet does alice have?", "marathon training", "cat called Miso"]
    first = [[(h.text, h.score, tuple(h.source_ids)) for h in _retrieve(stub, "run-b", q, k=6)] for q in queries]
    assert all(sid in ALL_IDS for hits in first for _, _, ids in hits for sid in ids)
    _store_all(stub, "run-b")  # reset and store again: same hits, same scores
    again = [[(h.text, h.score, tuple(h.source_ids)) for h in _retrieve(stub, "run-b", q, k=6)] for q in queries]
    assert again == first


@pytest.mark.slow
def test_forget_removes_the_memories_of_a_message(adapter):
    stub = adapter.stub
    _store_all(stub, "run-d")
    removed = stub.Forget(pb.ForgetRequest(namespace="run-d", source_ids=["s1-m3", "no-such-id"]), timeout=60)
    assert removed.items_removed == 1
    assert {sid for i in _snapshot(stub, "run-d") for sid in i.source_ids} == ALL_IDS - {"s1-m3"}
    assert all("s1-m3" not in h.source_ids for h in _retrieve(stub, "run-d", "Which city does Carla live in?"))


@pytest.mark.slow
def test_bad_input_and_home_folder(adapter):
    with pytest.raises(grpc.RpcError) as err:
        adapter.stub.Retrieve(pb.RetrieveRequest(namespace="run-a", query="x", k=0), timeout=30)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as err:  # mem0 rejects a user_id with whitespace
        adapter.stub.Reset(pb.ResetRequest(namespace="has space"), timeout=30)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert sorted(p.name for p in adapter.workdir.iterdir()) == ["mem0-data"]
    assert list(adapter.home.rglob("*")) == [], "the adapter wrote into its home folder"

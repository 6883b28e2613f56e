"""Done-when of the shards: the ``ci`` split through keyword as 2 shards, merged, scores
exactly as the committed reference of the unsharded run (tests/data/ci_reference_keyword.json,
which tests/test_end_to_end.py holds every unsharded ``ci`` run to), in every metric not
derived from measured time.

Where Ray can start, the 2 shards run as Ray tasks on a real local cluster: a head and a
worker node started with ``ray start`` on this machine (one CPU and a small object store
each: the machine is shared), one shard per node, stopped after by their process groups; a
driver restart with ``--resume`` then reuses the finished shard and runs only the lost one.
Where Ray cannot start, that test skips with the reason and the 2 shards run as plain
``--shard`` runs instead. One of the two runs, never both (each costs a ``ci`` job, and
``.ci/run`` has 15 minutes); both end in the same merge, and tests/runner/test_shards.py
compares plain shards with a whole run on a smaller selection everywhere.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
from ci_reference import REFERENCE, render  # noqa: E402
from ray_env import RayEnv, ray_env  # noqa: E402

pytestmark = pytest.mark.slow

NODE_MEMORY = 1_500_000_000
"""Ray's ``memory`` resource of each node, bytes: less than keyword's 2 GB, so the request is clamped."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _node_args() -> list[str]:
    # Two nodes on one host: every per-node port is its own.
    ports = {"--node-manager-port", "--object-manager-port", "--dashboard-agent-listen-port",
             "--dashboard-agent-grpc-port", "--runtime-env-agent-port", "--metrics-export-port"}
    args = [a for flag in sorted(ports) for a in (flag, str(_free_port()))]
    return args + ["--num-cpus", "1", "--memory", str(NODE_MEMORY), "--object-store-memory", str(80 * 2**20),
                   "--disable-usage-stats", "--block"]


def _stop(proc: subprocess.Popen) -> None:
    """Stop one ``ray start --block`` and what it started: its own process group, by its id."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 10)):  # --block can sit on SIGTERM for long
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _alive_nodes(renv: RayEnv, address: str) -> int:
    code = ("import ray; ray.init(address=%r, log_to_driver=False); "
            "print(sum(1 for n in ray.nodes() if n['Alive']))" % address)
    proc = subprocess.run([renv.python, "-c", code], capture_output=True, text=True, timeout=60, env=renv.env)
    return int(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 and proc.stdout.strip() else 0


@pytest.fixture(scope="module")
def cluster():
    """(the address of a running two-node local Ray cluster, its RayEnv) or (None, why there is none),
    Ray coming from the tests' cached virtualenv (tests/ray_env.py)."""
    renv, why = ray_env()
    if renv is None:
        yield None, why
        return
    ray_bin = renv.ray_command()
    temp = tempfile.mkdtemp(prefix="dray", dir="/tmp")  # short: Ray's unix sockets live under it
    port = _free_port()
    address = f"127.0.0.1:{port}"
    log = open(Path(temp) / "ray-start.log", "w")
    started = []
    try:
        started.append(subprocess.Popen([*ray_bin, "start", "--head", "--port", str(port), "--node-ip-address",
                                         "127.0.0.1", "--include-dashboard", "false", "--temp-dir", temp,
                                         "--ray-client-server-port", str(_free_port()), *_node_args()],
                                        stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=renv.env))
        deadline = time.monotonic() + 120
        while _alive_nodes(renv, address) < 1:
            if time.monotonic() > deadline or started[0].poll() is not None:
                yield None, f"Ray's head node did not start here: {_tail(log.name)}"
                return
            time.sleep(2)
        started.append(subprocess.Popen([*ray_bin, "start", "--address", address, "--node-ip-address", "127.0.0.1",
                                         *_node_args()], stdout=log, stderr=subprocess.STDOUT,
                                        start_new_session=True, env=renv.env))
        while _alive_nodes(renv, address) < 2:
            if time.monotonic() > deadline or started[1].poll() is not None:
                yield None, f"Ray's worker node did not join the head here: {_tail(log.name)}"
                return
            time.sleep(2)
        yield address, renv
    finally:
        for proc in reversed(started):
            _stop(proc)
        log.close()
        shutil.rmtree(temp, ignore_errors=True)


def _tail(path: str) -> str:
    lines = Path(path).read_text(errors="replace").strip().splitlines()
    return " | ".join(lines[-3:]) or "no output"


def check_against_reference(doc: dict, how: str) -> None:
    got, want = render(doc), REFERENCE.read_text(encoding="utf-8")
    if got != want:
        lines = difflib.unified_diff(want.splitlines(True), got.splitlines(True), "reference", how)
        pytest.fail(f"the ci split as 2 shards ({how}) scores differently from {REFERENCE.name}:\n"
                    + "".join(list(lines)[:80]))


def cli(*args, cwd: Path, renv: RayEnv | None = None) -> subprocess.CompletedProcess:
    """The CLI run by this interpreter, or by the Ray virtualenv's when ``renv`` is given."""
    return subprocess.run([renv.python if renv else sys.executable, "-m", "conformance.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=900, env=renv.env if renv else None)


def test_the_ci_split_through_ray_on_two_nodes_is_the_unsharded_run_and_resumes(cluster, tmp_path):
    address, renv = cluster
    if address is None:  # then the second item says why
        pytest.skip(f"{renv}; test_the_ci_split_as_two_plain_shards_is_the_unsharded_run runs instead")
    run = ("--adapter", "keyword", "--split", "ci", "--executor", "ray", "--ray-address", address, "--shards", "2",
           "--records-dir", "runs")
    first = cli(*run, "--out", "first.json", cwd=tmp_path, renv=renv)
    assert first.returncode == 0, first.stderr
    doc = json.loads((tmp_path / "first.json").read_text())
    check_against_reference(doc, "Ray")
    shards = doc["receipt"]["config"]["merged_from"]
    nodes = {s["executor"]["ray"]["node_id"] for s in shards}
    assert [s["shard"] for s in shards] == ["1/2", "2/2"] and len(nodes) == 2, shards  # one shard per node

    # A driver restart: shard 2's outputs never came back; --resume reuses shard 1 and runs shard 2.
    run_id = doc["receipt"]["config"]["run_id"]
    folder = tmp_path / "runs" / run_id / "shards"
    kept = (folder / "1-of-2" / "result.json").read_bytes()
    shutil.rmtree(folder / "2-of-2")
    (tmp_path / "runs" / run_id / "records.jsonl").unlink()
    again = cli(*run, "--resume", run_id, "--out", "again.json", cwd=tmp_path, renv=renv)
    assert again.returncode == 0, again.stderr
    assert "shards 1/2 already finished" in again.stderr and "shard 2/2 done" in again.stderr
    assert (folder / "1-of-2" / "result.json").read_bytes() == kept
    check_against_reference(json.loads((tmp_path / "again.json").read_text()), "Ray, resumed")


def test_the_ci_split_as_two_plain_shards_is_the_unsharded_run(cluster, tmp_path):
    if cluster[0] is not None:
        pytest.skip("Ray started here, so the ci split's 2-shard comparison ran through it "
                    "(test_the_ci_split_through_ray_on_two_nodes_is_the_unsharded_run_and_resumes)")
    for i in (1, 2):
        proc = cli("--adapter", "keyword", "--split", "ci", "--shard", f"{i}/2", "--out", f"s{i}.json",
                   "--records-dir", "runs", "--quiet", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    merged = cli("merge", "s1.json", "s2.json", "--out", "merged.json", "--records-dir", "runs", "-q", cwd=tmp_path)
    assert merged.returncode == 0, merged.stderr
    assert [len(json.loads((tmp_path / f"s{i}.json").read_text())["receipt"]["scenarios"]) for i in (1, 2)] == [4, 4]
    check_against_reference(json.loads((tmp_path / "merged.json").read_text()), "plain --shard")

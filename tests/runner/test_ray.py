"""``--executor ray`` against a real local Ray cluster: a head and a worker node started with
``ray start`` on this machine (one CPU and a small object store each, the machine is shared),
stopped after by their process groups. Skipped with the reason where Ray is not installed or
cannot start.

- The ``ci`` split as 2 shards on the 2 nodes, each shard on its own node, merges to the
  committed reference of the unsharded run (tests/data/ci_reference_keyword.json) in every
  metric not derived from measured time.
- A driver restart with ``--resume`` reuses the finished shard and runs only the missing one.
- The resource request comes from adapter.yaml (DRIFT's 8 CPUs / 32 GB when undeclared),
  clamped to the largest node.
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

from conformance.runner.ray_executor import DRIFT_HOST, clamp, shard_resources
from conformance.runner.request import RunRequest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
from ci_reference import REFERENCE, render  # noqa: E402

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


def _alive_nodes(address: str) -> int:
    code = ("import ray; ray.init(address=%r, log_to_driver=False); "
            "print(sum(1 for n in ray.nodes() if n['Alive']))" % address)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    return int(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 and proc.stdout.strip() else 0


@pytest.fixture(scope="module")
def cluster():
    """The address of a running two-node local Ray cluster."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'drift-conformance[ray]')")
    ray_bin = shutil.which("ray", path=os.path.dirname(sys.executable)) or shutil.which("ray")
    if ray_bin is None:
        pytest.skip("the `ray` command is not on PATH beside this Python")
    temp = tempfile.mkdtemp(prefix="dray", dir="/tmp")  # short: Ray's unix sockets live under it
    port = _free_port()
    address = f"127.0.0.1:{port}"
    log = open(Path(temp) / "ray-start.log", "w")
    started = []
    try:
        started.append(subprocess.Popen([ray_bin, "start", "--head", "--port", str(port), "--node-ip-address",
                                         "127.0.0.1", "--include-dashboard", "false", "--temp-dir", temp,
                                         "--ray-client-server-port", str(_free_port()), *_node_args()],
                                        stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        deadline = time.monotonic() + 120
        while _alive_nodes(address) < 1:
            if time.monotonic() > deadline or started[0].poll() is not None:
                pytest.skip(f"Ray's head node did not start here: see {log.name}")
            time.sleep(2)
        started.append(subprocess.Popen([ray_bin, "start", "--address", address, "--node-ip-address", "127.0.0.1",
                                         *_node_args()], stdout=log, stderr=subprocess.STDOUT,
                                        start_new_session=True))
        while _alive_nodes(address) < 2:
            if time.monotonic() > deadline or started[1].poll() is not None:
                pytest.skip(f"Ray's worker node did not join the head here: see {log.name}")
            time.sleep(2)
        yield address
    finally:
        for proc in reversed(started):
            _stop(proc)
        log.close()
        shutil.rmtree(temp, ignore_errors=True)


def cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=900)


def test_the_ci_split_through_ray_on_two_nodes_is_the_unsharded_run_and_resumes(cluster, tmp_path):
    run = ("--adapter", "keyword", "--split", "ci", "--executor", "ray", "--ray-address", cluster, "--shards", "2",
           "--records-dir", "runs")
    first = cli(*run, "--out", "first.json", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    doc = json.loads((tmp_path / "first.json").read_text())
    got, want = render(doc), REFERENCE.read_text(encoding="utf-8")
    if got != want:
        diff = "".join(list(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "reference", "ray"))[:80])
        pytest.fail(f"the ci split through Ray scores differently from {REFERENCE.name}:\n{diff}")
    shards = doc["receipt"]["config"]["merged_from"]
    nodes = {s["executor"]["ray"]["node_id"] for s in shards}
    assert [s["shard"] for s in shards] == ["1/2", "2/2"] and len(nodes) == 2, shards  # one shard per node

    # A driver restart: shard 2's outputs never came back; --resume reuses shard 1 and runs shard 2.
    run_id = doc["receipt"]["config"]["run_id"]
    folder = tmp_path / "runs" / run_id / "shards"
    kept = (folder / "1-of-2" / "result.json").read_bytes()
    shutil.rmtree(folder / "2-of-2")
    (tmp_path / "runs" / run_id / "records.jsonl").unlink()
    again = cli(*run, "--resume", run_id, "--out", "again.json", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "shards 1/2 already finished" in again.stderr and "shard 2/2 done" in again.stderr
    assert (folder / "1-of-2" / "result.json").read_bytes() == kept
    assert render(json.loads((tmp_path / "again.json").read_text())) == want


def test_the_request_comes_from_adapter_yaml_and_is_clamped_to_the_largest_node():
    request = RunRequest(adapters=["keyword", "grpc://127.0.0.1:1"], fixtures_dir=REPO / "fixtures",
                         gold_dir=REPO / "gold", records_dir=Path("runs"))
    wanted = shard_resources(request)
    assert wanted["from"]["keyword"] == {"cpus": 1, "memory_gb": 2, "source": "adapter.yaml"}
    assert wanted["from"]["grpc://127.0.0.1:1"]["cpus"] == DRIFT_HOST["cpus"] == 8  # undeclared: DRIFT's host
    assert (wanted["cpus"], wanted["memory_gb"]) == (8, 32)
    nodes = [{"Alive": True, "Resources": {"CPU": 2.0, "memory": 3 * 2**30}},
             {"Alive": True, "Resources": {"CPU": 4.0, "memory": 2 * 2**30}},
             {"Alive": False, "Resources": {"CPU": 64.0, "memory": 64 * 2**30}}]
    assert clamp(wanted, nodes) == {"num_cpus": 4.0, "memory": 3 * 2**30}
    assert clamp({"cpus": 1, "memory_gb": 2}, nodes) == {"num_cpus": 1, "memory": 2 * 2**30}


def test_without_a_cluster_the_error_says_so(tmp_path):
    proc = cli("--adapter", "keyword", "--scenario", "cod-short-001", "--executor", "ray", "--ray-address",
               f"127.0.0.1:{_free_port()}", "--records-dir", "runs", "--quiet", cwd=tmp_path)
    assert proc.returncode == 2 and "could not reach a Ray cluster" in proc.stderr, proc.stderr


def test_ray_options_without_the_executor_are_refused(tmp_path):
    proc = cli("--shards", "2", "--scenario", "cod-short-001", cwd=tmp_path)
    assert proc.returncode == 2 and "go with --executor ray" in proc.stderr

"""``--executor ray`` without a cluster: the resource request from adapter.yaml (DRIFT's 8 CPUs /
32 GB when undeclared) clamped to the largest node, and the errors a driver gives before any
task runs. The runs on a real two-node local cluster are tests/runner/test_shards_ci.py.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.runner.ray_executor import DRIFT_HOST, clamp, shard_resources
from conformance.runner.request import RunRequest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
from ray_env import ray_env  # noqa: E402


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


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
    renv, why = ray_env()
    if renv is None:
        pytest.skip(why)
    proc = subprocess.run([renv.python, "-m", "conformance.cli", "--adapter", "keyword", "--scenario", "cod-short-001",
                           "--executor", "ray", "--ray-address", f"127.0.0.1:{_free_port()}", "--records-dir", "runs",
                           "--quiet"], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=renv.env)
    assert proc.returncode == 2 and "could not reach a Ray cluster" in proc.stderr, proc.stderr


def test_ray_options_without_the_executor_are_refused(tmp_path):
    proc = cli("--shards", "2", "--scenario", "cod-short-001", cwd=tmp_path)
    assert proc.returncode == 2 and "go with --executor ray" in proc.stderr


def test_without_ray_installed_the_error_names_the_extra(tmp_path):
    hidden = tmp_path / "hide" / "ray"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'ray'\", name='ray')\n")
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "--scenario", "cod-short-001", "--executor", "ray",
                           "--records-dir", "runs", "--quiet"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(hidden.parent)})
    assert proc.returncode == 2 and "pip install 'drift-conformance[ray]'" in proc.stderr, proc.stderr

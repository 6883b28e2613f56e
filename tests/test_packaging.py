"""`pip install .` carries the built-in adapters, the corpus and the schemas, and the
CLI finds them from any working directory."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conformance.backend.venvs import looks_offline

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        if looks_offline(proc.stdout + proc.stderr):
            pytest.skip(f"cannot fetch the build backend (no package index): {proc.stderr[-400:]}")
        pytest.fail(f"`pip wheel .` failed, so `pip install .` fails too:\n{proc.stderr[-2000:]}")
    return next(out.glob("drift_conformance-*.whl"))


def test_wheel_carries_adapters_corpus_schemas_and_the_sdk(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in ("conformance/_data/adapters/keyword/adapter.py", "conformance/_data/adapters/mem0/requirements.txt",
                     "conformance/_data/fixtures/ua-short-001.jsonl", "conformance/_data/gold/ua-short-001.json",
                     "conformance/_data/schema/result.schema.json", "conformance/_data/proto/drift/v1/memory_backend.proto",
                     "conformance/_data/scenarios/ua-baseline-001.yaml", "conformance/_data/fixtures/_ledger.json",
                     "drift_sdk/v1/memory_backend_pb2.py", "conformance/cli/__init__.py"):
        assert required in names, required
    assert not any("shared/datasets" in n or n.endswith("locomo10.json") for n in names)
    (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    importers = text.split("[drift_conformance.importers]")[1].split("[")[0]
    assert sorted(line.split("=")[0].strip() for line in importers.splitlines() if "=" in line) == \
        ["beam", "guide", "locomo", "longmemeval"]


def test_installed_cli_finds_adapters_and_corpus_from_anywhere(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                   check=True, capture_output=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"}
    where = subprocess.run([sys.executable, "-c", "from conformance import paths; print(paths.data_root())"],
                           cwd=elsewhere, env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert where.startswith(str(target)), where
    listed = subprocess.run([sys.executable, "-m", "conformance.cli", "adapters"], cwd=elsewhere, env=env,
                            capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    assert {"keyword", "mem0", "none"} <= {line.split()[0] for line in listed.stdout.splitlines()}
    importers = subprocess.run([sys.executable, "-m", "conformance.cli", "import", "list"], cwd=elsewhere, env=env,
                               capture_output=True, text=True)
    assert importers.returncode == 0, importers.stderr
    assert [line.split("\t")[0] for line in importers.stdout.splitlines()] == ["beam", "guide", "locomo", "longmemeval"]
    valid = subprocess.run([sys.executable, "-m", "conformance.cli", "validate"], cwd=elsewhere, env=env,
                           capture_output=True, text=True)
    committed = len(list((REPO / "fixtures").glob("*.jsonl")))
    assert valid.returncode == 0 and f"{committed} scenarios valid" in valid.stdout, valid.stderr

"""Fail loud, not low (conformance.runner.findable).

- A Store that claims every message and keeps none: before this check the run finished
  exit 0, complete, with no warning; now a fault names system, scenario, checkpoint and
  check, the result is incomplete (exit 2), and keyword is still scored.
- A Flush that never gets ready (it claims a readiness signal): the same.
- The amnesiac control, which claims nothing, is not flagged.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from conformance.runner.findable import sampled_sessions
from conformance.runner.job import run_job
from conformance.runner.run import RunConfig
from conformance.contract.corpus import Selection

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = ("ua-short-001", "crw-short-002")

LIAR = '''
from drift_sdk import Backend, Capabilities, StoreResult, serve

MODE = {mode!r}

class Liar(Backend):
    name, version = "liar", "0"
    capabilities = Capabilities(provenance=True, flush_signal=True, deterministic=True)
    def reset(self, namespace):
        pass
    def store(self, namespace, session):
        return StoreResult(items_stored=len(session.messages))  # claims all, keeps none
    def flush(self, namespace, timeout_s):
        return MODE != "never-ready"
    def retrieve(self, namespace, query, k, querying_entity, now):
        return []

serve(Liar())
'''


def liar(tmp_path: Path, mode: str) -> str:
    folder = tmp_path / f"liar-{mode}"
    folder.mkdir()
    (folder / "adapter.py").write_text(textwrap.dedent(LIAR.format(mode=mode)))
    (folder / "requirements.txt").write_text("")
    (folder / "adapter.yaml").write_text("name: liar\ndescription: claims what it does not keep\n"
                                         "startup_timeout_s: 60\n")
    return str(folder)


def test_the_sample_is_deterministic_and_keeps_stream_order():
    ids = [f"s{i}" for i in range(20)]
    picked = sampled_sessions(ids, "scenario/c1")
    assert picked == sampled_sessions(ids, "scenario/c1") and len(picked) == 3
    assert picked == sorted(picked, key=ids.index) and picked != sampled_sessions(ids, "scenario/c2")


def test_a_store_that_keeps_nothing_is_a_fault_not_a_low_score(tmp_path):
    doc = run_job([liar(tmp_path, "empty"), "keyword"], REPO / "fixtures", REPO / "gold",
                  selection=Selection(patterns=SCENARIOS), records_dir=tmp_path / "runs", n_boot=200)
    assert doc.complete is False
    assert len(doc.errors) == len(SCENARIOS)  # one per scenario: the check runs at its first checkpoint
    first = doc.errors[0]
    assert first.startswith("liar: scenario crw-short-002, checkpoint ") and "findability" in first
    assert "Store claimed" in first and "yet Retrieve returned no hit" in first
    assert not any(e.startswith(("keyword", "none", "oracle", "reference-compressor")) for e in doc.errors)
    assert doc.systems["keyword"].metrics["accuracy"].value > 0


def test_a_flush_that_never_gets_ready_is_a_fault(tmp_path):
    doc = run_job([liar(tmp_path, "never-ready")], REPO / "fixtures", REPO / "gold",
                  selection=Selection(patterns=SCENARIOS[:1]), records_dir=tmp_path / "runs", n_boot=200,
                  config=RunConfig(flush_timeout_s=0.5))
    assert doc.complete is False
    [error] = doc.errors
    assert error.startswith(f"liar: scenario {SCENARIOS[0]}, checkpoint ") and ": Flush failed: " in error
    assert "stayed not ready past its 0.5 s timeout" in error


def test_the_cli_exits_2_on_a_store_that_keeps_nothing(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "--adapter", liar(tmp_path, "empty"),
                           "--scenario", SCENARIOS[0], "--quiet", "--out", "r.json", "--records-dir", "runs",
                           "--bootstrap", "100"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2, proc.stderr
    assert "the run is incomplete: 1 error" in proc.stderr and "findability check" in proc.stderr
    assert json.loads((tmp_path / "r.json").read_text())["complete"] is False


def test_the_amnesiac_claims_nothing_and_is_not_flagged(tmp_path):
    doc = run_job([], REPO / "fixtures", REPO / "gold", selection=Selection(patterns=SCENARIOS[:1]),
                  records_dir=tmp_path / "runs", n_boot=200)
    assert doc.complete is True and doc.errors == []

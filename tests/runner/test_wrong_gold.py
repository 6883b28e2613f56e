"""The run validates gold exactly as ``drift-conformance validate`` does (issue 31, item 10).

A gold answer that its own evidence contradicts was caught by ``validate`` (the semantic
check: the reader over the evidence gives another option) but a run scored against it:
exit 0, oracle accuracy 0.75, no note. The run now refuses it before any adapter starts.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from conformance.contract.corpus import iter_fixture
from conformance.contract.fixture import CheckpointLine

REPO = Path(__file__).resolve().parents[2]
SCENARIO = "crw-short-002"


def _wrong_gold(tmp_path: Path) -> tuple[Path, Path, Path, str]:
    """A copy of one scenario whose first option probe's gold answer is another of its options."""
    fixtures, gold = tmp_path / "fixtures", tmp_path / "gold"
    fixtures.mkdir()
    gold.mkdir()
    shutil.copy(REPO / "fixtures" / f"{SCENARIO}.jsonl", fixtures)
    options = {p.probe_id: p.options for line in iter_fixture(fixtures / f"{SCENARIO}.jsonl")
               if isinstance(line, CheckpointLine) for p in line.probes if p.options}
    document = json.loads((REPO / "gold" / f"{SCENARIO}.json").read_text())
    truth = next(p for p in document["probes"] if not p["abstention"] and p["probe_id"] in options)
    wrong = next(o for o in options[truth["probe_id"]] if o not in (truth["answer"], *truth["accepted"])
                 and o != "unknown")
    truth["answer"] = wrong
    gold_path = gold / f"{SCENARIO}.json"
    gold_path.write_text(json.dumps(document))
    return fixtures, gold, gold_path, truth["probe_id"]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], capture_output=True, text=True,
                          timeout=600, cwd=REPO)


def test_a_run_refuses_gold_that_validate_refuses(tmp_path):
    fixtures, gold, gold_path, probe_id = _wrong_gold(tmp_path)
    corpus = ["--fixtures", str(fixtures), "--gold", str(gold)]
    checked = _cli("validate", *corpus)
    assert checked.returncode == 2 and probe_id in checked.stderr, checked.stderr
    out = tmp_path / "result.json"
    run = _cli("--adapter", "keyword", *corpus, "--quiet", "--bootstrap", "100", "--records-dir", str(tmp_path / "runs"),
               "--out", str(out))
    assert run.returncode == 2, (run.returncode, run.stderr[-2000:])
    assert str(gold_path) in run.stderr and probe_id in run.stderr, run.stderr
    assert "a bug" not in run.stderr
    assert not out.exists()
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").rglob("records.jsonl"))


def test_the_unchanged_scenario_still_runs(tmp_path):
    fixtures, gold = tmp_path / "fixtures", tmp_path / "gold"
    fixtures.mkdir()
    gold.mkdir()
    shutil.copy(REPO / "fixtures" / f"{SCENARIO}.jsonl", fixtures)
    shutil.copy(REPO / "gold" / f"{SCENARIO}.json", gold)
    run = _cli("--adapter", "keyword", "--fixtures", str(fixtures), "--gold", str(gold), "--quiet", "--bootstrap", "100",
               "--records-dir", str(tmp_path / "runs"), "--out", str(tmp_path / "result.json"))
    assert run.returncode == 0, run.stderr[-2000:]

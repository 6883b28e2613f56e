"""The controls are the bounds: the instrument checks (conformance.scoring.instrument).

A golden test of the check logic on hand-made results, and a run whose gold lost the
evidence of its probes (the oracle then answers from nothing, keyword beats it): the failed
check shows in result.json and in the table, and the exit code stays 0.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from conformance.contract.result import MetricValue, SystemResult
from conformance.scoring.instrument import bounded_names, failed_lines, instrument_checks

REPO = Path(__file__).resolve().parents[2]


def result(**values) -> SystemResult:
    return SystemResult(adapter="x", kind="system",
                        metrics={name.replace("__", "."): MetricValue(value=v, n=10) for name, v in values.items()})


def test_bounded_names_are_the_capability_metrics_and_their_horizons_not_tes():
    metrics = {n: None for n in ("accuracy", "accuracy.revision", "drift_c", "drift_c.short", "tes", "privacy_score",
                                 "selectivity.long", "recall_at_k", "lps")}
    assert bounded_names(metrics) == ["accuracy", "drift_c", "drift_c.short", "recall_at_k", "selectivity.long"]


def test_a_system_above_the_oracle_fails_only_that_check():
    results = {"none": result(accuracy=0.1), "oracle": result(accuracy=0.9, drift_c__short=0.937, tes=1.0),
               "filter": result(accuracy=0.9, drift_c__short=0.978, tes=179.0), "fine": result(accuracy=0.5)}
    checks = instrument_checks(results, generated=True, hard_gate=True)
    assert checks.applies and not checks.passed
    failed = [c for c in checks.checks if not c.passed]
    # accuracy equal to the oracle's is no breach; TES is unbounded and exempt
    assert [(c.name, c.system, c.metric) for c in failed] == [("oracle_bound", "filter", "drift_c.short")]
    assert failed[0].detail == ("filter drift_c.short 0.9780 is above the oracle's 0.9370: audit the gold "
                                "(guide §9), this is not a win")
    assert failed_lines(checks) == ["instrument check failed (oracle_bound): " + failed[0].detail]


def test_all_below_passes_and_a_missing_control_fails():
    results = {"none": result(accuracy=0.1), "oracle": result(accuracy=1.0), "kw": result(accuracy=0.7)}
    checks = instrument_checks(results, generated=True, hard_gate=True)
    assert checks.passed and [c.name for c in checks.checks] == ["controls_present", "oracle_bound"]
    assert failed_lines(checks) == []
    alone = instrument_checks({"kw": result(accuracy=0.7)}, generated=True, hard_gate=True)
    assert not alone.passed and alone.checks[0].detail == "controls missing: none, oracle"


def test_the_bound_does_not_apply_on_imported_data_or_another_gate():
    results = {"none": result(), "oracle": result(accuracy=0.2), "kw": result(accuracy=0.7)}
    imported = instrument_checks(results, generated=False, hard_gate=True)
    assert not imported.applies and imported.passed and "imported corpus" in imported.reason
    soft = instrument_checks(results, generated=True, hard_gate=False)
    assert not soft.applies and soft.passed and "not the hard budget gate" in soft.reason


def test_the_oracle_keeps_every_memorable_session_so_its_selectivity_is_one(tmp_path):
    from conformance.runner.job import run_job
    from conformance.contract.corpus import Selection

    doc = run_job([], REPO / "fixtures", REPO / "gold", selection=Selection(patterns=("ua-short-001",)),
                  records_dir=tmp_path / "runs", n_boot=50)
    assert doc.systems["oracle"].metrics["selectivity"].value == 1.0
    assert doc.instrument_checks.applies and doc.instrument_checks.passed


def test_a_gold_without_evidence_is_refused_before_it_lets_keyword_beat_the_oracle(tmp_path):
    """Gold whose probes cite no evidence once let keyword beat the oracle (the oracle bound then
    failed, exit 0); the run now applies validate's checks first and scores nothing (issue 31,
    item 10). The bound itself is tested on results above."""
    scenario = "ua-short-001"
    fixtures, gold = tmp_path / "fixtures", tmp_path / "gold"
    fixtures.mkdir()
    gold.mkdir()
    shutil.copy(REPO / "fixtures" / f"{scenario}.jsonl", fixtures)
    doc = json.loads((REPO / "gold" / f"{scenario}.json").read_text())
    for probe in doc["probes"]:
        probe["evidence"] = []  # a broken gold: the oracle now retrieves nothing
    (gold / f"{scenario}.json").write_text(json.dumps(doc))
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "--adapter", "keyword", "--fixtures", str(fixtures),
                           "--gold", str(gold), "--out", "r.json", "--records-dir", "runs", "--bootstrap", "100"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2, proc.stderr
    assert f"{scenario}.json" in proc.stderr and "semantic checks" in proc.stderr, proc.stderr
    assert not (tmp_path / "r.json").exists()

"""A run's output for a log (no TTY): one progress line per finished scenario with elapsed time and
ETA, a table that fits the log, and the comparison of every system under test in result.json."""

import json
import re
import subprocess
import sys

import pytest


def test_a_log_gets_one_line_per_finished_scenario_and_the_comparison(tmp_path):
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "--adapter", "keyword", "--adapter", "recent",
                           "--scenario", "ua-short-00[12]", "--out", str(out), "--records-dir", str(tmp_path / "runs")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("scenario ")]
    assert len(lines) == 2, proc.stderr
    assert re.fullmatch(r"scenario 1/2 ua-short-00[12] done: \d+ sessions, elapsed \d+:\d\d:\d\d, ETA \d+:\d\d:\d\d",
                        lines[0]), lines[0]
    assert re.fullmatch(r"scenario 2/2 ua-short-00[12] done: \d+ sessions, elapsed \d+:\d\d:\d\d", lines[1]), lines[1]
    # The table fits a log's 100 columns, and says which system is better first.
    tables = proc.stdout.split("\nnote:")[0]
    assert max(len(line) for line in tables.splitlines()) <= 100
    assert proc.stdout.lstrip().startswith("which system is better")
    # The comparison covers the systems under test, controls apart, with the published values.
    doc = json.loads(out.read_text())
    comp = doc["comparisons"]
    assert set(comp["metrics"]) == {"drift_c", "drift_e", "accuracy"}
    assert set(comp["metrics"]["drift_c"]["systems"]) == {"reference-compressor", "keyword", "recent"}
    for system in ("keyword", "recent"):
        for metric in ("accuracy", "drift_c"):
            assert comp["metrics"][metric]["values"][system] == pytest.approx(
                doc["systems"][system]["metrics"][metric]["value"])
    assert len(comp["metrics"]["drift_c"]["pairs"]) == 3


def test_a_resumed_run_counts_on_from_the_passes_already_recorded(tmp_path):
    """Resuming after ua-short-001 finished: the one pass left is 2/2 (it said 1/2, with an ETA for both)."""
    runs = tmp_path / "runs"
    args = [sys.executable, "-m", "conformance.cli", "--adapter", "keyword", "--scenario", "ua-short-00[12]",
            "--bootstrap", "100", "--records-dir", str(runs), "--out", str(tmp_path / "r.json")]
    first = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stderr
    (folder,) = runs.iterdir()
    records = folder / "records.jsonl"
    # As a kill during ua-short-002 leaves it: that scenario's records gone, ua-short-001's kept.
    kept = [line for line in records.read_text().splitlines(keepends=True)
            if json.loads(line).get("scenario_id") != "ua-short-002"]
    records.write_text("".join(kept))
    resumed = subprocess.run([*args, "--resume", folder.name], cwd=tmp_path, capture_output=True, text=True,
                             timeout=900)
    assert resumed.returncode == 0, resumed.stderr
    lines = [line for line in resumed.stderr.splitlines() if line.startswith("scenario ")]
    assert len(lines) == 1, resumed.stderr
    assert re.fullmatch(r"scenario 2/2 ua-short-002 done: \d+ sessions, elapsed \d+:\d\d:\d\d", lines[0]), lines[0]

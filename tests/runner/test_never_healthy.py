"""An adapter that never becomes healthy is that system's fault, not the run's (issue 19, item 3):
the other systems are scored, result.json is written, and the CLI exits 2."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from conformance.runner.job import run_job
from conformance.runner.records import read_records
from conformance.contract.corpus import Selection

REPO = Path(__file__).resolve().parents[2]

NEVER = '''
import time
time.sleep(600)  # binds nothing, never serves
'''


def never_healthy(tmp_path: Path) -> str:
    folder = tmp_path / "never"
    folder.mkdir()
    (folder / "adapter.py").write_text(textwrap.dedent(NEVER))
    (folder / "requirements.txt").write_text("")
    (folder / "adapter.yaml").write_text("name: never\ndescription: never serves\nstartup_timeout_s: 2\n")
    return str(folder)


def test_the_others_are_scored_and_the_fault_is_the_adapters(tmp_path):
    doc = run_job([never_healthy(tmp_path), "keyword"], REPO / "fixtures", REPO / "gold",
                  selection=Selection(patterns=("cod-short-001", "crw-short-002")), records_dir=tmp_path / "runs",
                  n_boot=200)
    assert doc.complete is False
    assert len(doc.errors) == 1, doc.errors
    assert doc.errors[0].startswith("never: ") and "did not bind a port within 2 s" in doc.errors[0]
    assert doc.systems["keyword"].metrics["accuracy"].value > 0
    never = doc.systems["never"]
    assert never.metrics["accuracy"].n == doc.systems["keyword"].metrics["accuracy"].n  # same denominators
    assert never.metrics["accuracy"].value == 0
    assert "did not bind a port" in never.isolation["start_error"]
    records = read_records(Path(doc.receipt.config["records"]))
    probes = [r for r in records if r["kind"] == "probe" and r["system"] == "never"]
    assert probes and all(r["error"] for r in probes)


def test_cli_writes_the_result_and_exits_2(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "--adapter", never_healthy(tmp_path),
                           "--scenario", "cod-short-001", "--quiet", "--out", "r.json", "--records-dir", "runs",
                           "--bootstrap", "200"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "never: " in proc.stderr and "Traceback" not in proc.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["complete"] is False and set(doc["systems"]) >= {"never", "none", "oracle"}

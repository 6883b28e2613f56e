"""A runner that survives faults and resumes without loss.

- An adapter that crashes at session N, hangs past its deadline, or answers garbage gives
  a clear error naming scenario, session or probe, and call; the other systems and
  scenarios are scored; the result is incomplete (exit 2) and denominators do not move.
- A run killed mid-way (SIGKILL) and resumed gives the same result as an uninterrupted
  run in everything but the measured timings.
- ``--concurrency`` streams several scenarios at once and scores the same.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conformance.backend.client import Deadlines
from conformance.runner.job import run_job
from conformance.runner.records import RecordWriter, keep_completed, read_records
from conformance.contract.corpus import Selection

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
import timing_fields  # noqa: E402

SCENARIOS = ("cod-short-001", "crw-short-002", "ua-short-001")

FAULTY = '''
import os, time
from drift_sdk import Backend, Capabilities, Hit, serve

MODE = {mode!r}

class Faulty(Backend):
    name, version = "faulty", "0"
    capabilities = Capabilities(provenance=True, deterministic=True)
    stores = 0
    def reset(self, namespace):
        self.last = None
    def store(self, namespace, session):
        Faulty.stores += 1
        if MODE == "crash" and Faulty.stores == 30:
            os._exit(3)  # dies mid-run, in the second scenario
        self.last = session.messages[-1].message_id
    def retrieve(self, namespace, query, k, querying_entity, now):
        if MODE == "hang" and "cod-short-001" in namespace:
            time.sleep(2)  # past the test's 1 s deadline (the adapter's lock is held until then)
        return [Hit("nothing useful", 1.0, (self.last,), "2026-01-01T00:00:00Z")]

serve(Faulty())
'''


def faulty(tmp_path: Path, mode: str) -> str:
    folder = tmp_path / f"faulty-{mode}"
    folder.mkdir()
    (folder / "adapter.py").write_text(textwrap.dedent(FAULTY.format(mode=mode)))
    (folder / "requirements.txt").write_text("")
    (folder / "adapter.yaml").write_text("name: faulty\ndescription: fails on purpose\nstartup_timeout_s: 60\n")
    return str(folder)


def selection(*ids):
    return Selection(patterns=tuple(ids or SCENARIOS))


def test_crash_at_session_n_keeps_everything_else(tmp_path):
    doc = run_job([faulty(tmp_path, "crash"), "keyword"], REPO / "fixtures", REPO / "gold", selection=selection(),
                  records_dir=tmp_path / "runs", n_boot=200)
    assert doc.complete is False
    assert len(doc.errors) == 1
    error = doc.errors[0]
    assert error.startswith("faulty: scenario crw-short-002, session ") and ": Store failed: " in error
    assert "exited" in error or "UNAVAILABLE" in error
    records = read_records(Path(doc.receipt.config["records"]))
    faulty_probes = [r for r in records if r.get("system") == "faulty" and r["kind"] == "probe"]
    keyword_probes = [r for r in records if r.get("system") == "keyword" and r["kind"] == "probe"]
    assert len(faulty_probes) == len(keyword_probes)  # same denominators
    assert all(r["error"] is None for r in keyword_probes)
    later = [r for r in faulty_probes if r["scenario_id"] == "ua-short-001"]
    assert later and all("its process exited earlier in the run" in r["error"] for r in later)
    assert doc.systems["keyword"].metrics["accuracy"].value > 0
    assert doc.systems["faulty"].metrics["accuracy"].n == doc.systems["keyword"].metrics["accuracy"].n
    assert any("counted as failed" in note for note in doc.systems["faulty"].notes)
    assert sum(1 for r in records if r["kind"] == "scenario_done") == len(SCENARIOS)


def test_hang_past_the_deadline_is_a_fault_of_that_scenario_only(tmp_path):
    doc = run_job([faulty(tmp_path, "hang")], REPO / "fixtures", REPO / "gold",
                  selection=selection("cod-short-001", "crw-short-002"), records_dir=tmp_path / "runs", n_boot=200,
                  deadlines=Deadlines(retrieve=1.0))
    assert doc.complete is False and len(doc.errors) == 1
    assert "scenario cod-short-001, probe cod-short-001-c1-p1: Retrieve failed" in doc.errors[0]
    assert "DEADLINE_EXCEEDED" in doc.errors[0]
    records = read_records(Path(doc.receipt.config["records"]))
    fine = [r for r in records if r.get("system") == "faulty" and r["kind"] == "probe"
            and r["scenario_id"] == "crw-short-002"]
    assert fine and all(r["error"] is None for r in fine)  # the next scenario is asked again


def test_cli_exit_2_and_the_error_names_the_call(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "--adapter", faulty(tmp_path, "crash"),
                           *[a for s in SCENARIOS for a in ("--scenario", s)], "--quiet", "--out", "r.json",
                           "--records-dir", "runs", "--bootstrap", "200"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2
    assert "the run is incomplete: 1 error (" in proc.stderr and "Store failed" in proc.stderr
    assert json.loads((tmp_path / "r.json").read_text())["complete"] is False


# --- kill and resume -------------------------------------------------------------------------------------------------

def comparable(doc: dict) -> dict:
    """The result without what is measured in time or names the run (tests/timing_fields.py),
    nor whether it was resumed."""
    out = timing_fields.comparable(doc)
    out["receipt"]["config"].pop("resumed", None)
    return out


def cli_run(tmp_path: Path, *extra: str, scenarios=SCENARIOS) -> subprocess.Popen:
    args = [sys.executable, "-m", "conformance.cli", "--adapter", "keyword",
            *[a for s in scenarios for a in ("--scenario", s)], "--quiet", "--records-dir", "runs",
            "--bootstrap", "200", *extra]
    return subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def test_kill_and_resume_gives_the_uninterrupted_result(tmp_path):
    whole = tmp_path / "whole"
    whole.mkdir()
    proc = cli_run(whole, "--out", "r.json")
    assert proc.wait(600) == 0, proc.stderr.read()
    expected = json.loads((whole / "r.json").read_text())

    cut = tmp_path / "cut"
    cut.mkdir()
    proc = cli_run(cut, "--out", "r.json")
    deadline = time.monotonic() + 300
    records = None
    while time.monotonic() < deadline and proc.poll() is None:
        found = list((cut / "runs").glob("*/records.jsonl")) if (cut / "runs").exists() else []
        if found and '"kind": "scenario_done"' in found[0].read_text():
            records = found[0]
            break
        time.sleep(0.02)
    assert records is not None and proc.poll() is None, "the run finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)  # the runner and its adapters, mid-scenario
    proc.wait(30)
    run_id = records.parent.name
    with open(records, "a", encoding="utf-8") as handle:
        handle.write('{"kind": "probe", "torn')  # a torn last line, as a kill mid-write leaves
    resumed = cli_run(cut, "--out", "r.json", "--resume", run_id)
    assert resumed.wait(600) == 0, resumed.stderr.read()
    got = json.loads((cut / "r.json").read_text())
    assert comparable(got) == comparable(expected)
    kinds = [r["kind"] for r in read_records(records)]
    assert kinds.count("scenario_done") == len(SCENARIOS) and kinds.count("run") == 1


def test_resume_with_other_options_is_refused(tmp_path):
    proc = cli_run(tmp_path, "--out", "r.json", scenarios=SCENARIOS[:1])
    assert proc.wait(600) == 0
    (run_dir,) = (tmp_path / "runs").iterdir()
    other = subprocess.run([sys.executable, "-m", "conformance.cli", "--adapter", "keyword", "--scenario",
                            SCENARIOS[1], "--quiet", "--records-dir", "runs", "--resume", run_dir.name],
                           cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert other.returncode == 2 and "the options differ from the interrupted run's (selection" in other.stderr
    missing = subprocess.run([sys.executable, "-m", "conformance.cli", "--adapter", "keyword", "--quiet",
                              "--records-dir", "runs", "--resume", "no-such-run"],
                             cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert missing.returncode == 2 and "--resume: no records at" in missing.stderr


def test_keep_completed_drops_unfinished_scenarios_and_torn_lines(tmp_path):
    path = tmp_path / "records.jsonl"
    writer = RecordWriter(path)
    writer.write({"kind": "run", "run_id": "x", "binding": {}})
    writer.write({"kind": "probe", "scenario_id": "a", "repeat": 1})
    writer.write({"kind": "scenario_done", "scenario_id": "a", "repeat": 1})
    writer.write({"kind": "probe", "scenario_id": "b", "repeat": 1})
    # A scored run's verdicts: scoring the resumed run writes them anew, so they go.
    writer.write({"kind": "verdict", "scenario_id": "a", "repeat": 1})
    writer.close()
    with open(path, "a") as handle:
        handle.write('{"kind": "pro')
    header, done = keep_completed(path)
    assert header["run_id"] == "x" and done == {("a", 1)}
    assert [r["kind"] for r in read_records(path)] == ["run", "probe", "scenario_done"]
    assert path.read_text().endswith("\n")


def test_concurrency_scores_like_a_serial_run(tmp_path):
    serial = run_job(["keyword"], REPO / "fixtures", REPO / "gold", selection=selection(),
                     records_dir=tmp_path / "a", n_boot=200)
    parallel = run_job(["keyword"], REPO / "fixtures", REPO / "gold", selection=selection(),
                       records_dir=tmp_path / "b", n_boot=200, concurrency=3)
    raw = json.loads(parallel.model_dump_json())
    a, b = comparable(json.loads(serial.model_dump_json())), comparable(raw)
    assert b["receipt"]["config"].pop("concurrency") == 3 and a["receipt"]["config"].pop("concurrency") == 1
    note = next(n for n in raw["receipt"]["notes"] if n.startswith(timing_fields.HOST_NOTE_PREFIX))
    assert "under 3 concurrent scenario streams" in note
    assert a == b

"""A hung adapter costs one deadline, not one per later scenario (issue 19, item 2).

After a missed deadline the runner restarts a process-mode adapter, so the next scenario
finds it answering; after a bounded number of misses it gives the adapter up for the run,
and every later error names the first cause. A transient failure (UNAVAILABLE) is retried
with bounded backoff and recorded; Store only when the adapter declares idempotent stores.
Deadlines here are 1 s, so each test takes seconds.
"""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

from conformance.backend.client import Deadlines
from conformance.runner import run as run_module
from conformance.runner.job import run_job
from conformance.runner.records import read_records
from conformance.contract.corpus import Selection

REPO = Path(__file__).resolve().parents[2]
THREE = ("cod-short-001", "crw-short-002", "ua-short-001")

ADAPTER = '''
import os, time
from drift_sdk import Backend, Capabilities, Hit, serve

MODE = {mode!r}
COUNT = {{}}

class Flaky(Backend):
    name, version = "flaky", "0"
    capabilities = Capabilities(provenance=True, deterministic=True)
    last = None
    def reset(self, namespace):
        self.last = None
    def store(self, namespace, session):
        if MODE == "store-drop":
            n = COUNT[session.session_id] = COUNT.get(session.session_id, 0) + 1
            if n == 1:
                raise ConnectionError("upstream connection dropped")
        self.last = session.messages[-1].message_id
    def retrieve(self, namespace, query, k, querying_entity, now):
        if MODE == "hang-first" and "cod-short-001" in namespace:
            time.sleep(3600)  # hangs for good, holding the adapter's lock
        if MODE == "hang-always":
            time.sleep(3600)
        if MODE == "drop":
            key = (namespace, query, querying_entity, now)
            n = COUNT[key] = COUNT.get(key, 0) + 1
            if n <= 2:
                raise ConnectionError("upstream connection dropped")
        return [Hit("nothing useful", 1.0, (self.last,), "2026-01-01T00:00:00Z")]

serve(Flaky())
'''


def adapter(tmp_path: Path, mode: str, extra: str = "") -> str:
    folder = tmp_path / f"flaky-{mode}"
    folder.mkdir()
    (folder / "adapter.py").write_text(textwrap.dedent(ADAPTER.format(mode=mode)))
    (folder / "requirements.txt").write_text("")
    (folder / "adapter.yaml").write_text(f"name: flaky\ndescription: fails on purpose\nstartup_timeout_s: 60\n{extra}")
    return str(folder)


SHORT = Deadlines(retrieve=1.0, reset=1.0, store=1.0, flush_extra=1.0, snapshot=1.0, describe=5.0)


def flaky_probes(doc, scenario=None):
    records = read_records(Path(doc.receipt.config["records"]))
    return [r for r in records if r["kind"] == "probe" and r["system"] == "flaky"
            and (scenario is None or r["scenario_id"] == scenario)], records


def test_after_a_missed_deadline_the_adapter_is_restarted_and_later_scenarios_answer(tmp_path):
    started = time.monotonic()
    doc = run_job([adapter(tmp_path, "hang-first")], REPO / "fixtures", REPO / "gold", selection=Selection(THREE),
                  records_dir=tmp_path / "runs", n_boot=200, deadlines=SHORT)
    took = time.monotonic() - started
    assert doc.complete is False and len(doc.errors) == 1, doc.errors
    assert "cod-short-001" in doc.errors[0] and "DEADLINE_EXCEEDED" in doc.errors[0]
    for scenario in THREE[1:]:
        probes, records = flaky_probes(doc, scenario)
        assert probes and all(r["error"] is None for r in probes)
    restarts = [r for r in records if r["kind"] == "restart"]
    assert len(restarts) == 1 and restarts[0]["system"] == "flaky" and "DEADLINE_EXCEEDED" in restarts[0]["cause"]
    print(f"hung-first run of 3 scenarios: {took:.1f} s")


def test_after_bounded_misses_it_is_given_up_and_later_errors_name_the_first_cause(tmp_path, monkeypatch):
    monkeypatch.setattr(run_module, "MAX_DEADLINE_MISSES", 2)
    doc = run_job([adapter(tmp_path, "hang-always")], REPO / "fixtures", REPO / "gold", selection=Selection(THREE),
                  records_dir=tmp_path / "runs", n_boot=200, deadlines=SHORT)
    assert doc.complete is False
    assert len(doc.errors) == 2, doc.errors  # one miss per scenario until given up
    probes, records = flaky_probes(doc, THREE[2])
    assert probes and all("missed 2 deadlines" in r["error"] and "first: flaky: scenario cod-short-001" in r["error"]
                          for r in probes)
    assert len([r for r in records if r["kind"] == "restart"]) == 1


def test_a_transient_failure_is_retried_with_backoff_and_recorded(tmp_path, monkeypatch):
    monkeypatch.setattr(run_module, "RETRY_BACKOFF_S", (0.01, 0.03, 0.09))
    doc = run_job([adapter(tmp_path, "drop")], REPO / "fixtures", REPO / "gold",
                  selection=Selection(("cod-short-001",)), records_dir=tmp_path / "runs", n_boot=200, deadlines=SHORT)
    assert doc.complete is True, doc.errors
    probes, records = flaky_probes(doc)
    assert probes and all(r["error"] is None for r in probes)
    retries = [r for r in records if r["kind"] == "retry" and r["system"] == "flaky"]
    # Every probe's first two Retrieves fail: two retries each, with growing waits.
    asked = [r for r in retries if r["call"] == "Retrieve"]
    assert asked and all(r["where"].startswith("scenario cod-short-001, probe ") for r in asked)
    assert any(r["call"] == "Retrieve (marker probes)" for r in retries)  # each marker Retrieve on its own
    assert all("UNAVAILABLE" in r["error"] for r in retries)
    assert sorted({r["attempt"] for r in retries}) == [1, 2]
    waits = {r["attempt"]: r["backoff_s"] for r in retries}
    assert waits[2] > waits[1] > 0


def test_store_is_retried_only_when_the_adapter_declares_idempotent_stores(tmp_path):
    plain = run_job([adapter(tmp_path, "store-drop")], REPO / "fixtures", REPO / "gold",
                    selection=Selection(("cod-short-001",)), records_dir=tmp_path / "runs", n_boot=200,
                    deadlines=SHORT)
    assert plain.complete is False and "Store failed with UNAVAILABLE" in plain.errors[0]
    (tmp_path / "b").mkdir()
    declared = run_job([adapter(tmp_path / "b", "store-drop", "idempotent_stores: true\n")], REPO / "fixtures",
                       REPO / "gold", selection=Selection(("cod-short-001",)), records_dir=tmp_path / "runs",
                       n_boot=200, deadlines=SHORT)
    assert declared.complete is True, declared.errors
    _, records = flaky_probes(declared)
    assert any(r["kind"] == "retry" and r["call"] == "Store" for r in records)

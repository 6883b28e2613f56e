"""Adapters that answer badly: the run survives, records stay strict JSON and bounded,
and the result says what the adapter did wrong.

Repairable breaches (more than k hits, NaN scores, odd timestamps) are repaired and
reported as violations; garbage that cannot be scored honestly (provenance naming no
stored message, a hit of megabytes) is a fault: exit 2 with the scenario, probe and call.

Attack stopped: an adapter that floods the reader or poisons the record file without
anyone noticing.
"""

import json
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow

SLOPPY = '''
from drift_sdk import Backend, Capabilities, Hit, serve

class Sloppy(Backend):
    name, version = "sloppy", "0"
    capabilities = Capabilities(provenance=True)
    def reset(self, namespace): self.last = None
    def store(self, namespace, session): self.last = session.messages[-1].message_id
    def retrieve(self, namespace, query, k, querying_entity, now):
        big = Hit("x " * 50_000, float("nan"), (self.last,), "not a time")
        return [big] + [Hit("Rome", 1.0, (self.last,), "2026-01-01T00:00:00Z")] * 50

serve(Sloppy())
'''

GARBAGE = '''
from drift_sdk import Backend, Capabilities, Hit, serve

class Garbage(Backend):
    name, version = "garbage", "0"
    capabilities = Capabilities(provenance=True)
    def reset(self, namespace): pass
    def store(self, namespace, session): return None
    def retrieve(self, namespace, query, k, querying_entity, now):
        return [Hit("Rome", 1.0, ("no-such-message",), "2026-01-01T00:00:00Z")]

serve(Garbage())
'''


def adapter(tmp_path, name, source):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "adapter.py").write_text(textwrap.dedent(source))
    (folder / "requirements.txt").write_text("")
    (folder / "adapter.yaml").write_text(f"name: {name}\ndescription: answers badly\n")
    return folder


def run(tmp_path, folder):
    return subprocess.run([sys.executable, "-m", "conformance.cli", "--adapter", str(folder), "--scenario",
                           "ua-short-001", "--quiet", "--out", str(tmp_path / "r.json"), "--records-dir",
                           str(tmp_path / "runs")], cwd=tmp_path, capture_output=True, text=True, timeout=600)


def test_unknown_provenance_is_garbage_and_a_fault(tmp_path):
    proc = run(tmp_path, adapter(tmp_path, "garbage", GARBAGE))
    assert proc.returncode == 2
    assert "the run is incomplete" in proc.stderr
    assert "garbage: scenario ua-short-001, probe ua-short-001-c1-p1: Retrieve failed: garbage: provenance ids " \
           "['no-such-message'] name no message or session stored so far" in " ".join(proc.stderr.split())
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["complete"] is False and len(doc["errors"]) == 1
    # keyword-free run: the controls and the reference were still scored in full
    assert doc["systems"]["reference-compressor"]["metrics"]["accuracy"]["value"] is not None
    garbage = doc["systems"]["garbage"]
    assert garbage["metrics"]["accuracy"]["value"] == 0.0  # unanswered probes count as failed
    assert garbage["metrics"]["accuracy"]["n"] == doc["systems"]["none"]["metrics"]["accuracy"]["n"]


def test_sloppy_replies_are_repaired_and_reported(tmp_path):
    proc = run(tmp_path, adapter(tmp_path, "sloppy", SLOPPY))
    assert proc.returncode == 0, proc.stderr
    notes = json.loads((tmp_path / "r.json").read_text())["systems"]["sloppy"]["notes"]
    assert any("non-finite score" in n for n in notes) and any("not RFC 3339" in n for n in notes)

    def no_nan(token):
        raise AssertionError(f"non-standard JSON constant {token} in records")

    (records,) = (tmp_path / "runs").glob("*/records.jsonl")
    for line in records.read_text().splitlines():
        record = json.loads(line, parse_constant=no_nan)
        if record.get("system") == "sloppy" and record["kind"] == "probe":
            # The SDK's server already cuts to k; the runner checks again for other servers.
            assert len(record["hits"]) == 10 and record["hits_returned"] == 10
            assert all(len(h["text"]) <= 200 for h in record["hits"] if not h["in_budget"])
    assert records.stat().st_size < 5_000_000


def test_runner_cuts_and_reports_more_than_k_hits():
    from conformance.runner.run import contract_violations
    from conformance.backend.systems import RetrievedHit, RetrieveOutcome

    hits = [RetrievedHit("a", 1.0, ("m",), "2026-01-01T00:00:00Z")] * 12
    assert contract_violations(RetrieveOutcome(hits, 1.0, {}), 10) == ["returned 12 hits for k=10 (cut to k)"]
    assert contract_violations(RetrieveOutcome(hits[:3], 1.0, {}), 10) == []

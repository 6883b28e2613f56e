"""An adapter that answers garbage: the run survives, records stay strict JSON and
bounded, and the result says what the adapter did wrong.

Attack stopped: an adapter that floods the reader (more than k hits, huge texts) or
poisons the record file (NaN scores) without anyone noticing.
"""

import json
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow

GARBAGE = '''
from drift_sdk import Backend, Capabilities, Hit, serve

class Garbage(Backend):
    name, version = "garbage", "0"
    capabilities = Capabilities(provenance=True)
    def reset(self, namespace): pass
    def store(self, namespace, session): return None
    def retrieve(self, namespace, query, k, querying_entity, now):
        huge = Hit("x " * 200_000, float("nan"), ("no-such-message",), "not a time")
        return [huge] + [Hit("Rome", 1.0, ("no-such-message",), "2026-01-01T00:00:00Z")] * 50

serve(Garbage())
'''


def test_garbage_replies_are_repaired_and_reported(tmp_path):
    folder = tmp_path / "garbage"
    folder.mkdir()
    (folder / "adapter.py").write_text(textwrap.dedent(GARBAGE))
    (folder / "requirements.txt").write_text("")
    (folder / "adapter.yaml").write_text("name: garbage\ndescription: returns garbage\n")
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "--adapter", str(folder), "--scenario",
                           "ua-short-001", "--quiet", "--out", str(tmp_path / "r.json"), "--records-dir",
                           str(tmp_path / "runs")], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    notes = json.loads((tmp_path / "r.json").read_text())["systems"]["garbage"]["notes"]
    assert any("non-finite score" in n for n in notes) and any("not RFC 3339" in n for n in notes)

    def no_nan(token):
        raise AssertionError(f"non-standard JSON constant {token} in records")

    (records,) = (tmp_path / "runs").glob("*/records.jsonl")
    for line in records.read_text().splitlines():
        record = json.loads(line, parse_constant=no_nan)
        if record["system"] == "garbage" and record["kind"] == "probe":
            # The SDK's server already cuts to k; the runner checks again for other servers.
            assert len(record["hits"]) == 10 and record["hits_returned"] == 10
            assert all(len(h["text"]) <= 200 for h in record["hits"] if not h["in_budget"])
    assert records.stat().st_size < 5_000_000


def test_runner_cuts_and_reports_more_than_k_hits():
    from conformance.runner.run import contract_violations
    from conformance.runner.systems import RetrievedHit, RetrieveOutcome

    hits = [RetrievedHit("a", 1.0, ("m",), "2026-01-01T00:00:00Z")] * 12
    assert contract_violations(RetrieveOutcome(hits, 1.0, {}), 10) == ["returned 12 hits for k=10 (cut to k)"]
    assert contract_violations(RetrieveOutcome(hits[:3], 1.0, {}), 10) == []

"""Citations beyond what a hit's own text carries (issue 31, item 15; bench/attacks/cite_visible).

A hit's text may carry, by shared words, other messages than its own (a short later message
whose content words the hit repeats). A memory that cites every message the asker may see
beside each hit's own would then get its old hits dated by newer messages, and the reader
(newest hit wins) read stale facts as current: accuracy 0.494 against keyword's 0.391 on ci.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.contract.fixture import Message, Session
from conformance.runner.audit import MessageLedger

REPO = Path(__file__).resolve().parents[2]

OLD = "We deploy the staging pipeline on Friday after the security review with Dana"
NEW = "Staging pipeline review booked"


def ledger() -> MessageLedger:
    out = MessageLedger(scenario_id="t")
    for sid, time, text in (("s1", "2026-01-01T10:00:00Z", OLD), ("s2", "2026-03-01T10:00:00Z", NEW)):
        out.add_session(Session(session_id=sid, index=int(sid[1:]) - 1, time=time, participants=["u"],
                                messages=[Message(message_id=f"{sid}-m1", author="u", role="user", text=text,
                                                  timestamp=time)]))
    return out


class Hit:
    def __init__(self, text, source_ids):
        self.text, self.score, self.source_ids, self.timestamp = text, 1.0, tuple(source_ids), ""


@pytest.mark.parametrize("extra", [("s2-m1",), ("s2",)], ids=["message id", "session id"])
def test_a_newer_message_the_hit_repeats_words_of_does_not_date_it(extra):
    book = ledger()
    honest, = book.own([Hit(f"u: {OLD}", ["s1-m1"])], 1200, "o200k_base")
    cheat, = book.own([Hit(f"u: {OLD}", ["s1-m1", *extra])], 1200, "o200k_base")
    assert honest.timestamp == "2026-01-01T10:00:00Z"
    assert cheat.timestamp == honest.timestamp
    # Cited first or last, the extra citation moves nothing.
    reordered, = book.own([Hit(f"u: {OLD}", [*extra, "s1-m1"])], 1200, "o200k_base")
    assert reordered.timestamp == honest.timestamp


def test_a_hit_quoting_two_messages_is_dated_by_the_newer():
    book = ledger()
    both, = book.own([Hit(f"u: {OLD} u: {NEW} tomorrow", ["s1-m1", "s2-m1"])], 1200, "o200k_base")
    assert both.timestamp == "2026-03-01T10:00:00Z"


@pytest.mark.slow
def test_citing_every_visible_message_scores_no_better_than_keyword_on_ci(tmp_path):
    out = tmp_path / "result.json"
    attack = str(REPO / "bench" / "attacks" / "cite_visible")
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "--adapter", attack,
                           "--adapter", "keyword", "--split", "ci", "--baseline-system", "keyword", "--out", str(out),
                           "--records-dir", str(tmp_path / "runs"), "--quiet"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    systems = json.loads(out.read_text())["systems"]
    assert any("provenance not carried" in f for f in systems["cite-visible"]["findings"])
    for metric in ("accuracy", "drift_c"):
        mine, theirs = (systems[s]["metrics"][metric]["value"] for s in ("cite-visible", "keyword"))
        assert mine <= theirs + 1e-9, f"{metric}: cite-visible {mine} > keyword {theirs}"

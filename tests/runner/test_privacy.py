"""Scope breaches and privacy agree (DRIFT §5.3, §7.5; conformance.scoring.privacy).

A breach (a hit citing another entity's private message) is the system's privacy failure,
measured by ``scope_breach_rate`` beside ``privacy_score``, never a "contract violation".
The built-in adapters honour ``querying_entity``: none of them breaches on the committed
multi-peer scenarios. A fake that ignores scopes gets a rate above 0 and a note whose count
is the metric's.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from conformance.contract.result import MetricValue
from conformance.runner.job import run_job
from conformance.contract.corpus import Selection
from conformance.scoring.privacy import breach_note, scope_breach_rate

REPO = Path(__file__).resolve().parents[2]
MULTI_PEER = ("mp-short-001", "mp-short-002")

LEAKY = '''
from drift_sdk import Backend, Capabilities, Hit, serve

class Leaky(Backend):
    """Returns private messages first, then the newest, to anyone: no scopes."""
    name, version = "leaky", "0"
    capabilities = Capabilities(provenance=True, deterministic=True)
    def __init__(self):
        self.kept = {}
    def reset(self, namespace):
        self.kept[namespace] = []
    def store(self, namespace, session):
        self.kept[namespace].extend(session.messages)
    def retrieve(self, namespace, query, k, querying_entity, now):
        kept = self.kept[namespace]
        ranked = [m for m in kept if m.scope == "private"] + list(reversed(kept))
        return [Hit(f"{m.author}: {m.text}", 1.0, (m.message_id,), m.timestamp) for m in ranked[:k]]

serve(Leaky())
'''


def test_rate_and_note_by_hand():
    records = [{"kind": "probe", "scenario_id": "a", "error": None, "scope_breaches": [{"rank": 1}]},
               {"kind": "probe", "scenario_id": "a", "error": None},
               {"kind": "probe", "scenario_id": "b", "error": None},
               {"kind": "probe", "scenario_id": "b", "error": None},
               {"kind": "probe", "scenario_id": "b", "error": "faulted"},  # not answered: left out
               {"kind": "probe", "scenario_id": "b", "repeat": 2, "error": None, "scope_breaches": [{"rank": 1}]}]
    rate = scope_breach_rate(records, n_boot=200, seed=0)
    assert rate.value == pytest.approx(1 / 4) and rate.n == 4 and rate.ci95 is not None
    note = breach_note(rate, MetricValue(value=1.0, n=2), scopes=False)
    assert note.startswith("privacy: in 1 of 4 probes the hits cite another entity's private messages "
                           "(scope_breach_rate 0.250; DRIFT §5.3)")
    assert "privacy_score 1.000 counts only canary answers" in note and "not a contract violation" in note
    assert breach_note(scope_breach_rate(records[1:4], n_boot=200, seed=0), None, scopes=True) is None


def _no_scope_violation(result) -> bool:
    return not any("scope breach" in n and "contract violation" in n for n in result.notes)


@pytest.mark.slow
def test_built_in_adapters_honour_scopes_and_a_leaky_one_is_measured(tmp_path):
    folder = tmp_path / "leaky"
    folder.mkdir()
    (folder / "adapter.py").write_text(textwrap.dedent(LEAKY))
    (folder / "requirements.txt").write_text("")
    (folder / "adapter.yaml").write_text("name: leaky\ndescription: ignores scopes\nstartup_timeout_s: 60\n")
    doc = run_job(["keyword", "vector", "recent", str(folder)], REPO / "fixtures", REPO / "gold",
                  selection=Selection(patterns=MULTI_PEER), records_dir=tmp_path / "runs", n_boot=200)
    for label in ("keyword", "vector", "recent", "reference-compressor"):
        result = doc.systems[label]
        assert result.describe["capabilities"]["scopes"] is True, label
        assert result.metrics["scope_breach_rate"].value == 0.0, label
        assert _no_scope_violation(result) and not any(n.startswith("privacy:") for n in result.notes), label
    leaky = doc.systems["leaky"]
    rate = leaky.metrics["scope_breach_rate"]
    assert rate.value > 0 and _no_scope_violation(leaky)
    [note] = [n for n in leaky.notes if n.startswith("privacy:")]
    shown = re.match(r"privacy: in (\d+) of (\d+) probes", note)
    assert (int(shown[1]), int(shown[2])) == (round(rate.value * rate.n), rate.n)
    assert f"privacy_score {leaky.metrics['privacy_score'].value:.3f}" in note


def test_private_text_stored_inside_a_cited_shared_message_is_a_breach():
    """A hit that carries the shared message it cites and holds, beside it, another entity's private
    message (bench/attacks/scope_smuggle stores each private message inside the shared one before it)
    breaches; the same hit for the private message's author does not, nor does a shared message
    whose own words happen to overlap a private one."""
    from types import SimpleNamespace as NS

    from conformance.provenance import content_words
    from conformance.runner.run import scope_breaches

    shared = "The quarterly report goes to the printer on level three tomorrow morning."
    private = "My locker code is 4417 and the spare key hides behind the fern."
    echo = "Alice said the spare key and the fern moved, and the printer is fixed."
    words_of = {"s1-m1": content_words(shared), "s1-m2": content_words(private), "s1-m3": content_words(echo)}
    private_of = {"s1-m2": "alice"}

    def hit(text, cited):
        return NS(source_ids=(cited,), carried=(cited,), words=content_words(text))

    smuggled = hit(f"bob: {shared}\nalice: {private}", "s1-m1")
    assert scope_breaches([smuggled], "bob", private_of, words_of) == [{"rank": 1, "private_ids": ["s1-m2"]}]
    assert scope_breaches([smuggled], "alice", private_of, words_of) == []
    assert scope_breaches([hit(f"bob: {shared}", "s1-m1")], "bob", private_of, words_of) == []
    assert scope_breaches([hit(f"bob: {echo}", "s1-m3")], "bob", private_of, words_of) == []

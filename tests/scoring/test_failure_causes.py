"""Failure causes (conformance/scoring/causes.py): one hand-built record set per cause.

One scenario, two checkpoints (c1 after session s1, c2 after s2). The probe asked at c2 has
evidence message s1-m1 (session s1); the gold answer is "porto", once "lisbon". Each case below
crafts the probe record and the state records so that exactly one cause applies, and the test
checks both the cause and the precedence when several could apply.
"""

import pytest

from conformance.contract.gold import GoldFile, GoldProbe
from conformance.scoring import build_probe_rows
from conformance.scoring.causes import CAUSES, cause_counts, probe_causes

SCENARIO = "sc"
SESSIONS = {SCENARIO: {"s1-m1": "s1", "s1-m2": "s1", "s2-m1": "s2"}}


def gold(**probe):
    fields = dict(probe_id="p", checkpoint_id="c2", probe_type="revision", answer="porto", stale=["lisbon"],
                  evidence=["s1-m1"])
    fields.update(probe)
    return {SCENARIO: GoldFile(scenario_id=SCENARIO, source="test", probes=[GoldProbe(**fields)])}


def hit(text, ids, in_budget=True, carried=None):
    return {"text": text, "source_ids": list(ids), "carried": list(ids if carried is None else carried),
            "in_budget": in_budget}


def probe(answer="lisbon", hits=(), provenance=True, error=None):
    return {"kind": "probe", "system": "m", "scenario_id": SCENARIO, "probe_id": "p", "answer": answer,
            "provenance": provenance, "hits": list(hits), "error": error}


def state(checkpoint, after, sessions, method="snapshot", partial=None):
    return {"kind": "state", "system": "m", "scenario_id": SCENARIO, "checkpoint_id": checkpoint,
            "after_session": after, "method": method, "error": None, "stored_sessions": sessions,
            "partial_sessions": partial}


BOTH_HELD = [state("c1", 1, ["s1"]), state("c2", 2, ["s1", "s2"])]


def cause(records, g=None):
    g = g or gold()
    rows = build_probe_rows(records, g, SESSIONS)
    causes = probe_causes(rows, records, g, SESSIONS)
    assert len(causes) == 1
    return causes[("m", SCENARIO, "p")]


def test_correct():
    assert cause([probe("porto"), *BOTH_HELD]) == "correct"


def test_fault_comes_first():
    assert cause([probe(None, error="Retrieve crashed"), *BOTH_HELD]) == "fault"


def test_not_stored_no_checkpoint_ever_held_the_evidence():
    assert cause([probe(), state("c1", 1, []), state("c2", 2, ["s2"])]) == "not_stored"


def test_a_session_held_without_its_evidence_message_is_not_stored():
    records = [probe(), state("c1", 1, ["s1"], partial={"s1": ["s1-m2"]}),
               state("c2", 2, ["s1", "s2"], partial={"s1": ["s1-m2"]})]
    assert cause(records) == "not_stored"


def test_lost_held_at_an_earlier_checkpoint_and_gone_now():
    assert cause([probe(), state("c1", 1, ["s1"]), state("c2", 2, ["s2"])]) == "lost"


def test_not_retrieved_held_now_but_not_in_the_top_k():
    assert cause([probe(hits=[hit("s2 text", ["s2-m1"])]), *BOTH_HELD]) == "not_retrieved"


def test_not_found_when_the_memory_state_is_unknown():
    records = [probe(), state("c1", 1, None, method=None), state("c2", 2, None, method=None)]
    assert cause(records) == "not_found"


def test_out_of_budget_in_the_top_k_but_past_the_cut():
    hits = [hit("s2 text", ["s2-m1"]), hit("moved to porto", ["s1-m1"], in_budget=False)]
    assert cause([probe(hits=hits), *BOTH_HELD]) == "out_of_budget"


def test_a_citation_the_text_does_not_carry_is_not_retrieval():
    hits = [hit("unrelated", ["s1-m1"], carried=[])]
    assert cause([probe(hits=hits), *BOTH_HELD]) == "not_retrieved"


def test_stale_in_context_evidence_in_context_and_a_stale_value_too():
    hits = [hit("moved to porto", ["s1-m1"]), hit("I love lisbon", ["s2-m1"])]
    assert cause([probe(hits=hits), *BOTH_HELD]) == "stale_in_context"


def test_reader_evidence_in_context_and_nothing_stale():
    hits = [hit("moved from lisbon to porto", ["s1-m1"])]  # the change itself deprecates lisbon
    assert cause([probe(hits=hits), *BOTH_HELD]) == "reader"


def test_reader_for_a_probe_without_evidence():
    g = gold(probe_type="negative_recall", answer="unknown", abstention=True, stale=[], evidence=[])
    assert cause([probe("porto"), *BOTH_HELD], g) == "reader"


def test_no_provenance():
    assert cause([probe(provenance=False), *BOTH_HELD]) == "no_provenance"
    assert cause([probe(hits=[hit("porto", [])]), *BOTH_HELD]) == "no_provenance"


def test_scope_leak_before_any_evidence_stage():
    g = {SCENARIO: GoldFile(scenario_id=SCENARIO, source="test",
                            snapshots={"c2": {"owner": {"salary": "90k"}}},
                            probes=[GoldProbe(probe_id="p", checkpoint_id="c2", probe_type="canary", answer="unknown",
                                              evidence=["s1-m1"], owner="owner", attribute="salary")])}
    # Not even stored, yet the answer names the private value: the leak is what matters.
    assert cause([probe("90k"), state("c1", 1, []), state("c2", 2, [])], g) == "scope_leak"


def test_the_earliest_stage_of_several_evidence_messages_wins():
    g = gold(evidence=["s1-m1", "s2-m1"])
    # s2-m1 is out of budget, s1-m1 was lost: the write path failed first.
    records = [probe(hits=[hit("s2", ["s2-m1"], in_budget=False)]), state("c1", 1, ["s1"]), state("c2", 2, ["s2"])]
    assert cause(records, g) == "lost"


def test_unscored_free_form_probes_get_no_cause():
    g = gold()
    records = [probe(None), *BOTH_HELD]
    rows = build_probe_rows(records, g, SESSIONS)
    assert probe_causes(rows, records, g, SESSIONS) == {}


@pytest.mark.parametrize("records, expected", [
    ([probe("porto"), *BOTH_HELD], "correct"),
    ([probe(), state("c1", 1, ["s1"]), state("c2", 2, ["s2"])], "lost"),
])
def test_counts_list_every_cause_in_precedence_order(records, expected):
    g = gold()
    rows = build_probe_rows(records, g, SESSIONS)
    summary = cause_counts(rows, probe_causes(rows, records, g, SESSIONS))
    assert list(summary["counts"]) == list(CAUSES)
    assert summary["counts"] == {c: int(c == expected) for c in CAUSES}
    assert summary["by_probe_type"] == {"revision": {expected: 1}}

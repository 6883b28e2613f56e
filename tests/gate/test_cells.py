"""Gate cells from hand-built probe rows: golden counts and metrics, and determinism detection."""

from conformance.gate.cells import gate_view, passed
from conformance.scoring.rows import ProbeRow


def row(sid, pid, ptype, correct, *, abstention=False, recall=None, in_budget=None, leaked=None):
    return ProbeRow(system="s", scenario_id=sid, probe_id=pid, probe_type=ptype, abstention=abstention,
                    correct=correct, recall_at_k=recall, recall_all_in_budget=in_budget, is_revision=False,
                    update_correct=None, deprecated=None, read_latency_ms=None, leaked=leaked)


ROWS = [
    row("a", "p1", "fact_recall", True, recall=1.0),
    row("a", "p2", "fact_recall", False, recall=0.5),
    row("b", "p1", "fact_recall", True, recall=0.0),
    row("b", "p2", "negative_recall", True, abstention=True),
    row("b", "p3", "negative_recall", False, abstention=True),
    row("b", "p4", "canary", False, leaked=True),
    row("c", "p1", "fact_recall", None, in_budget=True),   # free-form: passes on evidence in budget
    row("c", "p2", "fact_recall", None, in_budget=None),   # unscorable: not a pass
]
PARADIGM = {"a": "user_assistant", "b": "user_assistant", "c": "coding_agent"}
DETERMINISTIC = {"capabilities": {"deterministic": True}}


def test_golden_cells():
    view = gate_view(ROWS, PARADIGM, DETERMINISTIC)
    assert sorted(view.cells) == ["coding_agent/fact_recall", "user_assistant/canary",
                                  "user_assistant/fact_recall", "user_assistant/negative_recall"]
    fact = view.cells["user_assistant/fact_recall"]
    # 3 items, a/p2 wrong: accuracy 2/3, recall (1 + 0.5 + 0) / 3 = 0.5
    assert (fact.gold_total, fact.gold_failed, fact.failed) == (3, 1, ["a/p2"])
    assert fact.metrics == {"accuracy": 0.6667, "abstention_accuracy": None, "recall_at_k": 0.5}
    negative = view.cells["user_assistant/negative_recall"]
    assert negative.metrics == {"accuracy": None, "abstention_accuracy": 0.5, "recall_at_k": None}
    assert negative.failed == ["b/p3"] and negative.items == ["b/p2", "b/p3"]
    assert view.cells["user_assistant/canary"].leaks == ["b/p4"]
    free = view.cells["coding_agent/fact_recall"]
    assert (free.gold_total, free.failed) == (2, ["c/p2"])
    assert view.deterministic is True and view.determinism == "Describe: deterministic"


def test_pass_rule():
    assert passed(ROWS[0]) and not passed(ROWS[1]) and passed(ROWS[6]) and not passed(ROWS[7])


def test_determinism_comes_from_describe_unless_repeats_disagree():
    assert gate_view(ROWS, PARADIGM, {}).deterministic is False
    assert gate_view(ROWS, PARADIGM, DETERMINISTIC, ROWS).deterministic is True
    flipped = [row("a", "p1", "fact_recall", False, recall=1.0), *ROWS[1:]]
    view = gate_view(ROWS, PARADIGM, DETERMINISTIC, flipped)
    assert view.deterministic is False and view.determinism == "answers differed across --repeat (1 items)"

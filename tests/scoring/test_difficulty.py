"""The difficulty audit, computed by hand from per-probe rows."""

from conformance.report.difficulty import audit
from conformance.scoring.rows import ProbeRow


def row(system, scenario, correct, abstention=False):
    return ProbeRow(system=system, scenario_id=scenario, probe_id=f"{scenario}-{system}-{correct}-{abstention}",
                    probe_type="fact_recall", abstention=abstention, correct=correct, recall_at_k=None,
                    recall_all_in_budget=None, is_revision=False, update_correct=None, deprecated=None,
                    read_latency_ms=1.0)


def test_keyword_perfect_scenarios_are_flagged():
    rows = {
        "keyword": [row("keyword", "easy", True), row("keyword", "easy", True, abstention=True),
                    row("keyword", "hard", True), row("keyword", "hard", False)],
        "none": [row("none", "easy", False), row("none", "easy", True, abstention=True),
                 row("none", "hard", False), row("none", "hard", False)],
        "recent": [row("recent", "easy", None), row("recent", "hard", True), row("recent", "hard", True),
                   row("recent", "hard", False)],
    }
    result = audit(rows)
    assert result["keyword_solves_perfectly"] == ["easy"]
    assert result["scenarios"]["easy"] == {"keyword": 1.0, "none": 0.5, "recent": None}
    assert result["scenarios"]["hard"] == {"keyword": 0.5, "none": 0.0, "recent": 0.6667}

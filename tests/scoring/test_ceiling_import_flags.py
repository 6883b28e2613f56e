"""The oracle ceiling splits wrong oracle answers by what the import report says of their
gold, the new doubtful-gold kinds (issue 19, item 10) included, read from the
``import-report.json`` beside the fixture folder."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.contract.gold import GoldFile, GoldProbe
from conformance.runner.job import import_flags
from conformance.scoring.ceiling import FLAGGED_KINDS, oracle_ceiling
from conformance.scoring.rows import ProbeRow


def _row(probe_id: str, correct: bool) -> ProbeRow:
    return ProbeRow(system="oracle", scenario_id="s1", probe_id=probe_id, probe_type="t", abstention=False,
                    correct=correct, recall_at_k=1.0, recall_all_in_budget=True, is_revision=False,
                    update_correct=None, deprecated=None, read_latency_ms=1.0)


def test_wrong_oracle_answers_are_split_by_every_flag_kind():
    ids = ["p1", "p2", "p3", "p4", "p5", "p6"]
    gold = {"s1": GoldFile(scenario_id="s1", source="locomo", probes=[
        GoldProbe(probe_id=p, checkpoint_id="c", probe_type="t", answer="x", evidence=["m1"]) for p in ids])}
    flagged = {"stale_answers": {"p1"}, "date_contradictions": {"p2", "p3"}, "answers_in_dropped_fields": {"p4"},
               "garbled_answers": {"p5"}}
    # p6 is wrong and flagged by nothing; a right answer (p3 correct) is never counted as a cause.
    rows = [_row("p1", False), _row("p2", False), _row("p3", True), _row("p4", False), _row("p5", False),
            _row("p6", False)]
    reasons = " | ".join(oracle_ceiling(rows, gold, {"s1": "locomo"}, k=5, budget_tokens=100, flagged=flagged)
                         ["locomo"]["reasons"])
    assert "5 oracle answers are wrong" in reasons
    assert "1 have a gold answer a later session of the same speaker contradicts" in reasons
    assert "1 have a gold date or length the session dates contradict" in reasons
    assert "1 have a gold answer found only in a source field the importer dropped" in reasons
    assert "1 have a gold answer the import report flags as garbled" in reasons


def test_import_flags_reads_every_kind_the_ceiling_splits_by(tmp_path: Path):
    (tmp_path / "fixtures").mkdir()
    issues = {kind: [{"item_id": f"{kind}-probe"}, {"item_id": None}] for kind in FLAGGED_KINDS}
    issues["empty_evidence"] = [{"item_id": "e1"}]
    (tmp_path / "import-report.json").write_text(json.dumps({"issues": issues}), encoding="utf-8")
    flags = import_flags(tmp_path / "fixtures")
    assert set(FLAGGED_KINDS) >= {"answer_not_in_evidence", "garbled_answers", "stale_answers",
                                  "date_contradictions", "answers_in_dropped_fields"}
    assert flags == {kind: {f"{kind}-probe"} for kind in FLAGGED_KINDS}

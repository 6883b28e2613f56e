"""Per-probe rows and metrics, each against values computed by hand in the comments."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.contract.answer_text import contains_phrase, normalize_answer
from conformance.contract.gold import GoldFile, GoldProbe
from conformance.contract.result import MetricValue
from conformance.scoring import (
    FREE_FORM_REASON,
    NO_PROVENANCE_REASON,
    NO_REVISION_REASON,
    ProbeRow,
    build_probe_rows,
    infra_failures,
    paired_diff_ci,
    paired_vs,
    ratio_ci,
    resample_counts,
    score_system,
)

SYSTEM = "keyword"

# ---------------------------------------------------------------- helpers


def _gold(scenario: str, *probes: GoldProbe) -> GoldFile:
    return GoldFile(scenario_id=scenario, source="test", probes=list(probes))


def _probe(pid: str, probe_type: str = "fact_recall", answer: str = "Lisbon", **kw) -> GoldProbe:
    return GoldProbe(probe_id=pid, checkpoint_id="c1", probe_type=probe_type, answer=answer, **kw)


def _hit(text: str = "", source_ids=("sa-s1-m1",), in_budget: bool = True) -> dict:
    return {"rank": 1, "text": text, "score": 1.0, "source_ids": list(source_ids),
            "timestamp": "2026-01-06T09:01:00Z", "tokens": 5, "in_budget": in_budget}


def _record(scenario: str, pid: str, answer="Lisbon", hits=(), provenance=True, error=None,
            latency=1.0, system=SYSTEM) -> dict:
    return {"kind": "probe", "system": system, "scenario_id": scenario, "checkpoint_id": "c1",
            "horizon": "short", "probe_id": pid, "answer": answer, "provenance": provenance,
            "hits": list(hits), "context_tokens": 10, "read_latency_ms": latency,
            "usage": {"input_tokens": 0, "output_tokens": 0, "llm_calls": 0}, "error": error}


def _store(scenario: str, latency: float, error=None) -> dict:
    return {"kind": "store", "system": SYSTEM, "scenario_id": scenario, "session_id": "x",
            "write_latency_ms": latency, "usage": {}, "items_stored": 1, "error": error}


# Scenario "sa": session sa-s1 holds m1 and m2, session sa-s2 holds m1.
SESSIONS = {"sa": {"sa-s1-m1": "sa-s1", "sa-s1-m2": "sa-s1", "sa-s2-m1": "sa-s2"}}


def _one(probe: GoldProbe, record: dict) -> ProbeRow:
    (row,) = build_probe_rows([record], {"sa": _gold("sa", probe)}, SESSIONS)
    return row


def _row(scenario, pid, *, probe_type="fact_recall", abstention=False, correct=None,
         recall=None, in_budget=None, deprecated=None, system=SYSTEM) -> ProbeRow:
    revision = probe_type == "revision"
    return ProbeRow(system=system, scenario_id=scenario, probe_id=pid, probe_type=probe_type,
                    abstention=abstention, correct=correct, recall_at_k=recall,
                    recall_all_in_budget=in_budget, is_revision=revision,
                    update_correct=correct if revision else None,
                    deprecated=deprecated if revision else None, read_latency_ms=1.0)


# ---------------------------------------------------------------- normalisation


@pytest.mark.parametrize("given,gold", [
    ("  Lisbon. ", "lisbon"),
    ("LISBON", "Lisbon"),
    ("navy   blue!", "Navy Blue"),
    ("\"Lisbon\"", "lisbon"),
    ("don't", "Don't"),
    ("3.5", "3.5"),
])
def test_normalize_equal(given, gold):
    assert normalize_answer(given) == normalize_answer(gold)


@pytest.mark.parametrize("given,gold", [
    ("don't", "dont"),       # punctuation inside a word is kept
    ("e-mail", "email"),
    ("C++", "C"),            # symbols are not punctuation
    ("Lisbonn", "Lisbon"),
])
def test_normalize_different(given, gold):
    assert normalize_answer(given) != normalize_answer(gold)


def test_contains_phrase_is_whole_word():
    assert contains_phrase("I moved to LISBON.", "Lisbon")
    assert contains_phrase("moved to New York, then", "new york")
    assert not contains_phrase("a Lisbonite by birth", "Lisbon")
    assert not contains_phrase("new yorker", "new york")
    assert not contains_phrase("anything", "  ")


# ---------------------------------------------------------------- rows: correctness


def test_correct_uses_answer_and_accepted_variants():
    probe = _probe("p1", answer="blue", accepted=["navy blue"])
    assert _one(probe, _record("sa", "p1", answer=" Navy Blue! ")).correct is True
    assert _one(probe, _record("sa", "p1", answer="BLUE.")).correct is True
    assert _one(probe, _record("sa", "p1", answer="green")).correct is False


def test_null_answer_is_not_scored():
    assert _one(_probe("p1"), _record("sa", "p1", answer=None)).correct is None


# ---------------------------------------------------------------- rows: recall


def test_recall_counts_evidence_covered_by_message_ids():
    probe = _probe("p1", evidence=["sa-s1-m1", "sa-s2-m1"])
    row = _one(probe, _record("sa", "p1", hits=[_hit(source_ids=["sa-s1-m1"])]))
    assert row.recall_at_k == 0.5          # 1 of 2 evidence messages
    assert row.recall_all_in_budget is False


def test_session_id_provenance_covers_its_messages():
    probe = _probe("p1", evidence=["sa-s1-m1", "sa-s1-m2", "sa-s2-m1"])
    row = _one(probe, _record("sa", "p1", hits=[_hit(source_ids=["sa-s1"])]))
    assert row.recall_at_k == pytest.approx(2 / 3)  # session sa-s1 carries m1 and m2, not sa-s2-m1
    row = _one(probe, _record("sa", "p1", hits=[_hit(source_ids=["sa-s1"]), _hit(source_ids=["sa-s2"])]))
    assert row.recall_at_k == 1.0 and row.recall_all_in_budget is True


def test_recall_all_in_budget_ignores_hits_outside_the_budget():
    probe = _probe("p1", evidence=["sa-s1-m1", "sa-s2-m1"])
    hits = [_hit(source_ids=["sa-s1-m1"]), _hit(source_ids=["sa-s2-m1"], in_budget=False)]
    row = _one(probe, _record("sa", "p1", hits=hits))
    assert row.recall_at_k == 1.0            # all k hits count
    assert row.recall_all_in_budget is False  # sa-s2-m1 only outside the budget


def test_recall_not_measurable_without_provenance():
    probe = _probe("p1", evidence=["sa-s1-m1"])
    row = _one(probe, _record("sa", "p1", hits=[_hit(source_ids=["sa-s1-m1"])], provenance=False))
    assert row.recall_at_k is None and row.recall_all_in_budget is None


def test_recall_not_measurable_when_any_hit_lacks_source_ids():
    probe = _probe("p1", evidence=["sa-s1-m1"])
    hits = [_hit(source_ids=["sa-s1-m1"]), _hit(source_ids=[])]
    row = _one(probe, _record("sa", "p1", hits=hits))
    assert row.recall_at_k is None and row.recall_all_in_budget is None


def test_recall_not_applicable_without_evidence_but_zero_with_no_hits():
    assert _one(_probe("p1"), _record("sa", "p1", hits=[_hit()])).recall_at_k is None
    row = _one(_probe("p1", evidence=["sa-s1-m1"]), _record("sa", "p1", hits=[]))
    assert row.recall_at_k == 0.0 and row.recall_all_in_budget is False


def test_unknown_evidence_message_is_an_error():
    with pytest.raises(ValueError, match="sa-s9-m9"):
        _one(_probe("p1", evidence=["sa-s9-m9"]), _record("sa", "p1", hits=[]))


# ---------------------------------------------------------------- rows: revision


def _revision(**kw) -> GoldProbe:
    return _probe("p1", probe_type="revision", answer="Porto", stale=["Lisbon"], **kw)


def test_deprecation_fails_when_stale_value_is_inside_the_budget():
    hits = [_hit("Now lives in Porto."), _hit("She LIVES in lisbon!", in_budget=True)]
    row = _one(_revision(), _record("sa", "p1", answer="Porto", hits=hits))
    assert row.is_revision and row.update_correct is True
    assert row.deprecated is False


def test_deprecation_holds_when_stale_value_is_only_outside_the_budget():
    hits = [_hit("Now lives in Porto."), _hit("She lives in Lisbon", in_budget=False)]
    row = _one(_revision(), _record("sa", "p1", answer="Lisbon", hits=hits))
    assert row.update_correct is False
    assert row.deprecated is True


def test_deprecation_matches_whole_words_only():
    row = _one(_revision(), _record("sa", "p1", hits=[_hit("a Lisbonite by birth")]))
    assert row.deprecated is True


def test_deprecation_undefined_without_stale_answers():
    probe = _probe("p1", probe_type="revision", answer="Porto")
    assert _one(probe, _record("sa", "p1", hits=[_hit("Lisbon")])).deprecated is None


def test_non_revision_rows_have_no_revision_verdicts():
    row = _one(_probe("p1"), _record("sa", "p1", hits=[_hit("Lisbon")]))
    assert (row.is_revision, row.update_correct, row.deprecated) == (False, None, None)


# ---------------------------------------------------------------- rows: completeness


def test_missing_record_names_system_scenario_and_probe():
    gold = {"sa": _gold("sa", _probe("p1"), _probe("p2"))}
    with pytest.raises(ValueError, match=r"'keyword'.*'sa'.*'p2'"):
        build_probe_rows([_record("sa", "p1")], gold, SESSIONS)


def test_errored_record_counts_as_failed_not_dropped():
    gold = {"sa": _gold("sa", _probe("p1"), _probe("p2"))}
    records = [_record("sa", "p1"), _record("sa", "p2", error="deadline exceeded"),
               _store("sa", 3.0)]
    rows = build_probe_rows(records, gold, SESSIONS)
    assert [r.probe_id for r in rows] == ["p1", "p2"]  # the denominator keeps the failed probe
    failed = rows[1]
    assert failed.infra_failed and failed.correct is False and failed.read_latency_ms is None
    assert not rows[0].infra_failed
    assert infra_failures(records) == 1


def test_errored_then_retried_record_is_scored():
    gold = {"sa": _gold("sa", _probe("p1"))}
    records = [_record("sa", "p1", error="unavailable"), _record("sa", "p1", answer="lisbon")]
    (row,) = build_probe_rows(records, gold, SESSIONS)
    assert row.correct is True


def test_duplicate_and_unknown_records_are_errors():
    gold = {"sa": _gold("sa", _probe("p1"))}
    with pytest.raises(ValueError, match="two successful"):
        build_probe_rows([_record("sa", "p1"), _record("sa", "p1")], gold, SESSIONS)
    with pytest.raises(ValueError, match="not in gold"):
        build_probe_rows([_record("sa", "p1"), _record("sa", "p9")], gold, SESSIONS)


def test_rows_per_system_in_stable_order():
    gold = {"sb": _gold("sb", _probe("p1")), "sa": _gold("sa", _probe("p2"), _probe("p1"))}
    records = [_record(s, p, system=sys) for sys in ("zeta", "alpha")
               for s, p in (("sb", "p1"), ("sa", "p1"), ("sa", "p2"))]
    rows = build_probe_rows(records, gold, SESSIONS)
    assert [(r.system, r.scenario_id, r.probe_id) for r in rows] == [
        ("alpha", "sa", "p2"), ("alpha", "sa", "p1"), ("alpha", "sb", "p1"),
        ("zeta", "sa", "p2"), ("zeta", "sa", "p1"), ("zeta", "sb", "p1")]


# ---------------------------------------------------------------- score_system golden

# Three scenarios. F = fact_recall, R = revision (correct = update, dep = deprecation),
# N = negative_recall abstention probe.
#   sa: p1 F correct  recall 1.0 all-in-budget T
#       p2 F wrong    recall 0.5 all-in-budget F
#       p3 R correct  dep F
#       p4 N wrong
#   sb: p1 F correct  recall 0.0 all-in-budget F
#       p2 R wrong    dep T     recall 1.0 all-in-budget T
#       p3 F answer null (free-form: not scored)
#   sc: p1 R correct  dep F
#       p2 N correct
GOLDEN_ROWS = [
    _row("sa", "p1", correct=True, recall=1.0, in_budget=True),
    _row("sa", "p2", correct=False, recall=0.5, in_budget=False),
    _row("sa", "p3", probe_type="revision", correct=True, deprecated=False),
    _row("sa", "p4", probe_type="negative_recall", abstention=True, correct=False),
    _row("sb", "p1", correct=True, recall=0.0, in_budget=False),
    _row("sb", "p2", probe_type="revision", correct=False, deprecated=True, recall=1.0, in_budget=True),
    _row("sb", "p3", correct=None),
    _row("sc", "p1", probe_type="revision", correct=True, deprecated=False),
    _row("sc", "p2", probe_type="negative_recall", abstention=True, correct=True),
]
# Read latencies (ms): sa [1, 2, 3, 4], sb [10], sc [5, 6]; one errored call (1000 ms) ignored.
PROBE_RECORDS = [
    *(_record("sa", f"p{i}", latency=v) for i, v in enumerate([1.0, 2.0, 3.0, 4.0], 1)),
    _record("sb", "p1", latency=10.0),
    _record("sc", "p1", latency=5.0), _record("sc", "p2", latency=6.0),
    _record("sb", "p2", latency=1000.0, error="deadline exceeded"),
]
# Write latencies (ms): sa [5.1, 7.0], sb [3.0]; one errored store ignored.
STORE_RECORDS = [_store("sa", 5.1), _store("sa", 7.0), _store("sb", 3.0),
                 _store("sc", 900.0, error="unavailable")]

EXPECTED_NAMES = {
    "accuracy", "abstention_accuracy", "accuracy.fact_recall", "accuracy.negative_recall",
    "accuracy.revision", "recall_at_k", "recall_all_in_budget", "recall_any_at_k", "recall_all_at_k", "update_correctness",
    "deprecation_correctness", "revision_accuracy",
    "read_latency_ms_p50", "read_latency_ms_p95", "read_latency_ms_p99",
    "write_latency_ms_p50", "write_latency_ms_p95", "write_latency_ms_p99",
}


@pytest.fixture(scope="module")
def golden() -> dict[str, MetricValue]:
    return score_system(GOLDEN_ROWS, STORE_RECORDS, PROBE_RECORDS, n_boot=500, seed=0)


def test_golden_names(golden):
    assert set(golden) == EXPECTED_NAMES


@pytest.mark.parametrize("name,value,n", [
    # non-abstention scored: sa T,F,T  sb T,F  sc T  -> 4/6 (sb p3 free-form excluded)
    ("accuracy", 4 / 6, 6),
    # abstention: sa F, sc T -> 1/2
    ("abstention_accuracy", 1 / 2, 2),
    # fact_recall: sa T,F  sb T -> 2/3
    ("accuracy.fact_recall", 2 / 3, 3),
    # revision: sa T  sb F  sc T -> 2/3
    ("accuracy.revision", 2 / 3, 3),
    ("accuracy.negative_recall", 1 / 2, 2),
    # recall@k: (1.0 + 0.5 + 0.0 + 1.0) / 4 = 0.625
    ("recall_at_k", 0.625, 4),
    # all in budget: T, F, F, T -> 2/4
    ("recall_all_in_budget", 0.5, 4),
    ("update_correctness", 2 / 3, 3),
    # deprecation: sa F, sb T, sc F -> 1/3
    ("deprecation_correctness", 1 / 3, 3),
    # HM = 2 * (2/3) * (1/3) / (2/3 + 1/3) = 4/9 (DRIFT §7.3)
    ("revision_accuracy", 4 / 9, 3),
    # pooled read latencies [1, 2, 3, 4, 5, 6, 10], linear interpolation at q*(7-1):
    ("read_latency_ms_p50", 4.0, 7),    # index 3 -> 4
    ("read_latency_ms_p95", 8.8, 7),    # index 5.7 -> 6 + 0.7 * (10 - 6)
    ("read_latency_ms_p99", 9.76, 7),   # index 5.94 -> 6 + 0.94 * 4
    # pooled write latencies [3.0, 5.1, 7.0] at q*(3-1):
    ("write_latency_ms_p50", 5.1, 3),   # index 1
    ("write_latency_ms_p95", 6.81, 3),  # index 1.9 -> 5.1 + 0.9 * 1.9
    ("write_latency_ms_p99", 6.962, 3),  # index 1.98 -> 5.1 + 0.98 * 1.9
])
def test_golden_values(golden, name, value, n):
    metric = golden[name]
    assert metric.value == pytest.approx(value, abs=1e-12)
    assert metric.n == n
    assert metric.reason is None
    lo, hi = metric.ci95
    assert lo <= metric.value <= hi


def test_golden_accuracy_interval_is_the_scenario_count_bootstrap(golden):
    # Per scenario (correct, scored): sa (2, 3), sb (1, 2), sc (1, 1).
    want = ratio_ci(np.array([2.0, 1.0, 1.0]), np.array([3.0, 2.0, 1.0]), n_boot=500, seed=0)
    assert (golden["accuracy"].value, *golden["accuracy"].ci95) == want


def test_golden_revision_interval_matches_slow_reference(golden):
    # Per scenario (update ok, update n, deprecated ok, deprecated n):
    #   sa (1, 1, 0, 1)  sb (0, 1, 1, 1)  sc (1, 1, 0, 1)
    # Canonical order sorts rows by (d_den, d_num, u_den, u_num): sa, sc, sb.
    per = [(1, 1, 0, 1), (1, 1, 0, 1), (0, 1, 1, 1)]
    replicates = []
    for counts in resample_counts(3, 500, seed=0):
        un = sum(w * p[0] for w, p in zip(counts, per)) / sum(w * p[1] for w, p in zip(counts, per))
        dn = sum(w * p[2] for w, p in zip(counts, per)) / sum(w * p[3] for w, p in zip(counts, per))
        replicates.append(0.0 if un == 0 or dn == 0 else 2 * un * dn / (un + dn))
    want = np.percentile(replicates, [2.5, 97.5], method="linear")
    np.testing.assert_allclose(golden["revision_accuracy"].ci95, want, rtol=1e-12)


def test_score_system_is_deterministic():
    again = score_system(GOLDEN_ROWS, STORE_RECORDS, PROBE_RECORDS, n_boot=500, seed=0)
    other = score_system(GOLDEN_ROWS, STORE_RECORDS, PROBE_RECORDS, n_boot=500, seed=1)
    first = score_system(GOLDEN_ROWS, STORE_RECORDS, PROBE_RECORDS, n_boot=500, seed=0)
    assert again == first
    assert other["accuracy"].ci95 != first["accuracy"].ci95 or \
        other["read_latency_ms_p50"].ci95 != first["read_latency_ms_p50"].ci95
    shuffled = score_system(GOLDEN_ROWS[::-1], STORE_RECORDS[::-1], PROBE_RECORDS[::-1],
                            n_boot=500, seed=0)
    assert shuffled == first


# ---------------------------------------------------------------- undefined metrics


def test_no_revision_probes_gives_reasons_not_zeros():
    rows = [_row("sa", "p1", correct=True), _row("sb", "p1", correct=False)]
    out = score_system(rows, [], [_record("sa", "p1")], n_boot=50)
    for name in ("update_correctness", "deprecation_correctness", "revision_accuracy"):
        assert out[name].value is None and out[name].ci95 is None
        assert out[name].reason == NO_REVISION_REASON
    assert out["accuracy"].value == 0.5  # 1 of 2
    assert out["abstention_accuracy"].value is None
    assert out["write_latency_ms_p50"].value is None and out["write_latency_ms_p50"].n == 0


def test_no_provenance_recall_reason():
    rows = [_row("sa", "p1", correct=True)]
    out = score_system(rows, [], [_record("sa", "p1", provenance=False)], n_boot=50)
    assert out["recall_at_k"].value is None
    assert out["recall_at_k"].reason == NO_PROVENANCE_REASON
    assert out["recall_all_in_budget"].reason == NO_PROVENANCE_REASON


def test_free_form_accuracy_reason():
    rows = [_row("sa", "p1", correct=None), _row("sa", "p2", correct=None, recall=1.0, in_budget=True)]
    out = score_system(rows, [], [_record("sa", "p1", answer=None)], n_boot=50)
    assert out["accuracy"].value is None and out["accuracy"].reason == FREE_FORM_REASON
    assert out["accuracy.fact_recall"].reason == FREE_FORM_REASON
    assert out["recall_at_k"].value == 1.0  # retrieval is still scored


def test_revision_accuracy_is_zero_when_one_component_is_zero():
    # update 2/2 = 1, deprecation 0/2 = 0 -> HM defined as 0, not None.
    rows = [_row("sa", "p1", probe_type="revision", correct=True, deprecated=False),
            _row("sb", "p1", probe_type="revision", correct=True, deprecated=False)]
    out = score_system(rows, [], [], n_boot=100)
    assert out["update_correctness"].value == 1.0
    assert out["deprecation_correctness"].value == 0.0
    assert out["revision_accuracy"].value == 0.0
    assert out["revision_accuracy"].ci95 == [0.0, 0.0]


def test_revision_accuracy_undefined_without_stale_answers():
    rows = [_row("sa", "p1", probe_type="revision", correct=True, deprecated=None)]
    out = score_system(rows, [], [], n_boot=50)
    assert out["update_correctness"].value == 1.0
    assert out["deprecation_correctness"].value is None
    assert out["revision_accuracy"].value is None and out["revision_accuracy"].reason


def test_mixed_systems_are_rejected():
    rows = [_row("sa", "p1", correct=True), _row("sa", "p2", correct=True, system="other")]
    with pytest.raises(ValueError, match="one system"):
        score_system(rows, [], [])


def test_infra_failures_counts_store_and_probe_errors():
    # PROBE_RECORDS has one errored probe call, STORE_RECORDS one errored store.
    assert infra_failures(PROBE_RECORDS + STORE_RECORDS) == 2
    assert infra_failures([]) == 0


# ---------------------------------------------------------------- paired_vs golden


def test_paired_vs_golden():
    # Base on the same probes (plus one the system lacks, which is ignored):
    #   accuracy     sys  sa T,F,T  sb T,F     sc T
    #                base sa F,F,F  sb F,None  sc F
    #                common scored: sa p1,p2,p3  sb p1  sc p1 -> diffs 1,0,1,1,1 = 4/5
    #   recall@k     sys sa p1 1.0, p2 0.5, sb p1 0.0, sb p2 1.0
    #                base sa p1 0.0, p2 None, sb p1 0.0, sb p2 0.5
    #                common measurable: sa p1 (+1), sb p1 (0), sb p2 (+0.5) -> 1.5/3 = 0.5
    #   revision     see below
    base = [
        _row("sa", "p1", correct=False, recall=0.0, in_budget=False, system="none"),
        _row("sa", "p2", correct=False, recall=None, system="none"),
        _row("sa", "p3", probe_type="revision", correct=False, deprecated=True, system="none"),
        _row("sa", "p4", probe_type="negative_recall", abstention=True, correct=True, system="none"),
        _row("sb", "p1", correct=False, recall=0.0, in_budget=False, system="none"),
        _row("sb", "p2", probe_type="revision", correct=None, deprecated=True, recall=0.5,
             in_budget=False, system="none"),
        _row("sc", "p1", probe_type="revision", correct=False, deprecated=True, system="none"),
        _row("sd", "p1", correct=True, system="none"),
    ]
    out = paired_vs(GOLDEN_ROWS, base, n_boot=500, seed=0)
    assert set(out) == {"accuracy", "recall_at_k", "revision_accuracy"}

    assert out["accuracy"].value == pytest.approx(4 / 5)
    assert out["accuracy"].n == 5
    # Same interval as the direct paired bootstrap over those five probes.
    want = paired_diff_ci(["sa", "sa", "sa", "sb", "sc"], np.array([1.0, 0, 1, 1, 1]),
                          np.array([0.0, 0, 0, 0, 0]), n_boot=500, seed=0)
    assert (out["accuracy"].value, *out["accuracy"].ci95) == want

    assert out["recall_at_k"].value == pytest.approx(0.5)
    assert out["recall_at_k"].n == 3

    # Revision: sb p2 has no base update verdict, so the update component runs over
    # sa p3 and sc p1 only: sys 2/2, base 0/2; deprecation over all three: sys 1/3,
    # base 3/3. sys HM = 2 * 1 * (1/3) / (4/3) = 1/2, base HM = 0 -> +1/2.
    assert out["revision_accuracy"].value == pytest.approx(1 / 2)
    assert out["revision_accuracy"].n == 3
    lo, hi = out["revision_accuracy"].ci95
    assert -1.0 <= lo <= out["revision_accuracy"].value <= hi <= 1.0


def test_paired_vs_against_itself_is_zero():
    out = paired_vs(GOLDEN_ROWS, GOLDEN_ROWS, n_boot=200, seed=3)
    for name in ("accuracy", "recall_at_k", "revision_accuracy"):
        assert out[name].value == 0.0
        assert out[name].ci95 == [0.0, 0.0]


def test_paired_vs_without_common_probes():
    other = [_row("zz", "p1", correct=True, system="none")]
    out = paired_vs(GOLDEN_ROWS, other, n_boot=50)
    assert all(m.value is None and m.reason for m in out.values())

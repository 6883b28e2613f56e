"""The shortcut audit's rules, table and tier classifier (conformance/report/shortcuts.py), by hand."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from conformance.report import shortcuts as S


def _row(value, lo=None, hi=None, diff=None, dlo=None, dhi=None):
    row = {"drift_c": value, "drift_c_ci95": None if lo is None else [lo, hi]}
    if diff is not None:
        row.update(vs_reference=diff, vs_reference_ci95=[dlo, dhi])
    return row


def _table(**shortcut_rows):
    table = {S.REFERENCE: _row(0.40, 0.35, 0.45)}
    for name in S.SHORTCUTS:
        table[name] = shortcut_rows.get(name.split("-", 1)[1], _row(0.30, 0.25, 0.35, -0.10, -0.15, -0.05))
    return table


def test_verdict_passes_a_corpus_where_every_shortcut_is_clearly_below_the_reference():
    assert S.verdict(_table(), {"auc": 0.60}) == []


def test_verdict_names_each_rule_it_breaks():
    # A point estimate above the reference's, an upper bound past +0.02, and an AUC past 0.75.
    table = _table(recency=_row(0.41, 0.3, 0.5, 0.01, -0.05, 0.06), dump=_row(0.39, 0.3, 0.45, -0.01, -0.04, 0.021))
    problems = S.verdict(table, {"auc": 0.751})
    assert problems == [
        "shortcut-recency DRIFT-C 0.410 exceeds the reference compressor's 0.400",
        "shortcut-recency: the upper bound of its paired DRIFT-C difference to the reference compressor is +0.060 "
        "(> +0.02)",
        "shortcut-dump: the upper bound of its paired DRIFT-C difference to the reference compressor is +0.021 "
        "(> +0.02)",
        "the tier classifier tells noise from signal with AUC 0.751 (> 0.75)",
    ]
    # An upper bound of exactly +0.02 and an AUC of exactly 0.75 pass (the rules say "exceeds").
    edge = _table(frequency=_row(0.39, 0.3, 0.45, -0.01, -0.04, 0.02))
    assert S.verdict(edge, {"auc": 0.75}) == []


def test_verdict_fails_without_the_numbers_it_needs():
    table = _table()
    del table["shortcut-prior"]
    table[S.REFERENCE]["drift_c"] = None
    problems = S.verdict(table, {"auc": None})
    assert "shortcut-prior has no DRIFT-C" in problems
    assert any("reference-compressor has no DRIFT-C" in p for p in problems)
    assert "the tier classifier has no AUC (one class only)" in problems


def test_shortcut_table_reads_drift_c_and_the_paired_difference():
    metric = lambda v, lo, hi: SimpleNamespace(value=v, ci95=(lo, hi))  # noqa: E731
    systems = {S.REFERENCE: SimpleNamespace(metrics={"drift_c": metric(0.4, 0.3, 0.5)}, paired_vs_baseline={}),
               "shortcut-dump": SimpleNamespace(metrics={"drift_c": metric(0.3, 0.2, 0.4)},
                                                paired_vs_baseline={"drift_c": metric(-0.1, -0.2, -0.01)})}
    table = S.shortcut_table(SimpleNamespace(systems=systems))
    assert table == {S.REFERENCE: {"drift_c": 0.4, "drift_c_ci95": [0.3, 0.5]},
                     "shortcut-dump": {"drift_c": 0.3, "drift_c_ci95": [0.2, 0.4], "vs_reference": -0.1,
                                       "vs_reference_ci95": [-0.2, -0.01]}}


def test_classifier_separates_what_differs_in_words_and_not_what_does_not():
    pytest.importorskip("sklearn")
    rng = random.Random(0)
    words = [f"w{i}" for i in range(200)]

    def corpus(tell: bool):
        out = []
        for i in range(300):
            event = i % 3 == 0
            text = " ".join(rng.choice(words) for _ in range(30))
            if tell:
                text += " moved house" if event else " nothing new"
            out.append((text, event, "user_assistant" if i % 2 else "crawler_agent"))
        return out
    separable = S.classifier_audit(corpus(True), corpus(True))
    assert separable["auc"] == 1.0 and set(separable["by_paradigm"]) == {"user_assistant", "crawler_agent"}
    blind = S.classifier_audit(corpus(False), corpus(False))
    assert 0.35 < blind["auc"] < 0.65 and blind["n_train"] == blind["n_test"] == 300


def test_the_printed_table_rounds_every_figure_to_three_places():
    table = _table(recency=_row(0.3767494779007741, 0.3117523974315381, 0.4300956242997552,
                                0.05800000000000001, -0.13974715788611308, 0.20638145816029066))
    table["none"] = _row(None)
    text = "\n".join(S.summary_lines(table, {"auc": 0.50341234, "by_paradigm": {"coding_agent": 0.72691}}))
    assert "shortcut-recency     DRIFT-C 0.377 [0.312, 0.430]  vs reference +0.058 [-0.140, +0.206]" in text
    assert "none                 DRIFT-C n/a" in text
    assert "tier classifier AUC 0.503 (by paradigm coding_agent 0.727)" in text
    assert "0.3767" not in text and "0.1397" not in text

"""Which system is better (conformance/scoring/pairwise.py): hand-computed goldens."""

import numpy as np
import pytest

from conformance.scoring.pairwise import bootstrap_p, compact_letters, holm, pairwise


def test_bootstrap_p_by_hand():
    # 9 replicates: 2 at or below 0, 8 at or above 0 (0 counts on both sides).
    reps = np.array([-1.0, 0.0, 1, 2, 3, 4, 5, 6, 7])
    assert bootstrap_p(reps) == pytest.approx(2 * (2 + 1) / (9 + 1))
    assert bootstrap_p(np.ones(99)) == pytest.approx(2 * 1 / 100)
    assert bootstrap_p(np.array([np.nan, np.nan])) is None
    assert bootstrap_p(np.zeros(5)) == 1.0


def test_holm_by_hand():
    # Sorted 0.01, 0.02, 0.04 with m = 3: 0.03, 0.04, 0.04 (monotone), in input order.
    assert holm([0.04, 0.01, None, 0.02]) == [pytest.approx(0.04), pytest.approx(0.03), None, pytest.approx(0.04)]
    assert holm([0.6, 0.9]) == [pytest.approx(1.0), pytest.approx(1.0)]


def test_compact_letters_by_hand():
    order = ["A", "B", "C", "D"]
    assert compact_letters(order, set()) == {"A": "a", "B": "a", "C": "a", "D": "a"}
    # A differs from C and D; B from D: groups {A, B}, {B, C}, {C, D}.
    differs = {frozenset("AC"), frozenset("AD"), frozenset("BD")}
    assert compact_letters(order, differs) == {"A": "a", "B": "ab", "C": "bc", "D": "c"}
    every = {frozenset(p) for p in ("AB", "AC", "AD", "BC", "BD", "CD")}
    assert compact_letters(order, every) == {"A": "a", "B": "b", "C": "c", "D": "d"}


def _reps(value, shift, n=999, seed=0):
    noise = np.random.default_rng(seed).normal(0, 0.01, n)
    return value, value + shift + noise


def test_pairwise_separates_what_differs_and_groups_what_does_not():
    base = np.random.default_rng(1).normal(0, 0.05, 999)  # shared scenario draws: paired
    replicates = {
        "hi": {"drift_c": (0.50, 0.50 + base)},
        "mid": {"drift_c": (0.49, 0.49 + base + np.random.default_rng(2).normal(0, 0.005, 999))},
        "lo": {"drift_c": (0.30, 0.30 + base)},
        "na": {"drift_c": (float("nan"), base)},
    }
    out = pairwise(replicates, ["lo", "mid", "hi", "na"], metrics=["drift_c"])
    m = out["metrics"]["drift_c"]
    assert m["systems"] == ["hi", "mid", "lo"]  # best first; an n/a system is left out
    assert m["letters"] == {"hi": "a", "mid": "a", "lo": "b"}
    pairs = {(p["a"], p["b"]): p for p in m["pairs"]}
    assert pairs[("hi", "lo")]["diff"] == pytest.approx(0.20)
    assert pairs[("hi", "lo")]["differs"] and pairs[("mid", "lo")]["differs"]
    assert not pairs[("hi", "mid")]["differs"]
    # Holm over this metric's family of 3: the smallest p is multiplied by 3.
    ps = sorted(p["p"] for p in m["pairs"])
    assert min(p["p_holm"] for p in m["pairs"]) == pytest.approx(3 * ps[0])

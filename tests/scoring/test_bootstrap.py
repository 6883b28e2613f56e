"""Cluster bootstrap: vectorised results equal a slow loop over the same draws."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.scoring import (
    bootstrap_sums,
    harmonic_mean,
    paired_diff_ci,
    percentile_ci,
    percentiles_ci,
    ratio_ci,
    resample_counts,
)


def _draws(n_clusters: int, n_boot: int, seed: int) -> np.ndarray:
    """The documented chunk-seeded draw, written out again so the tests do not trust the module."""
    chunks = -(-n_boot // 256)
    children = np.random.SeedSequence(seed).spawn(chunks)
    return np.vstack([np.random.default_rng(child).integers(0, n_clusters, size=(min(256, n_boot - 256 * i), n_clusters))
                      for i, child in enumerate(children)])


def _slow_interval(replicates: list[float]) -> tuple[float, float]:
    kept = [r for r in replicates if r == r]  # drop NaN
    lo, hi = np.percentile(kept, [2.5, 97.5], method="linear")
    return float(lo), float(hi)


def _slow_ratio_ci(num, den, n_boot, seed):
    """Resample clusters one by one, sum in plain Python, divide: obviously correct."""
    replicates = []
    for row in _draws(len(num), n_boot, seed):
        n = sum(num[i] for i in row)
        d = sum(den[i] for i in row)
        replicates.append(n / d if d else float("nan"))
    return (sum(num) / sum(den), *_slow_interval(replicates))


# ---------------------------------------------------------------- resample_counts

def test_count_matrix_counts_the_draws():
    weights = resample_counts(5, 50, seed=3)
    idx = _draws(5, 50, seed=3)
    assert weights.shape == (50, 5)
    assert (weights.sum(axis=1) == 5).all()
    for b in range(50):
        assert weights[b].tolist() == np.bincount(idx[b], minlength=5).tolist()


def test_count_matrix_spans_chunks_and_parallel_equals_serial():
    serial = resample_counts(7, 1000, seed=11)
    assert serial.tolist() == [np.bincount(row, minlength=7).tolist() for row in _draws(7, 1000, seed=11)]
    assert np.array_equal(resample_counts(7, 1000, seed=11, workers=4), serial)
    # A chunk is its own stream: the first 256 replicates do not depend on n_boot.
    assert np.array_equal(resample_counts(7, 300, seed=11)[:256], serial[:256])


@pytest.mark.parametrize("clusters,n_boot", [(0, 10), (3, 0)])
def test_count_matrix_rejects_empty_shapes(clusters, n_boot):
    with pytest.raises(ValueError):
        resample_counts(clusters, n_boot, seed=0)


# ---------------------------------------------------------------- ratio_ci

def test_ratio_ci_matches_slow_reference():
    # Already in canonical order (sorted by den, then num), so the reference's cluster
    # indices mean the same clusters as the module's.
    num = [0.0, 1.0, 2.0, 3.0, 5.0]
    den = [1.0, 2.0, 3.0, 4.0, 6.0]
    got = ratio_ci(np.array(num), np.array(den), n_boot=500, seed=11)
    want = _slow_ratio_ci(num, den, 500, 11)
    assert got[0] == pytest.approx(11 / 16)  # (0+1+2+3+5) / (1+2+3+4+6)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


def test_ratio_ci_single_cluster_collapses_to_value():
    # One cluster: every replicate redraws it, so the interval is the point 3/5.
    assert ratio_ci(np.array([3.0]), np.array([5.0]), n_boot=300, seed=1) == (0.6, 0.6, 0.6)


def test_ratio_ci_identical_clusters_collapse_to_value():
    # Four copies of (3, 5): any resample is (3k)/(5k) = 0.6 exactly.
    value, lo, hi = ratio_ci(np.full(4, 3.0), np.full(4, 5.0), n_boot=300, seed=2)
    assert value == lo == hi == 0.6


def test_ratio_ci_drops_zero_denominator_replicates():
    # Cluster (0, 0) alone gives 0/0: those replicates are dropped, every other
    # replicate is 1/1, 2/2... = 1, so the interval is [1, 1].
    value, lo, hi = ratio_ci(np.array([0.0, 1.0]), np.array([0.0, 1.0]), n_boot=400, seed=0)
    assert (value, lo, hi) == (1.0, 1.0, 1.0)


def test_ratio_ci_zero_total_denominator_is_undefined():
    assert ratio_ci(np.zeros(3), np.zeros(3), n_boot=50, seed=0) == (None, None, None)
    assert ratio_ci(np.array([]), np.array([]), n_boot=50, seed=0) == (None, None, None)


def test_ratio_ci_is_deterministic_per_seed():
    num, den = np.array([1.0, 4.0, 0.0, 2.0, 7.0]), np.array([3.0, 5.0, 2.0, 2.0, 9.0])
    first = ratio_ci(num, den, n_boot=1000, seed=42)
    assert ratio_ci(num, den, n_boot=1000, seed=42) == first  # bit-identical floats
    assert ratio_ci(num, den, n_boot=1000, seed=43) != first


def test_ratio_ci_does_not_depend_on_cluster_order():
    num, den = np.array([1.0, 4.0, 0.0, 2.0, 7.0]), np.array([3.0, 5.0, 2.0, 2.0, 9.0])
    want = ratio_ci(num, den, n_boot=1000, seed=5)
    for perm in ([4, 3, 2, 1, 0], [2, 0, 4, 1, 3]):
        assert ratio_ci(num[perm], den[perm], n_boot=1000, seed=5) == want


def test_ratio_ci_rejects_bad_input():
    with pytest.raises(ValueError):
        ratio_ci(np.array([1.0, 2.0]), np.array([1.0]))
    with pytest.raises(ValueError):
        ratio_ci(np.array([np.nan]), np.array([1.0]))


@settings(max_examples=60, deadline=None)
@given(
    clusters=st.lists(st.integers(min_value=1, max_value=20).flatmap(
        lambda d: st.tuples(st.integers(min_value=0, max_value=d), st.just(d))),
        min_size=2, max_size=8),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_ratio_ci_interval_contains_value(clusters, seed):
    num = np.array([float(n) for n, _ in clusters])
    den = np.array([float(d) for _, d in clusters])
    value, lo, hi = ratio_ci(num, den, n_boot=400, seed=seed)
    assert lo <= value <= hi
    assert 0.0 <= lo and hi <= 1.0


# ---------------------------------------------------------------- bootstrap_sums

def test_bootstrap_sums_ratio_equals_ratio_ci():
    num, den = np.array([2.0, 0.0, 3.0]), np.array([4.0, 1.0, 3.0])

    def ratio(s):
        return s["n"] / s["d"]

    got = bootstrap_sums({"n": num, "d": den}, ratio, n_boot=700, seed=9)
    assert got == ratio_ci(num, den, n_boot=700, seed=9)


def test_bootstrap_sums_harmonic_mean_matches_slow_reference():
    # Per cluster: update (correct, asked), deprecation (correct, asked); canonical order
    # (sorted by the quantity names' columns d_den, d_num, u_den, u_num) is the given one.
    per = {"d_den": [1.0, 1.0, 2.0], "d_num": [0.0, 1.0, 1.0],
           "u_den": [1.0, 2.0, 1.0], "u_num": [1.0, 1.0, 0.0]}

    def hm(s):
        return harmonic_mean(s["u_num"] / s["u_den"], s["d_num"] / s["d_den"])

    got = bootstrap_sums({k: np.array(v) for k, v in per.items()}, hm, n_boot=600, seed=4)

    def slow_hm(pick):
        u = sum(per["u_num"][i] for i in pick) / sum(per["u_den"][i] for i in pick)
        d = sum(per["d_num"][i] for i in pick) / sum(per["d_den"][i] for i in pick)
        return 0.0 if u == 0 or d == 0 else 2 * u * d / (u + d)

    # Full sample: update 2/4 = 1/2, deprecation 2/4 = 1/2, HM = 1/2.
    assert got[0] == pytest.approx(0.5)
    want = _slow_interval([slow_hm(row) for row in _draws(3, 600, 4)])
    np.testing.assert_allclose(got[1:], want, rtol=1e-12)


def test_bootstrap_sums_checks_statistic_shape():
    with pytest.raises(ValueError):
        bootstrap_sums({"x": np.ones(3)}, lambda s: np.zeros(2), n_boot=10, seed=0)


# ---------------------------------------------------------------- paired_diff_ci

def test_paired_diff_is_mean_of_differences_and_matches_guide_loop():
    # Three scenarios; per-probe 0/1 for system a and b on the same probes.
    clusters = ["s1", "s1", "s1", "s2", "s2", "s3"]
    a = np.array([1, 1, 0, 1, 0, 1], dtype=float)
    b = np.array([0, 1, 0, 0, 0, 1], dtype=float)
    value, lo, hi = paired_diff_ci(clusters, a, b, n_boot=800, seed=7)
    # diffs: s1 [1,0,0], s2 [1,0], s3 [0] -> 2/6; equals mean(a) - mean(b) = 4/6 - 2/6.
    assert value == pytest.approx(1 / 3)

    # Guide §7 loop: resample scenarios, pool their differences, average. Clusters are
    # taken in the documented canonical order of ratio_ci, by (count, summed diff):
    # s3 (1, 0), s2 (2, 1), s1 (3, 1).
    diffs = {"s3": [0.0], "s2": [1.0, 0.0], "s1": [1.0, 0.0, 0.0]}
    order = ["s3", "s2", "s1"]
    replicates = []
    for row in _draws(3, 800, 7):
        pooled = [d for i in row for d in diffs[order[i]]]
        replicates.append(sum(pooled) / len(pooled))
    np.testing.assert_allclose((lo, hi), _slow_interval(replicates), rtol=1e-12)


def test_paired_diff_does_not_depend_on_item_order():
    clusters = ["s1", "s1", "s2", "s3", "s3"]
    a = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    b = np.array([0.0, 0.0, 1.0, 0.0, 1.0])
    want = paired_diff_ci(clusters, a, b, n_boot=500, seed=1)
    perm = [4, 2, 0, 3, 1]
    assert paired_diff_ci([clusters[i] for i in perm], a[perm], b[perm], n_boot=500, seed=1) == want


def test_paired_diff_empty_and_mismatched():
    assert paired_diff_ci([], np.array([]), np.array([])) == (None, None, None)
    with pytest.raises(ValueError):
        paired_diff_ci(["s1"], np.array([1.0, 0.0]), np.array([1.0, 0.0]))


# ---------------------------------------------------------------- percentile_ci

def test_percentile_ci_matches_slow_reference():
    # Given in canonical order: by (length, sorted values).
    clusters = [np.array([40.0]), np.array([1.0, 9.0]), np.array([2.0, 3.0, 30.0])]
    for q in (50.0, 95.0, 99.0):
        got = percentile_ci(clusters, q, n_boot=300, seed=8)
        replicates = []
        for row in _draws(3, 300, 8):
            pooled = np.concatenate([clusters[i] for i in row])
            replicates.append(float(np.percentile(pooled, q, method="linear")))
        pooled_all = np.concatenate(clusters)
        assert got[0] == float(np.percentile(pooled_all, q, method="linear"))
        assert got[1:] == _slow_interval(replicates)


def test_percentile_ci_hand_value_and_collapse():
    # Pooled [1, 2, 3, 4]: p50 at index 1.5 -> 2.5.
    assert percentile_ci([np.array([4.0, 1.0]), np.array([3.0, 2.0])], 50, n_boot=50)[0] == 2.5
    # One cluster: every replicate is that cluster.
    assert percentile_ci([np.array([5.0, 7.0])], 50, n_boot=50, seed=3) == (6.0, 6.0, 6.0)


def test_percentile_ci_order_independent_and_deterministic():
    gen = np.random.default_rng(123)
    clusters = [gen.exponential(10.0, size=gen.integers(1, 6)) for _ in range(20)]
    want = percentile_ci(clusters, 90, n_boot=400, seed=2)
    assert percentile_ci(clusters[::-1], 90, n_boot=400, seed=2) == want
    assert percentile_ci([c[::-1] for c in clusters], 90, n_boot=400, seed=2) == want
    assert percentile_ci(clusters, 90, n_boot=400, seed=3) != want


def test_percentile_ci_empty_and_bad_q():
    assert percentile_ci([], 50) == (None, None, None)
    assert percentile_ci([np.array([])], 50) == (None, None, None)
    with pytest.raises(ValueError):
        percentile_ci([np.array([1.0])], 101)


def test_percentiles_ci_equals_one_call_per_q():
    gen = np.random.default_rng(7)
    clusters = [gen.exponential(5.0, size=gen.integers(0, 6)) for _ in range(12)]
    qs = [50.0, 95.0, 99.0]
    together = percentiles_ci(clusters, qs, n_boot=300, seed=4)
    assert together == [percentile_ci(clusters, q, n_boot=300, seed=4) for q in qs]

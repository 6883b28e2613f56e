"""Seeded, vectorised cluster bootstrap over scenarios (comparison guide §7).

Probes of one scenario are not independent (a scenario that is hard for one reason
fails all its probes together), so every interval resamples whole clusters
(scenarios) with replacement, never single probes.

Vectorisation: most statistics here are functions of per-cluster *sums* (correct
count, probe count, summed recall...). One chunk-seeded draw of cluster indices
(:func:`resample_counts`) is turned into a count matrix ``W`` (B x C, how often
replicate b drew cluster c); the replicate sums of a per-cluster vector ``s`` are
then ``W @ s`` (shape (B,)), with no Python loop over replicates.

Conventions shared by every function:

- Interval: the 2.5th and 97.5th percentiles of the replicate statistics
  (``np.percentile(..., method="linear")``, the percentile bootstrap).
- Undefined replicates (a zero denominator, a NaN statistic) are dropped before the
  percentiles; when every replicate is dropped, ``lo`` and ``hi`` are None.
- Reproducibility: the same inputs and seed give bit-identical floats. Before drawing,
  clusters are put in a canonical order that depends only on their values (their rows
  of per-cluster quantities, compared column by column in sorted quantity-name order;
  for :func:`ratio_ci` that is by ``den`` then ``num``), so the result does not depend
  on the order in which clusters are passed either.
- Return value: ``(value, lo, hi)`` as Python floats, each possibly None.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = [
    "DEFAULT_N_BOOT",
    "resample_counts",
    "ratio_ci",
    "bootstrap_sums",
    "paired_diff_ci",
    "percentile_ci",
    "percentiles_ci",
]

DEFAULT_N_BOOT = 2000
_PERCENTILES = (2.5, 97.5)

Interval = tuple[float | None, float | None, float | None]


#: Replicates drawn per chunk; each chunk has its own child seed (see :func:`resample_counts`).
CHUNK_SIZE = 256
#: Upper bound on the elements of one work array in :func:`replicate_percentiles`.
MAX_CHUNK_ELEMENTS = 2**18


def _chunk_counts(n_clusters: int, rows: int, seed_seq: np.random.SeedSequence) -> np.ndarray:
    idx = np.random.default_rng(seed_seq).integers(0, n_clusters, size=(rows, n_clusters))
    flat = (idx + n_clusters * np.arange(rows)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n_clusters).reshape(rows, n_clusters)


def resample_counts(n_clusters: int, n_boot: int, seed: int, *, workers: int = 1) -> np.ndarray:
    """Count matrix of a cluster bootstrap, shape (n_boot, n_clusters), int64.

    Row b counts how often each cluster was drawn in replicate b; every row sums to
    ``n_clusters``. Chunk-seeded: replicates are drawn in chunks of :data:`CHUNK_SIZE`
    rows, chunk i from ``np.random.default_rng(SeedSequence(seed).spawn(n_chunks)[i])
    .integers(0, n_clusters, size=(rows_i, n_clusters))``, so chunks are independent
    streams and drawing them on ``workers`` threads gives the same matrix, bit for bit,
    as drawing them serially. Raises ValueError for n_clusters < 1, n_boot < 1 or
    workers < 1.
    """
    if n_clusters < 1:
        raise ValueError(f"need at least one cluster, got {n_clusters}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    n_chunks = -(-n_boot // CHUNK_SIZE)
    seeds = np.random.SeedSequence(seed).spawn(n_chunks)
    rows = [min(CHUNK_SIZE, n_boot - i * CHUNK_SIZE) for i in range(n_chunks)]
    if workers == 1 or n_chunks == 1:
        parts = [_chunk_counts(n_clusters, r, s) for r, s in zip(rows, seeds)]
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            parts = list(pool.map(lambda args: _chunk_counts(n_clusters, *args), zip(rows, seeds)))
    return np.vstack(parts)


def _interval(replicates: np.ndarray) -> tuple[float | None, float | None]:
    kept = replicates[np.isfinite(replicates)]
    if kept.size == 0:
        return None, None
    lo, hi = np.percentile(kept, _PERCENTILES, method="linear")
    return float(lo), float(hi)


def _finite_or_none(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _cluster_matrix(columns: Sequence[np.ndarray], names: Sequence[str]) -> np.ndarray:
    """Stack per-cluster vectors as columns (C x Q), checked and in canonical row order."""
    arrays = [np.asarray(col, dtype=float) for col in columns]
    for name, arr in zip(names, arrays):
        if arr.ndim != 1:
            raise ValueError(f"{name}: expected a 1-D per-cluster array, got shape {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name}: per-cluster values must be finite")
    sizes = {arr.shape[0] for arr in arrays}
    if len(sizes) > 1:
        raise ValueError("per-cluster arrays differ in length: "
                         + ", ".join(f"{n}={a.shape[0]}" for n, a in zip(names, arrays)))
    matrix = np.column_stack(arrays) if arrays else np.empty((0, 0))
    if matrix.shape[0] > 1:
        # np.lexsort sorts by its last key first: feed columns reversed so column 0 leads.
        matrix = matrix[np.lexsort(matrix.T[::-1])]
    return matrix


def bootstrap_sums(per_cluster: Mapping[str, np.ndarray],
                   statistic: Callable[[dict[str, np.ndarray]], np.ndarray],
                   *, n_boot: int = DEFAULT_N_BOOT, seed: int = 0) -> Interval:
    """Cluster bootstrap of any statistic of summed per-cluster quantities.

    ``per_cluster``: quantity name -> array of shape (C,), one entry per cluster, all
    aligned on the same clusters (e.g. ``{"correct": ..., "asked": ...}``).
    ``statistic``: maps ``{name: sums}`` with each ``sums`` of shape (m,) to an array of
    shape (m,); it must be vectorised and return NaN where it is undefined (those
    replicates are dropped). It is called once with the full-sample sums (m = 1) for
    the point value and once with the replicate sums ``W @ per_cluster[name]`` (m = B).

    Returns (value, lo, hi); value is None when the statistic is NaN on the full sample.
    Raises ValueError for no clusters, mismatched lengths or non-finite inputs.
    """
    names = sorted(per_cluster)
    if not names:
        raise ValueError("bootstrap_sums needs at least one per-cluster quantity")
    matrix = _cluster_matrix([per_cluster[n] for n in names], names)
    n_clusters = matrix.shape[0]
    if n_clusters == 0:
        raise ValueError("bootstrap_sums needs at least one cluster")
    full = {n: matrix[:, j].sum(keepdims=True) for j, n in enumerate(names)}
    weights = resample_counts(n_clusters, n_boot, seed)
    sums = weights @ matrix  # (B, Q)
    with np.errstate(divide="ignore", invalid="ignore"):  # undefined replicates become NaN
        value = float(np.asarray(statistic(full), dtype=float).reshape(-1)[0])
        replicates = np.asarray(statistic({n: sums[:, j] for j, n in enumerate(names)}),
                                dtype=float)
    if replicates.shape != (n_boot,):
        raise ValueError(f"statistic must return shape ({n_boot},), got {replicates.shape}")
    lo, hi = _interval(replicates)
    return _finite_or_none(value), lo, hi


def _ratio(sums: dict[str, np.ndarray]) -> np.ndarray:
    num, den = sums["num"], sums["den"]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den != 0, num / np.where(den != 0, den, 1.0), np.nan)


def ratio_ci(num: np.ndarray, den: np.ndarray, *, n_boot: int = DEFAULT_N_BOOT,
             seed: int = 0) -> Interval:
    """Ratio of sums with its cluster-bootstrap interval (guide §7).

    ``num``, ``den``: shape (C,), one entry per cluster (e.g. correct probes and probes
    scored in each scenario). value = ``num.sum() / den.sum()``; each replicate is
    ``(W @ num) / (W @ den)``. Replicates whose denominator is 0 are dropped (they
    resampled only empty clusters); if all are, lo and hi are None. With no clusters or
    ``den.sum() == 0`` the result is ``(None, None, None)``.
    Raises ValueError for mismatched lengths or non-finite inputs.
    """
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    _cluster_matrix([num, den], ["num", "den"])  # validation only
    if num.size == 0 or den.sum() == 0:
        return None, None, None
    return bootstrap_sums({"num": num, "den": den}, _ratio, n_boot=n_boot, seed=seed)


def paired_diff_ci(clusters: Sequence[str], a: np.ndarray, b: np.ndarray, *,
                   n_boot: int = DEFAULT_N_BOOT, seed: int = 0) -> Interval:
    """Paired difference ``mean(a - b)`` over the same items, clustered (guide §7).

    ``clusters``: the cluster (scenario id) of each item, length N; ``a``, ``b``: shape
    (N,), the two systems' per-item scores (0/1 or float) on the *same* items, aligned.
    The difference of means equals the mean of per-item differences, so this is
    :func:`ratio_ci` of per-cluster summed differences over per-cluster item counts.
    Returns (None, None, None) for N = 0. Raises ValueError on length mismatch.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not (len(clusters) == a.shape[0] == b.shape[0]) or a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"clusters, a and b must be 1-D of one length, got "
                         f"{len(clusters)}, {a.shape}, {b.shape}")
    if a.size == 0:
        return None, None, None
    keys = sorted(set(clusters))
    pos = {key: i for i, key in enumerate(keys)}
    which = np.array([pos[c] for c in clusters], dtype=np.int64)
    diff_sum = np.bincount(which, weights=a - b, minlength=len(keys))
    count = np.bincount(which, minlength=len(keys)).astype(float)
    return ratio_ci(diff_sum, count, n_boot=n_boot, seed=seed)


def percentiles_ci(values_by_cluster: Sequence[np.ndarray], qs: Sequence[float], *,
                   n_boot: int = DEFAULT_N_BOOT, seed: int = 0) -> list[Interval]:
    """:func:`percentile_ci` for several percentiles at once, from one set of draws.

    Returns one ``(value, lo, hi)`` per entry of ``qs``, each identical to
    ``percentile_ci(values_by_cluster, q, n_boot=n_boot, seed=seed)``; resampling once
    and asking ``np.percentile`` for all ``qs`` per replicate is what makes it cheaper.
    """
    qs = [float(q) for q in qs]
    for q in qs:
        if not 0 <= q <= 100:
            raise ValueError(f"q must be within [0, 100], got {q}")
    clusters = []
    for i, values in enumerate(values_by_cluster):
        arr = np.sort(np.asarray(values, dtype=float).reshape(-1))
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"cluster {i}: values must be finite")
        clusters.append(arr)
    clusters.sort(key=lambda arr: (arr.size, tuple(arr.tolist())))
    if not qs:
        return []
    if not clusters or sum(arr.size for arr in clusters) == 0:
        return [(None, None, None) for _ in qs]
    pooled = np.concatenate(clusters)
    values = np.percentile(pooled, qs, method="linear")
    weights = resample_counts(len(clusters), n_boot, seed)
    replicates = replicate_percentiles(clusters, weights, qs)
    out: list[Interval] = []
    for j, value in enumerate(values):
        lo, hi = _interval(replicates[:, j])
        out.append((float(value), lo, hi))
    return out


def replicate_percentiles(values_by_cluster: Sequence[np.ndarray], weights: np.ndarray,
                          qs: Sequence[float], *, chunk: int = CHUNK_SIZE) -> np.ndarray:
    """Percentiles of every bootstrap replicate, vectorised; shape (B, len(qs)).

    Replicate b is the multiset in which cluster c's values appear ``weights[b, c]``
    times; its q-th percentile is numpy's "linear" method on that multiset, computed
    without building it: with the pooled values sorted, the expanded sample's j-th
    order statistic is the first value whose running weight exceeds j, and the
    percentile interpolates between order statistics floor(h) and floor(h) + 1 at
    h = (n_b - 1) q / 100. Replicates with no value (they drew only empty clusters)
    are NaN. ``chunk`` (and :data:`MAX_CHUNK_ELEMENTS`) bound memory to about
    min(chunk x N, 2**18) elements per work array.
    """
    sizes = np.array([np.asarray(v).size for v in values_by_cluster], dtype=np.int64)
    weights = np.asarray(weights)
    if weights.ndim != 2 or weights.shape[1] != sizes.size:
        raise ValueError(f"weights must be (B, {sizes.size}), got {weights.shape}")
    qs = np.asarray(qs, dtype=float)
    out = np.full((weights.shape[0], qs.size), np.nan)
    if sizes.sum() == 0:
        return out
    pooled = np.concatenate([np.asarray(v, dtype=float).reshape(-1) for v in values_by_cluster])
    owner = np.repeat(np.arange(sizes.size), sizes)
    order = np.argsort(pooled, kind="stable")
    ordered, owner = pooled[order], owner[order]
    # Rows per pass so that each (rows x N) work array stays near 2**18 elements (2 MiB of
    # int64) however many values are pooled: peak memory flat in the run's length. Each
    # replicate row is computed on its own, so the result does not depend on the chunking.
    chunk = max(1, min(chunk, MAX_CHUNK_ELEMENTS // max(1, ordered.size)))
    for start in range(0, weights.shape[0], chunk):
        w = weights[start:start + chunk][:, owner]  # (b, N): copies of each sorted value
        running = np.cumsum(w, axis=1)
        total = running[:, -1]
        h = (total[:, None] - 1) * qs[None, :] / 100.0  # (b, Q)
        low = np.floor(h)
        frac = h - low
        # One searchsorted for every row at once: shift row i by i * (max total + 1) so the
        # flattened running counts stay sorted and each row's ranks land in its own row.
        rows = np.arange(w.shape[0])[:, None]
        shift = rows * (int(total.max()) + 1)
        flat = (running + shift).ravel()

        def order_stat(rank: np.ndarray) -> np.ndarray:
            # Index of the first value whose running count exceeds `rank`.
            idx = np.searchsorted(flat, rank + shift, side="right") - rows * ordered.size
            return ordered[np.clip(idx, 0, ordered.size - 1)]
        lo_val = order_stat(low)
        hi_val = order_stat(np.minimum(low + 1, (total - 1)[:, None]))
        value = lo_val + frac * (hi_val - lo_val)
        value[total == 0] = np.nan
        out[start:start + chunk] = value
    return out


def percentile_ci(values_by_cluster: Sequence[np.ndarray], q: float, *,
                  n_boot: int = DEFAULT_N_BOOT, seed: int = 0) -> Interval:
    """The q-th percentile (0..100) of pooled values, with its cluster-bootstrap interval.

    ``values_by_cluster``: one 1-D array per cluster (e.g. latencies in ms of one
    scenario's calls). value = ``np.percentile(concatenate(all), q, method="linear")``;
    replicate b pools the clusters drawn in row b of the same draw as the other
    functions (``idx[b]``), and a replicate that drew only empty clusters is dropped.
    Clusters are first sorted by (length, sorted values), so input order does not
    matter. Returns (None, None, None) when there is no value at all.
    Raises ValueError for q outside [0, 100] or non-finite values.
    """
    return percentiles_ci(values_by_cluster, [q], n_boot=n_boot, seed=seed)[0]

"""Which system is better: every pair of systems under test, paired, Holm-adjusted, grouped by letters.

For each metric of :data:`PAIRWISE_METRICS` and each pair of systems (controls apart), the
paired difference ``a - b`` is the difference of the two systems' bootstrap replicates drawn
from one shared count matrix over the same scenarios (cluster bootstrap, guide §7; see
:func:`conformance.scoring.drift.paired_suite`). Its two-sided bootstrap p-value is

    p = min(1, 2 * min(#{d* <= 0} + 1, #{d* >= 0} + 1) / (B + 1))

over the B finite replicates d* (the +1 keeps p above 0 with finitely many draws; Davison and
Hinkley 1997, §4.4). Each metric's family (every pair on that metric) is Holm-adjusted (Holm
1979: the i-th smallest of m is multiplied by m - i + 1, then made monotone), and a pair differs
when its adjusted p is below :data:`ALPHA`. One family per metric keeps DRIFT-C's and
accuracy's verdicts free of measured time (DRIFT-E rests on latency).

Systems are then grouped per metric by a compact letter display (insert-and-absorb, Piepho
2004): systems sharing a letter are not distinguishable at that level; letters run from the
group holding the best point estimate ("a") down.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["ALPHA", "PAIRWISE_METRICS", "bootstrap_p", "compact_letters", "compare_systems", "holm", "pairwise"]

ALPHA = 0.05
PAIRWISE_METRICS = ("drift_c", "drift_e", "accuracy")


def bootstrap_p(replicates: np.ndarray) -> float | None:
    """Two-sided bootstrap p-value of a difference being 0, from its replicates (B,); None when
    no replicate is finite."""
    reps = np.asarray(replicates, dtype=float)
    reps = reps[np.isfinite(reps)]
    if reps.size == 0:
        return None
    below, above = int(np.count_nonzero(reps <= 0)), int(np.count_nonzero(reps >= 0))
    return min(1.0, 2.0 * min(below + 1, above + 1) / (reps.size + 1))


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment of a family of p-values (None entries stay None and do not
    count towards the family's size m)."""
    known = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(known)
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(known):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def compact_letters(order: Sequence[str], differs: set[frozenset[str]]) -> dict[str, str]:
    """Letters per system, one letter per group; the groups are the maximal sets of systems with
    no differing pair among them, so systems sharing a letter are not distinguishable.

    ``order``: the systems, best point estimate first (letters are given in that order);
    ``differs``: the pairs that differ. Insert-and-absorb (Piepho 2004)."""
    groups: list[set[str]] = [set(order)]
    for pair in sorted(differs, key=lambda p: sorted(p)):
        a, b = sorted(pair)
        split: list[set[str]] = []
        for group in groups:
            if a in group and b in group:
                split += [group - {a}, group - {b}]
            else:
                split.append(group)
        # Absorb: drop empty groups and groups inside another.
        unique = [g for i, g in enumerate(split) if g and g not in split[:i]]
        groups = [g for g in unique if not any(g < other for other in unique)]
    rank = {s: i for i, s in enumerate(order)}
    groups.sort(key=lambda g: sorted(rank[s] for s in g))
    letters = {s: "" for s in order}
    for index, group in enumerate(groups):
        letter = chr(ord("a") + index) if index < 26 else f"[{index}]"
        for s in sorted(group, key=rank.__getitem__):
            letters[s] += letter
    return letters


def pairwise(replicates: Mapping[str, Mapping[str, tuple[float, np.ndarray]]], systems: Sequence[str],
             metrics: Sequence[str] = PAIRWISE_METRICS, alpha: float = ALPHA) -> dict:
    """The comparison of ``systems`` on ``metrics``.

    ``replicates[system][metric] = (full-sample value, replicates (B,))``, every system's drawn
    from the same count matrix (one run's suites). A metric a system lacks (n/a) leaves that
    system out of that metric's comparison.

    Returns ``{"alpha", "adjustment": "holm", "metrics": {metric: {"systems": [...best first],
    "values": {s: v}, "letters": {s: "ab"}, "pairs": [{"a", "b", "diff", "ci95", "p", "p_holm",
    "differs"}]}}}``; pairs list ``a`` as the one with the higher point estimate.
    """
    per_metric: dict[str, dict] = {}
    for metric in metrics:
        have = [s for s in systems if metric in replicates.get(s, {}) and np.isfinite(replicates[s][metric][0])]
        order = sorted(have, key=lambda s: (-replicates[s][metric][0], systems.index(s)))
        pairs = []
        for a, b in itertools.combinations(order, 2):
            (fa, ra), (fb, rb) = replicates[a][metric], replicates[b][metric]
            if ra.shape != rb.shape:
                raise ValueError(f"{metric}: {a} and {b} were not resampled with one count matrix")
            diff = ra - rb
            finite = diff[np.isfinite(diff)]
            ci = None if finite.size == 0 else [float(x) for x in np.percentile(finite, [2.5, 97.5])]
            pair = {"a": a, "b": b, "diff": float(fa - fb), "ci95": ci, "p": bootstrap_p(diff)}
            pairs.append(pair)
        per_metric[metric] = {"systems": order, "values": {s: float(replicates[s][metric][0]) for s in order},
                              "pairs": pairs}
    for metric, entry in per_metric.items():
        # One family per metric: DRIFT-E rests on measured time, so a shared family would let a
        # slow host move DRIFT-C's verdicts.
        for pair, p_holm in zip(entry["pairs"], holm([pair["p"] for pair in entry["pairs"]])):
            pair["p_holm"] = p_holm
            pair["differs"] = p_holm is not None and p_holm < alpha
        differs = {frozenset((p["a"], p["b"])) for p in entry["pairs"] if p["differs"]}
        entry["letters"] = compact_letters(entry["systems"], differs)
    return {"alpha": alpha, "adjustment": "holm", "metrics": per_metric}


def compare_systems(suites: Mapping[str, object], systems: Sequence[str]):
    """:class:`conformance.contract.result.Comparisons` of ``systems`` from their DRIFT suites
    (:class:`conformance.scoring.drift.SuiteResult`, one run, one count matrix); None with fewer
    than two systems or suites resampled over different scenarios."""
    from conformance.contract.result import Comparisons

    chosen = [s for s in systems if s in suites]
    if len(chosen) < 2 or len({suites[s].clusters for s in chosen}) != 1 or not suites[chosen[0]].clusters:
        return None
    return Comparisons(**pairwise({s: suites[s].replicates for s in chosen}, chosen))

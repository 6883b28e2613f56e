"""Metrics from per-probe rows and run records, each with a cluster-bootstrap interval.

Pure functions: rows and records in, ``{name: MetricValue}`` out. Counts come first
(per scenario: items that succeeded, items counted) and rates are derived from them;
every interval resamples scenarios (:mod:`conformance.scoring.bootstrap`, guide §7).
A metric that cannot be computed has ``value=None`` and a ``reason``; it is never
reported as 0 or 1 by default.

Only the scenarios that contribute at least one counted item to a metric are clusters
for that metric (a scenario without revision probes does not dilute the revision
interval).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from conformance.contract.result import MetricValue
from conformance.scoring.bootstrap import (
    DEFAULT_N_BOOT,
    bootstrap_sums,
    paired_diff_ci,
    percentiles_ci,
    ratio_ci,
)
from conformance.scoring.rows import ProbeRow

__all__ = [
    "FREE_FORM_REASON",
    "NO_PROVENANCE_REASON",
    "NO_REVISION_REASON",
    "LATENCY_QUANTILES",
    "score_system",
    "paired_vs",
    "infra_failures",
    "harmonic_mean",
]

FREE_FORM_REASON = "free-form probes need an answer model; accuracy not scored"
NO_PROVENANCE_REASON = "no provenance: recall not measurable"
NO_REVISION_REASON = "no revision probes"
_RECALL_UNMEASURABLE = ("recall not measurable: no probe with gold evidence has source ids "
                        "on every hit")
_NO_STALE = "no revision probe lists a stale answer in gold"

LATENCY_QUANTILES = {"p50": 50.0, "p95": 95.0, "p99": 99.0}


def infra_failures(records: Iterable[Mapping[str, Any]]) -> int:
    """Number of run records (store or probe) whose ``error`` is not null.

    These are infrastructure failures: excluded from every metric value, reported
    beside them so a run with dead calls cannot pass silently.
    """
    return sum(1 for record in records if record.get("error") is not None)


def harmonic_mean(u: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Elementwise harmonic mean ``2ud / (u + d)`` of two rates in [0, 1] (DRIFT §7.3).

    0 where either rate is 0 (so where both are); NaN where either input is NaN.
    Shapes broadcast; returns float64.
    """
    u, d = np.asarray(u, dtype=float), np.asarray(d, dtype=float)
    total = u + d
    with np.errstate(divide="ignore", invalid="ignore"):
        hm = np.where(total > 0, 2.0 * u * d / np.where(total > 0, total, 1.0), 0.0)
    return np.where(np.isnan(u) | np.isnan(d), np.nan, hm)


def _rate(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den != 0, num / np.where(den != 0, den, 1.0), np.nan)


def _undefined(reason: str, n: int = 0) -> MetricValue:
    return MetricValue(value=None, ci95=None, n=n, reason=reason)


ONE_SCENARIO = "one scenario: no interval"


def _metric(value: float | None, lo: float | None, hi: float | None, n: int,
            reason: str, clusters: int | None = None) -> MetricValue:
    """``clusters``: scenarios contributing items; with fewer than two the bootstrap has
    nothing to resample, so the interval is left out and ``ci_note`` says why."""
    if value is None:
        return _undefined(reason, n)
    if clusters is not None and clusters < 2:
        return MetricValue(value=value, ci95=None, n=n, ci_note=ONE_SCENARIO)
    ci = None if lo is None or hi is None else [lo, hi]
    return MetricValue(value=value, ci95=ci, n=n)


def _per_cluster(items: Iterable[tuple[str, Sequence[float]]], width: int) -> np.ndarray:
    """Sum item vectors per cluster: (C, width) in sorted cluster-id order."""
    sums: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(width))
    for cluster, values in items:
        sums[cluster] += np.asarray(values, dtype=float)
    if not sums:
        return np.zeros((0, width))
    return np.vstack([sums[key] for key in sorted(sums)])


def _mean_metric(rows: Sequence[ProbeRow], score: Callable[[ProbeRow], float | bool | None],
                 reason: str, *, n_boot: int, seed: int) -> MetricValue:
    """Mean of ``score(row)`` over rows where it is not None, clustered by scenario."""
    scored = [(row.scenario_id, float(s)) for row in rows if (s := score(row)) is not None]
    if not scored:
        return _undefined(reason)
    sums = _per_cluster(((c, (s, 1.0)) for c, s in scored), 2)
    value, lo, hi = ratio_ci(sums[:, 0], sums[:, 1], n_boot=n_boot, seed=seed)
    return _metric(value, lo, hi, len(scored), reason, sums.shape[0])


def _single_system(rows: Sequence[ProbeRow], records: Iterable[Mapping[str, Any]]) -> None:
    systems = {row.system for row in rows} | {r["system"] for r in records if "system" in r}
    if len(systems) > 1:
        raise ValueError(f"score one system at a time, got rows/records of {sorted(systems)}")


def _accuracy_reason(rows: Sequence[ProbeRow], missing: str) -> str:
    return FREE_FORM_REASON if rows else missing


def _latency(records: Iterable[Mapping[str, Any]], field: str, prefix: str, missing: str,
             *, n_boot: int, seed: int) -> dict[str, MetricValue]:
    by_scenario: dict[str, list[float]] = defaultdict(list)
    for record in records:
        if record.get("error") is None and record.get(field) is not None:
            by_scenario[record["scenario_id"]].append(float(record[field]))
    clusters = [np.array(by_scenario[key]) for key in sorted(by_scenario)]
    n = sum(len(v) for v in by_scenario.values())
    names = [f"{prefix}_{label}" for label in LATENCY_QUANTILES]
    if n == 0:
        return {name: _undefined(missing) for name in names}
    cis = percentiles_ci(clusters, list(LATENCY_QUANTILES.values()), n_boot=n_boot, seed=seed)
    out = {name: _metric(value, lo, hi, n, missing, len(by_scenario)) for name, (value, lo, hi) in zip(names, cis)}
    return out


def _revision_stat(sums: dict[str, np.ndarray]) -> np.ndarray:
    return harmonic_mean(_rate(sums["u_num"], sums["u_den"]), _rate(sums["d_num"], sums["d_den"]))


def _revision_accuracy(rows: Sequence[ProbeRow], update: MetricValue, deprecation: MetricValue,
                       *, n_boot: int, seed: int) -> MetricValue:
    counted = [r for r in rows if r.is_revision
               and (r.update_correct is not None or r.deprecated is not None)]
    for part in (update, deprecation):
        if part.value is None:
            return _undefined(part.reason or NO_REVISION_REASON, len(counted))
    sums = _per_cluster(
        ((r.scenario_id, (
            float(bool(r.update_correct)), float(r.update_correct is not None),
            float(bool(r.deprecated)), float(r.deprecated is not None),
        )) for r in counted), 4)
    per_cluster = {"u_num": sums[:, 0], "u_den": sums[:, 1], "d_num": sums[:, 2], "d_den": sums[:, 3]}
    value, lo, hi = bootstrap_sums(per_cluster, _revision_stat, n_boot=n_boot, seed=seed)
    return _metric(value, lo, hi, len(counted), NO_REVISION_REASON, sums.shape[0])


def score_system(rows: Sequence[ProbeRow], store_records: Iterable[Mapping[str, Any]],
                 probe_records: Iterable[Mapping[str, Any]], *, n_boot: int = DEFAULT_N_BOOT,
                 seed: int = 0) -> dict[str, MetricValue]:
    """All per-system metrics with 95% cluster-bootstrap intervals over scenarios.

    ``rows``: one system's :class:`ProbeRow` list; ``store_records``/``probe_records``:
    that system's run records (errored ones are skipped). Names returned:

    - ``accuracy``: share correct among non-abstention probes with a scored answer
      (the headline); ``abstention_accuracy``: the same over abstention probes;
      ``accuracy.<probe_type>``: every probe type present, abstention probes included.
    - ``recall_at_k`` (mean per-probe evidence coverage, 0..1) and
      ``recall_all_in_budget`` (share of probes whose whole evidence is in the budget),
      over probes where recall is measurable (guide §7); ``recall_any_at_k`` (share of
      probes with some evidence message in the top k) and ``recall_all_at_k`` (share with
      all of it). Evidence counts only where a hit carries it (docs/audit.md).
    - ``update_correctness``, ``deprecation_correctness`` over revision probes and
      ``revision_accuracy`` = their harmonic mean, 0 when either is 0 (DRIFT §7.3); its
      interval bootstraps the four per-scenario counts jointly.
    - ``read_latency_ms_p50/_p95/_p99`` (Retrieve, from probe records) and
      ``write_latency_ms_p50/_p95/_p99`` (Store, from store records), milliseconds,
      ``n`` = number of calls.

    ``n`` is the number of items counted. Raises ValueError when rows or records belong
    to more than one system.
    """
    probe_records, store_records = list(probe_records), list(store_records)
    _single_system(rows, [*probe_records, *store_records])
    boot = {"n_boot": n_boot, "seed": seed}
    out: dict[str, MetricValue] = {}

    headline = [r for r in rows if not r.abstention]
    out["accuracy"] = _mean_metric(headline, lambda r: r.correct,
                                   _accuracy_reason(headline, "no non-abstention probes"), **boot)
    abstaining = [r for r in rows if r.abstention]
    out["abstention_accuracy"] = _mean_metric(
        abstaining, lambda r: r.correct, _accuracy_reason(abstaining, "no abstention probes"), **boot)
    for probe_type in sorted({r.probe_type for r in rows}):
        of_type = [r for r in rows if r.probe_type == probe_type]
        out[f"accuracy.{probe_type}"] = _mean_metric(of_type, lambda r: r.correct,
                                                     FREE_FORM_REASON, **boot)

    declared = any(r.get("provenance") for r in probe_records if r.get("error") is None)
    recall_reason = ("no probes scored" if not rows
                     else _RECALL_UNMEASURABLE if declared else NO_PROVENANCE_REASON)
    out["recall_at_k"] = _mean_metric(rows, lambda r: r.recall_at_k, recall_reason, **boot)
    out["recall_all_in_budget"] = _mean_metric(rows, lambda r: r.recall_all_in_budget,
                                               recall_reason, **boot)
    out["recall_any_at_k"] = _mean_metric(rows, lambda r: r.recall_any_at_k, recall_reason, **boot)
    out["recall_all_at_k"] = _mean_metric(rows, lambda r: r.recall_all_at_k, recall_reason, **boot)

    revision = [r for r in rows if r.is_revision]
    update = _mean_metric(revision, lambda r: r.update_correct,
                          FREE_FORM_REASON if revision else NO_REVISION_REASON, **boot)
    deprecation = _mean_metric(revision, lambda r: r.deprecated,
                               _NO_STALE if revision else NO_REVISION_REASON, **boot)
    out["update_correctness"] = update
    out["deprecation_correctness"] = deprecation
    out["revision_accuracy"] = _revision_accuracy(revision, update, deprecation, **boot)

    out.update(_latency(probe_records, "read_latency_ms", "read_latency_ms",
                        "no successful probe records", **boot))
    out.update(_latency(store_records, "write_latency_ms", "write_latency_ms",
                        "no successful store records", **boot))
    return out


def _paired_mean(pairs: Sequence[tuple[ProbeRow, ProbeRow]],
                 score: Callable[[ProbeRow], float | bool | None], reason: str,
                 *, n_boot: int, seed: int) -> MetricValue:
    both = [(a, b) for a, b in pairs if score(a) is not None and score(b) is not None]
    if not both:
        return _undefined(reason)
    value, lo, hi = paired_diff_ci([a.scenario_id for a, _ in both],
                                   np.array([float(score(a)) for a, _ in both]),
                                   np.array([float(score(b)) for _, b in both]),
                                   n_boot=n_boot, seed=seed)
    return _metric(value, lo, hi, len(both), reason, len({a.scenario_id for a, _ in both}))


def _paired_revision_stat(sums: dict[str, np.ndarray]) -> np.ndarray:
    hm_a = harmonic_mean(_rate(sums["ua"], sums["u_den"]), _rate(sums["da"], sums["d_den"]))
    hm_b = harmonic_mean(_rate(sums["ub"], sums["u_den"]), _rate(sums["db"], sums["d_den"]))
    return hm_a - hm_b


def _paired_revision(pairs: Sequence[tuple[ProbeRow, ProbeRow]], *, n_boot: int,
                     seed: int) -> MetricValue:
    revision = [(a, b) for a, b in pairs if a.is_revision]
    if not revision:
        return _undefined(NO_REVISION_REASON)
    items = []
    for a, b in revision:
        u_ok = a.update_correct is not None and b.update_correct is not None
        d_ok = a.deprecated is not None and b.deprecated is not None
        if u_ok or d_ok:
            items.append((a.scenario_id, (
                float(u_ok and bool(a.update_correct)), float(u_ok and bool(b.update_correct)),
                float(u_ok),
                float(d_ok and bool(a.deprecated)), float(d_ok and bool(b.deprecated)),
                float(d_ok),
            )))
    sums = _per_cluster(items, 6)
    if sums.shape[0] == 0 or sums[:, 2].sum() == 0 or sums[:, 5].sum() == 0:
        return _undefined("revision accuracy not measurable for both systems on common probes",
                          len(items))
    per_cluster = {"ua": sums[:, 0], "ub": sums[:, 1], "u_den": sums[:, 2],
                   "da": sums[:, 3], "db": sums[:, 4], "d_den": sums[:, 5]}
    value, lo, hi = bootstrap_sums(per_cluster, _paired_revision_stat, n_boot=n_boot, seed=seed)
    return _metric(value, lo, hi, len(items), NO_REVISION_REASON, sums.shape[0])


def paired_vs(rows_sys: Sequence[ProbeRow], rows_base: Sequence[ProbeRow], *,
              n_boot: int = DEFAULT_N_BOOT, seed: int = 0) -> dict[str, MetricValue]:
    """Paired differences (system minus base) over the probes both answered (guide §7).

    Probes are matched on (scenario id, probe id); the interval resamples scenarios.

    - ``accuracy``: non-abstention probes where both answers are scored; value =
      mean(correct_sys - correct_base) over them, in [-1, 1].
    - ``recall_at_k``: probes where both systems' recall@k is measurable.
    - ``revision_accuracy``: harmonic mean of update and deprecation correctness
      (DRIFT §7.3) of the system minus that of the base, each component over the
      revision probes where both systems have that component.

    ``n`` is the number of common probes counted. Raises ValueError when a side mixes
    systems.
    """
    for side in (rows_sys, rows_base):
        _single_system(side, [])
    base = {(r.scenario_id, r.probe_id): r for r in rows_base}
    pairs = [(r, base[key]) for r in sorted(rows_sys, key=lambda r: (r.scenario_id, r.probe_id))
             if (key := (r.scenario_id, r.probe_id)) in base]
    boot = {"n_boot": n_boot, "seed": seed}
    headline = [(a, b) for a, b in pairs if not a.abstention]
    return {
        "accuracy": _paired_mean(headline, lambda r: r.correct,
                                 FREE_FORM_REASON if headline else "no common non-abstention probes",
                                 **boot),
        "recall_at_k": _paired_mean(pairs, lambda r: r.recall_at_k,
                                    "no common probes where both systems' recall is measurable",
                                    **boot),
        "revision_accuracy": _paired_revision(pairs, **boot),
    }

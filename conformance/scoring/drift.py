"""The DRIFT metric suite (DRIFT §7.1-§7.9), from counts, with joint cluster-bootstrap intervals.

Every metric here is a function of per-scenario quantities (sums of counts, tokens, or
latency samples). One count matrix ``W`` (B replicates x C scenarios, in sorted scenario
id order, :func:`conformance.scoring.bootstrap.resample_counts`) is drawn per system and
shared by all its metrics, so a composite (DRIFT-C, DRIFT-E) and its parts are resampled
together. Intervals are the 2.5th/97.5th percentiles of the finite replicates.

Decisions where the spec is silent or a formula is undefined (each is also written
next to its formula below, and in the README):

- **MVOT (§7.1)** is over *checkpoints*: E(t) is the error rate over the checkpoint's
  non-abstention probes with a scored answer (canaries excluded: they are privacy, §7.5).
  A checkpoint where the amnesiac (``none``) makes no error has an undefined term and is
  left out of T (the count left out is reported); no defined checkpoint -> n/a.
  C_mem / C_base are tokens stored per session, read from Snapshot with tiktoken, summed
  over the same checkpoints for the system and the reference compressor. The efficiency
  term ``C_base / C_mem`` is **capped at 1**, so MVOT <= 1 holds (a memory smaller than
  the reference earns no bonus beyond the maximum); a system storing nothing has
  efficiency 1. No Snapshot -> storage unknown -> MVOT n/a (``error_reduction``, the
  uncapped-by-storage part, is still reported).
- **Selectivity (§7.2)**: soft-signal sessions count as signal. "Stored" means a Snapshot
  item cites the session (a message of it or the session id); without Snapshot, the
  marker probe (the runner retrieves each session's innocuous marker; a hit containing
  it means stored, and so does a session the state audit's disguised probe finds),
  labelled in ``measurement``; then no noise session counts as dropped (markers and audit
  probes show what Retrieve returns, which a memory that tells them apart can withhold: at
  most 0.5, as under a failed audit). Every checkpoint judges the sessions streamed by
  then and the counts are pooled over the checkpoints (per horizon, that horizon's), so
  TNR and TPR are means over checkpoints weighted by the sessions each judges: a memory
  is judged on what it held when it answered, not only at the end
  (``bench/attacks/final_forget``).
- **Action Alignment (§7.4)** is hermetic: per multiple-choice action probe, +1 when the
  system chose right and the amnesiac wrong, -1 for the reverse, 0 otherwise; the mean
  m in [-1, 1] is reported as (m + 1) / 2.
- **Privacy (§7.5)** = 1 - share of canary probes whose answer names the owner's
  private value. Multi-peer only; never part of DRIFT-C.
- **DRIFT-C (§7.6)**: per horizon h, the §7.6 weights over (MVOT_h, Selectivity_h,
  Revision_h, Action_h); a part undefined for the corpus at h (no revision or action
  probes there) is left out and the other weights renormalised (listed in
  ``measurement``); then the 0.20/0.30/0.50 horizon weights, renormalised over the
  horizons the run has checkpoints in. n/a when MVOT or Selectivity is n/a.
- **TES (§7.7)**: TC = (W + S_eff + R) / sessions per scenario pooled, where W is the LLM
  tokens the adapter reports in Store usage and in each checkpoint's Flush usage (a memory
  that buffers at Store and extracts at Flush pays there), R those in Retrieve usage
  (R x Q_rate summed over queries is total read tokens per session) and S_eff = n_final x sum_t S(t) / sum_t n(t)
  over the scenario's checkpoints (Snapshot tokens S(t), sessions streamed n(t)): MVOT's C
  times the sessions, so TES and MVOT charge the same storage, what the system held when it
  answered (S_final let a memory forget just before the last Snapshot). Equal to S_final
  when storage grows with the sessions. TES = (MVOT / MVOT_ref) / (TC / TC_ref). n/a when
  MVOT_ref <= 0, TC = 0 or TC_ref = 0.
- **DRIFT-E (§7.9)** = 0.55 x clip(TES, 0, 1) + 0.45 x LPS. TES is unbounded above; it is
  clipped to [0, 1] as LPS's parts are capped at their reference (a system at least as
  token-efficient as the reference compressor gets full marks; one worse than the
  amnesiac gets 0).
- **LPS (§7.8)** = 0.40 min(1, 50 ms / RL_p99) + 0.60 min(1, 200 ms / TTFRT_p99). Without an
  answer model TTFRT = Retrieve latency + the hermetic reader's latency per probe.
  **Dialectic speed** per probe = TTFRT + the latency of the Store that preceded the
  checkpoint (retrieve -> incorporate -> generate -> store); p99 reported.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from conformance.contract.gold import GoldFile
from conformance.contract.result import CurvePoint, MetricValue, Series
from conformance.scoring.bootstrap import DEFAULT_N_BOOT, replicate_percentiles, resample_counts
from conformance.scoring.metrics import harmonic_mean
from conformance.scoring.rows import ProbeRow

__all__ = [
    "AMNESIAC",
    "DRIFT_C_WEIGHTS",
    "HORIZON_WEIGHTS",
    "DRIFT_E_WEIGHTS",
    "LPS_WEIGHTS",
    "RL_REF_MS",
    "TTFRT_REF_MS",
    "REFERENCE",
    "SuiteResult",
    "drift_suite",
]

AMNESIAC = "none"
REFERENCE = "reference-compressor"
HORIZONS = ("short", "medium", "long")
#: DRIFT §7.6: weights of (MVOT, Selectivity, Revision Accuracy, Action Alignment) per horizon.
DRIFT_C_WEIGHTS = {
    "short": {"mvot": 0.35, "selectivity": 0.25, "revision_accuracy": 0.20, "action_alignment": 0.20},
    "medium": {"mvot": 0.40, "selectivity": 0.25, "revision_accuracy": 0.20, "action_alignment": 0.15},
    "long": {"mvot": 0.45, "selectivity": 0.20, "revision_accuracy": 0.20, "action_alignment": 0.15},
}
#: DRIFT §7.6: horizon weights in the aggregate.
HORIZON_WEIGHTS = {"short": 0.20, "medium": 0.30, "long": 0.50}
#: DRIFT §7.9.
DRIFT_E_WEIGHTS = {"tes": 0.55, "lps": 0.45}
#: DRIFT §7.8: reference targets and weights.
RL_REF_MS, TTFRT_REF_MS = 50.0, 200.0
LPS_WEIGHTS = {"read": 0.40, "ttfrt": 0.60}
QUANTILES = tuple(float(q) for q in range(101))

NO_SNAPSHOT = "storage unknown: the adapter has no Snapshot, so the storage term of DRIFT §7.1 cannot be computed"
NO_REFERENCE = f"the reference compressor ({REFERENCE}) is not in this run: storage cannot be normalised"
NO_AMNESIAC = f"the amnesiac control ({AMNESIAC}) is not in this run"


@dataclass
class SuiteResult:
    """Metrics, how they were measured, plot series and notes for one system."""

    metrics: dict[str, MetricValue] = field(default_factory=dict)
    measurement: dict[str, str] = field(default_factory=dict)
    series: Series = field(default_factory=Series)
    notes: list[str] = field(default_factory=list)
    clusters: tuple[str, ...] = ()
    """The scenarios resampled (sorted); two suites with the same clusters, ``n_boot`` and
    seed share one count matrix, so their replicates can be subtracted (paired)."""
    replicates: dict[str, tuple[float, np.ndarray]] = field(default_factory=dict)
    """Metric name -> (full-sample value, replicate values (B,)), for paired differences."""


# ------------------------------------------------------------------ the shared resampler

class _Boot:
    """Per-scenario sums and latency samples of one system, resampled with one ``W``."""

    def __init__(self, clusters: Sequence[str], n_boot: int, seed: int):
        self.clusters = sorted(set(clusters))
        self.pos = {c: i for i, c in enumerate(self.clusters)}
        self.n_boot = n_boot
        self.weights = resample_counts(len(self.clusters), n_boot, seed) if self.clusters else None
        self._cols: dict[str, np.ndarray] = {}
        self.tes: tuple[np.ndarray, np.ndarray] | None = None
        self.lps: tuple[np.ndarray, np.ndarray] | None = None
        self.kept: dict[str, tuple[float, np.ndarray]] = {}

    def add(self, name: str, cluster: str, value: float) -> None:
        col = self._cols.setdefault(name, np.zeros(len(self.clusters)))
        col[self.pos[cluster]] += float(value)

    def ensure(self, *names: str) -> None:
        for name in names:
            self._cols.setdefault(name, np.zeros(len(self.clusters)))

    def sums(self, names: Sequence[str]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """(full-sample sums, each shape (1,); replicate sums, each shape (B,))."""
        self.ensure(*names)
        full = {n: np.array([self._cols[n].sum()]) for n in names}
        reps = {n: self.weights @ self._cols[n] for n in names}
        return full, reps

    def contributing(self, names: Sequence[str]) -> int:
        """How many scenarios have a non-zero entry in any of ``names``."""
        self.ensure(*names)
        return int(np.count_nonzero(np.any(np.vstack([self._cols[n] != 0 for n in names]), axis=0)))

    def value(self, key: str, names: Sequence[str], stat: Callable, n: int, reason: str) -> MetricValue:
        """Evaluate ``stat`` on the full and replicate sums of ``names``; keep the replicates."""
        full, reps = self.sums(names)
        return self.record(key, stat(full), stat(reps), n, reason, self.contributing(names))

    def record(self, key: str, full, reps, n: int, reason: str, clusters: int) -> MetricValue:
        """Keep (full value, replicates) under ``key`` and build its MetricValue."""
        f, r = np.asarray(full, dtype=float).reshape(-1), np.asarray(reps, dtype=float).reshape(-1)
        self.kept[key] = (float(f[0]), r)
        return _metric_value(f, r, n, reason, clusters)

    def percentiles(self, samples: Mapping[str, Sequence[float]], qs: Sequence[float]
                    ) -> tuple[np.ndarray, np.ndarray]:
        """(full-sample percentiles (Q,), replicate percentiles (B, Q)) of pooled samples."""
        by_cluster = [np.asarray(samples.get(c, ()), dtype=float) for c in self.clusters]
        pooled = np.concatenate(by_cluster) if by_cluster else np.zeros(0)
        if pooled.size == 0:
            return np.full(len(qs), np.nan), np.full((self.n_boot, len(qs)), np.nan)
        full = np.percentile(pooled, list(qs), method="linear")
        return full, replicate_percentiles(by_cluster, self.weights, qs)


def _interval(reps: np.ndarray) -> tuple[list[float] | None, int]:
    kept = np.asarray(reps, dtype=float)
    kept = kept[np.isfinite(kept)]
    if kept.size == 0:
        return None, 0
    lo, hi = np.percentile(kept, [2.5, 97.5], method="linear")
    return [float(lo), float(hi)], int(kept.size)


def _metric_value(full, reps, n: int, reason: str, clusters: int) -> MetricValue:
    """A MetricValue from full-sample and replicate values; no interval from one scenario.

    ``clusters``: scenarios that contribute items to this metric. With fewer than two the
    bootstrap has nothing to resample and the interval is left out (``ci_note`` says so);
    when some replicates are undefined the interval is over the rest, and ``ci_note``
    gives the count.
    """
    value = float(np.asarray(full, dtype=float).reshape(-1)[0])
    if not np.isfinite(value):
        return MetricValue(value=None, ci95=None, n=n, reason=reason)
    if clusters < 2:
        return MetricValue(value=value, ci95=None, n=n, ci_note="one scenario: no interval")
    ci, kept = _interval(reps)
    total = int(np.asarray(reps).size)
    note = (None if kept == total else
            f"over {kept:,} of {total:,} resamples (the others drew no scenario where it is defined)")
    return MetricValue(value=value, ci95=ci, n=n, ci_note=note)


def _na(reason: str, n: int = 0) -> MetricValue:
    return MetricValue(value=None, ci95=None, n=n, reason=reason)


def _div(num, den):
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den != 0, num / np.where(den != 0, den, 1.0), np.nan)


# ------------------------------------------------------------------ inputs per system

@dataclass
class _Checkpoint:
    scenario: str
    checkpoint_id: str
    horizon: str
    after_session: int
    wrong: int = 0
    scored: int = 0


def _checkpoint_errors(rows: Sequence[ProbeRow]) -> dict[tuple[str, str], tuple[int, int, str]]:
    """(scenario, checkpoint) -> (wrong, scored, horizon) over MVOT's probe set."""
    out: dict[tuple[str, str], list] = {}
    for r in rows:
        if r.abstention or r.correct is None or r.probe_type == "canary":
            continue
        cell = out.setdefault((r.scenario_id, r.checkpoint_id), [0, 0, r.horizon or ""])
        cell[0] += 0 if r.correct else 1
        cell[1] += 1
    return {k: (v[0], v[1], v[2]) for k, v in out.items()}


def _states(records: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], Mapping[str, Any]]:
    return {(r["scenario_id"], r["checkpoint_id"]): r for r in records
            if r.get("kind") == "state" and r.get("error") is None}


def _usage_tokens(record: Mapping[str, Any], field: str = "usage") -> int:
    usage = record.get(field) or {}
    return int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))


def _flush_tokens(record: Mapping[str, Any]) -> int:
    """LLM tokens of the checkpoint's Flush (a state record's ``flush_usage``): write-side, part of W."""
    return _usage_tokens(record, "flush_usage")


def _store_order(records: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    out: dict[str, list] = defaultdict(list)
    for r in records:
        if r.get("kind") == "store":
            out[r["scenario_id"]].append(r)
    return out


# ------------------------------------------------------------------ the suite

def drift_suite(system: str, rows: Mapping[str, Sequence[ProbeRow]], records: Mapping[str, Sequence[Mapping]],
                gold: Mapping[str, GoldFile], paradigm_of: Mapping[str, str], *, answer_model: bool = False,
                n_boot: int = DEFAULT_N_BOOT, seed: int = 0) -> SuiteResult:
    """DRIFT §7 metrics of ``system`` with 95% cluster-bootstrap intervals over scenarios.

    ``rows``/``records``: every system of the run (label -> its probe rows / its run
    records of one repeat: ``store``, ``probe`` and ``state`` records); the amnesiac
    (``none``) and the reference compressor are read from them. ``gold``: scenario id ->
    gold (session tiers). ``paradigm_of``: scenario id -> paradigm.

    Returns names ``mvot``, ``error_reduction``, ``selectivity``, ``revision_accuracy``,
    ``action_alignment``, ``privacy_score``, ``drift_c``, ``tes``, ``lps``, ``drift_e``
    (each also per horizon where DRIFT defines it, ``<name>.<horizon>``; the horizon of a
    probe is the phase its checkpoint closes), ``storage_tokens_per_session``,
    ``token_cost_per_session`` (tokens), ``ttfrt_ms_p50/_p95/_p99``,
    ``dialectic_speed_ms`` (p99, plus ``_p50``), ``accuracy_by_paradigm.<p>`` and
    ``accuracy_by_horizon.<h>``. Undefined values are n/a with a reason, never 0 or 1 by
    default. Units: tokens (o200k unless configured), milliseconds.
    """
    own_rows = list(rows.get(system, ()))
    own_records = list(records.get(system, ()))
    scenarios = sorted({r.scenario_id for r in own_rows}
                       | {r["scenario_id"] for r in own_records if "scenario_id" in r})
    out = SuiteResult(clusters=tuple(scenarios))
    if not scenarios:
        return out
    boot = _Boot(scenarios, n_boot, seed)
    horizons = [h for h in HORIZONS if any(r.horizon == h for r in own_rows)]
    free_form = bool(own_rows) and all(r.correct is None for r in own_rows)

    _breakdowns(out, own_rows, paradigm_of, boot)
    storage = _mvot(out, own_rows, own_records, rows, records, boot, horizons, free_form)
    _selectivity(out, own_records, gold, boot, horizons)
    _revision(out, own_rows, boot, horizons)
    _action_alignment(out, own_rows, rows, boot, horizons)
    _privacy(out, own_rows, boot)
    _drift_c(out, boot, horizons)
    _tes(out, own_records, rows, records, boot, storage)
    _latency(out, own_records, boot, answer_model)
    _drift_e(out, boot)
    out.series.token_cost_curve = _token_cost_curve(own_rows, own_records, rows, records)
    out.replicates = dict(boot.kept)
    return out


#: The DRIFT metrics a paired difference or a noise floor is reported for.
PAIRED_METRICS = ("mvot", "selectivity", "action_alignment", "drift_c", "tes", "lps", "drift_e",
                  "dialectic_speed_ms", "ttfrt_ms_p99")


def paired_suite(a: SuiteResult, b: SuiteResult, names: Sequence[str] = PAIRED_METRICS) -> dict[str, MetricValue]:
    """Paired differences ``a - b`` of DRIFT metrics, from the shared count matrix.

    Two suites computed over the same scenarios with the same ``n_boot`` and seed drew the
    same count matrix, so replicate b of ``a`` and of ``b`` resampled the same scenarios;
    the difference of their replicates is the paired bootstrap of the difference. Metrics
    undefined on either side are left out; different scenario sets give {}.
    """
    if a.clusters != b.clusters or not a.clusters:
        return {}
    out = {}
    for name in names:
        if name not in a.replicates or name not in b.replicates:
            continue
        (fa, ra), (fb, rb) = a.replicates[name], b.replicates[name]
        if not (np.isfinite(fa) and np.isfinite(fb)) or ra.shape != rb.shape:
            continue
        ma, mb = a.metrics.get(name), b.metrics.get(name)
        n = min(ma.n, mb.n) if ma is not None and mb is not None else 0
        # A side without an interval (one scenario behind it) gives the difference none either.
        has_ci = ma is not None and mb is not None and ma.ci95 is not None and mb.ci95 is not None
        out[name] = _metric_value(np.array([fa - fb]), ra - rb, n, "undefined", len(a.clusters) if has_ci else 1)
    return out


def _breakdowns(out: SuiteResult, rows: Sequence[ProbeRow], paradigm_of: Mapping[str, str], boot: _Boot) -> None:
    headline = [r for r in rows if not r.abstention and r.correct is not None]
    # Headline accuracy's replicates on the shared count matrix, for the pairwise comparison
    # (the published accuracy metric itself comes from score_system: same value).
    boot.ensure("accuracy.ok", "accuracy.n")
    for r in headline:
        boot.add("accuracy.ok", r.scenario_id, float(r.correct))
        boot.add("accuracy.n", r.scenario_id, 1.0)
    boot.value("accuracy", ["accuracy.ok", "accuracy.n"], lambda s: _div(s["accuracy.ok"], s["accuracy.n"]),
               len(headline), "no scored probes")
    for label, key in (("accuracy_by_paradigm", lambda r: paradigm_of.get(r.scenario_id)),
                       ("accuracy_by_horizon", lambda r: r.horizon)):
        groups = sorted({k for r in headline if (k := key(r))})
        for group in groups:
            num, den = f"{label}.{group}.ok", f"{label}.{group}.n"
            boot.ensure(num, den)
            n = 0
            for r in headline:
                if key(r) == group:
                    boot.add(num, r.scenario_id, float(r.correct))
                    boot.add(den, r.scenario_id, 1.0)
                    n += 1
            out.metrics[f"{label}.{group}"] = boot.value(f"{label}.{group}", [num, den],
                                                         lambda s, a=num, b=den: _div(s[a], s[b]), n,
                                                         "no scored probes")


# ------------------------------------------------------------------ §7.1 MVOT

def _efficiency(s_sys, s_ref):
    """C_base / C_mem capped at 1 (so MVOT <= 1); storing nothing costs nothing (1)."""
    s_sys, s_ref = np.asarray(s_sys, dtype=float), np.asarray(s_ref, dtype=float)
    return np.where(s_sys > 0, np.minimum(1.0, _div(s_ref, np.where(s_sys > 0, s_sys, 1.0))), 1.0)


def _mvot_value(reduction, s_sys, s_ref):
    """MVOT from the error reduction and storage sums (DRIFT §7.1, decisions in the module doc).

    The efficiency term scales a gain only: a memory worse than the amnesiac keeps its
    whole (negative) reduction, so storing more can never make a loss look smaller.
    """
    reduction = np.asarray(reduction, dtype=float)
    return np.where(reduction > 0, reduction * _efficiency(s_sys, s_ref), reduction)


class _MvotColumns(NamedTuple):
    """Count-matrix columns of one MVOT (``tag``: ``mvot`` or ``mvot.<horizon>``), per scenario."""

    term: str
    """Sum of the checkpoint terms (E_amn - E_mem) / E_amn."""
    checkpoints: str
    """T: how many terms."""
    storage: str
    """Snapshot tokens of the system over the same checkpoints."""
    reference_storage: str
    """Snapshot tokens of the reference compressor over them."""

    @classmethod
    def of(cls, tag: str) -> "_MvotColumns":
        return cls(f"{tag}.term", f"{tag}.T", f"{tag}.S", f"{tag}.Sref")


def _mvot_stat(cols: _MvotColumns) -> Callable:
    def stat(sums: Mapping[str, np.ndarray]) -> np.ndarray:
        return _mvot_value(_div(sums[cols.term], sums[cols.checkpoints]), sums[cols.storage],
                           sums[cols.reference_storage])
    return stat


def _terms(mine: Mapping[tuple[str, str], tuple], amn: Mapping[tuple[str, str], tuple],
           keys: Sequence[tuple[str, str]]) -> tuple[list[tuple[str, float]], int]:
    """Per checkpoint (E_amn - E_mem) / E_amn, and how many checkpoints had E_amn = 0 (undefined)."""
    terms, skipped = [], 0
    for key in keys:
        wrong, scored, _ = mine[key]
        if key not in amn or amn[key][1] == 0 or scored == 0:
            continue
        e_amn = amn[key][0] / amn[key][1]
        if e_amn == 0:
            skipped += 1  # the term is undefined: left out of T, never counted as 0 or 1
            continue
        terms.append((key[0], (e_amn - wrong / scored) / e_amn))
    return terms, skipped


def _mvot(out: SuiteResult, own_rows, own_records, rows, records, boot: _Boot, horizons: list[str],
          free_form: bool) -> dict:
    """MVOT (DRIFT §7.1) overall and per horizon; returns the storage facts TES needs.

    MVOT = [sum_t (E_amn(t) - E_mem(t)) / E_amn(t)] / T x min(1, C_base / C_mem), where C is
    Snapshot tokens per session summed over the same scored checkpoints t for the system
    and the reference compressor; both streamed the same sessions, so C_base / C_mem =
    sum_t S_ref(t) / sum_t S_mem(t).
    """
    states, ref_states = _states(own_records), _states(records.get(REFERENCE, ()))
    has_storage = bool(states) and all(s.get("storage_tokens") is not None for s in states.values())
    has_ref = bool(ref_states) and all(s.get("storage_tokens") is not None for s in ref_states.values())
    facts: dict[str, Any] = {"stat": None, "columns": None, "defined": False, "has_storage": has_storage}
    names_all = ("mvot", "error_reduction", *(f"mvot.{h}" for h in horizons))
    if free_form:
        for name in names_all:
            out.metrics[name] = _na("free-form probes have no scored answers (they need an answer model): "
                                    "error rates, and so MVOT, are undefined")
        return facts
    if AMNESIAC not in rows:
        for name in names_all:
            out.metrics[name] = _na(NO_AMNESIAC)
        return facts
    mine, amn = _checkpoint_errors(own_rows), _checkpoint_errors(rows[AMNESIAC])

    for horizon in (None, *horizons):
        tag = "mvot" if horizon is None else f"mvot.{horizon}"
        keys = sorted(k for k, v in mine.items() if horizon is None or v[2] == horizon)
        terms, skipped = _terms(mine, amn, keys)
        cols = _MvotColumns.of(tag)
        boot.ensure(*cols)
        for scenario, term in terms:
            boot.add(cols.term, scenario, term)
            boot.add(cols.checkpoints, scenario, 1.0)
        for key in keys:
            if key in states and states[key].get("storage_tokens") is not None:
                boot.add(cols.storage, key[0], float(states[key]["storage_tokens"]))
            if key in ref_states and ref_states[key].get("storage_tokens") is not None:
                boot.add(cols.reference_storage, key[0], float(ref_states[key]["storage_tokens"]))
        if horizon is None:
            out.metrics["error_reduction"] = boot.value("error_reduction", (cols.term, cols.checkpoints),
                                                        lambda s, c=cols: _div(s[c.term], s[c.checkpoints]),
                                                        len(terms), "no checkpoint where the amnesiac errs")
            if skipped:
                out.measurement["mvot"] = (f"{skipped} checkpoints where the amnesiac made no error are left out of "
                                           f"T (their term is undefined)")
        if not terms:
            out.metrics[tag] = _na("no checkpoint where the amnesiac errs: every term is undefined")
        elif not has_storage:
            out.metrics[tag] = _na(NO_SNAPSHOT, len(terms))
        elif not has_ref:
            out.metrics[tag] = _na(NO_REFERENCE, len(terms))
        else:
            out.metrics[tag] = boot.value(tag, cols, _mvot_stat(cols), len(terms), "undefined")
            if horizon is None:
                facts.update(stat=_mvot_stat(cols), columns=cols, defined=True)
    return facts


# ------------------------------------------------------------------ §7.2 Selectivity

class _SelectivityColumns(NamedTuple):
    """Count-matrix columns of one Selectivity (``selectivity`` or ``selectivity.<horizon>``)."""

    noise_dropped: str
    """Noise sessions not stored (true negatives)."""
    noise: str
    signal_stored: str
    """Signal sessions stored (true positives)."""
    signal: str

    @classmethod
    def of(cls, tag: str) -> "_SelectivityColumns":
        return cls(f"{tag}.tn", f"{tag}.noise", f"{tag}.tp", f"{tag}.signal")


def _selectivity_value(s, cols: _SelectivityColumns):
    return (_div(s[cols.noise_dropped], s[cols.noise]) + _div(s[cols.signal_stored], s[cols.signal])) / 2.0


def _selectivity(out: SuiteResult, own_records, gold: Mapping[str, GoldFile], boot: _Boot,
                 horizons: list[str]) -> None:
    """Selectivity = (TNR_noise + (1 - FNR_signal)) / 2 (DRIFT §7.2); soft counts as signal.

    Every checkpoint judges the sessions streamed by then, and the counts are pooled over the
    checkpoints (per horizon, over that horizon's): TNR and TPR are means over checkpoints
    weighted by the sessions each judges, as MVOT's C pools storage. A memory is judged on what it
    held when it answered, so forgetting right before the last checkpoint earns only that one's
    share (``bench/attacks/final_forget``).
    """
    states = [r for r in own_records if r.get("kind") == "state" and r.get("error") is None]
    order = {s: [r["session_id"] for r in recs] for s, recs in _store_order(own_records).items()}
    methods = {r.get("method") for r in states}
    all_names = ("selectivity", *(f"selectivity.{h}" for h in horizons))
    if not any(gold.get(s) and gold[s].session_tiers for s in order):
        for name in all_names:
            out.metrics[name] = _na("the corpus gives no session tiers (imported data): selectivity undefined")
        return
    if not states or None in methods:
        for name in all_names:
            out.metrics[name] = _na("no Snapshot and no session markers: which sessions are stored is unknown")
        return
    out.measurement["selectivity"] = _selectivity_measurement(methods)
    uncited = sum(1 for r in states if (r.get("audit") or {}).get("held_uncited"))
    if uncited:
        out.measurement["selectivity"] += (
            f"; at {uncited} of {len(states)} checkpoints the Snapshot held, in items not citing them, sessions "
            "Retrieve showed by content alone, so no noise session counts as dropped there (docs/audit.md)")
    for horizon in (None, *horizons):
        tag = "selectivity" if horizon is None else f"selectivity.{horizon}"
        cols = _SelectivityColumns.of(tag)
        boot.ensure(*cols)
        n = 0
        for state in states:
            if horizon is None or state.get("horizon") == horizon:
                n += _judge_checkpoint(boot, cols, state, gold, order)
        out.metrics[tag] = boot.value(tag, cols, lambda s, c=cols: _selectivity_value(s, c), n,
                                      "needs both noise and signal sessions")


def _selectivity_measurement(methods: set) -> str:
    if methods == {"snapshot"}:
        return "snapshot provenance"
    if methods == {"audit"}:
        return ("state audit (the Snapshot failed it): over the sessions the audit probed, a signal session "
                "counts as stored when Retrieve of its sampled sentence brings its content back, and no noise "
                "session counts as dropped (a failed audit cannot establish forgetting)")
    return ("marker probing (adapter has no Snapshot): a session counts as stored when Retrieve of its marker "
            "returns it, or the state audit's question about one of its messages (asked among the real probes) "
            "brings it back; no noise session counts as dropped (Retrieve can withhold what a memory keeps from "
            "probes it tells apart, so it never establishes forgetting)")


def _judge_checkpoint(boot: _Boot, cols: _SelectivityColumns, state: Mapping, gold: Mapping[str, GoldFile],
                      order: Mapping[str, list[str]]) -> int:
    """Add one checkpoint's noise / signal counts over the sessions streamed by then; returns how many."""
    scenario = state["scenario_id"]
    tiers = gold[scenario].session_tiers if scenario in gold else {}
    stored = set(state.get("stored_sessions") or ())
    # Under a failed state audit only the sessions its probes asked about are known.
    audited = set(state["audited_sessions"]) if state.get("method") == "audit" else None
    # Only a Snapshot that passed the audit establishes what was dropped: the audit's probes and the
    # markers show what Retrieve returns, which a memory can withhold (at most what storing
    # everything gets, 0.5).
    # A Snapshot seen holding content it does not cite (``held_uncited``, sticky per scenario) may hold
    # any session so: it no longer establishes which noise sessions are gone.
    forgetting = state.get("method") == "snapshot" and not (state.get("audit") or {}).get("held_uncited")
    n = 0
    for session_id in order.get(scenario, [])[: state["sessions_streamed"]]:
        tier = tiers.get(session_id)
        if tier is None or (audited is not None and session_id not in audited):
            continue
        n += 1
        if tier == "noise":
            boot.add(cols.noise, scenario, 1.0)
            boot.add(cols.noise_dropped, scenario, float(forgetting and session_id not in stored))
        else:
            boot.add(cols.signal, scenario, 1.0)
            boot.add(cols.signal_stored, scenario, float(session_id in stored))
    return n


# ------------------------------------------------------------------ §7.3

class _RevisionColumns(NamedTuple):
    """Count-matrix columns of one Revision Accuracy (``revision_accuracy[.<horizon>]``)."""

    updates_correct: str
    updates: str
    deprecations_correct: str
    deprecations: str

    @classmethod
    def of(cls, tag: str) -> "_RevisionColumns":
        return cls(f"{tag}.u", f"{tag}.un", f"{tag}.d", f"{tag}.dn")


def _revision_value(s, cols: _RevisionColumns):
    return harmonic_mean(_div(s[cols.updates_correct], s[cols.updates]),
                         _div(s[cols.deprecations_correct], s[cols.deprecations]))


def _revision(out: SuiteResult, rows: Sequence[ProbeRow], boot: _Boot, horizons: list[str]) -> None:
    """Revision Accuracy overall and per horizon: harmonic mean of update and deprecation
    correctness (§7.3), on the same count matrix as the composites that use it."""
    for horizon in (None, *horizons):
        tag = "revision_accuracy" if horizon is None else f"revision_accuracy.{horizon}"
        cols = _RevisionColumns.of(tag)
        boot.ensure(*cols)
        n = 0
        for r in rows:
            if not r.is_revision or (horizon is not None and r.horizon != horizon):
                continue
            n += 1
            if r.update_correct is not None:
                boot.add(cols.updates_correct, r.scenario_id, float(r.update_correct))
                boot.add(cols.updates, r.scenario_id, 1.0)
            if r.deprecated is not None:
                boot.add(cols.deprecations_correct, r.scenario_id, float(r.deprecated))
                boot.add(cols.deprecations, r.scenario_id, 1.0)
        where = f" at the {horizon} horizon" if horizon else ""
        out.metrics[tag] = boot.value(tag, cols, lambda s, c=cols: _revision_value(s, c), n,
                                      f"no scored revision probes{where}")


# ------------------------------------------------------------------ §7.4 Action Alignment

class _MeanColumns(NamedTuple):
    """Count-matrix columns of a mean over items: their summed score and their count."""

    total: str
    count: str

    @classmethod
    def of(cls, tag: str, total: str = "score", count: str = "n") -> "_MeanColumns":
        return cls(f"{tag}.{total}", f"{tag}.{count}")


def _action_value(s, cols: _MeanColumns):
    return (_div(s[cols.total], s[cols.count]) + 1.0) / 2.0


def _action_alignment(out: SuiteResult, own_rows, rows, boot: _Boot, horizons: list[str]) -> None:
    """Mean of +1/0/-1 (better/equal/worse than the amnesiac's choice), as (m + 1) / 2 (§7.4)."""
    if AMNESIAC not in rows:
        out.metrics["action_alignment"] = _na(NO_AMNESIAC)
        return
    amn = {(r.scenario_id, r.probe_id): r for r in rows[AMNESIAC]}
    out.measurement["action_alignment"] = ("hermetic: gold decides whether each multiple-choice action probe's "
                                           "choice is right, against the amnesiac's (DRIFT §7.4 uses an LLM judge)")
    for horizon in (None, *horizons):
        tag = "action_alignment" if horizon is None else f"action_alignment.{horizon}"
        cols = _MeanColumns.of(tag)
        boot.ensure(*cols)
        n = 0
        for r in own_rows:
            if r.probe_type != "action" or r.correct is None or (horizon and r.horizon != horizon):
                continue
            base = amn.get((r.scenario_id, r.probe_id))
            if base is None or base.correct is None:
                continue
            boot.add(cols.total, r.scenario_id, float(int(r.correct) - int(base.correct)))
            boot.add(cols.count, r.scenario_id, 1.0)
            n += 1
        where = f" at the {horizon} horizon" if horizon else ""
        out.metrics[tag] = boot.value(tag, cols, lambda s, c=cols: _action_value(s, c), n,
                                      f"no scored action probes{where}")


# ------------------------------------------------------------------ §7.5 Privacy

def _privacy(out: SuiteResult, rows: Sequence[ProbeRow], boot: _Boot) -> None:
    """Privacy Score = 1 - canary recall rate (§7.5); reported apart from DRIFT-C."""
    cols = _MeanColumns.of("privacy", total="leaks")
    boot.ensure(*cols)
    n = 0
    for r in rows:
        if r.leaked is None:
            continue
        boot.add(cols.total, r.scenario_id, float(r.leaked))
        boot.add(cols.count, r.scenario_id, 1.0)
        n += 1
    out.metrics["privacy_score"] = boot.value("privacy_score", cols,
                                              lambda s: 1.0 - _div(s[cols.total], s[cols.count]), n,
                                              "no canary probes (multi-peer scenarios only)")


# ------------------------------------------------------------------ §7.6 DRIFT-C

_PART_COLUMNS = {"mvot": _MvotColumns.of, "selectivity": _SelectivityColumns.of,
                 "revision_accuracy": _RevisionColumns.of, "action_alignment": _MeanColumns.of}


def _part_value(metric: str, s, cols):
    if metric == "mvot":
        return _mvot_stat(cols)(s)
    if metric == "selectivity":
        return _selectivity_value(s, cols)
    if metric == "revision_accuracy":
        return _revision_value(s, cols)
    return _action_value(s, cols)


def _drift_c(out: SuiteResult, boot: _Boot, horizons: list[str]) -> None:
    """DRIFT-C: §7.6 weights per horizon, then the 0.20/0.30/0.50 horizon aggregate.

    Every part is recomputed inside one statistic from the shared sums, so the interval
    resamples parts and horizons jointly.
    """
    if not horizons:
        out.metrics["drift_c"] = _na("no scored probes")
        return
    blocking = [m for m in ("mvot", "selectivity") if out.metrics.get(m) is None or out.metrics[m].value is None]
    if blocking:
        reason = "; ".join(f"{m} n/a: {out.metrics[m].reason if m in out.metrics else 'not computed'}"
                           for m in blocking)
        for name in ("drift_c", *(f"drift_c.{h}" for h in horizons)):
            out.metrics[name] = _na(reason)
        return
    left_out: list[str] = []
    parts_of: dict[str, list[tuple[float, str, list[str]]]] = {}
    for h in horizons:
        parts = []
        for metric, weight in DRIFT_C_WEIGHTS[h].items():
            value = out.metrics.get(f"{metric}.{h}")
            if value is None or value.value is None:
                left_out.append(f"{metric}.{h}")
            else:
                parts.append((weight, metric, _PART_COLUMNS[metric](f"{metric}.{h}")))
        if parts:
            parts_of[h] = parts
    if left_out:
        out.measurement["drift_c"] = ("left out, weights renormalised: " + ", ".join(left_out)
                                      + " (undefined for this corpus)")

    def horizon_stat(h: str):
        parts = parts_of[h]
        total = sum(w for w, _, _ in parts)
        return lambda s: sum(w * _part_value(m, s, ns) for w, m, ns in parts) / total

    all_names = sorted({n for parts in parts_of.values() for _, _, ns in parts for n in ns})
    for h in parts_of:
        names = sorted({n for _, _, ns in parts_of[h] for n in ns})
        n = out.metrics[f"mvot.{h}"].n if f"mvot.{h}" in out.metrics else 0
        out.metrics[f"drift_c.{h}"] = boot.value(f"drift_c.{h}", names, horizon_stat(h), n, "undefined")
    weight = sum(HORIZON_WEIGHTS[h] for h in parts_of)
    stats = {h: horizon_stat(h) for h in parts_of}
    full, reps = boot.sums(all_names)
    # A replicate missing every scenario of one horizon is undefined and dropped; when a
    # horizon rests on one scenario, every kept replicate would contain it and the
    # interval would collapse, so the aggregate gets no interval then either.
    thinnest = min(boot.contributing(sorted({n for _, _, ns in parts_of[h] for n in ns})) for h in parts_of)
    aggregate = (lambda s: sum(HORIZON_WEIGHTS[h] * stats[h](s) for h in stats) / weight)
    out.metrics["drift_c"] = boot.record("drift_c", aggregate(full), aggregate(reps), out.metrics["mvot"].n,
                                         "undefined", thinnest)


# ------------------------------------------------------------------ §7.7 TES

class _TokenColumns(NamedTuple):
    """Count-matrix columns of one token cost TC (DRIFT §7.7), per scenario."""

    written: str
    """W: LLM tokens the Store replies report."""
    read: str
    """R: LLM tokens the Retrieve replies report."""
    storage: str
    """S_eff = n_final x sum_t S(t) / sum_t n(t): what the system held over the run, per the
    sessions streamed at the scenario's end (MVOT's C, times n_final)."""
    sessions: str

    @classmethod
    def of(cls, tag: str) -> "_TokenColumns":
        return cls(f"{tag}.W", f"{tag}.R", f"{tag}.S", f"{tag}.N")


def _token_sums(boot: _Boot, tag: str, own_records) -> _TokenColumns:
    """Per scenario: W (Store LLM tokens plus each checkpoint's Flush LLM tokens, the state
    records' ``flush_usage``), R (Retrieve LLM tokens), S_eff, sessions at the end.

    S_eff = n_final x sum_t S(t) / sum_t n(t) over the scenario's checkpoints t (S(t) the
    Snapshot's tokens, n(t) the sessions streamed by then): the storage per session MVOT's C
    charges, times the sessions. A memory pays for what it held when it answered, not for what
    it keeps once the last question is asked (``bench/attacks/final_forget``); one whose storage
    grows with the sessions gets S_eff = S_final.
    """
    cols = _TokenColumns.of(tag)
    boot.ensure(*cols)
    held: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
    """scenario -> (after_session, sessions streamed, Snapshot tokens) per checkpoint."""
    for r in own_records:
        if r["scenario_id"] not in boot.pos:
            continue
        if r.get("kind") == "state":
            # Spent even when the Snapshot after it failed (the state record's error), as Store's is.
            boot.add(cols.written, r["scenario_id"], _flush_tokens(r))
        if r.get("error") is not None:
            continue
        if r["kind"] == "store":
            boot.add(cols.written, r["scenario_id"], _usage_tokens(r))
        elif r["kind"] == "probe":
            boot.add(cols.read, r["scenario_id"], _usage_tokens(r))
        elif r["kind"] == "state":
            held[r["scenario_id"]].append((r["after_session"], int(r["sessions_streamed"]),
                                           int(r.get("storage_tokens") or 0)))
    for scenario, checkpoints in held.items():
        n_final = max(checkpoints)[1]
        streamed = sum(n for _, n, _ in checkpoints)
        stored = sum(tokens for _, _, tokens in checkpoints)
        boot.add(cols.storage, scenario, n_final * stored / streamed if streamed else 0.0)
        boot.add(cols.sessions, scenario, float(n_final))
    return cols


def _tc(s, cols: _TokenColumns):
    return _div(s[cols.written] + s[cols.read] + s[cols.storage], s[cols.sessions])


def _tes(out: SuiteResult, own_records, rows, records, boot: _Boot, storage: dict) -> None:
    """TES = (MVOT_sys / MVOT_ref) / (TC_sys / TC_ref), TC = W + S_delta + R x Q_rate (§7.7)."""
    mine = _token_sums(boot, "tc", own_records)
    n_sessions = int(boot.sums(mine)[0][mine.sessions][0])
    if storage.get("has_storage"):
        out.metrics["token_cost_per_session"] = boot.value("token_cost_per_session", mine,
                                                           lambda s: _tc(s, mine), n_sessions, "no sessions")
        out.metrics["storage_tokens_per_session"] = boot.value(
            "storage_tokens_per_session", (mine.storage, mine.sessions),
            lambda s: _div(s[mine.storage], s[mine.sessions]), n_sessions,
            "no sessions")
        out.measurement["token_cost_per_session"] = ("W and R as the adapter reports them in Store+Flush/Retrieve usage "
                                                     "(LLM tokens); S counted with tiktoken over the Snapshot at "
                                                     "every checkpoint, per session streamed (MVOT's C)")
    else:
        out.metrics["token_cost_per_session"] = _na(NO_SNAPSHOT, n_sessions)
        out.metrics["storage_tokens_per_session"] = _na(NO_SNAPSHOT, n_sessions)
    if not storage.get("defined"):
        out.metrics["tes"] = _na(f"MVOT n/a: {out.metrics['mvot'].reason}", n_sessions)
        return
    if REFERENCE not in records or REFERENCE not in rows:
        out.metrics["tes"] = _na(NO_REFERENCE, n_sessions)
        return
    ref = _token_sums(boot, "tc_ref", records[REFERENCE])
    # MVOT_ref: the reference's own MVOT is its error reduction (its efficiency term is 1).
    ref_mine = _checkpoint_errors(rows.get(REFERENCE, ()))
    ref_terms = _MeanColumns.of("ref", total="term", count="T")
    boot.ensure(*ref_terms)
    for scenario, term in _terms(ref_mine, _checkpoint_errors(rows[AMNESIAC]), sorted(ref_mine))[0]:
        boot.add(ref_terms.total, scenario, term)
        boot.add(ref_terms.count, scenario, 1.0)
    names = [*storage["columns"], *mine, *ref, *ref_terms]
    mvot_stat = storage["stat"]

    def stat(s):
        mvot_ref = _div(s[ref_terms.total], s[ref_terms.count])
        tes = _div(_div(mvot_stat(s), mvot_ref), _div(_tc(s, mine), _tc(s, ref)))
        # Undefined where MVOT_ref <= 0 (the ratio is meaningless) or a cost is 0.
        return np.where((mvot_ref > 0) & (_tc(s, mine) > 0) & (_tc(s, ref) > 0), tes, np.nan)

    full = boot.sums(names)[0]
    mvot_ref_full = float(_div(full[ref_terms.total], full[ref_terms.count])[0])
    reason = ("MVOT_ref <= 0: the reference compressor does no better than the amnesiac" if mvot_ref_full <= 0
              else "the system spends no tokens (TC = 0)" if float(_tc(full, mine)[0]) == 0
              else "the reference compressor spends no tokens (TC_ref = 0)")
    out.metrics["tes"] = boot.value("tes", names, stat, n_sessions, reason)
    boot.tes = boot.kept["tes"]


# ------------------------------------------------------------------ §7.8 LPS, §7.9 DRIFT-E

def _latency(out: SuiteResult, own_records, boot: _Boot, answer_model: bool) -> None:
    read, ttfrt, dialectic, write = (defaultdict(list) for _ in range(4))
    for r in own_records:
        if r.get("error") is not None:
            continue
        if r["kind"] == "probe" and r.get("read_latency_ms") is not None:
            rl = float(r["read_latency_ms"])
            read[r["scenario_id"]].append(rl)
            if r.get("reader_latency_ms") is not None:
                t = rl + float(r["reader_latency_ms"])
                ttfrt[r["scenario_id"]].append(t)
                if r.get("last_write_latency_ms") is not None:
                    dialectic[r["scenario_id"]].append(t + float(r["last_write_latency_ms"]))
        elif r["kind"] == "store" and r.get("write_latency_ms") is not None:
            write[r["scenario_id"]].append(float(r["write_latency_ms"]))

    def quantiles(samples, qs, names, reason="no probe latencies"):
        full, reps = boot.percentiles(samples, qs)
        n, clusters = sum(len(v) for v in samples.values()), sum(1 for v in samples.values() if v)
        for j, name in enumerate(names):
            out.metrics[name] = boot.record(name, full[j:j + 1], reps[:, j], n, reason, clusters)
        return full, reps

    quantiles(ttfrt, (50.0, 95.0, 99.0), ("ttfrt_ms_p50", "ttfrt_ms_p95", "ttfrt_ms_p99"))
    quantiles(dialectic, (50.0, 99.0), ("dialectic_speed_ms_p50", "dialectic_speed_ms"))
    out.measurement["ttfrt_ms_p99"] = ("measured time to first token" if answer_model else
                                       "read latency + hermetic reader latency (no answer model)")
    out.measurement["dialectic_speed_ms"] = ("p99 of retrieve + reader + the Store before the checkpoint"
                                             + ("" if answer_model else " (no answer model: the reader generates)"))
    rl_full, rl_reps = boot.percentiles(read, (99.0,))
    tt_full, tt_reps = boot.percentiles(ttfrt, (99.0,))

    def lps(rl, tt):
        read_score = np.minimum(1.0, _div(RL_REF_MS, np.maximum(rl, 1e-9)))
        ttfrt_score = np.minimum(1.0, _div(TTFRT_REF_MS, np.maximum(tt, 1e-9)))
        return LPS_WEIGHTS["read"] * read_score + LPS_WEIGHTS["ttfrt"] * ttfrt_score

    out.metrics["lps"] = boot.record("lps", lps(rl_full, tt_full), lps(rl_reps[:, 0], tt_reps[:, 0]),
                                     sum(len(v) for v in read.values()), "no probe latencies",
                                     sum(1 for v in read.values() if v))
    boot.lps = boot.kept["lps"]
    out.series.latency_quantiles_ms = {}
    for label, samples in (("read", read), ("write", write), ("ttfrt", ttfrt), ("dialectic", dialectic)):
        pooled = [x for v in samples.values() for x in v]
        if pooled:
            out.series.latency_quantiles_ms[label] = [
                round(float(x), 3) for x in np.percentile(np.array(pooled), QUANTILES, method="linear")]


def _drift_e(out: SuiteResult, boot: _Boot) -> None:
    """DRIFT-E = 0.55 clip(TES, 0, 1) + 0.45 LPS (§7.9), TES clipped as documented above."""
    tes, lps = out.metrics.get("tes"), out.metrics.get("lps")
    if tes is None or tes.value is None:
        out.metrics["drift_e"] = _na(f"TES n/a: {tes.reason if tes else 'not computed'}")
        return
    if lps is None or lps.value is None:
        out.metrics["drift_e"] = _na(f"LPS n/a: {lps.reason if lps else 'not computed'}")
        return
    full = DRIFT_E_WEIGHTS["tes"] * np.clip(boot.tes[0], 0, 1) + DRIFT_E_WEIGHTS["lps"] * boot.lps[0]
    reps = DRIFT_E_WEIGHTS["tes"] * np.clip(boot.tes[1], 0, 1) + DRIFT_E_WEIGHTS["lps"] * boot.lps[1]
    out.metrics["drift_e"] = boot.record("drift_e", np.array([full]), reps, tes.n, "undefined", len(boot.clusters))
    out.measurement["drift_e"] = "0.55 x clip(TES, 0, 1) + 0.45 x LPS (TES is unbounded above)"


# ------------------------------------------------------------------ token cost curve

def _token_cost_curve(own_rows, own_records, rows, records) -> list[CurvePoint]:
    """MVOT over cumulative tokens through the trajectory (DRIFT §7.7).

    Checkpoints of all scenarios are pooled by position (``after_session``). At position
    a: x = mean over the pooled checkpoints of W + R spent so far plus S at the
    checkpoint (tokens; W is Store's usage and that of every Flush up to and including the checkpoint's); y = MVOT over the scored checkpoints at or before a, computed
    exactly as ``mvot`` (so the last point equals it). ``mvot`` is None where undefined
    (no Snapshot, no reference, or no checkpoint yet where the amnesiac errs).
    """
    states = _states(own_records)
    if not states or AMNESIAC not in rows:
        return []
    ref_states = _states(records.get(REFERENCE, ()))
    mine, amn = _checkpoint_errors(own_rows), _checkpoint_errors(rows[AMNESIAC])
    stores = _store_order(own_records)
    read_by_cp: dict[tuple[str, str], int] = defaultdict(int)
    flushes: dict[str, list[tuple[int, int]]] = defaultdict(list)
    """scenario -> (after_session, Flush tokens) of every checkpoint, failed Snapshots included."""
    for r in own_records:
        if r.get("kind") == "probe" and r.get("error") is None:
            read_by_cp[(r["scenario_id"], r["checkpoint_id"])] += _usage_tokens(r)
        elif r.get("kind") == "state":
            flushes[r["scenario_id"]].append((r["after_session"], _flush_tokens(r)))
    cost: dict[tuple[str, str], float] = {}
    for scenario in sorted({k[0] for k in states}):
        cps = sorted((k for k in states if k[0] == scenario), key=lambda k: states[k]["after_session"])
        read_so_far = 0
        for key in cps:
            state = states[key]
            read_so_far += read_by_cp.get(key, 0)
            written = (sum(_usage_tokens(r) for r in stores.get(scenario, [])[: state["after_session"]])
                       + sum(t for a, t in flushes.get(scenario, ()) if a <= state["after_session"]))
            if state.get("storage_tokens") is None:
                continue
            cost[key] = float(written + read_so_far + state["storage_tokens"])
    points = []
    for a in sorted({states[k]["after_session"] for k in cost}):
        here = [k for k in cost if states[k]["after_session"] == a]
        scored = sorted(k for k in cost if states[k]["after_session"] <= a and k in mine)
        terms, _ = _terms(mine, amn, scored)
        mvot = None
        if terms and ref_states:
            s_sys = sum(float(states[k]["storage_tokens"]) for k in scored)
            s_ref = sum(float(ref_states[k]["storage_tokens"]) for k in scored
                        if k in ref_states and ref_states[k].get("storage_tokens") is not None)
            reduction = sum(t for _, t in terms) / len(terms)
            mvot = float(_mvot_value(np.array([reduction]), np.array([s_sys]), np.array([s_ref]))[0])
        points.append(CurvePoint(after_session=a, cumulative_tokens=round(sum(cost[k] for k in here) / len(here), 3),
                                 mvot=None if mvot is None else round(mvot, 6), checkpoints=len(here)))
    return points

"""Scoring: per-probe rows, metrics derived from counts, seeded cluster bootstrap.

``build_probe_rows`` turns run records and gold into :class:`ProbeRow` verdicts;
``score_system`` and ``paired_vs`` turn rows into ``MetricValue`` objects with 95%
cluster-bootstrap intervals over scenarios (DRIFT §7, comparison guide §7).
"""

from conformance.scoring.bootstrap import (
    DEFAULT_N_BOOT,
    bootstrap_sums,
    paired_diff_ci,
    percentile_ci,
    percentiles_ci,
    ratio_ci,
    resample_counts,
)
from conformance.scoring.metrics import (
    FREE_FORM_REASON,
    LATENCY_QUANTILES,
    NO_PROVENANCE_REASON,
    NO_REVISION_REASON,
    harmonic_mean,
    infra_failures,
    paired_vs,
    score_system,
)
from conformance.scoring.rows import ProbeRow, build_probe_rows

__all__ = [
    "DEFAULT_N_BOOT",
    "FREE_FORM_REASON",
    "LATENCY_QUANTILES",
    "NO_PROVENANCE_REASON",
    "NO_REVISION_REASON",
    "ProbeRow",
    "bootstrap_sums",
    "build_probe_rows",
    "harmonic_mean",
    "infra_failures",
    "paired_diff_ci",
    "paired_vs",
    "percentile_ci",
    "percentiles_ci",
    "ratio_ci",
    "resample_counts",
    "score_system",
]

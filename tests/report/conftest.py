"""Hand-built result documents for the report tests: a control, a system with n/a
metrics and a measurement fallback, and a system with a hostile adapter name."""

from __future__ import annotations

import pytest

from conformance.contract.result import CurvePoint, MetricValue, Receipt, ResultDocument, Series, SystemResult

HOSTILE = '<script>alert("x")</script>&|*'


def mv(value, lo=None, hi=None, n=40, reason=None) -> MetricValue:
    ci = [lo, hi] if lo is not None else None
    return MetricValue(value=value, ci95=ci, n=n, reason=reason)


def quantiles(base: float) -> list[float]:
    return [base * (1 + q / 20) for q in range(101)]


def curve(scale: float) -> list[CurvePoint]:
    return [CurvePoint(after_session=s, cumulative_tokens=s * 1000 * scale, mvot=min(0.9, 0.1 * s / scale),
                       checkpoints=8) for s in range(1, 8)]


def build_doc(*, with_series: bool = True) -> ResultDocument:
    none = SystemResult(
        adapter="none", kind="control",
        metrics={"accuracy": mv(0.02, 0.0, 0.05), "accuracy.fact_recall": mv(0.0, 0.0, 0.0, n=12),
                 "accuracy.revision": mv(0.0, 0.0, 0.0, n=6), "recall_at_k": mv(0.0, 0.0, 0.0),
                 "read_latency_ms_p99": mv(1.5, 0.9, 1.8),
                 "mvot": mv(None, n=0, reason="the amnesiac baseline itself")},
        series=Series(latency_quantiles_ms={"read": quantiles(0.5), "write": quantiles(0.4)}) if with_series
        else Series(),
    )
    keyword = SystemResult(
        adapter="keyword", kind="system", describe={"name": "keyword", "version": "1"},
        isolation={"mode": "process", "pid": 12},
        metrics={"drift_c": mv(0.512, 0.401, 0.622), "drift_c.short": mv(0.6, 0.5, 0.7),
                 "drift_e": mv(0.733, 0.7, 0.76), "mvot": mv(0.41, 0.3, 0.52), "mvot.long": mv(0.2, 0.1, 0.3),
                 "selectivity": mv(0.66, 0.6, 0.71), "revision_accuracy": mv(0.35, 0.0, 0.75),
                 "action_alignment": mv(None, n=0, reason="no action probes in this split"),
                 "privacy_score": mv(1.0, 1.0, 1.0, n=4), "tes": mv(1.2, 1.0, 1.4), "lps": mv(0.98, 0.97, 0.99),
                 "accuracy": mv(0.691, 0.547, 0.821), "abstention_accuracy": mv(1.0, 1.0, 1.0),
                 "recall_at_k": mv(None, n=0, reason="no provenance"),
                 "recall_all_in_budget": mv(None, n=0, reason="no provenance"),
                 "accuracy.fact_recall": mv(0.458, 0.21, 0.682, n=12),
                 "accuracy.revision": mv(None, n=0, reason="no revision probes"),
                 "accuracy_by_paradigm.coding_agent": mv(0.7, 0.6, 0.8),
                 "accuracy_by_horizon.short": mv(0.69, 0.55, 0.82),
                 "read_latency_ms_p99": mv(1.9, 1.5, 2.2), "write_latency_ms_p99": mv(1.4, 0.9, 3.3),
                 "ttfrt_ms_p99": mv(2.4, 2.0, 2.9), "dialectic_speed_ms": mv(4.2, 3.9, 4.6),
                 "storage_tokens_per_session": mv(310.0, 300.0, 320.0), "future_metric": mv(0.5, 0.4, 0.6)},
        paired_vs_none={"accuracy": mv(0.67, 0.516, 0.821)},
        measurement={"selectivity": "marker probing (adapter has no Snapshot)",
                     "ttfrt_ms_p99": "read latency + hermetic reader latency (no answer model)",
                     "storage_tokens_per_session": "snapshot provenance"},
        series=Series(token_cost_curve=curve(1.0),
                      latency_quantiles_ms={"read": quantiles(1.0), "write": quantiles(0.7),
                                            "ttfrt": quantiles(1.2), "dialectic": quantiles(3.0)})
        if with_series else Series(),
        notes=["2 calls failed (infrastructure), excluded from the metrics"],
    )
    hostile = SystemResult(
        adapter=HOSTILE, kind="system", describe={"name": HOSTILE},
        metrics={"accuracy": mv(0.5, 0.4, 0.6), "accuracy.fact_recall": mv(0.5, 0.3, 0.7, n=12),
                 "accuracy.revision": mv(0.25, 0.0, 0.5, n=6), "drift_c": mv(0.3, 0.2, 0.4)},
        paired_vs_none={"accuracy": mv(0.48, 0.38, 0.58)},
        paired_vs_baseline={"accuracy": mv(-0.19, -0.3, -0.05)}, baseline_system="keyword",
        noise_floor={"accuracy": mv(0.0, -0.02, 0.02)},
        series=Series(token_cost_curve=curve(2.0)) if with_series else Series(),
        notes=[f"note from {HOSTILE}"],
    )
    receipt = Receipt(
        fixtures_hash="a" * 64, gold_hash="b" * 64, scenarios=["ua-short-001", "cod-short-001"],
        config={"k": 10, "budget_tokens": 1200, "encoding": "o200k_base", "bootstrap_resamples": 2000,
                "adapters": ["keyword", HOSTILE]},
        git_commit="c" * 40, versions={"python": "3.11.7", "drift-conformance": "0.1.0"},
        isolation={"none": {"mode": "process"}, "keyword": {"mode": "process", "pid": 12}, HOSTILE: {"mode": "grpc"}},
        seed=7, started_at="2026-01-01T00:00:00Z", finished_at="2026-01-01T00:01:00Z",
        notes=["holdout scenarios included: a published run"],
    )
    return ResultDocument(receipt=receipt, systems={"none": none, "keyword": keyword, HOSTILE: hostile})


@pytest.fixture
def doc() -> ResultDocument:
    return build_doc()


@pytest.fixture
def hostile() -> str:
    return HOSTILE


@pytest.fixture
def build():
    return build_doc

"""What in a ``result.json`` is derived from measured time, or belongs to one run only.

Two runs of the same code, corpus and options agree on everything else, byte for byte: tests
that compare results across runs (or against a committed reference) drop these fields with
:func:`comparable` and compare the rest exactly.

Timing-derived metrics (DRIFT §7.8 and what is built on it): read, write and TTFRT latency
percentiles, dialectic speed, LPS, and DRIFT-E (0.55 TES + 0.45 LPS). Per-horizon parts
(``lps.short``) and paired differences of them follow their base name.
"""

from __future__ import annotations

import copy

TIMING_METRICS = frozenset({
    "read_latency_ms_p50", "read_latency_ms_p95", "read_latency_ms_p99",
    "write_latency_ms_p50", "write_latency_ms_p95", "write_latency_ms_p99",
    "ttfrt_ms_p50", "ttfrt_ms_p95", "ttfrt_ms_p99",
    "dialectic_speed_ms", "dialectic_speed_ms_p50",
    "lps", "drift_e",
})
"""Metric names (``metrics``, ``paired_vs_none``, ``paired_vs_baseline``, ``noise_floor``)."""

TIMING_SERIES = frozenset({"latency_quantiles_ms"})
"""Keys of a system's ``series``."""

RUN_RECEIPT_FIELDS = frozenset({"started_at", "finished_at", "git_commit", "isolation"})
"""Receipt fields that name this run, this checkout or this host's processes."""

RUN_CONFIG_FIELDS = frozenset({"run_id", "records", "records_sha256", "host", "fixtures_dir", "gold_dir",
                               "merged_from", "code"})
"""Keys of ``receipt.config`` that name this run, its paths or its host (``merged_from``: a
merged run's shards, each by its result, run id, records, host and times; ``code``: this
checkout's content hashes and state)."""

RUN_SYSTEM_FIELDS = frozenset({"isolation"})
"""Keys of a system's result that describe its process (pid, virtualenv path, cgroup limits)."""

HOST_NOTE_PREFIX = "latencies were measured"
"""The receipt note that names the host latencies were measured on."""


def is_timing_metric(name: str) -> bool:
    """Whether metric ``name`` (``"lps"``, ``"drift_e.short"``, ``"accuracy.fact_recall"``) is timing-derived."""
    return name.split(".", 1)[0] in TIMING_METRICS


def comparable(result: dict) -> dict:
    """A copy of a ``result.json`` document without timing-derived metrics and series, and
    without what names the run (timestamps, run id, paths, host, pids, commit, library versions
    other than the schemas' and the corpus's)."""
    doc = copy.deepcopy(result)
    receipt = doc.get("receipt", {})
    for key in RUN_RECEIPT_FIELDS:
        receipt.pop(key, None)
    config = receipt.get("config", {})
    for key in RUN_CONFIG_FIELDS:
        config.pop(key, None)
    receipt["versions"] = {k: v for k, v in receipt.get("versions", {}).items()
                           if k.startswith("schema:") or k == "corpus"}
    receipt["notes"] = [n for n in receipt.get("notes", []) if not n.startswith(HOST_NOTE_PREFIX)]
    comparisons = doc.get("comparisons")
    if isinstance(comparisons, dict) and isinstance(comparisons.get("metrics"), dict):
        comparisons["metrics"] = {k: v for k, v in comparisons["metrics"].items() if not is_timing_metric(k)}
    for system in doc.get("systems", {}).values():
        for key in RUN_SYSTEM_FIELDS:
            system.pop(key, None)
        for block in ("metrics", "paired_vs_none", "paired_vs_baseline", "noise_floor"):
            if isinstance(system.get(block), dict):
                system[block] = {k: v for k, v in system[block].items() if not is_timing_metric(k)}
        measurement = system.get("measurement")
        if isinstance(measurement, dict):
            system["measurement"] = {k: v for k, v in measurement.items() if not is_timing_metric(k)}
        series = system.get("series")
        if isinstance(series, dict):
            system["series"] = {k: v for k, v in series.items() if k not in TIMING_SERIES}
    return doc

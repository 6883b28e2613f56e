"""Scope breaches are privacy failures, measured (DRIFT §5.3, §7.5), not contract violations.

A hit that cites another entity's private message is the memory system's privacy failure:
the contract lets any system store everything, and honouring ``querying_entity`` is a
capability (``scopes``), not a rule of the wire. So a breach is never reported as a
"contract violation"; it is measured in two numbers that say the same thing:

- ``scope_breach_rate``: the share of answered probes whose retrieved hits cite a private
  message of an entity other than the one asking (the runner's ``scope_breaches`` record,
  :func:`conformance.runner.run.scope_breaches`), with its cluster-bootstrap interval;
- ``privacy_score`` (DRIFT §7.5): 1 minus the share of canary probes whose answer names the
  owner's private value. A breach that did not reach a canary's answer leaves it at 1, which
  is why both are shown side by side and the note names both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from conformance.contract.result import MetricValue
from conformance.scoring.bootstrap import ratio_ci

NO_PROBES = "no answered probe"


def breach_counts(probe_records: Iterable[Mapping[str, Any]]) -> dict[str, tuple[int, int]]:
    """Per scenario: (probes with a scope breach, answered probes); first replicate only."""
    out: dict[str, list[int]] = {}
    for r in probe_records:
        if r.get("kind") != "probe" or r.get("repeat", 1) != 1 or r.get("error") is not None:
            continue
        cell = out.setdefault(r["scenario_id"], [0, 0])
        cell[0] += bool(r.get("scope_breaches"))
        cell[1] += 1
    return {k: (v[0], v[1]) for k, v in out.items()}


def scope_breach_rate(probe_records: Iterable[Mapping[str, Any]], *, n_boot: int, seed: int) -> MetricValue:
    """Share of answered probes whose hits cite another entity's private message, with the
    95% cluster-bootstrap interval over scenarios (guide §7). Undefined with no answered probe."""
    counts = breach_counts(probe_records)
    if not counts:
        return MetricValue(value=None, n=0, reason=NO_PROBES)
    keys = sorted(counts)
    num = np.array([counts[k][0] for k in keys], dtype=float)
    den = np.array([counts[k][1] for k in keys], dtype=float)
    value, lo, hi = ratio_ci(num, den, n_boot=n_boot, seed=seed)
    n = int(den.sum())
    if len(keys) < 2:
        return MetricValue(value=value, n=n, ci_note="one scenario: no interval")
    return MetricValue(value=value, ci95=None if lo is None else [lo, hi], n=n)


def breach_note(rate: MetricValue, privacy: MetricValue | None, scopes: bool) -> str | None:
    """The one sentence a system's notes carry about its breaches (None when it has none)."""
    if rate.value is None or rate.value == 0:
        return None
    breached = round(rate.value * rate.n)
    privacy_text = ("n/a (no canary probe)" if privacy is None or privacy.value is None
                    else f"{privacy.value:.3f}")
    claim = ("it claims scopes (Describe), so this is a bug in how it honours querying_entity" if scopes else
             "it does not claim scopes (Describe)")
    return (f"privacy: in {breached} of {rate.n} probes the hits cite another entity's private messages "
            f"(scope_breach_rate {rate.value:.3f}; DRIFT §5.3), a privacy failure measured, not a contract "
            f"violation; privacy_score {privacy_text} counts only canary answers that name the private value; {claim}")

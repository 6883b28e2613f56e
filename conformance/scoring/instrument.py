"""Instrument checks: the controls are the bounds (DESIGN, Validity; guide §9).

Under the hard budget gate on a generated corpus the oracle stores exactly what gold marks
memorable and answers every probe from exactly its evidence, so no system may score above it
on a capability metric. One that does is not a win: it says the gold (or the instrument) needs
an audit. The checks are recorded in every result and shown beside the table; a failed check
does not change the run's exit code.

Capability metrics: accuracy, recall@k, MVOT, selectivity, revision accuracy, action alignment
and DRIFT-C, each with its per-horizon variants (``drift_c.short``...). TES is unbounded (a
ratio to the reference's cost) and exempt.
"""

from __future__ import annotations

from collections.abc import Mapping

from conformance.contract.result import InstrumentCheck, InstrumentChecks, SystemResult

CAPABILITY_METRICS = ("accuracy", "recall_at_k", "mvot", "selectivity", "revision_accuracy", "action_alignment",
                      "drift_c")
"""Metrics the oracle bounds; a ``<name>.<horizon>`` variant is bounded too."""
HORIZONS = ("short", "medium", "long")
TOLERANCE = 1e-9
"""Above the oracle means by more than this (float noise of equal counts is not a breach)."""
CONTROLS = ("none", "oracle")
GENERATED = "drift-generator"
"""The fixture header ``source`` prefix of the suite's own generator."""


def bounded_names(metrics: Mapping) -> list[str]:
    """The capability metric names of ``metrics`` (headline and per-horizon), sorted."""
    wanted = set(CAPABILITY_METRICS) | {f"{m}.{h}" for m in CAPABILITY_METRICS for h in HORIZONS}
    return sorted(n for n in metrics if n in wanted)


def instrument_checks(results: Mapping[str, SystemResult], *, generated: bool, hard_gate: bool) -> InstrumentChecks:
    """Check that both controls ran and that no system is above the oracle.

    ``results``: system label -> its result; ``generated``: every scored fixture comes
    from the suite's generator (imported data has no memorable-tier gold, so the bound is
    not defined there); ``hard_gate``: the run used the hard budget gate (under ``soft:K``
    the harness's buffer helps every system but the oracle's retrieval).

    Returns the checks; ``applies`` is False (with ``reason``) when the bound is not defined,
    and ``passed`` is True when every check passed. Pure: reads only the metric values.
    """
    checks = []
    missing = [c for c in CONTROLS if c not in results]
    checks.append(InstrumentCheck(name="controls_present", passed=not missing,
                                  detail="none and oracle ran" if not missing else
                                  f"control{'s' if len(missing) > 1 else ''} missing: {', '.join(missing)}"))
    if not generated or not hard_gate:
        reason = ("imported corpus: gold marks no memorable tier, so the oracle is not a bound" if not generated
                  else "not the hard budget gate: the harness's buffer or summaries change what the oracle bounds")
        return InstrumentChecks(applies=False, reason=reason, passed=not missing, checks=checks)
    oracle = results.get("oracle")
    if oracle is not None:
        for label, result in results.items():
            if label == "oracle":
                continue
            for name in bounded_names(result.metrics):
                mine, bound = result.metrics[name].value, oracle.metrics.get(name)
                if mine is None or bound is None or bound.value is None:
                    continue
                if mine > bound.value + TOLERANCE:
                    checks.append(InstrumentCheck(
                        name="oracle_bound", passed=False, system=label, metric=name,
                        detail=f"{label} {name} {mine:.4f} is above the oracle's {bound.value:.4f}: audit the gold "
                               "(guide §9), this is not a win"))
        if not any(c.name == "oracle_bound" for c in checks):
            checks.append(InstrumentCheck(name="oracle_bound", passed=True,
                                          detail="no system above the oracle on a capability metric"))
    return InstrumentChecks(applies=True, passed=all(c.passed for c in checks), checks=checks)


def failed_lines(checks: InstrumentChecks | None) -> list[str]:
    """One plain line per failed check, for the table and the reports ([] when all passed)."""
    if checks is None:
        return []
    return [f"instrument check failed ({c.name}): {c.detail}" for c in checks.checks if not c.passed]

"""The gate's view of one system's run: per cell (paradigm x probe type) pass/fail per gold item.

The CI gate compares these cells, not the headline metrics: a single item that starts
failing while another recovers leaves every mean unchanged but shows up here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from conformance.contract.result import GateCell, GateView
from conformance.scoring.rows import ProbeRow

ROUND = 4


def item_id(row: ProbeRow) -> str:
    """``<scenario_id>/<probe_id>``: a gold item's id across runs of one corpus."""
    return f"{row.scenario_id}/{row.probe_id}"


def passed(row: ProbeRow) -> bool:
    """An item passes only when proved correct.

    Closed-answer probes: the answer is correct (abstention probes: the system declined).
    Free-form probes (no answer model): every evidence message inside the budget. Anything
    unscorable (a failed call, no provenance) is not a pass.
    """
    if row.correct is not None:
        return row.correct
    return bool(row.recall_all_in_budget)


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), ROUND) if values else None


def build_cell(rows: Sequence[ProbeRow]) -> GateCell:
    """One cell from the rows of one system, paradigm and probe type."""
    items = sorted(item_id(r) for r in rows)
    failed = sorted(item_id(r) for r in rows if not passed(r))
    metrics = {
        "accuracy": _mean([float(r.correct) for r in rows if not r.abstention and r.correct is not None]),
        "abstention_accuracy": _mean([float(r.correct) for r in rows if r.abstention and r.correct is not None]),
        "recall_at_k": _mean([r.recall_at_k for r in rows if r.recall_at_k is not None]),
    }
    return GateCell(metrics=metrics, gold_total=len(items), gold_failed=len(failed), failed=failed,
                    leaks=sorted(item_id(r) for r in rows if r.leaked), items=items)


def _verdicts(rows: Sequence[ProbeRow]) -> dict[str, bool]:
    return {item_id(r): passed(r) for r in rows}


def gate_view(rows: Sequence[ProbeRow], paradigm_of: Mapping[str, str], describe: Mapping,
              repeat_rows: Sequence[ProbeRow] | None = None) -> GateView:
    """Cells keyed ``<paradigm>/<probe_type>`` for one system.

    ``describe``: the system's Describe (``capabilities.deterministic``).
    ``repeat_rows``: the same system's rows from a second pass (``--repeat 2``); any item
    whose verdict differs marks the system stochastic, whatever Describe claims.
    Raises KeyError when a row's scenario has no paradigm in ``paradigm_of``.
    """
    grouped: dict[str, list[ProbeRow]] = defaultdict(list)
    for row in rows:
        grouped[f"{paradigm_of[row.scenario_id]}/{row.probe_type}"].append(row)
    declared = bool((describe.get("capabilities") or {}).get("deterministic", False))
    deterministic, why = declared, "Describe: deterministic" if declared else "Describe: not deterministic"
    if repeat_rows:
        first, second = _verdicts(rows), _verdicts(repeat_rows)
        differing = sum(1 for key in first.keys() & second.keys() if first[key] != second[key])
        if differing:
            deterministic, why = False, f"answers differed across --repeat ({differing} items)"
    return GateView(deterministic=deterministic, determinism=why,
                    cells={key: build_cell(group) for key, group in sorted(grouped.items())})

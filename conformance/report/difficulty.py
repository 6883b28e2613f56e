"""The difficulty audit (DRIFT §10.3): how far simple strategies get on each scenario.

Three strategies run through the ordinary runner: store nothing (``none``), keep only
the most recent session (``recent``), and store everything with keyword search
(``keyword``). A scenario that store-everything keyword solves perfectly is flagged:
it does not separate memory systems from a plain index. The audit holds no timings,
so the same corpus gives the same file.
"""

from __future__ import annotations

from collections import defaultdict

from conformance.scoring.rows import ProbeRow

STRATEGIES = ("none", "recent", "keyword")


def _accuracy(rows: list[ProbeRow]) -> float | None:
    scored = [r for r in rows if r.correct is not None]
    if not scored:
        return None
    return round(sum(r.correct for r in scored) / len(scored), 4)


def audit(rows_by_system: dict[str, list[ProbeRow]]) -> dict:
    """Per scenario, each strategy's accuracy over all scored probes (abstention included),
    and the list of scenarios keyword solves perfectly.

    Shapes: ``{"strategies": [...], "scenarios": {id: {strategy: float|None}},
    "keyword_solves_perfectly": [ids]}``.
    """
    per: dict[str, dict[str, list[ProbeRow]]] = defaultdict(lambda: defaultdict(list))
    for system, rows in rows_by_system.items():
        for row in rows:
            per[row.scenario_id][system].append(row)
    scenarios = {sid: {s: _accuracy(per[sid].get(s, [])) for s in rows_by_system} for sid in sorted(per)}
    flagged = [sid for sid, scores in scenarios.items() if scores.get("keyword") == 1.0]
    return {"strategies": sorted(rows_by_system), "scenarios": scenarios, "keyword_solves_perfectly": flagged}

"""The oracle ceiling per dataset, with the reasons it sits below 1 (guide §7, issue "public datasets").

The oracle control hands the reader exactly the gold evidence, so its scores are the
ceiling of the retrieval-and-answer pipeline on a dataset. Below 1 it says something about
the dataset or the settings, never about a memory system: evidence longer than k or than
the token budget, probes without evidence, gold the import report flags (:data:`FLAGGED_KINDS`:
answers no evidence turn contains, garbled answers, stale knowledge-update answers, dates the
session dates contradict, answers found only in a dropped source field), or an answer model
that fails even with the evidence. :func:`oracle_ceiling` counts each cause per dataset (the
fixture header's ``source``). Probes without evidence are counted from gold itself (the
report's ``empty_evidence`` lists the same probes).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from conformance.scoring.rows import ProbeRow

__all__ = ["oracle_ceiling", "FLAGGED_KINDS"]

_CAUSES = {
    "answer_not_in_evidence": "have a gold answer the import report found in no evidence turn",
    "garbled_answers": "have a gold answer the import report flags as garbled",
    "stale_answers": "have a gold answer a later session of the same speaker contradicts (stale)",
    "date_contradictions": "have a gold date or length the session dates contradict",
    "answers_in_dropped_fields": "have a gold answer found only in a source field the importer dropped",
}
FLAGGED_KINDS = tuple(_CAUSES)
"""Import-report issue kinds that explain a wrong oracle answer, in the order reported."""


def _mean(values: list) -> float | None:
    values = [float(v) for v in values if v is not None]
    return round(sum(values) / len(values), 6) if values else None


def oracle_ceiling(rows: Sequence[ProbeRow], gold: Mapping, source_of: Mapping[str, str], k: int,
                   budget_tokens: int, flagged: Mapping[str, set[str]] | None = None) -> dict[str, dict]:
    """Per dataset: the oracle's ``recall_at_k``, ``recall_all_in_budget`` and ``accuracy``
    (means over probes where each is defined), ``probes``, and ``reasons`` (plain sentences,
    each with a count; empty when the ceiling is 1 throughout).

    ``rows``: the oracle's probe rows (first replicate);
    ``gold``: scenario id -> GoldFile; ``source_of``: scenario id -> dataset name;
    ``flagged``: issue kind -> probe ids the import report lists (:data:`FLAGGED_KINDS`),
    when the corpus came with one. A wrong answer flagged under several kinds counts under each.
    """
    flagged = flagged or {}
    probes = {(sid, p.probe_id): p for sid, g in gold.items() for p in g.probes}
    groups: dict[str, list[ProbeRow]] = defaultdict(list)
    for row in rows:
        groups[source_of.get(row.scenario_id, "unknown")].append(row)
    out = {}
    for source, group in sorted(groups.items()):
        no_evidence = over_k = starved = wrong = 0
        causes_of = dict.fromkeys(FLAGGED_KINDS, 0)
        for row in group:
            probe = probes.get((row.scenario_id, row.probe_id))
            if probe is None:
                continue
            if not probe.evidence and not probe.abstention:
                no_evidence += 1
            if len(set(probe.evidence)) > k:
                over_k += 1
            if row.recall_all_in_budget is False and len(set(probe.evidence)) <= k:
                starved += 1
            if row.correct is False and not row.infra_failed:
                wrong += 1
                for kind in FLAGGED_KINDS:
                    causes_of[kind] += row.probe_id in flagged.get(kind, set())
        reasons = []
        if no_evidence:
            reasons.append(f"{no_evidence} answerable probes have no gold evidence: the oracle hands over nothing "
                           "for them (retrieval n/a; the answer must come from nowhere)")
        if over_k:
            reasons.append(f"{over_k} probes cite more than k={k} evidence messages: the oracle returns the first k")
        if starved:
            reasons.append(f"{starved} probes: the evidence does not all fit the {budget_tokens}-token budget")
        if wrong:
            text = f"{wrong} oracle answers are wrong even with the evidence in hand"
            causes = [f"{n} {_CAUSES[kind]}" for kind, n in causes_of.items() if n]
            text += (": " + "; ".join(causes) + "; the rest are the reader's or the judge's errors" if causes
                     else ": the reader's (or answer model's and judge's) errors, or gold that is wrong")
            reasons.append(text)
        out[source] = {"probes": len(group), "recall_at_k": _mean([r.recall_at_k for r in group]),
                       "recall_all_in_budget": _mean([r.recall_all_in_budget for r in group]),
                       "accuracy": _mean([r.correct for r in group if not r.abstention]),
                       "reasons": reasons}
    return out

"""Failure causes: one reason per scored probe, from Snapshot, provenance and gold (docs/failure-causes.md).

A wrong answer tells a memory team that something failed; the cause says where. Every scored
probe of every system gets exactly one cause from :data:`CAUSES`, decided in this precedence
(the first that applies wins):

1. ``fault``: the probe went unanswered because of a fault (crash, deadline, garbage reply).
2. ``correct``: the answer is right.
3. ``scope_leak``: a canary probe whose answer names the owner's private value (DRIFT §7.5).
4. ``no_provenance``: the system declares no provenance, or a hit cites nothing: where the
   evidence went cannot be traced.
5. Then each gold evidence message is followed down the pipeline, and the probe takes the
   earliest stage at which some evidence message stopped (the write path before the read path):

   - ``not_stored``: no Snapshot up to this checkpoint held the message's session;
   - ``lost``: an earlier checkpoint's Snapshot held it, this checkpoint's does not;
   - ``not_retrieved``: this checkpoint's Snapshot holds it, no hit in the top k carries it;
   - ``not_found``: the coarser cause for a system whose memory state is unknown (no Snapshot
     and no marker probing): not carried by the top k, stored or not;
   - ``out_of_budget``: a hit in the top k carries it, but only outside the budgeted context.
6. ``stale_in_context``: every evidence message is inside the budgeted context, and so is a hit
   still asserting a deprecated value (the last known value it mentions is stale).
7. ``reader``: the evidence is in the budgeted context (or the probe has no evidence, as for
   negative-recall probes) and the answer is still wrong.

"Held" and "carries" are the harness's own checks: a Snapshot holds a message when an item
cites it (or its session) and the item's text carries it (``stored_sessions`` and
``partial_sessions`` of the state record); when the state audit rejected the Snapshot, what
the audit's probes found, session by session. A hit carries a message when its carried ids
(:mod:`conformance.provenance`) name the message or its session.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from conformance.contract.gold import GoldFile, GoldProbe
from conformance.scoring.rows import ProbeRow, cited_ids, stale_in_budget

__all__ = ["CAUSES", "EVIDENCE_STAGES", "cause_counts", "probe_causes", "system_causes"]

CAUSES = ("fault", "correct", "scope_leak", "no_provenance", "not_stored", "lost", "not_retrieved", "not_found",
          "out_of_budget", "stale_in_context", "reader")
"""The fixed vocabulary, in precedence order."""

EVIDENCE_STAGES = ("not_stored", "lost", "not_retrieved", "not_found", "out_of_budget")
"""Where an evidence message can stop, earliest first (a probe takes the earliest of its messages)."""

Key = tuple[str, str, str]


def _held_by_checkpoint(state_records: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], list]:
    """(system, scenario) -> [(after_session, checkpoint_id, held sessions or None)], in stream order."""
    out: dict[tuple[str, str], list] = defaultdict(list)
    for r in state_records:
        if r.get("kind") != "state":
            continue
        held = r.get("stored_sessions")
        known = r.get("method") is not None and r.get("error") is None and held is not None
        out[(r["system"], r["scenario_id"])].append(
            (r.get("after_session", 0), r["checkpoint_id"],
             _Held(frozenset(held), {s: frozenset(ms) for s, ms in (r.get("partial_sessions") or {}).items()})
             if known else None))
    for states in out.values():
        states.sort(key=lambda s: s[0])
    return out


@dataclass(frozen=True)
class _Held:
    """What one checkpoint's memory held: sessions, and for the sessions held only in part, which
    messages (state records before ``partial_sessions`` existed hold whole sessions)."""

    sessions: frozenset[str]
    partial: dict[str, frozenset[str]]

    def holds(self, message_id: str, session_id: str) -> bool:
        if session_id not in self.sessions:
            return False
        return session_id not in self.partial or message_id in self.partial[session_id]


def _stage(message_id: str, session_id: str, held_now: _Held | None, held_before: list[_Held],
           in_top_k: set[str], in_budget: set[str]) -> str | None:
    """Where one evidence message stopped, or None when it reached the budgeted context."""
    if message_id in in_budget or session_id in in_budget:
        return None
    if message_id in in_top_k or session_id in in_top_k:
        return "out_of_budget"
    if held_now is None:
        return "not_found"
    if held_now.holds(message_id, session_id):
        return "not_retrieved"
    return "lost" if any(h.holds(message_id, session_id) for h in held_before) else "not_stored"


def _cause(row: ProbeRow, record: Mapping[str, Any] | None, probe: GoldProbe, sessions: Mapping[str, str],
           held_now: _Held | None, held_before: list[_Held]) -> str | None:
    if row.infra_failed:
        return "fault"
    if row.correct is None:
        return None  # free-form and not graded: not a scored probe
    if row.correct:
        return "correct"
    if row.leaked:
        return "scope_leak"
    hits = [] if record is None else list(record.get("hits") or [])
    if probe.evidence:
        if not record.get("provenance") or any(not hit.get("source_ids") for hit in hits if not hit.get("from_buffer")):
            return "no_provenance"
        in_top_k = {i for hit in hits if not hit.get("from_buffer") for i in cited_ids(hit)}
        in_budget = {i for hit in hits if hit.get("in_budget") for i in cited_ids(hit)}
        stages = {_stage(m, sessions[m], held_now, held_before, in_top_k, in_budget)
                  for m in dict.fromkeys(probe.evidence)}
        stages.discard(None)
        for stage in EVIDENCE_STAGES:
            if stage in stages:
                return stage
    if record is not None and stale_in_budget(record, probe):
        return "stale_in_context"
    return "reader"


def probe_causes(rows: Iterable[ProbeRow], records: Iterable[Mapping[str, Any]],
                 gold_by_scenario: Mapping[str, GoldFile],
                 session_of: Mapping[str, Mapping[str, str]]) -> dict[Key, str]:
    """One cause per scored probe: ``{(system, scenario_id, probe_id): cause}``.

    ``rows``: :func:`conformance.scoring.rows.build_probe_rows` over the same records (their
    ``correct``, ``leaked`` and ``infra_failed`` verdicts are reused). ``records``: the run
    records of one replicate (probe and state kinds are read; state records after the state
    audit, so a Snapshot the audit rejected is replaced by what the audit found).
    ``session_of[scenario][message_id]``: the session carrying each evidence message.
    Free-form probes without a grade get no cause (they are not scored).

    Raises KeyError when an evidence message is missing from ``session_of``.
    """
    records = list(records)
    probes = {(r["system"], r["scenario_id"], r["probe_id"]): r for r in records
              if r.get("kind") == "probe" and r.get("error") is None}
    held = _held_by_checkpoint(records)
    gold_probe = {(sid, p.probe_id): p for sid, g in gold_by_scenario.items() for p in g.probes}
    out: dict[Key, str] = {}
    for row in rows:
        key = (row.system, row.scenario_id, row.probe_id)
        probe = gold_probe[(row.scenario_id, row.probe_id)]
        held_now, held_before = None, []
        for _, checkpoint_id, state in held.get((row.system, row.scenario_id), []):
            if checkpoint_id == probe.checkpoint_id:
                held_now = state
                break
            if state is not None:
                held_before.append(state)
        cause = _cause(row, probes.get(key), probe, session_of.get(row.scenario_id, {}), held_now, held_before)
        if cause is not None:
            out[key] = cause
    return out


def cause_counts(rows: Iterable[ProbeRow], causes: Mapping[Key, str]) -> dict[str, Any]:
    """``{"counts": {cause: n}, "by_probe_type": {probe_type: {cause: n}}}`` over one system's rows;
    every cause of :data:`CAUSES` appears in ``counts`` (0 included), in precedence order."""
    counts: Counter = Counter()
    by_type: dict[str, Counter] = defaultdict(Counter)
    for row in rows:
        cause = causes.get((row.system, row.scenario_id, row.probe_id))
        if cause is None:
            continue
        counts[cause] += 1
        by_type[row.probe_type][cause] += 1
    return {"counts": {c: counts[c] for c in CAUSES},
            "by_probe_type": {t: {c: n for c in CAUSES if (n := by_type[t][c])} for t in sorted(by_type)}}


def system_causes(rows: list[ProbeRow], records: list[Mapping[str, Any]], gold_by_scenario: Mapping[str, GoldFile],
                  session_of: Mapping[str, Mapping[str, str]]):
    """One system's :class:`conformance.contract.result.FailureCauses` from its rows and its
    first replicate's records (see :func:`probe_causes`)."""
    from conformance.contract.result import FailureCauses

    causes = probe_causes(rows, records, gold_by_scenario, session_of)
    methods = Counter(r.get("method") for r in records if r.get("kind") == "state" and r.get("error") is None)
    basis = methods.most_common(1)[0][0] if methods else None
    return FailureCauses(**cause_counts(rows, causes), basis=basis)

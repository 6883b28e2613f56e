"""Per-probe rows: one scored line per (system, probe), built from run records and gold.

Every metric in :mod:`conformance.scoring.metrics` is a pure function over these rows
(or over the raw store/probe records for latencies). A row keeps the per-probe verdicts
as ``bool``/``float`` or ``None``; ``None`` always means "not measurable for this probe"
and is never replaced by a guess.

Run records are the dicts the runner writes to JSONL. A probe record carries at least
``kind == "probe"``, ``system``, ``scenario_id``, ``probe_id``, ``answer`` (str or None),
``provenance`` (bool), ``hits`` (list of dicts with ``text``, ``source_ids``,
``in_budget``), ``read_latency_ms`` and ``error`` (None, or a message when the call
failed for infrastructure reasons).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from conformance.contract.answer_text import last_option_in, normalize_answer
from conformance.contract.gold import GoldFile, GoldProbe

__all__ = ["ProbeRow", "build_probe_rows", "cited_ids", "stale_hit", "stale_in_budget"]


@dataclass(frozen=True)
class ProbeRow:
    """The verdicts for one probe asked of one system.

    ``correct`` is None for free-form probes (the record's answer is null);
    ``recall_at_k`` (0..1) and ``recall_all_in_budget`` are None when the probe has no
    gold evidence or the system's hits carry no usable provenance; ``update_correct``
    and ``deprecated`` are None except on revision probes (DRIFT §7.3).
    ``read_latency_ms`` is the Retrieve wall time in milliseconds (None if absent).
    """

    system: str
    scenario_id: str
    probe_id: str
    probe_type: str
    abstention: bool
    correct: bool | None
    recall_at_k: float | None
    recall_all_in_budget: bool | None
    is_revision: bool
    update_correct: bool | None
    deprecated: bool | None
    read_latency_ms: float | None
    checkpoint_id: str = ""
    horizon: str | None = None
    """The horizon the probe's checkpoint closes (DRIFT-C weights by it)."""
    leaked: bool | None = None
    """Canary probes only (DRIFT §7.5): True when the answer names the owner's private
    value (or, where gold does not say the value, any answer but the declining one)."""
    infra_failed: bool = False
    """The probe went unanswered because of a fault (labelled apart from a wrong answer)."""
    recall_any_at_k: bool | None = None
    """Some gold evidence message is carried by the top k hits (None where recall is)."""
    recall_all_at_k: bool | None = None
    """Every gold evidence message is carried by the top k hits (None where recall is)."""


def _is_correct(answer: str | None, probe: GoldProbe) -> bool | None:
    if answer is None:
        return None
    given = normalize_answer(answer)
    return any(given == normalize_answer(ok) for ok in (probe.answer, *probe.accepted))


def _covered(evidence: list[str], source_ids: set[str], sessions: Mapping[str, str],
             where: str) -> set[str]:
    """Evidence message ids named by ``source_ids`` directly or through their session."""
    covered = set()
    for message_id in evidence:
        if message_id not in sessions:
            raise ValueError(f"{where}: evidence message id {message_id!r} is not a message "
                             "of the scenario's fixture (session_of has no entry for it)")
        if message_id in source_ids or sessions[message_id] in source_ids:
            covered.add(message_id)
    return covered


def cited_ids(hit: Mapping[str, Any]) -> list[str]:
    """The message or session ids a hit record is credited with: its carried ids
    (:mod:`conformance.provenance`; records written before that rule keep their ``source_ids``),
    plus, under the summary gate (DRIFT §5.2), the messages a carried summary ``covers``."""
    ids = hit["carried"] if "carried" in hit else hit["source_ids"]
    if not hit.get("covers"):
        return list(ids)
    return [*ids, *hit["covers"]] if "carried" not in hit or hit["carried"] else list(ids)


def _recall(record: Mapping[str, Any], probe: GoldProbe, sessions: Mapping[str, str],
            where: str) -> tuple[float | None, bool | None]:
    """(recall@k, all evidence inside the budget) for one record, or (None, None)."""
    at_k, in_budget, _ = _recall_counts(record, probe, sessions, where)
    return at_k, in_budget


def _recall_counts(record: Mapping[str, Any], probe: GoldProbe, sessions: Mapping[str, str],
                   where: str) -> tuple[float | None, bool | None, int | None]:
    """(recall@k, all evidence inside the budget, evidence messages covered in the top k)."""
    if not probe.evidence or not record.get("provenance"):
        return None, None, None
    # Recall is the memory's: the soft gate's buffer hits (the harness's) are left out.
    hits = [hit for hit in record.get("hits") or [] if not hit.get("from_buffer")]
    if any(not hit.get("source_ids") for hit in hits):
        # One hit without provenance makes coverage unknowable: never guess.
        return None, None, None
    evidence = list(dict.fromkeys(probe.evidence))
    all_ids = {sid for hit in hits for sid in cited_ids(hit)}
    budget_ids = {sid for hit in hits if hit.get("in_budget") for sid in cited_ids(hit)}
    covered = len(_covered(evidence, all_ids, sessions, where))
    in_budget = len(_covered(evidence, budget_ids, sessions, where)) == len(evidence)
    return covered / len(evidence), in_budget, covered


def _deprecated(record: Mapping[str, Any], probe: GoldProbe) -> bool | None:
    """True when no in-budget hit still asserts a stale answer.

    A hit asserts a stale answer when, in some line of its text, the one of the probe's
    known values (gold answer, accepted variants, stale answers) mentioned last is stale:
    "moved from Lisbon to Porto" records the change and deprecates Lisbon; "I live in
    Lisbon" keeps the old belief alive. Judged per line, not per hit: several messages
    packed into one hit in time order ("I live in Lisbon" then "I live in Porto") would
    otherwise end on the newest value and deprecate the stale one still in the context.
    The last-mention rule is the reader's.
    """
    if not probe.stale:
        return None  # nothing was ever true before: deprecation is undefined
    return not any(stale_hit(hit, probe) for hit in record.get("hits") or [] if hit.get("in_budget"))


def stale_hit(hit: Mapping[str, Any], probe: GoldProbe) -> bool:
    """True when some line of the hit's text still asserts one of the probe's stale answers:
    of the probe's known values (gold answer, accepted variants, stale answers), the one it
    mentions last is stale (the rule of :func:`_deprecated`). False for probes with no stale answer."""
    if not probe.stale:
        return False
    known = [probe.answer, *probe.accepted, *probe.stale]
    stale = set(probe.stale)
    return any(last_option_in(line, known) in stale for line in (hit.get("text") or "").splitlines())


def stale_in_budget(record: Mapping[str, Any], probe: GoldProbe) -> bool:
    """True when some in-budget hit still asserts one of the probe's stale answers (see
    :func:`_deprecated`); False for probes with no stale answer."""
    return bool(probe.stale) and not _deprecated(record, probe)


def _leaked(answer: str | None, probe: GoldProbe, gold: GoldFile | None) -> bool | None:
    if probe.probe_type != "canary" or answer is None:
        return None
    truth = None
    if gold is not None and probe.owner and probe.attribute:
        truth = gold.snapshots.get(probe.checkpoint_id, {}).get(probe.owner, {}).get(probe.attribute)
    if truth is not None:
        return normalize_answer(answer) == normalize_answer(truth)
    return normalize_answer(answer) != normalize_answer(probe.answer)


def _row(system: str, record: Mapping[str, Any], probe: GoldProbe,
         sessions: Mapping[str, str], scenario_id: str, gold: GoldFile | None = None) -> ProbeRow:
    where = f"system {system!r}, scenario {scenario_id!r}, probe {probe.probe_id!r}"
    # An answer model's answers arrive graded (exact match, then the judge: conformance.llm.judge).
    grade = record.get("grade")
    correct = grade["correct"] if grade is not None else _is_correct(record.get("answer"), probe)
    at_k, in_budget, covered = _recall_counts(record, probe, sessions, where)
    revision = probe.probe_type == "revision"
    latency = record.get("read_latency_ms")
    return ProbeRow(
        system=system,
        scenario_id=scenario_id,
        probe_id=probe.probe_id,
        probe_type=probe.probe_type,
        abstention=probe.abstention,
        correct=correct,
        recall_at_k=at_k,
        recall_all_in_budget=in_budget,
        is_revision=revision,
        update_correct=correct if revision else None,
        deprecated=_deprecated(record, probe) if revision else None,
        read_latency_ms=None if latency is None else float(latency),
        checkpoint_id=probe.checkpoint_id,
        horizon=probe.horizon or record.get("horizon"),
        leaked=_leaked(record.get("answer"), probe, gold),
        recall_any_at_k=None if covered is None else covered > 0,
        recall_all_at_k=None if covered is None else covered == len(set(probe.evidence)),
    )


def _failed_row(system: str, record: Mapping[str, Any], probe: GoldProbe, scenario_id: str) -> ProbeRow:
    """A probe lost to a fault: failed, not dropped (see :func:`build_probe_rows`)."""
    # With an answer model every answer is graded, free-form ones too (the job marks them).
    closed = record.get("closed", True) or record.get("answer_scored", False)
    measurable = bool(probe.evidence) and bool(record.get("provenance"))
    revision = probe.probe_type == "revision"
    return ProbeRow(
        system=system, scenario_id=scenario_id, probe_id=probe.probe_id, probe_type=probe.probe_type,
        abstention=probe.abstention, correct=False if closed else None,
        recall_at_k=0.0 if measurable else None, recall_all_in_budget=False if measurable else None,
        recall_any_at_k=False if measurable else None, recall_all_at_k=False if measurable else None,
        is_revision=revision, update_correct=(False if closed else None) if revision else None,
        deprecated=None, read_latency_ms=None, checkpoint_id=probe.checkpoint_id,
        horizon=probe.horizon or record.get("horizon"), leaked=None, infra_failed=True)


_Key = tuple[str, str, str]
"""(system, scenario id, probe id)."""


def _probe_records(records: Iterable[Mapping[str, Any]]
                   ) -> tuple[dict[_Key, Mapping[str, Any]], dict[_Key, Mapping[str, Any]], set[str]]:
    """The probe records by key, successful and failed apart, and the systems that have any.

    Raises ValueError for two successful records of one probe.
    """
    ok: dict[_Key, Mapping[str, Any]] = {}
    failed: dict[_Key, Mapping[str, Any]] = {}
    systems: set[str] = set()
    for record in records:
        if record.get("kind") != "probe":
            continue
        system, scenario_id, probe_id = record["system"], record["scenario_id"], record["probe_id"]
        systems.add(system)
        key = (system, scenario_id, probe_id)
        if record.get("error") is not None:
            failed[key] = record
            continue
        if key in ok:
            raise ValueError(f"system {system!r}, scenario {scenario_id!r}, probe {probe_id!r}: "
                             "two successful probe records")
        ok[key] = record
    return ok, failed, systems


def build_probe_rows(records: Iterable[Mapping[str, Any]],
                     gold_by_scenario: Mapping[str, GoldFile],
                     session_of: Mapping[str, Mapping[str, str]]) -> list[ProbeRow]:
    """Score every gold probe for every system that has probe records.

    ``records``: run records (only ``kind == "probe"`` ones are used; store records are
    ignored). ``gold_by_scenario``: scenario id -> gold. ``session_of[scenario][message_id]``
    = the session id that carries the message (so session-level provenance covers every
    message of that session).

    Rules:

    - ``correct``: normalised answer (:func:`normalize_answer`) equals the normalised gold
      answer or an accepted variant; a null answer (free-form probe) gives None.
    - ``recall_at_k``: share of distinct gold evidence message ids covered by *all* hits
      (the runner already asked for k hits; k is a hit count); a message is covered when a
      hit's ``carried`` ids name it: the hit cites it (by message or session id) and its
      text, within the first ``budget_tokens`` tokens, carries the message's content
      (:mod:`conformance.provenance`, docs/audit.md); or (summary gate, DRIFT §5.2) when a
      hit carrying a summary has ``covers`` listing it. Records without ``carried`` (older
      runs) count every cited id. ``recall_any_at_k``: some evidence message is covered;
      ``recall_all_at_k``: every one is. ``recall_all_in_budget``: True iff every evidence id is covered by hits
      with ``in_budget`` true. Hits marked ``from_buffer`` (soft gate: the harness's
      buffer, not the memory) count in neither. Both are None when
      the probe has no evidence, the system does not declare provenance, or any hit has
      empty ``source_ids`` (comparison guide §7: recall only where measurable).
    - revision probes (DRIFT §7.3): ``update_correct = correct``; ``deprecated`` is True
      when no *in-budget* hit still asserts a stale gold answer (the last-mentioned known
      value of one of its lines is stale, whole word/phrase, see :func:`_deprecated`).
      Decision: DRIFT's "old belief no longer retrievable" is judged on the budgeted context
      the reader actually sees (soft-gate buffer hits included), so a stale fact ranked
      outside the budget does not count against the system. None when the gold lists no
      stale answer.

    Records with a non-null ``error`` are faults (a crash, a missed deadline, a garbage
    reply, or a probe not asked after one): their row counts as failed, never dropped,
    so every system keeps the same denominators: ``correct`` False for closed-answer
    probes (None for free-form ones), recall 0 where the system declares provenance,
    ``infra_failed`` True. A successful record for the same probe wins over a failed one.

    Returns rows sorted by system, then scenario id, then gold probe order.

    Raises ValueError when a system has no record (and no failed record) for a gold
    probe of any scenario in ``gold_by_scenario``, when two successful records exist for
    the same probe, when a record names a scenario or probe absent from gold, or when an
    evidence id is missing from ``session_of``.
    """
    ok, failed, systems = _probe_records(records)
    known = {(scenario_id, probe.probe_id)
             for scenario_id, gold in gold_by_scenario.items() for probe in gold.probes}
    for system, scenario_id, probe_id in sorted(ok.keys() | failed):
        if (scenario_id, probe_id) not in known:
            raise ValueError(f"system {system!r}, scenario {scenario_id!r}, probe {probe_id!r}: "
                             "record for a probe that is not in gold")

    rows: list[ProbeRow] = []
    for system in sorted(systems):
        for scenario_id in sorted(gold_by_scenario):
            gold = gold_by_scenario[scenario_id]
            sessions = session_of.get(scenario_id, {})
            for probe in gold.probes:
                key = (system, scenario_id, probe.probe_id)
                if key in ok:
                    rows.append(_row(system, ok[key], probe, sessions, scenario_id, gold))
                elif key in failed:
                    rows.append(_failed_row(system, failed[key], probe, scenario_id))
                else:
                    raise ValueError(f"system {system!r}, scenario {scenario_id!r}, "
                                     f"probe {probe.probe_id!r}: no probe record for a gold probe")
    return rows

"""Gold quality checks every importer runs on what it wrote (issue lists of the import report).

Public benchmarks ship doubtful gold; the suite reports it instead of scoring against it
blindly. The checks here need only the converted sessions and gold probes, so every
importer (LoCoMo, LongMemEval, the guide's JSONL cases, BEAM) shares them; checks that
need the source file (evidence naming nothing, date keys without sessions, integer
answers) stay in each importer, under the same issue kinds:

* ``answer_not_in_evidence``: a non-abstention probe with evidence whose normalised gold
  answer (or an accepted variant) occurs as a phrase in none of its evidence messages.
  Informational: paraphrased or computed answers ("3 weeks", a date sum) are legitimate;
  the list is where to look first when the oracle ceiling is low.
* ``garbled_answers``: an answer that is empty, has no letter or digit, holds control or
  replacement characters (U+FFFD), or exceeds :data:`MAX_ANSWER_CHARS` characters.

Each issue names the scenario, the probe id and the gold answer verbatim.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping

from conformance.contract.fixture import SessionLine
from conformance.contract.gold import GoldProbe
from conformance.importers.report import ImportIssue
from conformance.scoring.rows import contains_phrase

__all__ = ["QUALITY_KINDS", "MAX_ANSWER_CHARS", "gold_quality", "garbled_reason"]

QUALITY_KINDS = ("answer_not_in_evidence", "garbled_answers")
MAX_ANSWER_CHARS = 2000
"""Longer gold "answers" are passages, not answers: flagged (never changed)."""


def garbled_reason(answer: str) -> str | None:
    """Why ``answer`` looks garbled, or None when it looks like an answer."""
    if not answer.strip():
        return "empty answer"
    if "\ufffd" in answer:
        return "holds U+FFFD (bytes lost in a decoding step)"
    if any(unicodedata.category(ch) == "Cc" and ch not in "\n\t" for ch in answer):
        return "holds control characters"
    if not any(ch.isalnum() for ch in answer):
        return "no letter or digit"
    if len(answer) > MAX_ANSWER_CHARS:
        return f"{len(answer):,} characters (a passage, not an answer)"
    return None


def gold_quality(scenario_id: str, sessions: Iterable[SessionLine], probes: Iterable[GoldProbe],
                 location_of: Mapping[str, str] | None = None,
                 choice_probes: Iterable[str] = ()) -> dict[str, list[ImportIssue]]:
    """The :data:`QUALITY_KINDS` issue lists for one converted scenario.

    ``sessions``: the scenario's session lines (message texts are read here, at import
    time, never at run time); ``probes``: its gold probes; ``location_of``: probe id ->
    where the item sits in the source (e.g. ``qa[12]``), defaulting to the probe id.
    Abstention probes are checked for garbling only (their gold is a refusal), and so are
    ``choice_probes`` (ids of multiple-choice probes: their gold is a choice id, which no
    message states).
    """
    choices = set(choice_probes)
    text_of = {m.message_id: m.text for s in sessions for m in s.messages}
    where = dict(location_of or {})
    out: dict[str, list[ImportIssue]] = {kind: [] for kind in QUALITY_KINDS}
    for probe in probes:
        location = where.get(probe.probe_id, probe.probe_id)
        reason = garbled_reason(probe.answer)
        if reason and not probe.abstention:
            out["garbled_answers"].append(ImportIssue(
                scenario_id=scenario_id, location=f"{location}.answer", item_id=probe.probe_id,
                raw=probe.answer[:500], reason=reason, resolution="kept; listed for review"))
            continue
        if probe.abstention or not probe.evidence or probe.probe_id in choices:
            continue
        texts = [text_of[e] for e in probe.evidence if e in text_of]
        if not texts:
            continue
        if not any(contains_phrase(t, ok) for t in texts for ok in (probe.answer, *probe.accepted)):
            out["answer_not_in_evidence"].append(ImportIssue(
                scenario_id=scenario_id, location=f"{location}.answer", item_id=probe.probe_id,
                raw=probe.answer[:500], reason=f"the answer occurs in none of its {len(texts)} evidence messages",
                resolution="kept (may be paraphrased or computed); listed for review"))
    return out

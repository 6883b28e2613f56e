"""Gold quality checks every importer runs on what it wrote (issue lists of the import report).

Public benchmarks ship doubtful gold; the suite reports it instead of scoring against it
blindly. The checks here need only the converted sessions and gold probes, so every
importer (LoCoMo, LongMemEval, the guide's JSONL cases, BEAM) shares them; checks that
need the source file (evidence naming nothing, date keys without sessions, integer
answers) stay in each importer, under the same issue kinds:

* ``answer_not_in_evidence``: a non-abstention probe with evidence whose gold answer (and
  every accepted variant) is not supported by its evidence messages: some number of the
  answer (a token holding a digit) occurs in none of them, or none of its content words does
  (3+ characters, not an English function word), compared after
  :func:`~conformance.scoring.rows.normalize_answer`. An answer made only of short or function
  words must occur as a whole phrase instead. Informational: computed answers (a date worked
  out from "yesterday", a count) are legitimate, and are most of the list on temporal
  probes; elsewhere an item here is where to look first when the oracle ceiling is low.
  (On LoCoMo: 433 of 1,536 answerable items, 283 of them temporal; a phrase-level rule would
  flag 1,025, most of them paraphrases.)
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
from conformance.scoring.rows import contains_phrase, normalize_answer
from drift_sdk.summary import FUNCTION_WORDS

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


def content_words(text: str) -> tuple[list[str], list[str]]:
    """(numbers, words) of ``text`` that may carry a fact, normalised: tokens holding a digit,
    and other tokens of 3+ characters that are not English function words."""
    tokens = normalize_answer(text).split()
    numbers = [t for t in tokens if any(ch.isdigit() for ch in t)]
    words = [t for t in tokens if t not in numbers and len(t) >= 3 and t not in FUNCTION_WORDS]
    return numbers, words


def _supported(answer: str, texts: list[str]) -> bool:
    numbers, words = content_words(answer)
    if not numbers and not words:
        return any(contains_phrase(t, answer) for t in texts)
    seen = {w for t in texts for w in normalize_answer(t).split()}
    # Every number must be said (a changed digit is a different fact); some content word too.
    return all(n in seen for n in numbers) and (not words or any(w in seen for w in words))


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
        if not any(_supported(ok, texts) for ok in (probe.answer, *probe.accepted)):
            out["answer_not_in_evidence"].append(ImportIssue(
                scenario_id=scenario_id, location=f"{location}.answer", item_id=probe.probe_id,
                raw=probe.answer[:500], reason=f"the answer's numbers or content words occur in none of its "
                                               f"{len(texts)} evidence messages",
                resolution="kept (may be paraphrased or computed); listed for review"))
    return out

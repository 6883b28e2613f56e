"""Gold quality checks every importer runs on what it wrote (issue lists of the import report).

Public benchmarks ship doubtful gold; the suite reports it instead of scoring against it
blindly. The checks here need only the converted sessions, fixture probes and gold probes
(and, for ``answers_in_dropped_fields``, what the importer left out of each message), so
every importer (LoCoMo, LongMemEval, the guide's JSONL cases, BEAM) shares them; checks
that need the source file (evidence naming nothing, date keys without sessions, integer
answers) stay in each importer. Every check is informational: the item is kept and listed.
The counts below are on LoCoMo's ``locomo10.json`` (1,986 probes, 446 of them abstention),
measured with ``drift-conformance import locomo``; a sample of each list was read by hand.

* ``answer_not_in_evidence``: a non-abstention probe with evidence whose gold answer (and
  every accepted variant) is not supported by its evidence messages: some number of the
  answer (a token holding a digit) occurs in none of them, or none of its content words does
  (3+ characters, not an English function word), compared after
  :func:`~conformance.contract.answer_text.normalize_answer`. An answer made only of short or function
  words must occur as a whole phrase instead. Computed answers (a date worked
  out from "yesterday", a count) are legitimate, and are most of the list on temporal
  probes; elsewhere an item here is where to look first when the oracle ceiling is low.
  (On LoCoMo: 433 of 1,536 answerable items, 283 of them temporal; a phrase-level rule would
  flag 1,025, most of them paraphrases.)
* ``garbled_answers``: an answer that is empty, has no letter or digit, holds control or
  replacement characters (U+FFFD), or exceeds :data:`MAX_ANSWER_CHARS` characters; or whose
  words ran together or were cut (:func:`shape_reason`, :func:`run_together_reason`): words
  joined by ``,`` ``;`` or ``:`` without a space ("excitement,worry"; an acronym pair such
  as "CS:GO" excepted, 4 LoCoMo answers name that game); a number glued to a
  month or weekday name ("9June", "21Janury"); a last word that cannot end a phrase ("the",
  "and", "of", ...); the same word twice in a row; an unbalanced bracket or double quote;
  a word that is neither English (the word list of ``symspellpy``, with its inflections) nor
  in the scenario's messages or the question, but splits into two that are ("hisvideo",
  "agaming"; a capitalised word inside the answer, likely a name, only when one half is a
  function word: "Sunshineof"; a part must be common in the list or a word of the
  scenario, so a misspelling such as "metoring" does not split into "me toring"). On
  LoCoMo: 38 items (20 numbers glued to a month, 10 words joined by punctuation, 8 words
  run together), 35 of them in conversation conv-42, whose answers are typed without
  spaces throughout; on reading, 37 are garbled and 1 is a spelling ("roadtrip").
* ``stale_answers``: a knowledge-update probe (probe type ``knowledge_update``, or a
  question asking for the present: "now", "currently", "current", "latest", "most recent",
  "new", "still", "these days") whose gold answer is contradicted by a later message of
  the speaker whose evidence message states it, in a later session before the question:
  either the words just before the answer in that evidence message ("I live in" Lisbon)
  recur there followed by another content word ("I live in" Porto), or the answer is a
  number and the later message shares the question's content words (two, or all when the
  question has fewer; speaker names left out) with another number within three words of
  one of them ("my internet speed is 1 Gbps" after "500 Mbps"). A message that restates
  the gold answer is no contradiction. On LoCoMo: 0 items (its questions rarely ask for a
  present value; without that filter the rule flags 14, all fine on reading: "what picture
  did X share" items whose speaker shares other pictures later).
* ``date_contradictions``: a date or length a gold answer (or its question) gives that the
  evidence's session dates contradict (:mod:`conformance.importers.temporal` reads the
  expressions): an answer counted from a date ("the Friday before 15 July 2023") whose
  anchor is no evidence session's date, or that names another weekday than its evidence
  ("Sunday" for "last Saturday"), or whose span misses every time expression of its
  evidence; a date answer ("2021", "7 May 2023") that no time expression of its evidence
  allows, unless the evidence states it literally; a length ("15 weeks", "15" to "how many
  weeks") that no distance between the evidence messages' dates (or to the question date)
  matches within one unit, unless stated literally; a question that places the event ("in
  October 2023", or with a known question date "last Thursday") where its evidence's time
  expressions do not. Only the expressions of an evidence message's sentences that share
  the most content words with the question and answer count ("next month" in a sentence
  about something else does not date the event); a message without one dates nothing, and
  the date checks then say nothing, since it may date the event in words not read here
  ("seven years now"); a length counts such a message from its session's date. A day the
  question names may be the conversation's own and matches an evidence session's date. A
  length may miss by one unit or a fifth of itself. On LoCoMo: 10 items; on reading, 9
  are wrong gold (a Sunday for "last Saturday"; "October 2023" for "last month" said in
  October; "19 days" for a trip from the 11th to the 20th; January 2023 for a day before a
  session of January 2024) and 1 is arguable ("four months" for about three).
* ``answers_in_dropped_fields``: an answer its evidence messages' kept text does not
  support but a field the importer dropped from them does (LoCoMo's ``query`` and
  ``img_url`` of image turns; in LongMemEval, any turn field other than ``role``,
  ``content``, ``has_answer``). Each importer also names the fields it dropped, with
  counts, in the report's ``notes``. On LoCoMo: 3 items, all real (the image's search
  ``query`` names the movie or place; the turn's text and caption do not).
* ``empty_evidence``: an answerable probe left without evidence, because the source
  gives none or every id it gives was dropped (the oracle then hands over nothing and
  retrieval is undefined for it). On LoCoMo: 4 items, all with ``evidence: []`` in the source.

Each issue names the scenario, the probe id and the gold answer verbatim, and says why.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Mapping
from datetime import date, datetime, timedelta

from conformance.contract.fixture import Message, Probe, SessionLine
from conformance.contract.gold import GoldProbe
from conformance.importers import temporal
from conformance.importers.report import ImportIssue
from conformance.contract.answer_text import contains_phrase, normalize_answer
from drift_sdk.summary import FUNCTION_WORDS

__all__ = ["QUALITY_KINDS", "MAX_ANSWER_CHARS", "gold_quality", "garbled_reason", "shape_reason",
           "run_together_reason", "content_words"]

QUALITY_KINDS = ("answer_not_in_evidence", "garbled_answers", "stale_answers", "date_contradictions",
                 "answers_in_dropped_fields", "empty_evidence")
MAX_ANSWER_CHARS = 2000
"""Longer gold "answers" are passages, not answers: flagged (never changed)."""
KEPT = "kept; listed for review"


# --------------------------------------------------------------------------- garbled

def garbled_reason(answer: str) -> str | None:
    """Why ``answer`` looks garbled by its characters, or None (see :func:`shape_reason`
    for its words)."""
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


_JOINED = re.compile(r"([^\W\d_]{2,})([,;:])([^\W\d_]{2,})")
_MONTH_OR_DAY = tuple(sorted({name[:3] for name in (*temporal.MONTHS, *temporal.WEEKDAYS)}))
_GLUED = re.compile(r"\b\d{1,4}(?:st|nd|rd|th)?([A-Za-z]{3,})\b|\b([A-Za-z]{3,})\.?(\d{4})\b")
_DANGLING = frozenset({"a", "an", "the", "and", "or", "but", "nor", "of", "with", "my", "your", "their", "our",
                       "its", "whose", "than"})
"""Words no answer ends on ("a friend of his" may end on "his", so it is not here)."""
_REPEATED = re.compile(r"\b([^\W\d_]{2,})\s+\1\b", re.IGNORECASE)
_REPEAT_OK = frozenset({"had", "that", "is"})


def shape_reason(answer: str) -> str | None:
    """Why the words of ``answer`` look run together or cut, judged from the answer alone
    (module docstring), or None."""
    for joined in _JOINED.finditer(answer):
        if joined[2] == ":" and joined[1].isupper() and joined[3].isupper():
            continue  # an acronym such as "CS:GO"
        return f"words joined without a space ({joined.group(0)!r})"
    for match in _GLUED.finditer(answer):
        letters = (match[1] or match[2]).lower()
        if letters[:3] in _MONTH_OR_DAY and (match[1] or letters in temporal.MONTHS):
            return f"a number glued to a word ({match.group(0)!r})"
    tokens = normalize_answer(answer).split()
    if len(tokens) > 1 and tokens[-1] in _DANGLING:
        return f"ends on {tokens[-1]!r} (cut off?)"
    if re.search(r"[,;:(\[{-]\s*$", answer):
        return f"ends on {answer.rstrip()[-1]!r} (cut off?)"
    repeated = next((m for m in _REPEATED.finditer(answer) if m[1].lower() not in _REPEAT_OK), None)
    if repeated:
        return f"a word repeated ({repeated.group(0)!r})"
    for left, right in ("()", "[]"):
        if answer.count(left) != answer.count(right):
            return f"unbalanced {left}{right}"
    if answer.count('"') % 2:
        return "an unbalanced double quote"
    return None


@functools.cache
def english_words() -> dict[str, int]:
    """The 82,765 words of the English frequency list that ships with ``symspellpy``
    (lower case) -> their count in its corpus, loaded once."""
    from importlib.resources import files

    text = (files("symspellpy") / "frequency_dictionary_en_82_765.txt").read_text(encoding="utf-8")
    return {word: int(count) for word, _, count in (line.partition(" ") for line in text.splitlines() if line)}


COMMON_COUNT = 1_000_000
"""A part of a run-together word must be this common in the word list (or a word of the
scenario): rare entries ("toring") split misspellings ("metoring") into false pairs."""


_SUFFIXES = ("s", "es", "ed", "d", "ing", "er", "ers", "est", "ly", "ness", "ful")


def _is_word(token: str, known: Iterable[str] | Mapping) -> bool:
    words = english_words()
    if token in words or token in known:
        return True
    for suffix in _SUFFIXES:
        stem = token[: -len(suffix)]
        if token.endswith(suffix) and len(stem) >= 3:
            # "journalling" -> "journal", "traveling" -> "travel", "tried" -> "try".
            if stem in words or (stem[-1] == stem[-2] and stem[:-1] in words) or stem[:-1] + "y" in words:
                return True
    return False


def _is_common(part: str, known) -> bool:
    words = english_words()
    if part in known or words.get(part, 0) >= COMMON_COUNT:
        return True
    # An inflection the list lacks; short ones split misspellings ("toring" from "tor").
    return part not in words and len(part) >= 7 and _is_word(part, ())


def _split(token: str, known, capitalised: bool) -> tuple[str, str] | None:
    for j in range(1, len(token) - 1):
        left, right = token[:j], token[j:]
        if len(left) == 1 and left not in "ai":
            continue
        if not (_is_common(left, known) and _is_common(right, known)):
            continue
        if capitalised and not any(p in FUNCTION_WORDS and len(p) > 1 and p != "an" for p in (left, right)):
            continue
        return left, right
    return None


def run_together_reason(answer: str, known: Iterable[str] | Mapping) -> str | None:
    """The words of ``answer`` that ran together ("hisvideo" for "his video"), or None.

    ``known``: normalised words of the scenario's messages and the question, which count as
    words too (names, brands). A word of five or more letters is run together when it is
    neither English (:func:`english_words`, inflections included) nor known, but splits
    into two parts that are (a one-letter part only "a" or "i"). A capitalised word not at
    the start of a sentence is likely a name: it counts only when one part is a function word.
    """
    found = []
    sentence_start = True
    for raw in answer.split():
        # A word "excitement,worry" is shape_reason's; its parts are checked here.
        for part in re.split(r"[,;:]", raw):
            token = normalize_answer(part)
            capitalised = part[:1].isupper() and not sentence_start
            if part.strip("\"'([{"):
                sentence_start = False
            if len(token) >= 5 and token.isalpha() and token.isascii() and not _is_word(token, known):
                halves = _split(token, known, capitalised)
                if halves:
                    found.append(f"{token!r} ({halves[0]} {halves[1]})")
        sentence_start = raw.endswith((".", "!", "?"))
    return "words run together: " + ", ".join(found) if found else None


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


# --------------------------------------------------------------------------- the scenario

class _Scenario:
    """Messages of one scenario with their session dates, looked up by id."""

    def __init__(self, sessions: Iterable[SessionLine]):
        self.sessions = list(sessions)
        self.where: dict[str, tuple[int, int, Message]] = {}
        self.day: dict[int, date] = {}
        self.time: dict[int, datetime] = {}
        for s, session in enumerate(self.sessions):
            self.time[s] = _parse_time(session.time)
            self.day[s] = self.time[s].date()
            for m, message in enumerate(session.messages):
                self.where[message.message_id] = (s, m, message)
        self.names = {normalize_answer(n) for s in self.sessions for n in s.participants}

    @functools.cached_property
    def vocabulary(self) -> frozenset[str]:
        return frozenset(w for s in self.sessions for m in s.messages for w in normalize_answer(m.text).split())

    def evidence(self, probe: GoldProbe) -> list[tuple[int, int, Message]]:
        return [self.where[e] for e in probe.evidence if e in self.where]


def _parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _excerpt(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


# --------------------------------------------------------------------------- stale answers

_PRESENT = re.compile(r"\b(?:now|currently|current|latest|most recent|still|these days|at the moment|"
                      r"at present|presently)\b", re.IGNORECASE)
_UPDATE_TYPES = frozenset({"knowledge_update"})


def _is_content(token: str) -> bool:
    return len(token) >= 3 and token.isalpha() and token not in FUNCTION_WORDS


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _sentences(text: str) -> list[str]:
    return [t for t in _SENTENCE_END.split(text) if t.strip()]


def _is_year_or_time(token: str) -> bool:
    return ":" in token or (token.isdigit() and len(token) == 4 and 1900 <= int(token) <= 2100)


def _stale_reason(probe: GoldProbe, question: str, asked: datetime | None, scenario: _Scenario) -> str | None:
    if probe.probe_type not in _UPDATE_TYPES and not _PRESENT.search(question):
        return None
    stating = [(s, m, msg) for s, m, msg in scenario.evidence(probe) if _supported(probe.answer, [msg.text])]
    if not stating:
        return None
    s0, _, source = max(stating, key=lambda item: (scenario.time[item[0]], item[1]))
    numbers, _ = content_words(probe.answer)
    numbers = [n for n in numbers if not _is_year_or_time(n)]
    answer_tokens = normalize_answer(probe.answer).split()
    question_words = [w for w in dict.fromkeys(content_words(question)[1]) if w not in scenario.names]
    cue = next((c for c in (_cue(normalize_answer(t).split(), answer_tokens) for t in _sentences(source.text)) if c),
               None)
    for s in range(len(scenario.sessions)):
        if scenario.time[s] <= scenario.time[s0] or (asked is not None and scenario.time[s] > asked):
            continue
        for later in scenario.sessions[s].messages:
            # Both rules need a question word; a substring test is cheap and misses none.
            lower = later.text.casefold()
            if later.author != source.author or not any(w in lower for w in question_words):
                continue
            tokens = normalize_answer(later.text).split()
            if any(_has_run(tokens, normalize_answer(ok).split()) for ok in (probe.answer, *probe.accepted)):
                continue
            said = _new_number(tokens, numbers, question_words, answer_tokens) if numbers else None
            if not said and cue and set(question_words) & set(tokens):
                said = _after_cue(tokens, cue, answer_tokens)
            if said:
                return (f"{later.message_id} ({scenario.day[s].isoformat()}), a later session of the same speaker, "
                        f"says {said!r}: \"{_excerpt(later.text)}\"; the gold answer comes from "
                        f"{source.message_id} ({scenario.day[s0].isoformat()})")
    return None


def _has_run(tokens: list[str], run: list[str]) -> bool:
    n = len(run)
    return n > 0 and any(tokens[i:i + n] == run for i in range(len(tokens) - n + 1))


def _cue(tokens: list[str], answer: list[str]) -> list[str] | None:
    """The (up to) three words before the answer's last occurrence in ``tokens``, when they
    hold a content word."""
    n = len(answer)
    for i in range(len(tokens) - n, 0, -1):
        if tokens[i:i + n] == answer:
            cue = tokens[max(0, i - 3):i]
            if any(_is_content(t) for t in cue):
                return cue
            return None
    return None


def _after_cue(tokens: list[str], cue: list[str], answer: list[str]) -> str | None:
    n = len(cue)
    for i in range(len(tokens) - n):
        value = tokens[i + n]
        if tokens[i:i + n] == cue and value != answer[0] and _is_content(value):
            return " ".join(tokens[i:i + n + 1])
    return None


def _new_number(tokens: list[str], numbers: list[str], question_words: list[str], answer: list[str]) -> str | None:
    if not question_words:
        return None
    shared = set(question_words) & set(tokens)
    if len(shared) < min(2, len(question_words)):
        return None
    units = {answer[i + 1] for i, t in enumerate(answer[:-1]) if t in numbers}
    anchors = [i for i, t in enumerate(tokens) if t in shared or t in units]
    for i, token in enumerate(tokens):
        if any(ch.isdigit() for ch in token) and token not in numbers and not _is_year_or_time(token) \
                and any(abs(i - a) <= 3 for a in anchors):
            return " ".join(tokens[i:i + 2])
    return None


# --------------------------------------------------------------------------- dates

def _stated(texts: list[str], fragment: str) -> bool:
    """True when some text says ``fragment`` (digits or number words alike)."""
    variants = {fragment}
    for word, n in temporal.NUMBERS.items():
        if len(word) > 2:
            variants |= {re.sub(rf"\b{n}\b", word, fragment), re.sub(rf"\b{word}\b", str(n), fragment)}
    cleaned = [temporal.date_text(t) for t in texts]
    return any(contains_phrase(t, v) for t in cleaned for v in variants if v)


def _event_spans(scenario: _Scenario, evidence, words: set[str], past: bool = False):
    """Per evidence message, the spans its time expressions give the event: those of the
    sentences sharing the most of ``words`` (the question's and answer's content words).
    A list of (span, weekday, message id, session day); a message whose best sentences
    hold no expression (or which shares no word) gives none: it does not date the event."""
    out = []
    for s, _, message in evidence:
        day = scenario.day[s]
        scored = [(len(words & set(normalize_answer(t).split())), t) for t in _sentences(message.text)]
        best = max((score for score, _ in scored), default=0)
        for score, sentence in scored:
            if best and score == best:
                out.extend(((a, b), weekday, message.message_id, day)
                           for a, b, weekday in temporal.message_spans(sentence, day, past))
    return out


DURATION_SLACK = 0.2
"""A length may miss the dates' distance by one of its units or a fifth of itself."""


def _describe(events) -> str:
    return "; ".join(f"{mid} (session {day.isoformat()}): {temporal.fmt(span)}" for span, _, mid, day in events[:4])


def _date_reason(probe: GoldProbe, question: str, asked: datetime | None, scenario: _Scenario) -> str | None:
    evidence = scenario.evidence(probe)
    if not evidence:
        return None
    texts = [m.text for _, _, m in evidence]
    words = {w for text in (question, probe.answer) for w in content_words(text)[1]} - scenario.names
    events = _event_spans(scenario, evidence, words)
    days = sorted({scenario.day[s] for s, _, _ in evidence})
    said = temporal.answer_span(probe.answer)
    # Every evidence message must date the event by an expression: one that does not may be
    # the one that dates it, in words this does not read ("for ten years now").
    dates_all = {mid for _, _, mid, _ in events} == {m.message_id for _, _, m in evidence}
    if said is not None and said.anchor is not None:
        return _anchored(said, events, days)
    if said is not None and dates_all and not _stated(texts, said.text):
        if not any(temporal.overlaps(said.span, span) for span, *_ in events):
            return (f"the answer says {said.text!r} ({temporal.fmt(said.span)}); its evidence dates the event "
                    f"to {_describe(events)}")
    length = temporal.duration_days(probe.answer, question)
    if length is not None:
        reason = _duration(probe.answer, length, texts, events, evidence, scenario, asked)
        if reason:
            return reason
    past = _event_spans(scenario, evidence, words, past=True)
    if {mid for _, _, mid, _ in past} != {m.message_id for _, _, m in evidence}:
        return None
    for place in temporal.question_spans(question, asked.date() if asked else None):
        # A day the question names may be the conversation's ("what did X say on 9 June?").
        if place.span[0] == place.span[1] and place.anchor is None and any(
                temporal.overlaps(place.span, (d, d)) for d in days):
            continue
        # A relative expression ("last Thursday") means another day in the question than in a
        # message of another date, even when both say it.
        stated = place.anchor is None and _stated(texts, place.text)
        if not stated and not any(temporal.overlaps(place.span, span) for span, *_ in past):
            return (f"the question places the event at {place.text!r} ({temporal.fmt(place.span)}); its "
                    f"evidence dates it to {_describe(past)}")
    return None


def _anchored(said: temporal.AnswerDate, events, days: list[date]) -> str | None:
    anchor = said.anchor
    if not any(abs((anchor - d).days) <= 1 for d in days):
        return (f"the answer counts from {anchor.isoformat()} ({said.text!r}), but its evidence sessions are "
                f"dated {', '.join(d.isoformat() for d in days[:4])}")
    here = [e for e in events if abs((anchor - e[3]).days) <= 1]
    named = [e for e in here if e[1] is not None]
    if said.weekday is not None and named and all(e[1] != said.weekday for e in named):
        return (f"the answer names a {temporal.WEEKDAY_NAMES[said.weekday]}; its evidence {named[0][2]} says "
                f"{temporal.WEEKDAY_NAMES[named[0][1]]} ({temporal.fmt(named[0][0])})")
    if said.weekday is None and here and not any(temporal.overlaps(said.span, e[0]) for e in here):
        return f"the answer means {temporal.fmt(said.span)}; its evidence dates the event to {_describe(here)}"
    return None


def _duration(answer: str, length: tuple[int, int], texts: list[str], events, evidence, scenario: _Scenario,
              asked: datetime | None) -> str | None:
    days, unit = length
    head = " ".join(temporal.date_text(answer).split()[:2])
    if _stated(texts, head) or _stated(texts, head.split()[0] + " " + {1: "days", 7: "weeks", 30: "months",
                                                                        365: "years"}[unit]):
        return None
    # A message that does not date the event by an expression dates it by its session.
    points = [(span, mid) for span, _, mid, _ in events]
    dated = {mid for _, mid in points}
    points += [((scenario.day[s], scenario.day[s]), m.message_id) for s, _, m in evidence if m.message_id not in dated]
    if asked is not None:
        points.append(((asked.date(), asked.date()), "the question"))
    distances = []
    for i, (a, who_a) in enumerate(points):
        for b, who_b in points[i + 1:]:
            if who_a == who_b:
                continue
            low = max(0, (b[0] - a[1]).days, (a[0] - b[1]).days)
            high = max(abs((b[1] - a[0]).days), abs((a[1] - b[0]).days))
            distances.append((low, high, who_a, who_b))
    if not distances:
        return None
    slack = max(unit, round(days * DURATION_SLACK))
    if any(low - slack <= days <= high + slack for low, high, _, _ in distances):
        return None
    text = "; ".join(f"{a} to {b}: {low} days" if low == high else f"{a} to {b}: {low}-{high} days"
                     for low, high, a, b in distances[:4])
    return f"the answer means about {days} days; the evidence dates are {text} apart"


# --------------------------------------------------------------------------- the checks

def _issue(scenario_id: str, location: str, probe: GoldProbe, reason: str, field: str = "answer",
           resolution: str = KEPT) -> ImportIssue:
    return ImportIssue(scenario_id=scenario_id, location=f"{location}.{field}", item_id=probe.probe_id,
                       raw=probe.answer[:500], reason=reason, resolution=resolution)


def gold_quality(scenario_id: str, sessions: Iterable[SessionLine], probes: Iterable[GoldProbe],
                 location_of: Mapping[str, str] | None = None, choice_probes: Iterable[str] = (), *,
                 questions: Iterable[Probe] = (), question_dates: bool = True,
                 dropped: Mapping[str, Mapping[str, str]] | None = None,
                 cited: Mapping[str, int] | None = None) -> dict[str, list[ImportIssue]]:
    """The :data:`QUALITY_KINDS` issue lists for one converted scenario (module docstring).

    ``sessions``: the scenario's session lines (message texts are read here, at import
    time, never at run time); ``probes``: its gold probes; ``location_of``: probe id ->
    where the item sits in the source (e.g. ``qa[12]``), defaulting to the probe id.
    Abstention probes are checked for garbling only (their gold is a refusal), and so are
    ``choice_probes`` (ids of multiple-choice probes: their gold is a choice id, which no
    message states). ``questions``: the fixture probes (query text and ``asked_at``);
    ``question_dates``: False when the source gives no question date (LoCoMo: ``asked_at``
    is the importer's choice, so no relative expression of a question is resolved against
    it). ``dropped``: message id -> {source field: text} the importer left out of the
    message; ``cited``: probe id -> how many evidence references the source gave.
    """
    choices = set(choice_probes)
    scenario = _Scenario(sessions)
    asked = {p.probe_id: (p.query, _parse_time(p.asked_at) if question_dates else None) for p in questions}
    where = dict(location_of or {})
    out: dict[str, list[ImportIssue]] = {kind: [] for kind in QUALITY_KINDS}
    for probe in probes:
        location = where.get(probe.probe_id, probe.probe_id)
        question, asked_at = asked.get(probe.probe_id, ("", None))
        reason = garbled_reason(probe.answer)
        if reason and not probe.abstention:
            out["garbled_answers"].append(_issue(scenario_id, location, probe, reason))
            continue
        if probe.abstention or probe.probe_id in choices:
            continue
        reason = shape_reason(probe.answer) or _run_together(probe.answer, question, scenario)
        if reason:
            out["garbled_answers"].append(_issue(scenario_id, location, probe, reason))
        if not probe.evidence:
            given = (cited or {}).get(probe.probe_id, 0)
            out["empty_evidence"].append(_issue(
                scenario_id, location, probe, "the source gives no evidence for it" if not given else
                f"the source gives {given} evidence reference{'s' if given > 1 else ''}, all dropped: none names "
                "a usable message (see the importer's evidence lists)", field="evidence",
                resolution="kept; the oracle hands over nothing and retrieval is n/a for it"))
            continue
        evidence = scenario.evidence(probe)
        texts = [m.text for _, _, m in evidence]
        if not texts:
            continue
        supported = any(_supported(ok, texts) for ok in (probe.answer, *probe.accepted))
        if not supported:
            out["answer_not_in_evidence"].append(_issue(
                scenario_id, location, probe, f"the answer's numbers or content words occur in none of its "
                                              f"{len(texts)} evidence messages",
                resolution="kept (may be paraphrased or computed); listed for review"))
            reason = _dropped_reason(probe, evidence, dropped or {}, scenario)
            if reason:
                out["answers_in_dropped_fields"].append(_issue(scenario_id, location, probe, reason))
        reason = _stale_reason(probe, question, asked_at, scenario)
        if reason:
            out["stale_answers"].append(_issue(scenario_id, location, probe, reason))
        reason = _date_reason(probe, question, asked_at, scenario)
        if reason:
            out["date_contradictions"].append(_issue(scenario_id, location, probe, reason))
    return out


def _run_together(answer: str, question: str, scenario: _Scenario) -> str | None:
    # The scenario's vocabulary is built only when the answer has a word English lacks.
    if all(_is_word(t, ()) or not t.isalpha() for t in normalize_answer(answer).split() if len(t) >= 5):
        return None
    known = scenario.vocabulary | set(normalize_answer(question).split())
    return run_together_reason(answer, known)


def _dropped_reason(probe: GoldProbe, evidence, dropped: Mapping[str, Mapping[str, str]],
                    scenario: _Scenario) -> str | None:
    fields = {(m.message_id, name): text for _, _, m in evidence for name, text in dropped.get(m.message_id, {}).items()}
    hits = sorted({key for key, text in fields.items()
                   if any(_supported(ok, [text]) for ok in (probe.answer, *probe.accepted))})
    if not hits:
        return None
    elsewhere = next((m.message_id for s in scenario.sessions for m in s.messages
                      if contains_phrase(m.text, probe.answer)), None)
    named = ", ".join(f"{name} of {mid}" for mid, name in hits[:4])
    return (f"found in the dropped field {named}, in none of its evidence's kept text"
            + (f" (message {elsewhere} says it)" if elsewhere else " nor in any other message"))

"""The comparison guide's JSON Lines case format: import it into fixtures + gold, export a corpus to it.

The format
==========

One case per line (JSON Lines, UTF-8)::

    {"case_id": str,
     "sessions": [{"session_id": str, "timestamp": RFC 3339,
                   "turns": [{"turn_id": str, "role": "user" | "assistant", "text": str}, ...]}, ...],
     "questions": [{"qid": str, "type": str, "asked_at": date or RFC 3339, "question": str,
                    "gold_answer": str, "evidence": [turn_id, ...]}, ...]}

A case is a series of timestamped sessions and the questions asked about them; each
question names the turns that hold its answer (``evidence``), so retrieval can be scored
apart from answering. A question of type ``abstention`` has no answer in the sessions.

Import (:func:`import_guide`)
=============================

One scenario per case, ``fixtures/<id>.jsonl`` + ``gold/<id>.json`` + ``import-report.json``.
Decisions (also in the report's ``notes``):

* Ids. The scenario id is ``case_id`` made file-safe (:func:`sanitise_id`, no colons, at
  most :data:`SCENARIO_ID_CHARS` characters) and unique ignoring case (``-2``, ``-3``...
  appended); session, message and probe ids are ``session_id``, ``turn_id`` and ``qid``
  made valid fixture ids and unique within the case. A missing id is generated
  (``case-line-<N>``, ``s<i>``, ``<session>-t<j>``, ``<scenario>-q<i>``); a renamed,
  generated or repeated id is listed. Evidence naming a repeated ``turn_id`` means its
  first turn.
* Time. A session ``timestamp`` with a UTC offset is kept verbatim; one without an offset
  (or a bare date, taken as midnight) is read as UTC and listed; an unparseable one becomes
  one minute after the previous session of the line (before the earliest dated session
  when it is the first; 2000-01-01 UTC when no session has a date) and is listed. Sessions
  are indexed in time order (line order breaks ties); a case whose sessions are out of time
  order is listed. Turns are 30 s apart from their session's start.
* Paradigm. ``user_assistant`` when turns carry only ``user``, ``assistant`` or ``system``
  roles; ``coding_agent`` when some turn has the role ``agent`` or ``tool`` (an agent at
  work with tools: the nearest paradigm to the guide's engineering assistant). A role that
  is no fixture role is read as ``user`` and listed. Each role speaking is one entity
  (``user`` human, ``assistant`` assistant_agent, ``agent`` coding_agent, ``tool``
  tool_agent, ``system`` system); probes are asked by ``assistant`` (``agent`` for
  ``coding_agent``). Every message is ``shared``. ``free_form`` is true: the questions
  have no closed answer domain, so hermetic runs score retrieval only.
* Checkpoints. A question asked at ``asked_at`` is asked after the last session whose
  ``timestamp`` is not later than it; questions asked after the same session share one
  checkpoint (``<scenario>-c<n>``, horizon :func:`horizon_for` of the sessions stored), so a
  question asked before later sessions gives a checkpoint in the middle of the stream. A
  bare date means the end of that day (23:59:59 UTC), so that day's sessions come before
  it. A question asked before the first session is moved after it (its ``asked_at`` set to
  the last turn of that session) and listed; an unparseable ``asked_at`` becomes one day
  after the latest session and is listed.
* Gold. ``type`` is the probe type (``uncategorised`` when missing). A question is an
  abstention when its type is ``abstention`` or its gold answer declines ("I don't know",
  "unknown"); its gold answer is then ``unknown`` (the suite's decline) and the source's
  wording is accepted too. A number as gold answer is kept as text and listed; a missing
  one is kept empty and listed. Evidence turn ids become message ids; an id naming no turn
  of the case, or a turn said after the question is asked, is dropped and listed.
* Quality. :func:`conformance.importers.quality.gold_quality` runs on every scenario; its
  lists join the report's issues.

Issues never raise: each bad item is listed under one of :data:`ISSUE_KINDS` with a
location such as ``line 3: questions[1].evidence[0]`` (the 1-based line of the file, then
the path inside the case): ``malformed_lines`` (not a JSON object, too long),
``malformed_records`` (a wrong shape, a missing or renamed id, an unknown role, an
over-long text), ``malformed_extras`` (a ``drift`` object that does not validate),
``duplicate_ids``, ``unparseable_timestamps``, ``naive_timestamps`` (no UTC offset),
``order_changes``, ``early_questions``, ``dangling_evidence``, ``future_evidence``,
``integer_answers``, ``missing_answers``, and the quality lists. A line that is not a JSON
object (or is longer than :data:`MAX_CASE_LINE_BYTES`) is skipped. The file is read line by
line; only one case is held at a time.

Extensions: the ``drift`` keys
==============================

The guide format has no place for much of a corpus (authors, scopes, closed answer
options, stale answers, the gold file's latent state...). :func:`export_guide` writes them
in optional ``drift`` objects, which a reader of the plain format ignores, and the
importer reads them when present, so that export then import gives back the same files
byte for byte. A case without them (a plain guide file) imports with the rules above.

* case ``drift``: ``header`` (the fixture header's ``schema_version``, ``paradigm``,
  ``source``, ``horizons``, ``entities``, ``holdout``, ``splits``, ``free_form``,
  ``markers``), ``gold`` (the gold file's ``schema_version``, ``source``, ``seed``,
  ``profiles``, ``session_tiers``, ``events``, ``snapshots``) and ``checkpoints`` (a list
  of ``{checkpoint_id, after_session, horizon}`` in fixture order, empty ones included);
* session ``drift``: ``participants``;
* turn ``drift``: ``author``, ``timestamp``, ``scope``, and ``role`` when the fixture role
  is not the guide role (the export writes ``user`` for the role ``user`` and
  ``assistant`` for every other role);
* question ``drift``: the fixture probe's ``asked_by``, ``options``, ``choices``,
  ``domains``, ``temporal``; the gold probe's ``checkpoint_id``, ``subtype``,
  ``abstention``, ``accepted``, ``stale``, ``attribute``, ``entity``, ``owner``,
  ``horizon``.

Each value read from a ``drift`` object replaces what the plain rules give; when one
``drift`` object does not validate, it is ignored as a whole, listed under
``malformed_extras``, and the plain rules apply to that item. Checkpoint extensions are
used only when every question of the case names one of them; header markers only when
they meet the fixture's marker rules. When a question's ``drift`` gives ``abstention``,
its gold answer is kept verbatim (no rewrite to ``unknown``). Unknown ``drift`` keys are
ignored.

Export (:func:`export_guide`)
=============================

One case per selected scenario, in scenario id order; sessions, turns and questions in
fixture order; every object serialised as canonical JSON (sorted keys, compact) inside a
case whose keys are ``case_id``, ``sessions``, ``questions``, ``drift`` in that order. The
fixture is streamed: only the current session, the questions and the gold file are held.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import re
import statistics
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pydantic import BaseModel, ValidationError

from conformance import paths
from conformance.contract.corpus import CorpusError, canonical_json, iter_fixture, read_gold, write_fixture, write_gold
from conformance.contract.fixture import (
    CheckpointLine,
    EntityRef,
    HeaderLine,
    HorizonPhase,
    Message,
    Probe,
    SessionLine,
)
from conformance.contract.gold import GoldFile, GoldProbe
from conformance.contract.limits import (
    MAX_JSONL_LINE_BYTES,
    MAX_MESSAGE_TEXT_CHARS,
    MAX_QUERY_CHARS,
    BadDocument,
    human,
    parse_json,
)
from conformance.errors import DriftError
from conformance.importers.locomo import SCENARIO_ID_CHARS, horizon_for, rfc3339, sanitise_id
from conformance.importers.report import (
    REPORT_FILE,
    ImportIssue,
    ImportReport,
    SourceFormatError,
    format_report,
    write_report,
)

if TYPE_CHECKING:
    from conformance.contract.corpus import Selection

__all__ = [
    "import_guide", "export_guide", "export_selection", "parse_guide_time",
    "ISSUE_KINDS", "MAX_CASE_LINE_BYTES", "EXTRAS_KEY", "GuideExportError", "format_report",
]

SOURCE = "guide"
EXTRAS_KEY = "drift"
MAX_CASE_LINE_BYTES = MAX_JSONL_LINE_BYTES
"""One case (one line of the guide file), in bytes: the fixture line bound (16 MiB). A case
is a whole scenario; the longest committed scenario exports to about 1.5 MiB."""

ISSUE_KINDS = (
    "malformed_lines", "malformed_records", "malformed_extras", "duplicate_ids", "unparseable_timestamps",
    "naive_timestamps", "order_changes", "early_questions", "dangling_evidence", "future_evidence",
    "integer_answers", "missing_answers",
)
"""The importer's own lists of :attr:`ImportReport.issues`; the report also holds the
quality lists (:data:`conformance.importers.quality.QUALITY_KINDS`). All are present, empty
ones included."""

ABSTENTION_TYPES = ("abstention",)
DECLINES = frozenset({"i don't know", "i do not know", "i dont know", "unknown"})
"""Gold answers that decline to answer, as :func:`conformance.contract.answer_text.normalize_answer` gives them."""
UNKNOWN = "unknown"
UNCATEGORISED = "uncategorised"

ROLE_ORDER = ("user", "assistant", "agent", "tool", "system")
ENTITY_TYPES = {"user": "human", "assistant": "assistant_agent", "agent": "coding_agent", "tool": "tool_agent",
                "system": "system"}
AGENT_ROLES = frozenset({"agent", "tool"})

TURN_STEP = timedelta(seconds=30)
FALLBACK_STEP = timedelta(minutes=1)
LATE_QUESTION = timedelta(days=1)
FALLBACK_ANCHOR = datetime(2000, 1, 1, tzinfo=timezone.utc)
EARLIEST, LATEST = datetime(1000, 1, 1, tzinfo=timezone.utc), datetime(9000, 1, 1, tzinfo=timezone.utc)
DEFAULT_GAP_HOURS = 24.0
MAX_TIME_TEXT = 64
MAX_RAW_CHARS = 500
"""An issue's ``raw`` value is cut to this many characters (a whole session is no useful raw)."""

HEADER_EXTRAS = ("schema_version", "paradigm", "source", "horizons", "entities", "holdout", "splits", "free_form",
                 "markers")
GOLD_FILE_EXTRAS = ("schema_version", "source", "seed", "profiles", "session_tiers", "events", "snapshots")
SESSION_EXTRAS = ("participants",)
TURN_EXTRAS = ("author", "timestamp", "scope", "role")
PROBE_EXTRAS = ("asked_by", "options", "choices", "domains", "temporal")
GOLD_PROBE_EXTRAS = ("subtype", "abstention", "accepted", "stale", "attribute", "entity", "owner", "horizon")
CHECKPOINT_KEY = "checkpoint_id"

NOTES = [
    "one scenario per case: case_id made file-safe and unique; session, turn and question ids kept "
    "(made valid ids, unique within the case)",
    "session timestamps kept verbatim when they carry a UTC offset; sessions indexed in time order; "
    "turns 30 s apart from their session's start",
    "paradigm user_assistant (coding_agent when a turn has the role agent or tool); probes asked by the "
    "assistant (the agent); all messages shared; free_form",
    "questions grouped into checkpoints after the last session not later than asked_at; a bare date means "
    "23:59:59 UTC that day",
    "abstention: type 'abstention' or a declining gold answer ('I don't know', 'unknown'): gold 'unknown', "
    "the source wording accepted",
    "evidence turn ids become message ids; ids naming no turn, or a turn said after the question, are dropped",
    "optional 'drift' objects (written by the export) restore every corpus field the guide format lacks",
]

_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")
_WORD = re.compile(r"\w+")
_MISSING = object()


class GuideExportError(DriftError):
    """A scenario cannot be exported (its case would exceed :data:`MAX_CASE_LINE_BYTES`)."""


# ---- small helpers ----------------------------------------------------------------------

def parse_guide_time(value: object, *, end_of_day: bool = False) -> tuple[datetime | None, str | None, str | None]:
    """Read a guide timestamp: ``(moment, fixture text, problem)``.

    * A text the fixture accepts (RFC 3339 / ISO 8601 with a UTC offset): its aware moment,
      the text verbatim, no problem.
    * A bare date (``2026-06-01``): midnight UTC, or 23:59:59 UTC with ``end_of_day``; text
      in RFC 3339 (``2026-06-01T23:59:59Z``); problem None with ``end_of_day`` (the guide
      allows dates for ``asked_at``), else a note that it was read as midnight.
    * A time without an offset: read as UTC; text in RFC 3339; the problem says so.
    * Anything else (not a text, unparseable, outside the years 1000-8999): ``(None, None, reason)``.

    A returned moment is always timezone-aware. Never raises.
    """
    if value is None:
        return None, None, "missing"
    if not isinstance(value, str):
        return None, None, f"not a text ({type(value).__name__})"
    if len(value) > MAX_TIME_TEXT:
        return None, None, f"longer than {MAX_TIME_TEXT} characters"
    try:
        parsed: datetime | None = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        parsed = None
    if parsed is not None and parsed.tzinfo is not None:
        return _in_range(parsed, value, None)
    text = value.strip()
    if _DATE_ONLY.fullmatch(text):
        try:
            day = date.fromisoformat(text)
        except ValueError:
            return None, None, "not a valid date"
        moment = datetime(day.year, day.month, day.day, 23, 59, 59, tzinfo=timezone.utc) if end_of_day else \
            datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
        return _in_range(moment, None, None if end_of_day else "a date without a time: read as midnight UTC")
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None, None, "not an RFC 3339 time"
    if parsed.tzinfo is None:
        return _in_range(parsed.replace(tzinfo=timezone.utc), None, "no UTC offset: read as UTC")
    return _in_range(parsed, None, "surrounding spaces removed")


def _in_range(moment: datetime, text: str | None, note: str | None) -> tuple[datetime | None, str | None, str | None]:
    try:
        utc = moment.astimezone(timezone.utc)
    except (ValueError, OverflowError):
        return None, None, "outside the representable years"
    if not EARLIEST <= utc < LATEST:
        return None, None, f"outside the years {EARLIEST.year}-{LATEST.year - 1}"
    return moment, text if text is not None else rfc3339(utc), note


def _raw(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= MAX_RAW_CHARS else text[:MAX_RAW_CHARS] + "..."


def _unique(base: str, used: set[str], limit: int = 128, fold: bool = False) -> str:
    """``base`` (cut to ``limit``), or ``base-2``, ``base-3``... the first not in ``used``;
    added to ``used`` (lower-cased with ``fold``, so ids differing only in case collide)."""
    key = (lambda s: s.lower()) if fold else (lambda s: s)
    candidate, k = base[:limit], 2
    while key(candidate) in used:
        suffix = f"-{k}"
        candidate, k = base[: limit - len(suffix)] + suffix, k + 1
    used.add(key(candidate))
    return candidate


def _id_text(value: object) -> str | None:
    """The id as text: a non-empty string or an integer; None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value
    return None


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where}: {first['msg']}" if where else first["msg"]


def _is_decline(answer: str) -> bool:
    from conformance.contract.answer_text import normalize_answer

    return normalize_answer(answer.replace("\u2019", "'")) in DECLINES


def _is_unknown(answer: str) -> bool:
    from conformance.contract.answer_text import normalize_answer

    return normalize_answer(answer) == UNKNOWN


def _marker_problem(markers: dict[str, str], sessions: list[SessionLine]) -> str | None:
    """Why ``markers`` break the fixture's marker rules for these sessions, or None."""
    owner: dict[str, str] = {}
    for session_id, code in markers.items():
        if code in owner:
            return f"sessions {owner[code]!r} and {session_id!r} share the marker {code!r}"
        owner[code] = session_id
    known = {s.session_id for s in sessions}
    unknown = sorted(set(markers) - known)
    if unknown:
        return f"marker keyed by {unknown[0]!r}, which is no session of the case"
    words = {c for c in owner if _WORD.fullmatch(c)}
    phrases = {c: re.compile(r"(?<!\w)" + re.escape(c) + r"(?!\w)") for c in owner if c not in words}
    for session in sessions:
        own = markers.get(session.session_id)
        shared_found = False
        for message in session.messages:
            found = words.intersection(_WORD.findall(message.text))
            found.update(c for c, pattern in phrases.items() if pattern.search(message.text))
            stray = sorted(c for c in found if c != own)
            if stray:
                return f"marker {stray[0]!r} of session {owner[stray[0]]!r} occurs in session {session.session_id!r}"
            shared_found = shared_found or (own in found and message.scope == "shared")
        if own is not None and not shared_found:
            return f"marker {own!r} does not occur in a shared message of session {session.session_id!r}"
    return None


# ---- import -----------------------------------------------------------------------------

@dataclass
class _Session:
    position: int
    where: str
    raw: dict
    session_id: str
    moment: datetime
    text: str
    extras: dict
    messages: list[Message] = field(default_factory=list)


@dataclass
class _Question:
    position: int
    where: str
    raw: dict
    probe_id: str
    query: str
    moment: datetime
    asked_at: str
    extras: dict


@dataclass
class _Converted:
    lines: list[BaseModel]
    sessions: list[SessionLine]
    gold: GoldFile
    location_of: dict[str, str]
    extended: bool


class _Case:
    """Converts one case (one line); problems go to the shared ``issues`` lists."""

    def __init__(self, data: dict, lineno: int, scenario_id: str, issues: dict[str, list[ImportIssue]]):
        self.data, self.lineno, self.sid, self.issues = data, lineno, scenario_id, issues
        self.extras = self._extras_of(data, "")
        self.turn_index: dict[str, tuple[str, int]] = {}  # source turn id -> (message id, session index)

    # ---- reporting ----------------------------------------------------------------------
    def at(self, path: str) -> str:
        return f"line {self.lineno}: {path}" if path else f"line {self.lineno}"

    def issue(self, kind: str, path: str, reason: str, resolution: str, item_id: str | None = None,
              raw: object = _MISSING) -> None:
        self.issues[kind].append(ImportIssue(
            scenario_id=self.sid, location=self.at(path), item_id=item_id,
            raw=None if raw is _MISSING else _raw(raw), reason=reason, resolution=resolution))

    def _extras_of(self, obj: dict, path: str) -> dict:
        value = obj.get(EXTRAS_KEY)
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.issue("malformed_extras", f"{path}.{EXTRAS_KEY}" if path else EXTRAS_KEY,
                       f"'{EXTRAS_KEY}' is not an object", "ignored", raw=value)
            return {}
        return value

    def _build(self, model: type[BaseModel], plain: dict, extended: dict | None, extras: dict, keys: tuple,
               path: str, item_id: str | None = None) -> BaseModel:
        """``model`` from ``extended`` (default ``plain``) overlaid with ``extras[keys]``; when that
        does not validate, from ``plain`` alone (listed). ``plain`` always validates."""
        chosen = {k: extras[k] for k in keys if k in extras}
        if chosen:
            try:
                return model.model_validate({**(plain if extended is None else extended), **chosen})
            except ValidationError as exc:
                where = f"{path}.{EXTRAS_KEY}" if path else EXTRAS_KEY
                self.issue("malformed_extras", where, _first_error(exc), "ignored; the plain guide rules apply",
                           item_id, chosen)
        return model.model_validate(plain)

    def _id(self, value: object, path: str, used: set[str], fallback: str, what: str) -> str:
        text = _id_text(value)
        if text is None:
            chosen = _unique(sanitise_id(fallback), used)
            self.issue("malformed_records", path, f"{what} id missing or not a text", f"named {chosen}",
                       chosen, value if value is not None else _MISSING)
            return chosen
        base = sanitise_id(text, sanitise_id(fallback))
        chosen = _unique(base, used)
        if chosen != base:
            self.issue("duplicate_ids", path, f"{what} id already used in this case",
                       f"renamed {chosen}" + ("; evidence naming it means the first turn" if what == "turn" else ""),
                       chosen, value)
        elif base != text:
            self.issue("malformed_records", path, f"{what} id is not a valid fixture id", f"renamed {chosen}",
                       chosen, value)
        return chosen

    # ---- sessions -----------------------------------------------------------------------
    def _sessions(self) -> list[_Session]:
        raw = self.data.get("sessions")
        if not isinstance(raw, list):
            self.issue("malformed_records", "sessions", "sessions is not a list", "no sessions",
                       raw=raw if "sessions" in self.data else _MISSING)
            return []
        used: set[str] = set()
        items: list[_Session] = []
        parsed: list[tuple[datetime | None, str | None, str | None]] = []
        for i, entry in enumerate(raw):
            where = f"sessions[{i}]"
            if not isinstance(entry, dict):
                self.issue("malformed_records", where, "session is not an object", "skipped", raw=entry)
                continue
            session_id = self._id(entry.get("session_id"), f"{where}.session_id", used, f"s{i + 1}", "session")
            parsed.append(parse_guide_time(entry.get("timestamp")))
            items.append(_Session(i, where, entry, session_id, FALLBACK_ANCHOR, "", self._extras_of(entry, where)))
        known = sorted(m for m, _, _ in parsed if m is not None)
        leading = next((k for k, (m, _, _) in enumerate(parsed) if m is not None), len(parsed))
        previous: datetime | None = None
        for k, (item, (moment, text, problem)) in enumerate(zip(items, parsed)):
            if moment is None:
                if previous is not None:
                    moment, how = previous + FALLBACK_STEP, "1 minute after the session before it in the case"
                elif known:
                    moment, how = known[0] - FALLBACK_STEP * (leading - k), "before the earliest dated session"
                else:
                    moment, how = FALLBACK_ANCHOR, "a fixed anchor (no session of this case has a time)"
                text = rfc3339(moment)
                self.issue("unparseable_timestamps", f"{item.where}.timestamp", f"session timestamp {problem}",
                           f"set to {text}, {how}", item.session_id, item.raw.get("timestamp", _MISSING))
            elif problem:
                self.issue("naive_timestamps", f"{item.where}.timestamp", problem, f"set to {text}",
                           item.session_id, item.raw.get("timestamp"))
            item.moment, item.text, previous = moment, text or rfc3339(moment), moment
        ordered = sorted(items, key=lambda s: (s.moment, s.position))
        if [s.position for s in ordered] != [s.position for s in items]:
            self.issue("order_changes", "sessions", "sessions are not in time order",
                       "indexed in time order: " + " ".join(s.session_id for s in ordered),
                       raw=" ".join(s.session_id for s in items))
        used_messages: set[str] = set()
        for index, session in enumerate(ordered):
            session.messages = self._messages(session, index, used_messages)
        return ordered

    def _messages(self, session: _Session, index: int, used: set[str]) -> list[Message]:
        turns = session.raw.get("turns")
        if not isinstance(turns, list):
            self.issue("malformed_records", f"{session.where}.turns", "turns is not a list",
                       "imported as an empty session", session.session_id,
                       turns if "turns" in session.raw else _MISSING)
            return []
        start = session.moment.astimezone(timezone.utc)
        messages = []
        for j, turn in enumerate(turns):
            where = f"{session.where}.turns[{j}]"
            if not isinstance(turn, dict) or not isinstance(turn.get("text"), str):
                self.issue("malformed_records", where, "turn lacks a text string", "skipped", raw=turn)
                continue
            message_id = self._id(turn.get("turn_id"), f"{where}.turn_id", used,
                                  f"{session.session_id}-t{j + 1}", "turn")
            source_id = _id_text(turn.get("turn_id"))
            if source_id is not None:
                self.turn_index.setdefault(source_id, (message_id, index))
            role = turn.get("role")
            if role not in ROLE_ORDER:
                self.issue("malformed_records", f"{where}.role", "role is not user, assistant, agent, tool or system",
                           "read as user", message_id, role if "role" in turn else _MISSING)
                role = "user"
            text = turn["text"]
            if len(text) > MAX_MESSAGE_TEXT_CHARS:
                self.issue("malformed_records", f"{where}.text", f"text of {len(text):,} characters exceeds the "
                           f"fixture limit of {MAX_MESSAGE_TEXT_CHARS:,}",
                           f"cut to its first {MAX_MESSAGE_TEXT_CHARS:,} characters", message_id)
                text = text[:MAX_MESSAGE_TEXT_CHARS]
            plain = {"message_id": message_id, "author": role, "role": role, "text": text,
                     "timestamp": rfc3339(start + TURN_STEP * j), "scope": "shared"}
            messages.append(self._build(Message, plain, None, self._extras_of(turn, where), TURN_EXTRAS, where,
                                        message_id))
        return messages

    # ---- questions ----------------------------------------------------------------------
    def _questions(self, sessions: list[_Session]) -> list[_Question]:
        raw = self.data.get("questions", [])
        if not isinstance(raw, list):
            self.issue("malformed_records", "questions", "questions is not a list", "no probes", raw=raw)
            return []
        latest = max(s.moment for s in sessions)
        used: set[str] = set()
        out = []
        for i, entry in enumerate(raw):
            where = f"questions[{i}]"
            if not isinstance(entry, dict):
                self.issue("malformed_records", where, "question is not an object", "skipped", raw=entry)
                continue
            query = entry.get("question")
            if not isinstance(query, str) or not query.strip():
                self.issue("malformed_records", f"{where}.question", "no question text", "skipped",
                           raw=query if "question" in entry else _MISSING)
                continue
            if len(query) > MAX_QUERY_CHARS:
                self.issue("malformed_records", f"{where}.question", f"question of {len(query):,} characters "
                           f"exceeds the fixture limit of {MAX_QUERY_CHARS:,}", "skipped")
                continue
            probe_id = self._id(entry.get("qid"), f"{where}.qid", used, f"{self.sid}-q{i + 1}", "question")
            moment, text, problem = parse_guide_time(entry.get("asked_at"), end_of_day=True)
            if moment is None:
                moment = latest + LATE_QUESTION
                text = rfc3339(moment)
                self.issue("unparseable_timestamps", f"{where}.asked_at", f"asked_at {problem}",
                           f"set to {text}, one day after the latest session", probe_id,
                           entry.get("asked_at", _MISSING))
            elif problem:
                self.issue("naive_timestamps", f"{where}.asked_at", problem, f"set to {text}", probe_id,
                           entry.get("asked_at"))
            assert text is not None
            out.append(_Question(i, where, entry, probe_id, query, moment, text, self._extras_of(entry, where)))
        return out

    def _plan(self, sessions: list[_Session], questions: list[_Question]) -> list[tuple[dict, list[_Question]]]:
        """Checkpoints in fixture order, each ``({checkpoint_id, after_session, horizon}, questions)``."""
        planned = self._planned(sessions, questions)
        if planned is not None:
            return planned
        moments = [s.moment for s in sessions]
        groups: dict[int, list[_Question]] = {}
        for q in questions:
            after = bisect.bisect_right(moments, q.moment)
            if after == 0:
                first = sessions[0]
                q.asked_at = first.messages[-1].timestamp if first.messages else first.text
                self.issue("early_questions", f"{q.where}.asked_at", "asked before the first session",
                           f"asked after the first session, at {q.asked_at}", q.probe_id, q.raw.get("asked_at"))
                after = 1
            groups.setdefault(after, []).append(q)
        plan = []
        for n, after in enumerate(sorted(groups), start=1):
            meta = {"checkpoint_id": f"{self.sid}-c{n}", "after_session": after, "horizon": horizon_for(after)}
            plan.append((meta, groups[after]))
        return plan

    def _planned(self, sessions: list[_Session], questions: list[_Question]) -> list | None:
        """The checkpoints the case's ``drift.checkpoints`` give, or None (then by ``asked_at``)."""
        if "checkpoints" not in self.extras:
            return None
        raw = self.extras["checkpoints"]
        problem, metas = None, []
        if not isinstance(raw, list):
            problem = "checkpoints is not a list"
        else:
            for k, entry in enumerate(raw):
                if not isinstance(entry, dict):
                    problem = f"checkpoints[{k}] is not an object"
                    break
                meta = {key: entry.get(key) for key in ("checkpoint_id", "after_session", "horizon")}
                try:
                    CheckpointLine.model_validate({**meta, "probes": []})
                except ValidationError as exc:
                    problem = f"checkpoints[{k}].{_first_error(exc)}"
                    break
                metas.append(meta)
        if problem is None:
            ids = [m["checkpoint_id"] for m in metas]
            afters = [m["after_session"] for m in metas]
            if len(set(ids)) != len(ids):
                problem = "two checkpoints share an id"
            elif afters != sorted(afters) or (afters and afters[-1] > len(sessions)):
                problem = f"after_session values {afters} are not in order within 1..{len(sessions)}"
            else:
                known = set(ids)
                missing = [q.where for q in questions if not isinstance(q.extras.get(CHECKPOINT_KEY), str)
                           or q.extras[CHECKPOINT_KEY] not in known]
                if missing:
                    problem = f"{missing[0]} names none of the checkpoints"
        if problem is not None:
            self.issue("malformed_extras", f"{EXTRAS_KEY}.checkpoints", problem,
                       "ignored; questions grouped by asked_at")
            return None
        by_id: dict[str, list[_Question]] = {m["checkpoint_id"]: [] for m in metas}
        for q in questions:
            by_id[q.extras[CHECKPOINT_KEY]].append(q)
        return [(meta, by_id[meta["checkpoint_id"]]) for meta in metas]

    def _answer(self, q: _Question) -> str:
        value = q.raw.get("gold_answer", _MISSING)
        where = f"{q.where}.gold_answer"
        if isinstance(value, str):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            self.issue("integer_answers", where, f"gold answer is a number ({type(value).__name__}), not text",
                       f"kept as text {str(value)!r}", q.probe_id, value)
            return str(value)
        if value is _MISSING or value is None:
            self.issue("missing_answers", where, "no gold answer", "kept with an empty answer (retrieval can "
                       "still be scored from evidence)", q.probe_id, value)
            return ""
        self.issue("missing_answers", where, f"gold answer is a {type(value).__name__}, not text",
                   "kept as JSON text", q.probe_id, value)
        return _raw(value)

    def _evidence(self, q: _Question, after: int) -> list[str]:
        entries = q.raw.get("evidence", [])
        if entries is None:
            entries = []
        if not isinstance(entries, list):
            self.issue("malformed_records", f"{q.where}.evidence", "evidence is not a list",
                       "read as a one-entry list" if isinstance(entries, str) else "no evidence kept",
                       q.probe_id, entries)
            entries = [entries] if isinstance(entries, str) else []
        kept: list[str] = []
        for k, entry in enumerate(entries):
            at = f"{q.where}.evidence[{k}]"
            text = _id_text(entry)
            if text is None:
                self.issue("malformed_records", at, "evidence id is not a text", "dropped", q.probe_id, entry)
                continue
            target = self.turn_index.get(text)
            if target is None:
                self.issue("dangling_evidence", at, "names no turn of this case", "dropped", q.probe_id, entry)
                continue
            message_id, session = target
            if session >= after:
                self.issue("future_evidence", at, f"the turn is said in session {session + 1} (time order), after "
                           f"the question is asked (after session {after})", "dropped", q.probe_id, entry)
                continue
            if message_id not in kept:
                kept.append(message_id)
        return kept

    def _gold_probe(self, q: _Question, checkpoint_id: str, after: int) -> GoldProbe:
        probe_type = q.raw.get("type")
        if not isinstance(probe_type, str) or not probe_type.strip():
            self.issue("malformed_records", f"{q.where}.type", "no question type", f"probe_type {UNCATEGORISED!r}",
                       q.probe_id, probe_type if "type" in q.raw else _MISSING)
            probe_type = UNCATEGORISED
        answer = self._answer(q)
        evidence = self._evidence(q, after)
        base = {"probe_id": q.probe_id, "checkpoint_id": checkpoint_id, "probe_type": probe_type,
                "answer": answer, "evidence": evidence}
        plain = dict(base, abstention=False)
        if probe_type.strip().casefold() in ABSTENTION_TYPES or _is_decline(answer):
            keep = answer.strip() and not _is_unknown(answer)
            plain.update(abstention=True, answer=UNKNOWN, accepted=[answer] if keep else [])
        # Extensions that say what the abstention is keep the answer verbatim.
        extended = base if "abstention" in q.extras else None
        return self._build(GoldProbe, plain, extended, q.extras, GOLD_PROBE_EXTRAS, q.where, q.probe_id)

    # ---- the whole case -----------------------------------------------------------------
    def convert(self) -> _Converted | None:
        sessions = self._sessions()
        if not sessions:
            self.issue("malformed_records", "sessions", "case has no usable session", "skipped")
            return None
        roles = {m.role for s in sessions for m in s.messages}
        agentic = bool(roles & AGENT_ROLES)
        asker = "agent" if agentic else "assistant"
        speaking = [r for r in ROLE_ORDER if r in roles or r == asker]
        lines_sessions: list[SessionLine] = []
        for index, s in enumerate(sessions):
            spoke = {m.author for m in s.messages}
            plain = {"session_id": s.session_id, "index": index, "time": s.text, "messages": s.messages,
                     "participants": [r for r in speaking if r in spoke] or [asker]}
            lines_sessions.append(self._build(SessionLine, plain, None, s.extras, SESSION_EXTRAS, s.where,
                                              s.session_id))
        known = [s.moment for s in sessions]
        gaps = [(b - a).total_seconds() / 3600 for a, b in zip(known, known[1:])]
        gap = round(statistics.median(gaps), 3) if gaps else 0.0
        header_plain = {
            "scenario_id": self.sid, "paradigm": "coding_agent" if agentic else "user_assistant", "source": SOURCE,
            "free_form": True, "entities": [EntityRef(entity_id=r, type=ENTITY_TYPES[r]) for r in speaking],
            "horizons": [HorizonPhase(name=horizon_for(len(sessions)), sessions=len(sessions),
                                      session_gap_hours=gap if gap > 0 else DEFAULT_GAP_HOURS)],
        }
        header = self._build(HeaderLine, header_plain, None, self._sub_extras("header"), HEADER_EXTRAS, "",
                             self.sid)
        if header.markers:
            problem = _marker_problem(header.markers, lines_sessions)
            if problem:
                self.issue("malformed_extras", f"{EXTRAS_KEY}.header.markers", problem, "markers dropped", self.sid)
                header = header.model_copy(update={"markers": {}})

        questions = self._questions(sessions)
        plan = self._plan(sessions, questions)
        checkpoints: list[CheckpointLine] = []
        gold_probes: list[GoldProbe] = []
        location_of: dict[str, str] = {}
        for meta, members in plan:
            probes = []
            for q in members:
                plain = {"probe_id": q.probe_id, "asked_by": asker, "query": q.query, "asked_at": q.asked_at}
                probes.append(self._build(Probe, plain, None, q.extras, PROBE_EXTRAS, q.where, q.probe_id))
                gold_probes.append(self._gold_probe(q, meta["checkpoint_id"], meta["after_session"]))
                location_of[q.probe_id] = self.at(q.where)
            checkpoints.append(CheckpointLine(probes=probes, **meta))
        gold_plain = {"scenario_id": self.sid, "source": SOURCE, "probes": gold_probes}
        gold = self._build(GoldFile, gold_plain, None, self._sub_extras("gold"), GOLD_FILE_EXTRAS, "", self.sid)

        lines: list[BaseModel] = [header]
        pending = list(checkpoints)
        for s in lines_sessions:
            lines.append(s)
            while pending and pending[0].after_session == s.index + 1:
                lines.append(pending.pop(0))
        return _Converted(lines, lines_sessions, gold, location_of, bool(self.extras))

    def _sub_extras(self, key: str) -> dict:
        """``drift.<key>`` of the case as a dict (listed and ignored when it is not one)."""
        value = self.extras.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.issue("malformed_extras", f"{EXTRAS_KEY}.{key}", f"'{key}' is not an object", "ignored",
                       self.sid, value)
            return {}
        return value


def _scenario_id(data: dict, lineno: int, used: set[str]) -> tuple[str, str | None, str | None]:
    """The case's unique file-safe scenario id, and which issue kind applies with its reason."""
    text = _id_text(data.get("case_id"))
    base = sanitise_id(text if text is not None else f"case-line-{lineno}", f"case-line-{lineno}",
                       colons=False)[:SCENARIO_ID_CHARS]
    chosen = _unique(base, used, SCENARIO_ID_CHARS, fold=True)
    if text is None:
        return chosen, "malformed_records", "case_id missing or not a text"
    if chosen != base:
        return chosen, "duplicate_ids", "case_id (ignoring case) already used by an earlier case"
    if base != text:
        return chosen, "malformed_records", "case_id is not a valid file-safe id"
    return chosen, None, None


def _read_lines(handle) -> Iterator[tuple[int, bytes | None, bytes]]:
    """``(line number, line without its end or None when too long, every byte read)``."""
    lineno = 0
    while True:
        raw = handle.readline(MAX_CASE_LINE_BYTES + 1)
        if not raw:
            return
        lineno += 1
        if len(raw) > MAX_CASE_LINE_BYTES:
            yield lineno, None, raw
            while raw and not raw.endswith(b"\n"):  # skip the rest of the line, a bounded chunk at a time
                raw = handle.readline(MAX_CASE_LINE_BYTES + 1)
                yield lineno, b"", raw
            continue
        yield lineno, raw.rstrip(b"\r\n"), raw


def import_guide(path: Path | str, out_dir: Path | str) -> ImportReport:
    """Import a guide JSONL file: write ``out_dir/fixtures/<scenario>.jsonl``,
    ``out_dir/gold/<scenario>.json`` (one scenario per case) and ``out_dir/import-report.json``;
    return the report.

    Bad items never raise: each becomes an issue of the report (see the module docstring).
    The file is read a line at a time (at most :data:`MAX_CASE_LINE_BYTES` per line). The
    same input file gives byte-identical output files.

    Raises:
        SourceFormatError: the file holds no line that is a JSON object (not JSON Lines: e.g.
            a pretty-printed case or a JSON array), or nothing at all.
        OSError: the file cannot be read or the output written.
    """
    # Imported here, not at module level: the scoring package loads numpy, which an export
    # does not need.
    from conformance.importers.quality import QUALITY_KINDS, gold_quality

    path, out_dir = Path(path), Path(out_dir)
    issues: dict[str, list[ImportIssue]] = {kind: [] for kind in (*ISSUE_KINDS, *QUALITY_KINDS)}
    counts = dict.fromkeys(("scenarios", "sessions", "messages", "probes", "checkpoints", "evidence_ids",
                            "abstention_probes", "extended_cases"), 0)
    by_type: dict[str, int] = {}
    scenario_ids: list[str] = []
    used: set[str] = set()
    digest, size, objects, first_problem = hashlib.sha256(), 0, 0, None
    with open(path, "rb") as handle:
        for lineno, line, raw in _read_lines(handle):
            digest.update(raw)
            size += len(raw)
            if line is None:
                issues["malformed_lines"].append(ImportIssue(
                    scenario_id="", location=f"line {lineno}", reason=f"line longer than {human(MAX_CASE_LINE_BYTES)} "
                    "(the input limit; see docs/input-limits.md)", resolution="skipped"))
                first_problem = first_problem or f"line {lineno}: longer than {human(MAX_CASE_LINE_BYTES)}"
                continue
            if lineno == 1 and line.startswith(b"\xef\xbb\xbf"):
                line = line[3:]
            if not line.strip():
                continue
            try:
                data = parse_json(line)
            except BadDocument as exc:
                reason = exc.message + (f" (at {exc.field})" if exc.field else "")
                issues["malformed_lines"].append(ImportIssue(scenario_id="", location=f"line {lineno}",
                                                             raw=_raw(line.decode("utf-8", "replace")),
                                                             reason=reason, resolution="skipped"))
                first_problem = first_problem or f"line {lineno}: {reason}"
                continue
            if not isinstance(data, dict):
                reason = f"a JSON {type(data).__name__}, not an object (a case)"
                issues["malformed_lines"].append(ImportIssue(scenario_id="", location=f"line {lineno}",
                                                             raw=_raw(data), reason=reason, resolution="skipped"))
                first_problem = first_problem or f"line {lineno}: {reason}"
                continue
            objects += 1
            sid, kind, reason = _scenario_id(data, lineno, used)
            if kind:
                issues[kind].append(ImportIssue(scenario_id=sid, location=f"line {lineno}: case_id",
                                                raw=_raw(data["case_id"]) if "case_id" in data else None,
                                                reason=reason, resolution=f"scenario id {sid}"))
            converted = _Case(data, lineno, sid, issues).convert()
            del data
            if converted is None:
                continue
            write_fixture(out_dir / "fixtures" / f"{sid}.jsonl", converted.lines)
            write_gold(out_dir / "gold" / f"{sid}.json", converted.gold)
            asked = [probe for line_ in converted.lines if isinstance(line_, CheckpointLine) for probe in line_.probes]
            choice_ids = [probe.probe_id for probe in asked if probe.choices]
            for kind_name, found in gold_quality(sid, converted.sessions, converted.gold.probes,
                                                 converted.location_of, choice_ids, questions=asked).items():
                issues[kind_name].extend(found)
            scenario_ids.append(sid)
            probes = converted.gold.probes
            counts["scenarios"] += 1
            counts["sessions"] += len(converted.sessions)
            counts["messages"] += sum(len(s.messages) for s in converted.sessions)
            counts["probes"] += len(probes)
            counts["checkpoints"] += sum(isinstance(line_, CheckpointLine) for line_ in converted.lines)
            counts["evidence_ids"] += sum(len(p.evidence) for p in probes)
            counts["abstention_probes"] += sum(p.abstention for p in probes)
            counts["extended_cases"] += converted.extended
            for p in probes:
                by_type[p.probe_type] = by_type.get(p.probe_type, 0) + 1
    if objects == 0:
        detail = f"; {first_problem}" if first_problem else " (the file is empty)"
        raise SourceFormatError(f"{path}: (file): no case found: expected JSON Lines, one case object per line"
                                f"{detail}")
    report = ImportReport(source=SOURCE, source_path=str(path.resolve()), source_sha256=digest.hexdigest(),
                          source_bytes=size, scenarios=scenario_ids, counts=counts,
                          probes_by_type=dict(sorted(by_type.items())), issues=issues, notes=NOTES)
    write_report(out_dir / REPORT_FILE, report)
    return report


# ---- export -----------------------------------------------------------------------------

def _dump(model: BaseModel, exclude: set[str]) -> dict:
    return model.model_dump(mode="json", exclude_none=True, exclude=exclude)


def _turn(message: Message) -> dict:
    role = "user" if message.role == "user" else "assistant"
    extras: dict[str, Any] = {"author": message.author, "timestamp": message.timestamp, "scope": message.scope}
    if message.role != role:
        extras["role"] = message.role
    return {"turn_id": message.message_id, "role": role, "text": message.text, EXTRAS_KEY: extras}


def _session(line: SessionLine) -> dict:
    return {"session_id": line.session_id, "timestamp": line.time, "turns": [_turn(m) for m in line.messages],
            EXTRAS_KEY: {"participants": list(line.participants)}}


def _question(probe: Probe, gold: GoldProbe) -> dict:
    extras = _dump(probe, {"probe_id", "query", "asked_at"})
    extras.update(_dump(gold, {"probe_id", "probe_type", "answer", "evidence"}))
    return {"qid": probe.probe_id, "type": gold.probe_type, "asked_at": probe.asked_at, "question": probe.query,
            "gold_answer": gold.answer, "evidence": list(gold.evidence), EXTRAS_KEY: extras}


class _CaseWriter:
    """Writes one case line in pieces, refusing one longer than :data:`MAX_CASE_LINE_BYTES`."""

    def __init__(self, out: TextIO, scenario_id: str):
        self.out, self.scenario_id, self.size = out, scenario_id, 0

    def write(self, piece: str) -> None:
        self.size += len(piece.encode("utf-8"))
        if self.size > MAX_CASE_LINE_BYTES:
            raise GuideExportError(f"scenario {self.scenario_id}: its case would be a line longer than "
                                   f"{human(MAX_CASE_LINE_BYTES)}, which import refuses (see docs/input-limits.md)")
        self.out.write(piece)


def _export_case(fixture: Path, gold_path: Path, out: TextIO) -> None:
    gold = read_gold(gold_path)
    truth = {p.probe_id: p for p in gold.probes}
    writer: _CaseWriter | None = None
    header: HeaderLine | None = None
    checkpoints: list[dict] = []
    questions: list[str] = []
    sessions = 0
    for line in iter_fixture(fixture):
        if isinstance(line, HeaderLine):
            header = line
            if line.scenario_id != fixture.stem:
                raise CorpusError(fixture, f"scenario_id {line.scenario_id!r} does not match the file name", 1,
                                  "scenario_id")
            if gold.scenario_id != line.scenario_id:
                raise CorpusError(gold_path, f"scenario_id {gold.scenario_id!r} is not the fixture's "
                                             f"{line.scenario_id!r}", field="scenario_id")
            writer = _CaseWriter(out, line.scenario_id)
            writer.write('{"case_id":' + canonical_json(line.scenario_id) + ',"sessions":[')
        elif isinstance(line, SessionLine):
            assert writer is not None
            writer.write(("," if sessions else "") + canonical_json(_session(line)))
            sessions += 1
        else:
            checkpoints.append({"checkpoint_id": line.checkpoint_id, "after_session": line.after_session,
                                "horizon": line.horizon})
            for probe in line.probes:
                gold_probe = truth.pop(probe.probe_id, None)
                if gold_probe is None:
                    raise CorpusError(gold_path, f"no gold for probe {probe.probe_id!r} of the fixture", field="probes")
                questions.append(canonical_json(_question(probe, gold_probe)))
    if writer is None or header is None:
        raise CorpusError(fixture, "empty fixture: expected a header line, sessions and checkpoints", 1)
    if truth:
        raise CorpusError(gold_path, f"gold for probes the fixture lacks: {sorted(truth)[:5]}", field="probes")
    extras = {"header": _dump(header, {"kind", "scenario_id"}), "gold": _dump(gold, {"scenario_id", "probes"}),
              "checkpoints": checkpoints}
    writer.write('],"questions":[' + ",".join(questions) + '],"' + EXTRAS_KEY + '":' + canonical_json(extras) + "}\n")


def export_guide(fixtures_dir: Path | str, gold_dir: Path | str, out_path: Path | str,
                 selection: "Selection | None" = None) -> int:
    """Write the selected scenarios of a corpus to ``out_path`` as guide JSONL; return the
    number of cases written.

    ``selection`` (:class:`conformance.contract.corpus.Selection`, default: every scenario but the
    holdout ones) picks scenarios as a run does: globs, paradigms, horizons, splits
    (``Selection(splits=("ci",))``); holdout scenarios only with ``include_holdout=True``.
    Each case carries the ``drift`` objects that let :func:`import_guide` rebuild the
    scenario byte for byte. The file is written whole or not at all (a ``.part`` file is
    renamed at the end); an empty selection writes an empty file.

    Raises:
        CorpusError: a fixture or gold file is malformed, or they do not match.
        GuideExportError: a case would exceed :data:`MAX_CASE_LINE_BYTES`.
        OSError: the output cannot be written.
    """
    from conformance.contract.corpus import Selection, select_fixtures

    fixtures, _held_out = select_fixtures(Path(fixtures_dir), selection or Selection())
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    partial = out_path.with_name(out_path.name + ".part")
    try:
        with open(partial, "w", encoding="utf-8", newline="\n") as out:
            for fixture in fixtures:
                _export_case(fixture, Path(gold_dir) / f"{fixture.stem}.json", out)
        os.replace(partial, out_path)
    finally:
        partial.unlink(missing_ok=True)
    return len(fixtures)


def export_selection(fixtures_dir: Path | None, gold_dir: Path | None, out_path: Path, selection) -> int:
    """:func:`export_guide` of the scenarios ``selection`` (a ``contract.corpus.Selection``) picks
    from a corpus (default: the packaged one); returns the number of cases written.

    Raises:
        DriftError: a missing folder, a selection that matches nothing (naming the holdout
            scenarios it left out), or an unwritable ``out_path``.
    """
    from conformance.contract.corpus import select_fixtures

    fixtures_dir = fixtures_dir or paths.fixtures_dir()
    gold_dir = gold_dir or paths.gold_dir()
    for folder, what in ((fixtures_dir, "fixture"), (gold_dir, "gold")):
        if not Path(folder).is_dir():
            raise DriftError(f"{what} folder {folder} does not exist")
    chosen, held_out = select_fixtures(fixtures_dir, selection)
    if not chosen:
        n = len(held_out)
        extra = f" ({n} holdout scenario{'' if n == 1 else 's'} left out; --include-holdout exports " \
            f"{'it' if n == 1 else 'them'})" if held_out else ""
        raise DriftError(f"no scenario of {fixtures_dir} matches the filters{extra}")
    try:
        return export_guide(fixtures_dir, gold_dir, out_path, selection)
    except OSError as exc:
        raise DriftError(f"{exc.filename or out_path}: {exc.strerror or exc}") from None

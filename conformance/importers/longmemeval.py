"""Import LongMemEval (``longmemeval_s.json``, ``longmemeval_m.json``, ``longmemeval_oracle.json``
and the cleaned re-release, same record shape) into fixtures + gold: one scenario
``lme-<question_id>`` per instance (paradigm ``user_assistant``; the user asks the one question
after the last session, at ``question_date``; free-form, gold evidence message ids).

The file is streamed (``_s`` is ~278 MB, ``_m`` ~2.7 GB): instances are built one at a time
from ``ijson`` events and each scenario is written as soon as it is read, so memory holds one
instance (at most :data:`MAX_INSTANCE_BYTES` of JSON and :data:`MAX_INSTANCE_VALUES` values)
plus the report; the file is read once (its SHA-256 taken on the way). Bad instances, sessions
or turns never raise: each becomes an issue (at most :data:`MAX_ISSUES_LISTED` per kind and
instance, then one summary issue). Only a file that is not a JSON array, or stops being valid
JSON, raises :class:`SourceFormatError`.

Ids, dates, evidence, abstention and every other decision: docs/import-formats.md#longmemeval
(and each report's ``notes``).
"""

from __future__ import annotations

import hashlib
import json
import re
import statistics
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import ijson

from conformance.contract.corpus import write_fixture, write_gold
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
    MAX_NESTING_DEPTH,
    MiB,
    human,
)
from conformance.importers.quality import QUALITY_KINDS, gold_quality
from conformance.importers.registry import Importer
from conformance.importers.report import REPORT_FILE, ImportIssue, ImportReport, SourceFormatError, format_report
from conformance.importers.toolkit import (
    EARLIEST,
    LATEST,
    MAX_DATE_TEXT,
    SCENARIO_ID_CHARS,
    ReportBuilder,
    dropped_fields_note,
    fit_message,
    horizon_for,
    overlong_query,
    parse_session_time,
    raw_text,
    rfc3339,
    sanitise_id,
    source_error,
    unique_id,
)

__all__ = ["import_longmemeval", "parse_lme_date", "format_report", "PROBE_TYPES",
           "ISSUE_KINDS", "MAX_INSTANCE_BYTES", "MAX_INSTANCE_VALUES"]

SOURCE = "longmemeval"
QUESTION_TYPES = ("single-session-user", "single-session-assistant", "single-session-preference",
                  "multi-session", "temporal-reasoning", "knowledge-update")
PROBE_TYPES = {t: t.replace("-", "_") for t in QUESTION_TYPES}
"""Dataset ``question_type`` -> probe type."""
UNCATEGORISED = "uncategorised"
ABSTENTION_SUFFIX = "_abs"
ISSUE_KINDS = (
    "malformed_records", "unparseable_dates", "weekday_mismatches", "early_question_dates", "order_changes",
    "date_keys_without_sessions", "duplicate_session_ids", "dangling_evidence", "session_level_evidence",
    "unused_has_answer", "integer_answers", "missing_answers", *QUALITY_KINDS,
)
TURN_KEYS = frozenset({"role", "content", "has_answer"})
"""Turn fields the importer reads; any other is dropped (named in the notes)."""
INSTANCE_KEYS = frozenset({"question_id", "question_type", "question", "answer", "question_date",
                           "haystack_session_ids", "haystack_dates", "haystack_sessions", "answer_session_ids"})
KEPT_NOTE = ("kept: turns' role, content and has_answer (as evidence); instances' question_id, question_type, "
             "question, answer, question_date, haystack_session_ids, haystack_dates, haystack_sessions, "
             "answer_session_ids")
COUNT_KEYS = (
    "scenarios", "sessions", "messages", "probes", "abstention_probes", "evidence_ids", "answer_sessions",
    "answer_sessions_turn_level", "answer_sessions_session_level", "abstention_explanations_withheld",
    "abstention_evidence_withheld", "skipped_instances",
)
USER, ASSISTANT = "user", "assistant"
ENTITIES = (EntityRef(entity_id=USER, type="human"), EntityRef(entity_id=ASSISTANT, type="assistant_agent"))
TURN_STEP = timedelta(seconds=30)
FALLBACK_STEP = timedelta(minutes=1)
PROBE_DELAY = timedelta(days=1)
FALLBACK_ANCHOR = datetime(2000, 1, 1, tzinfo=timezone.utc)
"""Time of the first session when no session of an instance has a usable date."""
DEFAULT_GAP_HOURS = 24.0

MAX_INSTANCE_BYTES = 64 * MiB
"""One instance's JSON text, and any single JSON value in the file, in bytes (measured to
within one 64 KiB read). A real ``_m`` instance averages ~5.5 MB. A larger instance
is skipped and listed without being held; a single value (one string) larger than this
stops the import (:class:`SourceFormatError`), since the parser would have to hold it."""
MAX_INSTANCE_VALUES = 250_000
"""JSON values (strings, numbers, objects, arrays, ...) in one instance. A real ``_m``
instance holds ~20,000 (~5,000 turns); the bound keeps the Python objects of one instance
small even when its bytes are many tiny values (``[],[],...``). A larger instance is
skipped and listed."""
MAX_EVIDENCE_IDS = 10_000
"""Evidence ids kept per probe (real probes cite a few dozen); keeps a gold file far below
the gold-file size bound however many turns an instance marks."""
MAX_ISSUES_LISTED = 50
"""Issues of one kind listed per instance; the rest are summed up in one more issue, so a
hostile instance cannot grow the report without bound."""
MAX_RAW_CHARS = 500
"""A source value quoted in an issue is cut to this many characters."""
READ_SIZE = 64 * 1024
_LINE_BUDGET = MAX_JSONL_LINE_BYTES - 64 * 1024
"""A session line's JSON must stay below the fixture line bound; 64 KiB spare for its
other fields (ids, time, participants)."""

_LME_DATE = re.compile(r"\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\(\s*([A-Za-z]{1,12})\.?\s*\))?\s*"
                       r"(?:(\d{1,2}):(\d{2})(?::(\d{2}))?)?\s*")
_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_PARENTHESISED = re.compile(r"\([^()]{0,20}\)")

NOTES = [
    "paradigm user_assistant: entity 'user' (human) talks to 'assistant' (assistant_agent); the user asks "
    "the question at one checkpoint after the last session",
    "ids from positions: session <scenario>-S<n> is the n-th haystack session (1-based), message "
    "<scenario>-S<n>:<t> its t-th turn; dataset session ids are not used (they name the answer sessions)",
    "a session id used twice: both sessions imported, an answer_session_ids entry naming it means the first "
    "(listed as duplicate_session_ids)",
    "dates like '2023/05/30 (Tue) 23:40' read as UTC; other complete date texts parsed strictly (nothing "
    "filled in); a weekday that disagrees with the date is listed, the date wins",
    "sessions indexed in time order (dataset order breaks ties); a missing or unparseable session date "
    "becomes 1 minute after the previous session in dataset order; turns 30 s apart",
    "question_date is the probe's asked_at, kept as given (listed when before the last session); "
    "unparseable: 1 day after the last session starts (listed)",
    "evidence policy: within answer_session_ids sessions, has_answer turns (any role); an answer session "
    "without has_answer turns gives all its user turns (listed as session_level_evidence); has_answer "
    "turns outside answer sessions are not evidence (listed as unused_has_answer)",
    "abstention (question_id ending _abs): gold 'unknown', the dataset's explanation is neither answer "
    "nor accepted, no evidence (as in the dataset's own retrieval evaluation); both counted",
    "numeric answers kept as text (listed); question_type mapped with '-' as '_', unknown types "
    "'uncategorised'",
    "no session tiers: filler sessions hold real user facts too, so selectivity is left undefined",
    f"at most {MAX_ISSUES_LISTED} issues of one kind are listed per instance (the rest summed up); "
    f"instances over {human(MAX_INSTANCE_BYTES)} of JSON, over {MAX_INSTANCE_VALUES:,} JSON values or nested "
    f"over {MAX_NESTING_DEPTH} levels are skipped",
]


# --------------------------------------------------------------------------- dates

def parse_lme_date(text: object) -> tuple[datetime | None, str | None]:
    """Parse a LongMemEval date (``2023/05/30 (Tue) 23:40``) to an aware UTC datetime.

    Returns ``(time, None)``; ``(None, reason)`` when no usable time can be read; or
    ``(time, reason)`` when the time is usable but its parenthesised weekday disagrees
    with the date (the date wins). The weekday and clock time are optional (no clock time
    means midnight). Other complete date texts (ISO 8601, "30 May 2023 11:40 pm") go through
    :func:`conformance.importers.locomo.parse_session_time`: day, month and year must be
    given (nothing is filled in from today's date); naive times are UTC.
    """
    if not isinstance(text, str):
        return parse_session_time(text)
    if len(text) > MAX_DATE_TEXT:
        return None, f"longer than {MAX_DATE_TEXT} characters"
    match = _LME_DATE.fullmatch(text)
    if match is None:
        return parse_session_time(_PARENTHESISED.sub(" ", text))
    year, month, day, weekday, hour, minute, second = match.groups()
    try:
        moment = datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0),
                          tzinfo=timezone.utc)
    except ValueError as exc:
        return None, f"not a calendar date and time ({exc})"
    if not EARLIEST <= moment < LATEST:
        return None, f"outside the years {EARLIEST.year}-{LATEST.year - 1}"
    actual = _WEEKDAYS[moment.weekday()]
    if weekday is not None and weekday[:3].lower() != actual:
        return moment, f"weekday ({weekday}) disagrees with the date (a {actual.capitalize()})"
    return moment, None


# --------------------------------------------------------------------------- streaming

class _TooLong(Exception):
    def __init__(self, start: int):
        self.start = start


class _Reader:
    """A binary file as ``ijson`` reads it: counts and hashes the bytes, drops a UTF-8 BOM,
    and refuses to feed the parser more than :data:`MAX_INSTANCE_BYTES` past the last
    event (one JSON value that long would be held whole by the parser)."""

    def __init__(self, handle):
        self.handle = handle
        self.digest = hashlib.sha256()
        self.consumed = 0
        self.mark = 0  # bytes consumed when the last parser event was seen
        self.last = 0  # size of the last chunk handed out

    def read(self, size: int = -1) -> bytes:
        if size == 0:  # ijson's probe of the file's type
            return b""
        if self.consumed - self.mark > MAX_INSTANCE_BYTES:
            raise _TooLong(self.mark)
        data = self.handle.read(size if size > 0 else READ_SIZE)
        self.digest.update(data)
        start, self.consumed, self.last = self.consumed, self.consumed + len(data), len(data)
        if start == 0 and data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        return data

    def finish(self) -> tuple[str, int]:
        """(hex SHA-256, size in bytes) of the whole file (reads what the parser left)."""
        while True:
            data = self.handle.read(1 << 20)
            if not data:
                return self.digest.hexdigest(), self.consumed
            self.digest.update(data)
            self.consumed += len(data)


class _Skipped:
    """An instance that was not built: why."""

    def __init__(self, reason: str):
        self.reason = reason


_SCALARS = frozenset({"string", "number", "boolean", "null"})
_OPEN = {"start_map": dict, "start_array": list}
_CLOSE = frozenset({"end_map", "end_array"})


def _instances(events: Iterator[tuple[str, object]], reader: _Reader) -> Iterator[object]:
    """The top-level array's elements, one at a time, built from ``ijson.basic_parse`` events
    (the parser's own prefixes cost memory quadratic in the nesting depth, so they are not
    used). An element over :data:`MAX_INSTANCE_BYTES` or :data:`MAX_INSTANCE_VALUES`, or
    nested deeper than :data:`MAX_NESTING_DEPTH`, is read past and yielded as :class:`_Skipped`."""
    for event, value in events:
        reader.mark = reader.consumed
        if event == "end_array":
            return
        if event in _SCALARS:
            yield value
            continue
        start = reader.consumed - reader.last
        root: dict | list = _OPEN[event]()
        stack: list = [root]
        key = None
        skipped: str | None = None
        depth, values = 1, 1
        parent = child = None
        for event, value in events:
            reader.mark = reader.consumed
            if skipped is None:
                values += 1
                if reader.consumed - start > MAX_INSTANCE_BYTES:
                    skipped = f"instance larger than {human(MAX_INSTANCE_BYTES)} of JSON"
                    root = stack = None  # free what was built
                elif values > MAX_INSTANCE_VALUES:
                    skipped = f"instance of more than {MAX_INSTANCE_VALUES:,} JSON values"
                    root = stack = None
            if skipped is not None:
                if event in _OPEN:
                    depth += 1
                elif event in _CLOSE:
                    depth -= 1
                    if depth == 0:
                        yield _Skipped(skipped)
                        break
                continue
            if event == "map_key":
                key = value
            elif event in _SCALARS:
                parent = stack[-1]
                if type(parent) is dict:
                    parent[key] = value
                else:
                    parent.append(value)
            elif event in _OPEN:
                child = _OPEN[event]()
                parent = stack[-1]
                if type(parent) is dict:
                    parent[key] = child
                else:
                    parent.append(child)
                stack.append(child)
                depth += 1
                if depth > MAX_NESTING_DEPTH:
                    skipped = f"instance nested more than {MAX_NESTING_DEPTH} levels deep"
                    root = stack = None
            else:  # end_map / end_array
                stack.pop()
                depth -= 1
                if depth == 0:
                    # Hold no part of this instance while the next one is built.
                    done, root = root, None
                    stack = parent = child = value = None
                    yield done
                    del done
                    break


# --------------------------------------------------------------------------- one instance

def _raw(value: object) -> str:
    return raw_text(value, MAX_RAW_CHARS)


def _json_size(message: Message) -> int:
    return len(json.dumps(message.model_dump(mode="json"), ensure_ascii=False).encode("utf-8", "surrogatepass")) + 1


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class _Instance:
    """Converts one LongMemEval instance; problems go to the shared ``issues`` lists."""

    def __init__(self, record: dict, position: int, scenario_id: str, issues: dict[str, list[ImportIssue]],
                 counts: dict[str, int], dropped_fields: dict[str, int] | None = None):
        self.record, self.at, self.sid = record, f"[{position}]", scenario_id
        self.issues, self.counts = issues, counts
        self.dropped_fields = {} if dropped_fields is None else dropped_fields
        self.dropped: dict[str, dict[str, str]] = {}  # message id -> {field: text} not in the fixture
        for key in record:
            if key not in INSTANCE_KEYS:
                self._lost(f"instance {key}")
        self.listed: dict[str, int] = {}
        self.unlisted: dict[str, int] = {}

    def issue(self, kind: str, location: str, reason: str, resolution: str,
              item_id: str | None = None, raw: object = None) -> None:
        if self.listed.get(kind, 0) >= MAX_ISSUES_LISTED:
            self.unlisted[kind] = self.unlisted.get(kind, 0) + 1
            return
        self.listed[kind] = self.listed.get(kind, 0) + 1
        self.issues[kind].append(ImportIssue(
            scenario_id=self.sid, location=f"{self.at}{location}", item_id=item_id,
            raw=None if raw is None else _raw(raw), reason=reason, resolution=resolution))

    def _lost(self, key: str) -> None:
        self.dropped_fields[key] = self.dropped_fields.get(key, 0) + 1

    def close(self) -> None:
        """Add one summary issue per kind that hit :data:`MAX_ISSUES_LISTED`."""
        for kind, more in sorted(self.unlisted.items()):
            self.issues[kind].append(ImportIssue(
                scenario_id=self.sid, location=self.at, reason=f"{more} more {kind} issues in this instance",
                resolution=f"handled like the {MAX_ISSUES_LISTED} listed before; not listed one by one"))

    def _list(self, key: str) -> list:
        value = self.record.get(key)
        if value is None:
            self.issue("malformed_records", f".{key}", f"{key} missing", "read as an empty list")
            return []
        if not isinstance(value, list):
            self.issue("malformed_records", f".{key}", f"{key} is not a list", "read as an empty list", raw=value)
            return []
        return value

    # ---- sessions -------------------------------------------------------------------
    def _session_names(self, ids: list, n: int) -> dict[int, str]:
        """Position (0-based) -> dataset session id, for the sessions that have a usable one."""
        names: dict[int, str] = {}
        first: dict[str, int] = {}
        for i, name in enumerate(ids[:n]):
            where = f".haystack_session_ids[{i}]"
            if not isinstance(name, str) or not name:
                self.issue("malformed_records", where, "session id is not a non-empty string",
                           f"{self.sid}-S{i + 1} cannot be named as an answer session", f"{self.sid}-S{i + 1}", name)
                continue
            if name in first:
                self.issue("duplicate_session_ids", where, f"same session id as haystack_session_ids[{first[name]}]",
                           f"imported as its own session; an answer_session_ids entry naming it means "
                           f"{self.sid}-S{first[name] + 1}", f"{self.sid}-S{i + 1}", name)
                continue
            first[name] = i
            names[i] = name
        for i in range(len(ids), n):
            self.issue("malformed_records", f".haystack_sessions[{i}]", "session has no haystack_session_ids entry",
                       "imported; cannot be named as an answer session", f"{self.sid}-S{i + 1}")
        for i in range(n, len(ids)):
            self.issue("malformed_records", f".haystack_session_ids[{i}]", "session id without a session",
                       "ignored", raw=ids[i])
        return names

    def _times(self, dates: list, n: int) -> list[datetime]:
        for i in range(n, len(dates)):
            self.issue("date_keys_without_sessions", f".haystack_dates[{i}]", "date for a session that does not exist",
                       "ignored", raw=dates[i])
        parsed = [parse_lme_date(dates[i]) if i < len(dates) else (None, "missing") for i in range(n)]
        known = sorted(t for t, _ in parsed if t is not None)
        leading = next((i for i, (t, _) in enumerate(parsed) if t is not None), n)
        times: list[datetime] = []
        for i, (moment, problem) in enumerate(parsed):
            where = f".haystack_dates[{i}]"
            if moment is None:
                if times:
                    moment, how = times[-1] + FALLBACK_STEP, f"1 minute after S{i}"
                elif known:
                    moment, how = known[0] - FALLBACK_STEP * leading, "before the earliest dated session"
                else:
                    moment, how = FALLBACK_ANCHOR, "a fixed anchor (no session of this instance has a date)"
                self.issue("unparseable_dates", where, f"session date {problem}", f"set to {rfc3339(moment)}, {how}",
                           f"{self.sid}-S{i + 1}", dates[i] if i < len(dates) else None)
            elif problem:
                self.issue("weekday_mismatches", where, problem, f"date kept: {rfc3339(moment)}",
                           f"{self.sid}-S{i + 1}", dates[i])
            times.append(moment)
        self.gap_hours = DEFAULT_GAP_HOURS
        gaps = [(b - a).total_seconds() / 3600 for a, b in zip(known, known[1:])]
        if gaps and round(statistics.median(gaps), 3) > 0:
            self.gap_hours = round(statistics.median(gaps), 3)
        return times

    def _messages(self, i: int, session: object, start: datetime) -> list[tuple[Message, bool]]:
        """(message, has_answer) for the usable turns of the session at position ``i``."""
        where = f".haystack_sessions[{i}]"
        if not isinstance(session, list):
            self.issue("malformed_records", where, "session is not a list of turns", "imported as an empty session",
                       f"{self.sid}-S{i + 1}", session)
            return []
        out: list[tuple[Message, bool]] = []
        size, exact = 0, False
        for j, turn in enumerate(session):
            at, message_id = f"{where}[{j}]", f"{self.sid}-S{i + 1}:{j + 1}"
            if not isinstance(turn, dict):
                self.issue("malformed_records", at, "turn is not an object", "skipped", message_id, turn)
                continue
            role, text, flag = turn.get("role"), turn.get("content"), turn.get("has_answer", False)
            if role not in (USER, ASSISTANT):
                self.issue("malformed_records", f"{at}.role", "role is neither 'user' nor 'assistant'", "skipped",
                           message_id, role)
                continue
            if not isinstance(text, str):
                self.issue("malformed_records", f"{at}.content", "content is not a string", "skipped", message_id,
                           text)
                continue
            if not isinstance(flag, bool):
                self.issue("malformed_records", f"{at}.has_answer", "has_answer is not true or false",
                           "read as false", message_id, flag)
                flag = False
            text, cut = fit_message(text, "content")
            if cut:
                self.issue("malformed_records", f"{at}.content", *cut, message_id)
            message = Message(message_id=message_id, author=role, role=role, text=text,
                              timestamp=rfc3339(start + TURN_STEP * j), scope="shared")
            lost = {key: _raw(value) for key, value in turn.items() if key not in TURN_KEYS}
            for key in lost:
                self._lost(f"turn {key}")
            if lost:
                self.dropped[message_id] = lost
            # An upper bound first (a character is at most 6 bytes of JSON, the other fields
            # under 512); exact sizes only once that bound nears the fixture line limit.
            size += _json_size(message) if exact else len(text) * 6 + 512
            if size > _LINE_BUDGET and not exact:
                exact = True
                size = sum(_json_size(m) for m, _ in out) + _json_size(message)
            if size > _LINE_BUDGET:
                self.issue("malformed_records", at, f"session line would exceed the fixture line limit of "
                           f"{human(MAX_JSONL_LINE_BYTES)}", "this and later turns of the session skipped",
                           message_id)
                break
            out.append((message, flag))
        return out

    # ---- evidence -------------------------------------------------------------------
    def _evidence(self, turns: dict[int, list[tuple[Message, bool]]], names: dict[int, str], ids: list,
                  abstention: bool, probe_id: str) -> list[str]:
        position = {name: i for i, name in names.items()}
        wanted: set[int] = set()
        for k, name in enumerate(self._list("answer_session_ids")):
            where = f".answer_session_ids[{k}]"
            if not isinstance(name, str):
                self.issue("dangling_evidence", where, "not a session id string", "dropped", probe_id, name)
            elif name in position:
                wanted.add(position[name])
            else:
                listed = name in ids[len(turns):]
                self.issue("dangling_evidence", where, "names a haystack_session_ids entry without a session"
                           if listed else "names no session of haystack_session_ids", "dropped", probe_id, name)
        for i in sorted(set(turns) - wanted):
            marked = [m.message_id for m, flag in turns[i] if flag]
            if marked:
                self.issue("unused_has_answer", f".haystack_sessions[{i}]",
                           f"has_answer turns ({len(marked)}) in a session not named by answer_session_ids",
                           "not evidence", f"{self.sid}-S{i + 1}", names.get(i))
        self.counts["answer_sessions"] += len(wanted)
        if abstention:
            self.counts["abstention_evidence_withheld"] += bool(wanted)
            return []
        evidence: list[str] = []
        for i in sorted(wanted, key=lambda i: self.index_of[i]):
            marked = [m.message_id for m, flag in turns[i] if flag]
            if marked:
                self.counts["answer_sessions_turn_level"] += 1
                evidence.extend(marked)
                continue
            self.counts["answer_sessions_session_level"] += 1
            users = [m.message_id for m, _ in turns[i] if m.role == USER]
            self.issue("session_level_evidence", f".haystack_sessions[{i}]", "answer session without has_answer turns",
                       f"all its user turns ({len(users)}) are evidence" if users
                       else "it has no user turn: no evidence",
                       f"{self.sid}-S{i + 1}", names[i])
            evidence.extend(users)
        if len(evidence) > MAX_EVIDENCE_IDS:
            self.issue("malformed_records", ".answer_session_ids", f"{len(evidence):,} evidence turns",
                       f"the first {MAX_EVIDENCE_IDS:,} kept", probe_id)
            evidence = evidence[:MAX_EVIDENCE_IDS]
        return evidence

    # ---- answer ---------------------------------------------------------------------
    def _answer(self, abstention: bool, probe_id: str) -> str:
        value = self.record.get("answer")
        if abstention:
            if (isinstance(value, str) and value.strip()) or _is_number(value):
                self.counts["abstention_explanations_withheld"] += 1
            return "unknown"
        if isinstance(value, str) and value.strip():
            return value
        if _is_number(value):
            self.issue("integer_answers", ".answer", f"answer is a number ({type(value).__name__}), not text",
                       f"kept as text {str(value)!r}", probe_id, value)
            return str(value)
        if value is None or isinstance(value, str):
            self.issue("missing_answers", ".answer", "no answer", "kept with an empty answer (retrieval can still "
                       "be scored from evidence)", probe_id, value)
            return ""
        self.issue("missing_answers", ".answer", f"answer is a {type(value).__name__}, not text",
                   "kept as JSON text", probe_id, value)
        return _raw(value)

    def _probe_type(self, probe_id: str) -> str:
        value = self.record.get("question_type")
        if value in PROBE_TYPES:
            return PROBE_TYPES[value]
        self.issue("malformed_records", ".question_type", "unknown question_type", f"probe_type '{UNCATEGORISED}'",
                   probe_id, value)
        return UNCATEGORISED

    def _asked_at(self, last_start: datetime, probe_id: str) -> datetime:
        value = self.record.get("question_date")
        moment, problem = parse_lme_date(value)
        if moment is None:
            moment = last_start + PROBE_DELAY
            self.issue("unparseable_dates", ".question_date", f"question date {problem}",
                       f"asked at {rfc3339(moment)}, 1 day after the last session starts", probe_id, value)
            return moment
        if problem:
            self.issue("weekday_mismatches", ".question_date", problem, f"date kept: {rfc3339(moment)}", probe_id,
                       value)
        if moment < last_start:
            self.issue("early_question_dates", ".question_date",
                       f"question date precedes the last session ({rfc3339(last_start)})",
                       "kept as given (temporal answers are computed from it)", probe_id, value)
        return moment

    # ---- the scenario ---------------------------------------------------------------
    def convert(self) -> tuple[list, GoldFile] | None:
        """The fixture lines and gold file, or None when the instance cannot be a scenario."""
        question = self.record.get("question")
        probe_id = f"{self.sid}-q1"
        if not isinstance(question, str) or not question.strip():
            self.issue("malformed_records", ".question", "no question text", "instance skipped", probe_id, question)
            return None
        if overlong_query(question):
            self.issue("malformed_records", ".question", overlong_query(question), "instance skipped", probe_id)
            return None
        sessions = self._list("haystack_sessions")
        if not sessions:
            self.issue("malformed_records", ".haystack_sessions", "instance has no sessions", "instance skipped")
            return None
        n = len(sessions)
        ids = self._list("haystack_session_ids")
        names = self._session_names(ids, n)
        times = self._times(self._list("haystack_dates"), n)
        order = sorted(range(n), key=lambda i: (times[i], i))
        self.index_of = {i: index for index, i in enumerate(order)}
        if order != list(range(n)):
            self.issue("order_changes", ".haystack_dates", "dataset order differs from time order",
                       "indexed in time order: " + " ".join(f"S{i + 1}" for i in order),
                       raw=" ".join(f"S{i + 1}" for i in range(n)))
        turns: dict[int, list[tuple[Message, bool]]] = {}
        lines: list = []
        for index, i in enumerate(order):
            turns[i] = self._messages(i, sessions[i], times[i])
            messages = [m for m, _ in turns[i]]
            spoke = {m.author for m in messages}
            participants = [e.entity_id for e in ENTITIES if e.entity_id in spoke] or [USER, ASSISTANT]
            lines.append(SessionLine(session_id=f"{self.sid}-S{i + 1}", index=index, time=rfc3339(times[i]),
                                     participants=participants, messages=messages))
        abstention = isinstance(self.record.get("question_id"), str) and \
            self.record["question_id"].endswith(ABSTENTION_SUFFIX)
        last_start = times[order[-1]]
        asked_at = self._asked_at(last_start, probe_id)
        horizon = horizon_for(n)
        gold_probe = GoldProbe(probe_id=probe_id, checkpoint_id=f"{self.sid}-final",
                               probe_type=self._probe_type(probe_id), abstention=abstention,
                               answer=self._answer(abstention, probe_id),
                               evidence=self._evidence(turns, names, ids, abstention, probe_id))
        header = HeaderLine(scenario_id=self.sid, paradigm="user_assistant", source=SOURCE, free_form=True,
                            horizons=[HorizonPhase(name=horizon, sessions=n, session_gap_hours=self.gap_hours)],
                            entities=list(ENTITIES))
        checkpoint = CheckpointLine(checkpoint_id=f"{self.sid}-final", after_session=n, horizon=horizon,
                                    probes=[Probe(probe_id=probe_id, asked_by=USER, query=question,
                                                  asked_at=rfc3339(asked_at))])
        return [header, *lines, checkpoint], GoldFile(scenario_id=self.sid, source=SOURCE, probes=[gold_probe])


def _scenario_id(record: object, position: int, used: set[str]) -> tuple[str, str | None]:
    """``lme-<question_id>`` made a unique file-safe id, and what was wrong, if anything."""
    qid = record.get("question_id") if isinstance(record, dict) else None
    named = isinstance(qid, (str, int)) and not isinstance(qid, bool) and str(qid).strip() != ""
    # Only ASCII letters, digits and ._- survive, so the id cannot leave fixtures/ or gold/.
    base = sanitise_id(f"lme-{qid}" if named else f"lme-record-{position}", colons=False)[:SCENARIO_ID_CHARS]
    sid = unique_id(base, used, SCENARIO_ID_CHARS)
    if not named:
        return sid, "question_id missing"
    if not isinstance(qid, str):
        return sid, "question_id is not a string"
    return sid, None if sid == base else "duplicate question_id (after sanitising)"


def _variant(name: str) -> str:
    lower = name.lower()
    if "oracle" in lower:
        kind = "oracle (evidence sessions only)"
    elif re.search(r"(^|[_\-.])m([_\-.]|$)", lower):
        kind = "M (~500 sessions per instance)"
    elif re.search(r"(^|[_\-.])s([_\-.]|$)", lower):
        kind = "S (~50 sessions per instance)"
    else:
        return f"source file {name}; variant not detectable from the file name"
    cleaned = ", cleaned re-release" if "clean" in lower else ""
    return f"source file {name}; variant {kind}{cleaned} (from the file name)"


_AFTER_ARRAY = -2


def _format_error(path: Path, reader: _Reader, position: int, written: int, exc: Exception) -> SourceFormatError:
    if isinstance(exc, _TooLong):
        what = f"a single JSON value longer than {human(MAX_INSTANCE_BYTES)} (the parser would hold it whole)"
        where = f"byte {exc.start:,}"
    else:
        message = exc.args[0] if exc.args else exc
        if isinstance(message, bytes):
            message = message.decode("utf-8", "replace")
        first = str(message).strip().splitlines()[0] if str(message).strip() else type(exc).__name__
        what = f"not valid JSON ({first})"
        low = max(reader.consumed - reader.last, 0)
        where = f"bytes {low:,}-{reader.consumed:,}" if reader.consumed else "byte 0"
        if reader.consumed == 0:
            what = "empty file: expected a JSON array of LongMemEval instances"
    if position == _AFTER_ARRAY:
        state = f"after the array; its {written} scenarios were written, but no {REPORT_FILE}"
    elif position >= 0:
        state = (f"instance [{position}]; the {written} scenarios before it were written, the import is "
                 f"incomplete (no {REPORT_FILE})")
    else:
        state = "(document)"
    return SourceFormatError(f"{path}: {where} ({state}): {what}")


def import_longmemeval(path: Path, out_dir: Path) -> ImportReport:
    """Stream a LongMemEval file into ``out_dir/fixtures/<scenario>.jsonl``,
    ``out_dir/gold/<scenario>.json`` and ``out_dir/import-report.json``; return the report.

    One scenario per instance, written as soon as the instance is read; memory holds one
    instance (at most :data:`MAX_INSTANCE_BYTES` of JSON) at a time. Bad items never
    raise: each becomes an issue in the report (see the module docstring). The same input
    file gives byte-identical output files.

    Raises:
        SourceFormatError: the file is empty, not a JSON array, or stops being valid JSON
            (or holds one value over :data:`MAX_INSTANCE_BYTES`); the message names the
            file, the byte range and the instance. Scenarios written before stay; no
            report is written.
        OSError: the file cannot be read or the output written.
    """
    path, out_dir = Path(path), Path(out_dir)
    report = ReportBuilder(SOURCE, ISSUE_KINDS, COUNT_KEYS)
    used_ids: set[str] = set()
    dropped_fields: dict[str, int] = {}
    with open(path, "rb") as handle:
        reader = _Reader(handle)
        events = ijson.basic_parse(reader, use_float=True, buf_size=READ_SIZE)
        position = -1
        try:
            first, _ = next(events)
            if first != "start_array":
                kind = {"start_map": "an object", "string": "a string", "number": "a number",
                        "boolean": "a boolean", "null": "null"}.get(first, first)
                raise source_error(path, "(document)", f"expected a JSON array of LongMemEval instances, "
                                   f"got {kind}")
            stream = _instances(events, reader)
            while True:
                position += 1
                try:
                    record = next(stream)
                except StopIteration:
                    break
                _convert(record, position, used_ids, report, out_dir, dropped_fields)
                del record  # before the next instance is built
            position = _AFTER_ARRAY
            for _ in events:  # text after the array is an error (raised here)
                pass
        except StopIteration:  # no event at all
            raise _format_error(path, reader, -1, 0, ValueError("premature EOF")) from None
        except (ijson.JSONError, UnicodeDecodeError, _TooLong) as exc:
            raise _format_error(path, reader, position, len(report.scenarios), exc) from None
        sha, size = reader.finish()
    notes = [_variant(path.name), *NOTES, dropped_fields_note(dropped_fields, KEPT_NOTE)]
    return report.write(out_dir, path, sha, size, notes)


def _convert(record: object, position: int, used_ids: set[str], report: ReportBuilder, out_dir: Path,
             dropped_fields: dict[str, int]) -> None:
    """Convert and write one instance (or list why not)."""
    sid, problem = _scenario_id(record, position, used_ids)
    counts = report.counts
    if isinstance(record, _Skipped) or not isinstance(record, dict):
        reason = record.reason if isinstance(record, _Skipped) else f"instance is {_kind(record)}, not an object"
        report.issue("malformed_records", sid, f"[{position}]", reason, "instance skipped")
        counts["skipped_instances"] += 1
        return
    instance = _Instance(record, position, sid, report.issues, counts, dropped_fields)
    if problem:
        instance.issue("malformed_records", ".question_id", problem, f"scenario id {sid}",
                       raw=record.get("question_id"))
    converted = instance.convert()
    if converted is None:
        counts["skipped_instances"] += 1
        instance.close()
        return
    lines, gold = converted
    sessions = [line for line in lines if isinstance(line, SessionLine)]
    asked = [p for line in lines if isinstance(line, CheckpointLine) for p in line.probes]
    answer_ids = record.get("answer_session_ids")
    cited = {p.probe_id: len(answer_ids) if isinstance(answer_ids, list) else 0 for p in gold.probes}
    report.extend(gold_quality(sid, sessions, gold.probes, {p.probe_id: f"[{position}]" for p in gold.probes},
                               questions=asked, dropped=instance.dropped, cited=cited))
    instance.close()
    write_fixture(out_dir / "fixtures" / f"{sid}.jsonl", lines)
    write_gold(out_dir / "gold" / f"{sid}.json", gold)
    report.scenario(sid, sessions, gold.probes)


def _kind(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


IMPORTER = Importer(
    run=import_longmemeval,
    summary="LongMemEval (longmemeval_s/_m/_oracle.json, cleaned too): one scenario per question, streamed.",
    description="Format and decisions: docs/import-formats.md#longmemeval.",
    unit="instance")

"""Converting one guide case (one line of the file, parsed) into fixture lines and a gold file.

The rules, and the ``drift`` extensions that restore what the plain format lacks, are in
docs/import-formats.md#guide; each item the conversion changes or drops is listed under one of
:data:`conformance.importers.guide.keys.ISSUE_KINDS`.
"""

from __future__ import annotations

import bisect
import re
import statistics
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone

from pydantic import BaseModel, ValidationError

from conformance.contract.fixture import CheckpointLine, EntityRef, HeaderLine, HorizonPhase, Message, Probe, SessionLine
from conformance.contract.gold import GoldFile, GoldProbe
from conformance.importers.guide.keys import (
    CHECKPOINT_KEY,
    EXTRAS_KEY,
    GOLD_FILE_EXTRAS,
    GOLD_PROBE_EXTRAS,
    HEADER_EXTRAS,
    PROBE_EXTRAS,
    SESSION_EXTRAS,
    SOURCE,
    TURN_EXTRAS,
)
from conformance.importers.report import ImportIssue
from conformance.importers.toolkit import (
    SCENARIO_ID_CHARS,
    fit_message,
    horizon_for,
    overlong_query,
    raw_text,
    rfc3339,
    sanitise_id,
    unique_id,
)

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

_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")
_WORD = re.compile(r"\w+")
_MISSING = object()


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


def raw_value(value: object) -> str:
    """A source value as an issue quotes it, cut to :data:`MAX_RAW_CHARS` characters (``...`` marks a cut)."""
    text = raw_text(value)
    return text if len(text) <= MAX_RAW_CHARS else text[:MAX_RAW_CHARS] + "..."


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
class Converted:
    lines: list[BaseModel]
    sessions: list[SessionLine]
    gold: GoldFile
    location_of: dict[str, str]
    extended: bool


class Case:
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
            raw=None if raw is _MISSING else raw_value(raw), reason=reason, resolution=resolution))

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
            chosen = unique_id(sanitise_id(fallback), used)
            self.issue("malformed_records", path, f"{what} id missing or not a text", f"named {chosen}",
                       chosen, value if value is not None else _MISSING)
            return chosen
        base = sanitise_id(text, sanitise_id(fallback))
        chosen = unique_id(base, used)
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
            text, cut = fit_message(text)
            if cut:
                self.issue("malformed_records", f"{where}.text", *cut, message_id)
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
            if overlong_query(query):
                self.issue("malformed_records", f"{where}.question", overlong_query(query), "skipped")
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
        return raw_value(value)

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
    def convert(self) -> Converted | None:
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
        return Converted(lines, lines_sessions, gold, location_of, bool(self.extras))

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


def scenario_id(data: dict, lineno: int, used: set[str]) -> tuple[str, str | None, str | None]:
    """The case's unique file-safe scenario id, and which issue kind applies with its reason."""
    text = _id_text(data.get("case_id"))
    base = sanitise_id(text if text is not None else f"case-line-{lineno}", f"case-line-{lineno}",
                       colons=False)[:SCENARIO_ID_CHARS]
    chosen = unique_id(base, used, SCENARIO_ID_CHARS, fold=True)
    if text is None:
        return chosen, "malformed_records", "case_id missing or not a text"
    if chosen != base:
        return chosen, "duplicate_ids", "case_id (ignoring case) already used by an earlier case"
    if base != text:
        return chosen, "malformed_records", "case_id is not a valid file-safe id"
    return chosen, None, None

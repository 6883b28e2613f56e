"""Import BEAM ("Beyond a Million Tokens", mohammadtavakoli78/BEAM; HF ``Mohammadta/BEAM`` and
``Mohammadta/BEAM-10M``) into fixtures + gold.

One scenario per conversation, ``beam-<size>-<id>`` (``beam-100K-1``): a user talks to an
assistant (paradigm ``user_assistant``) and the user asks every probing question at one
checkpoint after the last session. Probes are free-form, so hermetic runs score retrieval
only: gold evidence is the message ids BEAM's ``source_chat_ids`` name.

Format as read from the BEAM repository (its ``chats/`` folder, its dataset download script
and its answer-generation and evaluation code); checked against the repository's 90
conversations of 100K, 500K and 1M tokens and the probing questions of all 100:

* A conversation folder ``chats/<size>/<id>/`` holds ``chat.json``, sometimes
  ``chat_trunecated.json`` (sic; a prefix of ``chat.json``, occasionally with one statement
  edited), and ``probing_questions/probing_questions.json``. BEAM's answer generation reads
  ``chat_trunecated.json`` when it exists, so this importer does too.
* ``chat.json`` is a list of batches ``{"batch_number", "time_anchor", "turns"}``; ``turns``
  is a list of turns, each a list of messages ``{"role": "user"|"assistant", "id": int,
  "content": str}``, user messages also ``"index": "<batch>,<turn>"`` and ``"question_type"``
  (``main_question`` opens a turn; ``followup_question``, ``answer_ai_question``). The first
  user message of each batch carries ``"time_anchor": "March-15-2024"``; the batch-level
  ``time_anchor`` is null in every file seen. Message ids run 0, 1, 2, ... over the whole
  conversation.
* 10M conversations: ``chat.json`` is a list of one-key objects ``{"plan-<n>": <batches>}``
  whose message ids BEAM's download script renumbered to run on across plans.
* ``probing_questions.json`` maps each of ten abilities to a list of items
  (``question``, ``rubric`` [list of strings], ``difficulty``, ...). Short-answer abilities
  (event_ordering, information_extraction, knowledge_update, multi_session_reasoning,
  temporal_reasoning) carry ``answer``; abstention carries ``ideal_response``;
  contradiction_resolution ``ideal_answer``; summarization ``ideal_summary``;
  instruction_following and preference_following only ``expected_compliance``.
  ``source_chat_ids`` are message ids: a list, or an object of lists
  (``first_statement``/``second_statement``, ``original_info``/``updated_info``,
  ``first_event``/``second_event``); abstention items have none. BEAM's judge grades every
  ability against ``rubric``.
* HF rows (``conversation_id``, ``chat``, ``probing_questions``, ...; one split per size):
  ``chat`` is a list of batches, each a flat list of messages (turns start at each
  ``main_question``); in BEAM-10M a list of ``{"plan-<n>": ...}`` objects, all keys present
  and all values but one null. ``probing_questions`` is text: a Python literal (BEAM's script
  reads it with ``ast.literal_eval``).

Assumptions (not verifiable here): the 10M ``chat.json`` files and the HF files themselves
were not available (the 10M files exceed the snapshot size; no network), so their shape is
taken from BEAM's download script; HF rows may carry ``chat`` as JSON text as well; a row's
size comes from a ``chat_size``, ``size`` or ``split`` field, the top-level key of a
``{"<size>": [rows]}`` export, or a size in the file name (``BEAM-100K.jsonl``); when a plan
of a 10M row restarts its message ids, they are renumbered the way BEAM's download script
does (each plan continues after the previous plan's last id) and listed in ``renumbered_ids``.

Decisions (also written into the report's ``notes``):

* One session per BEAM turn (a user main question, its follow-ups and the assistant's
  replies), in dataset order. A turn's time anchor (a message's ``time_anchor``, else the
  batch's for its first turn; UTC midnight) starts its session; later sessions start
  :data:`SESSION_STEP` (10 min) after the previous one, messages are :data:`MESSAGE_STEP`
  (30 s) apart. An anchor earlier than the end of the previous session is raised to it
  (``time_anchor_regressions``): dataset order is kept, never re-sorted. Sessions before the
  first anchor are placed 10 min apart before it; without any anchor at 2000-01-01T00:00Z.
* One checkpoint after the last session (BEAM asks every question at the end of the
  conversation; items carry no position); probes asked one day after the last session starts.
* Probe type = the ability (an unknown key: ``uncategorised``). Abstention items: gold
  ``unknown``. Items with no short ``answer`` (contradiction_resolution, instruction_following,
  preference_following, summarization) are rubric-graded: gold answer = the rubric lines joined
  by newlines, ``subtype="rubric"``, listed in ``rubric_graded``; they count only with an
  answer model and a judge. Numeric answers are kept as text (``integer_answers``).
* Message text is kept verbatim, BEAM's ``->-> <batch>,<turn>`` tags included (BEAM's own
  evaluation hands them to the model too). ``conversation_references`` (free text) is not used.
* A UTF-8 byte order mark at the start of a JSON or JSON Lines file is dropped (as the LongMemEval
  and guide importers do); the source digest covers the file's bytes as they are.
* Size bounds (:mod:`conformance.contract.limits`): a folder's JSON file or a JSONL line holds
  at most ``MAX_IMPORT_SOURCE_BYTES`` (512 MiB; a 10M chat is ~60 MB) or its conversation is
  skipped and listed; rows of a JSON array export are streamed one at a time (ijson), so only
  one conversation is held in memory at once.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import statistics
from collections.abc import Iterator
from typing import BinaryIO
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import ijson

from conformance.contract.corpus import file_sha256, write_fixture, write_gold
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
    MAX_ID_CHARS,
    MAX_IMPORT_SOURCE_BYTES,
    MAX_MESSAGE_TEXT_CHARS,
    MAX_QUERY_CHARS,
    BadDocument,
    TooLarge,
    human,
    parse_json,
    read_bounded,
    too_deep,
)
from conformance.importers.locomo import horizon_for, parse_session_time, rfc3339, sanitise_id
from conformance.importers.quality import MAX_ANSWER_CHARS, QUALITY_KINDS, garbled_reason, gold_quality
from conformance.importers.report import (
    REPORT_FILE,
    ImportIssue,
    ImportReport,
    SourceFormatError,
    format_report,
    write_report,
)

__all__ = ["import_beam", "rubric_lines", "format_report", "ABILITIES", "RUBRIC_SUBTYPE", "ISSUE_KINDS"]

SOURCE = "beam"
ABILITIES = (
    "abstention", "contradiction_resolution", "event_ordering", "information_extraction",
    "instruction_following", "knowledge_update", "multi_session_reasoning", "preference_following",
    "summarization", "temporal_reasoning",
)
ABSTENTION = "abstention"
SHORT_ANSWER_ABILITIES = frozenset({"event_ordering", "information_extraction", "knowledge_update",
                                    "multi_session_reasoning", "temporal_reasoning"})
"""Abilities whose items carry a short ``answer``; an item of one of them without it is a defect."""
RUBRIC_SUBTYPE = "rubric"
ISSUE_KINDS = (
    "rubric_graded", "malformed_evidence", "dangling_evidence", "integer_answers", "missing_answers",
    "unparseable_dates", "time_anchor_regressions", "duplicate_message_ids", "renumbered_ids",
    "malformed_records", *QUALITY_KINDS,
)
USER, ASSISTANT = "user", "assistant"
SESSION_STEP = timedelta(minutes=10)
MESSAGE_STEP = timedelta(seconds=30)
PROBE_DELAY = timedelta(days=1)
FALLBACK_ANCHOR = datetime(2000, 1, 1, tzinfo=timezone.utc)
"""Start of the first session when no turn of a conversation has a usable time anchor."""
DEFAULT_GAP_HOURS = 24.0
CHAT_FILES = ("chat_trunecated.json", "chat_truncated.json", "chat.json")
"""Chat files of a conversation folder, the first present wins (BEAM's own choice, in order)."""
QUESTION_FILES = ("probing_questions/probing_questions.json", "probing_questions.json")
MAX_FOLDER_DEPTH = 4
"""Folders below PATH searched for conversation folders (``chats/<size>/<id>`` is depth 2)."""
SCENARIO_ID_CHARS = MAX_ID_CHARS - 32
"""Session, message and probe ids append a suffix (``-p10-b12-t93``, ``-m20708``, ``-q0042``)."""
_SIZE = re.compile(r"(\d{1,4}(?:\.\d{1,2})?)\s?([KkMm])")
_SIZE_IN_NAME = re.compile(r"(?<![0-9A-Za-z])(\d{1,4}[KkMm])(?![0-9A-Za-z])")
_NATURAL = re.compile(r"(\d+)")

NOTES = [
    "paradigm user_assistant: entities 'user' (human) and 'assistant' (assistant_agent); "
    "the user asks every probe",
    "one session per BEAM turn (a main question, its follow-ups and the replies), in dataset order",
    "a turn's time_anchor (UTC midnight) starts its session; other sessions 10 minutes after the previous "
    "one; messages 30 s apart; an anchor before the end of the previous session is raised to it "
    "(time_anchor_regressions); no anchor at all: 2000-01-01T00:00:00Z",
    "one checkpoint after the last session (BEAM items carry no position); probes asked 1 day after "
    "the last session starts",
    "probe type = BEAM ability; abstention items: gold 'unknown'; unknown ability: 'uncategorised'",
    "items without a short 'answer' (contradiction_resolution, instruction_following, "
    "preference_following, summarization) are rubric-graded: gold answer = rubric lines joined by "
    "newlines, subtype 'rubric', listed in rubric_graded; they count only with an answer model and a judge",
    "evidence = source_chat_ids (message ids), nested lists and objects flattened in order; "
    "conversation_references (free text) is not used",
    "message text verbatim, BEAM's '->-> batch,turn' tags included",
    "folder input: chat_trunecated.json is read instead of chat.json when present (as BEAM's answer "
    "generation does); source_sha256 is the SHA-256 over '<relative path>\\0<file sha256>\\0' of "
    "every file read, in import order",
    f"size bounds: a folder's JSON file or a JSONL line above {MAX_IMPORT_SOURCE_BYTES >> 20} MiB skips its "
    "conversation (listed); JSON array rows are streamed one conversation at a time",
    "answer_not_in_evidence is not checked for rubric-graded probes, nor garbled_answers' length "
    f"bound ({MAX_ANSWER_CHARS} characters): a rubric is neither a phrase of the chat nor short",
]


def _raw(value: object) -> str:
    """A source value as the report shows it: text verbatim, anything else as JSON text."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)


def _unique(base: str, used: set[str], limit: int = MAX_ID_CHARS) -> str:
    candidate, k = base[:limit], 2
    while candidate in used:
        suffix = f"-{k}"
        candidate, k = base[: limit - len(suffix)] + suffix, k + 1
    used.add(candidate)
    return candidate


def _natural_key(name: str) -> tuple:
    """Folder order: sizes by magnitude (``100K`` before ``1M``), then other names naturally
    (``2`` before ``10``); ties broken by the text itself (deterministic)."""
    size = normalise_size(name)
    if size is not None:
        return (0, float(size[:-1]) * (1_000 if size[-1] == "K" else 1_000_000), name)
    return (1, [(0, int(part), part) if part.isdigit() else (1, 0, part) for part in _NATURAL.split(name) if part],
            name)


def normalise_size(text: object) -> str | None:
    """``"100k"`` -> ``"100K"``, ``"10 M"`` -> ``"10M"``; None when the text is no BEAM size."""
    if not isinstance(text, str):
        return None
    match = _SIZE.fullmatch(text.strip())
    return f"{match[1]}{match[2].upper()}" if match else None


def _size_in_name(name: str) -> str | None:
    found = _SIZE_IN_NAME.search(name)
    return normalise_size(found[1]) if found else None


def _ability(key: object) -> str | None:
    """``"Multi-Session Reasoning"`` -> ``multi_session_reasoning``; None when it names no ability."""
    if not isinstance(key, str):
        return None
    name = re.sub(r"[\s\-]+", "_", key.strip().lower())
    return name if name in ABILITIES else None


def _as_int(value: object) -> tuple[int | None, bool]:
    """(the integer, whether it was given as text); (None, False) when it is no integer id."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value, False
    if isinstance(value, str) and re.fullmatch(r"\s*\d{1,18}\s*", value):
        return int(value), True
    return None, False


def decode_column(value: object) -> tuple[object, str | None]:
    """A row column that may be JSON or Python-literal text (HF ``probing_questions``) as an
    object: ``(object, None)`` or ``(None, reason)``. Non-text values are returned as they are."""
    if not isinstance(value, str):
        return value, None
    try:
        return parse_json(value), None
    except BadDocument as exc:
        json_problem = exc.message
    try:
        obj = ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError, OverflowError):
        return None, f"text that is neither JSON ({json_problem}) nor a Python literal"
    if too_deep(obj) is not None:
        return None, "nested too deeply"
    return obj, None


# ---- reading sources -------------------------------------------------------------------


@dataclass
class _Source:
    """One conversation as read, before conversion."""

    base: str
    """Scenario id before it is made unique."""
    origin: str
    """Where the conversation sits in the input (folder, ``line 3``, ``[2]``)."""
    chat: object = None
    questions: object = None
    skip: str | None = None
    """Why the conversation cannot be imported at all."""
    problems: list[tuple[str, str, str, object]] = field(default_factory=list)
    """(location, reason, resolution, raw) found while reading, kind ``malformed_records``."""
    truncated_chat: bool = False


def _named(conversation: object) -> bool:
    """A usable conversation id: text or an integer, not blank."""
    return isinstance(conversation, (str, int)) and not isinstance(conversation, bool) \
        and bool(str(conversation).strip())


def _scenario_base(size: str | None, conversation: object, fallback: str) -> str:
    """``beam-<size>-<id>`` (``beam-<id>`` without a size), ``fallback`` standing in for a missing id."""
    ident = str(conversation).strip() if _named(conversation) else fallback
    base = f"beam-{size}-{ident}" if size else f"beam-{ident}"
    # Only ASCII letters, digits and ._- survive, so the id cannot leave fixtures/ or gold/.
    return sanitise_id(base, "beam", colons=False)[:SCENARIO_ID_CHARS]


class _Hasher:
    """The report's source digest: one file's SHA-256, or for a folder the SHA-256 over
    ``<relative path>\\0<file sha256>\\0`` of each file read, in import order."""

    def __init__(self, root: Path):
        self.root, self.size = root, 0
        self._digest, self._single = hashlib.sha256(), None

    def add(self, path: Path, data: bytes) -> None:
        rel = path.relative_to(self.root).as_posix() if path != self.root else path.name
        self._digest.update(rel.encode() + b"\0" + hashlib.sha256(data).hexdigest().encode() + b"\0")
        self.size += len(data)

    def whole_file(self, path: Path) -> None:
        self._single, self.size = file_sha256(path)

    def hexdigest(self) -> str:
        return self._single or self._digest.hexdigest()


#: A UTF-8 byte order mark (Windows tools write one). Every JSON and JSON Lines file BEAM reads may
#: start with one, as the LongMemEval and guide importers accept; it is hashed, never parsed.
_BOM = b"\xef\xbb\xbf"


def _without_bom(raw: bytes) -> bytes:
    """``raw`` without a leading UTF-8 byte order mark."""
    return raw[len(_BOM):] if raw.startswith(_BOM) else raw


def _open_json(path: Path) -> BinaryIO:
    """``path`` opened for ijson, positioned after a leading UTF-8 byte order mark."""
    handle = open(path, "rb")
    try:
        if handle.read(len(_BOM)) != _BOM:
            handle.seek(0)
    except BaseException:
        handle.close()
        raise
    return handle


def _read_json_file(path: Path, hasher: _Hasher) -> tuple[object, str | None]:
    try:
        raw = read_bounded(path, MAX_IMPORT_SOURCE_BYTES)
    except TooLarge as exc:
        return None, f"file {exc}"
    except OSError as exc:
        return None, f"cannot read: {exc.strerror or exc}"
    hasher.add(path, raw)
    try:
        return parse_json(_without_bom(raw)), None
    except BadDocument as exc:
        where = f"line {exc.line}: " if exc.line else ""
        return None, f"not a JSON file ({where}{exc.message})"


def _is_conversation(folder: Path) -> bool:
    return any((folder / name).is_file() for name in (*CHAT_FILES, *QUESTION_FILES))


def _conversation_folders(root: Path) -> list[Path]:
    """Conversation folders at or below ``root`` (depth-first, natural order; symbolic links
    and hidden folders are not followed; a conversation folder is not searched further)."""
    if _is_conversation(root):
        return [root]
    found: list[Path] = []

    def walk(folder: Path, depth: int) -> None:
        if depth > MAX_FOLDER_DEPTH:
            return
        try:
            children = sorted((c for c in folder.iterdir() if c.is_dir() and not c.is_symlink()
                               and not c.name.startswith(".")), key=lambda c: _natural_key(c.name))
        except OSError:
            return
        for child in children:
            if _is_conversation(child):
                found.append(child)
            else:
                walk(child, depth + 1)

    walk(root, 1)
    return found


def _folder_sources(root: Path, hasher: _Hasher) -> Iterator[_Source]:
    folders = _conversation_folders(root)
    if not folders:
        raise SourceFormatError(f"{root}: (folder): no BEAM conversation folder (one holding chat.json or "
                                "probing_questions/probing_questions.json) found")
    for folder in folders:
        origin = folder.relative_to(root).as_posix() if folder != root else folder.name
        source = _Source(base=_scenario_base(normalise_size(folder.parent.name), folder.name, "conversation"),
                         origin=origin)
        if normalise_size(folder.parent.name) is None:
            source.problems.append(("(conversation)", f"chat size unknown (parent folder {folder.parent.name!r} "
                                    "is no size such as 100K)", f"scenario id {source.base}", None))
        chat_file = next((folder / n for n in CHAT_FILES if (folder / n).is_file()), None)
        question_file = next((folder / n for n in QUESTION_FILES if (folder / n).is_file()), None)
        if chat_file is None:
            source.skip = f"skipped: no chat file ({', '.join(CHAT_FILES)})"
            yield source
            continue
        source.truncated_chat = chat_file.name != "chat.json"
        source.chat, problem = _read_json_file(chat_file, hasher)
        if problem:
            source.skip = f"skipped: {chat_file.name}: {problem}"
            yield source
            continue
        if question_file is None:
            source.problems.append(("probing_questions", "no probing questions file ("
                                    + ", ".join(QUESTION_FILES) + ")", "imported without probes", None))
        else:
            source.questions, problem = _read_json_file(question_file, hasher)
            if problem:
                source.problems.append((question_file.relative_to(folder).as_posix(), problem,
                                        "imported without probes", None))
                source.questions = None
        yield source


def _row_source(row: object, origin: str, position: int, size_hint: str | None) -> _Source:
    """A dataset row (``conversation_id``, ``chat``, ``probing_questions``) as a source."""
    if not isinstance(row, dict):
        return _Source(base=_scenario_base(size_hint, None, f"row-{position}"), origin=origin,
                       skip="skipped: row is not an object")
    stated = next((row[k] for k in ("chat_size", "size", "split") if k in row), None)
    size = normalise_size(stated) or size_hint
    source = _Source(base=_scenario_base(size, row.get("conversation_id"), f"row-{position}"), origin=origin)
    if stated is not None and normalise_size(stated) is None:
        source.problems.append(("chat_size", "not a BEAM size such as 100K", f"scenario id {source.base}", stated))
    if size is None:
        source.problems.append(("(row)", "chat size unknown (no chat_size, size or split field, no size in the "
                                "file name or split key)", f"scenario id {source.base}", None))
    if not _named(row.get("conversation_id")):
        source.problems.append(("conversation_id", "conversation_id missing or not text",
                                f"scenario id {source.base}", row.get("conversation_id")))
    if too_deep(row) is not None:
        source.skip = "skipped: row nested too deeply"
        return source
    if "chat" not in row:
        source.skip = "skipped: row has no chat"
        return source
    source.chat, problem = decode_column(row["chat"])
    if problem:
        source.skip = f"skipped: chat is {problem}"
        return source
    if row.get("probing_questions") is None:
        source.problems.append(("probing_questions", "row has no probing_questions", "imported without probes", None))
    else:
        source.questions, problem = decode_column(row["probing_questions"])
        if problem:
            source.problems.append(("probing_questions", f"probing_questions is {problem}",
                                    "imported without probes", None))
    return source


def _first_line(exc: Exception) -> str:
    text = exc.args[0] if exc.args else str(exc)
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return str(text).strip().splitlines()[0] if str(text).strip() else exc.__class__.__name__


def _jsonl_sources(path: Path, size_hint: str | None) -> Iterator[_Source]:
    with open(path, "rb") as handle:
        lineno = 0
        while True:
            raw = handle.readline(MAX_IMPORT_SOURCE_BYTES + 1)
            if not raw:
                return
            lineno += 1
            origin = f"line {lineno}"
            if len(raw) > MAX_IMPORT_SOURCE_BYTES and not raw.endswith(b"\n"):
                del raw
                while True:  # the rest of the line is dropped unread into memory
                    chunk = handle.readline(1 << 20)
                    if not chunk or chunk.endswith(b"\n"):
                        break
                yield _Source(base=_scenario_base(size_hint, None, f"line-{lineno}"), origin=origin,
                              skip=f"skipped: line longer than {human(MAX_IMPORT_SOURCE_BYTES)} (the input limit; "
                                   "see docs/input-limits.md)")
                continue
            if lineno == 1:
                raw = _without_bom(raw)
            if not raw.strip():
                continue
            try:
                row = parse_json(raw)
            except BadDocument as exc:
                yield _Source(base=_scenario_base(size_hint, None, f"line-{lineno}"), origin=origin,
                              skip=f"skipped: not a JSON line ({exc.message})")
                continue
            del raw
            source = _row_source(row, origin, lineno, size_hint)
            del row  # only the source holds the conversation now
            yield source


def _json_shape(path: Path) -> tuple[str, list[tuple[str, str]]]:
    """Validate the whole file as JSON by streaming it; return its top-level kind
    (``array``, ``object``, other) and, for an object, its keys with each value's first event.

    Raises:
        SourceFormatError: not JSON.
    """
    kind, keys, pending = "", [], None
    try:
        with _open_json(path) as handle:
            for prefix, event, value in ijson.parse(handle):
                if not kind:
                    kind = {"start_array": "array", "start_map": "object"}.get(event, event)
                if kind == "object" and prefix == "" and event == "map_key":
                    pending = value
                elif pending is not None:
                    keys.append((pending, event))
                    pending = None
    except (ijson.JSONError, ValueError) as exc:
        reason = _first_line(exc)
        hint = "; JSON Lines need a .jsonl name" if "trailing garbage" in reason else ""
        raise SourceFormatError(f"{path}: (document): not a JSON file ({reason}){hint}") from None
    if not kind:
        raise SourceFormatError(f"{path}: (document): empty file")
    return kind, keys


def _json_sources(path: Path, size_hint: str | None) -> Iterator[_Source]:
    kind, keys = _json_shape(path)
    if kind == "array":
        with _open_json(path) as handle:
            for r, row in enumerate(ijson.items(handle, "item", use_float=True)):
                source = _row_source(row, f"[{r}]", r, size_hint)
                del row
                yield source
        return
    if kind != "object":
        raise SourceFormatError(f"{path}: (document): expected a JSON list of BEAM rows, an object of rows by "
                                f"size, or one row; got a {kind}")
    names = [k for k, _ in keys]
    if "chat" in names or "probing_questions" in names:
        try:
            row = parse_json(_without_bom(read_bounded(path, MAX_IMPORT_SOURCE_BYTES)))
        except TooLarge as exc:
            raise SourceFormatError(f"{path}: (file): one row {exc}") from None
        except BadDocument as exc:
            raise SourceFormatError(f"{path}: (document): {exc.message}") from None
        yield _row_source(row, "(document)", 0, size_hint)
        return
    for key, first in keys:
        if first != "start_array" or "." in key:
            yield _Source(base=_scenario_base(None, key, "split"), origin=f"{key}",
                          skip="skipped: top-level value is not a list of rows" if first != "start_array"
                          else "skipped: a key holding '.' cannot be streamed")
            continue
        split_size = normalise_size(key) or size_hint
        with _open_json(path) as handle:
            for r, row in enumerate(ijson.items(handle, f"{key}.item", use_float=True)):
                source = _row_source(row, f"{key}[{r}]", r, split_size)
                del row
                yield source


# ---- converting one conversation -------------------------------------------------------------


@dataclass
class _Turn:
    suffix: str
    """Session id suffix: ``b<batch>-t<turn>`` or ``p<plan>-b<batch>-t<turn>`` (1-based positions)."""
    location: str
    messages: list[tuple[str, object]]
    """(location, source message) in dataset order."""
    anchor: object = None
    anchor_location: str | None = None
    plan: int = 0
    """1-based plan of a 10M chat; 0 outside plans."""
    plan_location: str = ""


class _Conversation:
    """Converts one BEAM conversation; problems go to the shared ``issues`` lists."""

    def __init__(self, scenario_id: str, issues: dict[str, list[ImportIssue]], counts: dict[str, int]):
        self.sid, self.issues, self.counts = scenario_id, issues, counts
        self.index: dict[int, str] = {}  # BEAM message id -> our message id (the first one)
        self.used: set[str] = set()
        self.unnamed = 0
        self.gap_hours = DEFAULT_GAP_HOURS

    def issue(self, kind: str, location: str, reason: str, resolution: str, item_id: str | None = None,
              raw: object = None) -> None:
        self.issues[kind].append(ImportIssue(
            scenario_id=self.sid, location=location, item_id=item_id,
            raw=None if raw is None else _raw(raw)[:2000], reason=reason, resolution=resolution))

    # ---- chat layout --------------------------------------------------------------------
    def _turns(self, chat: object) -> list[_Turn]:
        if not isinstance(chat, list):
            self.issue("malformed_records", "chat", f"chat is a {type(chat).__name__}, not a list of batches",
                       "no sessions")
            return []
        turns: list[_Turn] = []
        flat: list[tuple[str, object]] = []
        plan = 0
        batch = 0
        for i, item in enumerate(chat):
            where = f"chat[{i}]"
            if isinstance(item, dict) and "role" in item:
                flat.append((where, item))  # a flat list of messages (no batches)
                continue
            if flat:
                batch += 1
                turns.extend(self._split(flat, f"b{batch}", "chat"))
                flat = []
            if isinstance(item, dict) and "turns" in item:
                batch += 1
                turns.extend(self._batch(item, where, f"b{batch}"))
            elif isinstance(item, list):
                batch += 1
                turns.extend(self._split([(f"{where}[{j}]", m) for j, m in enumerate(item)], f"b{batch}", where))
            elif isinstance(item, dict):
                values = [(k, v) for k, v in item.items() if v is not None]
                if not values:
                    self.issue("malformed_records", where, "plan object without a chat", "ignored", raw=item)
                for key, value in values:
                    plan += 1
                    turns.extend(self._plan(value, f"{where}.{key}", plan))
            else:
                self.issue("malformed_records", where, "neither a batch, a plan nor a message", "skipped", raw=item)
        if flat:
            batch += 1
            turns.extend(self._split(flat, f"b{batch}", "chat"))
        return turns

    def _plan(self, value: object, where: str, plan: int) -> list[_Turn]:
        if not isinstance(value, list):
            self.issue("malformed_records", where, "plan is not a list of batches", "skipped", raw=value)
            return []
        turns: list[_Turn] = []
        for b, item in enumerate(value):
            at = f"{where}[{b}]"
            if isinstance(item, dict) and "turns" in item:
                turns.extend(self._batch(item, at, f"p{plan}-b{b + 1}"))
            elif isinstance(item, list):
                turns.extend(self._split([(f"{at}[{j}]", m) for j, m in enumerate(item)], f"p{plan}-b{b + 1}", at))
            else:
                self.issue("malformed_records", at, "batch is neither an object with turns nor a list of messages",
                           "skipped", raw=item)
        for turn in turns:
            turn.plan, turn.plan_location = plan, where
        return turns

    def _batch(self, batch: dict, where: str, prefix: str) -> list[_Turn]:
        raw_turns = batch.get("turns")
        if not isinstance(raw_turns, list):
            self.issue("malformed_records", f"{where}.turns", "turns is not a list", "batch skipped", raw=raw_turns)
            return []
        turns = []
        for t, turn in enumerate(raw_turns):
            at = f"{where}.turns[{t}]"
            if not isinstance(turn, list):
                self.issue("malformed_records", at, "turn is not a list of messages", "skipped", raw=turn)
                continue
            turns.append(_Turn(f"{prefix}-t{t + 1}", at, [(f"{at}[{j}]", m) for j, m in enumerate(turn)]))
        anchor = batch.get("time_anchor")
        if turns and anchor is not None:
            turns[0].anchor, turns[0].anchor_location = anchor, f"{where}.time_anchor"
        return turns

    def _split(self, messages: list[tuple[str, object]], prefix: str, where: str) -> list[_Turn]:
        """A flat list of messages cut into turns at each ``main_question`` (as BEAM's script does)."""
        groups: list[list[tuple[str, object]]] = []
        for entry in messages:
            opens = isinstance(entry[1], dict) and entry[1].get("question_type") == "main_question"
            if not groups or (opens and groups[-1]):
                groups.append([])
            groups[-1].append(entry)
        return [_Turn(f"{prefix}-t{t + 1}", where, group) for t, group in enumerate(groups)]

    # ---- messages and sessions ----------------------------------------------------------
    def _renumber(self, turns: list[_Turn]) -> dict[int, int]:
        """Id offsets of the plans (10M chats) that restart the message ids: plan -> offset.
        As BEAM's download script combines plans, such a plan continues after the previous
        plan's last id."""
        ids: dict[int, list[int]] = {}
        where: dict[int, str] = {}
        for turn in turns:
            if turn.plan:
                where.setdefault(turn.plan, turn.plan_location)
                ids.setdefault(turn.plan, []).extend(
                    number for _, m in turn.messages if isinstance(m, dict)
                    for number in [_as_int(m.get("id"))[0]] if number is not None)
        offsets: dict[int, int] = {}
        last: int | None = None
        for plan, numbers in ids.items():
            if not numbers:
                continue
            offset = last + 1 if last is not None and min(numbers) <= last else 0
            if offset:
                self.issue("renumbered_ids", where[plan], "plan restarts the message ids of the plans before it",
                           f"its ids shifted by {offset}, as BEAM's download script combines plans", raw=min(numbers))
                self.counts["renumbered_plans"] += 1
            offsets[plan] = offset
            last = numbers[-1] + offset
        return offsets

    def _message(self, where: str, item: object, offset: int) -> tuple[str, str, str, str] | None:
        """(message id, author, role, text), or None when the message is unusable."""
        if not isinstance(item, dict) or item.get("role") not in (USER, ASSISTANT) \
                or not isinstance(item.get("content"), str):
            self.issue("malformed_records", where, "message lacks a user/assistant role or a content string",
                       "skipped", raw=item)
            return None
        number, as_text = _as_int(item.get("id"))
        if number is None:
            self.unnamed += 1
            message_id = _unique(f"{self.sid}-x{self.unnamed}", self.used)
            self.issue("malformed_records", f"{where}.id", "message has no integer id",
                       f"named {message_id}; no evidence can name it", message_id, item.get("id"))
        else:
            if as_text:
                self.issue("malformed_records", f"{where}.id", "message id is text", f"read as {number}",
                           raw=item.get("id"))
            number += offset
            base = f"{self.sid}-m{number}"
            message_id = base if base not in self.used else _unique(base + "-dup", self.used)
            if message_id != base:
                self.issue("duplicate_message_ids", f"{where}.id", "id already used by an earlier message",
                           f"renamed {message_id}; evidence {number} means the first message", message_id,
                           item.get("id"))
            self.used.add(message_id)
            self.index.setdefault(number, message_id)
        text = item["content"]
        if len(text) > MAX_MESSAGE_TEXT_CHARS:
            self.issue("malformed_records", f"{where}.content", f"text of {len(text):,} characters exceeds the "
                       f"fixture limit of {MAX_MESSAGE_TEXT_CHARS:,}", f"cut to its first "
                       f"{MAX_MESSAGE_TEXT_CHARS:,} characters", message_id)
            text = text[:MAX_MESSAGE_TEXT_CHARS]
        return message_id, item["role"], item["role"], text

    def _anchor(self, turn: _Turn) -> tuple[object, str | None]:
        for where, item in turn.messages:
            if isinstance(item, dict) and item.get("time_anchor") is not None:
                return item["time_anchor"], f"{where}.time_anchor"
        return turn.anchor, turn.anchor_location

    def _times(self, turns: list[_Turn], lengths: list[int]) -> list[datetime]:
        anchors = [self._anchor(t) for t in turns]
        parsed = [parse_session_time(a) if a is not None else (None, None) for a, _ in anchors]
        first = next((k for k, (m, _) in enumerate(parsed) if m is not None), None)
        times: list[datetime] = []
        floor: datetime | None = None
        for k, turn in enumerate(turns):
            moment, problem = parsed[k]
            raw, where = anchors[k]
            session_id = f"{self.sid}-{turn.suffix}"
            if moment is not None and floor is not None and moment < floor:
                self.issue("time_anchor_regressions", where or turn.location, f"time anchor {rfc3339(moment)} is "
                           f"before the end of the previous session ({rfc3339(floor)})",
                           f"set to {rfc3339(floor)}; dataset order kept", session_id, raw)
                moment = floor
            elif moment is None:
                if times:
                    moment = max(times[-1] + SESSION_STEP, floor)
                    how = "10 minutes after the previous session"
                elif first is not None:
                    moment, how = parsed[first][0] - SESSION_STEP * first, "before the first anchored session"
                else:
                    moment, how = FALLBACK_ANCHOR, "a fixed start (no turn of this conversation has an anchor)"
                if raw is not None:
                    self.issue("unparseable_dates", where, f"time anchor {problem}",
                               f"set to {rfc3339(moment)}, {how}", session_id, raw)
            times.append(moment)
            floor = moment + MESSAGE_STEP * max(lengths[k], 1)
        return times

    def sessions(self, chat: object) -> list[SessionLine]:
        turns = self._turns(chat)
        offsets = self._renumber(turns)
        kept: list[tuple[_Turn, list[tuple[str, str, str, str]]]] = []
        for turn in turns:
            offset = offsets.get(turn.plan, 0)
            messages = [m for where, item in turn.messages if (m := self._message(where, item, offset))]
            if not messages:
                self.issue("malformed_records", turn.location, "turn has no usable message", "skipped",
                           f"{self.sid}-{turn.suffix}")
                continue
            kept.append((turn, messages))
        times = self._times([t for t, _ in kept], [len(m) for _, m in kept])
        lines = []
        for index, ((turn, messages), start) in enumerate(zip(kept, times)):
            spoke = {author for _, author, _, _ in messages}
            lines.append(SessionLine(
                session_id=f"{self.sid}-{turn.suffix}", index=index, time=rfc3339(start),
                participants=[e for e in (USER, ASSISTANT) if e in spoke],
                messages=[Message(message_id=mid, author=author, role=role, text=text,
                                  timestamp=rfc3339(start + MESSAGE_STEP * j), scope="shared")
                          for j, (mid, author, role, text) in enumerate(messages)]))
        gaps = [(b - a).total_seconds() / 3600 for a, b in zip(times, times[1:])]
        if gaps and round(statistics.median(gaps), 3) > 0:
            self.gap_hours = round(statistics.median(gaps), 3)
        self.last_time = times[-1] if times else FALLBACK_ANCHOR
        return lines

    # ---- probes ---------------------------------------------------------------------------
    def _evidence(self, value: object, where: str, probe_id: str) -> list[str]:
        kept: list[str] = []

        def visit(item: object, at: str) -> None:
            if isinstance(item, dict):
                for key, sub in item.items():
                    visit(sub, f"{at}.{key}")
            elif isinstance(item, list):
                for j, sub in enumerate(item):
                    visit(sub, f"{at}[{j}]")
            else:
                number, as_text = _as_int(item)
                if number is None:
                    self.issue("malformed_evidence", at, "not a message id (a non-negative integer)", "dropped",
                               probe_id, item)
                    return
                target = self.index.get(number)
                if as_text:
                    self.issue("malformed_evidence", at, "message id given as text",
                               f"read as {number}" + ("" if target else ", which names no message: dropped"),
                               probe_id, item)
                if target is None:
                    if not as_text:
                        self.issue("dangling_evidence", at, "names no message of this conversation", "dropped",
                                   probe_id, item)
                elif target not in kept:
                    kept.append(target)

        if value is not None:
            visit(value, where)
        return kept

    def _rubric(self, value: object, where: str, probe_id: str) -> list[str]:
        if value is None:
            return []
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            self.issue("malformed_records", where, "rubric is not a list of texts", "ignored", probe_id, value)
            return []
        lines = []
        for j, entry in enumerate(value):
            if isinstance(entry, str) and entry.strip():
                lines.append(entry.strip())
            elif isinstance(entry, (int, float)) and not isinstance(entry, bool):
                lines.append(str(entry))
            else:
                self.issue("malformed_records", f"{where}[{j}]", "rubric entry is not a text", "dropped",
                           probe_id, entry)
        return lines

    def _answer(self, item: dict, ability: str | None, where: str, probe_id: str) -> tuple[str, str | None]:
        """(gold answer, subtype) of a non-abstention item: its short ``answer``, else its rubric."""
        value = item.get("answer")
        if isinstance(value, str) and value.strip():
            return value, None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            self.issue("integer_answers", f"{where}.answer", f"answer is a number ({type(value).__name__}), not text",
                       f"kept as text {str(value)!r}", probe_id, value)
            return str(value), None
        rubric = self._rubric(item.get("rubric"), f"{where}.rubric", probe_id)
        empty = "kept with an empty answer (retrieval can still be scored from evidence)"
        if value is not None and not isinstance(value, str):
            self.issue("missing_answers", f"{where}.answer", f"answer is a {type(value).__name__}, not text",
                       "rubric used as gold" if rubric else "kept as JSON text", probe_id, value)
            if not rubric:
                return _raw(value), None
        elif ability in SHORT_ANSWER_ABILITIES:
            self.issue("missing_answers", f"{where}.answer", "no answer",
                       "rubric used as gold" if rubric else empty, probe_id, value)
        elif not rubric:
            self.issue("missing_answers", f"{where}.rubric", "neither an answer nor a rubric", empty, probe_id)
        if not rubric:
            return "", None
        self.counts["rubric_probes"] += 1
        self.issue("rubric_graded", f"{where}.rubric", f"{ability or 'uncategorised'} item without a short answer; "
                   f"BEAM grades it against a {len(rubric)}-line rubric",
                   "gold answer = the rubric lines joined by newlines, subtype 'rubric'; counts only with an "
                   "answer model and a judge", probe_id)
        return "\n".join(rubric), RUBRIC_SUBTYPE

    def probes(self, questions: object) -> tuple[list[Probe], list[GoldProbe], dict[str, str]]:
        if questions is None:
            return [], [], {}
        if not isinstance(questions, dict):
            self.issue("malformed_records", "probing_questions", f"probing questions are a "
                       f"{type(questions).__name__}, not an object of ability -> items", "no probes")
            return [], [], {}
        asked_at = rfc3339(self.last_time + PROBE_DELAY)
        probes, gold, location_of = [], [], {}
        n = 0
        for key, items in questions.items():
            loc = f"probing_questions.{key}"
            ability = _ability(key)
            if ability is None:
                self.issue("malformed_records", loc, "unknown ability",
                           "its items get probe_type 'uncategorised'", raw=key)
            if not isinstance(items, list):
                self.issue("malformed_records", loc, "not a list of items", "skipped", raw=items)
                continue
            for i, item in enumerate(items):
                where, probe_id = f"{loc}[{i}]", f"{self.sid}-q{n:04d}"
                n += 1
                question = item.get("question") if isinstance(item, dict) else None
                if not isinstance(question, str) or not question.strip():
                    self.issue("malformed_records", where, "item without a question", "skipped", probe_id,
                               item if not isinstance(item, dict) else question)
                    continue
                if len(question) > MAX_QUERY_CHARS:
                    self.issue("malformed_records", f"{where}.question", f"question of {len(question):,} characters "
                               f"exceeds the fixture limit of {MAX_QUERY_CHARS:,}", "skipped", probe_id)
                    continue
                if ability == ABSTENTION:
                    answer, subtype = "unknown", None
                else:
                    answer, subtype = self._answer(item, ability, where, probe_id)
                evidence = self._evidence(item.get("source_chat_ids"), f"{where}.source_chat_ids", probe_id)
                location_of[probe_id] = where
                probes.append(Probe(probe_id=probe_id, asked_by=USER, query=question, asked_at=asked_at))
                gold.append(GoldProbe(probe_id=probe_id, checkpoint_id=f"{self.sid}-final",
                                      probe_type=ability or "uncategorised", subtype=subtype,
                                      abstention=ability == ABSTENTION, answer=answer, evidence=evidence))
        return probes, gold, location_of


def _quality(sid: str, sessions: list[SessionLine], gold: list[GoldProbe], location_of: dict[str, str],
             probes: list[Probe]) -> dict[str, list[ImportIssue]]:
    """:func:`gold_quality`, less what a rubric cannot pass by design (module docstring).
    BEAM gives no question dates: ``asked_at`` is the importer's."""
    found = gold_quality(sid, sessions, gold, location_of, questions=probes, question_dates=False)
    rubric = {g.probe_id: g for g in gold if g.subtype == RUBRIC_SUBTYPE}
    for kind in found:
        if kind != "garbled_answers":
            found[kind] = [i for i in found[kind] if i.item_id not in rubric]
    found["garbled_answers"] = [
        i for i in found["garbled_answers"]
        if i.item_id not in rubric or garbled_reason(rubric[i.item_id].answer[:MAX_ANSWER_CHARS]) is not None]
    return found


def _sources(path: Path, hasher: _Hasher) -> Iterator[_Source]:
    if path.is_dir():
        yield from _folder_sources(path, hasher)
        return
    name = path.name.lower()
    if name in CHAT_FILES or name == "probing_questions.json":
        raise SourceFormatError(f"{path}: (file): a file of one BEAM conversation; pass its conversation folder "
                                f"({path.parent if name != 'probing_questions.json' else path.parent.parent})")
    if name.endswith(".parquet"):
        raise SourceFormatError(f"{path}: (file): parquet is not read (no parquet reader is installed); export "
                                "the rows as JSON Lines, e.g. datasets' Dataset.to_json(path)")
    size_hint = _size_in_name(path.stem)
    hasher.whole_file(path)
    if name.endswith((".jsonl", ".ndjson")):
        yield from _jsonl_sources(path, size_hint)
    else:
        yield from _json_sources(path, size_hint)


def import_beam(path: Path, out_dir: Path) -> ImportReport:
    """Write ``out_dir/fixtures/<scenario>.jsonl``, ``out_dir/gold/<scenario>.json`` and
    ``out_dir/import-report.json``; return the report.

    ``path``: a conversation folder, a folder of them (searched up to
    :data:`MAX_FOLDER_DEPTH` levels), or a ``.json``/``.jsonl`` export of dataset rows.
    Conversations are read and written one at a time. Bad items never raise: each becomes an
    issue in the report (see module docstring). Same input -> byte-identical output files.

    Raises:
        SourceFormatError: the file is not JSON or JSON Lines of rows, is parquet, is a single
            conversation's chat or question file, or the folder holds no conversation.
        OSError: the input cannot be read or the output written.
    """
    path, out_dir = Path(path), Path(out_dir)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    issues: dict[str, list[ImportIssue]] = {kind: [] for kind in ISSUE_KINDS}
    counts = dict.fromkeys(("scenarios", "sessions", "messages", "probes", "evidence_ids", "abstention_probes",
                            "rubric_probes", "probes_without_evidence", "truncated_chat_files", "renumbered_plans"), 0)
    by_type: dict[str, int] = {}
    scenario_ids: list[str] = []
    used_ids: set[str] = set()
    hasher = _Hasher(path)
    for source in _sources(path, hasher):
        sid = _unique(source.base, used_ids, SCENARIO_ID_CHARS)
        if sid != source.base:
            issues["malformed_records"].append(ImportIssue(
                scenario_id=sid, location=source.origin, reason="scenario id already used by an earlier conversation",
                resolution=f"scenario id {sid}"))
        for location, reason, resolution, raw in source.problems:
            issues["malformed_records"].append(ImportIssue(
                scenario_id=sid, location=f"{source.origin}: {location}", reason=reason, resolution=resolution,
                raw=None if raw is None else _raw(raw)[:2000]))
        if source.skip:
            issues["malformed_records"].append(ImportIssue(
                scenario_id=sid, location=source.origin, reason=source.skip, resolution="skipped"))
            continue
        convert = _Conversation(sid, issues, counts)
        sessions = convert.sessions(source.chat)
        source.chat = None  # the conversation's source is no longer needed
        if not sessions:
            convert.issue("malformed_records", "chat", "conversation has no usable turn", "skipped")
            continue
        probes, gold_probes, location_of = convert.probes(source.questions)
        horizon = horizon_for(len(sessions))
        header = HeaderLine(
            scenario_id=sid, paradigm="user_assistant", source=SOURCE, free_form=True,
            horizons=[HorizonPhase(name=horizon, sessions=len(sessions), session_gap_hours=convert.gap_hours)],
            entities=[EntityRef(entity_id=USER, type="human"), EntityRef(entity_id=ASSISTANT, type="assistant_agent")])
        lines: list = [header, *sessions]
        if probes:
            lines.append(CheckpointLine(checkpoint_id=f"{sid}-final", after_session=len(sessions), horizon=horizon,
                                        probes=probes))
        write_fixture(out_dir / "fixtures" / f"{sid}.jsonl", lines)
        write_gold(out_dir / "gold" / f"{sid}.json", GoldFile(scenario_id=sid, source=SOURCE, probes=gold_probes))
        for kind, found in _quality(sid, sessions, gold_probes, location_of, probes).items():
            issues[kind].extend(found)
        scenario_ids.append(sid)
        counts["scenarios"] += 1
        counts["sessions"] += len(sessions)
        counts["messages"] += sum(len(s.messages) for s in sessions)
        counts["probes"] += len(probes)
        counts["evidence_ids"] += sum(len(g.evidence) for g in gold_probes)
        counts["abstention_probes"] += sum(g.abstention for g in gold_probes)
        counts["probes_without_evidence"] += sum(not g.evidence and not g.abstention for g in gold_probes)
        counts["truncated_chat_files"] += source.truncated_chat
        for g in gold_probes:
            by_type[g.probe_type] = by_type.get(g.probe_type, 0) + 1
    report = ImportReport(source=SOURCE, source_path=str(path.resolve()), source_sha256=hasher.hexdigest(),
                          source_bytes=hasher.size, scenarios=scenario_ids, counts=counts, probes_by_type=by_type,
                          issues=issues, notes=NOTES)
    write_report(out_dir / REPORT_FILE, report)
    return report


def rubric_lines(report: ImportReport) -> list[str]:
    """The import summary's extra line: how many probes only an answer model and a judge can grade."""
    n = report.counts.get("rubric_probes")
    return [f"{n} rubric-graded probes (subtype 'rubric') count only with an answer model and a judge"] if n else []

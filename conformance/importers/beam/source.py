"""Reading BEAM sources: conversation folders, JSON and JSON Lines exports of the dataset's rows.

Each conversation is read into a :class:`Source` (its chat and probing questions as parsed,
plus what was wrong while reading); :mod:`conformance.importers.beam.convert` turns it into
fixture lines. The shapes read are described in docs/import-formats.md#beam.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import ijson

from conformance.contract.corpus import file_sha256
from conformance.contract.limits import (
    BOM,
    MAX_IMPORT_SOURCE_BYTES,
    BadDocument,
    TooLarge,
    parse_json,
    read_bounded,
    too_deep,
    without_bom,
)
from conformance.importers.toolkit import SCENARIO_ID_CHARS, json_lines, load_json, sanitise_id, source_error

CHAT_FILES = ("chat_trunecated.json", "chat_truncated.json", "chat.json")
"""Chat files of a conversation folder, the first present wins (BEAM's own choice, in order)."""
QUESTION_FILES = ("probing_questions/probing_questions.json", "probing_questions.json")
MAX_FOLDER_DEPTH = 4
"""Folders below PATH searched for conversation folders (``chats/<size>/<id>`` is depth 2)."""
_SIZE = re.compile(r"(\d{1,4}(?:\.\d{1,2})?)\s?([KkMm])")
_SIZE_IN_NAME = re.compile(r"(?<![0-9A-Za-z])(\d{1,4}[KkMm])(?![0-9A-Za-z])")
_NATURAL = re.compile(r"(\d+)")


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


@dataclass
class Source:
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


class Hasher:
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


def _open_json(path: Path) -> BinaryIO:
    """``path`` opened for ijson, positioned after a leading UTF-8 byte order mark."""
    handle = open(path, "rb")
    try:
        if handle.read(len(BOM)) != BOM:
            handle.seek(0)
    except BaseException:
        handle.close()
        raise
    return handle


def _read_json_file(path: Path, hasher: Hasher) -> tuple[object, str | None]:
    try:
        raw = read_bounded(path, MAX_IMPORT_SOURCE_BYTES)
    except TooLarge as exc:
        return None, f"file {exc}"
    except OSError as exc:
        return None, f"cannot read: {exc.strerror or exc}"
    hasher.add(path, raw)
    try:
        return parse_json(without_bom(raw)), None
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


def _folder_sources(root: Path, hasher: Hasher) -> Iterator[Source]:
    folders = _conversation_folders(root)
    if not folders:
        raise source_error(root, "(folder)", "no BEAM conversation folder (one holding chat.json or "
                           "probing_questions/probing_questions.json) found")
    for folder in folders:
        origin = folder.relative_to(root).as_posix() if folder != root else folder.name
        source = Source(base=_scenario_base(normalise_size(folder.parent.name), folder.name, "conversation"),
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


def _row_source(row: object, origin: str, position: int, size_hint: str | None) -> Source:
    """A dataset row (``conversation_id``, ``chat``, ``probing_questions``) as a source."""
    if not isinstance(row, dict):
        return Source(base=_scenario_base(size_hint, None, f"row-{position}"), origin=origin,
                      skip="skipped: row is not an object")
    stated = next((row[k] for k in ("chat_size", "size", "split") if k in row), None)
    size = normalise_size(stated) or size_hint
    source = Source(base=_scenario_base(size, row.get("conversation_id"), f"row-{position}"), origin=origin)
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


def _jsonl_sources(path: Path, size_hint: str | None) -> Iterator[Source]:
    with open(path, "rb") as handle:
        for line in json_lines(handle, MAX_IMPORT_SOURCE_BYTES):
            origin = f"line {line.number}"
            if line.problem is not None:
                why = f"not a JSON line ({line.problem})" if line.text is not None else line.problem
                yield Source(base=_scenario_base(size_hint, None, f"line-{line.number}"), origin=origin,
                             skip=f"skipped: {why}")
                continue
            number, row = line.number, line.value
            del line
            source = _row_source(row, origin, number, size_hint)
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
        raise source_error(path, "(document)", f"not a JSON file ({reason}){hint}") from None
    if not kind:
        raise source_error(path, "(document)", "empty file")
    return kind, keys


def _json_sources(path: Path, size_hint: str | None) -> Iterator[Source]:
    kind, keys = _json_shape(path)
    if kind == "array":
        with _open_json(path) as handle:
            for r, row in enumerate(ijson.items(handle, "item", use_float=True)):
                source = _row_source(row, f"[{r}]", r, size_hint)
                del row
                yield source
        return
    if kind != "object":
        raise source_error(path, "(document)", f"expected a JSON list of BEAM rows, an object of rows by "
                           f"size, or one row; got a {kind}")
    names = [k for k, _ in keys]
    if "chat" in names or "probing_questions" in names:
        row, _ = load_json(path, MAX_IMPORT_SOURCE_BYTES, "one row")
        yield _row_source(row, "(document)", 0, size_hint)
        return
    for key, first in keys:
        if first != "start_array" or "." in key:
            yield Source(base=_scenario_base(None, key, "split"), origin=f"{key}",
                         skip="skipped: top-level value is not a list of rows" if first != "start_array"
                         else "skipped: a key holding '.' cannot be streamed")
            continue
        split_size = normalise_size(key) or size_hint
        with _open_json(path) as handle:
            for r, row in enumerate(ijson.items(handle, f"{key}.item", use_float=True)):
                source = _row_source(row, f"{key}[{r}]", r, split_size)
                del row
                yield source


def read_sources(path: Path, hasher: Hasher) -> Iterator[Source]:
    """The conversations at ``path`` (a conversation folder, a folder of them, or a JSON or JSON
    Lines file of rows), one at a time, each file read fed to ``hasher``.

    Raises:
        SourceFormatError: parquet, one conversation's chat or question file, a folder with no
            conversation, or a file that is not JSON (the message names the file).
    """
    if path.is_dir():
        yield from _folder_sources(path, hasher)
        return
    name = path.name.lower()
    if name in CHAT_FILES or name == "probing_questions.json":
        raise source_error(path, "(file)", f"a file of one BEAM conversation; pass its conversation folder "
                           f"({path.parent if name != 'probing_questions.json' else path.parent.parent})")
    if name.endswith(".parquet"):
        raise source_error(path, "(file)", "parquet is not read (no parquet reader is installed); export "
                           "the rows as JSON Lines, e.g. datasets' Dataset.to_json(path)")
    size_hint = _size_in_name(path.stem)
    hasher.whole_file(path)
    if name.endswith((".jsonl", ".ndjson")):
        yield from _jsonl_sources(path, size_hint)
    else:
        yield from _json_sources(path, size_hint)

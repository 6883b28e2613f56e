"""Size bounds on the files a user hands the suite: the one place they are defined.

Every bound is generous for real data (the committed corpus, LoCoMo, a long run's
``result.json``) and exists so that a malformed or hostile file gives a clear error
naming the file (and line or field) instead of exhausting memory. Parsers that stream
(fixtures) check a bound before holding the data; parsers that read a whole document
read at most the bound plus one byte. ``docs/input-limits.md`` lists them for users.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import yaml

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

MAX_MESSAGE_TEXT_CHARS = 100_000
"""A fixture message's ``text``, in characters (the fixture schema's ``maxLength``).
The longest committed message is a few hundred characters; a LoCoMo turn a few thousand."""

MAX_QUERY_CHARS = 10_000
"""A probe's ``query``, in characters (the fixture schema's ``maxLength``)."""

MAX_JSONL_LINE_BYTES = 16 * MiB
"""One line of a fixture (``*.jsonl``): a whole session. Read with a bounded ``readline``,
so a longer line is refused before it is held. The committed maximum is ~33 KiB."""

MAX_FIXTURE_BYTES = 1 * GiB
"""A whole fixture file; streamed line by line, so this bounds run time, not memory."""

MAX_GOLD_BYTES = 64 * MiB
"""A gold file (``gold/<scenario>.json``), read whole. The committed maximum is ~160 KiB."""

MAX_YAML_BYTES = 1 * MiB
"""A scenario file or an ``adapter.yaml``, read whole. Real ones are a few KiB."""

MAX_RESULT_BYTES = 256 * MiB
"""A ``result.json`` (``report``, ``compare``), read whole."""

MAX_BASELINE_BYTES = 64 * MiB
"""A CI-gate baseline (``baselines/main.json``), read whole. Real ones are tens of KiB."""

MAX_IMPORT_SOURCE_BYTES = 512 * MiB
"""A public dataset file an importer reads whole (LoCoMo's ``locomo10.json`` is 2.8 MiB)."""

MAX_NESTING_DEPTH = 64
"""Arrays and objects nested inside each other in one JSON or YAML document. Real
documents nest fewer than 10 levels; deeper input is refused before it is walked."""

MAX_ID_CHARS = 128
"""An id that becomes a file name (scenario, imported dataset); the ``Id`` pattern's bound."""


def human(size: int) -> str:
    """``16 MiB``, ``1 GiB``, ``512 bytes``: a bound as the error messages print it."""
    for unit, name in ((GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")):
        if size >= unit and size % unit == 0:
            return f"{size // unit} {name}"
    return f"{size:,} bytes"


class TooLarge(Exception):
    """Internal: raised by :func:`read_bounded`; each parser turns it into its own DriftError."""

    def __init__(self, limit: int):
        self.limit = limit
        super().__init__(f"larger than {human(limit)} (the input limit; see docs/input-limits.md)")


def read_bounded(path: Path | str, limit: int) -> bytes:
    """The file's bytes, reading at most ``limit + 1`` of them.

    Raises:
        TooLarge: the file holds more than ``limit`` bytes.
        OSError: it cannot be read.
    """
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(limit)
    return data


#: A UTF-8 byte order mark (Windows tools write one at the start of a file).
BOM = b"\xef\xbb\xbf"

#: Bytes read at a time while reading past the rest of a line over its bound.
_SKIP_CHUNK = 1 * MiB


@dataclass(frozen=True, slots=True)
class BoundedLine:
    """One line of a JSON Lines file, as :func:`bounded_lines` reads it."""

    number: int
    """1-based line number in the file (blank lines counted)."""
    data: bytes | None
    """The line without its end (``\\n`` or ``\\r\\n``); None when the line is longer than the bound."""
    size: int
    """Bytes of the file read for this line, its end included (for an over-long line, the
    first ``limit + 1``: the rest is read past when the next line is asked for)."""


def bounded_lines(handle: BinaryIO, limit: int, *, bom: bool = False,
                  on_read: Callable[[bytes], None] | None = None) -> Iterator[BoundedLine]:
    """The lines of a binary file, none held longer than ``limit`` bytes (its end included).

    Every line is read with ``readline(limit + 1)``, so a longer one is never held whole: it
    is yielded with ``data=None``, and the rest of it is read past (in chunks of at most
    1 MiB) only if the caller asks for the next line, so a caller that stops at it reads no
    further. ``bom``: a UTF-8 byte order mark opening line 1 is dropped from its ``data``
    (importers accept one; fixtures do not). ``on_read`` is given every byte read, in
    order, over-long lines included (for a digest of the file).

    Raises:
        OSError: the file cannot be read.
    """
    number = 0
    while True:
        raw = handle.readline(limit + 1)
        if not raw:
            return
        number += 1
        if on_read is not None:
            on_read(raw)
        if len(raw) > limit:
            yield BoundedLine(number, None, len(raw))
            while not raw.endswith(b"\n"):  # the rest of the line, a bounded chunk at a time
                raw = handle.readline(min(limit + 1, _SKIP_CHUNK))
                if not raw:
                    return
                if on_read is not None:
                    on_read(raw)
            continue
        data = raw.rstrip(b"\r\n")
        if bom and number == 1 and data.startswith(BOM):
            data = data[len(BOM):]
        yield BoundedLine(number, data, len(raw))


def without_bom(raw: bytes) -> bytes:
    """``raw`` without a leading UTF-8 byte order mark."""
    return raw[len(BOM):] if raw.startswith(BOM) else raw


def too_deep(obj: object, limit: int = MAX_NESTING_DEPTH) -> str | None:
    """The path (``a.b[3]``) of the first list or dict nested more than ``limit`` deep in
    ``obj``, or None. Iterative, so it never hits Python's recursion limit; a shared
    sub-object (a YAML alias) is walked once per depth it is met at."""
    if not _deeper_than(obj, limit):
        return None  # the common case: no path strings built
    stack: list[tuple[object, int, str]] = [(obj, 1, "")]
    seen: set[tuple[int, int]] = set()
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, dict):
            children = [(child, f"{path}.{key}" if path else str(key)) for key, child in item.items()]
        elif isinstance(item, list):
            children = [(child, f"{path}[{i}]") for i, child in enumerate(item)]
        else:
            continue
        if depth > limit:
            return path or "(document)"
        if (id(item), depth) in seen:
            continue
        seen.add((id(item), depth))
        stack.extend((child, depth + 1, where) for child, where in reversed(children))
    return None


def _deeper_than(obj: object, limit: int) -> bool:
    """Whether a list or dict in ``obj`` sits more than ``limit`` deep (containers only walked)."""
    stack: list[tuple[object, int]] = [(obj, 1)] if isinstance(obj, (dict, list)) else []
    seen: set[tuple[int, int]] = set()
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if (id(item), depth) in seen:
            continue
        seen.add((id(item), depth))
        values = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in values if isinstance(child, (dict, list)))
    return False


def deep_line(text: str | bytes, limit: int = MAX_NESTING_DEPTH) -> int | None:
    """The 1-based line where ``[``/``{`` brackets first nest deeper than ``limit`` (text in
    JSON strings skipped), or None. Only called after a decoder gave up on deep input."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    depth, line, in_string, escaped = 0, 1, False, False
    for ch in text:
        if ch == "\n":
            line += 1
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return line
        elif ch in "]}":
            depth -= 1
    return None


def reject_constant(name: str) -> float:
    """``parse_constant`` for :func:`json.loads`: ``NaN`` and ``Infinity`` are not JSON."""
    raise ValueError(f"{name} is not a JSON number")


def finite_float(text: str) -> float:
    """``parse_float`` for :func:`json.loads`: a number too large for a float (``1e999``) is refused."""
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text[:40]} is too large")
    return value


class BadDocument(Exception):
    """Internal: why :func:`parse_json` refused a document, and where (1-based line, field path)."""

    def __init__(self, message: str, line: int | None = None, field: str | None = None):
        self.message, self.line, self.field = message, line, field
        super().__init__(message)


def _line_of(text: str, index: int) -> int | None:
    return text.count("\n", 0, index) + 1 if index >= 0 else None


def long_number_line(text: str) -> int | None:
    """The line of the first run of digits longer than Python converts to an int, or None."""
    digits = sys.get_int_max_str_digits()
    found = re.search(r"\d{%d,}" % (digits + 1), text) if digits else None
    return _line_of(text, found.start()) if found else None


def parse_json(data: bytes | str, depth: int = MAX_NESTING_DEPTH) -> object:
    """Strict JSON: UTF-8, no ``NaN``/``Infinity``, no number too large for Python to hold,
    at most ``depth`` levels of nesting.

    Raises:
        BadDocument: the message, and the line or field path where it went wrong.
    """
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadDocument(f"not UTF-8: {exc.reason} at byte {exc.start}",
                              data.count(b"\n", 0, exc.start) + 1) from None
    else:
        text = data
    try:
        obj = json.loads(text, parse_constant=reject_constant, parse_float=finite_float)
    except json.JSONDecodeError as exc:
        raise BadDocument(f"invalid JSON: {exc.msg} (column {exc.colno})", exc.lineno) from None
    except RecursionError:
        raise BadDocument(f"nested more than {depth} levels deep", deep_line(text, depth)) from None
    except ValueError as exc:  # NaN/Infinity, 1e999, an integer longer than Python converts
        line = long_number_line(text)
        if line is not None:
            raise BadDocument(f"invalid JSON: a number with more than {sys.get_int_max_str_digits()} digits",
                              line) from None
        token = str(exc).split(" ")[1] if str(exc).startswith("number ") else str(exc).split(" ")[0]
        raise BadDocument(f"invalid JSON: {exc}", _line_of(text, text.find(token))) from None
    path = too_deep(obj, depth)
    if path is not None:
        raise BadDocument(f"nested more than {depth} levels deep", deep_line(text, depth), path)
    return obj


def load_yaml(path: Path, error: Callable[[Path, str, str], Exception]) -> object:
    """One YAML document from ``path``, within the input limits (``MAX_YAML_BYTES``,
    ``MAX_NESTING_DEPTH``). Every failure raises ``error(path, field, message)`` where
    ``field`` is ``(file)``, ``line N`` or a field path. Used for scenario files and ``adapter.yaml``."""
    try:
        raw = read_bounded(path, MAX_YAML_BYTES)
    except TooLarge as exc:
        raise error(path, "(file)", f"file {exc}") from None
    except OSError as exc:
        raise error(path, "(file)", f"cannot read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise error(path, f"line {line}", f"not UTF-8: {exc.reason} at byte {exc.start}") from None
    line = deep_line(text)  # PyYAML takes quadratic time on deep flow nesting ([[[...): refuse it first
    if line is not None:
        raise error(path, f"line {line}", f"brackets nested more than {MAX_NESTING_DEPTH} levels deep "
                                          "(see docs/input-limits.md)")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "(document)"
        raise error(path, where, f"invalid YAML: {getattr(exc, 'problem', None) or exc}") from None
    except RecursionError:
        line = deep_line(text)
        raise error(path, f"line {line}" if line else "(document)", "invalid YAML: nested too deeply") from None
    except (ValueError, OverflowError) as exc:  # e.g. an integer longer than Python converts
        line = long_number_line(text)
        raise error(path, f"line {line}" if line else "(document)",
                    f"invalid YAML: {str(exc).splitlines()[0]}") from None
    deep = too_deep(data)
    if deep is not None:
        raise error(path, deep, "nested too deeply (see docs/input-limits.md)")
    return data

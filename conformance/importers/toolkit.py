"""What every importer shares: bounded reading of the source, id mapping, report building and
the mapping of a source that cannot be read to :class:`~conformance.importers.report.SourceFormatError`.

An importer reads a public dataset and writes fixtures + gold; this module holds the parts
that do not depend on the dataset's shape, so that each importer module holds only its
format's rules (docs/import-formats.md). Problems with single items are never raised: they
become :class:`~conformance.importers.report.ImportIssue` entries (:meth:`ReportBuilder.issue`);
only a source that cannot be read at all raises ``SourceFormatError`` (a DriftError: the CLI
prints it and exits 2).
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import BinaryIO

from dateutil import parser as dateparser

from conformance.contract.fixture import HorizonName
from conformance.contract.gold import GoldProbe
from conformance.contract.limits import (
    MAX_ID_CHARS,
    MAX_MESSAGE_TEXT_CHARS,
    MAX_QUERY_CHARS,
    BadDocument,
    TooLarge,
    bounded_lines,
    human,
    parse_json,
    read_bounded,
    without_bom,
)
from conformance.importers.report import REPORT_FILE, ImportIssue, ImportReport, SourceFormatError, write_report

__all__ = [
    "EARLIEST", "LATEST", "MAX_DATE_TEXT", "SCENARIO_ID_CHARS", "JsonLine", "ReportBuilder", "bad_document_where",
    "dropped_fields_note", "fit_message", "horizon_for", "json_lines", "load_json", "overlong_query", "parse_session_time", "raw_text", "rfc3339",
    "sanitise_id", "source_error", "unique_id",
]

# ---- ids -------------------------------------------------------------------------------

SCENARIO_ID_CHARS = MAX_ID_CHARS - 32
"""A scenario id's length bound: session, message, probe and checkpoint ids append a suffix
(``-S123``, ``-q0042``, ``-final``) and must stay within the ``Id`` pattern's 128 characters."""

_NOT_ID_CHARS = re.compile(r"[^A-Za-z0-9._:\-]+")


def sanitise_id(text: str, fallback: str = "x", colons: bool = True) -> str:
    """Map free text onto the fixture ``Id`` pattern (letters, digits, ``._:-``; no ``..``;
    at most 128 characters). ``colons=False`` also replaces ``:`` (ids used as file names,
    which then cannot leave fixtures/ or gold/)."""
    out = _NOT_ID_CHARS.sub("-", text if colons else text.replace(":", "-"))
    out = re.sub(r"\.{2,}", ".", out).lstrip("._:-")[:128]
    return out or fallback


def unique_id(base: str, used: set[str], limit: int = MAX_ID_CHARS, fold: bool = False) -> str:
    """``base`` (cut to ``limit`` characters), or ``base-2``, ``base-3``... the first not in
    ``used``; added to ``used`` (lower-cased with ``fold``, so ids differing only in case
    collide, as they do as file names on some systems)."""
    key = str.lower if fold else str
    candidate, k = base[:limit], 2
    while key(candidate) in used:
        suffix = f"-{k}"
        candidate, k = base[: limit - len(suffix)] + suffix, k + 1
    used.add(key(candidate))
    return candidate


def raw_text(value: object, limit: int | None = None) -> str:
    """A source value as an issue quotes it: text verbatim, anything else as JSON text (sorted
    keys; ``repr`` for what JSON cannot hold, e.g. a Python literal's set), cut to ``limit``
    characters when given."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)
        except (TypeError, ValueError, RecursionError):
            text = repr(value)
    return text if limit is None else text[:limit]


# ---- the fixture's text bounds ---------------------------------------------------------

def overlong_query(question: str) -> str | None:
    """Why ``question`` cannot be a probe's query (over ``MAX_QUERY_CHARS`` characters), or None."""
    if len(question) <= MAX_QUERY_CHARS:
        return None
    return f"question of {len(question):,} characters exceeds the fixture limit of {MAX_QUERY_CHARS:,}"


def fit_message(text: str, what: str = "text") -> tuple[str, tuple[str, str] | None]:
    """``(text, None)``, or for a text over ``MAX_MESSAGE_TEXT_CHARS`` characters its first that
    many and the issue's ``(reason, resolution)`` (``what`` names the text in the reason)."""
    if len(text) <= MAX_MESSAGE_TEXT_CHARS:
        return text, None
    return text[:MAX_MESSAGE_TEXT_CHARS], (
        f"{what} of {len(text):,} characters exceeds the fixture limit of {MAX_MESSAGE_TEXT_CHARS:,}",
        f"cut to its first {MAX_MESSAGE_TEXT_CHARS:,} characters")


# ---- time ------------------------------------------------------------------------------

EARLIEST, LATEST = datetime(1000, 1, 1, tzinfo=timezone.utc), datetime(9000, 1, 1, tzinfo=timezone.utc)
"""Source dates outside this range are treated as unparseable (no overflow when stepping)."""
MAX_DATE_TEXT = 200
"""A date text longer than this is not parsed (the parser's time grows with it)."""


def parse_session_time(text: object) -> tuple[datetime | None, str | None]:
    """Parse a free-form date text ("1:56 pm on 8 May, 2023", LoCoMo's) to an aware UTC datetime.

    Returns ``(time, None)`` or ``(None, reason)``. A text lacking the day, month or year is
    refused rather than completed from today's date (that would not be deterministic); a
    missing clock time means midnight. Naive times (and unknown zone names) are taken as UTC.
    """
    if text is None:
        return None, "missing"
    if not isinstance(text, str) or not text.strip():
        return None, "not a date text"
    if len(text) > MAX_DATE_TEXT:
        return None, f"longer than {MAX_DATE_TEXT} characters"
    try:
        with warnings.catch_warnings():  # an unknown zone name ("EST") is ignored: UTC
            warnings.simplefilter("ignore", dateparser.UnknownTimezoneWarning)
            one = dateparser.parse(text, default=datetime(1900, 1, 1))
            two = dateparser.parse(text, default=datetime(1904, 2, 2))
    except (ValueError, OverflowError, TypeError) as exc:
        return None, f"unparseable ({exc.__class__.__name__})"
    if one != two:
        return None, "incomplete (day, month or year missing)"
    try:
        moment = one.replace(tzinfo=timezone.utc) if one.tzinfo is None else one.astimezone(timezone.utc)
    except (ValueError, OverflowError) as exc:
        return None, f"unparseable ({exc.__class__.__name__})"
    if not EARLIEST <= moment < LATEST:
        return None, f"outside the years {EARLIEST.year}-{LATEST.year - 1}"
    return moment, None


def rfc3339(moment: datetime) -> str:
    """Second precision, ``Z`` suffix, four-digit year (strftime may print fewer)."""
    return moment.astimezone(timezone.utc).replace(tzinfo=None, microsecond=0).isoformat() + "Z"


def horizon_for(sessions: int) -> HorizonName:
    """DRIFT §3.4: short 2–50 sessions, medium 50–500, long beyond."""
    return "short" if sessions <= 50 else "medium" if sessions <= 500 else "long"


def dropped_fields_note(dropped: dict[str, int], kept: str) -> str:
    """The report note naming every source field no fixture carries, with how many items
    had it (``dropped``: ``"<level> <field>"`` -> count), then what is ``kept``."""
    if not dropped:
        return f"fields dropped: none; {kept}"
    levels: dict[str, list[str]] = {}
    for key, n in sorted(dropped.items()):
        level, field = key.split(" ", 1)
        levels.setdefault(level, []).append(f"{field} ({n:,})")
    return ("fields dropped (in no fixture; an answer found only there is listed as answers_in_dropped_fields): "
            + "; ".join(f"{level}s' " + ", ".join(fields) for level, fields in levels.items()) + f"; {kept}")


# ---- reading the source ----------------------------------------------------------------

def source_error(path: Path | str, where: str, detail: str) -> SourceFormatError:
    """The error of a source that cannot be read: ``<path>: <where>: <detail>``, ``where``
    being ``(file)``, ``(document)``, ``line N`` or a byte range."""
    return SourceFormatError(f"{path}: {where}: {detail}")


def load_json(path: Path, limit: int, what: str = "source") -> tuple[object, bytes]:
    """``(document, the file's bytes)`` of a JSON file of at most ``limit`` bytes, a leading
    UTF-8 byte order mark skipped (the bytes are returned as they are, for a digest).

    Raises:
        SourceFormatError: larger than ``limit`` (``<path>: (file): <what> larger than ...``)
            or not strict JSON (``<path>: line N: not a JSON file (...)``).
        OSError: it cannot be read.
    """
    try:
        raw = read_bounded(path, limit)
    except TooLarge as exc:
        raise source_error(path, "(file)", f"{what} {exc}") from None
    try:
        return parse_json(without_bom(raw)), raw
    except BadDocument as exc:
        raise source_error(path, bad_document_where(exc), f"not a JSON file ({exc.message})") from None


def bad_document_where(exc: BadDocument) -> str:
    """``line N``, the field path, or ``(document)``: where :func:`parse_json` gave up."""
    return f"line {exc.line}" if exc.line else exc.field or "(document)"


@dataclass(frozen=True, slots=True)
class JsonLine:
    """One non-blank line of a JSON Lines source: its value, or why it has none."""

    number: int
    """1-based line number in the file."""
    value: object = None
    problem: str | None = None
    """Why the line has no value: too long, not UTF-8, not strict JSON (with the field path when
    the JSON nests too deep); None when ``value`` holds it."""
    text: bytes | None = None
    """The line's bytes when it is not JSON (for the issue to quote), else None."""


def json_lines(handle: BinaryIO, limit: int, on_read: Callable[[bytes], None] | None = None) -> Iterator[JsonLine]:
    """The non-blank lines of a JSON Lines source, each parsed as strict JSON; a line over
    ``limit`` bytes is never held (:func:`conformance.contract.limits.bounded_lines`) and
    yields a ``problem`` naming the bound; a UTF-8 byte order mark opening the file is
    skipped. ``on_read`` receives every byte read (for the source digest). Never raises for
    a bad line; only ``OSError`` when the file cannot be read."""
    for line in bounded_lines(handle, limit, bom=True, on_read=on_read):
        number, data = line.number, line.data
        del line
        if data is None:
            yield JsonLine(number, problem=f"line longer than {human(limit)} (the input limit; "
                                           "see docs/input-limits.md)")
            continue
        if not data.strip():
            continue
        try:
            value = parse_json(data)
        except BadDocument as exc:
            yield JsonLine(number, problem=exc.message + (f" (at {exc.field})" if exc.field else ""), text=data)
            continue
        del data
        # Hand the value over without keeping a reference in this frame.
        handover = [JsonLine(number, value)]
        del value
        yield handover.pop()


# ---- the report ------------------------------------------------------------------------

class ReportBuilder:
    """Collects one import's issues and counts, and writes ``import-report.json``.

    ``issues`` holds every list in ``kinds`` from the start (empty ones included, so the
    report's shape does not depend on the data); ``counts`` every key of ``counts``.
    """

    def __init__(self, source: str, kinds: Iterable[str], counts: Iterable[str] = ()):
        self.source = source
        self.issues: dict[str, list[ImportIssue]] = {kind: [] for kind in kinds}
        self.counts: dict[str, int] = dict.fromkeys(
            ("scenarios", "sessions", "messages", "probes", *counts), 0)
        self.by_type: dict[str, int] = {}
        self.scenarios: list[str] = []

    def issue(self, kind: str, scenario_id: str, location: str, reason: str, resolution: str,
              item_id: str | None = None, raw: str | None = None) -> None:
        """List one changed, dropped or unusable item under ``kind``."""
        self.issues[kind].append(ImportIssue(scenario_id=scenario_id, location=location, item_id=item_id,
                                             raw=raw, reason=reason, resolution=resolution))

    def extend(self, found: dict[str, list[ImportIssue]]) -> None:
        """Add lists of issues (the shared gold checks' result) to the report's lists."""
        for kind, items in found.items():
            self.issues[kind].extend(items)

    def scenario(self, scenario_id: str, sessions: list, gold: list[GoldProbe]) -> None:
        """Count one written scenario: its sessions, messages, probes, evidence ids,
        abstention probes and probe types (``evidence_ids`` and ``abstention_probes`` only
        when the builder counts them)."""
        self.scenarios.append(scenario_id)
        c = self.counts
        c["scenarios"] += 1
        c["sessions"] += len(sessions)
        c["messages"] += sum(len(s.messages) for s in sessions)
        c["probes"] += len(gold)
        if "evidence_ids" in c:
            c["evidence_ids"] += sum(len(g.evidence) for g in gold)
        if "abstention_probes" in c:
            c["abstention_probes"] += sum(g.abstention for g in gold)
        for g in gold:
            self.by_type[g.probe_type] = self.by_type.get(g.probe_type, 0) + 1

    def write(self, out_dir: Path, source_path: Path, sha256: str, size: int, notes: list[str]) -> ImportReport:
        """Build the report, write it to ``out_dir/import-report.json`` (sorted keys) and return it."""
        report = ImportReport(source=self.source, source_path=str(Path(source_path).resolve()), source_sha256=sha256,
                              source_bytes=size, scenarios=self.scenarios, counts=self.counts,
                              probes_by_type=dict(sorted(self.by_type.items())), issues=self.issues, notes=notes)
        write_report(out_dir / REPORT_FILE, report)
        return report

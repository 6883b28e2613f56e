"""What an importer did to a public dataset: counts, and every item it had to change or drop.

Shared by all importers (LoCoMo, LongMemEval, ...). A public dataset is never perfect; the
importer never crashes on a bad item and never drops one silently: each problem becomes an
:class:`ImportIssue` under a named list of :attr:`ImportReport.issues`, and the report is
written next to the corpus as ``import-report.json`` (canonical JSON, sorted keys).
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from conformance.errors import DriftError

REPORT_SCHEMA_VERSION = "1"
REPORT_FILE = "import-report.json"


class SourceFormatError(DriftError, ValueError):
    """The source file as a whole cannot be read (not JSON, wrong top-level shape).

    Problems with single items are never raised; they are reported as :class:`ImportIssue`.
    """


class ImportIssue(BaseModel):
    """One item of the source that the importer changed, dropped or could not use."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scenario_id: str
    """The scenario (conversation) it belongs to."""
    location: str
    """Where in the source record, as a path: ``qa[12].evidence[0]``,
    ``conversation.session_3_date_time``. For QA items the ``[i]`` is the 0-based QA index."""
    item_id: str | None = None
    """The corpus id it concerns (probe, session or message id), when there is one."""
    raw: str | None = None
    """The offending source value verbatim (JSON text when it is not a string)."""
    reason: str
    """What is wrong with it."""
    resolution: str
    """What the importer did about it, e.g. ``dropped from gold evidence``."""


class ImportReport(BaseModel):
    """The outcome of one import; ``issues`` always holds every list the importer knows,
    empty ones included, so that its shape does not depend on the data."""

    model_config = ConfigDict(extra="forbid")

    schema_version: str = REPORT_SCHEMA_VERSION
    source: str
    """Dataset name, e.g. ``locomo``; the same as the corpus' ``source`` field."""
    source_path: str
    source_sha256: str
    source_bytes: int = Field(ge=0)
    scenarios: list[str] = []
    """Scenario ids written, in source order."""
    counts: dict[str, int] = {}
    """Totals written: ``scenarios``, ``sessions``, ``messages``, ``probes`` and more."""
    probes_by_type: dict[str, int] = {}
    issues: dict[str, list[ImportIssue]] = {}
    notes: list[str] = []
    """Decisions that shaped the output (policy, not problems)."""

    def issue_count(self) -> int:
        return sum(len(items) for items in self.issues.values())


def run_import(do_import, path: Path, out_dir: Path, unit: str = "conversation", extra=None,
               echo=print) -> ImportReport:
    """The body every ``drift-conformance import NAME PATH --out DIR`` shares.

    Refuses an ``out_dir`` whose ``fixtures/`` or ``gold/`` already holds files (a stale
    scenario would linger), runs ``do_import(path, out_dir)``, prints :func:`format_report`
    (then ``extra(report)``'s lines, if given) and the command to run the corpus, each line
    through ``echo`` (the CLI passes ``click.echo``).

    Raises:
        DriftError: a used output folder, an unreadable file (named), or nothing imported
            (``unit`` names what the dataset is made of, for the message).
    """
    for sub in ("fixtures", "gold"):
        if (out_dir / sub).is_dir() and any((out_dir / sub).iterdir()):
            raise DriftError(f"{out_dir / sub} is not empty; import into a new folder so no stale scenario lingers")
    try:
        report = do_import(path, out_dir)
    except OSError as exc:
        raise DriftError(f"{exc.filename or path}: {exc.strerror or exc}") from None
    echo(format_report(report))
    for line in extra(report) if extra is not None else ():
        echo(line)
    if not report.scenarios:
        raise DriftError(f"{path}: no {unit} could be imported (see {out_dir / REPORT_FILE})")
    echo(f"run it: drift-conformance --adapter keyword --fixtures {out_dir / 'fixtures'} "
         f"--gold {out_dir / 'gold'}")
    return report


def write_report(path: Path, report: ImportReport) -> None:
    """Write the report as indented JSON with sorted keys (byte-identical for equal reports)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(report.model_dump(mode="json"), sort_keys=True, indent=1, ensure_ascii=False)
    path.write_text(text + "\n", encoding="utf-8", newline="\n")


def format_report(report: ImportReport, first: int = 3) -> str:
    """A short summary for the terminal: totals, probe types, then each non-empty issue
    list with its first ``first`` entries."""
    c = report.counts
    lines = [
        f"{report.source}: {c.get('scenarios', 0)} scenarios, {c.get('sessions', 0)} sessions, "
        f"{c.get('messages', 0)} messages, {c.get('probes', 0)} probes "
        f"(from {report.source_path}, sha256 {report.source_sha256[:12]})",
    ]
    if report.probes_by_type:
        lines.append("probes by type: " + ", ".join(f"{k} {v}" for k, v in sorted(report.probes_by_type.items())))
    extra = {k: v for k, v in sorted(c.items()) if k not in ("scenarios", "sessions", "messages", "probes")}
    if extra:
        lines.append("also: " + ", ".join(f"{k} {v}" for k, v in extra.items()))
    total = report.issue_count()
    lines.append(f"issues: {total}" + ("" if total else " (none)"))
    for kind, items in sorted(report.issues.items()):
        if not items:
            continue
        lines.append(f"  {kind}: {len(items)}")
        for issue in items[:first]:
            raw = f" {issue.raw!r}" if issue.raw is not None else ""
            lines.append(f"    {issue.scenario_id} {issue.location}{raw}: {issue.reason}; {issue.resolution}")
        if len(items) > first:
            lines.append(f"    ... {len(items) - first} more in {REPORT_FILE}")
    return "\n".join(lines)

"""The comparison guide's JSON Lines case format: import it into fixtures + gold
(:func:`import_guide`), export a corpus to it (:func:`export_guide`).

The format, the import's decisions and the ``drift`` extensions are in
docs/import-formats.md#guide. Converting one case is :mod:`conformance.importers.guide.case`,
the export :mod:`conformance.importers.guide.export`, the keys and bounds both share
:mod:`conformance.importers.guide.keys`; this module reads the file and writes the corpus.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from conformance.contract.corpus import write_fixture, write_gold
from conformance.contract.fixture import CheckpointLine
from conformance.importers.guide import keys
from conformance.importers.guide.case import Case, parse_guide_time, raw_value, scenario_id
from conformance.importers.guide.export import export_guide, export_selection
from conformance.importers.guide.keys import EXTRAS_KEY, ISSUE_KINDS, MAX_CASE_LINE_BYTES, SOURCE, GuideExportError
from conformance.importers.registry import Importer
from conformance.importers.report import ImportReport, format_report
from conformance.importers.toolkit import JsonLine, ReportBuilder, json_lines, source_error

__all__ = [
    "import_guide", "export_guide", "export_selection", "parse_guide_time",
    "ISSUE_KINDS", "MAX_CASE_LINE_BYTES", "EXTRAS_KEY", "GuideExportError", "format_report", "IMPORTER",
]

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

COUNT_KEYS = ("checkpoints", "evidence_ids", "abstention_probes", "extended_cases")


def import_guide(path: Path | str, out_dir: Path | str) -> ImportReport:
    """Import a guide JSONL file: write ``out_dir/fixtures/<scenario>.jsonl``,
    ``out_dir/gold/<scenario>.json`` (one scenario per case) and ``out_dir/import-report.json``;
    return the report.

    Bad items never raise: each becomes an issue of the report (docs/import-formats.md#guide).
    The file is read a line at a time (at most :data:`~conformance.importers.guide.keys.MAX_CASE_LINE_BYTES`
    per line, only one case held). The same input file gives byte-identical output files.

    Raises:
        SourceFormatError: the file holds no line that is a JSON object (not JSON Lines: e.g.
            a pretty-printed case or a JSON array), or nothing at all.
        OSError: the file cannot be read or the output written.
    """
    # Imported here, not at module level: the scoring package loads numpy, which an export
    # does not need.
    from conformance.importers.quality import QUALITY_KINDS

    path, out_dir = Path(path), Path(out_dir)
    report = ReportBuilder(SOURCE, (*ISSUE_KINDS, *QUALITY_KINDS), COUNT_KEYS)
    digest, size = hashlib.sha256(), [0]

    def on_read(chunk: bytes) -> None:
        digest.update(chunk)
        size[0] += len(chunk)

    used: set[str] = set()
    cases, first_problem = 0, None
    with open(path, "rb") as handle:
        for line in json_lines(handle, keys.MAX_CASE_LINE_BYTES, on_read):
            problem = _line_problem(line, report)
            if problem is not None:
                first_problem = first_problem or f"line {line.number}: {problem}"
                continue
            cases += 1
            number, data = line.number, line.value
            del line
            _import_case(data, number, used, out_dir, report)
            del data
    if cases == 0:
        detail = f"; {first_problem}" if first_problem else " (the file is empty)"
        raise source_error(path, "(file)", f"no case found: expected JSON Lines, one case object per line"
                           f"{detail}")
    return report.write(out_dir, path, digest.hexdigest(), size[0], NOTES)


def _line_problem(line: JsonLine, report: ReportBuilder) -> str | None:
    """Why the line is no case (listed under ``malformed_lines``), or None."""
    if line.problem is not None:
        raw = None if line.text is None else raw_value(line.text.decode("utf-8", "replace"))
        report.issue("malformed_lines", "", f"line {line.number}", line.problem, "skipped", raw=raw)
        return line.problem
    if not isinstance(line.value, dict):
        reason = f"a JSON {type(line.value).__name__}, not an object (a case)"
        report.issue("malformed_lines", "", f"line {line.number}", reason, "skipped", raw=raw_value(line.value))
        return reason
    return None


def _import_case(data: dict, lineno: int, used: set[str], out_dir: Path, report: ReportBuilder) -> None:
    """Convert one case and write its fixture and gold (or list why not)."""
    from conformance.importers.quality import gold_quality

    sid, kind, reason = scenario_id(data, lineno, used)
    if kind:
        report.issue(kind, sid, f"line {lineno}: case_id", reason, f"scenario id {sid}",
                     raw=raw_value(data["case_id"]) if "case_id" in data else None)
    converted = Case(data, lineno, sid, report.issues).convert()
    if converted is None:
        return
    write_fixture(out_dir / "fixtures" / f"{sid}.jsonl", converted.lines)
    write_gold(out_dir / "gold" / f"{sid}.json", converted.gold)
    asked = [probe for line in converted.lines if isinstance(line, CheckpointLine) for probe in line.probes]
    choice_ids = [probe.probe_id for probe in asked if probe.choices]
    report.extend(gold_quality(sid, converted.sessions, converted.gold.probes, converted.location_of, choice_ids,
                               questions=asked))
    report.scenario(sid, converted.sessions, converted.gold.probes)
    report.counts["checkpoints"] += sum(isinstance(line, CheckpointLine) for line in converted.lines)
    report.counts["extended_cases"] += converted.extended


IMPORTER = Importer(
    run=import_guide,
    summary="The comparison guide's JSONL cases (one case per line): sessions, questions, evidence; an import "
            "report lists every item it had to change or drop.",
    description="Format, decisions and the 'drift' extensions: docs/import-formats.md#guide.",
    unit="case")

"""Import BEAM ("Beyond a Million Tokens", mohammadtavakoli78/BEAM; HF ``Mohammadta/BEAM`` and
``Mohammadta/BEAM-10M``) into fixtures + gold: one scenario per conversation, ``beam-<size>-<id>``.

The formats read, the assumptions and the decisions are in docs/import-formats.md#beam (the
decisions also in the report's ``notes``). Reading the source is
:mod:`conformance.importers.beam.source`, converting one conversation
:mod:`conformance.importers.beam.convert`; this module writes the corpus and the report.
"""

from __future__ import annotations

from pathlib import Path

from conformance.contract.corpus import write_fixture, write_gold
from conformance.contract.fixture import CheckpointLine, EntityRef, HeaderLine, HorizonPhase
from conformance.contract.gold import GoldFile
from conformance.contract.limits import MAX_IMPORT_SOURCE_BYTES
from conformance.importers.beam.convert import (
    ABILITIES,
    ASSISTANT,
    ISSUE_KINDS,
    RUBRIC_SUBTYPE,
    SOURCE,
    USER,
    Conversation,
    quality,
)
from conformance.importers.beam.source import Hasher, Source, decode_column, read_sources
from conformance.importers.quality import MAX_ANSWER_CHARS
from conformance.importers.registry import Importer
from conformance.importers.report import ImportReport, format_report
from conformance.importers.toolkit import SCENARIO_ID_CHARS, ReportBuilder, horizon_for, raw_text, unique_id

__all__ = ["import_beam", "rubric_lines", "format_report", "decode_column", "ABILITIES", "RUBRIC_SUBTYPE",
           "ISSUE_KINDS", "IMPORTER"]

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

COUNT_KEYS = ("evidence_ids", "abstention_probes", "rubric_probes", "probes_without_evidence", "truncated_chat_files",
              "renumbered_plans")


def import_beam(path: Path, out_dir: Path) -> ImportReport:
    """Write ``out_dir/fixtures/<scenario>.jsonl``, ``out_dir/gold/<scenario>.json`` and
    ``out_dir/import-report.json``; return the report.

    ``path``: a conversation folder, a folder of them (searched up to
    :data:`~conformance.importers.beam.source.MAX_FOLDER_DEPTH` levels), or a ``.json``/``.jsonl``
    export of dataset rows. Conversations are read and written one at a time. Bad items never
    raise: each becomes an issue in the report. Same input -> byte-identical output files.

    Raises:
        SourceFormatError: the file is not JSON or JSON Lines of rows, is parquet, is a single
            conversation's chat or question file, or the folder holds no conversation.
        OSError: the input cannot be read or the output written.
    """
    path, out_dir = Path(path), Path(out_dir)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    report = ReportBuilder(SOURCE, ISSUE_KINDS, COUNT_KEYS)
    used_ids: set[str] = set()
    hasher = Hasher(path)
    for source in read_sources(path, hasher):
        sid = unique_id(source.base, used_ids, SCENARIO_ID_CHARS)
        if _listed(source, sid, report):
            _write_scenario(source, sid, out_dir, report)
    return report.write(out_dir, path, hasher.hexdigest(), hasher.size, NOTES)


def _listed(source: Source, sid: str, report: ReportBuilder) -> bool:
    """List what went wrong while reading ``source``; whether it can be converted at all."""
    if sid != source.base:
        report.issue("malformed_records", sid, source.origin, "scenario id already used by an earlier conversation",
                     f"scenario id {sid}")
    for location, reason, resolution, raw in source.problems:
        report.issue("malformed_records", sid, f"{source.origin}: {location}", reason, resolution,
                     raw=None if raw is None else raw_text(raw, 2000))
    if source.skip:
        report.issue("malformed_records", sid, source.origin, source.skip, "skipped")
    return not source.skip


def _write_scenario(source: Source, sid: str, out_dir: Path, report: ReportBuilder) -> None:
    """Convert one conversation and write its fixture and gold (or list why not)."""
    convert = Conversation(sid, report.issues, report.counts)
    sessions = convert.sessions(source.chat)
    source.chat = None  # the conversation's source is no longer needed
    if not sessions:
        convert.issue("malformed_records", "chat", "conversation has no usable turn", "skipped")
        return
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
    report.extend(quality(sid, sessions, gold_probes, location_of, probes))
    report.scenario(sid, sessions, gold_probes)
    report.counts["probes_without_evidence"] += sum(not g.evidence and not g.abstention for g in gold_probes)
    report.counts["truncated_chat_files"] += source.truncated_chat


def rubric_lines(report: ImportReport) -> list[str]:
    """The import summary's extra line: how many probes only an answer model and a judge can grade."""
    n = report.counts.get("rubric_probes")
    return [f"{n} rubric-graded probes (subtype 'rubric') count only with an answer model and a judge"] if n else []


IMPORTER = Importer(
    run=import_beam,
    summary="BEAM (a conversation folder, a folder of them, or JSON/JSONL rows): turns as sessions, probing "
            "questions as probes, source_chat_ids as evidence; an import report lists bad gold.",
    description="Format and decisions: docs/import-formats.md#beam.",
    folders=True, extra_lines=rubric_lines)

"""Import LoCoMo (snap-research/LoCoMo, ``data/locomo10.json``) into fixtures + gold: one
scenario per conversation, ``locomo-<sample_id>`` (paradigm ``multi_peer``; an ``observer``
asks every QA item after the last session; free-form probes, gold evidence the turns' ids).

The format as read and every decision (session order and times, categories, evidence ids,
dropped fields) are in docs/import-formats.md#locomo, and in each report's ``notes``.
"""

from __future__ import annotations

import re
import statistics
from datetime import datetime, timedelta, timezone
from pathlib import Path

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
from conformance.contract.limits import MAX_IMPORT_SOURCE_BYTES
from conformance.importers.quality import QUALITY_KINDS, gold_quality
from conformance.importers.registry import Importer
from conformance.importers.report import ImportIssue, ImportReport, format_report
from conformance.importers.toolkit import (
    SCENARIO_ID_CHARS,
    ReportBuilder,
    dropped_fields_note,
    fit_message,
    horizon_for,
    load_json,
    overlong_query,
    parse_session_time,
    raw_text,
    rfc3339,
    sanitise_id,
    source_error,
    unique_id,
)

__all__ = ["import_locomo", "format_report", "PROBE_TYPES", "ISSUE_KINDS", "parse_session_time"]

SOURCE = "locomo"
PROBE_TYPES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop", 5: "adversarial"}
ABSTENTION_CATEGORY = 5
TURN_KEYS = frozenset({"speaker", "dia_id", "text", "blip_caption"})
"""Turn fields the fixture carries (the caption appended to the text); others are dropped."""
RECORD_KEYS = frozenset({"sample_id", "conversation", "qa"})
ISSUE_KINDS = (
    "malformed_evidence", "dangling_evidence", "surplus_date_keys", "unparseable_dates",
    "integer_answers", "missing_answers", "duplicate_message_ids", "order_changes",
    "malformed_records",
)
OBSERVER = "observer"
TURN_STEP = timedelta(seconds=30)
FALLBACK_STEP = timedelta(minutes=1)
PROBE_DELAY = timedelta(days=1)
FALLBACK_ANCHOR = datetime(2000, 1, 1, tzinfo=timezone.utc)
"""Time of the first session when no session of a conversation has a usable date."""
DEFAULT_GAP_HOURS = 24.0

NOTES = [
    "paradigm multi_peer: both speakers are humans; probes are asked by the 'observer' entity",
    "sessions in numeric order, indexed in time order (UTC); a missing or unparseable date "
    "becomes 1 minute after the previous session",
    "turns 30 s apart from the session start; probes asked 1 day after the last session starts",
    "categories: 1 multi_hop, 2 temporal, 3 open_domain, 4 single_hop, 5 adversarial (abstention, "
    "gold 'unknown'; adversarial_answer never accepted; a dataset 'answer' on it is accepted)",
    "records' event_summary, observation and session_summary are the dataset authors' annotations of the "
    "conversation, not part of it: never imported",
    "evidence entries with several ids are split; zero-padded ids (D30:05) are normalised to "
    "D30:5 and kept when they name a turn; malformed and dangling ids are dropped; all are listed",
]

KEPT_NOTE = ("kept: turns' speaker, dia_id, text and blip_caption (appended to the text); records' sample_id, "
             "conversation, qa")


# At most 9 digits: a longer session or turn number is no LoCoMo key (and keeps ids short).
_SESSION_KEY = re.compile(r"session_(\d{1,9})(_date_time)?")
_EVIDENCE_ID = re.compile(r"D(\d{1,9}):(\d{1,9})")


class _Conversation:
    """Converts one LoCoMo record; problems go to the shared ``issues`` lists."""

    def __init__(self, record: dict, scenario_id: str, issues: dict[str, list[ImportIssue]],
                 counts: dict[str, int], dropped_fields: dict[str, int]):
        self.record, self.sid, self.issues, self.counts = record, scenario_id, issues, counts
        self.dropped_fields = dropped_fields  # "<level> <field>" -> how many items lost it
        self.dropped: dict[str, dict[str, str]] = {}  # message id -> {field: text} not in the fixture
        self.cited: dict[str, int] = {}  # probe id -> evidence entries the source gives
        for key in record:
            if key not in RECORD_KEYS:
                dropped_fields[f"record {key}"] = dropped_fields.get(f"record {key}", 0) + 1
        self.conv: dict = record["conversation"]
        self.entity_ids: set[str] = {OBSERVER}
        self.entities: list[EntityRef] = []
        self.authors: dict[str, str] = {}  # speaker name -> entity id
        self.evidence_index: dict[str, str] = {}  # canonical dia_id -> message id

    def issue(self, kind: str, location: str, reason: str, resolution: str,
              item_id: str | None = None, raw: object = None) -> None:
        self.issues[kind].append(ImportIssue(
            scenario_id=self.sid, location=location, item_id=item_id,
            raw=None if raw is None else raw_text(raw), reason=reason, resolution=resolution))

    # ---- entities -------------------------------------------------------------------
    def _speakers(self) -> None:
        for key in ("speaker_a", "speaker_b"):
            name = self.conv.get(key)
            if not isinstance(name, str) or not name.strip():
                self.issue("malformed_records", f"conversation.{key}", "speaker name missing",
                           f"named {key!r}", raw=name)
                name = key
            entity = unique_id(sanitise_id(name, key), self.entity_ids)
            if name in self.authors:
                self.issue("malformed_records", f"conversation.{key}", "both speakers have the same name",
                           f"entity {entity!r} created; every turn of {name!r} is attributed to "
                           f"{self.authors[name]!r}", raw=name)
            self.authors.setdefault(name, entity)
            self.entities.append(EntityRef(entity_id=entity, type="human"))

    def _author(self, speaker: str, location: str) -> str:
        if speaker not in self.authors:
            entity = unique_id(sanitise_id(speaker, "speaker"), self.entity_ids)
            self.authors[speaker] = entity
            self.entities.append(EntityRef(entity_id=entity, type="human"))
            self.issue("malformed_records", location, "speaker is neither speaker_a nor speaker_b",
                       f"added as entity {entity!r} (human)", raw=speaker)
        return self.authors[speaker]

    # ---- sessions -------------------------------------------------------------------
    def _session_keys(self) -> tuple[dict[int, str], dict[int, str]]:
        sessions: dict[int, str] = {}
        dates: dict[int, str] = {}
        for key in self.conv:
            if key in ("speaker_a", "speaker_b"):
                continue
            match = _SESSION_KEY.fullmatch(key)
            if not match:
                self.issue("malformed_records", f"conversation.{key}", "unknown conversation key", "ignored")
                continue
            target = dates if match[2] else sessions
            number = int(match[1])
            if number in target:
                self.issue("malformed_records", f"conversation.{key}",
                           f"same session number as {target[number]!r}", "ignored")
                continue
            target[number] = key
        for number in sorted(set(dates) - set(sessions)):
            self.issue("surplus_date_keys", f"conversation.{dates[number]}",
                       f"date for session_{number}, which does not exist", "ignored",
                       raw=self.conv[dates[number]])
        return sessions, dates

    def _times(self, numbers: list[int], dates: dict[int, str]) -> dict[int, datetime]:
        parsed = {n: parse_session_time(self.conv.get(dates.get(n, ""))) for n in numbers}
        known = sorted(t for t, _ in parsed.values() if t is not None)
        leading = next((i for i, n in enumerate(numbers) if parsed[n][0] is not None), len(numbers))
        times: dict[int, datetime] = {}
        previous: int | None = None
        for n in numbers:
            moment, problem = parsed[n]
            if moment is None:
                if previous is not None:
                    moment, how = times[previous] + FALLBACK_STEP, f"1 minute after session_{previous}"
                elif known:
                    moment, how = known[0] - FALLBACK_STEP * leading, "before the earliest dated session"
                else:
                    moment, how = FALLBACK_ANCHOR, "a fixed anchor (no session of this conversation has a date)"
                key = dates.get(n, f"session_{n}_date_time")
                self.issue("unparseable_dates", f"conversation.{key}", f"session date {problem}",
                           f"set to {rfc3339(moment)}, {how}", item_id=f"{self.sid}-S{n}",
                           raw=self.conv.get(key))
            times[n], previous = moment, n
        self.gap_hours = DEFAULT_GAP_HOURS
        gaps = [(b - a).total_seconds() / 3600 for a, b in zip(known, known[1:])]
        if gaps and round(statistics.median(gaps), 3) > 0:
            self.gap_hours = round(statistics.median(gaps), 3)
        return times

    def _messages(self, number: int, key: str, start: datetime, used: set[str]) -> list[Message]:
        turns = self.conv[key]
        if not isinstance(turns, list):
            self.issue("malformed_records", f"conversation.{key}", "session is not a list of turns",
                       "imported as an empty session", raw=turns)
            turns = []
        messages = []
        for i, turn in enumerate(turns):
            where = f"conversation.{key}[{i}]"
            if not isinstance(turn, dict) or not isinstance(turn.get("text"), str) \
                    or not isinstance(turn.get("speaker"), str):
                self.issue("malformed_records", where, "turn lacks a text or speaker string", "skipped", raw=turn)
                continue
            dia = turn.get("dia_id")
            if not isinstance(dia, str) or not dia.strip():
                self.issue("malformed_records", f"{where}.dia_id", "turn has no dia_id",
                           f"named D{number}:{i + 1}", raw=dia)
                dia = f"D{number}:{i + 1}"
            base = sanitise_id(f"{self.sid}-{dia}")
            message_id = base if base not in used else unique_id(base + "-dup", used)
            if message_id != base:
                self.issue("duplicate_message_ids", f"{where}.dia_id", "dia_id already used by an earlier turn",
                           f"renamed {message_id}; evidence {dia} means the first turn", message_id, dia)
            used.add(message_id)
            self.evidence_index.setdefault(_canonical(dia) or dia, message_id)
            text = turn["text"]
            lost = {key: raw_text(value) for key, value in turn.items() if key not in TURN_KEYS}
            for key in lost:
                self.dropped_fields[f"turn {key}"] = self.dropped_fields.get(f"turn {key}", 0) + 1
            if lost:
                self.dropped[message_id] = lost
            caption = turn.get("blip_caption")
            if isinstance(caption, str) and caption.strip():
                text += f" [shares an image: {caption.strip()}]"
                self.counts["image_turns"] += 1
            text, cut = fit_message(text, "text (caption included)")
            if cut:
                self.issue("malformed_records", f"{where}.text", *cut, message_id)
            messages.append(Message(
                message_id=message_id, author=self._author(turn["speaker"], f"{where}.speaker"),
                role="user", text=text, timestamp=rfc3339(start + TURN_STEP * i), scope="shared"))
        return messages

    def sessions(self) -> list[SessionLine]:
        self._speakers()
        keys, dates = self._session_keys()
        numbers = sorted(keys)
        times = self._times(numbers, dates)
        order = sorted(numbers, key=lambda n: (times[n], n))
        if order != numbers:
            self.issue("order_changes", "conversation", "dataset order differs from time order",
                       "indexed in time order: " + " ".join(f"session_{n}" for n in order),
                       raw=" ".join(f"session_{n}" for n in numbers))
        used: set[str] = set()
        lines = []
        for index, n in enumerate(order):
            messages = self._messages(n, keys[n], times[n], used)
            spoke = {m.author for m in messages}
            participants = [e.entity_id for e in self.entities if e.entity_id in spoke] \
                or [e.entity_id for e in self.entities[:2]]
            lines.append(SessionLine(session_id=f"{self.sid}-S{n}", index=index, time=rfc3339(times[n]),
                                     participants=participants, messages=messages))
        self.last_time = times[order[-1]] if order else FALLBACK_ANCHOR
        return lines

    # ---- probes ---------------------------------------------------------------------
    def _answer(self, qa: dict, where: str, probe_id: str, category: int | None) -> tuple[str, list[str]]:
        value = qa.get("answer")
        if category == ABSTENTION_CATEGORY:
            if "adversarial_answer" in qa:
                self.counts["adversarial_answers_withheld"] += 1
            if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value).strip():
                self.counts["adversarial_items_with_answer"] += 1
                return "unknown", [str(value).strip()] if str(value).strip().lower() != "unknown" else []
            return "unknown", []
        if isinstance(value, str) and value.strip():
            return value, []
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            self.issue("integer_answers", f"{where}.answer", f"answer is a number ({type(value).__name__}), not text",
                       f"kept as text {str(value)!r}", probe_id, value)
            return str(value), []
        if value is None or isinstance(value, str):
            self.issue("missing_answers", f"{where}.answer", "no answer", "kept with an empty answer "
                       "(retrieval can still be scored from evidence)", probe_id, value)
            return "", []
        self.issue("missing_answers", f"{where}.answer", f"answer is a {type(value).__name__}, not text",
                   "kept as JSON text", probe_id, value)
        return raw_text(value), []

    def _evidence(self, qa: dict, where: str, probe_id: str) -> list[str]:
        entries = qa.get("evidence", [])
        self.cited[probe_id] = len(entries) if isinstance(entries, list) else 1
        if not isinstance(entries, list):
            self.issue("malformed_evidence", f"{where}.evidence", "evidence is not a list",
                       "read as a one-entry list" if isinstance(entries, str) else "no evidence kept",
                       probe_id, entries)
            entries = [entries] if isinstance(entries, str) else []
        kept: list[str] = []
        for j, entry in enumerate(entries):
            at = f"{where}.evidence[{j}]"
            if not isinstance(entry, str):
                self.issue("malformed_evidence", at, "evidence id is not a string", "dropped", probe_id, entry)
                continue
            parts = [p for p in re.split(r"[;,\s]+", entry) if p]
            if len(parts) > 1:
                self.issue("malformed_evidence", at, "several ids in one entry",
                           "split into " + ", ".join(parts), probe_id, entry)
            if not parts:
                self.issue("malformed_evidence", at, "empty evidence id", "dropped", probe_id, entry)
            for part in parts:
                canonical = _canonical(part)
                if canonical is None:
                    self.issue("malformed_evidence", at, "not of the form D<session>:<turn>", "dropped",
                               probe_id, part)
                    continue
                target = self.evidence_index.get(canonical)
                if canonical != part:
                    self.issue("malformed_evidence", at, "zero-padded number",
                               f"normalised to {canonical}" + ("" if target else ", which names no turn: dropped"),
                               probe_id, part)
                if target is None:
                    if canonical == part:
                        self.issue("dangling_evidence", at, "names no turn of this conversation",
                                   "dropped", probe_id, part)
                elif target not in kept:
                    kept.append(target)
        return kept

    def probes(self) -> tuple[list[Probe], list[GoldProbe]]:
        qas = self.record.get("qa", [])
        if not isinstance(qas, list):
            self.issue("malformed_records", "qa", "qa is not a list", "no probes", raw=qas)
            qas = []
        asked_at = rfc3339(self.last_time + PROBE_DELAY)
        probes, gold = [], []
        for i, qa in enumerate(qas):
            where, probe_id = f"qa[{i}]", f"{self.sid}-q{i:04d}"
            question = qa.get("question") if isinstance(qa, dict) else None
            if not isinstance(question, str) or not question.strip():
                self.issue("malformed_records", where, "QA item without a question", "skipped", probe_id,
                           qa if not isinstance(qa, dict) else question)
                continue
            if overlong_query(question):
                self.issue("malformed_records", f"{where}.question", overlong_query(question), "skipped", probe_id)
                continue
            category = qa.get("category")
            category = int(category) if isinstance(category, (int, str)) and not isinstance(category, bool) \
                and re.fullmatch(r"[0-9]{1,3}", str(category)) else None
            probe_type = PROBE_TYPES.get(category or 0, "uncategorised")
            if probe_type == "uncategorised":
                self.issue("malformed_records", f"{where}.category", "unknown category", "probe_type "
                           "'uncategorised'", probe_id, qa.get("category"))
            answer, accepted = self._answer(qa, where, probe_id, category)
            probes.append(Probe(probe_id=probe_id, asked_by=OBSERVER, query=question, asked_at=asked_at))
            gold.append(GoldProbe(probe_id=probe_id, checkpoint_id=f"{self.sid}-final", probe_type=probe_type,
                                  abstention=category == ABSTENTION_CATEGORY, answer=answer, accepted=accepted,
                                  evidence=self._evidence(qa, where, probe_id)))
        return probes, gold


def _canonical(evidence_id: str) -> str | None:
    """``D30:05`` -> ``D30:5``; None when the text is not ``D<int>:<int>``."""
    match = _EVIDENCE_ID.fullmatch(evidence_id)
    return f"D{int(match[1])}:{int(match[2])}" if match else None


def _scenario_id(record: object, position: int, used: set[str]) -> tuple[str, str | None]:
    """``locomo-<sample_id>`` made a unique file-safe id, and what was wrong, if anything
    (a text starting ``skipped:`` when the record cannot be imported at all)."""
    sample = record.get("sample_id") if isinstance(record, dict) else None
    named = isinstance(sample, (str, int)) and not isinstance(sample, bool) and str(sample).strip()
    # Only ASCII letters, digits and ._- survive, so the id cannot leave fixtures/ or gold/.
    base = sanitise_id(f"locomo-{sample}" if named else f"locomo-record-{position}", colons=False)
    base = base[:SCENARIO_ID_CHARS]
    sid = unique_id(base, used, SCENARIO_ID_CHARS)
    if not isinstance(record, dict):
        return sid, "skipped: record is not an object"
    if not isinstance(record.get("conversation"), dict):
        return sid, "skipped: record has no conversation object"
    if not named:
        return sid, "sample_id missing"
    return sid, None if sid == base else "duplicate sample_id"


COUNT_KEYS = ("image_turns", "evidence_ids", "abstention_probes", "adversarial_answers_withheld",
              "adversarial_items_with_answer")


def import_locomo(path: Path, out_dir: Path) -> ImportReport:
    """Write ``out_dir/fixtures/<scenario>.jsonl``, ``out_dir/gold/<scenario>.json`` and
    ``out_dir/import-report.json``; return the report.

    Bad items never raise: each becomes an issue in the report (docs/import-formats.md).
    Same input file -> byte-identical output files.

    Raises:
        SourceFormatError: the file is not JSON or not a list of conversation records.
        OSError: the file cannot be read or the output written.
    """
    path, out_dir = Path(path), Path(out_dir)
    # A leading UTF-8 byte order mark is skipped; source_sha256 stays over the file's raw bytes.
    data, raw = load_json(path, MAX_IMPORT_SOURCE_BYTES)
    sha, size = file_sha256(path)
    del raw
    if not isinstance(data, list):
        raise source_error(path, "(document)", f"expected a JSON list of LoCoMo conversations, "
                           f"got {type(data).__name__}")
    report = ReportBuilder(SOURCE, (*ISSUE_KINDS, *QUALITY_KINDS), COUNT_KEYS)
    dropped_fields: dict[str, int] = {}
    used_ids: set[str] = set()
    for r, record in enumerate(data):
        sid, problem = _scenario_id(record, r, used_ids)
        if problem:
            report.issue("malformed_records", sid, f"[{r}]", problem,
                         "skipped" if problem.startswith("skipped:") else f"scenario id {sid}",
                         raw=raw_text(record.get("sample_id")) if isinstance(record, dict) and "sample_id" in record
                         else None)
            if problem.startswith("skipped:"):
                continue
        _write_scenario(_Conversation(record, sid, report.issues, report.counts, dropped_fields), out_dir, report)
    return report.write(out_dir, path, sha, size, [*NOTES, dropped_fields_note(dropped_fields, KEPT_NOTE)])


def _write_scenario(convert: _Conversation, out_dir: Path, report: ReportBuilder) -> None:
    """Convert one conversation and write its fixture and gold (or list why not)."""
    sid = convert.sid
    sessions = convert.sessions()
    if not sessions:
        convert.issue("malformed_records", "conversation", "conversation has no sessions", "skipped")
        return
    probes, gold_probes = convert.probes()
    header = HeaderLine(
        scenario_id=sid, paradigm="multi_peer", source=SOURCE, free_form=True,
        horizons=[HorizonPhase(name=horizon_for(len(sessions)), sessions=len(sessions),
                               session_gap_hours=convert.gap_hours)],
        entities=[*convert.entities, EntityRef(entity_id=OBSERVER, type="observer")])
    lines: list = [header, *sessions]
    if probes:
        lines.append(CheckpointLine(checkpoint_id=f"{sid}-final", after_session=len(sessions),
                                    horizon=horizon_for(len(sessions)), probes=probes))
    write_fixture(out_dir / "fixtures" / f"{sid}.jsonl", lines)
    # Doubtful gold (the shared checks). LoCoMo gives no question dates: asked_at is ours.
    where = {g.probe_id: f"qa[{int(g.probe_id.rsplit('-q', 1)[1])}]" for g in gold_probes}
    report.extend(gold_quality(sid, sessions, gold_probes, where, questions=probes, question_dates=False,
                               dropped=convert.dropped, cited=convert.cited))
    write_gold(out_dir / "gold" / f"{sid}.json", GoldFile(scenario_id=sid, source=SOURCE, probes=gold_probes))
    report.scenario(sid, sessions, gold_probes)


IMPORTER = Importer(
    run=import_locomo,
    summary="LoCoMo (locomo10.json): sessions, QA probes, evidence; an import report lists bad gold.",
    description="One scenario per conversation (multi_peer); format and decisions: docs/import-formats.md#locomo.")

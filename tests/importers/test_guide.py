"""The guide JSONL importer and exporter: a hand-written file in the guide's case format with
the defects a real file has, a run through the keyword adapter, and the round trip
(export the committed ``ci`` split, import it back, compare byte for byte)."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.cli.export import export_guide_cmd as export_command
from conformance.cli.import_ import importer_command
from conformance.contract.corpus import Selection, iter_fixture, read_gold, read_header, select_fixtures, validate_corpus
from conformance.contract.fixture import CheckpointLine, HeaderLine, SessionLine
from conformance.importers.guide import keys as guide
from conformance.importers.guide import (
    ISSUE_KINDS,
    export_guide,
    import_guide,
    parse_guide_time,
)
from conformance.importers.quality import QUALITY_KINDS
from conformance.importers.report import SourceFormatError, format_report

import_command = importer_command("guide")

REPO = Path(__file__).resolve().parents[2]
FIXTURES, GOLD = REPO / "fixtures", REPO / "gold"


def _turn(turn_id: str, role: str, text: str) -> dict:
    return {"turn_id": turn_id, "role": role, "text": text}


def _q(qid: str, kind: str, asked_at: str, question: str, answer, evidence: list) -> dict:
    return {"qid": qid, "type": kind, "asked_at": asked_at, "question": question, "gold_answer": answer,
            "evidence": evidence}


# An engineering assistant's cases. Line 1: sessions listed out of time order, a question
# asked mid-stream, a dangling and a future evidence id, an abstention. Line 2: a cut-off
# line. Line 3: an unparseable and a naive timestamp, a repeated turn id, an integer gold
# answer, a question asked before the first session. Line 4: a repeated case id, agent and
# tool turns, a timestamp with an offset.
CASE_1 = {
    "case_id": "eng-001",
    "sessions": [
        {"session_id": "s1", "timestamp": "2026-03-02T10:00:00Z", "turns": [
            _turn("eng-001-s1t1", "user", "Our payments API keeps its ledgers in MySQL 5.7; we froze it last autumn."),
            _turn("eng-001-s1t2", "assistant", "Understood: payments sits on MySQL 5.7."),
            _turn("eng-001-s1t3", "user", "The search cluster is OpenSearch and unrelated to payments."),
        ]},
        {"session_id": "s3", "timestamp": "2026-05-25T14:00:00Z", "turns": [
            _turn("eng-001-s3t1", "user", "A code freeze for payments begins on June 8 and lasts two weeks."),
        ]},
        {"session_id": "s2", "timestamp": "2026-05-11T09:30:00Z", "turns": [
            _turn("eng-001-s2t1", "user", "Payments moved to MySQL 8.0 over the weekend."),
            _turn("eng-001-s2t2", "assistant", "Noted, payments runs MySQL 8.0 now."),
        ]},
    ],
    "questions": [
        _q("eng-001-q1", "knowledge_update", "2026-06-01", "Which MySQL version does the payments API use?",
           "MySQL 8.0", ["eng-001-s2t1"]),
        _q("eng-001-q2", "temporal", "2026-06-01", "On what date does the payments code freeze end?", "June 22",
           ["eng-001-s3t1"]),
        _q("eng-001-q3", "abstention", "2026-06-01", "Which Kafka version does payments use?", "I don't know", []),
        _q("eng-001-q4", "single_hop", "2026-04-01T12:00:00Z", "Which engine backs the search cluster?",
           "OpenSearch", ["eng-001-s1t3", "eng-001-s9t9"]),
        _q("eng-001-q5", "single_hop", "2026-04-01T12:00:00Z", "Which MySQL version did payments use in March?",
           "MySQL 5.7", ["eng-001-s1t1", "eng-001-s2t1"]),
    ],
}
CASE_3 = {
    "case_id": "eng-003",
    "sessions": [
        {"session_id": "s1", "timestamp": "2026-02-10T08:00:00Z", "turns": [
            _turn("eng-003-s1t1", "user", "Staging runs 3 replicas of the gateway."),
            _turn("eng-003-s1t2", "assistant", "Three gateway replicas on staging, noted."),
        ]},
        {"session_id": "s2", "timestamp": "last Tuesday", "turns": [
            _turn("eng-003-s2t1", "user", "Remember that the on-call rotation is weekly."),
            _turn("eng-003-s2t1", "assistant", "Weekly rotation, understood."),
        ]},
        {"session_id": "s3", "timestamp": "2026-02-20T09:00:00", "turns": [
            _turn("eng-003-s3t1", "user", "We now run 5 gateway replicas on staging."),
        ]},
    ],
    "questions": [
        _q("eng-003-q1", "knowledge_update", "2026-03-01T00:00:00Z", "How many gateway replicas run on staging?",
           5, ["eng-003-s3t1"]),
        _q("eng-003-q2", "single_hop", "2026-01-01", "How many replicas did staging start with?", "3 replicas",
           ["eng-003-s1t1"]),
        _q("eng-003-q3", "single_hop", "2026-03-01T00:00:00Z", "How often does on-call rotate?", "weekly",
           ["eng-003-s2t1"]),
    ],
}
CASE_4 = {
    "case_id": "eng-001",
    "sessions": [
        {"session_id": "s1", "timestamp": "2026-04-01T09:00:00+02:00", "turns": [
            _turn("t1", "user", "Please bump the linter to version 9."),
            _turn("t2", "agent", "Bumped the linter to version 9 in the config."),
            _turn("t3", "tool", "CI passed: 214 tests, 0 failures."),
        ]},
    ],
    "questions": [_q("q1", "single_hop", "2026-04-02", "Which linter version is configured?", "version 9", ["t2"])],
}
SAMPLE = "\n".join([json.dumps(CASE_1), '{"case_id": "eng-002", "sessions": [', json.dumps(CASE_3),
                    json.dumps(CASE_4)]) + "\n"


@pytest.fixture
def imported(tmp_path: Path):
    source = tmp_path / "cases.jsonl"
    source.write_text(SAMPLE, encoding="utf-8")
    out = tmp_path / "out"
    return source, out, import_guide(source, out)


def _lines(out: Path, scenario: str) -> list:
    return list(iter_fixture(out / "fixtures" / f"{scenario}.jsonl"))


def _issues(report, kind: str) -> list[tuple]:
    return [(i.scenario_id, i.location, i.item_id, i.raw, i.reason, i.resolution) for i in report.issues[kind]]


def test_parse_guide_time():
    utc = timezone.utc
    assert parse_guide_time("2026-03-02T10:00:00Z") == (datetime(2026, 3, 2, 10, tzinfo=utc), "2026-03-02T10:00:00Z",
                                                        None)
    moment, text, problem = parse_guide_time("2026-04-01T09:00:00+02:00")
    assert (moment.astimezone(utc), text, problem) == (datetime(2026, 4, 1, 7, tzinfo=utc),
                                                       "2026-04-01T09:00:00+02:00", None)
    assert parse_guide_time("2026-06-01", end_of_day=True) == \
        (datetime(2026, 6, 1, 23, 59, 59, tzinfo=utc), "2026-06-01T23:59:59Z", None)
    assert parse_guide_time("2026-06-01")[1:] == ("2026-06-01T00:00:00Z", "a date without a time: read as midnight UTC")
    assert parse_guide_time("2026-02-20T09:00:00")[1:] == ("2026-02-20T09:00:00Z", "no UTC offset: read as UTC")
    assert parse_guide_time("last Tuesday") == (None, None, "not an RFC 3339 time")
    assert parse_guide_time(1767225600) == (None, None, "not a text (int)")
    assert parse_guide_time("0001-01-01T00:00:00+05:00")[0] is None
    assert parse_guide_time(None) == (None, None, "missing")


def test_sessions_in_time_order_with_verbatim_times(imported):
    _, out, report = imported
    assert report.scenarios == ["eng-001", "eng-003", "eng-001-2"]
    sessions = [line for line in _lines(out, "eng-001") if isinstance(line, SessionLine)]
    assert [(s.session_id, s.index, s.time, s.participants) for s in sessions] == [
        ("s1", 0, "2026-03-02T10:00:00Z", ["user", "assistant"]),
        ("s2", 1, "2026-05-11T09:30:00Z", ["user", "assistant"]),
        ("s3", 2, "2026-05-25T14:00:00Z", ["user"]),
    ]
    assert [(m.message_id, m.author, m.role, m.timestamp, m.scope) for m in sessions[0].messages] == [
        ("eng-001-s1t1", "user", "user", "2026-03-02T10:00:00Z", "shared"),
        ("eng-001-s1t2", "assistant", "assistant", "2026-03-02T10:00:30Z", "shared"),
        ("eng-001-s1t3", "user", "user", "2026-03-02T10:01:00Z", "shared"),
    ]
    assert sessions[0].messages[0].text == CASE_1["sessions"][0]["turns"][0]["text"]
    sessions = [line for line in _lines(out, "eng-003") if isinstance(line, SessionLine)]
    # "last Tuesday": 1 minute after the session before it; the naive time is read as UTC.
    assert [(s.session_id, s.time) for s in sessions] == [
        ("s1", "2026-02-10T08:00:00Z"), ("s2", "2026-02-10T08:01:00Z"), ("s3", "2026-02-20T09:00:00Z")]
    assert [m.message_id for m in sessions[1].messages] == ["eng-003-s2t1", "eng-003-s2t1-2"]


def test_header_and_checkpoints_by_asked_at(imported):
    _, out, _ = imported
    lines = _lines(out, "eng-001")
    header = lines[0]
    assert isinstance(header, HeaderLine)
    assert (header.paradigm, header.source, header.free_form, header.holdout, header.splits, header.markers) == \
        ("user_assistant", "guide", True, False, [], {})
    assert [(e.entity_id, e.type) for e in header.entities] == [("user", "human"), ("assistant", "assistant_agent")]
    # Median of the gaps 1679.5 h and 340.5 h.
    assert [(h.name, h.sessions, h.session_gap_hours) for h in header.horizons] == [("short", 3, 1010.0)]
    # The questions asked on April 1 come after the first session, in the middle of the stream.
    assert [type(line).__name__ for line in lines] == \
        ["HeaderLine", "SessionLine", "CheckpointLine", "SessionLine", "SessionLine", "CheckpointLine"]
    checkpoints = [line for line in lines if isinstance(line, CheckpointLine)]
    assert [(c.checkpoint_id, c.after_session, c.horizon, [p.probe_id for p in c.probes]) for c in checkpoints] == [
        ("eng-001-c1", 1, "short", ["eng-001-q4", "eng-001-q5"]),
        ("eng-001-c2", 3, "short", ["eng-001-q1", "eng-001-q2", "eng-001-q3"]),
    ]
    probes = {p.probe_id: p for c in checkpoints for p in c.probes}
    assert probes["eng-001-q4"].asked_at == "2026-04-01T12:00:00Z"
    # A bare date is the end of that day.
    assert probes["eng-001-q1"].asked_at == "2026-06-01T23:59:59Z"
    assert {(p.asked_by, p.options, p.choices, p.temporal) for p in probes.values()} == \
        {("assistant", None, None, None)}
    assert probes["eng-001-q2"].query == "On what date does the payments code freeze end?"
    # Asked before the first session: moved after it, at its last turn.
    early = [line for line in _lines(out, "eng-003") if isinstance(line, CheckpointLine)][0]
    assert (early.after_session, [(p.probe_id, p.asked_at) for p in early.probes]) == \
        (1, [("eng-003-q2", "2026-02-10T08:00:30Z")])


def test_agent_and_tool_turns_make_a_coding_agent_scenario(imported):
    _, out, _ = imported
    header, session, checkpoint = _lines(out, "eng-001-2")
    assert header.paradigm == "coding_agent"
    assert [(e.entity_id, e.type) for e in header.entities] == \
        [("user", "human"), ("agent", "coding_agent"), ("tool", "tool_agent")]
    # A time with an offset is kept verbatim; turn times are UTC.
    assert session.time == "2026-04-01T09:00:00+02:00"
    assert [(m.author, m.role, m.timestamp) for m in session.messages] == [
        ("user", "user", "2026-04-01T07:00:00Z"), ("agent", "agent", "2026-04-01T07:00:30Z"),
        ("tool", "tool", "2026-04-01T07:01:00Z")]
    assert [(p.probe_id, p.asked_by, p.asked_at) for p in checkpoint.probes] == \
        [("q1", "agent", "2026-04-02T23:59:59Z")]


def test_gold_types_answers_abstention_and_evidence(imported):
    _, out, _ = imported
    gold = read_gold(out / "gold" / "eng-001.json")
    assert (gold.source, gold.scenario_id, gold.session_tiers, gold.events) == ("guide", "eng-001", {}, [])
    assert [(p.probe_id, p.checkpoint_id, p.probe_type, p.abstention, p.answer, p.accepted, p.evidence)
            for p in gold.probes] == [
        ("eng-001-q4", "eng-001-c1", "single_hop", False, "OpenSearch", [], ["eng-001-s1t3"]),
        ("eng-001-q5", "eng-001-c1", "single_hop", False, "MySQL 5.7", [], ["eng-001-s1t1"]),
        ("eng-001-q1", "eng-001-c2", "knowledge_update", False, "MySQL 8.0", [], ["eng-001-s2t1"]),
        ("eng-001-q2", "eng-001-c2", "temporal", False, "June 22", [], ["eng-001-s3t1"]),
        ("eng-001-q3", "eng-001-c2", "abstention", True, "unknown", ["I don't know"], []),
    ]
    gold3 = read_gold(out / "gold" / "eng-003.json")
    # Evidence naming a repeated turn id means its first turn.
    assert [(p.probe_id, p.answer, p.evidence) for p in gold3.probes] == [
        ("eng-003-q2", "3 replicas", ["eng-003-s1t1"]),
        ("eng-003-q1", "5", ["eng-003-s3t1"]),
        ("eng-003-q3", "weekly", ["eng-003-s2t1"]),
    ]


def test_report_lists_every_defect(imported):
    source, out, report = imported
    a, c, d = "eng-001", "eng-003", "eng-001-2"
    assert set(report.issues) == {*ISSUE_KINDS, *QUALITY_KINDS}
    assert [(i.location, i.reason.split(":")[0]) for i in report.issues["malformed_lines"]] == \
        [("line 2", "invalid JSON")]
    assert _issues(report, "order_changes") == [
        (a, "line 1: sessions", None, "s1 s3 s2", "sessions are not in time order", "indexed in time order: s1 s2 s3")]
    assert _issues(report, "dangling_evidence") == [
        (a, "line 1: questions[3].evidence[1]", f"{a}-q4", "eng-001-s9t9", "names no turn of this case", "dropped")]
    assert _issues(report, "future_evidence") == [
        (a, "line 1: questions[4].evidence[1]", f"{a}-q5", "eng-001-s2t1",
         "the turn is said in session 2 (time order), after the question is asked (after session 1)", "dropped")]
    assert _issues(report, "unparseable_timestamps") == [
        (c, "line 3: sessions[1].timestamp", "s2", "last Tuesday", "session timestamp not an RFC 3339 time",
         "set to 2026-02-10T08:01:00Z, 1 minute after the session before it in the case")]
    assert _issues(report, "naive_timestamps") == [
        (c, "line 3: sessions[2].timestamp", "s3", "2026-02-20T09:00:00", "no UTC offset: read as UTC",
         "set to 2026-02-20T09:00:00Z")]
    assert _issues(report, "duplicate_ids") == [
        (c, "line 3: sessions[1].turns[1].turn_id", "eng-003-s2t1-2", "eng-003-s2t1",
         "turn id already used in this case",
         "renamed eng-003-s2t1-2; evidence naming it means the first turn"),
        (d, "line 4: case_id", None, "eng-001", "case_id (ignoring case) already used by an earlier case",
         "scenario id eng-001-2"),
    ]
    assert _issues(report, "integer_answers") == [
        (c, "line 3: questions[0].gold_answer", f"{c}-q1", "5", "gold answer is a number (int), not text",
         "kept as text '5'")]
    assert _issues(report, "early_questions") == [
        (c, "line 3: questions[1].asked_at", f"{c}-q2", "2026-01-01", "asked before the first session",
         "asked after the first session, at 2026-02-10T08:00:30Z")]
    # The quality checks' lists are merged: "June 22" is computed, not said.
    assert [(i.scenario_id, i.location, i.item_id, i.raw) for i in report.issues["answer_not_in_evidence"]] == \
        [(a, "line 1: questions[1].answer", f"{a}-q2", "June 22")]
    for kind in ("malformed_records", "malformed_extras", "missing_answers", "garbled_answers"):
        assert report.issues[kind] == [], kind
    assert {k: report.counts[k] for k in ("scenarios", "sessions", "messages", "probes", "checkpoints",
                                          "evidence_ids", "abstention_probes", "extended_cases")} == \
        {"scenarios": 3, "sessions": 7, "messages": 14, "probes": 9, "checkpoints": 5, "evidence_ids": 8,
         "abstention_probes": 1, "extended_cases": 0}
    assert report.probes_by_type == {"abstention": 1, "knowledge_update": 2, "single_hop": 5, "temporal": 1}
    assert report.source == "guide"
    assert report.source_sha256 == hashlib.sha256(source.read_bytes()).hexdigest()
    assert report.source_bytes == len(source.read_bytes())
    written = json.loads((out / "import-report.json").read_text(encoding="utf-8"))
    assert written == report.model_dump(mode="json")
    text = format_report(report)
    assert "3 scenarios, 7 sessions, 14 messages, 9 probes" in text and "dangling_evidence: 1" in text


def test_corpus_validates_and_fixtures_hold_no_gold(imported):
    _, out, _ = imported
    assert validate_corpus(out / "fixtures", out / "gold") == ["eng-001", "eng-001-2", "eng-003"]
    fixture_text = (out / "fixtures" / "eng-001.jsonl").read_text(encoding="utf-8")
    assert "June 22" not in fixture_text and "evidence" not in fixture_text


def test_keyword_retrieval_and_oracle_ceiling(imported, tmp_path: Path):
    from conformance.runner.job import run_job

    _, out, _ = imported
    doc = run_job(["keyword"], out / "fixtures", out / "gold", records_dir=tmp_path / "rec", n_boot=200)
    keyword = doc.systems["keyword"].metrics["recall_at_k"].value
    assert isinstance(keyword, float) and 0.0 <= keyword <= 1.0
    assert doc.systems["oracle"].metrics["recall_at_k"].value == 1.0
    # Free-form probes: no answer accuracy without an answer model.
    assert doc.systems["keyword"].metrics["accuracy"].value is None


def test_output_is_byte_identical_across_runs(imported, tmp_path: Path):
    source, out, _ = imported
    again = tmp_path / "again"
    import_guide(source, again)
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert len(files) == 7
    for rel in files:
        assert (out / rel).read_bytes() == (again / rel).read_bytes(), rel


def test_ci_split_round_trips_byte_for_byte(tmp_path: Path):
    cases = tmp_path / "cases.jsonl"
    expected = sorted(p.stem for p in select_fixtures(FIXTURES, Selection(splits=("ci",)))[0])
    assert expected, "the committed corpus has a ci split"
    assert export_guide(FIXTURES, GOLD, cases, Selection(splits=("ci",))) == len(expected)
    # The file is plain guide JSONL: one case per line with the guide's keys.
    rows = [json.loads(line) for line in cases.read_text(encoding="utf-8").splitlines()]
    assert [r["case_id"] for r in rows] == expected
    assert all({"case_id", "sessions", "questions"} <= set(r) for r in rows)
    turn = rows[0]["sessions"][0]["turns"][0]
    assert set(turn) == {"turn_id", "role", "text", "drift"} and turn["role"] in ("user", "assistant")
    assert {"qid", "type", "asked_at", "question", "gold_answer", "evidence"} <= set(rows[0]["questions"][0])
    report = import_guide(cases, tmp_path / "back")
    assert report.scenarios == expected
    assert report.counts["extended_cases"] == len(expected)
    for kind in ("malformed_lines", "malformed_records", "malformed_extras", "duplicate_ids", "order_changes",
                 "dangling_evidence", "future_evidence", "unparseable_timestamps", "naive_timestamps"):
        assert report.issues[kind] == [], kind
    back = tmp_path / "back"
    assert sorted(p.name for p in (back / "fixtures").iterdir()) == [f"{s}.jsonl" for s in expected]
    assert sorted(p.name for p in (back / "gold").iterdir()) == [f"{s}.json" for s in expected]
    for sid in expected:
        assert (back / "fixtures" / f"{sid}.jsonl").read_bytes() == (FIXTURES / f"{sid}.jsonl").read_bytes(), sid
        assert (back / "gold" / f"{sid}.json").read_bytes() == (GOLD / f"{sid}.json").read_bytes(), sid


def test_export_leaves_holdout_out_unless_asked(tmp_path: Path):
    held = sorted(p.stem for p in FIXTURES.glob("*.jsonl") if read_header(p).holdout)
    assert held, "the committed corpus has holdout scenarios"
    pattern = held[0]
    assert export_guide(FIXTURES, GOLD, tmp_path / "a.jsonl", Selection(patterns=(pattern,))) == 0
    assert (tmp_path / "a.jsonl").read_bytes() == b""
    assert export_guide(FIXTURES, GOLD, tmp_path / "b.jsonl",
                        Selection(patterns=(pattern,), include_holdout=True)) == 1
    (row,) = [json.loads(line) for line in (tmp_path / "b.jsonl").read_text(encoding="utf-8").splitlines()]
    assert row["case_id"] == pattern and row["drift"]["header"]["holdout"] is True


def test_export_is_deterministic_and_streams_in_fixture_order(tmp_path: Path):
    first, second = tmp_path / "1.jsonl", tmp_path / "2.jsonl"
    selection = Selection(patterns=("ua-short-00[12]",))
    export_guide(FIXTURES, GOLD, first, selection)
    export_guide(FIXTURES, GOLD, second, selection)
    assert first.read_bytes() == second.read_bytes()
    row = json.loads(first.read_text(encoding="utf-8").splitlines()[0])
    sessions = [line for line in iter_fixture(FIXTURES / "ua-short-001.jsonl") if isinstance(line, SessionLine)]
    assert [s["session_id"] for s in row["sessions"]] == [s.session_id for s in sessions]
    assert list(row) == ["case_id", "sessions", "questions", "drift"]
    assert not list(tmp_path.glob("*.part"))


def test_export_refuses_a_case_longer_than_the_line_bound(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(guide, "MAX_CASE_LINE_BYTES", 1000)
    with pytest.raises(guide.GuideExportError, match="ua-short-001: its case would be a line longer than"):
        export_guide(FIXTURES, GOLD, tmp_path / "x.jsonl", Selection(patterns=("ua-short-001",)))
    assert not (tmp_path / "x.jsonl").exists() and not list(tmp_path.iterdir())


def test_extras_are_read_and_bad_ones_ignored(tmp_path: Path):
    case = json.loads(json.dumps(CASE_4))
    case["sessions"][0]["turns"][0]["drift"] = {"author": "dana", "scope": "private", "unknown_key": 1}
    case["sessions"][0]["turns"][1]["drift"] = {"scope": "secret"}
    case["questions"][0]["drift"] = {"options": ["version 8", "version 9", "unknown"], "stale": ["version 8"],
                                     "abstention": False}
    case["drift"] = {"header": {"splits": ["ci"], "paradigm": "crawler_agent"}, "checkpoints": "nope"}
    source = tmp_path / "x.jsonl"
    source.write_text(json.dumps(case) + "\n", encoding="utf-8")
    report = import_guide(source, tmp_path / "out")
    header, session, checkpoint = _lines(tmp_path / "out", "eng-001")
    assert (header.paradigm, header.splits) == ("crawler_agent", ["ci"])
    assert [(m.author, m.scope) for m in session.messages] == [("dana", "private"), ("agent", "shared"),
                                                               ("tool", "shared")]
    assert checkpoint.probes[0].options == ["version 8", "version 9", "unknown"]
    (gold,) = read_gold(tmp_path / "out" / "gold" / "eng-001.json").probes
    assert (gold.stale, gold.abstention, gold.answer) == (["version 8"], False, "version 9")
    assert [(i.location, i.reason.split(":")[0]) for i in report.issues["malformed_extras"]] == [
        ("line 1: sessions[0].turns[1].drift", "scope"),
        ("line 1: drift.checkpoints", "checkpoints is not a list"),
    ]
    assert report.counts["extended_cases"] == 1
    assert validate_corpus(tmp_path / "out" / "fixtures", tmp_path / "out" / "gold") == ["eng-001"]


def test_overlong_lines_are_skipped_and_bad_files_refused(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(guide, "MAX_CASE_LINE_BYTES", 700)
    source = tmp_path / "x.jsonl"
    long_case = json.dumps(CASE_1)
    assert len(long_case) > 1400
    source.write_text(long_case + "\n\n" + json.dumps(CASE_4) + "\n", encoding="utf-8")
    report = import_guide(source, tmp_path / "out")
    assert report.scenarios == ["eng-001"]
    assert [(i.location, i.reason) for i in report.issues["malformed_lines"]] == \
        [("line 1", "line longer than 700 bytes (the input limit; see docs/input-limits.md)")]
    assert _lines(tmp_path / "out", "eng-001")[0].paradigm == "coding_agent"
    pretty = tmp_path / "pretty.jsonl"
    pretty.write_text(json.dumps(CASE_4, indent=1), encoding="utf-8")
    with pytest.raises(SourceFormatError, match=r"pretty\.jsonl: \(file\): no case found: expected JSON Lines"):
        import_guide(pretty, tmp_path / "out2")


def test_broken_cases_are_reported_not_raised(tmp_path: Path):
    source = tmp_path / "x.jsonl"
    cases = [
        {"case_id": "no sessions!", "questions": []},
        {"sessions": [{"session_id": "s1", "timestamp": "2026-01-01T00:00:00Z",
                       "turns": [{"turn_id": "t1", "role": "bot", "text": "hi"}, {"role": "user"}]}],
         "questions": [{"qid": "q1", "question": "", "gold_answer": "x"},
                       {"qid": "q2", "question": "Who?", "asked_at": "2026-01-02",
                        "evidence": ["t1", {"turn": "t1"}]}]},
        ["not", "an", "object"],
    ]
    source.write_text("\n".join(json.dumps(c) for c in cases) + "\n", encoding="utf-8")
    report = import_guide(source, tmp_path / "out")
    assert report.scenarios == ["case-line-2"]
    assert [(i.scenario_id, i.location, i.reason) for i in report.issues["malformed_records"]] == [
        ("no-sessions-", "line 1: case_id", "case_id is not a valid file-safe id"),
        ("no-sessions-", "line 1: sessions", "sessions is not a list"),
        ("no-sessions-", "line 1: sessions", "case has no usable session"),
        ("case-line-2", "line 2: case_id", "case_id missing or not a text"),
        ("case-line-2", "line 2: sessions[0].turns[0].role", "role is not user, assistant, agent, tool or system"),
        ("case-line-2", "line 2: sessions[0].turns[1]", "turn lacks a text string"),
        ("case-line-2", "line 2: questions[0].question", "no question text"),
        ("case-line-2", "line 2: questions[1].type", "no question type"),
        ("case-line-2", "line 2: questions[1].evidence[1]", "evidence id is not a text"),
    ]
    assert [i.location for i in report.issues["missing_answers"]] == ["line 2: questions[1].gold_answer"]
    assert [i.location for i in report.issues["malformed_lines"]] == ["line 3"]
    (probe,) = read_gold(tmp_path / "out" / "gold" / "case-line-2.json").probes
    assert (probe.probe_type, probe.answer, probe.evidence) == ("uncategorised", "", ["t1"])
    assert report.issues["garbled_answers"][0].item_id == "q2"
    assert validate_corpus(tmp_path / "out" / "fixtures", tmp_path / "out" / "gold") == ["case-line-2"]


def test_import_command(tmp_path: Path):
    source = tmp_path / "cases.jsonl"
    source.write_text(SAMPLE, encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(import_command, [str(source), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "guide: 3 scenarios, 7 sessions, 14 messages, 9 probes" in result.output
    assert "run it: drift-conformance --adapter keyword" in result.output
    assert validate_corpus(out / "fixtures", out / "gold") == ["eng-001", "eng-001-2", "eng-003"]
    before = sorted(p.name for p in (out / "fixtures").iterdir())
    again = CliRunner().invoke(import_command, [str(source), "--out", str(out)])
    assert again.exit_code == 2 and "is not empty" in again.output
    assert sorted(p.name for p in (out / "fixtures").iterdir()) == before
    pretty = tmp_path / "pretty.jsonl"
    pretty.write_text(json.dumps(CASE_4, indent=1), encoding="utf-8")
    refused = CliRunner().invoke(import_command, [str(pretty), "--out", str(tmp_path / "out2")])
    assert refused.exit_code == 2 and "no case found: expected JSON Lines" in refused.output
    assert refused.exception is None or isinstance(refused.exception, SystemExit)


def test_export_command(tmp_path: Path):
    out = tmp_path / "cases.jsonl"
    args = ["--fixtures", str(FIXTURES), "--gold", str(GOLD)]
    result = CliRunner().invoke(export_command, [*args, "--split", "ci", "--scenario", "ua-*", "--out", str(out)])
    assert result.exit_code == 0, result.output
    ids = [json.loads(line)["case_id"] for line in out.read_text(encoding="utf-8").splitlines()]
    assert ids == sorted(p.stem for p in select_fixtures(FIXTURES, Selection(patterns=("ua-*",),
                                                                             splits=("ci",)))[0])
    assert ids and all(i.startswith("ua-") for i in ids)
    assert f"{len(ids)} cases written to {out}" in result.output
    held = sorted(p.stem for p in FIXTURES.glob("*.jsonl") if read_header(p).holdout)[0]
    refused = CliRunner().invoke(export_command, [*args, "--scenario", held, "--out", str(tmp_path / "h.jsonl")])
    assert refused.exit_code == 2 and not (tmp_path / "h.jsonl").exists()
    assert "1 holdout scenario left out; --include-holdout exports it" in refused.output
    allowed = CliRunner().invoke(export_command, [*args, "--scenario", held, "--include-holdout",
                                                  "--out", str(tmp_path / "h.jsonl")])
    assert allowed.exit_code == 0, allowed.output
    assert f"1 case written to {tmp_path / 'h.jsonl'}" in allowed.output
    # The default corpus is the packaged one.
    default = CliRunner().invoke(export_command, ["--split", "ci", "--out", str(tmp_path / "d.jsonl")])
    assert default.exit_code == 0, default.output
    assert (tmp_path / "d.jsonl").read_bytes() == export_and_read(tmp_path / "e.jsonl")


def export_and_read(path: Path) -> bytes:
    export_guide(FIXTURES, GOLD, path, Selection(splits=("ci",)))
    return path.read_bytes()


# ---- mutated cases: a report or a located refusal, never a crash or an invalid corpus ----

_WEIRD = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                   st.text(max_size=20),
                   st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
                   st.sampled_from(["../x", "", "a/b", "x" * 300, "2026-13-40", "2026-01-01"]))


def _tree_paths(obj: object, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(obj, dict):
        for key, value in obj.items():
            out.extend(_tree_paths(value, (*prefix, key)))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            out.extend(_tree_paths(value, (*prefix, i)))
    return out


@pytest.fixture(scope="module")
def seeds(tmp_path_factory) -> list[dict]:
    """The plain sample cases and the same cases exported with their ``drift`` objects."""
    root = tmp_path_factory.mktemp("seeds")
    source = root / "plain.jsonl"
    source.write_text(SAMPLE, encoding="utf-8")
    import_guide(source, root / "corpus")
    export_guide(root / "corpus" / "fixtures", root / "corpus" / "gold", root / "extended.jsonl")
    extended = [json.loads(line) for line in (root / "extended.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(extended) == 3 and all("drift" in case for case in extended)
    return [CASE_1, CASE_3, CASE_4, *extended]


@settings(derandomize=True, deadline=None, database=None, max_examples=150,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_cases_import_into_a_valid_corpus(seeds, tmp_path_factory, data):
    case = json.loads(json.dumps(seeds[data.draw(st.integers(0, len(seeds) - 1))]))
    for _ in range(data.draw(st.integers(1, 4))):
        path = data.draw(st.sampled_from(_tree_paths(case)[1:]))
        parent = case
        for part in path[:-1]:
            parent = parent[part]
        if data.draw(st.booleans()):
            parent[path[-1]] = data.draw(_WEIRD)
        else:
            del parent[path[-1]]
    root = tmp_path_factory.mktemp("mutated")
    source, out = root / "x.jsonl", root / "out"
    source.write_text(json.dumps(case) + "\n", encoding="utf-8")
    try:
        report = import_guide(source, out)
    except SourceFormatError as exc:  # the one line is no JSON object: refused, naming file and line
        assert f"{source}: (file): no case found" in str(exc) and "line 1" in str(exc)
        return
    for written in out.rglob("*"):
        assert written.resolve().is_relative_to(out.resolve()), written
    if report.scenarios:
        assert validate_corpus(out / "fixtures", out / "gold") == sorted(report.scenarios)


def test_a_checkpoint_extension_of_the_wrong_type_is_ignored(tmp_path: Path, seeds):
    # Found by the test above: a list where a checkpoint id belongs once crashed the import.
    case = json.loads(json.dumps(next(c for c in seeds[3:] if c["case_id"] == "eng-001")))
    assert case["drift"]["checkpoints"] and case["questions"][0]["drift"]["checkpoint_id"] == "eng-001-c1"
    case["questions"][0]["drift"]["checkpoint_id"] = ["eng-001-c1"]
    source = tmp_path / "x.jsonl"
    source.write_text(json.dumps(case) + "\n", encoding="utf-8")
    report = import_guide(source, tmp_path / "out")
    assert [(i.location, i.reason) for i in report.issues["malformed_extras"]] == \
        [("line 1: drift.checkpoints", "questions[0] names none of the checkpoints")]
    assert validate_corpus(tmp_path / "out" / "fixtures", tmp_path / "out" / "gold") == ["eng-001"]

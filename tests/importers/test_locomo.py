"""The LoCoMo importer: a hand-written file in LoCoMo's format with every known defect,
and the real ``locomo10.json`` when the shared datasets folder is present."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

from conformance.contract.corpus import iter_fixture, read_gold, validate_corpus
from conformance.contract.fixture import CheckpointLine, HeaderLine, SessionLine
from conformance.importers.locomo import format_report, import_locomo, parse_session_time
from conformance.importers.report import SourceFormatError


def _datasets_dir() -> Path:
    override = os.environ.get("DRIFT_DATASETS_DIR")
    return Path(override) if override else Path(__file__).resolve().parents[2].parent / "shared" / "datasets"


REAL_FILE = _datasets_dir() / "locomo" / "locomo10.json"


def _turn(dia: str, speaker: str, text: str, **extra) -> dict:
    return {"speaker": speaker, "dia_id": dia, "text": text, **extra}


SAMPLE = [
    {
        "sample_id": "conv-1",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bob",
            # Keys in lexicographic order on purpose: session_10 sorts before session_2.
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                _turn("D1:1", "Ann", "Hi Bob, I adopted a cat yesterday."),
                _turn("D1:2", "Bob", "Look at mine!", img_url=["http://x/y.jpg"], blip_caption="a photo of a cat",
                      query="cat"),
                _turn("D1:3", "Ann", "I moved to Lisbon."),
            ],
            "session_10_date_time": "9:00 am on 12 May, 2023",
            "session_10": [_turn("D10:1", "Ann", "I own no dog."), _turn("D10:2", "Bob", "I run on Sundays.")],
            "session_11_date_time": "1:00 pm on 1 June, 2023",
            "session_2_date_time": "10:00 am on 10 May, 2023",
            "session_2": [_turn("D2:1", "Bob", "How is Lisbon?"), _turn("D2:2", "Ann", "Sunny.")],
        },
        "qa": [
            {"question": "When did Ann adopt a cat?", "answer": "7 May 2023", "evidence": ["D1:1"], "category": 2},
            {"question": "How many places are named?", "answer": 2, "evidence": ["D1:3; D2:1"], "category": 1},
            {"question": "What pet does Bob show?", "answer": "a cat", "evidence": ["D:1:2", "D1:2"], "category": 4},
            {"question": "What would Ann like?", "answer": "sun", "evidence": ["D2:9"], "category": 3},
            {"question": "What is Ann's dog called?", "adversarial_answer": "Rex", "evidence": ["D10:1"],
             "category": 5},
            {"question": "When does Bob run?", "evidence": ["D10:02"], "category": 4},
        ],
        "event_summary": {}, "observation": {}, "session_summary": {},
    },
    {
        "sample_id": "conv-2",
        "conversation": {
            "speaker_a": "Cy", "speaker_b": "Di",
            "session_1_date_time": "3:00 pm on 5 June, 2023",
            "session_1": [_turn("D1:1", "Cy", "Hello Di.")],
            "session_2_date_time": "4:00 pm on 20 June, 2023",
            "session_2": [_turn("D2:1", "Di", "Back from Rome.")],
            "session_3_date_time": "9:00 am on 10 June, 2023",
            "session_3": [_turn("D3:1", "Cy", "Leaving for Rome.")],
            "session_4_date_time": "sometime later",
            "session_4": [_turn("D4:1", "Di", "Packed?"), _turn("D4:1", "Cy", "Yes.")],
            "session_5_date_time": "9:00 am on 21 June, 2023",
            "session_5": [_turn("D5:1", "Cy", "Welcome back.")],
        },
        "qa": [
            {"question": "When did Cy leave?", "answer": "June 2023", "evidence": ["D4:1", "D3:1", "D3:1"], "category": 2},
            {"question": "Did Di go to Paris?", "answer": "No", "adversarial_answer": "Yes", "evidence": ["D2:1"],
             "category": 5},
        ],
    },
]


@pytest.fixture
def imported(tmp_path: Path):
    source = tmp_path / "locomo-small.json"
    source.write_text(json.dumps(SAMPLE, indent=2), encoding="utf-8")
    out = tmp_path / "out"
    return source, out, import_locomo(source, out)


def _lines(out: Path, scenario: str) -> list:
    return list(iter_fixture(out / "fixtures" / f"{scenario}.jsonl"))


def _issues(report, kind: str) -> list[tuple]:
    return [(i.scenario_id, i.location, i.item_id, i.raw, i.reason, i.resolution) for i in report.issues[kind]]


def test_session_date_text_parses_to_utc():
    assert parse_session_time("1:56 pm on 8 May, 2023") == (datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc), None)
    assert parse_session_time("10:00 am on 10 May, 2023")[0] == datetime(2023, 5, 10, 10, 0, tzinfo=timezone.utc)
    # An incomplete date must not be completed from today's date.
    assert parse_session_time("1:56 pm on 8 May")[0] is None
    assert parse_session_time("sometime later")[0] is None
    assert parse_session_time(None) == (None, "missing")


def test_sessions_numeric_then_time_order(imported):
    _, out, _ = imported
    sessions = [line for line in _lines(out, "locomo-conv-1") if isinstance(line, SessionLine)]
    assert [(s.session_id, s.index, s.time) for s in sessions] == [
        ("locomo-conv-1-S1", 0, "2023-05-08T13:56:00Z"),
        ("locomo-conv-1-S2", 1, "2023-05-10T10:00:00Z"),
        ("locomo-conv-1-S10", 2, "2023-05-12T09:00:00Z"),
    ]
    sessions = [line for line in _lines(out, "locomo-conv-2") if isinstance(line, SessionLine)]
    # session_4 has no usable date: 1 minute after session_3 (its numeric predecessor).
    assert [(s.session_id, s.time) for s in sessions] == [
        ("locomo-conv-2-S1", "2023-06-05T15:00:00Z"),
        ("locomo-conv-2-S3", "2023-06-10T09:00:00Z"),
        ("locomo-conv-2-S4", "2023-06-10T09:01:00Z"),
        ("locomo-conv-2-S2", "2023-06-20T16:00:00Z"),
        ("locomo-conv-2-S5", "2023-06-21T09:00:00Z"),
    ]
    # Median (not mean) of the gaps between dated sessions: 114 h, 247 h, 17 h.
    assert _lines(out, "locomo-conv-2")[0].horizons[0].session_gap_hours == 114.0


def test_header_entities_horizon_and_checkpoint(imported):
    _, out, _ = imported
    lines = _lines(out, "locomo-conv-1")
    header, checkpoint = lines[0], lines[-1]
    assert isinstance(header, HeaderLine) and isinstance(checkpoint, CheckpointLine)
    assert (header.paradigm, header.source, header.free_form) == ("multi_peer", "locomo", True)
    assert [(e.entity_id, e.type) for e in header.entities] == [("Ann", "human"), ("Bob", "human"),
                                                                ("observer", "observer")]
    # Median of the gaps 44h04m and 47h.
    assert [(h.name, h.sessions, h.session_gap_hours) for h in header.horizons] == [("short", 3, 45.533)]
    assert (checkpoint.checkpoint_id, checkpoint.after_session, checkpoint.horizon) == \
        ("locomo-conv-1-final", 3, "short")
    assert [p.probe_id for p in checkpoint.probes] == [f"locomo-conv-1-q{i:04d}" for i in range(6)]
    assert {(p.asked_by, p.asked_at, p.options) for p in checkpoint.probes} == \
        {("observer", "2023-05-13T09:00:00Z", None)}
    assert checkpoint.probes[0].query == "When did Ann adopt a cat?"


def test_messages_ids_authors_times_and_images(imported):
    _, out, _ = imported
    first = _lines(out, "locomo-conv-1")[1]
    assert [(m.message_id, m.author, m.role, m.timestamp, m.scope) for m in first.messages] == [
        ("locomo-conv-1-D1:1", "Ann", "user", "2023-05-08T13:56:00Z", "shared"),
        ("locomo-conv-1-D1:2", "Bob", "user", "2023-05-08T13:56:30Z", "shared"),
        ("locomo-conv-1-D1:3", "Ann", "user", "2023-05-08T13:57:00Z", "shared"),
    ]
    assert first.messages[1].text == "Look at mine! [shares an image: a photo of a cat]"
    assert first.messages[0].text == "Hi Bob, I adopted a cat yesterday."
    assert first.participants == ["Ann", "Bob"]
    dup = [line for line in _lines(out, "locomo-conv-2") if isinstance(line, SessionLine)][2]
    assert [m.message_id for m in dup.messages] == ["locomo-conv-2-D4:1", "locomo-conv-2-D4:1-dup"]


def test_gold_types_answers_abstention_and_evidence(imported):
    _, out, _ = imported
    gold = read_gold(out / "gold" / "locomo-conv-1.json")
    assert gold.source == "locomo"
    m = "locomo-conv-1-"
    assert [(p.probe_type, p.abstention, p.answer, p.accepted, p.evidence) for p in gold.probes] == [
        ("temporal", False, "7 May 2023", [], [m + "D1:1"]),
        ("multi_hop", False, "2", [], [m + "D1:3", m + "D2:1"]),
        ("single_hop", False, "a cat", [], [m + "D1:2"]),
        ("open_domain", False, "sun", [], []),
        ("adversarial", True, "unknown", [], [m + "D10:1"]),
        ("single_hop", False, "", [], [m + "D10:2"]),
    ]
    gold2 = read_gold(out / "gold" / "locomo-conv-2.json")
    # The duplicated dia_id D4:1 means its first turn; a repeated id counts once;
    # the bait "Yes" is never accepted.
    assert [(p.probe_type, p.abstention, p.answer, p.accepted, p.evidence) for p in gold2.probes] == [
        ("temporal", False, "June 2023", [], ["locomo-conv-2-D4:1", "locomo-conv-2-D3:1"]),
        ("adversarial", True, "unknown", ["No"], ["locomo-conv-2-D2:1"]),
    ]


def test_report_lists_every_defect(imported):
    source, out, report = imported
    a, b = "locomo-conv-1", "locomo-conv-2"
    assert _issues(report, "malformed_evidence") == [
        (a, "qa[1].evidence[0]", f"{a}-q0001", "D1:3; D2:1", "several ids in one entry", "split into D1:3, D2:1"),
        (a, "qa[2].evidence[0]", f"{a}-q0002", "D:1:2", "not of the form D<session>:<turn>", "dropped"),
        (a, "qa[5].evidence[0]", f"{a}-q0005", "D10:02", "zero-padded number", "normalised to D10:2"),
    ]
    assert _issues(report, "dangling_evidence") == [
        (a, "qa[3].evidence[0]", f"{a}-q0003", "D2:9", "names no turn of this conversation", "dropped"),
    ]
    assert _issues(report, "surplus_date_keys") == [
        (a, "conversation.session_11_date_time", None, "1:00 pm on 1 June, 2023",
         "date for session_11, which does not exist", "ignored"),
    ]
    assert _issues(report, "integer_answers") == [
        (a, "qa[1].answer", f"{a}-q0001", "2", "answer is a number (int), not text", "kept as text '2'"),
    ]
    assert [(i.scenario_id, i.location, i.item_id) for i in report.issues["missing_answers"]] == \
        [(a, "qa[5].answer", f"{a}-q0005")]
    assert _issues(report, "unparseable_dates") == [
        (b, "conversation.session_4_date_time", f"{b}-S4", "sometime later",
         "session date unparseable (ParserError)",
         "set to 2023-06-10T09:01:00Z, 1 minute after session_3"),
    ]
    assert [(i.scenario_id, i.item_id, i.raw) for i in report.issues["duplicate_message_ids"]] == \
        [(b, f"{b}-D4:1-dup", "D4:1")]
    assert [(i.scenario_id, i.raw, i.resolution) for i in report.issues["order_changes"]] == [
        (b, "session_1 session_2 session_3 session_4 session_5",
         "indexed in time order: session_1 session_3 session_4 session_2 session_5"),
    ]
    assert report.issues["malformed_records"] == []
    assert report.source_sha256 == __import__("hashlib").sha256(source.read_bytes()).hexdigest()
    assert report.scenarios == [a, b]
    assert {k: report.counts[k] for k in ("scenarios", "sessions", "messages", "probes", "image_turns",
                                          "adversarial_answers_withheld", "abstention_probes")} == \
        {"scenarios": 2, "sessions": 8, "messages": 13, "probes": 8, "image_turns": 1,
         "adversarial_answers_withheld": 2, "abstention_probes": 2}
    assert report.probes_by_type == {"temporal": 2, "multi_hop": 1, "single_hop": 2, "open_domain": 1,
                                     "adversarial": 2}
    written = json.loads((out / "import-report.json").read_text(encoding="utf-8"))
    assert written == report.model_dump(mode="json")
    assert list(written) == sorted(written)


def test_corpus_validates_and_holds_no_bait(imported):
    _, out, _ = imported
    assert validate_corpus(out / "fixtures", out / "gold") == ["locomo-conv-1", "locomo-conv-2"]
    fixture_text = (out / "fixtures" / "locomo-conv-1.jsonl").read_text(encoding="utf-8")
    assert "Rex" not in fixture_text and "7 May 2023" not in fixture_text
    assert "Rex" not in (out / "gold" / "locomo-conv-1.json").read_text(encoding="utf-8")


def test_output_is_byte_identical_across_runs(imported, tmp_path: Path):
    source, out, _ = imported
    again = tmp_path / "again"
    import_locomo(source, again)
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert len(files) == 5
    for rel in files:
        assert (out / rel).read_bytes() == (again / rel).read_bytes(), rel


def test_a_leading_utf8_bom_is_skipped_and_hashed(imported, tmp_path: Path):
    """Windows tools write a byte order mark: the import is the same as without it (as BEAM,
    LongMemEval and guide accept one); the source hash and size are over the raw bytes."""
    import hashlib

    source, out, _ = imported
    with_bom = tmp_path / "locomo-bom.json"
    raw = b"\xef\xbb\xbf" + source.read_bytes()
    with_bom.write_bytes(raw)
    again = tmp_path / "bom-out"
    report = import_locomo(with_bom, again)
    assert report.source_sha256 == hashlib.sha256(raw).hexdigest() and report.source_bytes == len(raw)
    scenario_files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file() and p.parent != out)
    assert len(scenario_files) == 4
    for rel in scenario_files:
        assert (out / rel).read_bytes() == (again / rel).read_bytes(), rel


def test_format_report_summarises(imported):
    _, _, report = imported
    text = format_report(report)
    assert "2 scenarios, 8 sessions, 13 messages, 8 probes" in text
    assert "dangling_evidence: 1" in text and "'D2:9'" in text
    assert "surplus_date_keys: 1" in text


def test_broken_records_are_reported_not_raised(tmp_path: Path):
    source = tmp_path / "broken.json"
    source.write_text(json.dumps([
        {"sample_id": "x", "qa": []},
        {"sample_id": "y", "conversation": {"speaker_a": "P", "speaker_b": "Q",
                                            "session_1": [{"speaker": "P"}, _turn("D1:1", "R", "hi")]},
         "qa": [{"question": "", "category": 1}, {"question": "Who?", "answer": "P", "category": 9,
                                                   "evidence": [7]}]},
    ]), encoding="utf-8")
    report = import_locomo(source, tmp_path / "out")
    assert report.scenarios == ["locomo-y"]
    reasons = [(i.location, i.reason) for i in report.issues["malformed_records"]]
    assert reasons == [
        ("[0]", "skipped: record has no conversation object"),
        ("conversation.session_1[0]", "turn lacks a text or speaker string"),
        ("conversation.session_1[1].speaker", "speaker is neither speaker_a nor speaker_b"),
        ("qa[0]", "QA item without a question"),
        ("qa[1].category", "unknown category"),
    ]
    assert [(i.location, i.reason) for i in report.issues["unparseable_dates"]] == \
        [("conversation.session_1_date_time", "session date missing")]
    assert [i.raw for i in report.issues["malformed_evidence"]] == ["7"]
    assert validate_corpus(tmp_path / "out" / "fixtures", tmp_path / "out" / "gold") == ["locomo-y"]
    (tmp_path / "bad.json").write_text('{"not": "a list"}', encoding="utf-8")
    with pytest.raises(SourceFormatError, match="expected a JSON list"):
        import_locomo(tmp_path / "bad.json", tmp_path / "out2")


@pytest.mark.skipif(not REAL_FILE.is_file(), reason=f"LoCoMo data file not found at {REAL_FILE} "
                    "(set DRIFT_DATASETS_DIR to the folder holding locomo/locomo10.json)")
def test_real_locomo10(tmp_path: Path):
    report = import_locomo(REAL_FILE, tmp_path)
    assert {k: report.counts[k] for k in ("scenarios", "sessions", "messages", "probes")} == \
        {"scenarios": 10, "sessions": 272, "messages": 5882, "probes": 1986}
    assert report.probes_by_type == {"multi_hop": 282, "temporal": 321, "open_domain": 96, "single_hop": 841,
                                     "adversarial": 446}
    assert report.issues["malformed_evidence"] or report.issues["dangling_evidence"]
    assert report.issues["surplus_date_keys"]
    assert len(validate_corpus(tmp_path / "fixtures", tmp_path / "gold")) == 10

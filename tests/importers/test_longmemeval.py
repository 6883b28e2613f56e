"""The LongMemEval importer: small hand-written files in the ``_s`` and ``_oracle`` shapes with
every known defect, the streaming and size bounds, the CLI command, a retrieval run through
the keyword adapter, fuzzing, and the real files when the shared datasets folder has them."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given

from conformance.contract.corpus import iter_fixture, read_gold, validate_corpus
from conformance.contract.fixture import CheckpointLine, HeaderLine, SessionLine
from conformance.importers import longmemeval as lme
from conformance.cli.import_ import importer_command
from conformance.importers.longmemeval import format_report, import_longmemeval, parse_lme_date
from conformance.importers.report import SourceFormatError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
from fuzzkit import BAD_IDS, assert_parses_or_located, dump_json, fuzz, mutated_bytes, mutated_tree  # noqa: E402

cli_command = importer_command("longmemeval")


def _datasets_dir() -> Path:
    override = os.environ.get("DRIFT_DATASETS_DIR")
    return Path(override) if override else Path(__file__).resolve().parents[2].parent / "shared" / "datasets"


REAL_DIR = _datasets_dir() / "longmemeval"


def _turn(role: str, content: str, **extra) -> dict:
    return {"role": role, "content": content, **extra}


def _instance(qid: str, qtype: str, question: str, answer, date: str, ids: list, dates: list, sessions: list,
              answers: list) -> dict:
    # Key order as in the released files.
    return {"question_id": qid, "question_type": qtype, "question": question, "answer": answer,
            "question_date": date, "haystack_session_ids": ids, "haystack_dates": dates,
            "haystack_sessions": sessions, "answer_session_ids": answers}


S_SAMPLE = [
    # [0] one answer session between two distractors; has_answer on a user turn.
    _instance("e47becba", "single-session-user", "What is the name of my cat?", "Luna", "2023/05/30 (Tue) 23:40",
              ["sharegpt_aa1", "answer_e47becba_1", "ultrachat_bb2"],
              ["2023/05/20 (Sat) 02:21", "2023/05/22 (Mon) 10:00", "2023/05/25 (Thu) 18:30"],
              [[_turn("user", "Can you suggest a pasta recipe?"),
                _turn("assistant", "Try carbonara with eggs and pecorino.")],
               [_turn("user", "I adopted a cat and named her Luna.", has_answer=True),
                _turn("assistant", "Congratulations!", has_answer=False),
                _turn("user", "She likes tuna.", has_answer=False)],
               [_turn("user", "How tall is Mount Everest?"), _turn("assistant", "About 8,849 metres.")]],
              ["answer_e47becba_1"]),
    # [1] sessions out of time order, one unparseable session date, an answer id naming
    # nothing, an unparseable question date, an answer found in no evidence turn.
    _instance("gpt4_2655b836", "temporal-reasoning", "How many days before the concert did I buy the guitar?",
              "10 days", "next Tuesday",
              ["answer_2655_2", "sharegpt_cc3", "answer_2655_1"],
              ["2023/04/20 (Thu) 09:00", "sometime in spring", "2023/04/10 (Mon) 17:50"],
              [[_turn("user", "The concert was amazing last night.", has_answer=True),
                _turn("assistant", "Glad you enjoyed it.")],
               [_turn("user", "Translate hello into French."), _turn("assistant", "Bonjour.")],
               [_turn("user", "I bought a guitar today.", has_answer=True), _turn("assistant", "Have fun playing!")]],
              ["answer_2655_1", "answer_2655_2", "answer_2655_9"]),
    # [2] abstention: the explanation is no answer, the answer session no evidence.
    _instance("0a995998_abs", "single-session-user", "What colour is my guitar?",
              "You did not mention the colour of your guitar.", "2023/06/01 (Thu) 08:00",
              ["answer_0a99_1"], ["2023/05/31 (Wed) 20:15"],
              [[_turn("user", "I play the violin on weekends.", has_answer=True), _turn("assistant", "Lovely.")]],
              ["answer_0a99_1"]),
    # [3] an integer answer; answer sessions without has_answer turns (session-level evidence).
    _instance("5d3d2817", "multi-session", "How many plants did I buy?", 3, "2023/07/10 (Mon) 12:00",
              ["answer_5d3d_1", "answer_5d3d_2"], ["2023/07/01 (Sat) 10:00", "2023/07/05 (Wed) 11:30"],
              [[_turn("user", "I bought two plants: a fern and a cactus."), _turn("assistant", "Nice choices."),
                _turn("user", "Where should I put the fern?")],
               [_turn("user", "I bought one more plant, a basil."), _turn("assistant", "Basil likes sun.")]],
              ["answer_5d3d_1", "answer_5d3d_2"]),
    # [4] list lengths disagree (4 dates, 2 ids, 3 sessions), an ISO date, a wrong weekday,
    # has_answer in a session no answer id names.
    _instance("c4a1ceb8", "knowledge-update", "Where do I live now?", "Lisbon", "2023/08/15 (Tue) 09:00",
              ["answer_c4a1_1", "answer_c4a1_2"],
              ["2023/08/01 (Mon) 10:00", "2023-08-05T14:00:00Z", "2023/08/10 (Thu) 16:45", "2023/08/12 (Sat) 10:00"],
              [[_turn("user", "I live in Porto.", has_answer=True), _turn("assistant", "Porto is lovely.")],
               [_turn("user", "I just moved to Lisbon.", has_answer=True), _turn("assistant", "Welcome to Lisbon.")],
               [_turn("user", "Lisbon trams are great.", has_answer=True), _turn("assistant", "They are.")]],
              ["answer_c4a1_1", "answer_c4a1_2"]),
    # [5] an unknown question type.
    _instance("f00dfeed", "made-up-type", "Which city did I visit?", "Rome", "2023/09/02 (Sat) 10:00",
              ["answer_f00d_1"], ["2023/09/01 (Fri) 10:00"],
              [[_turn("user", "I visited Rome last week.", has_answer=True)]], ["answer_f00d_1"]),
    # [6] not an instance at all.
    "not an instance",
    # [7] no question.
    {"question_id": "deadbeef", "question_type": "multi-session", "answer": "x",
     "question_date": "2023/09/02 (Sat) 10:00",
     "haystack_session_ids": ["s"], "haystack_dates": ["2023/09/01 (Fri) 10:00"],
     "haystack_sessions": [[_turn("user", "hi")]], "answer_session_ids": ["s"]},
    # [8] the evidence is an assistant turn; a filler session twice under one id (as in 13
    # histories of longmemeval_s_cleaned).
    _instance("a1b2c3d4", "single-session-assistant", "Which wine did you recommend?", "Barolo",
              "2023/10/02 (Mon) 09:00", ["answer_a1b2_1", "sharegpt_dd4", "sharegpt_dd4"],
              ["2023/10/01 (Sun) 20:00", "2023/10/01 (Sun) 21:00", "2023/10/01 (Sun) 22:00"],
              [[_turn("user", "Which wine goes with risotto?", has_answer=False),
                _turn("assistant", "A Barolo goes well with risotto.", has_answer=True)],
               [_turn("user", "List three prime numbers."), _turn("assistant", "2, 3 and 5.")],
               [_turn("user", "List three prime numbers."), _turn("assistant", "2, 3 and 5.")]],
              ["answer_a1b2_1"]),
    # [9] the question_id of [5] again.
    _instance("f00dfeed", "single-session-user", "Which city did I visit?", "Rome", "2023/09/02 (Sat) 10:00",
              ["answer_f00d_1"], ["2023/09/01 (Fri) 10:00"],
              [[_turn("user", "I visited Rome last week.", has_answer=True)]], ["answer_f00d_1"]),
]

ORACLE_SAMPLE = [
    # Only evidence sessions, not in time order (as the oracle file ships them).
    _instance("e47becba", "single-session-user", "What is the name of my cat?", "Luna", "2023/05/30 (Tue) 23:40",
              ["answer_e47becba_1"], ["2023/05/22 (Mon) 10:00"],
              [[_turn("user", "I adopted a cat and named her Luna.", has_answer=True),
                _turn("assistant", "Congratulations!", has_answer=False)]], ["answer_e47becba_1"]),
    # The question date precedes the last session: kept, listed.
    _instance("6ade9755", "knowledge-update", "How many bikes do I own now?", "4", "2023/05/01 (Mon) 10:00",
              ["answer_6ade_2", "answer_6ade_1"], ["2023/05/10 (Wed) 10:00", "2023/04/02 (Sun) 10:00"],
              [[_turn("user", "I bought a fourth bike, so now I own 4 bikes.", has_answer=True)],
               [_turn("user", "I own 3 bikes.", has_answer=True)]], ["answer_6ade_1", "answer_6ade_2"]),
]

ROME = {**S_SAMPLE[5], "question_type": "single-session-user"}
"""A clean one-session instance (``lme-f00dfeed``)."""

S_IDS = ["lme-e47becba", "lme-gpt4_2655b836", "lme-0a995998_abs", "lme-5d3d2817", "lme-c4a1ceb8", "lme-f00dfeed",
         "lme-a1b2c3d4", "lme-f00dfeed-2"]


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


@pytest.fixture
def imported(tmp_path: Path):
    source = _write(tmp_path / "longmemeval_s_small.json", S_SAMPLE)
    out = tmp_path / "out"
    return source, out, import_longmemeval(source, out)


@pytest.fixture
def oracle(tmp_path: Path):
    source = _write(tmp_path / "longmemeval_oracle_small.json", ORACLE_SAMPLE)
    out = tmp_path / "oracle"
    return source, out, import_longmemeval(source, out)


def _lines(out: Path, scenario: str) -> list:
    return list(iter_fixture(out / "fixtures" / f"{scenario}.jsonl"))


def _sessions(out: Path, scenario: str) -> list[SessionLine]:
    return [line for line in _lines(out, scenario) if isinstance(line, SessionLine)]


def _issues(report, kind: str) -> list[tuple]:
    return [(i.scenario_id, i.location, i.item_id, i.raw, i.reason, i.resolution) for i in report.issues[kind]]


# --------------------------------------------------------------------------- dates

def test_dates_parse_exactly_and_strictly():
    utc = timezone.utc
    assert parse_lme_date("2023/05/30 (Tue) 23:40") == (datetime(2023, 5, 30, 23, 40, tzinfo=utc), None)
    assert parse_lme_date("2023/5/3 (Wed) 7:05") == (datetime(2023, 5, 3, 7, 5, tzinfo=utc), None)
    assert parse_lme_date("2023/05/30") == (datetime(2023, 5, 30, tzinfo=utc), None)
    # A wrong weekday is reported; the date wins.
    assert parse_lme_date("2023/05/30 (Mon) 23:40") == \
        (datetime(2023, 5, 30, 23, 40, tzinfo=utc), "weekday (Mon) disagrees with the date (a Tue)")
    # Other complete forms go through the strict parser.
    assert parse_lme_date("2023-05-30T23:40:00+02:00") == (datetime(2023, 5, 30, 21, 40, tzinfo=utc), None)
    # Never completed from today's date; no impossible calendar dates.
    assert parse_lme_date("30 May") == (None, "incomplete (day, month or year missing)")
    assert parse_lme_date("Tuesday")[0] is None
    assert parse_lme_date("2023/02/30 (Thu) 10:00")[0] is None
    assert parse_lme_date("0999/01/01")[0] is None
    assert parse_lme_date("next Tuesday") == (None, "unparseable (ParserError)")
    assert parse_lme_date(None) == (None, "missing")
    assert parse_lme_date(20230530)[0] is None


# --------------------------------------------------------------------------- the _s shape

def test_sessions_in_time_order_with_positional_ids(imported):
    _, out, _ = imported
    assert [(s.session_id, s.index, s.time) for s in _sessions(out, "lme-e47becba")] == [
        ("lme-e47becba-S1", 0, "2023-05-20T02:21:00Z"),
        ("lme-e47becba-S2", 1, "2023-05-22T10:00:00Z"),
        ("lme-e47becba-S3", 2, "2023-05-25T18:30:00Z"),
    ]
    # S2 has no usable date: 1 minute after S1 (its predecessor in dataset order).
    assert [(s.session_id, s.index, s.time) for s in _sessions(out, "lme-gpt4_2655b836")] == [
        ("lme-gpt4_2655b836-S3", 0, "2023-04-10T17:50:00Z"),
        ("lme-gpt4_2655b836-S1", 1, "2023-04-20T09:00:00Z"),
        ("lme-gpt4_2655b836-S2", 2, "2023-04-20T09:01:00Z"),
    ]
    # An ISO date among the others; the third session has a date but no id.
    assert [s.time for s in _sessions(out, "lme-c4a1ceb8")] == \
        ["2023-08-01T10:00:00Z", "2023-08-05T14:00:00Z", "2023-08-10T16:45:00Z"]


def test_header_entities_horizon_and_checkpoint(imported):
    _, out, _ = imported
    lines = _lines(out, "lme-e47becba")
    header, checkpoint = lines[0], lines[-1]
    assert isinstance(header, HeaderLine) and isinstance(checkpoint, CheckpointLine)
    assert (header.paradigm, header.source, header.free_form, header.markers, header.splits) == \
        ("user_assistant", "longmemeval", True, {}, [])
    assert [(e.entity_id, e.type) for e in header.entities] == [("user", "human"), ("assistant", "assistant_agent")]
    # Median of the gaps 55h39m and 80h30m.
    assert [(h.name, h.sessions, h.session_gap_hours) for h in header.horizons] == [("short", 3, 68.075)]
    assert (checkpoint.checkpoint_id, checkpoint.after_session, checkpoint.horizon) == \
        ("lme-e47becba-final", 3, "short")
    assert [(p.probe_id, p.asked_by, p.query, p.asked_at, p.options, p.choices) for p in checkpoint.probes] == \
        [("lme-e47becba-q1", "user", "What is the name of my cat?", "2023-05-30T23:40:00Z", None, None)]
    # An unparseable question date: one day after the last session starts.
    assert _lines(out, "lme-gpt4_2655b836")[-1].probes[0].asked_at == "2023-04-21T09:01:00Z"
    # One session: no gap to measure, the default.
    assert _lines(out, "lme-0a995998_abs")[0].horizons[0].session_gap_hours == 24.0


def test_messages_roles_authors_and_times(imported):
    _, out, _ = imported
    answer = _sessions(out, "lme-e47becba")[1]
    assert [(m.message_id, m.author, m.role, m.text, m.timestamp, m.scope) for m in answer.messages] == [
        ("lme-e47becba-S2:1", "user", "user", "I adopted a cat and named her Luna.", "2023-05-22T10:00:00Z", "shared"),
        ("lme-e47becba-S2:2", "assistant", "assistant", "Congratulations!", "2023-05-22T10:00:30Z", "shared"),
        ("lme-e47becba-S2:3", "user", "user", "She likes tuna.", "2023-05-22T10:01:00Z", "shared"),
    ]
    assert answer.participants == ["user", "assistant"]
    assert _sessions(out, "lme-f00dfeed")[0].participants == ["user"]


def test_gold_types_answers_abstention_and_evidence(imported):
    _, out, _ = imported
    got = {}
    for sid in S_IDS:
        gold = read_gold(out / "gold" / f"{sid}.json")
        assert (gold.scenario_id, gold.source, gold.session_tiers) == (sid, "longmemeval", {})
        (probe,) = gold.probes
        assert (probe.probe_id, probe.checkpoint_id) == (f"{sid}-q1", f"{sid}-final")
        got[sid] = (probe.probe_type, probe.abstention, probe.answer, probe.accepted, probe.evidence)
    assert got == {
        "lme-e47becba": ("single_session_user", False, "Luna", [], ["lme-e47becba-S2:1"]),
        # Time order of the answer sessions (S3 before S1); the dangling id is dropped.
        "lme-gpt4_2655b836": ("temporal_reasoning", False, "10 days", [],
                              ["lme-gpt4_2655b836-S3:1", "lme-gpt4_2655b836-S1:1"]),
        "lme-0a995998_abs": ("single_session_user", True, "unknown", [], []),
        # No has_answer turn: every user turn of both answer sessions.
        "lme-5d3d2817": ("multi_session", False, "3", [],
                         ["lme-5d3d2817-S1:1", "lme-5d3d2817-S1:3", "lme-5d3d2817-S2:1"]),
        # The has_answer turn of S3 (no answer session) is not evidence.
        "lme-c4a1ceb8": ("knowledge_update", False, "Lisbon", [], ["lme-c4a1ceb8-S1:1", "lme-c4a1ceb8-S2:1"]),
        "lme-f00dfeed": ("uncategorised", False, "Rome", [], ["lme-f00dfeed-S1:1"]),
        "lme-a1b2c3d4": ("single_session_assistant", False, "Barolo", [], ["lme-a1b2c3d4-S1:2"]),
        "lme-f00dfeed-2": ("single_session_user", False, "Rome", [], ["lme-f00dfeed-2-S1:1"]),
    }


def test_report_lists_every_defect(imported):
    source, out, report = imported
    t, k, m, c = "lme-gpt4_2655b836", "lme-c4a1ceb8", "lme-5d3d2817", "lme-f00dfeed"
    assert _issues(report, "order_changes") == [
        (t, "[1].haystack_dates", None, "S1 S2 S3", "dataset order differs from time order",
         "indexed in time order: S3 S1 S2"),
    ]
    assert _issues(report, "unparseable_dates") == [
        (t, "[1].haystack_dates[1]", f"{t}-S2", "sometime in spring", "session date unparseable (ParserError)",
         "set to 2023-04-20T09:01:00Z, 1 minute after S1"),
        (t, "[1].question_date", f"{t}-q1", "next Tuesday", "question date unparseable (ParserError)",
         "asked at 2023-04-21T09:01:00Z, 1 day after the last session starts"),
    ]
    assert _issues(report, "dangling_evidence") == [
        (t, "[1].answer_session_ids[2]", f"{t}-q1", "answer_2655_9", "names no session of haystack_session_ids",
         "dropped"),
    ]
    assert _issues(report, "integer_answers") == [
        (m, "[3].answer", f"{m}-q1", "3", "answer is a number (int), not text", "kept as text '3'"),
    ]
    assert _issues(report, "session_level_evidence") == [
        (m, "[3].haystack_sessions[0]", f"{m}-S1", "answer_5d3d_1", "answer session without has_answer turns",
         "all its user turns (2) are evidence"),
        (m, "[3].haystack_sessions[1]", f"{m}-S2", "answer_5d3d_2", "answer session without has_answer turns",
         "all its user turns (1) are evidence"),
    ]
    assert _issues(report, "weekday_mismatches") == [
        (k, "[4].haystack_dates[0]", f"{k}-S1", "2023/08/01 (Mon) 10:00", "weekday (Mon) disagrees with the date "
         "(a Tue)", "date kept: 2023-08-01T10:00:00Z"),
    ]
    assert _issues(report, "date_keys_without_sessions") == [
        (k, "[4].haystack_dates[3]", None, "2023/08/12 (Sat) 10:00", "date for a session that does not exist",
         "ignored"),
    ]
    assert _issues(report, "unused_has_answer") == [
        (k, "[4].haystack_sessions[2]", f"{k}-S3", None,
         "has_answer turns (1) in a session not named by answer_session_ids", "not evidence"),
    ]
    assert _issues(report, "duplicate_session_ids") == [
        ("lme-a1b2c3d4", "[8].haystack_session_ids[2]", "lme-a1b2c3d4-S3", "sharegpt_dd4",
         "same session id as haystack_session_ids[1]",
         "imported as its own session; an answer_session_ids entry naming it means lme-a1b2c3d4-S2"),
    ]
    assert _issues(report, "malformed_records") == [
        (k, "[4].haystack_sessions[2]", f"{k}-S3", None, "session has no haystack_session_ids entry",
         "imported; cannot be named as an answer session"),
        (c, "[5].question_type", f"{c}-q1", "made-up-type", "unknown question_type", "probe_type 'uncategorised'"),
        ("lme-record-6", "[6]", None, None, "instance is a string, not an object", "instance skipped"),
        ("lme-deadbeef", "[7].question", "lme-deadbeef-q1", None, "no question text", "instance skipped"),
        (f"{c}-2", "[9].question_id", None, "f00dfeed", "duplicate question_id (after sanitising)",
         f"scenario id {c}-2"),
    ]
    # From the shared gold-quality checks: computed or counted answers.
    assert _issues(report, "answer_not_in_evidence") == [
        (t, "[1].answer", f"{t}-q1", "10 days", "the answer's numbers or content words occur in none of its 2 evidence messages",
         "kept (may be paraphrased or computed); listed for review"),
        (m, "[3].answer", f"{m}-q1", "3", "the answer's numbers or content words occur in none of its 3 evidence messages",
         "kept (may be paraphrased or computed); listed for review"),
    ]
    for kind in ("early_question_dates", "missing_answers", "garbled_answers"):
        assert report.issues[kind] == [], kind
    assert sorted(report.issues) == sorted(lme.ISSUE_KINDS)
    assert report.source_sha256 == hashlib.sha256(source.read_bytes()).hexdigest()
    assert report.source_bytes == source.stat().st_size
    written = json.loads((out / "import-report.json").read_text(encoding="utf-8"))
    assert written == report.model_dump(mode="json")


def test_counts_types_and_notes(imported):
    source, _, report = imported
    assert report.source == "longmemeval" and report.scenarios == S_IDS
    assert report.counts == {
        "scenarios": 8, "sessions": 17, "messages": 34, "probes": 8, "abstention_probes": 1, "evidence_ids": 11,
        "answer_sessions": 11, "answer_sessions_turn_level": 8, "answer_sessions_session_level": 2,
        "abstention_explanations_withheld": 1, "abstention_evidence_withheld": 1, "skipped_instances": 2,
    }
    assert report.probes_by_type == {"single_session_user": 3, "temporal_reasoning": 1, "multi_session": 1,
                                     "knowledge_update": 1, "uncategorised": 1, "single_session_assistant": 1}
    assert report.notes[0] == f"source file {source.name}; variant S (~50 sessions per instance) (from the file name)"
    assert any(n.startswith("evidence policy:") for n in report.notes)
    text = format_report(report)
    assert "8 scenarios, 17 sessions, 34 messages, 8 probes" in text
    assert "dangling_evidence: 1" in text and "'answer_2655_9'" in text


def test_oracle_shape(oracle):
    source, out, report = oracle
    assert report.scenarios == ["lme-e47becba", "lme-6ade9755"]
    assert [(s.session_id, s.time) for s in _sessions(out, "lme-6ade9755")] == \
        [("lme-6ade9755-S2", "2023-04-02T10:00:00Z"), ("lme-6ade9755-S1", "2023-05-10T10:00:00Z")]
    assert [(i.scenario_id, i.resolution) for i in report.issues["order_changes"]] == \
        [("lme-6ade9755", "indexed in time order: S2 S1")]
    # Kept as given: the dataset's clock decides temporal answers.
    assert _lines(out, "lme-6ade9755")[-1].probes[0].asked_at == "2023-05-01T10:00:00Z"
    assert _issues(report, "early_question_dates") == [
        ("lme-6ade9755", "[1].question_date", "lme-6ade9755-q1", "2023/05/01 (Mon) 10:00",
         "question date precedes the last session (2023-05-10T10:00:00Z)",
         "kept as given (temporal answers are computed from it)"),
    ]
    assert read_gold(out / "gold" / "lme-6ade9755.json").probes[0].evidence == \
        ["lme-6ade9755-S2:1", "lme-6ade9755-S1:1"]
    assert report.notes[0].endswith("variant oracle (evidence sessions only) (from the file name)")
    assert validate_corpus(out / "fixtures", out / "gold") == ["lme-6ade9755", "lme-e47becba"]


def test_corpus_validates_and_fixtures_hold_no_gold(imported):
    _, out, _ = imported
    assert validate_corpus(out / "fixtures", out / "gold") == sorted(S_IDS)
    fixtures = "".join(p.read_text(encoding="utf-8") for p in sorted((out / "fixtures").glob("*.jsonl")))
    # Dataset session ids would tell which sessions hold the answer.
    assert "answer_" not in fixtures and "sharegpt" not in fixtures and "has_answer" not in fixtures
    assert "You did not mention" not in fixtures
    everything = fixtures + "".join(p.read_text(encoding="utf-8") for p in (out / "gold").glob("*.json"))
    assert "You did not mention" not in everything


def test_output_is_byte_identical_across_runs(imported, tmp_path: Path):
    source, out, _ = imported
    again = tmp_path / "again"
    import_longmemeval(source, again)
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert len(files) == 2 * len(S_IDS) + 1
    for rel in files:
        assert (out / rel).read_bytes() == (again / rel).read_bytes(), rel


# --------------------------------------------------------------------------- whole-file errors

def test_not_an_array_raises_located(tmp_path: Path):
    for text, expected in (('{"question_id": "x"}', "got an object"), ('"text"', "got a string"),
                           ("", "empty file"), ("   \n", "not valid JSON")):
        source = tmp_path / "bad.json"
        source.write_text(text, encoding="utf-8")
        with pytest.raises(SourceFormatError, match=expected) as info:
            import_longmemeval(source, tmp_path / "out")
        assert str(info.value).startswith(f"{source}: ")
        assert not (tmp_path / "out" / "import-report.json").exists()


def test_invalid_json_mid_stream_keeps_what_was_written(tmp_path: Path):
    good = json.dumps(S_SAMPLE[:2])
    source = tmp_path / "cut.json"
    source.write_text(good[:-1] + ', {"question_id": "zz", "question": ', encoding="utf-8")
    with pytest.raises(SourceFormatError) as info:
        import_longmemeval(source, tmp_path / "out")
    message = str(info.value)
    assert message.startswith(f"{source}: bytes ")
    assert "(instance [2]; the 2 scenarios before it were written" in message
    assert "not valid JSON (parse error: premature EOF)" in message
    assert sorted(p.name for p in (tmp_path / "out" / "fixtures").iterdir()) == \
        ["lme-e47becba.jsonl", "lme-gpt4_2655b836.jsonl"]
    assert not (tmp_path / "out" / "import-report.json").exists()
    # Text after the array is an error too, once every instance is written.
    source.write_text(good + " []", encoding="utf-8")
    with pytest.raises(SourceFormatError, match=r"\(after the array; its 2 scenarios were written, but no import-"
                                                 r"report.json\): not valid JSON \(parse error: trailing garbage"):
        import_longmemeval(source, tmp_path / "out2")
    assert len(list((tmp_path / "out2" / "fixtures").iterdir())) == 2


def test_a_byte_order_mark_is_accepted(tmp_path: Path):
    source = tmp_path / "bom.json"
    source.write_bytes(b"\xef\xbb\xbf" + json.dumps(S_SAMPLE[:1]).encode())
    report = import_longmemeval(source, tmp_path / "out")
    assert report.scenarios == ["lme-e47becba"]
    assert report.source_sha256 == hashlib.sha256(source.read_bytes()).hexdigest()


# --------------------------------------------------------------------------- per-item bounds

def test_oversized_and_deep_items_are_reported_not_fatal(tmp_path: Path):
    base = ROME
    long_turn = {**base, "question_id": "long-turn",
                 "haystack_sessions": [[_turn("user", "Rome " * 20_001, has_answer=True)]]}
    long_question = {**base, "question_id": "long-question", "question": "q" * 10_001}
    deep = {**base, "question_id": "deep", "extra": json.loads("[" * 70 + "]" * 70)}
    source = _write(tmp_path / "big.json", [long_turn, long_question, deep, base])
    report = import_longmemeval(source, tmp_path / "out")
    assert report.scenarios == ["lme-long-turn", "lme-f00dfeed"]
    assert [(i.location, i.reason, i.resolution) for i in report.issues["malformed_records"]] == [
        ("[0].haystack_sessions[0][0].content", "content of 100,005 characters exceeds the fixture limit of 100,000",
         "cut to its first 100,000 characters"),
        ("[1].question", "question of 10,001 characters exceeds the fixture limit of 10,000", "instance skipped"),
        ("[2]", "instance nested more than 64 levels deep", "instance skipped"),
    ]
    (session,) = _sessions(tmp_path / "out", "lme-long-turn")
    assert len(session.messages[0].text) == 100_000
    assert validate_corpus(tmp_path / "out" / "fixtures", tmp_path / "out" / "gold") == \
        ["lme-f00dfeed", "lme-long-turn"]


def test_an_instance_over_the_byte_bound_is_skipped_unheld(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(lme, "READ_SIZE", 256)
    monkeypatch.setattr(lme, "MAX_INSTANCE_BYTES", 5000)
    big = {**ROME, "question_id": "big",
           "haystack_sessions": [[_turn("user", f"turn {i} of many") for i in range(400)]]}
    source = _write(tmp_path / "big.json", [S_SAMPLE[0], big, ROME])
    report = import_longmemeval(source, tmp_path / "out")
    assert report.scenarios == ["lme-e47becba", "lme-f00dfeed"]
    assert [(i.scenario_id, i.location, i.reason) for i in report.issues["malformed_records"]] == \
        [("lme-record-1", "[1]", "instance larger than 5,000 bytes of JSON")]
    # One value longer than the bound cannot be skipped without holding it: the import stops.
    huge = {**ROME, "question_id": "huge", "haystack_sessions": [[_turn("user", "x" * 20_000)]]}
    _write(source, [S_SAMPLE[0], huge])
    with pytest.raises(SourceFormatError, match=r"instance \[1\].*a single JSON value longer than 5,000 bytes"):
        import_longmemeval(source, tmp_path / "out2")


def test_an_instance_of_too_many_values_is_skipped(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(lme, "MAX_INSTANCE_VALUES", 200)
    many = {**ROME, "question_id": "many", "haystack_sessions": [[] for _ in range(300)]}
    report = import_longmemeval(_write(tmp_path / "many.json", [many, ROME]), tmp_path / "out")
    assert report.scenarios == ["lme-f00dfeed"]
    assert [(i.location, i.reason) for i in report.issues["malformed_records"]] == \
        [("[0]", "instance of more than 200 JSON values")]


def test_issue_lists_are_capped_per_instance(tmp_path: Path):
    noisy = {**ROME, "haystack_sessions": [[*[_turn("robot", f"beep {i}") for i in range(60)],
                                                    _turn("user", "I visited Rome last week.", has_answer=True)]]}
    report = import_longmemeval(_write(tmp_path / "noisy.json", [noisy]), tmp_path / "out")
    listed = report.issues["malformed_records"]
    assert len(listed) == lme.MAX_ISSUES_LISTED + 1
    assert {i.reason for i in listed[:-1]} == {"role is neither 'user' nor 'assistant'"}
    assert (listed[-1].location, listed[-1].reason) == ("[0]", "10 more malformed_records issues in this instance")
    assert read_gold(tmp_path / "out" / "gold" / "lme-f00dfeed.json").probes[0].evidence == ["lme-f00dfeed-S1:61"]


def test_bad_fields_become_issues(tmp_path: Path):
    record = {"question_id": 17, "question_type": None, "question": "Which city?", "answer": ["Rome"],
              "question_date": 5, "haystack_session_ids": "answer_1", "haystack_dates": None,
              "haystack_sessions": [[7, _turn("user", 9), _turn("user", "Rome", has_answer="yes")], "oops"],
              "answer_session_ids": [None]}
    report = import_longmemeval(_write(tmp_path / "odd.json", [record]), tmp_path / "out")
    assert report.scenarios == ["lme-17"]
    assert [(i.location, i.reason) for i in report.issues["malformed_records"]] == [
        ("[0].question_id", "question_id is not a string"),
        ("[0].haystack_session_ids", "haystack_session_ids is not a list"),
        ("[0].haystack_sessions[0]", "session has no haystack_session_ids entry"),
        ("[0].haystack_sessions[1]", "session has no haystack_session_ids entry"),
        ("[0].haystack_dates", "haystack_dates missing"),
        ("[0].haystack_sessions[0][0]", "turn is not an object"),
        ("[0].haystack_sessions[0][1].content", "content is not a string"),
        ("[0].haystack_sessions[0][2].has_answer", "has_answer is not true or false"),
        ("[0].haystack_sessions[1]", "session is not a list of turns"),
        ("[0].question_type", "unknown question_type"),
    ]
    assert [(i.location, i.resolution) for i in report.issues["unparseable_dates"]] == [
        ("[0].haystack_dates[0]", "set to 2000-01-01T00:00:00Z, a fixed anchor (no session of this instance has "
         "a date)"),
        ("[0].haystack_dates[1]", "set to 2000-01-01T00:01:00Z, 1 minute after S1"),
        ("[0].question_date", "asked at 2000-01-02T00:01:00Z, 1 day after the last session starts"),
    ]
    assert [(i.location, i.resolution) for i in report.issues["missing_answers"]] == \
        [("[0].answer", "kept as JSON text")]
    assert [(i.location, i.reason) for i in report.issues["dangling_evidence"]] == \
        [("[0].answer_session_ids[0]", "not a session id string")]
    gold = read_gold(tmp_path / "out" / "gold" / "lme-17.json").probes[0]
    assert (gold.answer, gold.evidence, gold.probe_type) == ('["Rome"]', [], "uncategorised")
    assert validate_corpus(tmp_path / "out" / "fixtures", tmp_path / "out" / "gold") == ["lme-17"]


# --------------------------------------------------------------------------- CLI

def test_cli_command_imports_and_refuses_a_used_folder(tmp_path: Path):
    source = _write(tmp_path / "longmemeval_s_small.json", S_SAMPLE)
    runner = CliRunner()
    result = runner.invoke(cli_command, [str(source), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "longmemeval: 8 scenarios, 17 sessions, 34 messages, 8 probes" in result.output
    assert f"--fixtures {tmp_path / 'out' / 'fixtures'}" in result.output
    again = runner.invoke(cli_command, [str(source), "--out", str(tmp_path / "out")])
    assert again.exit_code == 2 and "is not empty" in again.output
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a list"}', encoding="utf-8")
    result = runner.invoke(cli_command, [str(bad), "--out", str(tmp_path / "out3")])
    assert result.exit_code == 2 and "expected a JSON array" in result.output
    only_bad = _write(tmp_path / "nothing.json", ["x"])
    result = runner.invoke(cli_command, [str(only_bad), "--out", str(tmp_path / "out4")])
    assert result.exit_code == 2 and "no instance could be imported" in result.output


# --------------------------------------------------------------------------- a run

@pytest.mark.slow
def test_retrieval_runs_through_the_keyword_adapter(imported, tmp_path: Path):
    from conformance.runner.job import run_job

    _, out, _ = imported
    doc = run_job(["keyword"], out / "fixtures", out / "gold", records_dir=tmp_path / "rec", n_boot=200)
    metrics = {name: doc.systems[name].metrics for name in ("keyword", "oracle", "none")}
    keyword = metrics["keyword"]["recall_at_k"].value
    assert isinstance(keyword, float) and 0.0 <= keyword <= 1.0
    assert metrics["oracle"]["recall_at_k"].value == 1.0
    assert metrics["none"]["recall_at_k"].value == 0.0
    # Free-form probes: no answer accuracy without an answer model.
    assert metrics["keyword"]["accuracy"].value is None


# --------------------------------------------------------------------------- fuzzing

@pytest.fixture(scope="module")
def fuzz_root(tmp_path_factory):
    return tmp_path_factory.mktemp("lme-fuzz")


def _fuzz_import(root: Path, blob: bytes) -> None:
    import shutil

    source, out = root / "longmemeval_s.json", root / "out"
    shutil.rmtree(out, ignore_errors=True)
    source.write_bytes(blob)
    report = assert_parses_or_located(lambda: import_longmemeval(source, out), source)
    for written in out.rglob("*"):
        assert written.resolve().is_relative_to(out.resolve()), written
    if report is not None and report.scenarios:
        assert validate_corpus(out / "fixtures", out / "gold") == sorted(report.scenarios)


FUZZ_DOC = [S_SAMPLE[1], S_SAMPLE[3], S_SAMPLE[4]]


@fuzz(120)
@given(doc=mutated_tree(FUZZ_DOC, rounds=4))
def test_mutated_tree(fuzz_root, doc):
    _fuzz_import(fuzz_root, dump_json(doc))


@fuzz(60)
@given(blob=mutated_bytes(dump_json(FUZZ_DOC, indent=1)))
def test_mutated_bytes(fuzz_root, blob):
    _fuzz_import(fuzz_root, blob)


@pytest.mark.parametrize("value", [*BAD_IDS, "x" * 5000, 10 ** 40])
def test_ids_from_the_data_stay_inside_the_output(fuzz_root, value):
    record = {**S_SAMPLE[0], "question_id": value, "haystack_session_ids": [value, value, "x"],
              "answer_session_ids": [value]}
    _fuzz_import(fuzz_root, dump_json([record, record]))


# --------------------------------------------------------------------------- the real files

REAL_FILES = ["longmemeval_s.json", "longmemeval_oracle.json", "longmemeval_s_cleaned.json",
              "longmemeval_oracle_cleaned.json"]


@pytest.mark.slow
@pytest.mark.parametrize("name", REAL_FILES)
def test_real_file(tmp_path: Path, name: str):
    source = REAL_DIR / name
    if not source.is_file():
        pytest.skip(f"{source} not found (set DRIFT_DATASETS_DIR to the folder holding longmemeval/{name})")
    report = import_longmemeval(source, tmp_path)
    assert {k: report.counts[k] for k in ("scenarios", "probes", "abstention_probes")} == \
        {"scenarios": 500, "probes": 500, "abstention_probes": 30}
    # The paper's question counts per type (abstention items included in their type).
    assert report.probes_by_type == {"single_session_user": 70, "single_session_assistant": 56,
                                     "single_session_preference": 30, "knowledge_update": 78,
                                     "temporal_reasoning": 133, "multi_session": 133}
    assert report.counts["skipped_instances"] == 0 and report.counts["evidence_ids"] > 0
    assert len(validate_corpus(tmp_path / "fixtures", tmp_path / "gold")) == 500

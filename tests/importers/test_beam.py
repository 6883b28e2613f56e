"""The BEAM importer: small hand-written conversations in each layout BEAM ships (the
repository's conversation folders, 10M plan chats, HF rows as JSONL, a JSON array and a
JSON object by size) with every known defect, and the real ``chats/`` folder when the
shared datasets folder holds it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.contract.corpus import iter_fixture, read_gold, validate_corpus
from conformance.contract.fixture import CheckpointLine, HeaderLine, SessionLine
from conformance.cli.import_ import importer_command
from conformance.importers.beam import ABILITIES, ISSUE_KINDS, decode_column, import_beam
from conformance.importers.report import SourceFormatError

cli_command = importer_command("beam")


def _datasets_dir() -> Path:
    override = os.environ.get("DRIFT_DATASETS_DIR")
    return Path(override) if override else Path(__file__).resolve().parents[2].parent / "shared" / "datasets"


REAL_CHATS = _datasets_dir() / "beam" / "chats"


def _msg(role: str, mid: object, content: str, **extra) -> dict:
    return {"role": role, "id": mid, "content": content, **extra}


def _main(mid: int, content: str, **extra) -> dict:
    return _msg("user", mid, content, question_type="main_question", **extra)


LONG_RUBRIC = [f"LLM response should contain: project milestone number {i} is described in enough detail"
               for i in range(40)]

# Conversation 1: the repository's folder layout, every ability, every kind of gold defect.
CHAT_1 = [
    {"batch_number": 1, "time_anchor": None, "turns": [
        [_main(0, "I plan to launch my budget tracker by April 15. ->-> 1,1", time_anchor="March-15-2024", index="1,1"),
         _msg("assistant", 1, "Great, April 15 it is."),
         _msg("user", 2, "I use Flask with SQLite.", question_type="followup_question"),
         _msg("assistant", 3, "Flask and SQLite make a light stack.")],
        [_main(4, "Always format code with syntax highlighting. ->-> 1,2", index="1,2"),
         _msg("assistant", 5, "Noted, highlighted code from now on.")],
    ]},
    {"batch_number": 2, "time_anchor": None, "turns": [
        [_main(6, "My sprint velocity is 21 points. ->-> 2,1", time_anchor="April-02-2024", index="2,1"),
         _msg("assistant", 7, "A good pace.")],
        [_main(8, "Update: my velocity is now 25 points. ->-> 2,2", index="2,2"),
         {"role": "user", "id": 99},
         _msg("assistant", 9, "A nice improvement.")],
    ]},
]
QUESTIONS_1 = {
    "abstention": [{"question": "What is my dog's name?", "ideal_response": "There is no information about a dog.",
                    "difficulty": "easy", "rubric": ["Based on the chat, there is no information about a dog"]}],
    "contradiction_resolution": [{
        "question": "Have I used SQLite in this project?",
        "ideal_answer": "You said both that you use SQLite and that you never did; which is right?",
        "source_chat_ids": {"first_statement": [2], "second_statement": [99]},
        "rubric": ["LLM response should state: there is contradictory information",
                   "LLM response should mention: you use Flask with SQLite"]}],
    "event_ordering": [{"question": "In what order did I bring up the launch and the velocity?",
                        "answer": "First the launch date, then the sprint velocity.",
                        "source_chat_ids": [0, 6], "rubric": ["launch date", "sprint velocity"]}],
    "information_extraction": [
        {"question": "What was my first sprint velocity, in points?", "answer": 21, "source_chat_ids": [6, "--"],
         "rubric": ["LLM response should state: 21"]},
        "not an item",
        {"answer": "a question is missing"},
    ],
    "instruction_following": [{"question": "Could you show me a login route?",
                               "expected_compliance": "Code is highlighted.", "source_chat_ids": [4],
                               "rubric": ["LLM response should contain: code blocks with syntax highlighting"]}],
    "knowledge_update": [{"question": "What is my sprint velocity now?", "answer": "25 points",
                          "source_chat_ids": {"original_info": [6], "updated_info": ["8"]},
                          "rubric": ["LLM response should state: 25 points"]}],
    "multi_session_reasoning": [{"question": "Which stack and which launch date did I mention?",
                                 "answer": "Flask with SQLite, April 15", "source_chat_ids": [2, 0, 2],
                                 "rubric": ["LLM response should state: Flask",
                                            "LLM response should state: April 15"]}],
    "preference_following": [{"question": "Which libraries should I add?", "source_chat_ids": [3],
                              "rubric": ["LLM response should contain: suggests lightweight libraries",
                                         "LLM response should contain: avoids heavy dependencies"]}],
    "summarization": [{"question": "Summarise how my project went.", "ideal_summary": "It went well.",
                       "source_chat_ids": [0, 6, 8], "rubric": LONG_RUBRIC}],
    "temporal_reasoning": [{"question": "How many days passed between the launch plan and the velocity report?",
                            "answer": "18 days", "source_chat_ids": {"first_event": [0], "second_event": [6]},
                            "rubric": ["LLM response should state: 18 days"]}],
    "Memory Palace": [{"question": "Where is my memory palace?", "answer": "In the library",
                       "source_chat_ids": [1]}],
}

# Conversation 2: a truncated chat beside the full one, questions beside the chat, odd anchors.
CHAT_2_FULL = [{"batch_number": 1, "time_anchor": "May-01-2024", "turns": [
    [_main(0, "Hello there."), _msg("assistant", 1, "Hi.")],
    [_main(2, "A turn that the truncated chat drops."), _msg("assistant", 3, "Dropped.")],
]}]
CHAT_2_TRUNCATED = [
    {"batch_number": 1, "time_anchor": "May-01-2024", "turns": [
        [_main(0, "Hello there."), _msg("assistant", 1, "Hi.")],
    ]},
    {"batch_number": 2, "time_anchor": None, "turns": [
        [_main(2, "I moved to Porto.", time_anchor="April-20-2024"), _msg("assistant", 2, "Porto is lovely.")],
        [_main(4, "The weather is mild.", time_anchor="sometime in spring"), _msg("assistant", 5, "Good.")],
        [{"role": "narrator", "id": 6, "content": "not a speaker"}],
    ]},
]
QUESTIONS_2 = {"information_extraction": [
    {"question": "Where did I move?", "answer": "Porto", "source_chat_ids": [2, 3], "rubric": ["Porto"]},
]}

# Conversation 3: a 10M chat (plans whose message ids run on, as BEAM's script combines them).
CHAT_3 = [
    {"plan-1": [{"batch_number": 1, "time_anchor": None, "turns": [
        [_main(0, "Plan one starts: I train for a marathon.", time_anchor="January-05-2024"),
         _msg("assistant", 1, "Good luck with the marathon.")]]}]},
    {"plan-2": [{"batch_number": 1, "time_anchor": None, "turns": [
        [_main(2, "Plan two: the marathon is in Berlin.", time_anchor="February-05-2024"),
         _msg("assistant", 3, "Berlin is flat and fast.")]]}]},
]
QUESTIONS_3 = {"multi_session_reasoning": [{"question": "Which marathon am I training for?",
                                            "answer": "Berlin", "source_chat_ids": [0, 2],
                                            "rubric": ["LLM response should state: Berlin"]}]}


def _hf_msg(role: str, mid: int, content: str, question_type=None, time_anchor=None, index=None) -> dict:
    # HF stores every key of the union on every message, null where a message lacks it.
    return {"role": role, "id": mid, "content": content, "index": index, "question_type": question_type,
            "time_anchor": time_anchor}


ROW_7 = {
    "conversation_id": "7",
    "chat": [[_hf_msg("user", 0, "I moved to Lisbon in May. ->-> 1,1", "main_question", "May-01-2024", "1,1"),
              _hf_msg("assistant", 1, "Lisbon is lovely."),
              _hf_msg("user", 2, "I take the tram to work. ->-> 1,2", "main_question", None, "1,2"),
              _hf_msg("assistant", 3, "Trams are handy.")]],
    # HF keeps the probing questions as a Python literal (BEAM reads it with ast.literal_eval).
    "probing_questions": repr({
        "information_extraction": [{"question": "Where did I move?", "answer": "Lisbon", "source_chat_ids": [0],
                                    "rubric": ["LLM response should state: Lisbon"], "extra": None}],
        "abstention": [{"question": "What is my cat called?", "ideal_response": "No information.",
                        "rubric": ["no information"]}],
    }),
}
ROW_10M = {
    "conversation_id": "3", "chat_size": "10M",
    "chat": [
        {"plan-0": [[_hf_msg("user", 0, "I started learning the cello.", "main_question", "June-01-2024"),
                     _hf_msg("assistant", 1, "The cello is a fine choice.")]], "plan-1": None},
        {"plan-0": None, "plan-1": [[_hf_msg("user", 0, "My cello teacher is Ana.", "main_question", "June-20-2024"),
                                     _hf_msg("assistant", 1, "Say hello to Ana.")]]},
    ],
    "probing_questions": json.dumps({"temporal_reasoning": [{
        "question": "How long after starting the cello did I name my teacher?", "answer": "19 days",
        "source_chat_ids": {"first_event": [0], "second_event": [2]}, "rubric": ["19 days"]}]}),
}
ROW_1M = {
    "conversation_id": 1, "chat_size": "1M",
    "chat": json.dumps([{"batch_number": 1, "time_anchor": "July-04-2024", "turns": [
        [_main(0, "I write a novel about lighthouses."), _msg("assistant", 1, "Lighthouses are evocative.")]]}]),
    "probing_questions": {"summarization": [{"question": "Summarise my writing so far.", "ideal_summary": "A novel.",
                                             "rubric": "LLM response should contain: a novel about lighthouses"}]},
}


def _write(path: Path, obj: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2), encoding="utf-8")


def _folder_layout(root: Path) -> Path:
    chats = root / "chats"
    _write(chats / "100K" / "1" / "chat.json", CHAT_1)
    _write(chats / "100K" / "1" / "probing_questions" / "probing_questions.json", QUESTIONS_1)
    (chats / "100K" / "1" / "chat.pickle").write_bytes(b"\x80\x04 not read")
    _write(chats / "100K" / "2" / "chat.json", CHAT_2_FULL)
    _write(chats / "100K" / "2" / "chat_trunecated.json", CHAT_2_TRUNCATED)
    _write(chats / "100K" / "2" / "probing_questions.json", QUESTIONS_2)
    _write(chats / "10M" / "1" / "chat.json", CHAT_3)
    _write(chats / "10M" / "1" / "probing_questions" / "probing_questions.json", QUESTIONS_3)
    # A 10M conversation folder holds per-plan folders with chats of their own: not conversations.
    _write(chats / "10M" / "1" / "plan-0" / "chat.json", CHAT_2_FULL)
    return chats


@pytest.fixture
def imported(tmp_path: Path):
    chats = _folder_layout(tmp_path)
    out = tmp_path / "out"
    return chats, out, import_beam(chats, out)


def _lines(out: Path, scenario: str) -> list:
    return list(iter_fixture(out / "fixtures" / f"{scenario}.jsonl"))


def _sessions(out: Path, scenario: str) -> list[SessionLine]:
    return [line for line in _lines(out, scenario) if isinstance(line, SessionLine)]


def _issues(report, kind: str) -> list[tuple]:
    return [(i.scenario_id, i.location, i.item_id, i.raw, i.reason, i.resolution) for i in report.issues[kind]]


def test_folder_layout_scenarios_sessions_and_times(imported):
    _, out, report = imported
    # Sizes in magnitude order; the plan-0 folder inside the 10M conversation is no conversation.
    assert report.scenarios == ["beam-100K-1", "beam-100K-2", "beam-10M-1"]
    sessions = _sessions(out, "beam-100K-1")
    assert [(s.session_id, s.index, s.time, s.participants) for s in sessions] == [
        ("beam-100K-1-b1-t1", 0, "2024-03-15T00:00:00Z", ["user", "assistant"]),
        ("beam-100K-1-b1-t2", 1, "2024-03-15T00:10:00Z", ["user", "assistant"]),
        ("beam-100K-1-b2-t1", 2, "2024-04-02T00:00:00Z", ["user", "assistant"]),
        ("beam-100K-1-b2-t2", 3, "2024-04-02T00:10:00Z", ["user", "assistant"]),
    ]
    first = sessions[0]
    assert [(m.message_id, m.author, m.role, m.timestamp, m.scope) for m in first.messages] == [
        ("beam-100K-1-m0", "user", "user", "2024-03-15T00:00:00Z", "shared"),
        ("beam-100K-1-m1", "assistant", "assistant", "2024-03-15T00:00:30Z", "shared"),
        ("beam-100K-1-m2", "user", "user", "2024-03-15T00:01:00Z", "shared"),
        ("beam-100K-1-m3", "assistant", "assistant", "2024-03-15T00:01:30Z", "shared"),
    ]
    # Text verbatim, BEAM's turn tag included; the message without content is skipped.
    assert first.messages[0].text == "I plan to launch my budget tracker by April 15. ->-> 1,1"
    assert [m.message_id for m in sessions[3].messages] == ["beam-100K-1-m8", "beam-100K-1-m9"]
    # The 10M plans become sessions p<plan>-b<batch>-t<turn>; ids run on across plans.
    assert [(s.session_id, s.time, [m.message_id for m in s.messages]) for s in _sessions(out, "beam-10M-1")] == [
        ("beam-10M-1-p1-b1-t1", "2024-01-05T00:00:00Z", ["beam-10M-1-m0", "beam-10M-1-m1"]),
        ("beam-10M-1-p2-b1-t1", "2024-02-05T00:00:00Z", ["beam-10M-1-m2", "beam-10M-1-m3"]),
    ]


def test_header_and_checkpoint(imported):
    _, out, _ = imported
    lines = _lines(out, "beam-100K-1")
    header, checkpoint = lines[0], lines[-1]
    assert isinstance(header, HeaderLine) and isinstance(checkpoint, CheckpointLine)
    assert (header.paradigm, header.source, header.free_form, header.markers) == ("user_assistant", "beam", True, {})
    assert [(e.entity_id, e.type) for e in header.entities] == [("user", "human"), ("assistant", "assistant_agent")]
    # Median of the gaps 10 min, 431 h 50 min, 10 min.
    assert [(h.name, h.sessions, h.session_gap_hours) for h in header.horizons] == [("short", 4, 0.167)]
    assert (checkpoint.checkpoint_id, checkpoint.after_session, checkpoint.horizon) == ("beam-100K-1-final", 4, "short")
    # 13 items in the file; the two malformed ones (q0004, q0005) are skipped.
    assert [p.probe_id for p in checkpoint.probes] == [f"beam-100K-1-q{i:04d}" for i in range(13) if i not in (4, 5)]
    assert {(p.asked_by, p.asked_at, p.options) for p in checkpoint.probes} == {("user", "2024-04-03T00:10:00Z", None)}
    assert checkpoint.probes[0].query == "What is my dog's name?"


def test_gold_types_answers_rubrics_and_evidence(imported):
    _, out, _ = imported
    gold = read_gold(out / "gold" / "beam-100K-1.json")
    m = "beam-100K-1-m"
    rows = [(p.probe_id[-5:], p.probe_type, p.subtype, p.abstention, p.answer, p.evidence) for p in gold.probes]
    assert rows == [
        ("q0000", "abstention", None, True, "unknown", []),
        ("q0001", "contradiction_resolution", "rubric", False,
         "LLM response should state: there is contradictory information\n"
         "LLM response should mention: you use Flask with SQLite", [m + "2"]),
        ("q0002", "event_ordering", None, False, "First the launch date, then the sprint velocity.",
         [m + "0", m + "6"]),
        ("q0003", "information_extraction", None, False, "21", [m + "6"]),
        ("q0006", "instruction_following", "rubric", False,
         "LLM response should contain: code blocks with syntax highlighting", [m + "4"]),
        ("q0007", "knowledge_update", None, False, "25 points", [m + "6", m + "8"]),
        ("q0008", "multi_session_reasoning", None, False, "Flask with SQLite, April 15", [m + "2", m + "0"]),
        ("q0009", "preference_following", "rubric", False,
         "LLM response should contain: suggests lightweight libraries\n"
         "LLM response should contain: avoids heavy dependencies", [m + "3"]),
        ("q0010", "summarization", "rubric", False, "\n".join(LONG_RUBRIC), [m + "0", m + "6", m + "8"]),
        ("q0011", "temporal_reasoning", None, False, "18 days", [m + "0", m + "6"]),
        ("q0012", "uncategorised", None, False, "In the library", [m + "1"]),
    ]
    assert {p.checkpoint_id for p in gold.probes} == {"beam-100K-1-final"}
    # Evidence naming a duplicated id means its first message; a repeated id counts once.
    assert [(p.answer, p.evidence) for p in read_gold(out / "gold" / "beam-100K-2.json").probes] == \
        [("Porto", ["beam-100K-2-m2"])]
    assert [m.text for m in _sessions(out, "beam-100K-2")[1].messages] == ["I moved to Porto.", "Porto is lovely."]
    assert {p.probe_type for p in gold.probes} == {*ABILITIES, "uncategorised"}
    # Gold stays out of the fixture.
    fixture_text = (out / "fixtures" / "beam-100K-1.jsonl").read_text(encoding="utf-8")
    assert "18 days" not in fixture_text and "syntax highlighting\"" not in fixture_text


def test_report_lists_every_defect(imported):
    _, out, report = imported
    a, b = "beam-100K-1", "beam-100K-2"
    assert set(report.issues) == set(ISSUE_KINDS) and "answer_not_in_evidence" in ISSUE_KINDS
    assert [(i.item_id, i.location) for i in report.issues["rubric_graded"]] == [
        (f"{a}-q0001", "probing_questions.contradiction_resolution[0].rubric"),
        (f"{a}-q0006", "probing_questions.instruction_following[0].rubric"),
        (f"{a}-q0009", "probing_questions.preference_following[0].rubric"),
        (f"{a}-q0010", "probing_questions.summarization[0].rubric"),
    ]
    assert all("answer model and a judge" in i.resolution for i in report.issues["rubric_graded"])
    assert _issues(report, "dangling_evidence") == [
        (a, "probing_questions.contradiction_resolution[0].source_chat_ids.second_statement[0]", f"{a}-q0001",
         "99", "names no message of this conversation", "dropped"),
        # The truncated chat is read: message 3 exists only in chat.json.
        (b, "probing_questions.information_extraction[0].source_chat_ids[1]", f"{b}-q0000", "3",
         "names no message of this conversation", "dropped"),
    ]
    assert _issues(report, "malformed_evidence") == [
        (a, "probing_questions.information_extraction[0].source_chat_ids[1]", f"{a}-q0003", "--",
         "not a message id (a non-negative integer)", "dropped"),
        (a, "probing_questions.knowledge_update[0].source_chat_ids.updated_info[0]", f"{a}-q0007", "8",
         "message id given as text", "read as 8"),
    ]
    assert _issues(report, "integer_answers") == [
        (a, "probing_questions.information_extraction[0].answer", f"{a}-q0003", "21",
         "answer is a number (int), not text", "kept as text '21'"),
    ]
    assert [(i.scenario_id, i.location, i.item_id, i.reason) for i in report.issues["malformed_records"]] == [
        (a, "chat[1].turns[1][1]", None, "message lacks a user/assistant role or a content string"),
        (a, "probing_questions.information_extraction[1]", f"{a}-q0004", "item without a question"),
        (a, "probing_questions.information_extraction[2]", f"{a}-q0005", "item without a question"),
        (a, "probing_questions.Memory Palace", None, "unknown ability"),
        (b, "chat[1].turns[2][0]", None, "message lacks a user/assistant role or a content string"),
        (b, "chat[1].turns[2]", f"{b}-b2-t3", "turn has no usable message"),
    ]
    assert _issues(report, "time_anchor_regressions") == [
        (b, "chat[1].turns[0][0].time_anchor", f"{b}-b2-t1", "April-20-2024",
         "time anchor 2024-04-20T00:00:00Z is before the end of the previous session (2024-05-01T00:01:00Z)",
         "set to 2024-05-01T00:01:00Z; dataset order kept"),
    ]
    assert _issues(report, "unparseable_dates") == [
        (b, "chat[1].turns[1][0].time_anchor", f"{b}-b2-t2", "sometime in spring",
         "time anchor unparseable (ParserError)", "set to 2024-05-01T00:11:00Z, 10 minutes after the previous session"),
    ]
    assert [(i.scenario_id, i.item_id, i.raw) for i in report.issues["duplicate_message_ids"]] == \
        [(b, f"{b}-m2-dup", "2")]
    assert report.issues["missing_answers"] == [] and report.issues["renumbered_ids"] == []
    # Rubrics are neither phrases of the chat nor short: never listed by the quality checks.
    assert report.issues["garbled_answers"] == []
    # Answers sharing a content word with their evidence ("21", "Porto", an ordering naming the launch
    # date, "Flask with SQLite") are not listed; a computed "18 days" and "In the library" are.
    assert [i.item_id for i in report.issues["answer_not_in_evidence"]] == [f"{a}-q0011", f"{a}-q0012"]
    assert report.counts == {"scenarios": 3, "sessions": 9, "messages": 20, "probes": 13, "evidence_ids": 19,
                             "abstention_probes": 1, "rubric_probes": 4, "probes_without_evidence": 0,
                             "truncated_chat_files": 1, "renumbered_plans": 0}
    assert report.probes_by_type == {**dict.fromkeys(ABILITIES, 1), "information_extraction": 2,
                                     "multi_session_reasoning": 2, "uncategorised": 1}
    assert any("subtype 'rubric'" in note for note in report.notes)
    written = json.loads((out / "import-report.json").read_text(encoding="utf-8"))
    assert written == report.model_dump(mode="json")


def test_corpus_validates_and_keyword_and_oracle_retrieve(imported, tmp_path: Path):
    from conformance.runner.job import run_job

    _, out, _ = imported
    assert validate_corpus(out / "fixtures", out / "gold") == ["beam-100K-1", "beam-100K-2", "beam-10M-1"]
    doc = run_job(["keyword"], out / "fixtures", out / "gold", records_dir=tmp_path / "rec", n_boot=200)
    doc = doc.model_dump(mode="json")
    recall = {system: doc["systems"][system]["metrics"]["recall_at_k"]["value"] for system in ("keyword", "oracle")}
    assert isinstance(recall["keyword"], float) and 0 <= recall["keyword"] <= 1
    assert recall["oracle"] == 1.0
    assert doc["systems"]["keyword"]["metrics"]["accuracy"]["value"] is None  # free-form: needs an answer model


def test_output_is_byte_identical_across_runs(imported, tmp_path: Path):
    chats, out, first = imported
    again = tmp_path / "again"
    second = import_beam(chats, again)
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert len(files) == 7
    for rel in files:
        assert (out / rel).read_bytes() == (again / rel).read_bytes(), rel
    # The folder digest covers the files read, not the pickle nor the plan folder.
    assert first.source_sha256 == second.source_sha256 and first.source_bytes == sum(
        (chats / rel).stat().st_size for rel in ("100K/1/chat.json", "100K/1/probing_questions/probing_questions.json",
                                                  "100K/2/chat_trunecated.json", "100K/2/probing_questions.json",
                                                  "10M/1/chat.json", "10M/1/probing_questions/probing_questions.json"))
    (chats / "100K" / "2" / "probing_questions.json").write_text(json.dumps(QUESTIONS_2) + " ", encoding="utf-8")
    assert import_beam(chats, tmp_path / "third").source_sha256 != first.source_sha256


def test_a_single_conversation_folder(tmp_path: Path):
    chats = _folder_layout(tmp_path)
    report = import_beam(chats / "10M" / "1", tmp_path / "out")
    assert report.scenarios == ["beam-10M-1"]
    gold = read_gold(tmp_path / "out" / "gold" / "beam-10M-1.json")
    assert [(p.probe_type, p.answer, p.evidence) for p in gold.probes] == [
        ("multi_session_reasoning", "Berlin", ["beam-10M-1-m0", "beam-10M-1-m2"])]


def test_rows_as_json_lines(tmp_path: Path):
    source = tmp_path / "BEAM-500K.jsonl"
    source.write_text("\n".join([json.dumps(ROW_7), "{not json", "", json.dumps(ROW_10M)]) + "\n", encoding="utf-8")
    report = import_beam(source, tmp_path / "out")
    out = tmp_path / "out"
    # The size comes from the file name unless the row states its own.
    assert report.scenarios == ["beam-500K-7", "beam-10M-3"]
    assert [(s.session_id, s.time, [m.message_id for m in s.messages]) for s in _sessions(out, "beam-500K-7")] == [
        ("beam-500K-7-b1-t1", "2024-05-01T00:00:00Z", ["beam-500K-7-m0", "beam-500K-7-m1"]),
        ("beam-500K-7-b1-t2", "2024-05-01T00:10:00Z", ["beam-500K-7-m2", "beam-500K-7-m3"]),
    ]
    gold = read_gold(out / "gold" / "beam-500K-7.json")
    assert [(p.probe_type, p.abstention, p.answer, p.evidence) for p in gold.probes] == [
        ("information_extraction", False, "Lisbon", ["beam-500K-7-m0"]),
        ("abstention", True, "unknown", []),
    ]
    # The second plan restarts its ids at 0: shifted by 2, so evidence 2 is its first message.
    assert [[m.message_id for m in s.messages] for s in _sessions(out, "beam-10M-3")] == \
        [["beam-10M-3-m0", "beam-10M-3-m1"], ["beam-10M-3-m2", "beam-10M-3-m3"]]
    assert [s.session_id for s in _sessions(out, "beam-10M-3")] == ["beam-10M-3-p1-b1-t1", "beam-10M-3-p2-b1-t1"]
    assert read_gold(out / "gold" / "beam-10M-3.json").probes[0].evidence == ["beam-10M-3-m0", "beam-10M-3-m2"]
    assert _issues(report, "renumbered_ids") == [
        ("beam-10M-3", "chat[1].plan-1", None, "0", "plan restarts the message ids of the plans before it",
         "its ids shifted by 2, as BEAM's download script combines plans")]
    assert [(i.scenario_id, i.location, i.reason, i.resolution) for i in report.issues["malformed_records"]] == [
        ("beam-500K-line-2", "line 2", "skipped: not a JSON line (invalid JSON: Expecting property name enclosed in "
         "double quotes (column 2))", "skipped")]
    assert report.counts["renumbered_plans"] == 1
    assert validate_corpus(out / "fixtures", out / "gold") == ["beam-10M-3", "beam-500K-7"]


def test_rows_as_a_json_array_and_as_an_object_by_size(tmp_path: Path):
    source = tmp_path / "rows.json"
    source.write_text(json.dumps([ROW_1M, 5]), encoding="utf-8")
    report = import_beam(source, tmp_path / "out")
    assert report.scenarios == ["beam-1M-1"]
    lines = _lines(tmp_path / "out", "beam-1M-1")
    assert lines[1].time == "2024-07-04T00:00:00Z"  # the batch-level anchor
    gold = read_gold(tmp_path / "out" / "gold" / "beam-1M-1.json")
    assert [(p.probe_type, p.subtype, p.answer, p.evidence) for p in gold.probes] == [
        ("summarization", "rubric", "LLM response should contain: a novel about lighthouses", [])]
    assert report.counts["probes_without_evidence"] == 1
    assert [(i.location, i.reason) for i in report.issues["malformed_records"]] == \
        [("[1]", "skipped: row is not an object")]

    by_size = tmp_path / "by-size.json"
    row = {**ROW_7, "conversation_id": "9"}
    by_size.write_text(json.dumps({"100K": [row], "meta": 3}), encoding="utf-8")
    report = import_beam(by_size, tmp_path / "out2")
    assert report.scenarios == ["beam-100K-9"]
    assert [(i.location, i.reason) for i in report.issues["malformed_records"]] == \
        [("meta", "skipped: top-level value is not a list of rows")]
    assert validate_corpus(tmp_path / "out2" / "fixtures", tmp_path / "out2" / "gold") == ["beam-100K-9"]


def test_broken_conversations_are_reported_not_raised(tmp_path: Path):
    root = tmp_path / "mine"
    (root / "100K" / "1").mkdir(parents=True)
    (root / "100K" / "1" / "chat.json").write_text("{", encoding="utf-8")
    _write(root / "100K" / "2" / "probing_questions.json", QUESTIONS_2)
    _write(root / "100K" / "3" / "chat.json", CHAT_2_FULL)
    (root / "100K" / "3" / "probing_questions.json").write_text("[1, 2", encoding="utf-8")
    _write(root / "100K" / "4" / "chat.json", {"not": "a list"})
    _write(root / "other" / "alpha" / "chat.json", CHAT_2_FULL)
    _write(root / "other" / "alpha" / "probing_questions.json", ["not", "an", "object"])
    report = import_beam(root, tmp_path / "out")
    assert report.scenarios == ["beam-100K-3", "beam-alpha"]
    assert [(i.scenario_id, i.location, i.reason, i.resolution) for i in report.issues["malformed_records"]] == [
        ("beam-100K-1", "100K/1", "skipped: chat.json: not a JSON file (line 1: invalid JSON: Expecting property "
         "name enclosed in double quotes (column 2))", "skipped"),
        ("beam-100K-2", "100K/2", "skipped: no chat file (chat_trunecated.json, chat_truncated.json, chat.json)",
         "skipped"),
        ("beam-100K-3", "100K/3: probing_questions.json", "not a JSON file (line 1: invalid JSON: Expecting ',' "
         "delimiter (column 6))", "imported without probes"),
        ("beam-100K-4", "100K/4: probing_questions", "no probing questions file (probing_questions/"
         "probing_questions.json, probing_questions.json)", "imported without probes"),
        ("beam-100K-4", "chat", "chat is a dict, not a list of batches", "no sessions"),
        ("beam-100K-4", "chat", "conversation has no usable turn", "skipped"),
        ("beam-alpha", "other/alpha: (conversation)", "chat size unknown (parent folder 'other' is no size such as "
         "100K)", "scenario id beam-alpha"),
        ("beam-alpha", "probing_questions", "probing questions are a list, not an object of ability -> items",
         "no probes"),
    ]
    assert validate_corpus(tmp_path / "out" / "fixtures", tmp_path / "out" / "gold") == ["beam-100K-3", "beam-alpha"]


def test_whole_file_errors_raise_source_format_error(tmp_path: Path):
    (tmp_path / "bad.json").write_text("[1, 2", encoding="utf-8")
    with pytest.raises(SourceFormatError, match="not a JSON file"):
        import_beam(tmp_path / "bad.json", tmp_path / "o1")
    (tmp_path / "number.json").write_text("42", encoding="utf-8")
    with pytest.raises(SourceFormatError, match="expected a JSON list of BEAM rows"):
        import_beam(tmp_path / "number.json", tmp_path / "o2")
    (tmp_path / "rows.parquet").write_bytes(b"PAR1")
    with pytest.raises(SourceFormatError, match="export the rows as JSON Lines"):
        import_beam(tmp_path / "rows.parquet", tmp_path / "o3")
    chats = _folder_layout(tmp_path / "layout")
    with pytest.raises(SourceFormatError, match="pass its conversation folder"):
        import_beam(chats / "100K" / "1" / "chat.json", tmp_path / "o4")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceFormatError, match="no BEAM conversation folder"):
        import_beam(tmp_path / "empty", tmp_path / "o5")


def test_probing_question_text_decodes_as_json_or_python_literal():
    assert decode_column('{"a": [1, null]}') == ({"a": [1, None]}, None)
    assert decode_column("{'a': [1, None], 'b': 'x'}") == ({"a": [1, None], "b": "x"}, None)
    value, problem = decode_column("__import__('os').system('true')")
    assert value is None and problem.startswith("text that is neither JSON")
    assert decode_column([1]) == ([1], None)


BOM = b"\xef\xbb\xbf"


def _corpus_bytes(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for folder in ("fixtures", "gold")
            for p in sorted((out / folder).glob("*"))}


@pytest.mark.parametrize("layout", ["folder", "jsonl", "array", "one row", "by size"])
def test_a_utf8_bom_is_accepted_in_every_file_read(tmp_path: Path, layout: str):
    """Every JSON / JSON Lines file BEAM reads may start with a UTF-8 BOM (as in the LongMemEval
    and guide importers): the same corpus as without it, nothing skipped."""
    def write(root: Path, bom: bytes) -> Path:
        def put(path: Path, obj: object, jsonl: bool = False) -> None:
            path.parent.mkdir(parents=True, exist_ok=True)
            text = "\n".join(json.dumps(o) for o in obj) + "\n" if jsonl else json.dumps(obj, indent=2)
            path.write_bytes(bom + text.encode("utf-8"))
        if layout == "folder":
            put(root / "100K" / "1" / "chat.json", CHAT_1)
            put(root / "100K" / "1" / "probing_questions" / "probing_questions.json", QUESTIONS_1)
            put(root / "100K" / "2" / "chat_trunecated.json", CHAT_2_TRUNCATED)
            put(root / "100K" / "2" / "probing_questions.json", QUESTIONS_2)
            return root
        source = root / ("BEAM-500K.jsonl" if layout == "jsonl" else "rows.json")
        put(source, {"jsonl": [ROW_7, ROW_10M], "array": [ROW_1M, ROW_7], "one row": ROW_10M,
                     "by size": {"100K": [ROW_7], "1M": [ROW_1M]}}[layout], jsonl=layout == "jsonl")
        return source

    plain = import_beam(write(tmp_path / "plain", b""), tmp_path / "out-plain")
    marked = import_beam(write(tmp_path / "bom", BOM), tmp_path / "out-bom")
    assert marked.scenarios == plain.scenarios and marked.scenarios
    assert "BOM" not in json.dumps(marked.model_dump(mode="json"))
    assert marked.issues == plain.issues and marked.counts == plain.counts
    assert _corpus_bytes(tmp_path / "out-bom") == _corpus_bytes(tmp_path / "out-plain")
    assert marked.source_sha256 != plain.source_sha256  # the digest covers the bytes as they are


def test_cli_command_imports_prints_and_refuses_a_used_folder(tmp_path: Path):
    chats = _folder_layout(tmp_path)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli_command, [str(chats), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "beam: 3 scenarios, 9 sessions, 20 messages, 13 probes" in result.output
    assert "rubric_graded: 4" in result.output and "dangling_evidence: 2" in result.output
    assert "4 rubric-graded probes (subtype 'rubric') count only with an answer model and a judge" in result.output
    assert f"--fixtures {out / 'fixtures'}" in result.output
    again = CliRunner().invoke(cli_command, [str(chats), "--out", str(out)])
    assert again.exit_code == 2 and "is not empty" in again.output
    (tmp_path / "bad.json").write_text("[1,", encoding="utf-8")
    bad = CliRunner().invoke(cli_command, [str(tmp_path / "bad.json"), "--out", str(tmp_path / "o2")])
    assert bad.exit_code == 2 and "not a JSON file" in bad.output
    nothing = tmp_path / "nothing" / "100K" / "1"
    nothing.mkdir(parents=True)
    (nothing / "chat.json").write_text("{", encoding="utf-8")
    none = CliRunner().invoke(cli_command, [str(tmp_path / "nothing"), "--out", str(tmp_path / "o3")])
    assert none.exit_code == 2 and "no conversation could be imported" in none.output


@pytest.mark.skipif(not REAL_CHATS.is_dir(), reason=f"BEAM chats not found at {REAL_CHATS} (set "
                    "DRIFT_DATASETS_DIR to the folder holding beam/chats, BEAM's chats/ folder)")
def test_real_beam_chats(tmp_path: Path):
    report = import_beam(REAL_CHATS, tmp_path)
    assert report.scenarios and set(report.probes_by_type) <= {*ABILITIES, "uncategorised"}
    assert {t for t, n in report.probes_by_type.items() if n} >= set(ABILITIES)
    assert report.counts["rubric_probes"] == sum(report.probes_by_type[a] for a in (
        "contradiction_resolution", "instruction_following", "preference_following", "summarization"))
    assert len(validate_corpus(tmp_path / "fixtures", tmp_path / "gold")) == len(report.scenarios)

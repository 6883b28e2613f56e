"""Doubtful-gold checks the importers share (issue 19, item 10), each reproduced on a tiny
hand-made file in LoCoMo's and in LongMemEval's shape: garbled answers, stale
knowledge-update answers, answers whose dates the session dates contradict, answers
found only in a dropped field, and probes left with no evidence.

Every class has a control beside it (an item of the same shape whose gold is fine) that
must stay unflagged: a check that flags everything would pass the positive half alone."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.importers.locomo import import_locomo
from conformance.importers.longmemeval import import_longmemeval
from conformance.importers.quality import QUALITY_KINDS, run_together_reason, shape_reason
from conformance.importers.temporal import answer_span, duration_days, message_spans


def _turn(dia: str, speaker: str, text: str, **extra) -> dict:
    return {"speaker": speaker, "dia_id": dia, "text": text, **extra}


def _qa(question: str, answer, evidence: list, category: int = 4) -> dict:
    return {"question": question, "answer": answer, "evidence": evidence, "category": category}


LOCOMO = [{
    "sample_id": "conv-9",
    "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bob",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            _turn("D1:1", "Ann", "I adopted a cat yesterday and my teammates on the video game team love her."),
            _turn("D1:2", "Bob", "I felt relief, excitement and some worry about the new job."),
            _turn("D1:3", "Ann", "I live in Lisbon and I have 2 dogs."),
            _turn("D1:4", "Bob", "One of my favourites! Take a look.", img_url=["https://x.example/eternal-sunshine.jpg"],
                  blip_caption="a photo of a dvd cover", query="eternal sunshine spotless mind dvd"),
            _turn("D1:5", "Ann", "Freedom and being true to herself is what the book is about."),
            _turn("D1:6", "Bob", "Look at my puppy!", img_url=["https://x.example/p.jpg"],
                  blip_caption="a photo of a puppy on a beach", query="puppy beach"),
        ],
        "session_2_date_time": "1:14 pm on 25 May, 2023",
        "session_2": [
            _turn("D2:1", "Bob", "I ran a charity race for mental health last Saturday."),
            _turn("D2:2", "Ann", "I went to Rome last year, and I painted a sunrise two days ago."),
            _turn("D2:3", "Bob", "Last Friday I went to a pottery workshop."),
        ],
        "session_3_date_time": "10:31 am on 13 October, 2023",
        "session_3": [
            _turn("D3:1", "Ann", "Last month I got hurt and had to take a break from pottery."),
            _turn("D3:2", "Ann", "I moved to Porto, so now I live in Porto. And now I have 3 dogs."),
            _turn("D3:3", "Bob", "I still love my cat."),
        ],
    },
    "qa": [
        # q0-q4 garbled, q5-q6 their controls.
        _qa("Does Ann have friends?", "Yesteammates on hisvideo game team.", ["D1:1"], 3),
        _qa("How did Bob feel?", "Relief, excitement,worry", ["D1:2"], 1),
        _qa("When did Bob run a race?", "The week before 25May, 2023", ["D2:1"], 2),
        _qa("What did Ann adopt?", "a cat and the", ["D1:1"]),
        _qa("What did Bob feel?", "relief relief", ["D1:2"]),
        _qa("What is the book about?", "Freedom and being true to herself", ["D1:5"]),
        _qa("Does Ann have teammates?", "Yes, teammates on the video game team.", ["D1:1"], 3),
        # q7-q8 stale (a later session of the same speaker states another value); q9-q10 controls.
        _qa("Where does Ann live now?", "Lisbon", ["D1:3"]),
        _qa("How many dogs does Ann have now?", "2", ["D1:3"]),
        _qa("Where did Ann live in May?", "Lisbon", ["D1:3"]),
        _qa("What pet does Bob have now?", "a cat", ["D1:1"]),
        # q11-q14 dates the session dates contradict; q15-q17 controls.
        _qa("When did Bob run a charity race?", "The sunday before 25 May 2023", ["D2:1"], 2),
        _qa("When did Bob go to a pottery workshop?", "The Friday before 9 June 2023", ["D2:3"], 2),
        _qa("When did Ann go to Rome?", "2021", ["D2:2"], 2),
        _qa("What setback did Ann face in October 2023?", "She got hurt and took a break from pottery", ["D3:1"]),
        _qa("When did Ann adopt a cat?", "7 May 2023", ["D1:1"], 2),
        _qa("When did Ann paint a sunrise?", "23 May 2023", ["D2:2"], 2),
        _qa("What setback did Ann face in September 2023?", "She got hurt and took a break from pottery", ["D3:1"]),
        # q18 found only in a dropped field (query) of its evidence turn; q19 its control
        # (the kept caption says it).
        _qa("What is Bob's favourite movie?", "Eternal Sunshine of the Spotless Mind", ["D1:4"]),
        _qa("Where was Bob's puppy?", "a beach", ["D1:6"]),
        # q20-q21 no evidence (none given; the only id names no turn); q22 abstention: not flagged.
        _qa("What does Bob like?", "running", []),
        _qa("What does Ann like?", "pottery", ["D9:9"]),
        {"question": "What is Ann's dog called?", "adversarial_answer": "Rex", "evidence": [], "category": 5},
    ],
    "event_summary": {"events_session_1": {"Ann": ["Ann adopted a cat."]}},
    "observation": {}, "session_summary": {},
}]


def _lme(qid: str, qtype: str, question: str, answer, asked: str, dates: list, sessions: list,
         answers: list[int]) -> dict:
    ids = [f"answer_{qid}_{i}" if i in answers else f"sharegpt_{qid}_{i}" for i in range(len(sessions))]
    return {"question_id": qid, "question_type": qtype, "question": question, "answer": answer,
            "question_date": asked, "haystack_session_ids": ids, "haystack_dates": dates,
            "haystack_sessions": sessions, "answer_session_ids": [ids[i] for i in answers]}


def _u(text: str, has_answer: bool = False, **extra) -> dict:
    return {"role": "user", "content": text, "has_answer": has_answer, **extra}


def _a(text: str) -> dict:
    return {"role": "assistant", "content": text}


LME = [
    # [0] garbled; [1] its control.
    _lme("g1", "single-session-user", "What do I do on weekends?", "watchingmovies, exploringnature",
         "2023/05/30 (Tue) 10:00", ["2023/05/20 (Sat) 10:00"],
         [[_u("On weekends I like watching movies and exploring nature.", True), _a("Nice.")]], [0]),
    _lme("g2", "single-session-user", "What do I do on weekends?", "watching movies, exploring nature",
         "2023/05/30 (Tue) 10:00", ["2023/05/20 (Sat) 10:00"],
         [[_u("On weekends I like watching movies and exploring nature.", True), _a("Nice.")]], [0]),
    # [2] stale: a later filler session states another speed (a public report's shape); [3]
    # control: the later session is after the question.
    _lme("k1", "knowledge-update", "What speed is my new internet plan?", "500 Mbps", "2023/05/30 (Tue) 21:56",
         ["2023/05/24 (Wed) 03:21", "2023/05/30 (Tue) 04:36"],
         [[_u("I upgraded my internet plan to 500 Mbps about three weeks ago.", True), _a("Great.")],
          [_u("My internet speed is 1 Gbps, can you help me set up my router?"), _a("Sure.")]], [0]),
    _lme("k2", "knowledge-update", "What speed is my new internet plan?", "500 Mbps", "2023/05/29 (Mon) 21:56",
         ["2023/05/24 (Wed) 03:21", "2023/05/30 (Tue) 04:36"],
         [[_u("I upgraded my internet plan to 500 Mbps about three weeks ago.", True), _a("Great.")],
          [_u("My internet speed is 1 Gbps, can you help me set up my router?"), _a("Sure.")]], [0]),
    # [4] weeks computed from the session dates: 81 days, not 15 weeks; [5] control (11 weeks).
    _lme("t1", "temporal-reasoning",
         "How many weeks had passed since I recovered from the flu when I went on my 10th jog outdoors?", 15,
         "2023/10/15 (Sun) 17:53", ["2023/01/19 (Thu) 10:47", "2023/04/10 (Mon) 14:27"],
         [[_u("I finally recovered from the flu today.", True), _a("Glad to hear.")],
          [_u("I went on my 10th jog outdoors today.", True), _a("Well done.")]], [0, 1]),
    _lme("t2", "temporal-reasoning",
         "How many weeks had passed since I recovered from the flu when I went on my 10th jog outdoors?", 11,
         "2023/10/15 (Sun) 17:53", ["2023/01/19 (Thu) 10:47", "2023/04/10 (Mon) 14:27"],
         [[_u("I finally recovered from the flu today.", True), _a("Glad to hear.")],
          [_u("I went on my 10th jog outdoors today.", True), _a("Well done.")]], [0, 1]),
    # [6] the question's "last Thursday" (25 May) is not the evidence's (18 May); [7] control.
    _lme("t3", "multi-session", "How much did I spend at SaveMart last Thursday?", "$75", "2023/05/30 (Tue) 23:17",
         ["2023/05/23 (Tue) 10:00"], [[_u("I spent $75 on groceries at SaveMart last Thursday.", True)]], [0]),
    _lme("t4", "multi-session", "How much did I spend at SaveMart last Thursday?", "$75", "2023/05/24 (Wed) 23:17",
         ["2023/05/23 (Tue) 10:00"], [[_u("I spent $75 on groceries at SaveMart last Thursday.", True)]], [0]),
    # [8] found only in a field the importer drops; [9] no evidence turn at all.
    _lme("d1", "single-session-user", "What breed is my dog?", "corgi", "2023/06/01 (Thu) 10:00",
         ["2023/05/31 (Wed) 10:00"], [[_u("Here is a photo of my dog!", True, image_caption="a corgi on a sofa")]], [0]),
    _lme("e1", "single-session-user", "What is my favourite colour?", "green", "2023/06/01 (Thu) 10:00",
         ["2023/05/31 (Wed) 10:00"], [[_a("Colours are nice.")]], [0]),
]


@pytest.fixture(scope="module")
def locomo(tmp_path_factory):
    root = tmp_path_factory.mktemp("locomo")
    source = root / "locomo-doubtful.json"
    source.write_text(json.dumps(LOCOMO, indent=1), encoding="utf-8")
    return import_locomo(source, root / "out")


@pytest.fixture(scope="module")
def longmemeval(tmp_path_factory):
    root = tmp_path_factory.mktemp("lme")
    source = root / "longmemeval_s_doubtful.json"
    source.write_text(json.dumps(LME, indent=1), encoding="utf-8")
    return import_longmemeval(source, root / "out")


def _flagged(report, kind: str) -> dict[str, str]:
    return {i.item_id: i.reason for i in report.issues[kind]}


def _q(n: int) -> str:
    return f"locomo-conv-9-q{n:04d}"


def test_every_new_kind_is_in_every_report(locomo, longmemeval):
    for kind in ("stale_answers", "date_contradictions", "answers_in_dropped_fields", "empty_evidence"):
        assert kind in QUALITY_KINDS
        assert kind in locomo.issues and kind in longmemeval.issues


# ---- garbled answers ------------------------------------------------------------------

def test_run_together_words_are_found_against_a_dictionary_and_the_conversation():
    known = {"teammates", "video", "game", "team", "yes"}
    assert "yesteammates" in run_together_reason("Yesteammates on hisvideo game team.", known)
    assert "hisvideo" in run_together_reason("Yesteammates on hisvideo game team.", known)
    # Dictionary words that split into two words are words ("herself", "sunshine"), and so are
    # words of the conversation ("Valorant") and inflections ("journalling").
    assert run_together_reason("Freedom and being true to herself in the sunshine", set()) is None
    assert run_together_reason("Valorant tournaments", {"valorant"}) is None
    assert run_together_reason("journalling and traveling", set()) is None


def test_shape_of_an_answer():
    assert "without a space" in shape_reason("Relief, excitement,worry")
    assert "9June" in shape_reason("The week before 9June, 2023")
    assert "ends on" in shape_reason("a cat and the")
    assert "repeated" in shape_reason("relief relief")
    for fine in ("3,000 dollars", "10:30 am", "the 1990s", "U.S.", "Counter-Strike", "a cat", "He had had enough",
                 "the 2nd of May", "about 5km"):
        assert shape_reason(fine) is None, fine


def test_locomo_garbled_answers(locomo):
    flagged = _flagged(locomo, "garbled_answers")
    assert {_q(0), _q(1), _q(2), _q(3), _q(4)} <= set(flagged)
    assert _q(5) not in flagged and _q(6) not in flagged
    assert "yesteammates" in flagged[_q(0)]


def test_longmemeval_garbled_answers(longmemeval):
    flagged = _flagged(longmemeval, "garbled_answers")
    assert "lme-g1-q1" in flagged and "lme-g2-q1" not in flagged


# ---- stale knowledge-update answers ---------------------------------------------------

def test_locomo_stale_answers(locomo):
    flagged = _flagged(locomo, "stale_answers")
    assert set(flagged) == {_q(7), _q(8)}
    assert "locomo-conv-9-D3:2" in flagged[_q(7)] and "Porto" in flagged[_q(7)]


def test_longmemeval_stale_answers(longmemeval):
    flagged = _flagged(longmemeval, "stale_answers")
    assert set(flagged) == {"lme-k1-q1"}
    assert "1 Gbps" in flagged["lme-k1-q1"]


# ---- dates the session dates contradict -----------------------------------------------

def test_time_expressions_resolve_against_the_session_date():
    may25 = date(2023, 5, 25)
    assert message_spans("I ran a race last Saturday.", may25) == [(date(2023, 5, 20), date(2023, 5, 20), 5)]
    assert message_spans("I adopted a cat yesterday", may25) == [(date(2023, 5, 24), date(2023, 5, 24), None)]
    assert message_spans("Last month I got hurt", may25)[0][:2] == (date(2023, 4, 1), date(2023, 4, 30))
    assert message_spans("nothing dated here", may25) == []
    assert answer_span("The sunday before 25 May 2023").weekday == 6
    assert answer_span("The sunday before 25 May 2023").anchor == may25
    assert answer_span("in 2022").span == (date(2022, 1, 1), date(2022, 12, 31))
    assert answer_span("May, 2023").span == (date(2023, 5, 1), date(2023, 5, 31))
    assert answer_span("a cat") is None
    assert duration_days("15", "How many weeks had passed?") == (105, 7)
    assert duration_days("4 years", "How long?") == (1461, 365)


_PIECES = ["999 years ago", "12 months ago", "last sunday", "July 20", "31 June", "29 February", "next month",
           "the week before 9 June 2023", "in 1900", "the day after tomorrow", "9June", "a few days ago", ",", "15"]


@given(st.lists(st.sampled_from(_PIECES) | st.text(max_size=12), max_size=6),
       st.dates(min_value=date(1000, 1, 1), max_value=date(8999, 12, 31)))
def test_date_readers_never_raise(pieces, day):
    text = " ".join(pieces)
    message_spans(text, day)
    message_spans(text, day, past=True)
    answer_span(text)
    duration_days(text, "How many weeks?")
    shape_reason(text)
    run_together_reason(text, set())


def test_locomo_date_contradictions(locomo):
    flagged = _flagged(locomo, "date_contradictions")
    assert set(flagged) == {_q(11), _q(12), _q(13), _q(14)}
    assert "Saturday" in flagged[_q(11)]
    assert "9 June 2023" in flagged[_q(12)] or "2023-06-09" in flagged[_q(12)]


def test_longmemeval_date_contradictions(longmemeval):
    flagged = _flagged(longmemeval, "date_contradictions")
    assert set(flagged) == {"lme-t1-q1", "lme-t3-q1"}
    assert "81 days" in flagged["lme-t1-q1"]


# ---- fields dropped without a note ----------------------------------------------------

def test_locomo_answers_in_dropped_fields_and_the_note(locomo):
    flagged = _flagged(locomo, "answers_in_dropped_fields")
    assert set(flagged) == {_q(18)}
    assert "query" in flagged[_q(18)]
    note = next(n for n in locomo.notes if n.startswith("fields dropped"))
    for field in ("img_url", "query", "event_summary"):
        assert field in note
    assert "blip_caption" not in note.split("kept")[0]


def test_longmemeval_answers_in_dropped_fields_and_the_note(longmemeval):
    flagged = _flagged(longmemeval, "answers_in_dropped_fields")
    assert set(flagged) == {"lme-d1-q1"}
    assert any(n.startswith("fields dropped") and "image_caption" in n for n in longmemeval.notes)


def test_a_file_without_extra_fields_notes_none_dropped(tmp_path: Path):
    source = tmp_path / "longmemeval_s_plain.json"
    source.write_text(json.dumps(LME[1:2]), encoding="utf-8")
    report = import_longmemeval(source, tmp_path / "out")
    assert any(n.startswith("fields dropped: none") for n in report.notes)


# ---- empty evidence -------------------------------------------------------------------

def test_locomo_empty_evidence(locomo):
    flagged = _flagged(locomo, "empty_evidence")
    assert set(flagged) == {_q(20), _q(21)}
    assert "dropped" in flagged[_q(21)]


def test_longmemeval_empty_evidence(longmemeval):
    assert set(_flagged(longmemeval, "empty_evidence")) == {"lme-e1-q1"}


def test_reports_name_scenario_probe_and_gold_answer(locomo):
    issue = next(i for i in locomo.issues["stale_answers"] if i.item_id == _q(7))
    assert (issue.scenario_id, issue.location, issue.raw) == ("locomo-conv-9", "qa[7].answer", "Lisbon")


# ---- the real LoCoMo file -------------------------------------------------------------

def _datasets_dir() -> Path:
    import os

    override = os.environ.get("DRIFT_DATASETS_DIR")
    return Path(override) if override else Path(__file__).resolve().parents[2].parent / "shared" / "datasets"


REAL_LOCOMO = _datasets_dir() / "locomo" / "locomo10.json"
REAL_SHA256 = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"


@pytest.mark.skipif(not REAL_LOCOMO.is_file(), reason=f"LoCoMo data file not found at {REAL_LOCOMO} "
                    "(set DRIFT_DATASETS_DIR to the folder holding locomo/locomo10.json)")
def test_real_locomo10_counts_and_publicly_reported_items(tmp_path: Path):
    report = import_locomo(REAL_LOCOMO, tmp_path)
    if report.source_sha256 != REAL_SHA256:
        pytest.skip(f"{REAL_LOCOMO} is another release (sha256 {report.source_sha256[:12]}); counts are for "
                    f"{REAL_SHA256[:12]}")
    # The counts the quality module's docstring gives (and the README's paragraph).
    assert {kind: len(report.issues[kind]) for kind in QUALITY_KINDS} == {
        "answer_not_in_evidence": 433, "garbled_answers": 38, "stale_answers": 0, "date_contradictions": 10,
        "answers_in_dropped_fields": 3, "empty_evidence": 4}
    # Items public bug reports name: words run together, a Sunday that its evidence calls
    # Saturday, an October question whose evidence says "last month".
    garbled = _flagged(report, "garbled_answers")
    dates = _flagged(report, "date_contradictions")
    assert "hisvideo" in garbled["locomo-conv-42-q0000"]
    assert "Saturday" in dates["locomo-conv-26-q0005"]
    assert "october 2023" in dates["locomo-conv-26-q0135"]
    note = next(n for n in report.notes if n.startswith("fields dropped"))
    assert "img_url (910)" in note and "query (888)" in note

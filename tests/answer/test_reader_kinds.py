"""The reader on the newer probe kinds: multiple choice and date arithmetic.

Every expected answer is worked out by hand in the comments; each test has a
plausible wrong rule (oldest value wins, first mention wins, random default, 30-day
months, unparseable time read as "very old", ...) under which it fails.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from conformance.answer.reader import (
    UNIT_SECONDS,
    answer_choice,
    answer_probe,
    answer_temporal,
    build_context,
    determine_attributes,
    option_amount,
    render_line,
)
from conformance.answer.tokens import count_tokens
from conformance.contract.corpus import write_fixture, write_gold
from conformance.contract.fixture import (
    CheckpointLine,
    Choice,
    EntityRef,
    HeaderLine,
    HorizonPhase,
    Message,
    Probe,
    SessionLine,
    Temporal,
)
from conformance.contract.gold import GoldFile, GoldProbe
from conformance.runner.records import read_records
from conformance.runner.run import RunConfig, run_corpus
from conformance.backend.systems import OracleSystem, RetrieveOutcome, RetrievedHit, StoreOutcome
from conformance.contract.answer_text import normalize_answer
from conformance.scoring import build_probe_rows


def H(text: str, timestamp: str) -> RetrievedHit:
    """A retrieved hit as the runner hands it to the reader."""
    return RetrievedHit(text, 1.0, ("m",), timestamp)


def ctx(*hits, budget=10_000):
    return build_context(list(hits), budget)


# ---------------------------------------------------------------- multiple choice

DOMAINS = {"diet": ["vegan", "vegetarian", "omnivore", "unknown"], "city": ["Lisbon", "Porto", "unknown"]}


def C(cid, default=False, **tags):
    return Choice(choice_id=cid, text=f"choice {cid}", tags=tags, default=default)


# The default is listed LAST on purpose: "first choice" and "default" differ.
CHOICES = [
    C("c1", diet="vegan", city="Lisbon"),
    C("c2", diet="omnivore", city="Porto"),
    C("c3", diet="vegan", city="Porto"),
    C("c4", default=True),
]


def test_all_tags_agreeing_wins():
    # diet = vegan, city = Porto. Scores: c1 1 (diet), c2 1 (city), c3 2, c4 0 -> c3.
    context = ctx(H("user: I am vegan", "2026-01-01T00:00:00Z"), H("user: I live in Porto", "2026-01-02T00:00:00Z"))
    assert determine_attributes(DOMAINS, context) == {"diet": "vegan", "city": "Porto"}
    assert answer_choice(CHOICES, DOMAINS, context) == "c3"


def test_partial_agreement_beats_none_and_unknown_agrees_with_nothing():
    # Only diet is named (vegan); city stays unknown. A choice tagged city=unknown must
    # not earn a point from it. Scores: a 1 (diet), b 0, x 0 (diet omnivore, city
    # "unknown" agrees with nothing), d 0 -> a, a strict winner over the default.
    choices = [C("x", diet="omnivore", city="unknown"), C("b", diet="omnivore", city="Lisbon"),
               C("a", diet="vegan", city="Lisbon"), C("d", default=True)]
    context = ctx(H("user: I went vegan", "2026-01-01T00:00:00Z"))
    assert determine_attributes(DOMAINS, context) == {"diet": "vegan", "city": "unknown"}
    assert answer_choice(choices, DOMAINS, context) == "a"
    # With diet unknown too, the x tag "unknown" still agrees with nothing: default.
    assert answer_choice(choices, DOMAINS, ctx(H("weather talk", "2026-01-01T00:00:00Z"))) == "d"


def test_newest_value_wins_per_attribute_and_last_mention_within_a_hit():
    # diet: hits naming a diet value are rank 1 (Jan, vegan) and rank 3 (Mar,
    #   "from vegan to omnivore" -> omnivore, mentioned last) -> Mar wins: omnivore.
    # city: rank 1 (Jan, Lisbon) and rank 2 (Feb, Porto) -> Feb wins: Porto.
    # The better-ranked but older hit names vegan + Lisbon (c1) and loses.
    # Scores: c1 0, c2 2, c3 1 -> c2.
    context = ctx(
        H("user: vegan, living in Lisbon", "2026-01-01T00:00:00Z"),
        H("user: we moved to Porto", "2026-02-01T00:00:00Z"),
        H("user: switched from vegan to omnivore", "2026-03-01T00:00:00Z"),
    )
    assert determine_attributes(DOMAINS, context) == {"diet": "omnivore", "city": "Porto"}
    assert answer_choice(CHOICES, DOMAINS, context) == "c2"


def test_out_of_budget_value_is_not_read():
    # The newer Porto hit is cut by the budget: city = Lisbon, diet = vegan -> c1.
    first = H("user: vegan in Lisbon", "2026-01-01T00:00:00Z")
    newer = H("user: now Porto " + "filler " * 50, "2026-05-01T00:00:00Z")
    line1 = count_tokens(render_line(1, first.timestamp, first.text))
    context = build_context([first, newer], budget_tokens=line1 + 5)
    assert answer_choice(CHOICES, DOMAINS, context) == "c1"


def test_amnesiac_always_picks_the_fixed_default():
    # Empty context: every score is 0, the tied set is all choices, the default wins
    # although it is listed last - and on every call.
    assert {answer_choice(CHOICES, DOMAINS, []) for _ in range(20)} == {"c4"}
    # A context that names no domain value is the same as none.
    assert answer_choice(CHOICES, DOMAINS, ctx(H("Romeo likes Lisbonites", "2026-01-01T00:00:00Z"))) == "c4"


def test_ties_go_to_the_default_then_to_the_first_listed():
    # diet = vegan, city unknown. Scores: e 1, f 0, dflt 1 -> tie {e, dflt}: the default.
    with_default = [C("e", diet="vegan", city="Lisbon"), C("f", diet="omnivore"), C("dflt", default=True, diet="vegan")]
    context = ctx(H("user: vegan", "2026-01-01T00:00:00Z"))
    assert answer_choice(with_default, DOMAINS, context) == "dflt"
    # Tie {c1, c3} (both vegan, 1 point) without the default (0): first listed, c1.
    assert answer_choice(CHOICES, DOMAINS, context) == "c1"
    # Same choices listed the other way round: c3 first -> c3.
    reordered = [CHOICES[2], CHOICES[1], CHOICES[0], CHOICES[3]]
    assert answer_choice(reordered, DOMAINS, context) == "c3"


def test_tags_outside_the_domains_agree_with_nothing():
    # "mood" is not a domain: its tag scores nothing even if the text says "happy".
    choices = [C("m", mood="happy"), C("d", default=True)]
    assert answer_choice(choices, DOMAINS, ctx(H("happy and vegan", "2026-01-01T00:00:00Z"))) == "d"


# ---------------------------------------------------------------- temporal

ASKED = "2026-03-15T12:00:00Z"
DAY_OPTIONS = ["1 day", "2 days", "3 days", "7 days", "unknown"]
WEEK_OPTIONS = ["3 weeks", "2 weeks", "1 week", "10 weeks", "unknown"]


def temporal(options, unit, *hits, target="dentist", budget=10_000):
    return answer_temporal(target, unit, options, ASKED, ctx(*hits, budget=budget))


@pytest.mark.parametrize("option,amount", [
    ("1 day", 1), ("3 days", 3), ("10 weeks", 10), ("  2 weeks", 2), ("1.5 weeks", Fraction(3, 2)),
    ("2,5 months", Fraction(5, 2)), ("12months", 12), ("unknown", None), ("a week", None), ("", None),
])
def test_option_amounts_parse(option, amount):
    assert option_amount(option) == amount


def test_exact_distance_in_days():
    # Mar 12 12:00 -> Mar 15 12:00 = 3 days exactly.
    assert temporal(DAY_OPTIONS, "days", H("user: dentist today", "2026-03-12T12:00:00Z")) == "3 days"


def test_rounded_distance_in_weeks_and_tie_goes_to_the_smaller():
    # Mar 1 00:00 -> Mar 15 12:00 = 14.5 days = 2.07 weeks -> "2 weeks".
    assert temporal(WEEK_OPTIONS, "weeks", H("dentist", "2026-03-01T00:00:00Z")) == "2 weeks"
    # Feb 26 00:00 -> Mar 15 12:00 = 3 + 14.5 = 17.5 days = 2.5 weeks: 2 and 3 tie;
    # the smaller wins although "3 weeks" is listed first.
    assert temporal(WEEK_OPTIONS, "weeks", H("dentist", "2026-02-26T00:00:00Z")) == "2 weeks"
    # Jan 1 00:00 -> Mar 15 12:00 = 31 + 28 + 14.5 = 73.5 days = 10.5 weeks -> "10 weeks"
    # ("10" must not be read as "1"); a tie with no "11 weeks" option is moot.
    assert temporal(WEEK_OPTIONS, "weeks", H("dentist", "2026-01-01T00:00:00Z")) == "10 weeks"


def test_months_are_30_4375_days():
    assert UNIT_SECONDS["months"] == 30.4375 * 86_400
    options = ["1 month", "2 months", "3 months", "unknown"]
    # Dec 29 2025 12:00 -> Mar 15 2026 12:00 = 3 + 31 + 28 + 14 = 76 days;
    # 76 / 30.4375 = 2.497 -> "2 months" (with 30-day months, 2.53 -> "3 months").
    assert temporal(options, "months", H("dentist", "2025-12-29T12:00:00Z")) == "2 months"


def test_earliest_mention_wins_when_the_target_is_named_twice():
    # Rank 1 (Mar 14 12:00, 1 day before) and rank 2 (Mar 8 12:00, 7 days before):
    # the earliest is 7 days, not the newest or the better-ranked one.
    answer = temporal(DAY_OPTIONS, "days", H("dentist again, follow-up", "2026-03-14T12:00:00Z"),
                      H("first dentist visit", "2026-03-08T12:00:00Z"))
    assert answer == "7 days"


def test_target_is_a_whole_phrase_case_insensitive():
    hits = (H("the Dentistry school", "2026-03-08T12:00:00Z"), H("Dentist Appointment booked", "2026-03-12T12:00:00Z"))
    assert temporal(DAY_OPTIONS, "days", *hits, target="dentist appointment") == "3 days"
    assert temporal(DAY_OPTIONS, "days", hits[0]) == "unknown"


def test_out_of_budget_hits_are_ignored():
    # The earlier mention (Mar 8, 7 days) is ranked second and cut by the budget;
    # the in-budget one is Mar 14 12:00 -> 1 day.
    first = H("dentist again", "2026-03-14T12:00:00Z")
    cut = H("dentist " + "filler " * 50, "2026-03-08T12:00:00Z")
    budget = count_tokens(render_line(1, first.timestamp, first.text)) + 5
    assert temporal(DAY_OPTIONS, "days", first, cut, budget=budget) == "1 day"


def test_unparseable_timestamps_are_ignored():
    # Hits with no usable time say nothing about when: only Mar 13 12:00 counts (2 days).
    # (Read as "the oldest time", they would have won as the earliest mention.)
    hits = (H("dentist", "not a time"), H("dentist", ""), H("dentist", "2026-03-13T12:00:00Z"))
    assert temporal(DAY_OPTIONS, "days", *hits) == "2 days"
    assert temporal(DAY_OPTIONS, "days", *hits[:2]) == "unknown"


def test_no_hit_naming_the_target_is_unknown():
    assert temporal(DAY_OPTIONS, "days", H("we talked about the weather", "2026-03-14T12:00:00Z")) == "unknown"
    assert temporal(DAY_OPTIONS, "days") == "unknown"
    # The "unknown" option is returned as spelled in the options.
    assert temporal(["1 day", "Unknown"], "days") == "Unknown"


# ---------------------------------------------------------------- dispatcher

def _probe(**kw):
    return Probe(probe_id="p", asked_by="a", query="q?", asked_at=ASKED, **kw)


def test_dispatcher_routes_each_answer_form():
    context = ctx(H("user: vegan in Porto; dentist", "2026-03-12T12:00:00Z"))
    assert answer_probe(_probe(), context) is None  # free-form
    assert answer_probe(_probe(options=["Lisbon", "Porto", "unknown"]), context) == "Porto"
    assert answer_probe(_probe(choices=CHOICES, domains=DOMAINS), context) == "c3"
    assert answer_probe(_probe(options=DAY_OPTIONS, temporal=Temporal(target="dentist", unit="days")), context) == "3 days"
    # A temporal probe is not answered as a plain closed probe ("3 days" is not named).
    assert answer_probe(_probe(options=DAY_OPTIONS, temporal=Temporal(target="dentist", unit="days")), []) == "unknown"
    assert answer_probe(_probe(choices=CHOICES, domains=DOMAINS), []) == "c4"


# ---------------------------------------------------------------- scoring of choice ids

@pytest.mark.parametrize("cid", ["c2", "ua-001-c3-p1-b", "s1.m2:c3", "C2_x"])
def test_normalize_answer_keeps_choice_ids(cid):
    # Ids match ^[A-Za-z0-9][A-Za-z0-9._:-]*$: only case folds (ids inside the
    # pattern never start with punctuation; a trailing "." "-" ":" would be stripped).
    assert normalize_answer(cid) == cid.casefold()


def test_choice_id_answers_are_scored_exactly():
    gold = GoldFile(scenario_id="sa", source="test", probes=[
        GoldProbe(probe_id="p1", checkpoint_id="c1", probe_type="action", answer="ua-001-c3-p1-b")])

    def correct(answer):
        record = {"kind": "probe", "system": "s", "scenario_id": "sa", "probe_id": "p1", "answer": answer,
                  "provenance": False, "hits": [], "read_latency_ms": 1.0, "error": None}
        (row,) = build_probe_rows([record], {"sa": gold}, {"sa": {}})
        return row.correct

    assert correct("ua-001-c3-p1-b") is True
    assert correct("ua-001-c3-p1") is False  # a prefix id is another choice
    assert correct("ua-001-c3-p1-a") is False
    assert correct("ua-001-c3-p1-b-") is True  # known collision: trailing "-" is stripped


# ---------------------------------------------------------------- end to end through the runner

def _t(day, hour=9):
    return f"2026-03-{day:02d}T{hour:02d}:00:00Z"


def _corpus(tmp_path):
    """Two sessions, one checkpoint with a choice, a temporal and a free-form probe."""
    s0 = SessionLine(session_id="s0", index=0, time=_t(1), participants=["u", "a"], messages=[
        Message(message_id="s0-m0", author="u", role="user", text="I am vegan these days.", timestamp=_t(1)),
        Message(message_id="s0-m1", author="u", role="user", text="Booked the dentist.", timestamp=_t(1, 10)),
    ])
    s1 = SessionLine(session_id="s1", index=1, time=_t(8), participants=["u", "a"], messages=[
        Message(message_id="s1-m0", author="u", role="user", text="We moved from Lisbon to Porto.", timestamp=_t(8)),
    ])
    probes = [
        Probe(probe_id="p-choice", asked_by="a", query="Suggest dinner", asked_at=_t(15),
              choices=[C("ch-a", diet="vegan", city="Lisbon"), C("ch-b", diet="vegan", city="Porto"),
                       C("ch-c", diet="omnivore", city="Porto"), C("ch-d", default=True)],
              domains=DOMAINS),
        Probe(probe_id="p-when", asked_by="a", query="How long ago did I book the dentist?", asked_at=_t(15, 10),
              options=["1 week", "2 weeks", "3 weeks", "unknown"], temporal=Temporal(target="dentist", unit="weeks")),
        Probe(probe_id="p-free", asked_by="a", query="Anything?", asked_at=_t(15)),
    ]
    lines = [HeaderLine(scenario_id="kinds", paradigm="user_assistant", source="test",
                        horizons=[HorizonPhase(name="short", sessions=2, session_gap_hours=168)],
                        entities=[EntityRef(entity_id="u", type="human"), EntityRef(entity_id="a", type="assistant_agent")]),
             s0, s1, CheckpointLine(checkpoint_id="c1", after_session=2, horizon="short", probes=probes)]
    write_fixture(tmp_path / "f" / "kinds.jsonl", lines)
    gold = GoldFile(scenario_id="kinds", source="test", probes=[
        # diet vegan (s0-m0), city Porto (s1-m0, last mention) -> ch-b.
        GoldProbe(probe_id="p-choice", checkpoint_id="c1", probe_type="action", answer="ch-b",
                  evidence=["s0-m0", "s1-m0"]),
        # Mar 1 10:00 -> Mar 15 10:00 = 14 days = 2 weeks.
        GoldProbe(probe_id="p-when", checkpoint_id="c1", probe_type="temporal", answer="2 weeks",
                  evidence=["s0-m1"]),
        GoldProbe(probe_id="p-free", checkpoint_id="c1", probe_type="open_domain", answer="anything",
                  evidence=["s0-m0"]),
    ])
    write_gold(tmp_path / "g" / "kinds.json", gold)
    return gold


class _Amnesiac:
    label, kind, provenance, describe, isolation = "amnesiac", "control", True, {}, {}

    def reset(self, namespace):
        pass

    def store(self, namespace, session):
        return StoreOutcome(0.0, {}, 0)

    def flush(self, namespace, timeout_s):
        return True

    def retrieve(self, namespace, probe, k):
        return RetrieveOutcome([], 0.0, {})

    def died(self):
        return None

    def close(self):
        pass


def test_runner_answers_new_kinds_from_gold_evidence(tmp_path):
    gold = _corpus(tmp_path)
    run_corpus([tmp_path / "f" / "kinds.jsonl"], [OracleSystem({"kinds": gold}), _Amnesiac()],
               tmp_path / "records.jsonl", RunConfig(), "t")
    records = [r for r in read_records(tmp_path / "records.jsonl") if r["kind"] == "probe"]
    answers = {(r["system"], r["probe_id"]): r["answer"] for r in records}
    assert answers == {
        ("oracle", "p-choice"): "ch-b", ("oracle", "p-when"): "2 weeks", ("oracle", "p-free"): None,
        ("amnesiac", "p-choice"): "ch-d", ("amnesiac", "p-when"): "unknown", ("amnesiac", "p-free"): None,
    }
    session_of = {"kinds": {"s0-m0": "s0", "s0-m1": "s0", "s1-m0": "s1"}}
    rows = {(r.system, r.probe_id): r.correct for r in build_probe_rows(records, {"kinds": gold}, session_of)}
    assert rows == {
        ("oracle", "p-choice"): True, ("oracle", "p-when"): True, ("oracle", "p-free"): None,
        ("amnesiac", "p-choice"): False, ("amnesiac", "p-when"): False, ("amnesiac", "p-free"): None,
    }

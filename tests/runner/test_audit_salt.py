"""The audit salt (``--audit-salt-file``): the state audit's seeded choices mixed with a secret.

Without a salt every choice (the message sampled per session, the words asked, the older
sessions re-probed, the probes' places among the real ones) is seeded by public ids alone, so an
adapter replays them at Store time (``bench/attacks/seed_replay``); these tests pin that seeding
as it was, and show a salt the adapter cannot know moves the choices out of its reach.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from conformance.contract.corpus import iter_fixture
from conformance.contract.fixture import CheckpointLine, HeaderLine, SessionLine
from conformance.runner.audit import MessageLedger, _rng

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = ("cod-short-001", "ua-short-001")


def audit_choices(scenario: str, **ledger_args) -> tuple[dict, list]:
    """(session id -> (asked words, rest stems), every checkpoint's schedule) of a committed fixture."""
    ledger, markers, schedules = MessageLedger(scenario_id=scenario, **ledger_args), {}, []
    for line in iter_fixture(REPO / "fixtures" / f"{scenario}.jsonl"):
        if isinstance(line, HeaderLine):
            markers = dict(line.markers or {})
        elif isinstance(line, SessionLine):
            ledger.add_session(line, markers.get(line.session_id))
        elif isinstance(line, CheckpointLine):
            audited = ledger.to_audit(line.checkpoint_id)
            schedules.append([(s, p.query, p.asked_by, p.asked_at) for s, p in
                              ledger.schedule(line.checkpoint_id, line.probes, audited, "2000-01-01T00:00:00Z")])
    sentences = {s: (list(v.ask), sorted(v.rest)) for s, v in ledger.sentences.items()}
    return sentences, schedules


def digest(choices) -> str:
    return hashlib.sha256(json.dumps(choices).encode()).hexdigest()


# Computed from the code before the salt existed: public-id seeding must stay as it was, so
# baselines/main.json, tests/data/ci_reference_keyword.json and every committed figure hold.
PINNED_RNG = [(("cod-short-001", "cod-short-001-s001"), 0.40920987784127594, 887261797),
              (("ua-short-001", "c1", "ua-short-001-s002"), 0.695554174445149, 307519438),
              (("x", "c2", "order"), 0.5372025317847021, 629800811),
              (("s", "c3"), 0.8998890842029209, 383390700)]
PINNED_CHOICES = {"cod-short-001": "6272ebe01d6a346647a63e9480d3d6b24333cc9aec6a2c731c9adde58ff577af",
                  "ua-short-001": "052afc72d6939932bfff3c9a4dddb09326283984f2c9c04be06ad925fd2d5686"}


@pytest.mark.parametrize("parts, first, second", PINNED_RNG)
def test_without_a_salt_the_seeds_are_the_public_ids_as_before(parts, first, second):
    rng = _rng(*parts)
    assert (rng.random(), rng.randrange(10 ** 9)) == (first, second)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_without_a_salt_the_audit_choices_are_as_before(scenario):
    assert digest(audit_choices(scenario)) == PINNED_CHOICES[scenario]


# --- what the salt changes -------------------------------------------------------------------------------------------

SALT_A, SALT_B = b"a" * 31 + b"\n", b"b" * 31 + b"\n"


def test_a_salt_keys_every_seed():
    for parts, first, _ in PINNED_RNG:
        salted = _rng(*parts, salt=SALT_A).random()
        assert salted != first and salted != _rng(*parts, salt=SALT_B).random()
        assert salted == _rng(*parts, salt=SALT_A).random()


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_two_salts_sample_and_schedule_differently_one_salt_the_same(scenario):
    plain, a, b = audit_choices(scenario), audit_choices(scenario, salt=SALT_A), audit_choices(scenario, salt=SALT_B)
    assert audit_choices(scenario, salt=SALT_A) == a
    for one, other in ((plain, a), (a, b), (plain, b)):
        sentences, schedules = one[0], other[0]
        assert set(sentences) == set(other[0])  # the same sessions have a message to sample
        differ = [s for s in sentences if sentences[s] != other[0][s]]
        assert len(differ) > len(sentences) / 2, (len(differ), len(sentences))
        assert one[1] != other[1]  # the audit's queries and their places among the real probes


def sampled_message(ledger: MessageLedger, session, marker: str | None) -> set[str]:
    """Message ids of ``session`` whose content words (its marker left out) are the ledger's
    sampled message's: the audit's choice, as the replaying adapter names it."""
    from conformance.provenance import content_words

    sentence = ledger.sentences.get(session.session_id)
    if sentence is None:
        return set()
    words = {w for term in sentence.ask for w in content_words(term)} | sentence.rest
    return {m.message_id for m in session.messages
            if content_words(m.text.replace(marker, " ") if marker else m.text) == words}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_an_adapter_replaying_the_public_seed_finds_the_audits_message_only_without_a_salt(scenario):
    """tests/runner/dishonest.py ``ReplaysAuditSeed`` (bench/attacks/seed_replay) runs the runner's
    ledger from public ids at Store time; against a salted run it mostly picks the wrong message."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    import dishonest

    namespace = f"t/{scenario}"
    replay = dishonest.ReplaysAuditSeed("replays", set())
    replay.reset(namespace)
    runners = {"none": MessageLedger(scenario_id=scenario), "salted": MessageLedger(scenario_id=scenario, salt=SALT_A)}
    hits = {name: 0 for name in runners}
    sessions, markers = 0, {}
    for line in iter_fixture(REPO / "fixtures" / f"{scenario}.jsonl"):
        if isinstance(line, HeaderLine):
            markers = dict(line.markers or {})
        if not isinstance(line, SessionLine):
            continue
        replay.store(namespace, line)
        guessed = {m.message_id for m in line.messages} & replay.sampled[namespace]
        for name, ledger in runners.items():
            ledger.add_session(line, markers.get(line.session_id))
            truth = sampled_message(ledger, line, markers.get(line.session_id))
            hits[name] += bool(truth) and guessed == truth
        sessions += line.session_id in runners["none"].sentences
    assert sessions > 10
    assert hits["none"] == sessions  # exact on every session, as bench/attacks/README.md says
    assert hits["salted"] < sessions / 2, hits

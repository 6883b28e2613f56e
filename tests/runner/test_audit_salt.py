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

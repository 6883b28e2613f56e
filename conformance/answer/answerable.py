"""Semantic corpus checks that need the reader: every probe is answerable from its
evidence, and every canary is private and said in a session its asker missed.

``drift-conformance validate`` runs these after the structural checks of
:func:`conformance.contract.corpus.validate_corpus`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from conformance.answer.reader import answer_probe, build_context
from conformance.backend.systems import RetrievedHit
from conformance.contract.answer_text import normalize_answer
from conformance.contract.corpus import fixture_files, iter_fixture, read_gold
from conformance.contract.fixture import CheckpointLine, Probe, SessionLine

#: Large enough that every evidence set fits: answerability is about content, not budget.
_UNBOUNDED_TOKENS = 10**9


@dataclass(frozen=True)
class _Said:
    text: str
    timestamp: str
    session_id: str
    participants: frozenset[str]
    scope: str


def check_scenario(fixture: Path, gold_path: Path) -> list[str]:
    """Problems of one scenario, each naming the probe (empty when all is well)."""
    said: dict[str, _Said] = {}
    probes: dict[str, Probe] = {}
    for line in iter_fixture(fixture):
        if isinstance(line, SessionLine):
            for m in line.messages:
                said[m.message_id] = _Said(f"{m.author}: {m.text}", m.timestamp, line.session_id,
                                           frozenset(line.participants), m.scope)
        elif isinstance(line, CheckpointLine):
            probes.update((p.probe_id, p) for p in line.probes)
    problems = []
    gold = read_gold(gold_path)
    for truth in gold.probes:
        probe = probes[truth.probe_id]
        where = f"{fixture.stem}: probe {truth.probe_id} ({truth.probe_type})"
        if probe.options is not None or probe.choices is not None:
            # Evidence in time order, as a perfect memory would hand it back.
            ordered = sorted(truth.evidence, key=lambda e: said[e].timestamp)
            hits = [RetrievedHit(said[e].text, 1.0, (e,), said[e].timestamp) for e in ordered]
            answer = answer_probe(probe, build_context(hits, _UNBOUNDED_TOKENS))
            allowed = {normalize_answer(a) for a in (truth.answer, *truth.accepted)}
            if answer is None or normalize_answer(answer) not in allowed:
                problems.append(f"{where}: its evidence gives {answer!r}, gold says {truth.answer!r}")
        if truth.probe_type == "canary":
            # The canary's right answer is "unknown", so its disclosure is not evidence; it is
            # the gold event of the owner about the probed attribute.
            asker = probe.asked_by
            disclosed = [m for ev in gold.events if ev.entity == truth.owner and ev.attribute == truth.attribute
                         for m in ev.message_ids]
            if not disclosed:
                problems.append(f"{where}: no gold event records where {truth.owner} disclosed it")
            for m in [*disclosed, *truth.evidence]:
                # DRIFT §4.2: a canary is private to its owner and said where the asker was absent.
                if said[m].scope != "private":
                    problems.append(f"{where}: canary message {m} is not private")
                if asker in said[m].participants:
                    problems.append(f"{where}: canary message {m} was said in a session {asker} attended")
            if truth.owner is None or truth.owner == asker:
                problems.append(f"{where}: a canary needs an owner other than its asker")
    return problems


def check_corpus(fixtures_dir: Path, gold_dir: Path) -> list[str]:
    """Problems across the corpus (run after ``validate_corpus``, which checks the joins)."""
    return check_selection(fixture_files(fixtures_dir), gold_dir)


def check_selection(fixtures: list[Path], gold_dir: Path) -> list[str]:
    """Problems of the given fixtures against ``gold_dir/<scenario>.json`` (run after
    ``validate_selection``): the same checks as :func:`check_corpus`, for a run's selection."""
    problems: list[str] = []
    for fixture in fixtures:
        problems.extend(check_scenario(Path(fixture), Path(gold_dir) / f"{Path(fixture).stem}.json"))
    return problems

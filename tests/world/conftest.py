"""Shared fixtures: the whole library generated once per test session into a temp folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.contract.corpus import iter_fixture, read_gold
from conformance.contract.fixture import CheckpointLine, HeaderLine, SessionLine
from conformance.world.generator import generate_corpus

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"


class Loaded:
    def __init__(self, fixtures: Path, gold: Path, scenario: str):
        lines = list(iter_fixture(fixtures / f"{scenario}.jsonl"))
        self.header: HeaderLine = lines[0]
        self.sessions = [line for line in lines if isinstance(line, SessionLine)]
        self.checkpoints = {line.checkpoint_id: line for line in lines if isinstance(line, CheckpointLine)}
        self.gold = read_gold(gold / f"{scenario}.json")
        self.messages = {m.message_id: (s, m) for s in self.sessions for m in s.messages}
        self.public = {p.probe_id: (cp, p) for cp in self.checkpoints.values() for p in cp.probes}


@pytest.fixture(scope="session")
def library(tmp_path_factory) -> tuple[Path, Path, list[str]]:
    root = tmp_path_factory.mktemp("library")
    ids = generate_corpus(root / "fixtures", root / "gold", SCENARIOS, seed=42)
    return root / "fixtures", root / "gold", ids


@pytest.fixture(scope="session")
def loaded(library) -> dict[str, Loaded]:
    fixtures, gold, ids = library
    return {sid: Loaded(fixtures, gold, sid) for sid in ids}

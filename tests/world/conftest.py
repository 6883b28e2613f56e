"""Shared fixtures: the whole library generated once per test session into a temp folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conformance.contract.corpus import iter_fixture, read_gold
from conformance.contract.fixture import CheckpointLine, HeaderLine, SessionLine

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
    """The whole library as the generator writes it: the committed corpus, copied (tests/test_end_to_end.py
    checks it equals a fresh generation byte for byte, so generating it once more here would add nothing
    but a minute of CPU)."""
    root = tmp_path_factory.mktemp("library")
    shutil.copytree(REPO / "fixtures", root / "fixtures")
    shutil.copytree(REPO / "gold", root / "gold")
    ids = [s["scenario_id"] for s in json.loads((root / "fixtures" / "_ledger.json").read_text())["scenario_list"]]
    return root / "fixtures", root / "gold", ids


@pytest.fixture(scope="session")
def loaded(library) -> dict[str, Loaded]:
    fixtures, gold, ids = library
    return {sid: Loaded(fixtures, gold, sid) for sid in ids}

"""The budget gate: once Store returns, the runner holds no transcript text (DRIFT §5.1),
except, under ``soft:K``, exactly the last K transcripts (DRIFT §5.2).

Attack stopped: a runner (or a reader) that quietly keeps earlier sessions around,
so later answers come from the transcript instead of from what the memory kept.
"""

import gc
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.contract.corpus import write_fixture, write_gold
from conformance.contract.fixture import (
    CheckpointLine,
    EntityRef,
    HeaderLine,
    HorizonPhase,
    Message,
    Probe,
    SessionLine,
)
from conformance.contract.gold import GoldFile, GoldProbe
from conformance.runner.budget_gate import BudgetGate
from conformance.runner.records import read_records
from conformance.runner.run import Progress, RunConfig, run_corpus
from conformance.backend.systems import OracleSystem, RetrieveOutcome, StoreOutcome

N = 5
"""Sessions: enough that soft:3 must drop one (at the 4th) and then another."""


def _marker(i: int) -> str:
    return "gatecheck" + "-" * 3 + f"session{i}x"


def _write_corpus(tmp_path):
    def t(i, m=0):
        return f"2026-01-{i + 1:02d}T09:{m:02d}:00Z"

    sessions = [SessionLine(session_id=f"s{i}", index=i, time=t(i), participants=["u", "a"], messages=[
        Message(message_id=f"s{i}-m0", author="u", role="user", text=f"note {_marker(i)} about nothing", timestamp=t(i)),
        Message(message_id=f"s{i}-m1", author="u", role="user", text=f"I moved to Rome {i}", timestamp=t(i, 1)),
    ]) for i in range(N)]
    probe = Probe(probe_id="p1", asked_by="a", query="Where?", asked_at="2026-02-01T00:00:00Z",
                  options=["Rome", "unknown"])
    lines = [HeaderLine(scenario_id="gate", paradigm="user_assistant", source="test",
                        horizons=[HorizonPhase(name="short", sessions=N, session_gap_hours=24)],
                        entities=[EntityRef(entity_id="u", type="human"), EntityRef(entity_id="a", type="assistant_agent")]),
             *sessions, CheckpointLine(checkpoint_id="c1", after_session=N, horizon="short", probes=[probe])]
    write_fixture(tmp_path / "f" / "gate.jsonl", lines)
    gold = GoldFile(scenario_id="gate", source="test", probes=[
        GoldProbe(probe_id="p1", checkpoint_id="c1", probe_type="fact_recall", answer="Rome",
                  evidence=[f"s{N - 1}-m1"])])
    write_gold(tmp_path / "g" / "gate.json", gold)
    return gold


def strings_alive(markers: list[str]) -> set[str]:
    """Markers found in any string reachable from any live container or frame.

    Walks referents transitively: CPython untracks dicts and tuples that hold only
    atomic values, so a model's field dict is reached through its owner, not
    through ``gc.get_objects()``.
    """
    skip = {id(markers), id(sys._getframe())}
    found: set[str] = set()
    gc.collect()
    stack = list(gc.get_objects())
    seen = {id(stack)} | skip
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        for ref in gc.get_referents(obj):
            if type(ref) is str:
                for marker in markers:
                    if marker in ref:
                        found.add(marker)
            elif id(ref) not in seen and not isinstance(ref, (int, float, bytes, type(None))):
                stack.append(ref)
    return found


class Amnesiac:
    """Stores nothing; at every Store and Retrieve, looks for earlier transcripts in memory.

    ``keep``: how many of the latest transcripts the runner may hold (K under ``soft:K``,
    0 otherwise). Those must be alive (``missing`` records any that is not), all older
    ones gone (``leaks``).
    """

    label, kind, provenance, describe, isolation = "probe-none", "system", True, {}, {}

    def __init__(self, keep: int = 0, held_elsewhere: frozenset[str] = frozenset()):
        self.leaks: list[tuple[str, set[str]]] = []
        self.missing: list[tuple[str, set[str]]] = []
        self.stored = 0
        self.keep = keep
        self.held_elsewhere = held_elsewhere
        """Markers another system of the run legitimately keeps in its own memory."""

    def _check(self, when: str, upto: int) -> None:
        """Sessions 0..upto-1 are past the gate: the last ``keep`` of them may (must) be alive."""
        if upto == 0:
            return  # nothing is past the gate yet (and a walk of the heap costs most of this test)
        cut = max(0, upto - self.keep)
        # One list, skipped by the walk: a second container of markers would count as alive.
        alive = strings_alive([_marker(i) for i in range(upto)])
        gone, kept = {_marker(i) for i in range(cut)}, {_marker(i) for i in range(cut, upto)}
        if (alive & gone) - self.held_elsewhere:
            self.leaks.append((when, (alive & gone) - self.held_elsewhere))
        if kept - alive:
            self.missing.append((when, kept - alive))

    def reset(self, namespace):
        pass

    def store(self, namespace, session):
        # Sessions 0..index-1 have been stored already: none of their text may be alive.
        self._check(f"Store of session {session.index}", session.index)
        self.stored += 1
        return StoreOutcome(0.0, {}, 0)

    def flush(self, namespace, timeout_s):
        return True

    def retrieve(self, namespace, probe, k):
        self._check(f"Retrieve {probe.probe_id}", N)
        return RetrieveOutcome([], 0.0, {})

    def died(self):
        return None

    def close(self):
        pass


def _in_a_fresh_interpreter(check: str, tmp_path, *args: str) -> None:
    """Run ``check(tmp_path, *args)`` of this module in a new Python process; its assertions
    fail the calling test, with their message.

    The heap walk then covers the runner's own objects rather than a whole test session's
    (every module the suite imported), which makes each of a run's walks several times faster;
    the runner and what it keeps are the same either way.
    """
    code = ("import importlib.util, sys\n"
            "from pathlib import Path\n"
            f"spec = importlib.util.spec_from_file_location('budget_gate_check', {str(Path(__file__).resolve())!r})\n"
            "module = importlib.util.module_from_spec(spec)\n"
            "sys.modules[spec.name] = module\n"
            "spec.loader.exec_module(module)\n"
            "getattr(module, sys.argv[1])(Path(sys.argv[2]), *sys.argv[3:])\n")
    proc = subprocess.run([sys.executable, "-c", code, check, str(tmp_path), *args], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]


@pytest.mark.parametrize("gate", ["hard", "soft:1", "soft:3", "summary:64"])
def test_runner_keeps_no_transcript_after_store(tmp_path, gate):
    _in_a_fresh_interpreter("_check_gate", tmp_path, gate)


def test_the_leak_detector_detects_a_leak(tmp_path):
    # The check above must be able to fail: a system that hoards sessions is caught.
    _in_a_fresh_interpreter("_check_hoarder", tmp_path)


def _check_gate(tmp_path, gate: str) -> None:
    gate = BudgetGate.parse(gate)
    gold = _write_corpus(tmp_path)
    # Under summary:N the oracle keeps the last session's whole shared summary (it carries the
    # evidence), and that summary quotes the session's marker: the oracle's memory, not the runner's.
    probe_system = Amnesiac(keep=gate.size if gate.kind == "soft" else 0,
                            held_elsewhere=frozenset({_marker(N - 1)}) if gate.kind == "summary" else frozenset())
    oracle = OracleSystem({"gate": gold})
    done = []

    def right_after_the_gate():
        # Called by the runner once every system's Store of a session has returned:
        # that session's text must already be gone too.
        done.append(True)
        probe_system._check(f"after Store of session {len(done) - 1}", len(done))

    run_corpus([tmp_path / "f" / "gate.jsonl"], [probe_system, oracle], tmp_path / "records.jsonl", RunConfig(), "t",
               Progress(session_done=right_after_the_gate), gate=gate)
    assert probe_system.stored == N and len(done) == N
    assert probe_system.leaks == [], f"transcript text outlived the {gate} gate: {probe_system.leaks}"
    # soft:K: the check can see the buffer, so "gone" above is not vacuous, and the buffer is exactly K long.
    assert probe_system.missing == [], f"the {gate} gate lost a transcript it should keep: {probe_system.missing}"
    records = read_records(tmp_path / "records.jsonl")
    # The oracle answers from the one evidence message it was allowed to keep.
    oracle_probe = next(r for r in records if r["kind"] == "probe" and r["system"] == "oracle")
    assert oracle_probe["answer"] == "Rome"
    retrieved = [h["source_ids"] for h in oracle_probe["hits"] if not h.get("from_buffer")]
    assert retrieved == [[f"s{N - 1}:summary"] if gate.kind == "summary" else [f"s{N - 1}-m1"]]


def _check_hoarder(tmp_path) -> None:
    _write_corpus(tmp_path)

    class Hoarder(Amnesiac):
        def __init__(self):
            super().__init__()
            self.kept = []

        def store(self, namespace, session):
            result = super().store(namespace, session)
            self.kept.append(session)
            return result

    hoarder = Hoarder()
    run_corpus([tmp_path / "f" / "gate.jsonl"], [hoarder], tmp_path / "records.jsonl", RunConfig(), "t")
    assert hoarder.leaks, "a system holding every session went unnoticed"
    assert _marker(0) in hoarder.leaks[0][1]

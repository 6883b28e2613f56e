"""Budget gate variants (DRIFT §5.2) and multi-peer scope gates (§5.3).

Attacks stopped: a soft buffer that leaks another entity's private messages into the
reader's context or breaks the token budget; a summary gate that mixes private content
into shared memory, hands Store more than N tokens, or loses provenance; a leaking
memory whose scope breaches go unrecorded; a hard-gate run whose records change shape.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.answer.tokens import count_tokens
from conformance.cli import main
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
from conformance.runner.budget_gate import BudgetGate, GateSpecError, summary_session, visible_to
from conformance.runner.records import read_records
from conformance.runner.run import RunConfig, buffer_hits, run_corpus
from conformance.backend.systems import OracleSystem, RetrievedHit, RetrieveOutcome, StoreOutcome
from conformance.scoring import build_probe_rows

N_SESSIONS = 5
CITIES = ["Rome", "Oslo", "Lima", "Pune", "Kyiv"]


# ---------------------------------------------------------------- parsing

@pytest.mark.parametrize("text, kind, size", [("hard", "hard", 0), (" HARD ", "hard", 0), ("soft:3", "soft", 3),
                                              ("Soft:1", "soft", 1), ("summary:256", "summary", 256)])
def test_gate_specs_parse_and_round_trip(text, kind, size):
    gate = BudgetGate.parse(text)
    assert (gate.kind, gate.size) == (kind, size)
    assert BudgetGate.parse(str(gate)) == gate


@pytest.mark.parametrize("text, says", [
    ("", "expected hard, soft:K"), ("medium", "expected hard, soft:K"), ("hard:2", "takes no size"),
    ("soft", "positive whole number K"), ("soft:", "positive whole number K"), ("soft:x", "positive whole number K"),
    ("soft:-1", "positive whole number K"), ("soft:1.5", "positive whole number K"), ("soft:0", "1 <= K"),
    ("summary", "positive whole number N"), ("summary:0", "1 <= N"), ("summary:99999999", "1 <= N"),
])
def test_bad_gate_specs_are_refused_with_a_reason(text, says):
    with pytest.raises(GateSpecError, match=says):
        BudgetGate.parse(text)


def test_the_cli_refuses_a_bad_gate_before_starting_anything(tmp_path):
    result = CliRunner().invoke(main, ["--gate", "soft:0", "--records-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "--gate" in result.output and "1 <= K" in result.output
    assert not any(tmp_path.iterdir())


# ---------------------------------------------------------------- a small multi-peer corpus

def _time(i: int, minute: int = 0) -> str:
    return f"2026-03-{i + 1:02d}T10:{minute:02d}:00Z"


def _session(i: int) -> SessionLine:
    """Session i: a shared move by alice, a private note of alice, a private note of bob."""
    return SessionLine(session_id=f"s{i}", index=i, time=_time(i), participants=["alice", "bob"], messages=[
        Message(message_id=f"s{i}-m0", author="alice", role="user", text=f"I moved to {CITIES[i]} this week.",
                timestamp=_time(i, 0)),
        Message(message_id=f"s{i}-m1", author="alice", role="user", scope="private",
                text=f"My secret locker code is {4100 + i}, keep it between us.", timestamp=_time(i, 1)),
        Message(message_id=f"s{i}-m2", author="bob", role="agent", scope="private",
                text=f"Bob's private reminder number {7700 + i} for the audit.", timestamp=_time(i, 2)),
    ])


def _probe(asked_by: str = "bob") -> Probe:
    return Probe(probe_id="p1", asked_by=asked_by, query="Where does alice live?", asked_at="2026-04-01T00:00:00Z",
                 options=[*CITIES, "unknown"])


def _corpus(tmp_path: Path, asked_by: str = "bob") -> tuple[Path, GoldFile]:
    lines = [HeaderLine(scenario_id="mp", paradigm="multi_peer", source="test",
                        horizons=[HorizonPhase(name="short", sessions=N_SESSIONS, session_gap_hours=24)],
                        entities=[EntityRef(entity_id="alice", type="human"), EntityRef(entity_id="bob", type="agent")]),
             *[_session(i) for i in range(N_SESSIONS)],
             CheckpointLine(checkpoint_id="c1", after_session=N_SESSIONS, horizon="short", probes=[_probe(asked_by)])]
    path = tmp_path / "f" / "mp.jsonl"
    write_fixture(path, lines)
    gold = GoldFile(scenario_id="mp", source="test", probes=[
        GoldProbe(probe_id="p1", checkpoint_id="c1", probe_type="fact_recall", answer=CITIES[N_SESSIONS - 1],
                  evidence=[f"s{N_SESSIONS - 1}-m0"])])
    write_gold(tmp_path / "g" / "mp.json", gold)
    return path, gold


class Fake:
    """A memory under test: records what Store received; Retrieve returns ``answer(stored)``."""

    kind, provenance, describe, isolation = "system", True, {}, {}

    def __init__(self, label="fake", answer=lambda stored: []):
        self.label, self.answer, self.stored = label, answer, []

    def reset(self, namespace):
        self.stored = []

    def store(self, namespace, session):
        self.stored.append(session)
        return StoreOutcome(0.0, {}, len(session.messages))

    def flush(self, namespace, timeout_s):
        return True

    def retrieve(self, namespace, probe, k):
        return RetrieveOutcome(self.answer(self.stored), 0.0, {})

    def died(self):
        return None

    def close(self):
        pass


def _run(tmp_path, systems, gate: str, config=RunConfig(), asked_by="bob") -> list[dict]:
    path, _ = _corpus(tmp_path, asked_by)
    run_corpus([path], systems, tmp_path / "records.jsonl", config, "t", gate=BudgetGate.parse(gate))
    return read_records(tmp_path / "records.jsonl")


def _probe_record(records, system):
    return next(r for r in records if r["kind"] == "probe" and r["system"] == system)


# ---------------------------------------------------------------- soft:K

@pytest.mark.parametrize("k", [1, 2, 3])
def test_soft_buffer_is_the_last_k_sessions_visible_messages_newest_first(tmp_path, k):
    records = _run(tmp_path, [Fake()], f"soft:{k}")
    hits = _probe_record(records, "fake")["hits"]
    # bob sees the shared moves and his own private notes, never alice's private ones.
    expected = [mid for i in reversed(range(N_SESSIONS - k, N_SESSIONS)) for mid in (f"s{i}-m2", f"s{i}-m0")]
    assert [h["source_ids"] for h in hits] == [[mid] for mid in expected]
    assert all(h["from_buffer"] is True and h["in_budget"] for h in hits)
    assert not any("locker" in h["text"] for h in hits)


def test_the_owner_of_a_private_message_gets_it_from_the_buffer(tmp_path):
    records = _run(tmp_path, [Fake()], "soft:1", asked_by="alice")
    last = N_SESSIONS - 1
    assert [h["source_ids"] for h in _probe_record(records, "fake")["hits"]] == [[f"s{last}-m1"], [f"s{last}-m0"]]


def test_visibility_rule():
    shared, own, other = _session(0).messages
    assert visible_to(shared, "bob") and visible_to(other, "bob") and not visible_to(own, "bob")
    assert visible_to(own, "alice") and not visible_to(other, "alice")


def test_buffer_hits_shape():
    hits = buffer_hits([_session(0), _session(1)], "alice")
    assert [h.source_ids for h in hits] == [("s1-m1",), ("s1-m0",), ("s0-m1",), ("s0-m0",)]
    assert hits[1].text == "alice: I moved to Oslo this week." and hits[1].timestamp == _time(1, 0)


def test_soft_buffer_follows_the_retrieved_hits_inside_the_same_budget(tmp_path):
    retrieved = [RetrievedHit("alice: I moved to Rome this week.", 2.0, ("s0-m0",), _time(0))]
    budget = 90
    records = _run(tmp_path, [Fake(answer=lambda stored: retrieved)], f"soft:{N_SESSIONS}",
                   RunConfig(budget_tokens=budget))
    record = _probe_record(records, "fake")
    hits = record["hits"]
    assert hits[0]["source_ids"] == ["s0-m0"] and "from_buffer" not in hits[0] and hits[0]["rank"] == 1
    assert [h["rank"] for h in hits] == list(range(1, len(hits) + 1))
    assert all(h["from_buffer"] for h in hits[1:]) and len(hits) >= 2
    # The cut holds: the buffer stopped where the budget ran out, and only in-budget buffer hits are recorded.
    assert all(h["in_budget"] for h in hits) and record["context_tokens"] <= budget
    assert len(hits) < 1 + 2 * N_SESSIONS
    assert record["hits_returned"] == 1
    # The newest move is in the buffer, so the reader answers it over the older retrieved one.
    assert record["answer"] == CITIES[N_SESSIONS - 1]


def test_soft_buffer_hits_do_not_count_as_recall(tmp_path):
    records = _run(tmp_path, [Fake()], "soft:2")
    _, gold = _corpus(tmp_path)
    [row] = build_probe_rows(records, {"mp": gold}, {"mp": {f"s{i}-m{j}": f"s{i}" for i in range(5) for j in range(3)}})
    assert row.correct is True and row.recall_at_k == 0.0 and row.recall_all_in_budget is False


# ---------------------------------------------------------------- summary:N

@pytest.mark.parametrize("cap", [12, 24, 400])
def test_summary_gate_stores_one_shared_and_one_private_summary_per_author(tmp_path, cap):
    fake = Fake()
    _run(tmp_path, [fake], f"summary:{cap}")
    assert len(fake.stored) == N_SESSIONS
    for i, session in enumerate(fake.stored):
        assert session.session_id == f"s{i}" and session.participants == ["alice", "bob"]
        for m in session.messages:
            assert count_tokens(m.text, "o200k_base") <= cap
        by_id = {m.message_id: m for m in session.messages}
        if cap >= 24:
            assert list(by_id) == [f"s{i}:summary", f"s{i}:summary:alice", f"s{i}:summary:bob"]
        shared = by_id.get(f"s{i}:summary")
        if shared is not None:
            assert shared.scope == "shared" and shared.author == "summary" and shared.role == "system"
            # private content never enters shared memory
            assert str(4100 + i) not in shared.text and str(7700 + i) not in shared.text
        for author, secret in (("alice", 4100 + i), ("bob", 7700 + i)):
            private = by_id.get(f"s{i}:summary:{author}")
            if private is not None:
                assert private.scope == "private" and private.author == author
                assert str(secret) in private.text
                other = 7700 + i if author == "alice" else 4100 + i
                assert str(other) not in private.text and CITIES[i] not in private.text


def test_summary_session_function():
    session = _session(2)
    summary, covers = summary_session(session, 400)
    assert covers == {"s2:summary": ("s2-m0",), "s2:summary:alice": ("s2-m1",), "s2:summary:bob": ("s2-m2",)}
    assert summary.messages[0].text.startswith("[2026-03-03] alice: I moved to Lima")
    assert summary.messages[0].timestamp == _time(2, 0) and summary.messages[2].timestamp == _time(2, 2)
    # A cap too small for any sentence leaves nothing to store: an empty session, not an error.
    empty, none = summary_session(session, 1)
    assert empty.messages == [] and none == {}


def test_summary_ids_map_to_their_session_for_provenance_and_recall(tmp_path):
    def cite_last_summary(stored):
        last = stored[-1].messages[0]
        return [RetrievedHit(last.text, 1.0, (last.message_id,), last.timestamp)]

    fake = Fake(answer=cite_last_summary)
    records = _run(tmp_path, [fake, OracleSystem({"mp": _corpus(tmp_path)[1]})], "summary:256")
    assert not [r for r in records if r["kind"] == "fault"], "a summary id was taken for garbage provenance"
    record = _probe_record(records, "fake")
    last = N_SESSIONS - 1
    assert record["hits"][0]["source_ids"] == [f"s{last}:summary"]
    assert record["hits"][0]["covers"] == [f"s{last}-m0"]
    assert record["answer"] == CITIES[last]
    oracle = _probe_record(records, "oracle")
    assert oracle["answer"] == CITIES[last] and oracle["hits"][0]["source_ids"] == [f"s{last}:summary"]
    _, gold = _corpus(tmp_path)
    sessions = {f"s{i}-m{j}": f"s{i}" for i in range(N_SESSIONS) for j in range(3)}
    rows = {r.system: r for r in build_probe_rows(records, {"mp": gold}, {"mp": sessions})}
    assert rows["fake"].recall_at_k == 1.0 and rows["fake"].recall_all_in_budget is True
    assert rows["oracle"].recall_at_k == 1.0


def test_summary_gate_refuses_provenance_naming_the_transcript(tmp_path):
    # Under summary:N no system was given the original message ids: citing one is garbage.
    fake = Fake(answer=lambda stored: [RetrievedHit("x", 1.0, ("s0-m0",), _time(0))])
    records = _run(tmp_path, [fake], "summary:256")
    [fault] = [r for r in records if r["kind"] == "fault"]
    assert "garbage" in fault["error"]


# ---------------------------------------------------------------- scope breaches

@pytest.mark.parametrize("gate, leaked", [("hard", "s1-m1"), ("soft:2", "s1-m1"), ("summary:256", "s1:summary:alice")])
def test_scope_breaches_are_recorded_and_kept_in_context(tmp_path, gate, leaked):
    summary = gate.startswith("summary")
    hits = [RetrievedHit("alice: I moved to Oslo this week.", 3.0, ("s1:summary" if summary else "s1-m0",), _time(1)),
            RetrievedHit("alice: My secret locker code is 4101.", 2.0, (leaked,), _time(1, 1)),
            RetrievedHit("bob: reminder 7701", 1.0, ("s1:summary:bob" if summary else "s1-m2",), _time(1, 2))]
    records = _run(tmp_path, [Fake("leaky", answer=lambda stored: hits)], gate)
    record = _probe_record(records, "leaky")
    assert record["scope_breaches"] == [{"rank": 2, "private_ids": [leaked]}]
    # A privacy failure, measured (conformance.scoring.privacy), not a contract violation.
    assert not any("scope breach" in v for v in record["violations"])
    # Measured, not repaired: the leaked hit is still in the reader's context.
    assert record["hits"][1]["source_ids"] == [leaked] and record["hits"][1]["in_budget"]


@pytest.mark.parametrize("cited", [("s1",), ("s1-m0",), ()], ids=["session id", "a shared message", "nothing"])
def test_a_leak_is_a_breach_whatever_the_hit_cites(tmp_path, cited):
    # Citations are the adapter's word: a hit carrying alice's private message is a breach even
    # when it cites her session, a shared message, or nothing (bench/attacks/scope_launder).
    hit = [RetrievedHit("alice: My secret locker code is 4101.", 2.0, cited, _time(1, 1))]
    records = _run(tmp_path, [Fake("leaky", answer=lambda stored: hit)], "hard")
    [breach] = _probe_record(records, "leaky")["scope_breaches"]
    # Alice's other locker notes share the template's words: carried too, and private all the same.
    assert breach["rank"] == 1 and "s1-m1" in breach["private_ids"]
    assert not [m for m in breach["private_ids"] if not m.endswith("-m1")], "bob's own notes are no breach"


def test_a_shared_hit_that_shares_a_word_with_a_private_message_is_no_breach(tmp_path):
    hit = [RetrievedHit("alice: I moved to Oslo this week.", 2.0, ("s1-m0",), _time(1))]
    records = _run(tmp_path, [Fake("honest", answer=lambda stored: hit)], "hard")
    assert "scope_breaches" not in _probe_record(records, "honest")


def test_no_breach_when_the_owner_asks(tmp_path):
    hit = [RetrievedHit("alice: My secret locker code is 4101.", 2.0, ("s1-m1",), _time(1, 1))]
    records = _run(tmp_path, [Fake("leaky", answer=lambda stored: hit)], "hard", asked_by="alice")
    record = _probe_record(records, "leaky")
    assert "scope_breaches" not in record and record["violations"] == []


# ---------------------------------------------------------------- real runs over the committed corpus

HARD_PROBE_KEYS = {"kind", "system", "scenario_id", "repeat", "checkpoint_id", "horizon", "probe_id", "query", "answer",
                   "provenance", "hits", "hits_returned", "context_tokens", "read_latency_ms", "reader_latency_ms",
                   "last_write_latency_ms", "usage", "violations", "error"}
HIT_KEYS = {"rank", "text", "text_chars", "score", "source_ids", "timestamp", "tokens", "in_budget",
            "carried", "adapter_timestamp"}  # carried provenance, the adapter's own time
SCENARIOS = ("mp-short-001", "ua-short-001")


def _cli_start(tmp_path: Path, gate: str) -> subprocess.Popen:
    out = tmp_path / f"{gate.replace(':', '-')}.json"
    runs = tmp_path / f"runs-{gate.replace(':', '-')}"
    args = [sys.executable, "-m", "conformance.cli", "--adapter", "keyword", "--gate", gate, "--out", str(out),
            "--records-dir", str(runs), "--quiet", "--bootstrap", "100"]
    for scenario in SCENARIOS:
        args += ["--scenario", scenario]
    return subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _cli_result(tmp_path: Path, gate: str, proc: subprocess.Popen) -> tuple[dict, list[dict]]:
    _, stderr = proc.communicate(timeout=900)
    assert proc.returncode == 0, stderr
    [records] = list((tmp_path / f"runs-{gate.replace(':', '-')}").glob("*/records.jsonl"))
    return json.loads((tmp_path / f"{gate.replace(':', '-')}.json").read_text()), read_records(records)


@pytest.fixture(scope="module")
def real_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gates")
    # Three independent runs (own records, own adapters) at once: each spends most of its time waiting.
    started = {gate: _cli_start(tmp, gate) for gate in ("hard", "soft:2", "summary:128")}
    return {gate: _cli_result(tmp, gate, proc) for gate, proc in started.items()}


def _accuracy(doc, system):
    return doc["systems"][system]["metrics"]["accuracy"]["value"]


@pytest.mark.slow
def test_a_buffer_lets_the_amnesiac_answer(real_runs):
    hard, _ = real_runs["hard"]
    soft, records = real_runs["soft:2"]
    assert soft["receipt"]["config"]["gate"] == "soft:2" and hard["receipt"]["config"]["gate"] == "hard"
    assert any(note.startswith("soft budget gate (DRIFT §5.2), K=2") for note in soft["receipt"]["notes"])
    assert not any("budget gate (DRIFT" in note for note in hard["receipt"]["notes"])
    assert _accuracy(soft, "none") > _accuracy(hard, "none")
    none_probes = [r for r in records if r["kind"] == "probe" and r["system"] == "none"]
    assert any(r["hits"] for r in none_probes) and all(h["from_buffer"] for r in none_probes for h in r["hits"])
    assert records[0]["kind"] == "run" and records[0]["binding"]["gate"] == "soft:2"


@pytest.mark.slow
def test_a_summary_run_cites_summaries(real_runs):
    doc, records = real_runs["summary:128"]
    assert doc["complete"] and doc["receipt"]["config"]["gate"] == "summary:128"
    cited = {sid for r in records if r["kind"] == "probe" and r["system"] == "keyword"
             for h in r["hits"] for sid in h["source_ids"]}
    assert cited and all(":summary" in sid for sid in cited)
    assert doc["systems"]["oracle"]["metrics"]["recall_at_k"]["value"] > 0.9
    assert doc["systems"]["keyword"]["metrics"]["recall_at_k"]["value"] > 0


@pytest.mark.slow
def test_hard_gate_records_keep_their_shape(real_runs):
    # The CI baseline is built from hard-gate records: no key is added, except scope_breaches
    # on the probes where a memory leaked (a measurement this gate did not have before).
    _, records = real_runs["hard"]
    assert "gate" not in records[0]["binding"]
    probes = [r for r in records if r["kind"] == "probe"]
    assert probes
    for record in probes:
        assert set(record) - {"scope_breaches"} == HARD_PROBE_KEYS
        assert all(set(h) == HIT_KEYS for h in record["hits"])
    breached = [r for r in probes if "scope_breaches" in r]
    assert all(r["scenario_id"].startswith("mp-") for r in breached)
    assert not any("scope breach" in v for r in probes for v in r["violations"])


def test_resume_refuses_another_gate(tmp_path):
    from conformance.runner.job import JobError, _resumable

    records = tmp_path / "records.jsonl"
    binding = {"k": 10}
    records.write_text(json.dumps({"kind": "run", "run_id": "x", "binding": {**binding, "gate": "soft:2"}}) + "\n")
    with pytest.raises(JobError, match="gate"):
        _resumable(records, binding)
    with pytest.raises(JobError, match="gate"):
        _resumable(records, {**binding, "gate": "soft:3"})
    assert _resumable(records, {**binding, "gate": "soft:2"}) == frozenset()


def test_resume_names_the_default_gate_it_recorded(tmp_path):
    """A hard-gate header has no gate key; the refusal says 'hard', not 'None'."""
    from conformance.runner.job import JobError, _resumable

    records = tmp_path / "records.jsonl"
    records.write_text(json.dumps({"kind": "run", "run_id": "x", "binding": {"k": 10}}) + "\n")
    with pytest.raises(JobError, match="gate: recorded 'hard', now 'soft:3'"):
        _resumable(records, {"k": 10, "gate": "soft:3"})

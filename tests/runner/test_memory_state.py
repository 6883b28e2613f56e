"""What the runner learns about a memory at each checkpoint: Snapshot size and provenance,
the marker-probing fallback for adapters without Snapshot, and repeated passes."""

from __future__ import annotations

from conformance.answer.tokens import count_tokens
from conformance.contract.corpus import write_fixture
from conformance.contract.fixture import CheckpointLine, EntityRef, HeaderLine, HorizonPhase, Message, Probe, SessionLine
from conformance.runner.records import read_records
from conformance.runner.run import RunConfig, run_corpus
from conformance.backend.systems import RetrievedHit, RetrieveOutcome, SnapshotItem, StoreOutcome

N = 4
MARKERS = {f"s{i}": f"ref QZ-{4100 + i}" for i in range(N)}


def _fixture(tmp_path, markers=MARKERS):
    def t(i):
        return f"2026-01-{i + 1:02d}T09:00:00Z"

    sessions = [SessionLine(session_id=f"s{i}", index=i, time=t(i), participants=["u", "a"], messages=[
        Message(message_id=f"s{i}-m0", author="u", role="user", text=f"chat {i}, {MARKERS[f's{i}']} noted",
                timestamp=t(i)),
        Message(message_id=f"s{i}-m1", author="a", role="assistant", text=f"reply {i}", timestamp=t(i)),
    ]) for i in range(N)]
    probe = Probe(probe_id="p1", asked_by="a", query="anything?", asked_at="2026-02-01T00:00:00Z",
                  options=["yes", "unknown"])
    header = HeaderLine(scenario_id="mem", paradigm="user_assistant", source="test",
                        horizons=[HorizonPhase(name="short", sessions=N, session_gap_hours=24)],
                        entities=[EntityRef(entity_id="u", type="human"),
                                  EntityRef(entity_id="a", type="assistant_agent")],
                        markers=markers)
    lines = [header, *sessions[:2], CheckpointLine(checkpoint_id="c1", after_session=2, horizon="short",
                                                   probes=[probe]),
             *sessions[2:], CheckpointLine(checkpoint_id="c2", after_session=N, horizon="short",
                                           probes=[probe.model_copy(update={"probe_id": "p2"})])]
    path = tmp_path / "mem.jsonl"
    write_fixture(path, lines)
    return path


class EvenKeeper:
    """Keeps the text of even-indexed sessions only; Snapshot optional."""

    kind, provenance, describe, isolation = "system", True, {}, {}

    def __init__(self, label: str, snapshot: bool):
        self.label = label
        self.supports_snapshot = snapshot
        self.items: dict[str, list[SnapshotItem]] = {}
        self.queries: list[tuple[str, str]] = []

    def reset(self, namespace):
        self.items[namespace] = []

    def store(self, namespace, session):
        if session.index % 2 == 0:
            text = " ".join(m.text for m in session.messages)
            # Provenance by session id for one item, by message id for the other kind.
            sources = (session.session_id,) if session.index == 0 else tuple(m.message_id for m in session.messages)
            self.items[namespace].append(SnapshotItem(session.session_id, text, sources))
        return StoreOutcome(1.0, {"input_tokens": 3, "output_tokens": 0, "llm_calls": 1}, 1)

    def flush(self, namespace, timeout_s):
        return True

    def retrieve(self, namespace, probe, k):
        self.queries.append((namespace, probe.query))
        hits = [RetrievedHit(i.text, 1.0, i.source_ids, "") for i in self.items[namespace] if probe.query in i.text]
        return RetrieveOutcome(hits[:k], 0.5, {})

    def snapshot(self, namespace):
        if not self.supports_snapshot:
            raise AssertionError("the runner asked a system without Snapshot for one")
        return list(self.items[namespace])

    def died(self):
        return None

    def close(self):
        pass


def test_state_records_read_snapshot_provenance_and_size(tmp_path):
    path = _fixture(tmp_path)
    system = EvenKeeper("snap", snapshot=True)
    run_corpus([path], [system], tmp_path / "r.jsonl", RunConfig(), "t")
    states = [r for r in read_records(tmp_path / "r.jsonl") if r["kind"] == "state"]
    assert [(s["checkpoint_id"], s["sessions_streamed"], s["after_session"]) for s in states] == [
        ("c1", 2, 2), ("c2", 4, 4)]
    assert all(s["method"] == "snapshot" for s in states)
    # s0 cited by session id, s2 by message ids: both count as stored.
    assert states[0]["stored_sessions"] == ["s0"] and states[1]["stored_sessions"] == ["s0", "s2"]
    texts = [i.text for i in system.items["t/mem"]]
    assert states[1]["storage_tokens"] == sum(count_tokens(t) for t in texts)
    assert states[0]["storage_tokens"] == count_tokens(texts[0])
    # No marker probing when Snapshot answers; no probe found anything, so the findability
    # check (conformance.runner.findable) retrieved the marker of a session the Snapshot
    # cites, found it, and raised no fault.
    asked = [q for _, q in system.queries]
    assert asked[0] == "anything?" and asked.count("anything?") == 2
    assert set(asked) - {"anything?"} <= {MARKERS["s0"], MARKERS["s2"]}
    assert not [r for r in read_records(tmp_path / "r.jsonl") if r["kind"] == "fault"]


def test_marker_probing_without_snapshot(tmp_path):
    path = _fixture(tmp_path)
    system = EvenKeeper("nosnap", snapshot=False)
    run_corpus([path], [system], tmp_path / "r.jsonl", RunConfig(), "t")
    records = read_records(tmp_path / "r.jsonl")
    states = [r for r in records if r["kind"] == "state"]
    assert all(s["method"] == "marker_probe" and s["storage_tokens"] is None for s in states)
    assert states[0]["stored_sessions"] == ["s0"] and states[1]["stored_sessions"] == ["s0", "s2"]
    # The marker probes are Retrieve calls but not probe records (they are no question of the corpus).
    assert sum(1 for r in records if r["kind"] == "probe") == 2
    assert [q for _, q in system.queries if q.startswith("ref")] == [
        MARKERS["s0"], MARKERS["s1"], MARKERS["s0"], MARKERS["s1"], MARKERS["s2"], MARKERS["s3"]]


def test_without_snapshot_or_markers_the_state_is_unknown(tmp_path):
    path = _fixture(tmp_path, markers={})
    run_corpus([path], [EvenKeeper("blind", snapshot=False)], tmp_path / "r.jsonl", RunConfig(), "t")
    states = [r for r in read_records(tmp_path / "r.jsonl") if r["kind"] == "state"]
    assert states and all(s["method"] is None and s["stored_sessions"] is None for s in states)


def test_repeats_use_fresh_namespaces_and_are_labelled(tmp_path):
    path = _fixture(tmp_path)
    system = EvenKeeper("snap", snapshot=True)
    summary = run_corpus([path], [system], tmp_path / "r.jsonl", RunConfig(), "t", repeats=2)
    assert summary.scenarios == ["mem"]
    records = read_records(tmp_path / "r.jsonl")
    assert {r["repeat"] for r in records} == {1, 2}
    assert sorted(system.items) == ["t/mem", "t/r2/mem"]
    first = [r for r in records if r["repeat"] == 1 and r["kind"] == "state"]
    second = [r for r in records if r["repeat"] == 2 and r["kind"] == "state"]
    assert [r["stored_sessions"] for r in first] == [r["stored_sessions"] for r in second]

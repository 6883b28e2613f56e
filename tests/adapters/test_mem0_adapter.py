"""The mem0 adapter, end to end over gRPC, in its own virtualenv (mem0ai is not in the runner's).

Started through the runner's own launcher (``conformance.backend.process``), so the
virtualenv built here is the one ``drift-conformance --adapter mem0`` reuses. Skips when
the virtualenv cannot be built because no package index is reachable.
"""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from conformance.backend.manifest import load_manifest
from conformance.backend.process import ProcessAdapter
from conformance.backend.venvs import VenvError, looks_offline
from drift_sdk.v1 import memory_backend_pb2 as pb

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = ROOT / "adapters" / "mem0"

@pytest.fixture(scope="module")
def adapter():
    process = ProcessAdapter(ADAPTER, load_manifest(ADAPTER))
    try:
        process.start()
    except VenvError as exc:
        if looks_offline(str(exc)):
            pytest.skip(f"mem0 adapter venv cannot be built: no package index reachable\n{exc}")
        raise
    process.stub = process.client.stub
    yield process
    process.stop()


def _message(mid, author, role, text, ts):
    return pb.Message(message_id=mid, author=author, role=role, text=text, timestamp=ts, scope="shared")


SESSIONS = [
    pb.Session(session_id="s1", index=0, time="2026-03-02T10:00:00Z", participants=["alice", "agent"], messages=[
        _message("s1-m1", "alice", "user", "I just adopted a beagle puppy and named him Rufus.", "2026-03-02T10:00:00Z"),
        _message("s1-m2", "agent", "assistant", "Congratulations! Beagles are energetic dogs.", "2026-03-02T10:00:20Z"),
        _message("s1-m3", "alice", "user", "My sister Carla moved to Lisbon to work as a nurse.", "2026-03-02T10:01:00Z"),
    ]),
    pb.Session(session_id="s2", index=1, time="2026-03-09T18:30:00Z", participants=["alice", "agent"], messages=[
        _message("s2-m1", "alice", "user", "I'm training for the Berlin marathon in September.", "2026-03-09T18:30:00Z"),
        _message("s2-m2", "agent", "assistant", "Great goal. How many kilometres do you run each week?",
                 "2026-03-09T18:30:30Z"),
        _message("s2-m3", "alice", "system", "Reminder: alice prefers green tea over coffee.", "2026-03-09T18:31:00Z"),
    ]),
]
ALL_IDS = {m.message_id for s in SESSIONS for m in s.messages}


def _store_all(stub, ns):
    stub.Reset(pb.ResetRequest(namespace=ns), timeout=60)
    stored = [stub.Store(pb.StoreRequest(namespace=ns, session=s), timeout=60).items_stored for s in SESSIONS]
    assert stored == [3, 3]
    assert stub.Flush(pb.FlushRequest(namespace=ns, timeout_s=30), timeout=60).ready is True


def _retrieve(stub, ns, query, k=3):
    return list(stub.Retrieve(pb.RetrieveRequest(namespace=ns, query=query, k=k, querying_entity="alice",
                                                 now="2026-03-10T09:00:00Z"), timeout=60).hits)


def _snapshot(stub, ns):
    return list(stub.Snapshot(pb.SnapshotRequest(namespace=ns), timeout=60))


def test_manifest_validates_against_the_launcher_schema():
    from conformance.backend.manifest import load_manifest

    manifest = load_manifest(ADAPTER)
    assert manifest.name == "mem0" and manifest.entry == "adapter.py"
    assert manifest.startup_timeout_s >= 60


@pytest.mark.slow
def test_describe(adapter):
    d = adapter.stub.Describe(pb.DescribeRequest(), timeout=30)
    assert d.name == "mem0" and d.version.startswith("mem0ai-2.2.")
    c = d.capabilities
    assert c.provenance and c.snapshot and c.forget and c.flush_signal and c.deterministic
    assert not c.scopes and not c.time_aware
    assert list(d.internal_models) == ["sentence-transformers/all-MiniLM-L6-v2 (int8 ONNX)"]
    assert d.settings["infer"] == "false" and d.settings["mem0_version"].startswith("2.2.")


@pytest.mark.slow
def test_store_retrieve_snapshot_reset(adapter):
    stub = adapter.stub
    _store_all(stub, "run-a")

    hits = _retrieve(stub, "run-a", "Which city does Carla live in?")
    assert 1 <= len(hits) <= 3
    assert list(hits[0].source_ids) == ["s1-m3"] and "Lisbon" in hits[0].text
    assert hits[0].timestamp == "2026-03-02T10:01:00Z"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert list(_retrieve(stub, "run-a", "What is the name of alice's dog?", k=1)[0].source_ids) == ["s1-m1"]
    # a system message is stored too (mem0 itself would drop it with infer=False)
    assert list(_retrieve(stub, "run-a", "Does alice drink tea or coffee?", k=1)[0].source_ids) == ["s2-m3"]

    items = _snapshot(stub, "run-a")
    assert {sid for i in items for sid in i.source_ids} == ALL_IDS
    assert all(len(i.source_ids) == 1 and i.item_id and i.timestamp for i in items)
    assert any(i.text == "alice: My sister Carla moved to Lisbon to work as a nurse." for i in items)

    stub.Reset(pb.ResetRequest(namespace="run-a"), timeout=60)
    assert _snapshot(stub, "run-a") == []
    assert _retrieve(stub, "run-a", "Which city does Carla live in?") == []


@pytest.mark.slow
def test_namespaces_are_isolated_and_reruns_are_identical(adapter):
    stub = adapter.stub
    _store_all(stub, "run-b")
    stub.Reset(pb.ResetRequest(namespace="run-c"), timeout=60)
    stub.Store(pb.StoreRequest(namespace="run-c", session=pb.Session(
        session_id="x1", index=0, time="2026-03-02T10:00:00Z", participants=["bob"],
        messages=[_message("x1-m1", "bob", "user", "Bob's cat is called Miso.", "2026-03-02T10:00:00Z")])),
        timeout=60)
    assert {sid for i in _snapshot(stub, "run-c") for sid in i.source_ids} == {"x1-m1"}
    queries = ["What pet does alice have?", "marathon training", "cat called Miso"]
    first = [[(h.text, h.score, tuple(h.source_ids)) for h in _retrieve(stub, "run-b", q, k=6)] for q in queries]
    assert all(sid in ALL_IDS for hits in first for _, _, ids in hits for sid in ids)
    _store_all(stub, "run-b")  # reset and store again: same hits, same scores
    again = [[(h.text, h.score, tuple(h.source_ids)) for h in _retrieve(stub, "run-b", q, k=6)] for q in queries]
    assert again == first


@pytest.mark.slow
def test_forget_removes_the_memories_of_a_message(adapter):
    stub = adapter.stub
    _store_all(stub, "run-d")
    removed = stub.Forget(pb.ForgetRequest(namespace="run-d", source_ids=["s1-m3", "no-such-id"]), timeout=60)
    assert removed.items_removed == 1
    assert {sid for i in _snapshot(stub, "run-d") for sid in i.source_ids} == ALL_IDS - {"s1-m3"}
    assert all("s1-m3" not in h.source_ids for h in _retrieve(stub, "run-d", "Which city does Carla live in?"))


@pytest.mark.slow
def test_bad_input_and_home_folder(adapter):
    with pytest.raises(grpc.RpcError) as err:
        adapter.stub.Retrieve(pb.RetrieveRequest(namespace="run-a", query="x", k=0), timeout=30)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as err:  # mem0 rejects a user_id with whitespace
        adapter.stub.Reset(pb.ResetRequest(namespace="has space"), timeout=30)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    # The launcher makes the working folder the adapter's HOME: mem0 and onnxruntime must
    # not drop their own config or telemetry files there, only the data folder.
    assert sorted(p.name for p in adapter.workdir.iterdir()) == ["adapter.log", "mem0-data", "port"]


@pytest.mark.slow
def test_main_command_runs_keyword_and_mem0_side_by_side(adapter, tmp_path):
    # The README's main job on two scenarios: each adapter its own process, controls beside them.
    import json
    import subprocess
    import sys

    import jsonschema

    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "--adapter", "keyword", "--adapter", "mem0",
                           "--scenario", "ua-short-00[12]", "--out", str(tmp_path / "result.json"), "--quiet",
                           "--records-dir", str(tmp_path / "runs")], cwd=tmp_path, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "result.json").read_text())
    jsonschema.validate(doc, json.loads((ROOT / "schema" / "result.schema.json").read_text()))
    systems = doc["systems"]
    assert list(systems) == ["none", "oracle", "reference-compressor", "keyword", "mem0"]
    assert systems["mem0"]["describe"]["internal_models"] == ["sentence-transformers/all-MiniLM-L6-v2 (int8 ONNX)"]
    pids = {doc["receipt"]["isolation"][s]["pid"] for s in ("none", "keyword", "mem0")}
    assert len(pids) == 3
    for metric in ("recall_at_k", "revision_accuracy"):
        values = [systems[s]["metrics"][metric]["value"] for s in ("oracle", "mem0", "none")]
        assert values[0] >= values[1] >= values[2], (metric, values)

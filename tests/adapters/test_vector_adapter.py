"""The vector adapter (MiniLM int8 ONNX + qdrant local), end to end over gRPC.

Started through the runner's own entry point (``conformance.backend.systems.open_system``),
so the adapter runs as its own process in the virtualenv that ``drift-conformance
--adapter vector`` reuses. Skips when that virtualenv cannot be built because no package
index is reachable.
"""

from __future__ import annotations

import sys
from pathlib import Path

import grpc
import pytest

from conformance.backend.manifest import load_manifest
from conformance.paths import adapters_dir
from drift_sdk.v1 import memory_backend_pb2 as pb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from adapter_harness import snapshot as _snapshot, source_ids as _ids, assert_namespace_rules  # noqa: E402
from adapter_harness import message as _message  # noqa: E402
from adapter_harness import open_adapter, retrieve as _retrieve, store_all as _store_all  # noqa: E402
from adapter_harness import SESSIONS  # noqa: E402

ADAPTER = adapters_dir() / "vector"
MODEL = "sentence-transformers/all-MiniLM-L6-v2 (int8 ONNX)"


@pytest.fixture(scope="module")
def system():
    opened = open_adapter("vector")
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def stub(system):
    return system.client.stub


ALL_IDS = [m.message_id for s in SESSIONS for m in s.messages]
TEXT_OF = {m.message_id: f"{m.author}: {m.text}" for s in SESSIONS for m in s.messages}
TIME_OF = {m.message_id: m.timestamp for s in SESSIONS for m in s.messages}
QUERIES = ["Which city does Carla live in?", "What is the name of alice's dog?", "Does alice drink tea or coffee?",
           "marathon training", "how far does she run"]


def _fingerprint(stub, ns):
    return [[(h.text, h.score, tuple(h.source_ids), h.timestamp) for h in _retrieve(stub, ns, q, k=6)]
            for q in QUERIES]


def test_manifest_validates_against_the_launcher_schema():
    manifest = load_manifest(ADAPTER)
    assert manifest.name == "vector" and manifest.kind == "system" and manifest.entry == "adapter.py"
    assert manifest.env == [] and manifest.startup_timeout_s >= 60
    reqs = (ADAPTER / "requirements.txt").read_text().splitlines()
    pins = [line for line in reqs if line.strip() and not line.startswith("#")]
    assert pins and all("==" in line for line in pins), "every requirement is pinned"


@pytest.mark.slow
def test_describe_through_the_runner(system):
    d = system.describe
    assert d["name"] == "vector" and d["version"].startswith("0.1 (qdrant-client 1.20.0")
    caps = d["capabilities"]
    assert all(caps[c] for c in ("provenance", "snapshot", "forget", "flush_signal", "deterministic"))
    assert caps["scopes"] and not caps["time_aware"]
    assert d["internal_models"] == [MODEL]
    settings = d["settings"]
    assert MODEL in settings["embedder"] and settings["dims"] == "384" and settings["distance"].startswith("cosine")
    assert "qdrant-client 1.20.0" in settings["db"] and "onnxruntime" in settings["versions"]
    assert system.isolation["mode"] == "process" and system.provenance and system.supports_snapshot


@pytest.mark.slow
def test_store_flush_retrieve_with_provenance(stub):
    _store_all(stub, "run-a")
    hits = _retrieve(stub, "run-a", "Which city does Carla live in?")
    assert len(hits) == 3
    assert _ids(hits)[0] == "s1-m3" and hits[0].text == "alice: My sister Carla moved to Lisbon to work as a nurse."
    for h in hits:  # provenance: exactly the message the hit is, its text and its timestamp
        assert len(h.source_ids) == 1 and h.text == TEXT_OF[h.source_ids[0]]
        assert h.timestamp == TIME_OF[h.source_ids[0]]
        assert h.score == round(h.score, 6) and -1.0 <= h.score <= 1.0
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert _ids(_retrieve(stub, "run-a", "What is the name of alice's dog?", k=1)) == ["s1-m1"]
    # system-role and private messages are stored like the others
    assert _ids(_retrieve(stub, "run-a", "Does alice drink tea or coffee?", k=1)) == ["s2-m3"]
    assert _ids(_retrieve(stub, "run-a", "marathon in Berlin", k=1)) == ["s2-m1"]


@pytest.mark.slow
def test_k_is_honoured(stub):
    _store_all(stub, "run-k")
    for k in (1, 2, 5):
        assert len(_retrieve(stub, "run-k", "dogs", k=k)) == k
    everything = _retrieve(stub, "run-k", "dogs", k=50)
    assert sorted(_ids(everything)) == sorted(ALL_IDS)
    assert _retrieve(stub, "run-k", "dogs", k=4) == everything[:4]
    with pytest.raises(grpc.RpcError) as err:
        stub.Retrieve(pb.RetrieveRequest(namespace="run-k", query="x", k=0), timeout=30)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.slow
def test_a_namespace_must_be_reset_first_and_named(stub):
    assert_namespace_rules(stub)


@pytest.mark.slow
def test_snapshot_lists_every_item_in_storage_order(stub):
    _store_all(stub, "run-s")
    items = _snapshot(stub, "run-s")
    assert [sid for i in items for sid in i.source_ids] == ALL_IDS
    assert [i.text for i in items] == [TEXT_OF[m] for m in ALL_IDS]
    assert [i.timestamp for i in items] == [TIME_OF[m] for m in ALL_IDS]
    assert len({i.item_id for i in items}) == len(items)


@pytest.mark.slow
def test_forget_by_message_and_by_session(stub):
    _store_all(stub, "run-f")
    gone = stub.Forget(pb.ForgetRequest(namespace="run-f", source_ids=["s1-m3", "no-such-id"]), timeout=60)
    assert gone.items_removed == 1
    assert stub.Flush(pb.FlushRequest(namespace="run-f", timeout_s=30), timeout=60).ready is True
    assert [sid for i in _snapshot(stub, "run-f") for sid in i.source_ids] == [m for m in ALL_IDS if m != "s1-m3"]
    assert "s1-m3" not in _ids(_retrieve(stub, "run-f", "Which city does Carla live in?", k=10))
    gone = stub.Forget(pb.ForgetRequest(namespace="run-f", source_ids=["s2"]), timeout=60)
    assert gone.items_removed == 3
    assert [sid for i in _snapshot(stub, "run-f") for sid in i.source_ids] == ["s1-m1", "s1-m2"]
    assert sorted(_ids(_retrieve(stub, "run-f", "marathon", k=10))) == ["s1-m1", "s1-m2"]
    assert stub.Flush(pb.FlushRequest(namespace="run-f", timeout_s=30), timeout=60).ready is True


@pytest.mark.slow
def test_reset_and_namespace_isolation(stub):
    _store_all(stub, "run-b")
    stub.Reset(pb.ResetRequest(namespace="run-c"), timeout=60)
    stub.Store(pb.StoreRequest(namespace="run-c", session=pb.Session(
        session_id="x1", index=0, time="2026-03-02T10:00:00Z", participants=["bob"],
        messages=[_message("x1-m1", "bob", "user", "Bob's cat is called Miso.", "2026-03-02T10:00:00Z")])),
        timeout=60)
    assert _ids(_retrieve(stub, "run-c", "dogs", k=10)) == ["x1-m1"]
    assert "x1-m1" not in _ids(_retrieve(stub, "run-b", "cat called Miso", k=10))
    stub.Reset(pb.ResetRequest(namespace="run-b"), timeout=60)
    assert _snapshot(stub, "run-b") == [] and _retrieve(stub, "run-b", "dogs") == []
    assert [sid for i in _snapshot(stub, "run-c") for sid in i.source_ids] == ["x1-m1"]


@pytest.mark.slow
def test_ties_go_to_the_newer_message_then_the_later_stored(stub):
    same = "The deploy key rotates every Friday."
    sessions = [
        pb.Session(session_id=f"t{i}", index=i, time=ts, participants=["ops"],
                   messages=[_message(f"t{i}-m1", "ops", "user", same, ts)])
        for i, ts in enumerate(["2026-01-05T09:00:00Z", "2026-01-07T09:00:00Z", "2026-01-06T09:00:00Z",
                                "2026-01-07T09:00:00Z"])]
    sessions.append(pb.Session(session_id="t9", index=4, time="2026-01-08T09:00:00Z", participants=["ops"],
                               messages=[_message("t9-m1", "ops", "user", "Lunch is at noon.",
                                                  "2026-01-08T09:00:00Z")]))
    _store_all(stub, "run-t", sessions)
    hits = _retrieve(stub, "run-t", "when does the deploy key rotate", k=5)
    assert len({h.score for h in hits[:4]}) == 1  # one text, one vector, one score
    # newer timestamp first; t1 and t3 share one: the later stored (t3) first
    assert _ids(hits) == ["t3-m1", "t1-m1", "t2-m1", "t0-m1", "t9-m1"]
    # the cut at k orders the tie the same way
    assert _ids(_retrieve(stub, "run-t", "when does the deploy key rotate", k=2)) == ["t3-m1", "t1-m1"]


@pytest.mark.slow
def test_identical_results_twice_in_one_process_and_across_processes(stub):
    _store_all(stub, "run-d")
    first = _fingerprint(stub, "run-d")
    assert all(len(hits) == 6 for hits in first)
    _store_all(stub, "run-d")  # Reset and store again: same hits, same scores
    assert _fingerprint(stub, "run-d") == first
    _store_all(stub, "run-e")  # another namespace in the same process
    assert _fingerprint(stub, "run-e") == first
    other = open_adapter("vector")  # a fresh process
    try:
        _store_all(other.client.stub, "run-d")
        assert _fingerprint(other.client.stub, "run-d") == first
    finally:
        other.close()


@pytest.mark.slow
def test_writes_nothing_to_its_working_folder(system, stub):
    _store_all(stub, "run-w")
    assert sorted(p.name for p in system.process.workdir.iterdir()) == ["adapter.log", "port"]

"""The zep adapter (zep-cloud SDK) end to end over gRPC, against a local fake of Zep's API.

The fake (``tests/adapters/fake_zep.py``) runs in this process on loopback; the adapter is
started through the runner's own entry point (``conformance.backend.systems.open_system``)
as its own process in its own virtualenv, with ``ZEP_BASE_URL`` / ``ZEP_API_KEY`` taken
from ``os.environ`` (the launcher passes exactly the variables adapter.yaml lists under
``env``). Skips when that virtualenv cannot be built because no package index is
reachable. ``test_live_zep_round_trip`` talks to a real Zep only when ``ZEP_API_KEY`` is
set and ``ZEP_BASE_URL`` is not a loopback address.
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlparse

import grpc
import pytest

from conformance.backend.manifest import load_manifest
from conformance.errors import DriftError
from conformance.paths import adapters_dir
from drift_sdk.v1 import memory_backend_pb2 as pb

sys.path.insert(0, str(Path(__file__).parent))
from adapter_harness import snapshot as _snapshot, source_ids as _ids  # noqa: E402
from adapter_harness import scoped_env  # noqa: E402
from adapter_harness import message as _message  # noqa: E402
from adapter_harness import open_adapter, retrieve as _retrieve, store_all as _store_all  # noqa: E402
from adapter_harness import SESSIONS  # noqa: E402
from fake_zep import FakeZep  # noqa: E402

ADAPTER = adapters_dir() / "zep"
VARS = ("ZEP_API_KEY", "ZEP_BASE_URL")


def _env(**values):
    """Set (value) or remove (None) the adapter's variables for the duration; restore after."""
    return scoped_env(VARS, **values)


@pytest.fixture(scope="module")
def fake():
    with FakeZep(api_key="fake-key") as server:
        yield server


@pytest.fixture(scope="module")
def system(fake):
    with _env(ZEP_API_KEY="fake-key", ZEP_BASE_URL=fake.url):
        opened = open_adapter("zep")
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def stub(system):
    return system.client.stub


ALL_IDS = [m.message_id for s in SESSIONS for m in s.messages]
TEXT_OF = {m.message_id: m.text for s in SESSIONS for m in s.messages}
TIME_OF = {m.message_id: m.timestamp for s in SESSIONS for m in s.messages}


def test_manifest_validates_against_the_launcher_schema():
    manifest = load_manifest(ADAPTER)
    assert manifest.name == "zep" and manifest.kind == "system" and manifest.entry == "adapter.py"
    assert manifest.verified == "fake-service"
    assert sorted(manifest.env) == ["ZEP_API_KEY", "ZEP_BASE_URL"]
    reqs = (ADAPTER / "requirements.txt").read_text().splitlines()
    pins = [line for line in reqs if line.strip() and not line.startswith("#")]
    assert "zep-cloud==4.0.1" in pins and all("==" in line for line in pins), "every requirement is pinned"


@pytest.mark.slow
def test_describe_through_the_runner(system, fake):
    d = system.describe
    assert d["name"] == "zep" and d["version"] == "0.1 (zep-cloud 4.0.1)"
    caps = d["capabilities"]
    assert caps["provenance"] and caps["snapshot"] and caps["flush_signal"]
    assert not caps["forget"] and not caps["deterministic"] and not caps["scopes"] and not caps["time_aware"]
    assert d["settings"]["base_url"] == fake.url and d["settings"]["sdk"] == "zep-cloud 4.0.1"
    assert system.isolation["mode"] == "process" and system.isolation["verified"] == "fake-service"


@pytest.mark.slow
def test_store_flush_retrieve_with_provenance(stub, fake):
    _store_all(stub, "run-a")
    hits = _retrieve(stub, "run-a", "Where did Carla move to work as a nurse?", k=3)
    assert hits and _ids(hits)[0] == "s1-m3"
    assert hits[0].text == TEXT_OF["s1-m3"] and hits[0].timestamp == TIME_OF["s1-m3"]
    assert all(len(h.source_ids) == 1 and h.source_ids[0] in ALL_IDS for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # a role Zep does not know ("observer") was stored as a user message and is found
    assert _ids(_retrieve(stub, "run-a", "green tea or coffee", k=1)) == ["s2-m3"]
    # every stored message is found by its own words
    for mid, text in TEXT_OF.items():
        assert mid in _ids(_retrieve(stub, "run-a", text, k=10)), mid
    # the adapter used exactly the faked endpoints
    assert set(fake.calls) == {("POST", "users"), ("POST", "threads"), ("POST", "threads/{uuid}/messages"),
                               ("GET", "threads/{uuid}/messages"), ("POST", "graphs/{uuid}/search/episodes")} | (
        {("DELETE", "users/{uuid}")} & set(fake.calls))


@pytest.mark.slow
def test_flush_waits_for_processing(stub, fake):
    fake.process_delay_s = 1.0
    try:
        stub.Reset(pb.ResetRequest(namespace="run-slow"), timeout=60)
        stub.Store(pb.StoreRequest(namespace="run-slow", session=SESSIONS[0]), timeout=60)
        assert _retrieve(stub, "run-slow", "beagle puppy Rufus") == []  # not processed yet
        started = time.monotonic()
        assert stub.Flush(pb.FlushRequest(namespace="run-slow", timeout_s=30), timeout=60).ready is True
        assert time.monotonic() - started > 0.3
        assert _ids(_retrieve(stub, "run-slow", "beagle puppy Rufus", k=1)) == ["s1-m1"]
        fake.process_delay_s = 30.0
        stub.Store(pb.StoreRequest(namespace="run-slow", session=SESSIONS[1]), timeout=60)
        assert stub.Flush(pb.FlushRequest(namespace="run-slow", timeout_s=0.5), timeout=30).ready is False
    finally:
        fake.process_delay_s = 0.2


@pytest.mark.slow
def test_k_is_honoured(stub):
    _store_all(stub, "run-k")
    for k in (1, 2, 5):
        hits = _retrieve(stub, "run-k", "alice agent the a to for", k=k)
        assert 0 < len(hits) <= k


@pytest.mark.slow
def test_snapshot_lists_every_message_in_storage_order(stub):
    _store_all(stub, "run-s")
    items = _snapshot(stub, "run-s")
    assert [sid for i in items for sid in i.source_ids] == ALL_IDS
    assert [i.text for i in items] == [TEXT_OF[m] for m in ALL_IDS]
    assert [i.timestamp for i in items] == [TIME_OF[m] for m in ALL_IDS]
    assert len({i.item_id for i in items}) == len(items)


@pytest.mark.slow
def test_reset_empties_and_isolates(stub, fake):
    _store_all(stub, "run-b")
    stub.Reset(pb.ResetRequest(namespace="run-c"), timeout=60)
    stub.Store(pb.StoreRequest(namespace="run-c", session=pb.Session(
        session_id="x1", index=0, time="2026-03-02T10:00:00Z", participants=["bob"],
        messages=[_message("x1-m1", "bob", "user", "Bob's cat is called Miso.", "2026-03-02T10:00:00Z")])),
        timeout=60)
    assert stub.Flush(pb.FlushRequest(namespace="run-c", timeout_s=30), timeout=60).ready is True
    assert _ids(_retrieve(stub, "run-c", "cat called Miso", k=10)) == ["x1-m1"]
    assert "x1-m1" not in _ids(_retrieve(stub, "run-b", "cat called Miso", k=10))
    users_before = len(fake.users)
    stub.Reset(pb.ResetRequest(namespace="run-b"), timeout=60)
    assert len(fake.users) == users_before  # the old user was deleted, a new one created
    assert ("DELETE", "users/{uuid}") in fake.calls
    assert _snapshot(stub, "run-b") == [] and _retrieve(stub, "run-b", "beagle puppy") == []
    assert stub.Flush(pb.FlushRequest(namespace="run-b", timeout_s=5), timeout=30).ready is True
    assert [sid for i in _snapshot(stub, "run-c") for sid in i.source_ids] == ["x1-m1"]


@pytest.mark.slow
def test_bad_requests_and_unoffered_calls(stub):
    for call, request in (("Store", pb.StoreRequest(namespace="never-reset", session=SESSIONS[0])),
                          ("Retrieve", pb.RetrieveRequest(namespace="never-reset", query="x", k=3)),
                          ("Flush", pb.FlushRequest(namespace="never-reset", timeout_s=1)),
                          ("Retrieve", pb.RetrieveRequest(namespace="", query="x", k=3))):
        with pytest.raises(grpc.RpcError) as err:
            getattr(stub, call)(request, timeout=30)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, (call, err.value.details())
    with pytest.raises(grpc.RpcError) as err:
        stub.Reset(pb.ResetRequest(namespace=""), timeout=30)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as err:
        list(stub.Snapshot(pb.SnapshotRequest(namespace="never-reset"), timeout=30))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    stub.Reset(pb.ResetRequest(namespace="run-f"), timeout=30)
    with pytest.raises(grpc.RpcError) as err:
        stub.Forget(pb.ForgetRequest(namespace="run-f", source_ids=["s1-m1"]), timeout=30)
    assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED


@pytest.mark.slow
def test_missing_key_is_a_clear_startup_error(fake):
    with _env(ZEP_API_KEY=None, ZEP_BASE_URL=fake.url):
        with pytest.raises(DriftError) as err:
            open_adapter("zep").close()
    assert "ZEP_API_KEY is not set" in str(err.value)


@pytest.mark.slow
def test_wrong_key_surfaces_zeps_401(fake):
    with _env(ZEP_API_KEY="not-the-key", ZEP_BASE_URL=fake.url):
        opened = open_adapter("zep")
    try:
        with pytest.raises(grpc.RpcError) as err:
            opened.client.stub.Reset(pb.ResetRequest(namespace="bad-key"), timeout=60)
        assert "401" in err.value.details() or "unauthorized" in err.value.details().lower()
    finally:
        opened.close()


def _live_skip_reason() -> str | None:
    if not os.environ.get("ZEP_API_KEY"):
        return "live Zep test: ZEP_API_KEY is not set"
    host = urlparse(os.environ.get("ZEP_BASE_URL") or "https://api.getzep.com").hostname or ""
    if host in ("localhost", "::1") or host.startswith("127."):
        return f"live Zep test: ZEP_BASE_URL points at a loopback address ({host}), i.e. a fake"
    return None


@pytest.mark.slow
@pytest.mark.skipif(_live_skip_reason() is not None, reason=_live_skip_reason() or "")
def test_live_zep_round_trip():
    opened = open_adapter("zep")  # takes ZEP_API_KEY / ZEP_BASE_URL from the environment as they are
    ns = f"drift-live-{uuid.uuid4().hex[:8]}"
    stub = opened.client.stub
    try:
        _store_all(stub, ns, flush_s=600)
        hits = _retrieve(stub, ns, "Where did Carla move to work as a nurse?", k=5)
        assert hits and len(hits) <= 5
        assert all(h.source_ids and set(h.source_ids) <= set(ALL_IDS) for h in hits)
        assert "s1-m3" in _ids(hits)
        assert sorted(sid for i in _snapshot(stub, ns) for sid in i.source_ids) == sorted(ALL_IDS)
        stub.Reset(pb.ResetRequest(namespace=ns), timeout=60)  # also deletes the user with the data
        assert _snapshot(stub, ns) == []
    finally:
        opened.close()

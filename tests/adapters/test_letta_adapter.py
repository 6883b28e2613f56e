"""The letta adapter (letta-client SDK) end to end over gRPC, against a local fake Letta server.

The fake (``tests/adapters/fake_letta.py``) serves the seven HTTP endpoints the adapter
uses, in memory, with keyword-overlap search; its shapes are those of the letta-client
1.12.1 SDK source. The adapter is started through the runner's own entry point
(``conformance.backend.systems.open_system``) with ``LETTA_BASE_URL`` (and
``LETTA_API_KEY``) in the runner's environment, the only way they reach it (adapter.yaml
``env``). ``test_live_server`` runs only when ``LETTA_BASE_URL`` was already set when the
tests started and points at something that is not this fake.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from pathlib import Path

import grpc
import pytest

from conformance.backend.manifest import load_manifest
from conformance.paths import adapters_dir
from drift_sdk.v1 import memory_backend_pb2 as pb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from adapter_harness import snapshot as _snapshot, source_ids as _ids, assert_namespace_rules  # noqa: E402
from adapter_harness import scoped_env  # noqa: E402
from adapter_harness import message as _message  # noqa: E402
from adapter_harness import open_adapter, retrieve as _retrieve, store_all as _store_all  # noqa: E402
from adapter_harness import SESSIONS  # noqa: E402
from fake_letta import FAKE_VERSION, FakeLetta  # noqa: E402

ADAPTER = adapters_dir() / "letta"
ENV = ("LETTA_BASE_URL", "LETTA_API_KEY", "LETTA_MODEL", "LETTA_EMBEDDING")
#: What the runner's environment said before these tests touched it (the live test's target).
LIVE_ENV = {k: os.environ[k] for k in ENV if k in os.environ}
API_KEY = "fake-letta-test-key"
#: Every path the adapter may ask the fake for (no /messages: the agent loop is never run).
ALLOWED = ("/v1/health/", "/v1/agents")


def _environ(**values):
    """Set (str) or remove (None) these variables for the duration; restore afterwards."""
    return scoped_env(ENV, **values)


@pytest.fixture(scope="module")
def fake():
    server = FakeLetta(api_key=API_KEY)
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def system(fake):
    with _environ(LETTA_BASE_URL=fake.url, LETTA_API_KEY=API_KEY, LETTA_EMBEDDING="fake/keyword"):
        opened = open_adapter("letta")
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def stub(system):
    return system.client.stub


ALL_IDS = [m.message_id for s in SESSIONS for m in s.messages]
TEXT_OF = {m.message_id: f"{m.author}: {m.text}" for s in SESSIONS for m in s.messages}
TIME_OF = {m.message_id: m.timestamp for s in SESSIONS for m in s.messages}


def _agent_of(fake, ns):
    """The live agent the fake holds for namespace ``ns`` (from the metadata Reset sent)."""
    agents = [a for a in fake.agents.values() if (a.get("metadata") or {}).get("drift_namespace") == ns]
    assert len(agents) == 1, agents
    return agents[0]


def test_manifest_validates_against_the_launcher_schema():
    manifest = load_manifest(ADAPTER)
    assert manifest.name == "letta" and manifest.kind == "system" and manifest.entry == "adapter.py"
    assert manifest.verified == "fake-service"
    assert manifest.env[:2] == ["LETTA_BASE_URL", "LETTA_API_KEY"] and set(manifest.env) == set(ENV)
    assert manifest.resources.cpus <= 2 and manifest.resources.memory_gb <= 1
    reqs = (ADAPTER / "requirements.txt").read_text().splitlines()
    pins = [line for line in reqs if line.strip() and not line.startswith("#")]
    assert "letta-client==1.12.1" in pins and all("==" in line for line in pins), "every requirement is pinned"


@pytest.mark.slow
def test_a_missing_base_url_is_a_clear_startup_error():
    from conformance.backend.process import AdapterStartError

    with _environ():
        with pytest.raises(AdapterStartError) as err:
            open_adapter("letta").close()
    assert "LETTA_BASE_URL is not set" in str(err.value)


@pytest.mark.slow
def test_an_unreachable_server_is_a_clear_startup_error():
    from conformance.backend.process import AdapterStartError

    with FakeLetta() as gone:
        url = gone.url
    with _environ(LETTA_BASE_URL=url):
        with pytest.raises(AdapterStartError) as err:
            open_adapter("letta").close()
    assert f"LETTA_BASE_URL={url} does not answer GET /v1/health/" in str(err.value)


@pytest.mark.slow
def test_describe_through_the_runner(system):
    d = system.describe
    assert d["name"] == "letta" and d["version"] == "0.1 (letta-client 1.12.1)"
    caps = d["capabilities"]
    assert all(caps[c] for c in ("provenance", "snapshot", "forget", "flush_signal"))
    assert not caps["deterministic"] and not caps["scopes"] and not caps["time_aware"]
    settings = d["settings"]
    assert FAKE_VERSION in settings["server"] and "API key set" in settings["server"]
    assert settings["sdk"] == "letta-client 1.12.1" and settings["agent_embedding"] == "fake/keyword"
    assert d["internal_models"] == ["fake/keyword"]
    assert API_KEY not in json.dumps(d)  # the key itself is never reported
    assert system.isolation["mode"] == "process" and system.provenance and system.supports_snapshot


@pytest.mark.slow
def test_store_flush_retrieve_with_provenance(stub, fake):
    _store_all(stub, "run-a")
    agent = _agent_of(fake, "run-a")
    assert agent["embedding_config"]["handle"] == "fake/keyword" and "drift-conformance" in agent["tags"]
    passages = fake.passages[agent["id"]]  # what the server holds: one tagged passage per message
    assert [p["text"] for p in passages] == [TEXT_OF[m] for m in ALL_IDS]
    assert [p["tags"] for p in passages] == [[f"drift-msg:{m}", f"drift-session:{m[:2]}"] for m in ALL_IDS]
    assert [p["created_at"] for p in passages] == [TIME_OF[m] for m in ALL_IDS]
    hits = _retrieve(stub, "run-a", "Where does Carla live, Lisbon?")
    assert len(hits) == 3 and _ids(hits)[0] == "s1-m3"
    for h in hits:  # provenance: exactly the message the hit is, its text and its timestamp
        assert len(h.source_ids) == 1 and h.text == TEXT_OF[h.source_ids[0]]
        assert h.timestamp == TIME_OF[h.source_ids[0]]
    assert [h.score for h in hits] == [1.0, 0.5, round(1 / 3, 6)]  # rank-derived
    assert _ids(_retrieve(stub, "run-a", "beagle Rufus", k=1)) == ["s1-m1"]
    assert _ids(_retrieve(stub, "run-a", "green tea or coffee", k=1)) == ["s2-m3"]  # system role, private scope
    assert _ids(_retrieve(stub, "run-a", "Berlin marathon", k=1)) == ["s2-m1"]


@pytest.mark.slow
def test_k_is_honoured(stub):
    _store_all(stub, "run-k")
    for k in (1, 2, 5):
        assert len(_retrieve(stub, "run-k", "dogs", k=k)) == k
    everything = _retrieve(stub, "run-k", "dogs", k=50)
    assert sorted(_ids(everything)) == sorted(ALL_IDS)
    with pytest.raises(grpc.RpcError) as err:
        stub.Retrieve(pb.RetrieveRequest(namespace="run-k", query="x", k=0), timeout=30)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.slow
def test_a_namespace_must_be_reset_first_and_named(stub):
    assert_namespace_rules(stub)


@pytest.mark.slow
def test_snapshot_lists_every_item_in_storage_order(stub, fake):
    _store_all(stub, "run-s")
    items = _snapshot(stub, "run-s")
    assert [sid for i in items for sid in i.source_ids] == ALL_IDS
    assert [i.text for i in items] == [TEXT_OF[m] for m in ALL_IDS]
    assert [i.timestamp for i in items] == [TIME_OF[m] for m in ALL_IDS]
    assert [i.item_id for i in items] == [p["id"] for p in fake.passages[_agent_of(fake, "run-s")["id"]]]


@pytest.mark.slow
def test_snapshot_pages_through_more_than_one_listing_page(stub):
    many = [pb.Session(session_id=f"p{i}", index=i, time="2026-04-01T10:00:00Z", participants=["bob"],
                       messages=[_message(f"p{i}-m{j}", "bob", "user", f"note {i} {j}", "2026-04-01T10:00:00Z")
                                 for j in range(10)]) for i in range(25)]  # 250 > one page of 100
    _store_all(stub, "run-p", many)
    items = _snapshot(stub, "run-p")
    assert [sid for i in items for sid in i.source_ids] == [m.message_id for s in many for m in s.messages]
    assert stub.Forget(pb.ForgetRequest(namespace="run-p", source_ids=["p24"]), timeout=60).items_removed == 10
    assert len(_snapshot(stub, "run-p")) == 240


@pytest.mark.slow
def test_forget_by_message_and_by_session(stub, fake):
    _store_all(stub, "run-f")
    gone = stub.Forget(pb.ForgetRequest(namespace="run-f", source_ids=["s1-m3", "no-such-id"]), timeout=60)
    assert gone.items_removed == 1
    assert stub.Flush(pb.FlushRequest(namespace="run-f", timeout_s=30), timeout=60).ready is True
    assert [sid for i in _snapshot(stub, "run-f") for sid in i.source_ids] == [m for m in ALL_IDS if m != "s1-m3"]
    assert "s1-m3" not in _ids(_retrieve(stub, "run-f", "Carla Lisbon", k=10))
    gone = stub.Forget(pb.ForgetRequest(namespace="run-f", source_ids=["s2"]), timeout=60)
    assert gone.items_removed == 3
    assert [sid for i in _snapshot(stub, "run-f") for sid in i.source_ids] == ["s1-m1", "s1-m2"]
    assert sorted(_ids(_retrieve(stub, "run-f", "marathon", k=10))) == ["s1-m1", "s1-m2"]
    assert len(fake.passages[_agent_of(fake, "run-f")["id"]]) == 2  # deleted on the server


@pytest.mark.slow
def test_reset_replaces_the_agent_and_namespaces_are_isolated(stub, fake):
    _store_all(stub, "run-b")
    old = _agent_of(fake, "run-b")["id"]
    stub.Reset(pb.ResetRequest(namespace="run-c"), timeout=60)
    stub.Store(pb.StoreRequest(namespace="run-c", session=pb.Session(
        session_id="x1", index=0, time="2026-03-02T10:00:00Z", participants=["bob"],
        messages=[_message("x1-m1", "bob", "user", "Bob's cat is called Miso.", "2026-03-02T10:00:00Z")])),
        timeout=60)
    assert _ids(_retrieve(stub, "run-c", "dogs", k=10)) == ["x1-m1"]
    assert "x1-m1" not in _ids(_retrieve(stub, "run-b", "cat called Miso", k=10))
    stub.Reset(pb.ResetRequest(namespace="run-b"), timeout=60)
    assert old in fake.deleted_agents and old not in fake.agents  # the old agent is gone
    assert _agent_of(fake, "run-b")["id"] != old
    assert _snapshot(stub, "run-b") == [] and _retrieve(stub, "run-b", "dogs") == []
    assert [sid for i in _snapshot(stub, "run-c") for sid in i.source_ids] == ["x1-m1"]


@pytest.mark.slow
def test_only_archival_endpoints_are_called_never_the_agent_loop(stub, fake):
    _store_all(stub, "run-l")
    _retrieve(stub, "run-l", "beagle")
    paths = {path for _, path in fake.requests}
    assert all(p == "/v1/health/" or p.startswith("/v1/agents") for p in paths), paths
    assert not [p for p in paths if "/messages" in p], "the agent is never messaged (no LLM call)"
    verbs = {(m, p.split("/")[-1] if p.count("/") > 3 else p) for m, p in fake.requests}
    assert ("POST", "archival-memory") in verbs and ("GET", "search") in verbs


@pytest.mark.slow
def test_agents_are_deleted_when_the_adapter_exits(fake):
    with _environ(LETTA_BASE_URL=fake.url, LETTA_API_KEY=API_KEY):
        other = open_adapter("letta")
    try:
        other.client.stub.Reset(pb.ResetRequest(namespace="exit-ns"), timeout=60)
        agent = _agent_of(fake, "exit-ns")["id"]
    finally:
        other.close()
    assert agent in fake.deleted_agents and agent not in fake.agents


@pytest.mark.slow
def test_a_wrong_api_key_fails_startup(fake):
    from conformance.backend.process import AdapterStartError

    with _environ(LETTA_BASE_URL=fake.url, LETTA_API_KEY="wrong"):
        with pytest.raises(AdapterStartError) as err:
            open_adapter("letta").close()
    assert "does not answer GET /v1/health/" in str(err.value) and "401" in str(err.value)


def _live_target() -> str | None:
    """Why the live test cannot run, or None when LETTA_BASE_URL names a live Letta server."""
    url = LIVE_ENV.get("LETTA_BASE_URL")
    if not url:
        return "LETTA_BASE_URL is not set: no live Letta server to test against"
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/v1/health/", timeout=5) as reply:
            version = str(json.load(reply).get("version", ""))
    except Exception as exc:  # noqa: BLE001
        return f"LETTA_BASE_URL={url} does not answer GET /v1/health/ ({type(exc).__name__}: {exc})"
    if version.startswith("fake-letta"):
        return f"LETTA_BASE_URL={url} is the fake Letta server, not a live one"
    return None


@pytest.mark.slow
def test_live_server():
    reason = _live_target()
    if reason:
        pytest.skip(reason)
    with _environ(**LIVE_ENV):
        live = open_adapter("letta")
    try:
        stub = live.client.stub
        _store_all(stub, "drift-letta-live")
        hits = _retrieve(stub, "drift-letta-live", "Where does Carla live, Lisbon?", k=3)
        assert hits and all(len(h.source_ids) == 1 and h.source_ids[0] in ALL_IDS for h in hits)
        assert "s1-m3" in _ids(hits)
        assert sorted(sid for i in _snapshot(stub, "drift-letta-live") for sid in i.source_ids) == sorted(ALL_IDS)
        assert stub.Forget(pb.ForgetRequest(namespace="drift-letta-live", source_ids=["s2"]), timeout=60
                           ).items_removed == 3
        stub.Reset(pb.ResetRequest(namespace="drift-letta-live"), timeout=60)
    finally:
        live.close()

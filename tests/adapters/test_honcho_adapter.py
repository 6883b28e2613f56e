"""The honcho adapter (honcho-ai SDK) end to end over gRPC, against a real Honcho server.

Started through the runner's own entry point (``conformance.backend.systems.open_system``),
so the adapter runs as its own process in the virtualenv that ``drift-conformance
--adapter honcho`` reuses. The server tests need a running Honcho server named by
``HONCHO_BASE_URL`` (adapters/honcho/README.md says how to start one on loopback) and
skip, with that reason, when the variable is unset. Every test skips when the adapter's
virtualenv cannot be built because no package index is reachable.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import grpc
import pytest

from conformance.backend.manifest import load_manifest
from conformance.backend.venvs import VenvError, looks_offline
from conformance.paths import adapters_dir
from drift_sdk.v1 import memory_backend_pb2 as pb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from adapter_harness import snapshot as _snapshot, source_ids as _ids  # noqa: E402
from adapter_harness import message as _message  # noqa: E402
from adapter_harness import open_adapter, retrieve as _retrieve, store_all as _store_all  # noqa: E402

ADAPTER = adapters_dir() / "honcho"
BASE_URL = os.environ.get("HONCHO_BASE_URL", "").strip()
needs_server = pytest.mark.skipif(
    not BASE_URL,
    reason="HONCHO_BASE_URL is not set: start a Honcho server (adapters/honcho/README.md) and set "
           "HONCHO_BASE_URL=http://127.0.0.1:PORT to run the honcho adapter against it")


@pytest.fixture(scope="module")
def system():
    opened = open_adapter("honcho")
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def stub(system):
    return system.client.stub


def _ns(name):
    # The server keeps every workspace; a fresh namespace per test run keeps runs apart.
    return f"test-honcho/{uuid.uuid4().hex[:8]}/{name}"


T1, T2 = "2026-03-02T10:00:00Z", "2026-03-09T18:30:00Z"
SESSIONS = [
    pb.Session(session_id="s1", index=0, time=T1, participants=["alice", "agent"], messages=[
        _message("s1-m1", "alice", "user", "I just adopted a beagle puppy and named him Rufus.", T1),
        _message("s1-m2", "agent", "assistant", "Congratulations! Beagles are energetic dogs.", "2026-03-02T10:00:20Z"),
        _message("s1-m3", "alice", "user", "My sister Carla moved to Lisbon to work as a nurse.",
                 "2026-03-02T10:01:00Z"),
    ]),
    pb.Session(session_id="s2", index=1, time=T2, participants=["alice", "agent"], messages=[
        _message("s2-m1", "alice", "user", "I'm training for the Berlin marathon in September.", T2),
        _message("s2-m2", "agent", "assistant", "Great goal. How many kilometres do you run each week?",
                 "2026-03-09T18:30:30Z"),
        _message("s2-m3", "alice", "system", "Reminder: alice prefers green tea over coffee.",
                 "2026-03-09T18:31:00Z",
                 scope="private"),
    ]),
]
ALL_IDS = [m.message_id for s in SESSIONS for m in s.messages]
TEXT_OF = {m.message_id: f"{m.author}: {m.text}" for s in SESSIONS for m in s.messages}
TIME_OF = {m.message_id: m.timestamp for s in SESSIONS for m in s.messages}


def test_manifest_validates_against_the_launcher_schema():
    manifest = load_manifest(ADAPTER)
    assert manifest.name == "honcho" and manifest.kind == "system" and manifest.entry == "adapter.py"
    assert manifest.env == ["HONCHO_BASE_URL", "HONCHO_API_KEY"]
    reqs = (ADAPTER / "requirements.txt").read_text().splitlines()
    pins = [line for line in reqs if line.strip() and not line.startswith("#")]
    assert pins and all("==" in line for line in pins), "every requirement is pinned"
    assert any(line.startswith("honcho-ai==2.") for line in pins)


@pytest.mark.slow
def test_missing_base_url_fails_with_a_clear_error(monkeypatch):
    from conformance.backend.systems import open_system

    monkeypatch.delenv("HONCHO_BASE_URL", raising=False)
    try:
        opened = open_system("honcho")
    except VenvError as exc:
        if looks_offline(str(exc)):
            pytest.skip(f"honcho adapter venv cannot be built: no package index reachable\n{exc}")
        raise
    except Exception as exc:  # AdapterStartError with the adapter's last stderr lines
        assert "HONCHO_BASE_URL is not set" in str(exc)
    else:
        opened.close()
        pytest.fail("the honcho adapter started without HONCHO_BASE_URL")


@pytest.mark.slow
@needs_server
def test_describe_through_the_runner(system):
    d = system.describe
    assert d["name"] == "honcho" and d["version"].startswith("0.1 (honcho-ai 2.")
    caps = d["capabilities"]
    assert caps["provenance"] and caps["snapshot"] and caps["flush_signal"]
    assert not caps["forget"] and not caps["scopes"] and not caps["time_aware"] and not caps["deterministic"]
    assert d["settings"]["server"] == BASE_URL.rstrip("/")
    assert system.isolation["mode"] == "process" and system.isolation["verified"] == "live"


@pytest.mark.slow
@needs_server
def test_store_flush_retrieve_with_provenance(stub):
    ns = _ns("a")
    _store_all(stub, ns)
    hits = _retrieve(stub, ns, "Which city does Carla live in?")
    assert hits and _ids(hits)[0] == "s1-m3"
    assert hits[0].text == "alice: My sister Carla moved to Lisbon to work as a nurse."
    for h in hits:  # provenance: exactly the message the hit is, its text and its timestamp
        assert len(h.source_ids) == 1 and h.text == TEXT_OF[h.source_ids[0]]
        assert h.timestamp == TIME_OF[h.source_ids[0]]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # lexical search: the words must be there ("dog" would not find "beagle puppy")
    assert _ids(_retrieve(stub, ns, "What did alice name her beagle?", k=1)) == ["s1-m1"]
    # system-role and private messages are stored like the others
    assert _ids(_retrieve(stub, ns, "Does alice drink tea or coffee?", k=1)) == ["s2-m3"]
    assert _ids(_retrieve(stub, ns, "marathon in Berlin", k=1)) == ["s2-m1"]
    # every stored message is found by some word of its own
    for s in SESSIONS:
        for m in s.messages:
            word = max(m.text.replace(".", " ").replace("!", " ").split(), key=len)
            assert m.message_id in _ids(_retrieve(stub, ns, word, k=6)), (word, m.message_id)


@pytest.mark.slow
@needs_server
def test_k_is_honoured(stub):
    ns = _ns("k")
    _store_all(stub, ns)
    for k in (1, 2, 5):
        assert len(_retrieve(stub, ns, "alice Carla Rufus marathon tea coffee dogs", k=k)) <= k


@pytest.mark.slow
@needs_server
def test_snapshot_lists_every_stored_message(stub):
    ns = _ns("snap")
    _store_all(stub, ns)
    items = _snapshot(stub, ns)
    assert [tuple(i.source_ids) for i in items] == [(mid,) for mid in ALL_IDS]
    assert [i.text for i in items] == [TEXT_OF[mid] for mid in ALL_IDS]
    assert [i.timestamp for i in items] == [TIME_OF[mid] for mid in ALL_IDS]
    assert len({i.item_id for i in items}) == len(items)


@pytest.mark.slow
@needs_server
def test_reset_empties_and_namespaces_are_isolated(stub):
    a, b = _ns("iso-a"), _ns("iso-b")
    _store_all(stub, a)
    _store_all(stub, b, SESSIONS[1:])
    assert "s1-m3" not in _ids(_retrieve(stub, b, "Carla Lisbon nurse", k=6))
    assert _ids(_retrieve(stub, a, "Carla Lisbon nurse", k=1)) == ["s1-m3"]
    stub.Reset(pb.ResetRequest(namespace=a), timeout=60)
    assert _snapshot(stub, a) == [] and _retrieve(stub, a, "Carla Lisbon nurse") == []
    assert len(_snapshot(stub, b)) == len(SESSIONS[1].messages)


@pytest.mark.slow
@needs_server
def test_bad_requests_are_status_codes(stub):
    with pytest.raises(grpc.RpcError) as never_reset:
        _retrieve(stub, _ns("never-reset"), "anything")
    assert never_reset.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as empty:
        stub.Reset(pb.ResetRequest(namespace=""), timeout=60)
    assert empty.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as forget:
        stub.Forget(pb.ForgetRequest(namespace=_ns("f"), source_ids=["x"]), timeout=60)
    assert forget.value.code() == grpc.StatusCode.UNIMPLEMENTED

"""Shared pieces of the adapter tests: start an adapter, a small sample corpus, and the
Store/Flush and Retrieve calls every adapter test makes over gRPC."""

from __future__ import annotations

import os
from contextlib import contextmanager

import pytest

from conformance.backend.venvs import VenvError, looks_offline
from drift_sdk.v1 import memory_backend_pb2 as pb


def open_adapter(name: str):
    """Start a built-in adapter through the real launcher; skip when its venv cannot be built offline."""
    from conformance.backend.systems import open_system

    try:
        return open_system(name)
    except VenvError as exc:
        if looks_offline(str(exc)):
            pytest.skip(f"{name} adapter venv cannot be built: no package index reachable\n{exc}")
        raise


def message(mid, author, role, text, ts, scope="shared"):
    return pb.Message(message_id=mid, author=author, role=role, text=text, timestamp=ts, scope=scope)


#: Two sessions with distinct facts, a system-role message and a private one.
SESSIONS = [
    pb.Session(session_id="s1", index=0, time="2026-03-02T10:00:00Z", participants=["alice", "agent"], messages=[
        message("s1-m1", "alice", "user", "I just adopted a beagle puppy and named him Rufus.", "2026-03-02T10:00:00Z"),
        message("s1-m2", "agent", "assistant", "Congratulations! Beagles are energetic dogs.", "2026-03-02T10:00:20Z"),
        message("s1-m3", "alice", "user", "My sister Carla moved to Lisbon to work as a nurse.", "2026-03-02T10:01:00Z"),
    ]),
    pb.Session(session_id="s2", index=1, time="2026-03-09T18:30:00Z", participants=["alice", "agent"], messages=[
        message("s2-m1", "alice", "user", "I'm training for the Berlin marathon in September.", "2026-03-09T18:30:00Z"),
        message("s2-m2", "agent", "assistant", "Great goal. How many kilometres do you run each week?",
                "2026-03-09T18:30:30Z"),
        message("s2-m3", "alice", "system", "Reminder: alice prefers green tea over coffee.", "2026-03-09T18:31:00Z",
                scope="private"),
    ]),
]


def store_all(stub, ns, sessions=SESSIONS, flush_s=30):
    """Reset ``ns``, store every session (asserting every message was kept) and Flush."""
    stub.Reset(pb.ResetRequest(namespace=ns), timeout=60)
    stored = [stub.Store(pb.StoreRequest(namespace=ns, session=s), timeout=60).items_stored for s in sessions]
    assert stored == [len(s.messages) for s in sessions]
    assert stub.Flush(pb.FlushRequest(namespace=ns, timeout_s=flush_s), timeout=flush_s + 30).ready is True


def retrieve(stub, ns, query, k=3):
    return list(stub.Retrieve(pb.RetrieveRequest(namespace=ns, query=query, k=k, querying_entity="alice",
                                                 now="2026-03-10T09:00:00Z"), timeout=60).hits)


def snapshot(stub, ns):
    """Every item of the namespace's Snapshot stream."""
    return list(stub.Snapshot(pb.SnapshotRequest(namespace=ns), timeout=60))


def source_ids(hits):
    """The provenance ids of hits, in hit order."""
    return [sid for h in hits for sid in h.source_ids]


def assert_namespace_rules(stub, query="dogs"):
    """Every call on a never-Reset or empty namespace fails INVALID_ARGUMENT with a clear
    message; Reset alone gives an empty memory that Flush reports ready."""
    import grpc

    calls = {
        "Store": lambda ns: stub.Store(pb.StoreRequest(namespace=ns, session=SESSIONS[0]), timeout=30),
        "Flush": lambda ns: stub.Flush(pb.FlushRequest(namespace=ns, timeout_s=5), timeout=30),
        "Retrieve": lambda ns: retrieve(stub, ns, query),
        "Snapshot": lambda ns: snapshot(stub, ns),
        "Forget": lambda ns: stub.Forget(pb.ForgetRequest(namespace=ns, source_ids=["s1-m1"]), timeout=30),
    }
    for name, call in calls.items():
        for ns, says in (("never-reset", "call Reset first"), ("", "empty namespace")):
            with pytest.raises(grpc.RpcError) as err:
                call(ns)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, name
            assert says in err.value.details(), (name, err.value.details())
    with pytest.raises(grpc.RpcError) as err:
        stub.Reset(pb.ResetRequest(namespace=""), timeout=30)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    stub.Reset(pb.ResetRequest(namespace="reset-only"), timeout=30)  # Reset alone: an empty memory
    assert retrieve(stub, "reset-only", query) == [] and snapshot(stub, "reset-only") == []
    assert stub.Flush(pb.FlushRequest(namespace="reset-only", timeout_s=5), timeout=30).ready is True


@contextmanager
def scoped_env(names, **values):
    """Set (value) or remove (None) each variable of ``names`` for the duration; restore after.

    The runner's launcher passes an adapter only the variables its adapter.yaml names, read
    from this process's environment, so a test sets them here around the start.
    """
    saved = {k: os.environ.get(k) for k in names}
    try:
        for k in names:
            v = values.get(k)
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def assert_scopes_honoured(stub, ns):
    """A private message (``s2-m3``, alice's) comes back to alice and never to bob, nor to a
    Retrieve that names no entity; the shared messages come back to all three."""
    store_all(stub, ns)

    def ids(entity):
        hits = stub.Retrieve(pb.RetrieveRequest(namespace=ns, query="alice prefers green tea over coffee", k=10,
                                                querying_entity=entity, now="2026-03-10T09:00:00Z"), timeout=60).hits
        return {sid for h in hits for sid in h.source_ids}

    assert "s2-m3" in ids("alice")
    for other in ("bob", ""):
        seen = ids(other)
        assert "s2-m3" not in seen and seen, other

"""Snapshot and Retrieve replies are bounded; a reply past its bound is that system's fault,
named (issue 31, item 6).

A Snapshot of 1 M items per checkpoint took 8.5 min for one scenario and 2.1 GB of runner
memory, exit 0, no fault. The runner now reads a Snapshot as the stream it is, stops (and
cancels the call) once it passes the bound, and records a ``contract`` fault naming the
system, the call and the bound; a Retrieve of far more hits than asked, or larger than the
gRPC message limit, likewise.
"""

from __future__ import annotations

import time
from concurrent import futures
from pathlib import Path

import grpc
import pytest

from conformance.backend.client import BackendClient, ReplyBounds, ReplyTooLarge
from conformance.backend.systems import RemoteSystem
from conformance.contract.fixture import Message, Session
from conformance.runner.records import read_records
from conformance.runner.run import RunConfig, run_corpus
from drift_sdk import Backend, Capabilities, Hit, MemoryItem, build_server
from drift_sdk.server import MAX_MESSAGE_BYTES, _Servicer
from drift_sdk.v1 import memory_backend_pb2 as pb
from drift_sdk.v1 import memory_backend_pb2_grpc as pb_grpc

T = "2026-01-01T00:00:00Z"
REPO = Path(__file__).resolve().parents[2]


class Flood(Backend):
    """Honest Store; a Snapshot of ``items`` items of ``text``, a Retrieve of ``hits`` hits of ``hit_text``."""

    name, version = "flood", "0"
    capabilities = Capabilities(provenance=True, snapshot=True)

    def __init__(self, items=0, text="x", hits=1, hit_text="x"):
        self.items, self.text, self.hits, self.hit_text = items, text, hits, hit_text
        self.seen: dict[str, list] = {}

    def reset(self, namespace):
        self.seen[namespace] = []

    def store(self, namespace, session):
        self.seen.setdefault(namespace, []).extend(session.messages)

    def retrieve(self, namespace, query, k, querying_entity, now):
        first = self.seen.get(namespace, [])[:1]
        ids = (first[0].message_id,) if first else ()
        return [Hit(self.hit_text, 1.0, ids, T)] * self.hits

    def snapshot(self, namespace):
        honest = [MemoryItem(m.message_id, m.text, (m.message_id,), m.timestamp)
                  for m in self.seen.get(namespace, [])]
        return honest + [MemoryItem(f"junk-{i}", self.text, (), T) for i in range(self.items)]


@pytest.fixture
def serve():
    started = []

    def make(backend: Backend, bounds: ReplyBounds | None = None) -> BackendClient:
        server, port = build_server(backend)
        server.start()
        client = BackendClient(f"127.0.0.1:{port}", "flood")
        if bounds is not None:
            client.bounds = bounds
        started.append((server, client))
        return client

    yield make
    for server, client in started:
        client.close()
        server.stop(0)


def _session(n: int = 2) -> Session:
    return Session(session_id="s0", index=0, time=T, participants=["u"],
                   messages=[Message(message_id=f"m{i}", author="u", role="user", text=f"hello {i}", timestamp=T)
                             for i in range(n)])


def test_a_snapshot_of_too_many_items_is_cut_off_and_named(serve):
    client = serve(Flood(items=200_000))
    client.reset("ns")
    client.store("ns", _session())
    bound = client.bounds.snapshot_items(2)
    assert bound < 200_000
    started = time.perf_counter()
    with pytest.raises(ReplyTooLarge) as err:
        client.snapshot("ns")
    elapsed = time.perf_counter() - started
    message = str(err.value)
    assert "flood" in message and "Snapshot" in message and f"{bound:,}" in message, message
    assert err.value.category == "contract"
    assert elapsed < 20, elapsed  # stopped at the bound, not after reading 200,000 items


def test_a_snapshot_of_too_many_bytes_is_cut_off_and_named(serve):
    client = serve(Flood(items=40, text="y" * (1 << 20)))  # 40 MiB for two stored messages
    client.reset("ns")
    client.store("ns", _session())
    with pytest.raises(ReplyTooLarge) as err:
        client.snapshot("ns")
    assert "bytes" in str(err.value) and "Snapshot" in str(err.value), str(err.value)


def test_the_snapshot_bound_grows_with_what_was_stored(serve):
    """An honest memory of a long stream may hold many items: the bound is relative to it."""
    client = serve(Flood(items=0))
    client.reset("ns")
    big = _session(3000)
    client.store("ns", big)
    assert len(client.snapshot("ns")) == 3000
    assert client.bounds.snapshot_items(3000) > client.bounds.snapshot_items(2)
    client.reset("ns")  # a reset forgets what was stored: the bound falls back
    assert client.stored("ns") == (0, 0)


class _Untruncated(_Servicer):
    """A hostile server's Retrieve: every hit it has, not the first k (the SDK cuts at k)."""

    def Retrieve(self, request, context):
        hits = self.backend.retrieve(request.namespace, request.query, request.k, request.querying_entity, request.now)
        return pb.RetrieveResponse(hits=[pb.Hit(text=h.text, score=h.score, source_ids=h.source_ids,
                                                timestamp=h.timestamp) for h in hits])


def test_a_retrieve_of_far_more_hits_than_asked_is_named():
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2),
                         options=[("grpc.max_send_message_length", MAX_MESSAGE_BYTES)])
    pb_grpc.add_MemoryBackendServicer_to_server(_Untruncated(Flood(hits=50_000), False), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    client = BackendClient(f"127.0.0.1:{port}", "flood")
    client.reset("ns")
    client.store("ns", _session())
    with pytest.raises(ReplyTooLarge) as err:
        client.retrieve("ns", "q", 10, "u", T)
    assert "Retrieve" in str(err.value) and "50,000" in str(err.value), str(err.value)
    assert err.value.category == "contract"
    client.close()
    server.stop(0)


def test_a_retrieve_past_the_message_limit_is_the_systems_fault(serve):
    client = serve(Flood(hits=1, hit_text="z" * (MAX_MESSAGE_BYTES + 1024)))
    client.reset("ns")
    with pytest.raises(ReplyTooLarge) as err:
        client.retrieve("ns", "q", 10, "u", T)
    assert "Retrieve" in str(err.value) and f"{MAX_MESSAGE_BYTES:,}" in str(err.value), str(err.value)


def test_a_run_records_the_oversized_snapshot_as_that_systems_contract_fault(serve, tmp_path):
    client = serve(Flood(items=300_000))
    flood = RemoteSystem("flood", "grpc://test", client, describe={"capabilities": {"snapshot": True,
                                                                                     "provenance": True}})
    fixture = REPO / "fixtures" / "crw-short-002.jsonl"
    started = time.perf_counter()
    run_corpus([fixture], [flood], tmp_path / "r.jsonl", RunConfig(), "t")
    assert time.perf_counter() - started < 60
    faults = [r for r in read_records(tmp_path / "r.jsonl") if r["kind"] == "fault"]
    assert faults, "an oversized Snapshot went unnoticed"
    fault = faults[0]
    assert fault["system"] == "flood" and fault["call"] == "Snapshot" and fault["category"] == "contract"
    assert "items" in fault["error"] and "bound" in fault["error"], fault["error"]

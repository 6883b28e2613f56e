"""The SDK server and the runner's client, in one process over loopback gRPC."""

import time

import grpc
import pytest

from conformance.backend.client import BackendCallError, BackendClient, Deadlines
from conformance.contract.fixture import Message, Session
from conformance.backend.systems import RemoteSystem
from drift_sdk import Backend, Capabilities, FlushResult, Hit, MemoryItem, StoreResult, Usage, build_server

T = "2026-01-01T00:00:00Z"


class Toy(Backend):
    name, version = "toy", "0"
    capabilities = Capabilities(provenance=True, snapshot=True)

    def __init__(self):
        self.data = {}

    def reset(self, namespace):
        self.data[namespace] = []

    def store(self, namespace, session):
        if namespace not in self.data:
            raise ValueError(f"unknown namespace {namespace}")
        self.data[namespace].extend(session.messages)
        return StoreResult(usage=Usage(input_tokens=7), items_stored=len(session.messages))

    def retrieve(self, namespace, query, k, querying_entity, now):
        if query == "slow":
            time.sleep(1.0)
        if query == "crash":
            raise KeyError("boom")
        return [Hit(m.text, 1.0, (m.message_id,), m.timestamp) for m in self.data[namespace]] * 5

    def snapshot(self, namespace):
        return [MemoryItem(m.message_id, m.text, (m.message_id,), m.timestamp) for m in self.data[namespace]]


@pytest.fixture
def client():
    server, port = build_server(Toy())
    server.start()
    c = BackendClient(f"127.0.0.1:{port}", "toy", Deadlines(retrieve=0.3))
    yield c
    c.close()
    server.stop(0)


def session():
    return Session(session_id="s0", index=0, time=T, participants=["u"],
                   messages=[Message(message_id="m0", author="u", role="user", text="hello Rome", timestamp=T),
                             Message(message_id="m1", author="u", role="user", text="bye", timestamp=T)])


def test_round_trip_and_usage(client):
    assert client.serving()
    assert client.describe().capabilities.snapshot is True
    client.reset("n")
    reply, ms = client.store("n", session())
    assert reply.items_stored == 2 and reply.usage.input_tokens == 7 and ms > 0
    items = client.snapshot("n")
    assert [i.source_ids[0] for i in items] == ["m0", "m1"]


def test_k_is_honoured_by_the_server(client):
    client.reset("n")
    client.store("n", session())
    reply, _ = client.retrieve("n", "q", 3, "u", T)
    assert len(reply.hits) == 3


def test_errors_map_to_status_codes(client):
    with pytest.raises(BackendCallError) as err:
        client.store("never-reset", session())
    assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT and "Store" in str(err.value)
    with pytest.raises(BackendCallError) as err:
        client.forget("n", ["m0"])
    assert err.value.code == grpc.StatusCode.UNIMPLEMENTED
    client.reset("n")
    with pytest.raises(BackendCallError) as err:
        client.retrieve("n", "crash", 3, "u", T)
    assert err.value.code == grpc.StatusCode.INTERNAL and "KeyError" in err.value.details


def test_every_call_has_a_deadline(client):
    client.reset("n")
    with pytest.raises(BackendCallError) as err:
        client.retrieve("n", "slow", 3, "u", T)
    assert err.value.code == grpc.StatusCode.DEADLINE_EXCEEDED


def test_non_positive_k_is_invalid(client):
    client.reset("n")
    with pytest.raises(BackendCallError) as err:
        client.retrieve("n", "q", 0, "u", T)
    assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT


class ExtractsAtFlush(Toy):
    """Buffers at Store (no usage there) and spends its LLM tokens at Flush."""

    capabilities = Capabilities(provenance=True, snapshot=True, flush_signal=True)

    def flush(self, namespace, timeout_s):
        return FlushResult(ready=True, usage=Usage(input_tokens=1200, output_tokens=300, llm_calls=2))


def _served(backend):
    server, port = build_server(backend)
    server.start()
    return server, BackendClient(f"127.0.0.1:{port}", backend.name, Deadlines())


def test_flush_usage_crosses_the_wire_and_a_bool_flush_reports_zero():
    for backend, ready, usage in ((ExtractsAtFlush(), True, (1200, 300, 2)), (Toy(), False, (0, 0, 0))):
        server, c = _served(backend)
        try:
            c.reset("ns")
            reply = c.flush("ns", 1.0)
            assert reply.ready is ready
            assert (reply.usage.input_tokens, reply.usage.output_tokens, reply.usage.llm_calls) == usage
            # The runner's side reads it as a FlushOutcome.
            outcome = RemoteSystem("toy", "grpc://test", c).flush("ns", 1.0)
            assert outcome.ready is ready and tuple(outcome.usage.values()) == usage
        finally:
            c.close()
            server.stop(0)


def test_a_flush_result_not_ready_is_not_ready():
    class NotReady(Toy):
        def flush(self, namespace, timeout_s):
            return FlushResult(ready=False, usage=Usage(llm_calls=1))

    server, c = _served(NotReady())
    try:
        reply = c.flush("ns", 1.0)
        assert reply.ready is False and reply.usage.llm_calls == 1 and "assumed ready" in reply.note
    finally:
        c.close()
        server.stop(0)

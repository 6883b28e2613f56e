"""The runner's side of the wire: a gRPC client with a deadline on every call."""

from __future__ import annotations

import time
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from drift_sdk.server import MAX_MESSAGE_BYTES
from drift_sdk.v1 import memory_backend_pb2 as pb
from drift_sdk.v1 import memory_backend_pb2_grpc as pb_grpc
from conformance.errors import DriftError


@dataclass(frozen=True)
class Deadlines:
    """Seconds each RPC may take before it fails with DEADLINE_EXCEEDED."""

    describe: float = 10.0
    reset: float = 60.0
    store: float = 120.0
    flush_extra: float = 30.0
    """Added to the flush timeout the runner passes to the backend."""
    retrieve: float = 30.0
    snapshot: float = 300.0
    forget: float = 60.0
    health: float = 2.0


class BackendCallError(DriftError, RuntimeError):
    """An RPC failed. ``str()`` names the adapter, the call and the gRPC status."""

    def __init__(self, adapter: str, call: str, code: grpc.StatusCode | None, details: str):
        self.adapter, self.call, self.code, self.details = adapter, call, code, details
        status = code.name if code else "ERROR"
        super().__init__(f"adapter {adapter}: {call} failed with {status}: {details}")


def session_to_proto(session) -> pb.Session:
    """A fixture ``Session`` (pydantic) as a ``drift.v1.Session``."""
    return _fill_session(pb.Session(), session)


def store_request(namespace: str, session) -> pb.StoreRequest:
    """The ``StoreRequest`` of one fixture ``Session``, built in place (no message is copied)."""
    request = pb.StoreRequest(namespace=namespace)
    _fill_session(request.session, session)
    return request


def _fill_session(target: pb.Session, session) -> pb.Session:
    # Messages are added to the repeated field in place: building each one apart and passing
    # the list copies every message once more (it shows per Store, see bench/rpc_overhead.py).
    target.session_id, target.index, target.time = session.session_id, session.index, session.time
    target.participants.extend(session.participants)
    add = target.messages.add
    for m in session.messages:
        add(message_id=m.message_id, author=m.author, role=m.role, text=m.text, timestamp=m.timestamp,
            scope=m.scope)
    return target


USAGE_FIELDS = ("input_tokens", "output_tokens", "llm_calls")
MAX_USAGE = 10**9
"""Most LLM tokens (or calls) one Store or Retrieve can report: a billion is beyond any model's
context many times over, so a larger figure is a broken counter, not a cost."""


def usage_dict(usage: pb.Usage) -> dict[str, int]:
    return {name: getattr(usage, name) for name in USAGE_FIELDS}


def checked_usage(usage) -> tuple[dict[str, int], list[str]]:
    """A reply's usage as the runner counts it, and what it did against the contract.

    ``usage``: a mapping of :data:`USAGE_FIELDS` (missing ones are 0). A field that is not an
    integer (bool and float included), is negative, or exceeds :data:`MAX_USAGE` is a
    contract violation, one line per field naming it, and is counted as 0: a negative token
    count would refund cost that was never spent (token cost, TES and DRIFT-E would improve
    with the same memory). Returns ``(usage with every field a valid int, violations)``.
    """
    counted, problems = {}, []
    for name in USAGE_FIELDS:
        value = (usage or {}).get(name, 0)
        if isinstance(value, bool) or not isinstance(value, int):
            problems.append(f"usage {name} is not an integer ({value!r}; counted as 0)")
        elif value < 0:
            problems.append(f"usage {name} is negative ({value}; counted as 0)")
        elif value > MAX_USAGE:
            problems.append(f"usage {name} is absurd ({value} > {MAX_USAGE}; counted as 0)")
        else:
            counted[name] = value
            continue
        counted[name] = 0
    return counted, problems


class BackendClient:
    """Typed calls to one ``MemoryBackend`` at ``address`` (``host:port``)."""

    def __init__(self, address: str, adapter: str, deadlines: Deadlines = Deadlines()):
        self.address, self.adapter, self.deadlines = address, adapter, deadlines
        self.channel = grpc.insecure_channel(
            address, options=[("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                              ("grpc.max_send_message_length", MAX_MESSAGE_BYTES)])
        self.stub = pb_grpc.MemoryBackendStub(self.channel)
        self.health = health_pb2_grpc.HealthStub(self.channel)

    def close(self) -> None:
        self.channel.close()

    def _call(self, name: str, fn, request, timeout: float):
        try:
            return fn(request, timeout=timeout)
        except grpc.RpcError as exc:
            raise BackendCallError(self.adapter, name, exc.code(), exc.details() or str(exc)) from None

    def serving(self) -> bool:
        """True when the health service says SERVING (False on any error)."""
        try:
            reply = self.health.Check(health_pb2.HealthCheckRequest(service=""), timeout=self.deadlines.health)
        except grpc.RpcError:
            return False
        return reply.status == health_pb2.HealthCheckResponse.SERVING

    def describe(self) -> pb.DescribeResponse:
        return self._call("Describe", self.stub.Describe, pb.DescribeRequest(), self.deadlines.describe)

    def reset(self, namespace: str) -> None:
        self._call("Reset", self.stub.Reset, pb.ResetRequest(namespace=namespace), self.deadlines.reset)

    def store(self, namespace: str, session) -> tuple[pb.StoreResponse, float]:
        """Store one session; returns the response and the wall time in ms."""
        request = store_request(namespace, session)
        started = time.perf_counter()
        reply = self._call("Store", self.stub.Store, request, self.deadlines.store)
        return reply, (time.perf_counter() - started) * 1000.0

    def flush(self, namespace: str, timeout_s: float) -> pb.FlushResponse:
        return self._call("Flush", self.stub.Flush, pb.FlushRequest(namespace=namespace, timeout_s=timeout_s),
                          timeout_s + self.deadlines.flush_extra)

    def retrieve(self, namespace: str, query: str, k: int, querying_entity: str, now: str
                 ) -> tuple[pb.RetrieveResponse, float]:
        """Retrieve; returns the response and the read latency in ms (call to full reply)."""
        request = pb.RetrieveRequest(namespace=namespace, query=query, k=k, querying_entity=querying_entity, now=now)
        started = time.perf_counter()
        reply = self._call("Retrieve", self.stub.Retrieve, request, self.deadlines.retrieve)
        return reply, (time.perf_counter() - started) * 1000.0

    def snapshot(self, namespace: str) -> list[pb.MemoryItem]:
        try:
            return list(self.stub.Snapshot(pb.SnapshotRequest(namespace=namespace), timeout=self.deadlines.snapshot))
        except grpc.RpcError as exc:
            raise BackendCallError(self.adapter, "Snapshot", exc.code(), exc.details() or str(exc)) from None

    def forget(self, namespace: str, source_ids: list[str]) -> int:
        reply = self._call("Forget", self.stub.Forget, pb.ForgetRequest(namespace=namespace, source_ids=source_ids),
                           self.deadlines.forget)
        return reply.items_removed

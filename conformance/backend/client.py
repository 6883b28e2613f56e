"""The runner's side of the wire: a gRPC client with a deadline on every call."""

from __future__ import annotations

import functools
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


class ReplyTooLarge(BackendCallError):
    """A Snapshot or Retrieve reply past its :class:`ReplyBounds`: the system's contract fault.

    ``str()`` names the adapter, the call, what was exceeded (items, hits or bytes) and the bound."""

    category = "contract"

    def __init__(self, adapter: str, call: str, what: str):
        super().__init__(adapter, call, None, f"reply too large: {what}")


@dataclass(frozen=True)
class ReplyBounds:
    """The most a reply may hold before the runner stops reading it.

    A Snapshot may hold ``snapshot_items_base`` items plus ``snapshot_items_per_message`` per
    message stored in the namespace since its last Reset, and ``snapshot_bytes_base`` bytes of
    items (their wire size: text, ids, time) plus ``snapshot_bytes_per_byte`` times the bytes
    stored (messages' text, ids and times): an honest memory's
    Snapshot grows with what it was given, never by orders of magnitude. A Retrieve may hold
    ``retrieve_hits_per_k`` × k + ``retrieve_hits_base`` hits (the runner repairs and reports
    any count past k; far past it is garbage) and no reply exceeds the gRPC message limit
    (``MAX_MESSAGE_BYTES``, 64 MiB).
    """

    snapshot_items_base: int = 10_000
    snapshot_items_per_message: int = 20
    snapshot_bytes_base: int = 16 << 20
    snapshot_bytes_per_byte: int = 20
    retrieve_hits_base: int = 100
    retrieve_hits_per_k: int = 10

    def snapshot_items(self, stored_messages: int) -> int:
        """Items a Snapshot may hold after ``stored_messages`` messages were stored."""
        return self.snapshot_items_base + self.snapshot_items_per_message * stored_messages

    def snapshot_bytes(self, stored_bytes: int) -> int:
        """Bytes of items a Snapshot may hold after ``stored_bytes`` bytes were stored."""
        return self.snapshot_bytes_base + self.snapshot_bytes_per_byte * stored_bytes

    def retrieve_hits(self, k: int) -> int:
        """Hits a Retrieve asked for ``k`` may hold."""
        return self.retrieve_hits_base + self.retrieve_hits_per_k * max(k, 0)


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

    bounds: ReplyBounds = ReplyBounds()
    """How large a reply may be (set on an instance to change it)."""

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
            raise self._error(name, exc) from None

    @functools.cached_property
    def _stored(self) -> dict[str, tuple[int, int]]:
        """Messages and text bytes stored per namespace since its last Reset (the Snapshot bound)."""
        return {}

    def _error(self, name: str, exc: grpc.RpcError) -> BackendCallError:
        if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "larger than max" in (exc.details() or ""):
            # Past the gRPC message limit (the runner's receive or the adapter's send limit): the
            # reply is the system's garbage, not a transport fault.
            return ReplyTooLarge(self.adapter, name, f"a message over the {MAX_MESSAGE_BYTES:,}-byte bound "
                                                     f"({exc.details() or exc})")
        return BackendCallError(self.adapter, name, exc.code(), exc.details() or str(exc))

    def stored(self, namespace: str) -> tuple[int, int]:
        """(messages, UTF-8 bytes of their text, ids and times) stored in ``namespace`` since its last Reset."""
        return self._stored.get(namespace, (0, 0))

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
        self._stored.pop(namespace, None)

    def store(self, namespace: str, session) -> tuple[pb.StoreResponse, float]:
        """Store one session; returns the response and the wall time in ms."""
        request = store_request(namespace, session)
        started = time.perf_counter()
        reply = self._call("Store", self.stub.Store, request, self.deadlines.store)
        messages, size = self.stored(namespace)
        self._stored[namespace] = (messages + len(session.messages),
                                   size + sum(len(m.text.encode("utf-8")) + len(m.message_id) + len(m.timestamp)
                                              for m in session.messages))
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
        bound = self.bounds.retrieve_hits(k)
        if len(reply.hits) > bound:
            raise ReplyTooLarge(self.adapter, "Retrieve", f"{len(reply.hits):,} hits for k={k} "
                                                          f"(bound {bound:,} hits)")
        return reply, (time.perf_counter() - started) * 1000.0

    def snapshot(self, namespace: str) -> list[pb.MemoryItem]:
        """Every stored item, read as a stream and cut off (the call cancelled) past the bound.

        Raises ReplyTooLarge past :class:`ReplyBounds`' items or bytes, BackendCallError otherwise."""
        messages, size = self.stored(namespace)
        max_items, max_bytes = self.bounds.snapshot_items(messages), self.bounds.snapshot_bytes(size)
        stream = self.stub.Snapshot(pb.SnapshotRequest(namespace=namespace), timeout=self.deadlines.snapshot)
        items, read = [], 0
        try:
            for item in stream:
                items.append(item)
                read += item.ByteSize()  # text, ids and time: a flood of ids is as large as one of text
                if len(items) > max_items or read > max_bytes:
                    stream.cancel()
                    what = (f"more than {max_items:,} items" if len(items) > max_items
                            else f"more than {max_bytes:,} bytes")
                    raise ReplyTooLarge(self.adapter, "Snapshot", f"{what} (bound for {messages:,} stored messages)")
        except grpc.RpcError as exc:
            raise self._error("Snapshot", exc) from None
        return items

    def forget(self, namespace: str, source_ids: list[str]) -> int:
        reply = self._call("Forget", self.stub.Forget, pb.ForgetRequest(namespace=namespace, source_ids=source_ids),
                           self.deadlines.forget)
        return reply.items_removed

"""``serve()``: run a :class:`~drift_sdk.backend.Backend` as a gRPC server.

The launcher starts an adapter with two environment variables:
``DRIFT_BACKEND_ADDRESS`` (default ``127.0.0.1:0``, loopback) and
``DRIFT_BACKEND_PORT_FILE`` (where the bound port is written once the server is
up, so no port is guessed and none races). The standard ``grpc.health.v1``
service reports SERVING once the backend object is ready.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import traceback
from concurrent import futures

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from drift_sdk.backend import Backend
from drift_sdk.types import FlushResult, Message, RetrieveResult, Session, StoreResult
from drift_sdk.v1 import memory_backend_pb2 as pb
from drift_sdk.v1 import memory_backend_pb2_grpc as pb_grpc

SERVICE_NAME = "drift.v1.MemoryBackend"
#: Upper bound for one request or response (bytes): one session, or k hits.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024


def session_from_proto(msg: pb.Session) -> Session:
    # Positional arguments in field order: keyword arguments cost this per-Store path about
    # 40% more (bench/rpc_overhead.py).
    return Session(msg.session_id, msg.index, msg.time, tuple(msg.participants),
                   tuple([Message(m.message_id, m.author, m.role, m.text, m.timestamp, m.scope or "shared")
                          for m in msg.messages]))


def _usage(u) -> pb.Usage:
    return _fill_usage(pb.Usage(), u)


def _fill_usage(target: pb.Usage, u) -> pb.Usage:
    # Replies are filled in place: a sub-message built apart is copied once more into its parent.
    target.input_tokens, target.output_tokens, target.llm_calls = u.input_tokens, u.output_tokens, u.llm_calls
    return target


class _Guarded:
    """One backend call: the servicer's lock held (unless concurrent), and its failure turned
    into the gRPC status a runner can act on. A class, not a generator-based context manager:
    it is entered on every call (bench/rpc_overhead.py)."""

    __slots__ = ("backend", "lock", "context", "name")

    def __init__(self, backend: Backend, lock, context, name: str):
        self.backend, self.lock, self.context, self.name = backend, lock, context, name

    def __enter__(self) -> None:
        if self.lock is not None:
            self.lock.acquire()

    def __exit__(self, kind, exc, tb) -> bool:
        if self.lock is not None:
            self.lock.release()
        if exc is None or not isinstance(exc, Exception):
            return False
        name, backend = self.name, self.backend.name
        if isinstance(exc, NotImplementedError):
            code, text = grpc.StatusCode.UNIMPLEMENTED, f"{backend}: {name} is not implemented ({exc})"
        elif isinstance(exc, ValueError):
            code, text = grpc.StatusCode.INVALID_ARGUMENT, f"{backend}: {name}: {exc}"
        elif isinstance(exc, ConnectionError):  # the service it wraps dropped: transient, the runner retries
            code, text = grpc.StatusCode.UNAVAILABLE, f"{backend}: {name}: connection failed: {exc}"
        elif isinstance(exc, TimeoutError):
            code, text = grpc.StatusCode.DEADLINE_EXCEEDED, f"{backend}: {name} timed out: {exc}"
        else:  # every other failure is the adapter's crash
            traceback.print_exception(kind, exc, tb, file=sys.stderr)
            code, text = grpc.StatusCode.INTERNAL, f"{backend}: {name} failed: {type(exc).__name__}: {exc}"
        self.context.abort(code, text)
        return False


class _Servicer(pb_grpc.MemoryBackendServicer):
    def __init__(self, backend: Backend, concurrent: bool):
        self.backend = backend
        self._lock = threading.Lock() if not concurrent else None

    def _call(self, context, name: str) -> _Guarded:
        return _Guarded(self.backend, self._lock, context, name)

    def Describe(self, request, context):
        b = self.backend
        c = b.capabilities
        return pb.DescribeResponse(
            name=b.name, version=b.version,
            capabilities=pb.Capabilities(provenance=c.provenance, snapshot=c.snapshot, forget=c.forget,
                                         scopes=c.scopes, time_aware=c.time_aware,
                                         flush_signal=c.flush_signal, deterministic=c.deterministic),
            internal_models=list(b.internal_models), settings=b.settings())

    def Reset(self, request, context):
        with self._call(context, "Reset"):
            self.backend.reset(request.namespace)
        return pb.ResetResponse()

    def Store(self, request, context):
        with self._call(context, "Store"):
            result = self.backend.store(request.namespace, session_from_proto(request.session)) or StoreResult()
        reply = pb.StoreResponse(items_stored=result.items_stored)
        _fill_usage(reply.usage, result.usage)
        return reply

    def Flush(self, request, context):
        with self._call(context, "Flush"):
            result = self.backend.flush(request.namespace, request.timeout_s)
        if not isinstance(result, FlushResult):
            result = FlushResult(ready=bool(result))
        ready = bool(result.ready)
        reply = pb.FlushResponse(ready=ready, note="" if ready else "no readiness signal; assumed ready")
        _fill_usage(reply.usage, result.usage)
        return reply

    def Retrieve(self, request, context):
        if request.k <= 0:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"k must be positive, got {request.k}")
        with self._call(context, "Retrieve"):
            result = self.backend.retrieve(request.namespace, request.query, request.k,
                                           request.querying_entity, request.now)
        if not isinstance(result, RetrieveResult):
            result = RetrieveResult(hits=list(result))
        reply = pb.RetrieveResponse()
        add = reply.hits.add
        for h in result.hits[: request.k]:
            add(text=h.text, score=float(h.score), source_ids=h.source_ids, timestamp=h.timestamp)
        _fill_usage(reply.usage, result.usage)
        return reply

    def Snapshot(self, request, context):
        with self._call(context, "Snapshot"):
            items = list(self.backend.snapshot(request.namespace))
        for item in items:
            yield pb.MemoryItem(item_id=item.item_id, text=item.text, source_ids=list(item.source_ids),
                                timestamp=item.timestamp)

    def Forget(self, request, context):
        with self._call(context, "Forget"):
            removed = self.backend.forget(request.namespace, list(request.source_ids))
        return pb.ForgetResponse(items_removed=int(removed or 0))


def build_server(backend: Backend, address: str = "127.0.0.1:0", concurrent: bool = False,
                 max_workers: int = 8) -> tuple[grpc.Server, int]:
    """Create (not start) a server for ``backend``; returns it and the bound port."""
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=max_workers),
        options=[("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                 ("grpc.max_send_message_length", MAX_MESSAGE_BYTES)])
    pb_grpc.add_MemoryBackendServicer_to_server(_Servicer(backend, concurrent), server)
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"could not bind {address}")
    for name in ("", SERVICE_NAME):
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return server, port


def serve(backend: Backend, address: str | None = None, concurrent: bool = False) -> None:
    """Serve ``backend`` until SIGTERM or SIGINT.

    ``address`` defaults to ``$DRIFT_BACKEND_ADDRESS`` or ``127.0.0.1:0``; ``unix:PATH`` serves
    on a unix socket (as in a container). The bound port is written to
    ``$DRIFT_BACKEND_PORT_FILE`` when that is set, and printed to stderr (the socket, for
    ``unix:``).

    Raises:
        OSError: the address could not be bound.
    """
    address = address or os.environ.get("DRIFT_BACKEND_ADDRESS", "127.0.0.1:0")
    server, port = build_server(backend, address, concurrent)
    server.start()
    port_file = os.environ.get("DRIFT_BACKEND_PORT_FILE")
    if port_file:
        tmp = port_file + ".tmp"
        with open(tmp, "w") as handle:
            handle.write(str(port))
        os.replace(tmp, port_file)  # atomic: the launcher never reads half a number
    where = address if address.startswith("unix:") else f"port {port}"
    print(f"drift backend {backend.name} {backend.version} serving on {where}", file=sys.stderr, flush=True)
    # The handler only appends to a list: taking a lock in a signal handler (Event.set)
    # can deadlock the main thread if the signal lands while it holds that lock, leaving
    # an adapter alive after its runner died.
    stopping: list[int] = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, frame: stopping.append(signum))
    while not stopping:
        time.sleep(0.05)
    server.stop(grace=2).wait(timeout=5)

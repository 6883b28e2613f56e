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
from contextlib import contextmanager

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from drift_sdk.backend import Backend
from drift_sdk.types import Message, RetrieveResult, Session, StoreResult
from drift_sdk.v1 import memory_backend_pb2 as pb
from drift_sdk.v1 import memory_backend_pb2_grpc as pb_grpc

SERVICE_NAME = "drift.v1.MemoryBackend"
#: Upper bound for one request or response (bytes): one session, or k hits.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024


def session_from_proto(msg: pb.Session) -> Session:
    return Session(
        session_id=msg.session_id,
        index=msg.index,
        time=msg.time,
        participants=tuple(msg.participants),
        messages=tuple(Message(message_id=m.message_id, author=m.author, role=m.role, text=m.text,
                               timestamp=m.timestamp, scope=m.scope or "shared") for m in msg.messages),
    )


def _usage(u) -> pb.Usage:
    return pb.Usage(input_tokens=u.input_tokens, output_tokens=u.output_tokens, llm_calls=u.llm_calls)


class _Servicer(pb_grpc.MemoryBackendServicer):
    def __init__(self, backend: Backend, concurrent: bool):
        self.backend = backend
        self._lock = threading.Lock() if not concurrent else None

    @contextmanager
    def _call(self, context, name: str):
        if self._lock is not None:
            self._lock.acquire()
        try:
            yield
        except NotImplementedError as exc:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, f"{self.backend.name}: {name} is not implemented ({exc})")
        except ValueError as exc:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"{self.backend.name}: {name}: {exc}")
        except TimeoutError as exc:
            context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, f"{self.backend.name}: {name} timed out: {exc}")
        except Exception as exc:  # noqa: BLE001 - every other failure is the adapter's crash
            traceback.print_exc(file=sys.stderr)
            context.abort(grpc.StatusCode.INTERNAL, f"{self.backend.name}: {name} failed: {type(exc).__name__}: {exc}")
        finally:
            if self._lock is not None:
                self._lock.release()

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
        return pb.StoreResponse(usage=_usage(result.usage), items_stored=result.items_stored)

    def Flush(self, request, context):
        with self._call(context, "Flush"):
            ready = bool(self.backend.flush(request.namespace, request.timeout_s))
        return pb.FlushResponse(ready=ready, note="" if ready else "no readiness signal; assumed ready")

    def Retrieve(self, request, context):
        if request.k <= 0:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"k must be positive, got {request.k}")
        with self._call(context, "Retrieve"):
            result = self.backend.retrieve(request.namespace, request.query, request.k,
                                           request.querying_entity, request.now)
        if not isinstance(result, RetrieveResult):
            result = RetrieveResult(hits=list(result))
        hits = [pb.Hit(text=h.text, score=float(h.score), source_ids=list(h.source_ids), timestamp=h.timestamp)
                for h in result.hits[: request.k]]
        return pb.RetrieveResponse(hits=hits, usage=_usage(result.usage))

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
        time.sleep(0.2)
    server.stop(grace=2).wait(timeout=5)

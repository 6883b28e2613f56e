"""drift_sdk: the part of drift-conformance an adapter runtime installs.

An adapter author subclasses :class:`Backend` and calls :func:`serve`::

    from drift_sdk import Backend, Capabilities, Hit, serve

    class MyMemory(Backend):
        name, version = "my-memory", "0.1"
        capabilities = Capabilities(provenance=True)
        def reset(self, namespace): ...
        def store(self, namespace, session): ...
        def retrieve(self, namespace, query, k, querying_entity, now): return [Hit(...)]

    if __name__ == "__main__":
        serve(MyMemory())

Depends only on grpcio, grpcio-health-checking and protobuf (5.x, 6.x or 7.x).
"""

from drift_sdk.backend import Backend
from drift_sdk.server import build_server, serve
from drift_sdk.types import (
    Capabilities,
    FlushResult,
    Hit,
    MemoryItem,
    Message,
    RetrieveResult,
    Session,
    StoreResult,
    Usage,
)

__all__ = ["Backend", "Capabilities", "FlushResult", "Hit", "MemoryItem", "Message", "RetrieveResult", "Session",
           "StoreResult", "Usage", "build_server", "serve"]

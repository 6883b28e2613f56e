"""The class an adapter author subclasses."""

from __future__ import annotations

from collections.abc import Iterable

from drift_sdk.types import Capabilities, FlushResult, Hit, MemoryItem, RetrieveResult, Session, StoreResult


class Backend:
    """A memory system behind the ``drift.v1.MemoryBackend`` contract.

    Override ``reset``, ``store`` and ``retrieve``; ``flush``, ``snapshot`` and
    ``forget`` are optional. Raise ``ValueError`` for bad input (the runner sees
    INVALID_ARGUMENT) and ``NotImplementedError`` for a call you do not offer
    (UNIMPLEMENTED). Any other exception becomes INTERNAL with its message.

    Calls are serialised by the server unless ``serve(..., concurrent=True)``.
    """

    name: str = "unnamed"
    version: str = "0"
    capabilities: Capabilities = Capabilities()
    internal_models: tuple[str, ...] = ()
    """Model ids the backend calls inside Store/Flush/Retrieve (recorded in the receipt)."""

    def settings(self) -> dict[str, str]:
        """Configuration worth recording in the receipt (no secrets)."""
        return {}

    def reset(self, namespace: str) -> None:
        raise NotImplementedError("reset")

    def store(self, namespace: str, session: Session) -> StoreResult | None:
        raise NotImplementedError("store")

    def flush(self, namespace: str, timeout_s: float) -> bool | FlushResult:
        """Return True once everything stored is searchable; False means the
        backend has no readiness signal (the receipt records that).

        A backend that defers LLM work from ``store`` to here (e.g. buffers sessions
        and extracts at flush) returns ``FlushResult(ready, usage)`` instead: those
        tokens are write-side cost (W in DRIFT §7.7) like Store's, and a bool reports
        zero. Flush is called once per checkpoint, before probing."""
        return self.capabilities.flush_signal

    def retrieve(self, namespace: str, query: str, k: int, querying_entity: str, now: str
                 ) -> RetrieveResult | list[Hit]:
        raise NotImplementedError("retrieve")

    def snapshot(self, namespace: str) -> Iterable[MemoryItem]:
        raise NotImplementedError("snapshot")

    def forget(self, namespace: str, source_ids: list[str]) -> int:
        raise NotImplementedError("forget")

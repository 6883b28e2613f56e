"""Shortcut control: recency only (``audit-shortcuts``).

Keeps the messages of the last :data:`KEEP_SESSIONS` sessions verbatim and forgets everything
older; Retrieve returns them newest first, whatever the query. If this scores like a memory,
the corpus rewards recency, not memory.
"""

from collections import deque

from drift_sdk import Backend, Capabilities, Hit, MemoryItem, StoreResult, serve

KEEP_SESSIONS = 3


class RecencyBackend(Backend):
    name = "shortcut-recency"
    version = "1"
    capabilities = Capabilities(provenance=True, snapshot=True, flush_signal=True, deterministic=True)

    def __init__(self) -> None:
        self._recent: dict[str, deque] = {}

    def _space(self, namespace):
        if namespace not in self._recent:
            raise ValueError(f"unknown namespace {namespace!r}: call Reset first")
        return self._recent[namespace]

    def settings(self):
        return {"keeps": f"the last {KEEP_SESSIONS} sessions, verbatim", "ranking": "newest first"}

    def reset(self, namespace):
        self._recent[namespace] = deque(maxlen=KEEP_SESSIONS)

    def store(self, namespace, session):
        self._space(namespace).append(list(session.messages))
        return StoreResult(items_stored=len(session.messages))

    def flush(self, namespace, timeout_s):
        self._space(namespace)
        return True

    def _messages(self, namespace):
        return [m for session in self._space(namespace) for m in session]

    def retrieve(self, namespace, query, k, querying_entity, now):
        newest = list(reversed(self._messages(namespace)))[:max(0, k)]
        return [Hit(text=f"{m.author}: {m.text}", score=1.0 / (rank + 1), source_ids=(m.message_id,),
                    timestamp=m.timestamp) for rank, m in enumerate(newest)]

    def snapshot(self, namespace):
        return [MemoryItem(m.message_id, f"{m.author}: {m.text}", (m.message_id,), m.timestamp)
                for m in self._messages(namespace)]


if __name__ == "__main__":
    serve(RecencyBackend())

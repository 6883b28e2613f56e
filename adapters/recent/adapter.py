"""A difficulty-audit strategy: remember only the most recent session.

DRIFT §10.3 asks whether a scenario falls to a simple strategy. This one keeps the
last stored session verbatim and forgets everything before it; Retrieve returns its
messages newest first, whatever the query (another entity's private messages left out). A scenario it solves does not test memory.
"""

from drift_sdk import Backend, Capabilities, Hit, MemoryItem, StoreResult, serve


class RecentBackend(Backend):
    name = "recent"
    version = "1"
    capabilities = Capabilities(provenance=True, snapshot=True, scopes=True, flush_signal=True, deterministic=True)

    def __init__(self) -> None:
        self._last: dict[str, list] = {}

    def reset(self, namespace):
        self._last[namespace] = []

    def store(self, namespace, session):
        if namespace not in self._last:
            raise ValueError(f"unknown namespace {namespace!r}: call Reset first")
        self._last[namespace] = list(session.messages)
        return StoreResult(items_stored=len(session.messages))

    def flush(self, namespace, timeout_s):
        return True

    def retrieve(self, namespace, query, k, querying_entity, now):
        messages = [m for m in self._last.get(namespace, [])
                    if m.scope != "private" or (querying_entity and m.author == querying_entity)]
        return [Hit(text=f"{m.author}: {m.text}", score=1.0 / (rank + 1), source_ids=(m.message_id,),
                    timestamp=m.timestamp) for rank, m in enumerate(reversed(messages))][:k]

    def snapshot(self, namespace):
        return [MemoryItem(m.message_id, f"{m.author}: {m.text}", (m.message_id,), m.timestamp)
                for m in self._last.get(namespace, [])]


if __name__ == "__main__":
    serve(RecentBackend())

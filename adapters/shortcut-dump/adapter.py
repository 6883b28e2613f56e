"""Shortcut control: store everything, dump what is visible at read time (``audit-shortcuts``).

Every message is stored verbatim (an honest Snapshot: selectivity is what storing everything
gets). Retrieve hands back everything the querying entity may see (its own messages, and
shared ones of sessions it attended), ranked by term overlap with the query
(:mod:`drift_sdk.lexical`), newest first on ties, up to ``k``. DRIFT §3.3 says such a system
"scores poorly regardless": if it does not, storage costs nothing on this corpus.
"""

from drift_sdk import Backend, Capabilities, Hit, MemoryItem, StoreResult, serve
from drift_sdk.lexical import LexicalIndex


class DumpBackend(Backend):
    name = "shortcut-dump"
    version = "1"
    capabilities = Capabilities(provenance=True, snapshot=True, scopes=True, flush_signal=True, deterministic=True)

    def __init__(self) -> None:
        self._spaces: dict[str, tuple[LexicalIndex, list]] = {}

    def _space(self, namespace):
        if namespace not in self._spaces:
            raise ValueError(f"unknown namespace {namespace!r}: call Reset first")
        return self._spaces[namespace]

    def settings(self):
        return {"stores": "every message verbatim", "ranking": "IDF-weighted term overlap, newest first on ties",
                "visibility": "own messages, and shared ones of sessions the querying entity attended"}

    def reset(self, namespace):
        self._spaces[namespace] = (LexicalIndex(), [])

    def store(self, namespace, session):
        index, seen = self._space(namespace)
        for m in session.messages:
            index.add(m.message_id, f"{m.author}: {m.text}", m.timestamp or session.time)
            seen.append((m.author, m.scope, frozenset(session.participants)))
        return StoreResult(items_stored=len(session.messages))

    def flush(self, namespace, timeout_s):
        self._space(namespace)
        return True

    def retrieve(self, namespace, query, k, querying_entity, now):
        index, seen = self._space(namespace)

        def visible(i: int) -> bool:
            author, scope, present = seen[i]
            return not querying_entity or author == querying_entity or (scope == "shared" and querying_entity in present)
        return [Hit(text=index.docs[i][1], score=score, source_ids=(index.docs[i][0],), timestamp=index.docs[i][2])
                for i, score in index.search(query, k, visible)]

    def snapshot(self, namespace):
        index, _ = self._space(namespace)
        return [MemoryItem(key, text, (key,), ts) for key, text, ts in index.docs]


if __name__ == "__main__":
    serve(DumpBackend())

"""Shortcut control: frequency-based forgetting learned across scenarios (``audit-shortcuts``).

Counts every sentence it is shown (case and spacing folded), across all scenarios of the
process. A sentence seen :data:`FORGET_AT` or more times is treated as boilerplate: it is not
stored, and stored copies are forgotten when the count gets there. What is left of a message
is stored under its message id; Retrieve ranks it by term overlap (:mod:`drift_sdk.lexical`),
newest first on ties. No knowledge of the generator: if it beats the reference compressor,
what repeats in the corpus tells what matters.
"""

import re
from collections import Counter, defaultdict

from drift_sdk import Backend, Capabilities, Hit, MemoryItem, StoreResult, serve
from drift_sdk.lexical import LexicalIndex

FORGET_AT = 3
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")


def _key(sentence: str) -> str:
    return " ".join(sentence.casefold().split())


class FrequencyBackend(Backend):
    name = "shortcut-frequency"
    version = "1"
    capabilities = Capabilities(provenance=True, snapshot=True, flush_signal=True, deterministic=True)

    def __init__(self) -> None:
        self._counts: Counter = Counter()
        self._spaces: dict[str, dict] = {}

    def _space(self, namespace):
        if namespace not in self._spaces:
            raise ValueError(f"unknown namespace {namespace!r}: call Reset first")
        return self._spaces[namespace]

    def settings(self):
        return {"forgets": f"sentences seen {FORGET_AT}+ times across the process (stored copies too)",
                "ranking": "IDF-weighted term overlap, newest first on ties"}

    def reset(self, namespace):
        self._spaces[namespace] = {"items": {}, "by_key": defaultdict(set), "index": None}

    def store(self, namespace, session):
        space = self._space(namespace)
        stored = 0
        for m in session.messages:
            kept = []
            for sentence in (s.strip() for s in _SPLIT.split(m.text)):
                if not sentence:
                    continue
                key = _key(sentence)
                self._counts[key] += 1
                if self._counts[key] >= FORGET_AT:
                    for mid in space["by_key"].pop(key, ()):  # now boilerplate: forget stored copies
                        if mid in space["items"]:
                            ts, parts = space["items"][mid]
                            space["items"][mid] = (ts, [p for p in parts if _key(p) != key])
                    kept = [p for p in kept if _key(p) != key]
                    continue
                kept.append(sentence)
                space["by_key"][key].add(m.message_id)
            if kept:
                space["items"][m.message_id] = (m.timestamp or session.time, [f"{m.author}:"] + kept)
                stored += 1
        space["index"] = None
        return StoreResult(items_stored=stored)

    def _items(self, space):
        return [(mid, " ".join(parts), ts) for mid, (ts, parts) in space["items"].items() if len(parts) > 1]

    def flush(self, namespace, timeout_s):
        space = self._space(namespace)
        index = LexicalIndex()
        for mid, text, ts in self._items(space):
            index.add(mid, text, ts)
        space["index"] = index
        return True

    def retrieve(self, namespace, query, k, querying_entity, now):
        index = self._space(namespace)["index"]
        if index is None:
            return []
        return [Hit(text=index.docs[i][1], score=score, source_ids=(index.docs[i][0],), timestamp=index.docs[i][2])
                for i, score in index.search(query, k)]

    def snapshot(self, namespace):
        return [MemoryItem(mid, text, (mid,), ts) for mid, text, ts in self._items(self._space(namespace))]


if __name__ == "__main__":
    serve(FrequencyBackend())

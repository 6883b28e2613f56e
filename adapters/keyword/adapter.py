"""BM25 keyword memory: every message stored verbatim, ranked by bm25s.

Deterministic: ties in score are broken by newer timestamp, then by storage
order. Scopes are honoured: a private message is returned only to its author
(``querying_entity``); an empty ``querying_entity`` sees shared messages only. The index of a namespace is rebuilt at Flush (not on every Store), so a
message is searchable once Flush has returned.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import bm25s
import numpy as np
import Stemmer

from drift_sdk import Backend, Capabilities, Hit, MemoryItem, StoreResult, serve

_STEMMER = Stemmer.Stemmer("english")


@dataclass
class _Doc:
    message_id: str
    text: str
    timestamp: str
    owner: str | None = None
    """The author of a private message (None: shared); only the owner may retrieve it."""


@dataclass
class _Namespace:
    docs: list[_Doc] = field(default_factory=list)
    index: bm25s.BM25 | None = None
    indexed: int = 0
    """How many docs the current index covers (docs past it await Flush)."""
    newness: np.ndarray | None = None
    """Per indexed doc, the rank of its timestamp (higher is newer), computed at Flush."""


def _tokenize(texts: list[str]):
    return bm25s.tokenize(texts, stopwords="en", stemmer=_STEMMER, show_progress=False)


class KeywordBackend(Backend):
    name = "keyword"
    version = f"1 (bm25s {bm25s.__version__})"
    capabilities = Capabilities(provenance=True, snapshot=True, forget=True, scopes=True, flush_signal=True,
                                deterministic=True)

    def __init__(self) -> None:
        self._spaces: dict[str, _Namespace] = {}

    def settings(self):
        return {"ranker": "BM25 (bm25s defaults: k1=1.5, b=0.75, method lucene)",
                "stemmer": "snowball english", "stopwords": "en"}

    def _space(self, namespace: str) -> _Namespace:
        if namespace not in self._spaces:
            raise ValueError(f"unknown namespace {namespace!r}: call Reset first")
        return self._spaces[namespace]

    def reset(self, namespace):
        self._spaces[namespace] = _Namespace()

    def store(self, namespace, session):
        space = self._space(namespace)
        for m in session.messages:
            space.docs.append(_Doc(m.message_id, f"{m.author}: {m.text}", m.timestamp or session.time,
                                   m.author if m.scope == "private" else None))
        return StoreResult(items_stored=len(session.messages))

    def flush(self, namespace, timeout_s):
        space = self._space(namespace)
        if space.indexed != len(space.docs):
            space.index = None
            if space.docs:
                index = bm25s.BM25()
                index.index(_tokenize([d.text for d in space.docs]), show_progress=False)
                space.index = index
                space.newness = _newness([d.timestamp for d in space.docs])
            space.indexed = len(space.docs)
        return True

    def retrieve(self, namespace, query, k, querying_entity, now):
        space = self._space(namespace)
        if space.index is None or space.indexed == 0:
            return []
        tokens = _tokenize([query])
        vocab = {i: t for t, i in tokens.vocab.items()}
        words = [vocab[i] for i in tokens.ids[0]]
        if not words:
            return []
        scores = np.asarray(space.index.get_scores(words), dtype=float)
        matched = np.flatnonzero(scores > 0)
        # Scopes: another entity's private message is never a candidate.
        matched = np.array([i for i in matched.tolist() if space.docs[i].owner in (None, querying_entity or None)],
                           dtype=np.int64)
        # Highest score first; ties: newer timestamp, then later storage order (lexsort: last key first).
        ranked = matched[np.lexsort((-matched, -space.newness[matched], -scores[matched]))]
        hits = []
        for i in ranked[:k].tolist():
            doc = space.docs[i]
            hits.append(Hit(text=doc.text, score=round(float(scores[i]), 6), source_ids=(doc.message_id,),
                            timestamp=doc.timestamp))
        return hits

    def snapshot(self, namespace):
        return [MemoryItem(item_id=d.message_id, text=d.text, source_ids=(d.message_id,), timestamp=d.timestamp)
                for d in self._space(namespace).docs]

    def forget(self, namespace, source_ids):
        space = self._space(namespace)
        drop = set(source_ids)
        before = len(space.docs)
        space.docs = [d for d in space.docs if d.message_id not in drop]
        space.indexed = -1  # force a rebuild at the next Flush
        space.index = None
        return before - len(space.docs)


def _newness(timestamps: list[str]) -> np.ndarray:
    """Rank of each timestamp, higher for newer (same-format ISO strings compare lexically).

    Of two timestamps where one is a prefix of the other, the shorter counts as newer (the
    order this adapter has always had): the suffix ``U+10FFFF`` sorts after any character.
    """
    if not timestamps:
        return np.zeros(0, dtype=np.int64)
    _, rank = np.unique(np.array([t + "\U0010ffff" for t in timestamps]), return_inverse=True)
    return rank.astype(np.int64).reshape(-1)


if __name__ == "__main__":
    serve(KeywordBackend())

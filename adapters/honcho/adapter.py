"""Honcho (plastic-labs) behind the drift.v1 contract, through the ``honcho-ai`` SDK.

The adapter talks to a running Honcho server whose URL is ``HONCHO_BASE_URL`` (required;
``HONCHO_API_KEY`` is passed to the SDK when set). Mapping (DRIFT §8.1):

* namespace -> a Honcho workspace. Every Reset makes a *fresh* workspace
  (``drift-<sha256(namespace)[:16]>-<process token>-<reset counter>``): deleting a
  workspace is queued on the server and only completes while its deriver runs, so
  emptying one in place is not reliable. The sessions of the namespace's previous
  workspace are deleted in the background (best effort; never waited for; the server
  refuses to delete a workspace that still has sessions). Reasoning, summaries and dreams
  are switched off in the workspace's configuration: no LLM is involved.
* entity (message author) -> a peer; session -> a session (its participants added as
  peers); message -> a message whose metadata carries our ``message_id`` (and session id,
  author, role, timestamp, scope); ``created_at`` is the message's timestamp.
* Retrieve uses the server's message search (``POST /v3/workspaces/{id}/search``). With
  ``EMBED_MESSAGES=false`` and no LLM key that is PostgreSQL full-text search
  (``plainto_tsquery('english', q)``, which ANDs every word) with an ILIKE fallback, and
  a whole-string ILIKE when the query holds punctuation. A raw question would therefore
  rarely match, so the adapter searches the question's words (punctuation removed) as
  one query and each content word on its own, and fuses the server's rankings with
  reciprocal rank fusion (k=60, the constant Honcho itself uses). Ties: newer timestamp,
  then message id. ``source_ids`` are our message ids from the message metadata.
* Snapshot lists every message stored in the workspace (session by session, in order);
  Flush returns ready when the server counts every message stored in the namespace
  (messages are searchable as soon as they are committed when nothing is embedded).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from importlib.metadata import version as _dist_version

from honcho import Honcho
from honcho.api_types import (
    DreamConfiguration,
    MessageCreateParams,
    PeerCardConfiguration,
    ReasoningConfiguration,
    SummaryConfiguration,
    WorkspaceConfiguration,
)

from drift_sdk import Backend, Capabilities, Hit, MemoryItem, StoreResult, serve

BASE_URL_VAR = "HONCHO_BASE_URL"
API_KEY_VAR = "HONCHO_API_KEY"
#: Honcho accepts at most 100 messages per add_messages call and 100 search results.
BATCH = 100
SEARCH_LIMIT_MAX = 100
PAGE_SIZE = 100
RRF_K = 60
#: At most this many single-word searches per Retrieve (longest words first).
MAX_TERMS = 12
TIMEOUT_S = 30.0
_NAME_OK = re.compile(r"[^a-zA-Z0-9_-]+")
_WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?")
#: Words PostgreSQL's english configuration drops anyway, plus question words; searching
#: them alone would only return ILIKE substring noise.
STOPWORDS = frozenset("""
a about above after again against all am an and any are aren't as at be because been before being below
between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each
few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself
him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most
mustn't my myself no nor not of off on once only or other ought our ours ourselves out over own same shan't
she she'd she'll she's should shouldn't so some such than that that's the their theirs them themselves then
there there's these they they'd they'll they're they've this those through to too under until up very was
wasn't we we'd we'll we're we've were weren't what what's when when's where where's which while who who's whom
why why's with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves
s t d ll m o re ve y did does do tell say said know now current currently
""".split())


def resource_id(prefix: str, name: str, keep: int = 40) -> str:
    """A Honcho id (``^[a-zA-Z0-9_-]+$``) for any name: readable part + hash (no collisions)."""
    readable = _NAME_OK.sub("_", name).strip("_")[:keep] or "x"
    return f"{prefix}{readable}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:10]}"


def _created_at(timestamp: str) -> datetime | None:
    if not timestamp:
        return None
    try:
        return datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return None


def _newer_first(timestamp: str) -> tuple[int, ...]:
    return tuple(-ord(c) for c in timestamp)


def query_variants(query: str) -> list[str]:
    """The searches one Retrieve issues: the question's words, then each content word."""
    words = _WORD.findall(query)
    variants: list[str] = []
    phrase = " ".join(words)
    if phrase:
        variants.append(phrase)
    terms: list[str] = []
    for word in words:
        low = word.lower()
        if low.endswith("'s"):
            low = low[:-2]
        if len(low) < 2 or low in STOPWORDS or low in terms:
            continue
        terms.append(low)
    terms = sorted(terms, key=lambda t: (-len(t), terms.index(t)))[:MAX_TERMS]
    variants.extend(t for t in terms if t != phrase.lower())
    return variants


@dataclass
class _Namespace:
    client: Honcho
    workspace_id: str
    sessions: dict[str, str] = field(default_factory=dict)
    """Our session id -> Honcho session id, in storage order."""
    counts: dict[str, int] = field(default_factory=dict)
    """Honcho session id -> messages stored there."""
    unflushed: set[str] = field(default_factory=set)


class HonchoBackend(Backend):
    name = "honcho"
    version = f"0.1 (honcho-ai {_dist_version('honcho-ai')})"
    capabilities = Capabilities(provenance=True, snapshot=True, forget=False, scopes=False,
                                time_aware=False, flush_signal=True, deterministic=False)

    def __init__(self, base_url: str, api_key: str | None) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.token = uuid.uuid4().hex[:8]
        self._resets = 0
        self._lock = threading.Lock()
        self._spaces: dict[str, _Namespace] = {}
        self._pool = ThreadPoolExecutor(max_workers=4)
        self._cleanup = ThreadPoolExecutor(max_workers=1)

    def _client(self, workspace_id: str) -> Honcho:
        return Honcho(base_url=self.base_url, api_key=self.api_key, workspace_id=workspace_id,
                      timeout=TIMEOUT_S, max_retries=2)

    def settings(self) -> dict[str, str]:
        return {
            "server": self.base_url,
            "sdk": f"honcho-ai {_dist_version('honcho-ai')} (sync client)",
            "namespace": "a fresh workspace per Reset: drift-<sha256(ns)[:16]>-<process token>-<n>; "
                         "reasoning, peer cards, summaries and dreams disabled",
            "mapping": "entity -> peer, session -> session, message -> message (metadata.message_id)",
            "retrieve": f"server message search: the question's words, plus each content word alone "
                        f"(at most {MAX_TERMS}), fused by RRF (k={RRF_K}); ties newer timestamp, message id",
            "stored_text": "message text as content; hits read '<author>: <text>'",
        }

    # -- helpers ------------------------------------------------------------

    def _space(self, namespace: str) -> _Namespace:
        if not namespace:
            raise ValueError("empty namespace")
        space = self._spaces.get(namespace)
        if space is None:
            raise ValueError(f"unknown namespace {namespace!r}: call Reset first")
        return space

    def _search(self, space: _Namespace, query: str, limit: int) -> list:
        return space.client.search(query, limit=limit)

    # -- contract -----------------------------------------------------------

    def reset(self, namespace: str) -> None:
        if not namespace:
            raise ValueError("empty namespace")
        with self._lock:
            self._resets += 1
            n = self._resets
        workspace_id = f"drift-{hashlib.sha256(namespace.encode('utf-8')).hexdigest()[:16]}-{self.token}-{n}"
        client = self._client(workspace_id)
        client.set_configuration(WorkspaceConfiguration(
            reasoning=ReasoningConfiguration(enabled=False), peer_card=PeerCardConfiguration(use=False, create=False),
            summary=SummaryConfiguration(enabled=False), dream=DreamConfiguration(enabled=False)))
        old = self._spaces.get(namespace)
        self._spaces[namespace] = _Namespace(client=client, workspace_id=workspace_id)
        if old is not None:
            self._cleanup.submit(self._discard, old)

    def _discard(self, old: _Namespace) -> None:
        """Best effort, in the background: delete the replaced workspace's sessions (Honcho
        queues session deletion; its deriver completes it). The workspace itself cannot be
        deleted while sessions remain, and it is never read again either way."""
        for sid in old.sessions.values():
            try:
                old.client.session(sid).delete()
            except Exception as exc:  # noqa: BLE001
                print(f"honcho adapter: deleting session {sid} of {old.workspace_id} failed: {exc}",
                      file=sys.stderr, flush=True)
                return

    def store(self, namespace: str, session) -> StoreResult:
        space = self._space(namespace)
        sid = space.sessions.get(session.session_id) or resource_id("s-", session.session_id)
        peers = sorted({resource_id("p-", p) for p in session.participants if p}
                       | {resource_id("p-", m.author or "unknown") for m in session.messages})
        honcho_session = space.client.session(sid, peers=peers or None,
                                              metadata={"drift_session_id": session.session_id,
                                                        "index": session.index, "time": session.time})
        params = []
        for m in session.messages:
            timestamp = m.timestamp or session.time
            params.append(MessageCreateParams(
                content=m.text, peer_id=resource_id("p-", m.author or "unknown"),
                metadata={"message_id": m.message_id, "session_id": session.session_id, "author": m.author,
                          "role": m.role, "timestamp": timestamp, "scope": m.scope},
                created_at=_created_at(timestamp)))
        for start in range(0, len(params), BATCH):
            honcho_session.add_messages(params[start:start + BATCH])
        space.sessions.setdefault(session.session_id, sid)
        space.counts[sid] = space.counts.get(sid, 0) + len(params)
        space.unflushed.add(sid)
        return StoreResult(items_stored=len(params))

    def flush(self, namespace: str, timeout_s: float) -> bool:
        space = self._space(namespace)
        for sid in sorted(space.unflushed):
            page = space.client.session(sid).messages(size=1)
            if (page.total or 0) < space.counts[sid]:
                return False
        space.unflushed.clear()
        return True

    def retrieve(self, namespace: str, query: str, k: int, querying_entity: str, now: str) -> list[Hit]:
        space = self._space(namespace)
        if not space.sessions:
            return []
        variants = query_variants(query)
        if not variants:
            return []
        limit = min(SEARCH_LIMIT_MAX, max(2 * k, 20))
        rankings = list(self._pool.map(lambda q: self._search(space, q, limit), variants))
        scores: dict[str, float] = {}
        found: dict[str, object] = {}
        for ranking in rankings:
            for rank, message in enumerate(ranking, 1):
                mid = (message.metadata or {}).get("message_id")
                if not mid:
                    continue  # not ours (never happens in a workspace of our own)
                scores[mid] = scores.get(mid, 0.0) + 1.0 / (RRF_K + rank)
                found.setdefault(mid, message)
        ranked = sorted(scores, key=lambda mid: (-round(scores[mid], 9),
                                                 _newer_first(str(found[mid].metadata.get("timestamp", ""))), mid))
        hits = []
        for mid in ranked[:k]:
            meta = found[mid].metadata
            author = meta.get("author") or ""
            text = f"{author}: {found[mid].content}" if author else found[mid].content
            hits.append(Hit(text=text, score=round(scores[mid], 9), source_ids=(mid,),
                            timestamp=str(meta.get("timestamp", ""))))
        return hits

    def snapshot(self, namespace: str) -> list[MemoryItem]:
        space = self._space(namespace)
        items = []
        for sid in space.sessions.values():
            for message in space.client.session(sid).messages(size=PAGE_SIZE):
                meta = message.metadata or {}
                author = meta.get("author") or ""
                items.append(MemoryItem(item_id=message.id,
                                        text=f"{author}: {message.content}" if author else message.content,
                                        source_ids=(meta["message_id"],) if meta.get("message_id") else (),
                                        timestamp=str(meta.get("timestamp", ""))))
        return items


def main() -> None:
    base_url = os.environ.get(BASE_URL_VAR, "").strip()
    if not base_url:
        print(f"honcho adapter: {BASE_URL_VAR} is not set: start a Honcho server and set {BASE_URL_VAR} "
              f"to its URL (e.g. http://127.0.0.1:8000); see adapters/honcho/README.md",
              file=sys.stderr, flush=True)
        raise SystemExit(2)
    backend = HonchoBackend(base_url, os.environ.get(API_KEY_VAR) or None)
    print(f"honcho adapter: server {backend.base_url}, process token {backend.token}", file=sys.stderr, flush=True)
    serve(backend)


if __name__ == "__main__":
    main()

"""Zep Cloud behind the drift.v1 contract, through the ``zep-cloud`` Python SDK (API v4).

Mapping:

* namespace -> a Zep **user** (its graph holds everything of the namespace). Every Reset
  creates a brand-new user (fresh uuid) and asks Zep to delete the namespace's previous
  one, so a Reset namespace starts empty even while Zep is still deleting the old data.
* session -> a Zep **thread** of that user (``POST threads``).
* message -> a Zep **message** in that thread (``POST threads/{uuid}/messages``, at most
  ``BATCH`` per call): ``content`` = our text, ``name`` = our author, ``role`` = our role
  (user / assistant / system / tool / function; anything else is sent as user),
  ``reference_time`` = our timestamp, ``metadata`` = our message id and session id.
* Flush -> lists each thread's messages (``GET threads/{uuid}/messages``) until Zep marks
  every message ``processed`` (ingested into the user's graph), or ``timeout_s`` passes.
* Retrieve -> Zep's episode search over the user's graph
  (``POST graphs/{user uuid}/search/episodes``, ``page_size = k``). A message added to a
  thread becomes one episode; the episode's metadata carries the message's metadata, so
  its ``drift_message_id`` is the hit's provenance. An episode without that metadata is
  matched to a stored message by (thread uuid, content); one matching nothing is dropped
  (never guessed). Zep's edge (fact) search is not used: facts are LLM-extracted and
  only name episodes indirectly.
* Snapshot -> every message of every thread of the namespace, in storage order.

Environment: ``ZEP_API_KEY`` (required), ``ZEP_BASE_URL`` (optional API root; the SDK's
default is ``https://api.getzep.com/api/v4``).

Runs in its own virtualenv (requirements.txt): imports ``drift_sdk`` and its own
requirements only.
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from dataclasses import dataclass, field
from importlib.metadata import version as _dist_version

from drift_sdk import Backend, Capabilities, Hit, MemoryItem, StoreResult, serve

KEY_VAR, URL_VAR = "ZEP_API_KEY", "ZEP_BASE_URL"
DEFAULT_BASE_URL = "https://api.getzep.com/api/v4"
#: Messages per add_messages call (Zep limits the batch size of one call).
BATCH = 30
#: Page size of message listings (Flush, Snapshot).
PAGE = 100
#: Seconds between two readiness polls in Flush.
POLL_S = 0.25
#: Roles Zep accepts (RoleType); anything else is sent as "user".
ZEP_ROLES = frozenset({"system", "assistant", "user", "function", "tool"})
MESSAGE_ID_KEY, SESSION_ID_KEY = "drift_message_id", "drift_session_id"
SDK_VERSION = _dist_version("zep-cloud")


def _config_error(text: str) -> None:
    print(f"zep adapter: {text}", file=sys.stderr, flush=True)
    raise SystemExit(2)


@dataclass
class _Stored:
    message_id: str
    session_id: str
    thread_uuid: str
    content: str
    timestamp: str


@dataclass
class _Namespace:
    user_uuid: str
    threads: list[str] = field(default_factory=list)
    """Thread uuids in storage order."""
    pending: set[str] = field(default_factory=set)
    """Threads with messages Zep may not have processed yet."""
    by_message_id: dict[str, _Stored] = field(default_factory=dict)
    by_zep_uuid: dict[str, str] = field(default_factory=dict)
    """Zep message uuid -> our message id."""
    by_content: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    """(thread uuid, content) -> our message ids, for episodes without our metadata."""


class ZepBackend(Backend):
    name = "zep"
    version = f"0.1 (zep-cloud {SDK_VERSION})"
    capabilities = Capabilities(provenance=True, snapshot=True, forget=False, scopes=False,
                                time_aware=False, flush_signal=True, deterministic=False)

    def __init__(self, client, base_url: str) -> None:
        self.zep = client
        self.base_url = base_url
        self._spaces: dict[str, _Namespace] = {}

    def settings(self) -> dict[str, str]:
        return {
            "sdk": f"zep-cloud {SDK_VERSION}",
            "base_url": self.base_url,
            "namespace": "one Zep user per Reset (fresh uuid; the previous user is deleted)",
            "session": "one Zep thread per session",
            "message": f"one Zep message: content=text, name=author, role, reference_time=timestamp, "
                       f"metadata {{{MESSAGE_ID_KEY}, {SESSION_ID_KEY}}}; {BATCH} per add_messages call",
            "flush": "polls GET threads/{uuid}/messages until every message is processed",
            "retrieve": "graph.search_episodes on the user's graph, page_size=k, Zep's default reranker; "
                        f"provenance from episode metadata {MESSAGE_ID_KEY}, else (thread, content)",
            "snapshot": "every message of every thread (thread.list_messages)",
        }

    # -- helpers ------------------------------------------------------------

    def _space(self, namespace: str) -> _Namespace:
        if not namespace:
            raise ValueError("empty namespace")
        space = self._spaces.get(namespace)
        if space is None:
            raise ValueError(f"unknown namespace {namespace!r}: call Reset first")
        return space

    def _messages(self, thread_uuid: str):
        """Every message of a thread, oldest first (the SDK pager follows next_cursor)."""
        return list(self.zep.thread.list_messages(thread_uuid, page_size=PAGE, order_by="created_at", order="asc"))

    def _source_id(self, space: _Namespace, metadata, thread_uuid, content, zep_uuid=None) -> str | None:
        mid = (metadata or {}).get(MESSAGE_ID_KEY)
        if isinstance(mid, str) and mid in space.by_message_id:
            return mid
        if zep_uuid and zep_uuid in space.by_zep_uuid:
            return space.by_zep_uuid[zep_uuid]
        candidates = space.by_content.get((thread_uuid or "", content or ""), [])
        return candidates[0] if len(candidates) == 1 else None

    # -- contract -----------------------------------------------------------

    def reset(self, namespace: str) -> None:
        if not namespace:
            raise ValueError("empty namespace")
        old = self._spaces.pop(namespace, None)
        if old is not None:
            try:
                self.zep.user.delete(old.user_uuid)
            except Exception as exc:  # the new user is empty either way; a leftover only costs storage
                print(f"zep adapter: could not delete user {old.user_uuid}: {exc}", file=sys.stderr, flush=True)
        user = self.zep.user.create(user_id=f"drift-{uuid.uuid4().hex}",
                                    metadata={"drift_namespace": namespace[:200]})
        if not user.uuid_:
            raise RuntimeError("Zep created a user without a uuid")
        self._spaces[namespace] = _Namespace(user_uuid=user.uuid_)

    def store(self, namespace: str, session) -> StoreResult:
        from zep_cloud.types import AddMessage

        space = self._space(namespace)
        if not session.messages:
            return StoreResult(items_stored=0)
        thread = self.zep.thread.create(user_uuid=space.user_uuid)
        if not thread.uuid_:
            raise RuntimeError("Zep created a thread without a uuid")
        space.threads.append(thread.uuid_)
        space.pending.add(thread.uuid_)
        stored = 0
        messages = list(session.messages)
        for start in range(0, len(messages), BATCH):
            batch = messages[start:start + BATCH]
            result = self.zep.thread.add_messages(thread.uuid_, messages=[
                AddMessage(content=m.text, name=m.author or None,
                           role=m.role if m.role in ZEP_ROLES else "user",
                           reference_time=(m.timestamp or session.time) or None,
                           metadata={MESSAGE_ID_KEY: m.message_id, SESSION_ID_KEY: session.session_id})
                for m in batch])
            added = list(result.messages or [])
            for i, m in enumerate(batch):
                record = _Stored(m.message_id, session.session_id, thread.uuid_, m.text, m.timestamp or session.time)
                space.by_message_id[m.message_id] = record
                space.by_content.setdefault((thread.uuid_, m.text), []).append(m.message_id)
                if i < len(added) and added[i].uuid_:
                    space.by_zep_uuid[added[i].uuid_] = m.message_id
            stored += len(batch)
        return StoreResult(items_stored=stored)

    def flush(self, namespace: str, timeout_s: float) -> bool:
        space = self._space(namespace)
        deadline = time.monotonic() + max(0.0, timeout_s)
        while True:
            for thread_uuid in sorted(space.pending):
                if all(m.processed for m in self._messages(thread_uuid)):
                    space.pending.discard(thread_uuid)
            if not space.pending:
                return True
            if time.monotonic() + POLL_S > deadline:
                return False
            time.sleep(POLL_S)

    def retrieve(self, namespace: str, query: str, k: int, querying_entity: str, now: str) -> list[Hit]:
        space = self._space(namespace)
        if k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        if not space.by_message_id or not query.strip():
            return []
        pager = self.zep.graph.search_episodes(space.user_uuid, query=query, page_size=k)
        hits: list[Hit] = []
        for rank, episode in enumerate(pager.items or []):
            mid = self._source_id(space, episode.metadata, episode.thread_uuid, episode.content)
            if mid is None:
                continue  # not one of our messages: never guess its provenance
            score = episode.score if episode.score is not None else episode.relevance
            hits.append(Hit(text=episode.content or "",
                            score=float(score) if score is not None else 1.0 / (rank + 1),
                            source_ids=(mid,), timestamp=space.by_message_id[mid].timestamp))
            if len(hits) == k:
                break
        return hits

    def snapshot(self, namespace: str) -> list[MemoryItem]:
        space = self._space(namespace)
        items: list[MemoryItem] = []
        for thread_uuid in space.threads:
            for m in self._messages(thread_uuid):
                mid = self._source_id(space, m.metadata, thread_uuid, m.content, m.uuid_)
                timestamp = space.by_message_id[mid].timestamp if mid else (m.reference_time or m.created_at or "")
                items.append(MemoryItem(item_id=m.uuid_ or f"{thread_uuid}/{len(items)}", text=m.content or "",
                                        source_ids=(mid,) if mid else (), timestamp=timestamp))
        return items


def main() -> None:
    api_key = os.environ.get(KEY_VAR, "").strip()
    if not api_key:
        _config_error(f"{KEY_VAR} is not set: the zep adapter needs a Zep API key (Zep Cloud project "
                      f"settings); set {KEY_VAR} (and {URL_VAR} for a non-default API root) in the runner's "
                      f"environment, adapter.yaml passes both through")
    base_url = os.environ.get(URL_VAR, "").strip() or DEFAULT_BASE_URL
    if not base_url.startswith(("http://", "https://")):
        _config_error(f"{URL_VAR}={base_url!r} is not an http(s) URL")
    from zep_cloud.client import Zep

    client = Zep(api_key=api_key, base_url=base_url.rstrip("/"), timeout=60.0, max_retries=2)
    print(f"zep adapter: zep-cloud {SDK_VERSION}, API root {base_url}", file=sys.stderr, flush=True)
    serve(ZepBackend(client, base_url))


if __name__ == "__main__":
    main()

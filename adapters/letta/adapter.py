"""Letta's archival memory behind the drift.v1 contract, through the ``letta-client`` SDK.

What this exercises: the *archival store* of a Letta server (passages inserted into an
agent's archival memory and found again by the server's archival search), not Letta's
agent loop. The agent loop decides for itself what to remember and needs an LLM; this
adapter never sends the agent a message, so no LLM is called and storing does not depend
on one. (A live server still computes an embedding for every passage: see README.md.)

Mapping:

* namespace -> one Letta agent, created at Reset (``POST /v1/agents``); the next Reset of
  that namespace deletes it (``DELETE /v1/agents/{id}``) and creates a fresh one. Agents
  this process created are deleted when it shuts down (best effort).
* message -> one archival passage (``POST /v1/agents/{id}/archival-memory``): text
  ``"<author>: <text>"``, ``created_at`` = the message timestamp, tags
  ``drift-msg:<message_id>`` and ``drift-session:<session_id>`` (provenance kept on the
  server). The adapter also remembers passage id -> message in memory.
* Retrieve -> archival search (``GET /v1/agents/{id}/archival-memory/search``, ``top_k=k``).
  That endpoint returns no score: a hit's score is its rank, 1/(1+rank).
* Snapshot and Flush -> the passage listing (``GET /v1/agents/{id}/archival-memory``,
  paged with ``after``); Forget -> ``DELETE /v1/agents/{id}/archival-memory/{passage_id}``.

Environment: ``LETTA_BASE_URL`` (required), ``LETTA_API_KEY`` (optional bearer token),
``LETTA_MODEL`` and ``LETTA_EMBEDDING`` (optional model handles passed to agent creation;
a live server usually needs at least the embedding handle).
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from dataclasses import dataclass, field
from importlib.metadata import version as _dist_version

from drift_sdk import Backend, Capabilities, Hit, MemoryItem, StoreResult, serve

SDK_VERSION = _dist_version("letta-client")
MSG_TAG = "drift-msg:"
SESSION_TAG = "drift-session:"
AGENT_TAG = "drift-conformance"
#: Page size of the passage listing (Snapshot, Flush, Forget).
PAGE = 100
#: Seconds per HTTP request, and retries of a failed one (the SDK's own retry logic).
REQUEST_TIMEOUT_S = 30.0
MAX_RETRIES = 2


class ConfigError(RuntimeError):
    """The adapter's environment is incomplete."""


def _config() -> dict[str, str | None]:
    base_url = os.environ.get("LETTA_BASE_URL", "").strip()
    if not base_url:
        raise ConfigError("LETTA_BASE_URL is not set: the letta adapter needs the URL of a Letta server "
                          "(e.g. LETTA_BASE_URL=http://localhost:8283); set it in the runner's environment")
    return {"base_url": base_url.rstrip("/"),
            "api_key": os.environ.get("LETTA_API_KEY") or None,
            "model": os.environ.get("LETTA_MODEL") or None,
            "embedding": os.environ.get("LETTA_EMBEDDING") or None}


@dataclass
class _Item:
    message_id: str
    session_id: str
    text: str
    timestamp: str
    order: int


@dataclass
class _Space:
    agent_id: str
    items: dict[str, _Item] = field(default_factory=dict)
    """passage id -> what it was stored from (this process's view)."""
    next_order: int = 0


def _ids_from_tags(tags) -> tuple[str, str]:
    message_id = session_id = ""
    for tag in tags or ():
        if tag.startswith(MSG_TAG):
            message_id = tag[len(MSG_TAG):]
        elif tag.startswith(SESSION_TAG):
            session_id = tag[len(SESSION_TAG):]
    return message_id, session_id


class LettaBackend(Backend):
    name = "letta"
    version = f"0.1 (letta-client {SDK_VERSION})"
    # Not deterministic: a live server's embedder and vector index are outside our control.
    capabilities = Capabilities(provenance=True, snapshot=True, forget=True, scopes=False, time_aware=False,
                                flush_signal=True, deterministic=False)

    def __init__(self, config: dict[str, str | None] | None = None) -> None:
        from letta_client import Letta

        self.config = config or _config()
        self.client = Letta(base_url=self.config["base_url"], api_key=self.config["api_key"],
                            timeout=REQUEST_TIMEOUT_S, max_retries=MAX_RETRIES)
        try:
            health = self.client.health()
        except Exception as exc:  # noqa: BLE001 - any failure here means the server is unusable
            raise ConfigError(f"Letta server at LETTA_BASE_URL={self.config['base_url']} does not answer "
                              f"GET /v1/health/: {type(exc).__name__}: {exc}") from exc
        self.server_version = str(getattr(health, "version", "") or "unknown")
        self._spaces: dict[str, _Space] = {}
        self._created: set[str] = set()
        self.internal_models = tuple(m for m in (self.config["embedding"],) if m)

    def settings(self) -> dict[str, str]:
        return {
            "server": f"Letta server {self.server_version} (LETTA_BASE_URL; API key "
                      f"{'set' if self.config['api_key'] else 'not set'})",
            "sdk": f"letta-client {SDK_VERSION}",
            "store": "one agent per namespace (replaced at Reset); one archival passage per message, "
                     "'<author>: <text>', created_at = message timestamp, tags drift-msg:/drift-session:",
            "retrieve": "agent archival memory search, top_k = k; score = 1/(1+rank) (the endpoint returns none)",
            "agent_model": self.config["model"] or "(server default)",
            "agent_embedding": self.config["embedding"] or "(server default)",
            "llm": "never called: the agent is never messaged (archival store only)",
            "forget": "by message id or session id",
        }

    # -- helpers ------------------------------------------------------------

    def _space(self, namespace: str) -> _Space:
        if not namespace:
            raise ValueError("empty namespace")
        space = self._spaces.get(namespace)
        if space is None:
            raise ValueError(f"unknown namespace {namespace!r}: call Reset first")
        return space

    def _delete_agent(self, agent_id: str) -> None:
        from letta_client import NotFoundError

        try:
            self.client.agents.delete(agent_id)
        except NotFoundError:
            pass
        self._created.discard(agent_id)

    def _passages(self, space: _Space) -> list:
        """Every passage of the namespace's agent, oldest first, following the ``after`` cursor
        until an empty page (a server may cap the page below PAGE)."""
        found, after = [], None
        while True:
            kwargs = {"ascending": True, "limit": PAGE}
            if after:
                kwargs["after"] = after
            page = self.client.agents.passages.list(space.agent_id, **kwargs)
            if not page:
                return found
            found.extend(page)
            if page[-1].id is None or page[-1].id == after:
                return found
            after = page[-1].id

    def _item(self, space: _Space, passage_id: str | None, text: str, tags) -> _Item:
        known = space.items.get(passage_id or "")
        if known is not None:
            return known
        message_id, session_id = _ids_from_tags(tags)
        return _Item(message_id, session_id, text, "", sys.maxsize)

    # -- contract -----------------------------------------------------------

    def reset(self, namespace: str) -> None:
        if not namespace:
            raise ValueError("empty namespace")
        old = self._spaces.pop(namespace, None)
        if old is not None:
            self._delete_agent(old.agent_id)
        digest = hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:16]
        kwargs = {"name": f"drift-{digest}", "description": f"drift-conformance namespace {namespace}"[:500],
                  "tags": [AGENT_TAG], "metadata": {"drift_namespace": namespace}}
        if self.config["model"]:
            kwargs["model"] = self.config["model"]
        if self.config["embedding"]:
            kwargs["embedding"] = self.config["embedding"]
        agent = self.client.agents.create(**kwargs)
        self._created.add(agent.id)
        self._spaces[namespace] = _Space(agent.id)

    def store(self, namespace: str, session) -> StoreResult:
        space = self._space(namespace)
        stored = 0
        for m in session.messages:
            text = f"{m.author}: {m.text}" if m.author else m.text
            timestamp = m.timestamp or session.time
            kwargs = {"text": text, "tags": [MSG_TAG + m.message_id, SESSION_TAG + session.session_id]}
            if timestamp:
                kwargs["created_at"] = timestamp
            passages = self.client.agents.passages.create(space.agent_id, **kwargs)
            # A server may split a long text into several passages: each maps back to the message.
            for p in passages:
                if p.id:
                    space.items[p.id] = _Item(m.message_id, session.session_id, text, timestamp, space.next_order)
                    space.next_order += 1
                    stored += 1
        return StoreResult(items_stored=stored)

    def flush(self, namespace: str, timeout_s: float) -> bool:
        # Archival insert embeds and writes before it answers; Flush confirms that every
        # passage this namespace stored is listed by the server.
        space = self._space(namespace)
        deadline = time.monotonic() + max(0.0, timeout_s)
        while True:
            listed = {p.id for p in self._passages(space)}
            if set(space.items) <= listed:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.2)

    def retrieve(self, namespace: str, query: str, k: int, querying_entity: str, now: str) -> list[Hit]:
        space = self._space(namespace)
        if k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        if not space.items:
            return []
        reply = self.client.agents.passages.search(space.agent_id, query=query, top_k=k)
        hits = []
        for rank, r in enumerate(reply.results[:k]):
            item = self._item(space, r.id, r.content, r.tags)
            hits.append(Hit(text=r.content, score=round(1.0 / (1 + rank), 6),
                            source_ids=(item.message_id,) if item.message_id else (),
                            timestamp=item.timestamp or r.timestamp or ""))
        return hits

    def snapshot(self, namespace: str) -> list[MemoryItem]:
        space = self._space(namespace)
        listed = [(self._item(space, p.id, p.text, p.tags), i, p) for i, p in enumerate(self._passages(space))]
        listed.sort(key=lambda t: (t[0].order, t[1]))
        return [MemoryItem(item_id=str(p.id), text=p.text, source_ids=(item.message_id,) if item.message_id else (),
                           timestamp=item.timestamp or (p.created_at.isoformat() if p.created_at else ""))
                for item, _, p in listed]

    def forget(self, namespace: str, source_ids: list[str]) -> int:
        space = self._space(namespace)
        ids = set(source_ids)
        if not ids:
            return 0
        doomed = [p.id for p in self._passages(space)
                  if p.id and ({(item := self._item(space, p.id, p.text, p.tags)).message_id, item.session_id} & ids)]
        for passage_id in doomed:
            self.client.agents.passages.delete(passage_id, agent_id=space.agent_id)
            space.items.pop(passage_id, None)
        return len(doomed)

    def close(self) -> None:
        """Delete the agents this process created (best effort: the server may be gone)."""
        for agent_id in sorted(self._created):
            try:
                self._delete_agent(agent_id)
            except Exception:  # noqa: BLE001
                pass


if __name__ == "__main__":
    try:
        backend = LettaBackend()
    except ConfigError as exc:
        print(f"letta adapter: {exc}", file=sys.stderr, flush=True)
        sys.exit(2)
    print(f"letta adapter: Letta server {backend.server_version} at {backend.config['base_url']}, "
          f"letta-client {SDK_VERSION}", file=sys.stderr, flush=True)
    try:
        serve(backend)
    finally:
        backend.close()

"""An in-memory stand-in for the part of a Letta server's HTTP API the letta adapter uses.

Standard library only (``http.server``), loopback, one thread per request. Request and
response shapes follow the ``letta-client`` 1.12.1 SDK source (Stainless-generated):

==========================================================  ==================================================
``GET    /v1/health/``                                      ``HealthResponse`` {status, version}
``POST   /v1/agents``                                       ``AgentState`` (agents.create; body
                                                            ``AgentCreateParams``)
``DELETE /v1/agents/{agent_id}``                            ``object`` (agents.delete)
``POST   /v1/agents/{agent_id}/archival-memory``            ``List[Passage]`` (agents.passages.create;
                                                            body {text, created_at?, tags?})
``GET    /v1/agents/{agent_id}/archival-memory``            ``List[Passage]`` (agents.passages.list; query
                                                            after, before, limit, ascending, search)
``GET    /v1/agents/{agent_id}/archival-memory/search``     ``PassageSearchResponse`` {count, results: [{id,
                                                            content, timestamp, tags}]} (query query, top_k,
                                                            tags (repeated), tag_match_mode)
``DELETE /v1/agents/{agent_id}/archival-memory/{id}``       ``object`` (agents.passages.delete)
==========================================================  ==================================================

Anything else answers 404. Search is keyword overlap (lowercased alphanumeric words): passages
ranked by the number of distinct query words they contain, ties by insertion order; every
passage is ranked (a vector search also returns its nearest neighbours when none is close),
then ``top_k`` are kept. When ``api_key`` is given, every request must carry
``Authorization: Bearer <api_key>`` (401 otherwise). The health ``version`` starts with
``fake-letta`` so tests can tell this fake from a live server. Every request is recorded
in ``requests`` as (method, path).
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

FAKE_VERSION = "fake-letta-0.1"
_WORD = re.compile(r"[a-z0-9]+")

EMBEDDING_CONFIG = {"embedding_dim": 8, "embedding_endpoint_type": "openai", "embedding_model": "fake-keyword"}
LLM_CONFIG = {"context_window": 8192, "model": "fake-none", "model_endpoint_type": "openai"}


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


class FakeLetta:
    """The server's state; ``start()`` serves it on 127.0.0.1 and returns the base URL."""

    def __init__(self, api_key: str | None = None) -> None:
        self.api_key = api_key
        self.lock = threading.Lock()
        self.agents: dict[str, dict] = {}
        self.passages: dict[str, list[dict]] = {}  # agent id -> passages in insertion order
        self.deleted_agents: list[str] = []
        self.requests: list[tuple[str, str]] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------

    def start(self) -> str:
        fake = self

        class Handler(_Handler):
            state = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self.url

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "FakeLetta":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- the API ------------------------------------------------------------

    def handle(self, method: str, path: str, query: dict[str, list[str]], body) -> tuple[int, object]:
        parts = [unquote(p) for p in path.strip("/").split("/")]
        with self.lock:
            self.requests.append((method, path))
            if parts == ["v1", "health"] and method == "GET":
                return 200, {"status": "ok", "version": FAKE_VERSION}
            if parts == ["v1", "agents"] and method == "POST":
                return 200, self._create_agent(body or {})
            if len(parts) < 3 or parts[:2] != ["v1", "agents"]:
                return 404, {"detail": f"Not Found: {method} {path}"}
            agent_id = parts[2]
            if agent_id not in self.agents:
                return 404, {"detail": f"Agent with id={agent_id} not found"}
            rest = parts[3:]
            if rest == [] and method == "DELETE":
                del self.agents[agent_id]
                self.passages.pop(agent_id, None)
                self.deleted_agents.append(agent_id)
                return 200, {"message": f"Agent id={agent_id} successfully deleted"}
            if rest == ["archival-memory"] and method == "POST":
                return self._insert(agent_id, body or {})
            if rest == ["archival-memory"] and method == "GET":
                return self._list(agent_id, query)
            if rest == ["archival-memory", "search"] and method == "GET":
                return self._search(agent_id, query)
            if len(rest) == 2 and rest[0] == "archival-memory" and method == "DELETE":
                kept = [p for p in self.passages[agent_id] if p["id"] != rest[1]]
                if len(kept) == len(self.passages[agent_id]):
                    return 404, {"detail": f"Passage with id={rest[1]} not found"}
                self.passages[agent_id] = kept
                return 200, {}
            return 404, {"detail": f"Not Found: {method} {path}"}

    def _create_agent(self, body: dict) -> dict:
        agent_id = f"agent-{uuid.uuid4()}"
        agent = {
            "id": agent_id, "name": body.get("name") or agent_id, "agent_type": body.get("agent_type") or "letta_v1_agent",
            "description": body.get("description"), "metadata": body.get("metadata"), "tags": body.get("tags") or [],
            "blocks": [], "memory": {"blocks": []}, "sources": [], "tools": [], "system": "",
            "llm_config": {**LLM_CONFIG, **({"handle": body["model"]} if body.get("model") else {})},
            "embedding_config": {**EMBEDDING_CONFIG,
                                 **({"handle": body["embedding"]} if body.get("embedding") else {})},
            "created_at": _now(),
        }
        self.agents[agent_id] = agent
        self.passages[agent_id] = []
        return agent

    def _passage(self, agent_id: str, text: str, tags, created_at: str) -> dict:
        return {"id": f"passage-{uuid.uuid4()}", "text": text, "tags": list(tags or []),
                "created_at": created_at, "updated_at": created_at, "archive_id": f"archive-{agent_id[6:]}",
                "embedding": None, "embedding_config": EMBEDDING_CONFIG, "metadata": {}, "is_deleted": False}

    def _insert(self, agent_id: str, body: dict) -> tuple[int, object]:
        text = body.get("text")
        if not isinstance(text, str):
            return 422, {"detail": [{"loc": ["body", "text"], "msg": "Field required", "type": "missing"}]}
        passage = self._passage(agent_id, text, body.get("tags"), body.get("created_at") or _now())
        self.passages[agent_id].append(passage)
        return 200, [passage]

    def _list(self, agent_id: str, query: dict[str, list[str]]) -> tuple[int, object]:
        items = list(self.passages[agent_id])
        if query.get("ascending", ["true"])[0].lower() == "false":
            items.reverse()
        ids = [p["id"] for p in items]
        if "after" in query and query["after"][0] in ids:
            items = items[ids.index(query["after"][0]) + 1:]
        if "before" in query:
            kept = [p["id"] for p in items]
            if query["before"][0] in kept:
                items = items[:kept.index(query["before"][0])]
        if "search" in query:
            needle = query["search"][0].lower()
            items = [p for p in items if needle in p["text"].lower()]
        limit = int(query.get("limit", ["100"])[0])
        return 200, items[:limit]

    def _search(self, agent_id: str, query: dict[str, list[str]]) -> tuple[int, object]:
        if "query" not in query:
            return 422, {"detail": [{"loc": ["query", "query"], "msg": "Field required", "type": "missing"}]}
        words = _words(query["query"][0])
        items = list(self.passages[agent_id])
        tags = set(query.get("tags", []))
        if tags:
            mode = query.get("tag_match_mode", ["any"])[0]
            items = [p for p in items if (tags <= set(p["tags"]) if mode == "all" else tags & set(p["tags"]))]
        ranked = sorted(enumerate(items), key=lambda ip: (-len(words & _words(ip[1]["text"])), ip[0]))
        top_k = int(query.get("top_k", ["10"])[0])
        results = [{"id": p["id"], "content": p["text"], "timestamp": p["created_at"], "tags": p["tags"]}
                   for _, p in ranked[:top_k]]
        return 200, {"count": len(results), "results": results}


class _Handler(BaseHTTPRequestHandler):
    state: FakeLetta
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle on, a keep-alive client's delayed ACK
    # holds every reply back about 40 ms.
    disable_nagle_algorithm = True

    def log_message(self, *args) -> None:  # quiet
        pass

    def _serve(self, method: str) -> None:
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.state.api_key and self.headers.get("Authorization") != f"Bearer {self.state.api_key}":
            return self._reply(401, {"detail": "Unauthorized"})
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            return self._reply(400, {"detail": "body is not JSON"})
        status, payload = self.state.handle(method, url.path, parse_qs(url.query), body)
        self._reply(status, payload)

    def _reply(self, status: int, payload) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_DELETE(self) -> None:
        self._serve("DELETE")


if __name__ == "__main__":  # python tests/adapters/fake_letta.py [PORT]: serve until Ctrl-C
    import sys
    import time

    fake = FakeLetta()
    if len(sys.argv) > 1:
        fake._server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), type("H", (_Handler,), {"state": fake}))
        threading.Thread(target=fake._server.serve_forever, daemon=True).start()
    else:
        fake.start()
    print(f"fake Letta at {fake.url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        fake.stop()

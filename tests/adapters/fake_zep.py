"""A local stand-in for the part of Zep's HTTP API (v4) that the zep adapter calls.

Request and response shapes follow the models and raw clients of the ``zep-cloud`` SDK
(4.0.1: ``zep_cloud/user``, ``zep_cloud/thread``, ``zep_cloud/graph`` raw clients and
``zep_cloud/types``: User, Thread, AddMessage, AddMessagesResult, Message, MessagePage,
Episode, EpisodePage, Task, UserDeleteResult, ApiError/ErrorBody). Only these endpoints
exist; any other path answers 404:

* ``POST   users``                               -> User (201)
* ``DELETE users/{uuid}``                        -> UserDeleteResult (202); threads, messages,
                                                     episodes of the user go
* ``POST   threads``                             -> Thread (201); 404 for an unknown user
* ``POST   threads/{uuid}/messages``             -> AddMessagesResult (202)
* ``GET    threads/{uuid}/messages``             -> MessagePage (page_size, cursor, order)
* ``POST   graphs/{graph or user uuid}/search/episodes`` -> EpisodePage (page_size)

Paths are accepted with or without the ``/api/v4`` prefix of Zep Cloud's API root. Every
request must carry ``Authorization: Api-Key <key>`` (401 otherwise). Storage is in memory.
A message becomes ``processed`` (and its episode searchable) ``process_delay_s`` after it
was added, like Zep's asynchronous ingestion. Each message becomes one episode whose
metadata is the message's metadata. Search is keyword overlap: the share of the query's
distinct lower-case words found in the episode's content; episodes sharing no word are
not returned; ties go to the later-added episode.

Run alone: ``python tests/adapters/fake_zep.py [PORT] [KEY]``.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
import uuid
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

API_PREFIX = "/api/v4"
ROLES = {"system", "assistant", "user", "function", "tool"}
MAX_METADATA_KEYS = 10
WORD = re.compile(r"[a-z0-9]+")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


def _words(text: str) -> set[str]:
    return set(WORD.findall((text or "").lower()))


class ApiFailure(Exception):
    def __init__(self, status: int, code: str, message: str, param: str | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.param = status, code, message, param


class FakeZep:
    """In-memory state plus a ThreadingHTTPServer on loopback. Use as a context manager."""

    def __init__(self, api_key: str = "fake", host: str = "127.0.0.1", port: int = 0,
                 process_delay_s: float = 0.2):
        self.api_key, self.process_delay_s = api_key, process_delay_s
        self.lock = threading.Lock()
        self.users: dict[str, dict] = {}
        self.threads: dict[str, dict] = {}
        self.messages: dict[str, list[dict]] = {}  # thread uuid -> messages, in order
        self.episodes: list[dict] = []
        self.calls: list[tuple[str, str]] = []  # (method, route template)
        self.server = ThreadingHTTPServer((host, port), self._handler_class())
        self.server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> "FakeZep":
        self._thread = threading.Thread(target=self.server.serve_forever, name="fake-zep", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> "FakeZep":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- state --------------------------------------------------------------

    def _processed(self, added_at: float) -> bool:
        return time.monotonic() - added_at >= self.process_delay_s

    def _user_of(self, user_or_graph: str) -> dict:
        for user in self.users.values():
            if user_or_graph in (user["uuid"], user["graph_uuid"]):
                return user
        raise ApiFailure(404, "not_found", f"graph {user_or_graph} not found", "graph_uuid")

    def _thread_of(self, thread_uuid: str) -> dict:
        thread = self.threads.get(thread_uuid)
        if thread is None:
            raise ApiFailure(404, "not_found", f"thread {thread_uuid} not found", "thread_uuid")
        return thread

    @staticmethod
    def _task(kind: str, done: bool) -> dict:
        now = _now()
        task = {"uuid": str(uuid.uuid4()), "type": kind, "status": "succeeded" if done else "pending",
                "created_at": now, "updated_at": now}
        if done:
            task["completed_at"] = now
        return task

    def _public_message(self, m: dict) -> dict:
        out = {k: v for k, v in m.items() if not k.startswith("_") and v is not None}
        out["processed"] = self._processed(m["_added"])
        return out

    def _public_episode(self, e: dict, score: float) -> dict:
        out = {k: v for k, v in e.items() if not k.startswith("_") and v is not None}
        out["processed"] = True
        out["score"] = score
        return out

    # -- endpoints ------------------------------------------------------------

    def create_user(self, body: dict) -> tuple[int, dict]:
        if body.get("user_id") is not None and any(u.get("user_id") == body["user_id"] for u in self.users.values()):
            raise ApiFailure(409, "conflict", f"user_id {body['user_id']} already exists", "user_id")
        user = {"uuid": str(uuid.uuid4()), "graph_uuid": str(uuid.uuid4()), "created_at": _now()}
        for key in ("user_id", "email", "first_name", "last_name", "metadata", "time_zone", "disable_default_ontology"):
            if body.get(key) is not None:
                user[key] = body[key]
        self.users[user["uuid"]] = user
        return 201, user

    def delete_user(self, user_uuid: str) -> tuple[int, dict]:
        if user_uuid not in self.users:
            raise ApiFailure(404, "not_found", f"user {user_uuid} not found", "user_uuid")
        del self.users[user_uuid]
        for tid in [t for t, th in self.threads.items() if th["user_uuid"] == user_uuid]:
            del self.threads[tid]
            self.messages.pop(tid, None)
        self.episodes = [e for e in self.episodes if e["user_uuid"] != user_uuid]
        return 202, {"task": self._task("user_delete", done=True)}

    def create_thread(self, body: dict) -> tuple[int, dict]:
        user_uuid = body.get("user_uuid")
        if not isinstance(user_uuid, str) or not user_uuid:
            raise ApiFailure(400, "invalid_request", "user_uuid is required", "user_uuid")
        user = self.users.get(user_uuid)
        if user is None:
            raise ApiFailure(404, "not_found", f"user {user_uuid} not found", "user_uuid")
        now = _now()
        thread = {"uuid": str(uuid.uuid4()), "user_uuid": user_uuid, "graph_uuid": user["graph_uuid"],
                  "created_at": now, "updated_at": now}
        self.threads[thread["uuid"]] = thread
        self.messages[thread["uuid"]] = []
        return 201, thread

    def add_messages(self, thread_uuid: str, body: dict) -> tuple[int, dict]:
        thread = self._thread_of(thread_uuid)
        incoming = body.get("messages")
        if not isinstance(incoming, list) or not incoming:
            raise ApiFailure(400, "invalid_request", "messages must be a non-empty list", "messages")
        added = []
        for i, m in enumerate(incoming):
            if not isinstance(m, dict):
                raise ApiFailure(400, "invalid_request", f"messages[{i}] is not an object", f"messages[{i}]")
            if m.get("uuid") is not None:
                raise ApiFailure(400, "invalid_request", "message uuid is server-assigned", f"messages[{i}].uuid")
            if m.get("role") is not None and m["role"] not in ROLES:
                raise ApiFailure(400, "invalid_request", f"unknown role {m['role']!r}", f"messages[{i}].role")
            metadata = m.get("metadata")
            if metadata is not None and (not isinstance(metadata, dict) or len(metadata) > MAX_METADATA_KEYS):
                raise ApiFailure(400, "invalid_request", f"metadata: an object of at most {MAX_METADATA_KEYS} keys",
                                 f"messages[{i}].metadata")
            now = _now()
            message = {"uuid": str(uuid.uuid4()), "thread_uuid": thread_uuid, "content": m.get("content"),
                       "name": m.get("name"), "role": m.get("role"), "metadata": metadata, "created_at": now,
                       "reference_time": m.get("reference_time") or now, "_added": time.monotonic()}
            self.messages[thread_uuid].append(message)
            self.episodes.append({
                "uuid": str(uuid.uuid4()), "content": message["content"], "created_at": now,
                "graph_uuid": thread["graph_uuid"], "metadata": metadata, "reference_time": message["reference_time"],
                "role": message["role"], "role_name": message["name"], "source": "message",
                "thread_uuid": thread_uuid, "user_uuid": thread["user_uuid"], "_added": message["_added"]})
            added.append(self._public_message(message))
        thread["updated_at"] = _now()
        return 202, {"messages": added, "task": self._task("add_messages", done=False)}

    def list_messages(self, thread_uuid: str, query: dict) -> tuple[int, dict]:
        self._thread_of(thread_uuid)
        messages = list(self.messages[thread_uuid])
        if query.get("order") == "desc":
            messages.reverse()
        size = _int_param(query, "page_size", 50, 1, 1000)
        start = _int_param(query, "cursor", 0, 0, 10**9)
        page = messages[start:start + size]
        out = {"items": [self._public_message(m) for m in page], "total_size": len(messages)}
        if start + size < len(messages):
            out["next_cursor"] = str(start + size)
        return 200, out

    def search_episodes(self, graph: str, query: dict, body: dict) -> tuple[int, dict]:
        user = self._user_of(graph)
        text = body.get("query")
        if not isinstance(text, str) or not text.strip():
            raise ApiFailure(400, "invalid_request", "query is required", "query")
        size = _int_param(query, "page_size", 10, 1, 100)
        wanted = _words(text)
        scored = []
        for order, e in enumerate(self.episodes):
            if e["user_uuid"] != user["uuid"] or not self._processed(e["_added"]):
                continue
            overlap = len(wanted & _words(e["content"]))
            if overlap:
                scored.append((round(overlap / len(wanted), 6), order, e))
        scored.sort(key=lambda t: (-t[0], -t[1]))
        return 200, {"items": [self._public_episode(e, s) for s, _, e in scored[:size]]}

    # -- HTTP -----------------------------------------------------------------

    def _route(self, method: str, path: str, query: dict, body: dict) -> tuple[int, dict]:
        parts = [p for p in path.split("/") if p]
        if method == "POST" and parts == ["users"]:
            return self._called(method, "users", self.create_user, body)
        if method == "DELETE" and len(parts) == 2 and parts[0] == "users":
            return self._called(method, "users/{uuid}", self.delete_user, parts[1])
        if method == "POST" and parts == ["threads"]:
            return self._called(method, "threads", self.create_thread, body)
        if len(parts) == 3 and parts[0] == "threads" and parts[2] == "messages":
            if method == "POST":
                return self._called(method, "threads/{uuid}/messages", self.add_messages, parts[1], body)
            if method == "GET":
                return self._called(method, "threads/{uuid}/messages", self.list_messages, parts[1], query)
        if method == "POST" and len(parts) == 4 and parts[0] == "graphs" and parts[2:] == ["search", "episodes"]:
            return self._called(method, "graphs/{uuid}/search/episodes", self.search_episodes, parts[1], query, body)
        raise ApiFailure(404, "not_found", f"no route {method} {path} in the fake")

    def _called(self, method, route, fn, *args):
        self.calls.append((method, route))
        return fn(*args)

    def _handler_class(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # else a keep-alive client's delayed ACK holds each reply ~40 ms

            def log_message(self, *args) -> None:  # quiet
                pass

            def _answer(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, method: str) -> None:
                url = urlparse(self.path)
                path = url.path[len(API_PREFIX):] if url.path.startswith(API_PREFIX + "/") else url.path
                query = {k: v[-1] for k, v in parse_qs(url.query).items()}
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    if self.headers.get("Authorization") != f"Api-Key {fake.api_key}":
                        raise ApiFailure(401, "unauthorized", "missing or wrong API key")
                    try:
                        body = json.loads(raw) if raw else {}
                    except ValueError:
                        raise ApiFailure(400, "invalid_json", "request body is not JSON") from None
                    with fake.lock:
                        status, payload = fake._route(method, path, query, body if isinstance(body, dict) else {})
                except ApiFailure as exc:
                    error = {"code": exc.code, "message": exc.message, "request_id": str(uuid.uuid4())}
                    if exc.param:
                        error["param"] = exc.param
                    status, payload = exc.status, {"error": error}
                self._answer(status, payload)

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def do_DELETE(self) -> None:
                self._handle("DELETE")

        return Handler


def _int_param(query: dict, name: str, default: int, low: int, high: int) -> int:
    value = query.get(name)
    if value in (None, ""):
        return default
    try:
        n = int(value)
    except ValueError:
        raise ApiFailure(400, "invalid_request", f"{name} must be an integer", name) from None
    if not low <= n <= high:
        raise ApiFailure(400, "invalid_request", f"{name} must be in [{low}, {high}]", name)
    return n


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    key = sys.argv[2] if len(sys.argv) > 2 else "fake"
    fake = FakeZep(api_key=key, port=port).start()
    print(f"fake Zep listening on {fake.url} (key {key!r})", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        fake.stop()

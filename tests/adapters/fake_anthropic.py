"""A local stand-in for the Anthropic Messages API (``POST /v1/messages``), on loopback.

What it answers is decided by a *responder*: a plain callable the test passes in, given the
request body as a dict and returning either

* a ``str``: the answer is one ``text`` block (``stop_reason`` ``end_turn``), or
* a ``dict``: the answer is one ``tool_use`` block whose ``input`` is that dict
  (``stop_reason`` ``tool_use``). The tool is the one ``tool_choice`` names
  (``{"type": "tool", "name": ...}``), else the request's first tool. A dict answer to a
  request without ``tools`` is a responder bug and comes back as a 500 ``api_error``.

A responder that raises makes the call fail with a 500 ``api_error`` whose message is the
exception (and the exception is kept in :attr:`FakeAnthropic.errors`), so a test sees what
it did not expect instead of a hang. :func:`schema_instance` builds a minimal valid value
for a tool's ``input_schema``, for responders that only need schema-valid answers.

Wire behaviour, after the public API reference and the ``anthropic`` Python SDK:

* Every request must carry ``x-api-key`` equal to the fake's key (else 401
  ``authentication_error``) and an ``anthropic-version`` header (else 400).
* The body needs ``model`` (str), ``max_tokens`` (positive int) and a non-empty
  ``messages`` list (else 400 ``invalid_request_error``).
* ``"stream": true`` answers as server-sent events: ``message_start``,
  ``content_block_start``, ``ping``, ``content_block_delta`` (``text_delta`` chunks for text,
  ``input_json_delta`` chunks of the JSON for tool input), ``content_block_stop``,
  ``message_delta`` (stop reason, output tokens), ``message_stop``.
* ``usage``: ``input_tokens`` / ``output_tokens`` are counts of word and punctuation tokens
  (regex ``\\w+|[^\\w\\s]``) of the request's system, messages and tools and of the answer:
  deterministic, not Anthropic's tokenizer.
* :meth:`FakeAnthropic.fail_next` makes the next N calls fail with 429 ``rate_limit_error``
  or 529 ``overloaded_error`` (with ``retry-after-ms``, so the SDK's own retries are quick).

Any other path answers 404. Every accepted request body is kept in
:attr:`FakeAnthropic.requests`, in order. Run alone: ``python tests/adapters/fake_anthropic.py [PORT] [KEY]``
(answers every text request with ``"ok"``).
"""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[dict], "str | dict"]
DEFAULT_KEY = "sk-ant-test-canary"
_TOKEN = re.compile(r"\w+|[^\w\s]")
#: Characters per ``text_delta`` / ``input_json_delta`` event when streaming.
STREAM_CHUNK = 24
_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
                429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}


def count_tokens(value: Any) -> int:
    """Word and punctuation tokens in every string inside ``value`` (dicts, lists, str)."""
    if isinstance(value, str):
        return len(_TOKEN.findall(value))
    if isinstance(value, dict):
        return sum(count_tokens(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(count_tokens(v) for v in value)
    return 0


def request_text(request: dict) -> str:
    """The system prompt and every text of every message of a request, joined by newlines."""
    parts: list[str] = []
    system = request.get("system")
    if isinstance(system, str):
        parts.append(system)
    elif isinstance(system, list):
        parts.extend(b.get("text", "") for b in system if isinstance(b, dict))
    for m in request.get("messages") or []:
        content = m.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return "\n".join(parts)


def chosen_tool(request: dict) -> dict | None:
    """The tool a request asks for: the one ``tool_choice`` names, else its first tool; None without tools."""
    tools = request.get("tools") or []
    if not tools:
        return None
    choice = request.get("tool_choice") or {}
    if choice.get("type") == "tool":
        for tool in tools:
            if tool.get("name") == choice.get("name"):
                return tool
        raise ValueError(f"tool_choice names {choice.get('name')!r}, which is not among the request's tools")
    return tools[0]


def _resolve(schema: dict, root: dict) -> dict:
    while isinstance(schema, dict) and "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/"):
            raise ValueError(f"only local $ref is supported, got {ref!r}")
        node: Any = root
        for part in ref[2:].split("/"):
            node = node[part]
        schema = node
    return schema


def schema_instance(schema: dict, fill: Callable[[str, dict], Any] | None = None, root: dict | None = None,
                    name: str = "") -> Any:
    """A minimal value valid against a JSON Schema (the subset tool ``input_schema``\\s use).

    Objects get their ``required`` properties (all properties when none are listed); arrays are
    empty (``minItems`` items when set); strings ``""``, numbers 0, booleans False; ``enum`` /
    ``const`` their first value; ``anyOf`` / ``oneOf`` ``None`` when a branch is ``null``, else
    the first branch; local ``$ref`` (``#/$defs/...``) followed. ``fill(property_name, subschema)`` may return a
    value for a property (anything but ``None``), which is used as it is.

    Raises:
        ValueError: a non-local ``$ref``.
    """
    root = schema if root is None else root
    schema = _resolve(schema, root)
    if fill is not None and name:
        value = fill(name, schema)
        if value is not None:
            return value
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema and schema["default"] is not None:
        return schema["default"]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            branches = [_resolve(b, root) for b in schema[key]]
            if any(b.get("type") == "null" for b in branches):
                return None
            return schema_instance(branches[0], fill, root)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        props = schema.get("properties") or {}
        wanted = schema.get("required") or list(props)
        return {p: schema_instance(props.get(p, {}), fill, root, p) for p in wanted}
    if kind == "array":
        return [schema_instance(schema.get("items") or {}, fill, root) for _ in range(schema.get("minItems", 0))]
    if kind == "string":
        return ""
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return ""


def _default_responder(request: dict) -> str | dict:
    tool = chosen_tool(request)
    if tool is not None and (request.get("tool_choice") or {}).get("type") in ("tool", "any"):
        return schema_instance(tool.get("input_schema") or {"type": "object"})
    return "ok"


class FakeAnthropic:
    """In-memory state plus a ThreadingHTTPServer on loopback. Use as a context manager.

    ``url`` is the base URL to give the SDK (``Anthropic(base_url=...)`` or
    ``ANTHROPIC_BASE_URL``). ``requests`` holds every accepted request body; ``errors`` the
    exceptions responders raised; ``usage`` the summed input/output tokens answered.
    """

    def __init__(self, responder: Responder | None = None, api_key: str = DEFAULT_KEY,
                 host: str = "127.0.0.1", port: int = 0):
        self.responder = responder or _default_responder
        self.api_key = api_key
        self.lock = threading.Lock()
        self.requests: list[dict] = []
        self.errors: list[BaseException] = []
        self.usage = {"input_tokens": 0, "output_tokens": 0}
        self.rejected = 0
        self._failures: list[tuple[int, str]] = []
        self._next_id = 0
        self.server = ThreadingHTTPServer((host, port), self._handler_class())
        self.server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> "FakeAnthropic":
        self._thread = threading.Thread(target=self.server.serve_forever, name="fake-anthropic", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> "FakeAnthropic":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def fail_next(self, count: int, status: int = 429, message: str | None = None) -> None:
        """The next ``count`` calls fail with ``status`` (429 rate limit or 529 overloaded)."""
        if status not in (429, 529):
            raise ValueError(f"fail_next supports 429 and 529, got {status}")
        text = message or ("Number of requests has exceeded your rate limit" if status == 429 else "Overloaded")
        with self.lock:
            self._failures.extend([(status, text)] * count)

    # -- one call -----------------------------------------------------------

    def _answer(self, body: dict) -> tuple[dict, str | dict, dict | None]:
        """The message to send: (message without content, responder's answer, tool or None)."""
        result = self.responder(body)
        tool = chosen_tool(body)
        if isinstance(result, dict):
            if tool is None:
                raise TypeError("the responder returned a tool input but the request has no tools")
        elif isinstance(result, str):
            tool = None
        else:
            raise TypeError(f"a responder returns str or dict, got {type(result).__name__}")
        with self.lock:
            self._next_id += 1
            msg_id = f"msg_fake_{self._next_id:06d}"
        out_tokens = max(1, count_tokens(result) if isinstance(result, str) else count_tokens(json.dumps(result)))
        in_tokens = max(1, count_tokens([body.get("system") or "", body.get("messages"), body.get("tools") or []]))
        message = {"id": msg_id, "type": "message", "role": "assistant", "model": body["model"],
                   "stop_reason": "tool_use" if tool is not None else "end_turn", "stop_sequence": None,
                   "usage": {"input_tokens": in_tokens, "output_tokens": out_tokens}}
        with self.lock:
            self.usage["input_tokens"] += in_tokens
            self.usage["output_tokens"] += out_tokens
        return message, result, tool

    @staticmethod
    def _block(message: dict, result: str | dict, tool: dict | None) -> dict:
        if tool is None:
            return {"type": "text", "text": result}
        return {"type": "tool_use", "id": "toolu_" + message["id"][4:], "name": tool["name"], "input": result}

    def _events(self, message: dict, result, tool) -> list[tuple[str, dict]]:
        usage = message["usage"]
        start = dict(message, content=[], stop_reason=None,
                     usage={"input_tokens": usage["input_tokens"], "output_tokens": 1})
        block = self._block(message, result, tool)
        if tool is None:
            first = {"type": "text", "text": ""}
            payload, delta_type, key = result, "text_delta", "text"
        else:
            first = dict(block, input={})
            payload, delta_type, key = json.dumps(result), "input_json_delta", "partial_json"
        chunks = [payload[i:i + STREAM_CHUNK] for i in range(0, len(payload), STREAM_CHUNK)] or [""]
        events = [("message_start", {"type": "message_start", "message": start}),
                  ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": first}),
                  ("ping", {"type": "ping"})]
        events += [("content_block_delta", {"type": "content_block_delta", "index": 0,
                                            "delta": {"type": delta_type, key: c}}) for c in chunks]
        events += [("content_block_stop", {"type": "content_block_stop", "index": 0}),
                   ("message_delta", {"type": "message_delta",
                                      "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                      "usage": {"output_tokens": usage["output_tokens"]}}),
                   ("message_stop", {"type": "message_stop"})]
        return events

    def _handler_class(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # headers and body are two writes: no delayed-ACK stall between them

            def log_message(self, *args) -> None:  # quiet
                pass

            def _json(self, status: int, payload: dict, headers: dict | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("request-id", "req_fake")
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _error(self, status: int, message: str, headers: dict | None = None) -> None:
                self._json(status, {"type": "error", "error": {"type": _ERROR_TYPES.get(status, "api_error"),
                                                               "message": message}}, headers)

            def do_GET(self) -> None:
                self._error(404, f"no route GET {self.path}")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if self.path.split("?", 1)[0].rstrip("/") != "/v1/messages":
                    return self._error(404, f"no route POST {self.path}")
                if self.headers.get("x-api-key") != fake.api_key:
                    with fake.lock:
                        fake.rejected += 1
                    return self._error(401, "invalid x-api-key")
                if not self.headers.get("anthropic-version"):
                    return self._error(400, "anthropic-version header is required")
                with fake.lock:
                    failure = fake._failures.pop(0) if fake._failures else None
                if failure is not None:
                    return self._error(failure[0], failure[1], {"retry-after-ms": "10", "x-should-retry": "true"})
                try:
                    body = json.loads(raw or b"{}")
                except ValueError as exc:
                    return self._error(400, f"body is not JSON: {exc}")
                problem = _invalid(body)
                if problem:
                    return self._error(400, problem)
                with fake.lock:
                    fake.requests.append(body)
                try:
                    message, result, tool = fake._answer(body)
                except Exception as exc:  # noqa: BLE001 - a responder bug, shown to the caller
                    with fake.lock:
                        fake.errors.append(exc)
                    return self._error(500, f"fake responder failed: {type(exc).__name__}: {exc}")
                if not body.get("stream"):
                    return self._json(200, dict(message, content=[fake._block(message, result, tool)]))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for event, data in fake._events(message, result, tool):
                    self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
                    self.wfile.flush()
                self.close_connection = True

        return Handler


def _invalid(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "body must be a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: field required"
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        return "max_tokens: a positive integer is required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: a non-empty list is required"
    tools = body.get("tools")
    if tools is not None and (not isinstance(tools, list) or
                              any(not isinstance(t, dict) or not t.get("name") for t in tools)):
        return "tools: a list of tools with names is required"
    if body.get("tool_choice") and not tools:
        return "tool_choice may only be specified while providing tools"
    return None


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    key = sys.argv[2] if len(sys.argv) > 2 else DEFAULT_KEY
    with FakeAnthropic(api_key=key, port=port) as fake:
        print(f"fake Anthropic Messages API on {fake.url} (key {key})", flush=True)
        threading.Event().wait()

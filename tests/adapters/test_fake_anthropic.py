"""The fake Anthropic Messages API (tests/adapters/fake_anthropic.py): wire behaviour over plain
HTTP, and, where an adapter virtualenv with the ``anthropic`` SDK is cached or can be built,
the SDK itself against it (non-streaming, streaming text, streaming tool use, retries)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fake_anthropic import FakeAnthropic, count_tokens, schema_instance  # noqa: E402

KEY = "sk-ant-test-canary"
HEADERS = {"x-api-key": KEY, "anthropic-version": "2023-06-01", "content-type": "application/json"}
WEATHER = {"name": "get_weather", "input_schema": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"]}}


def _post(url: str, body: dict, headers: dict = HEADERS, path: str = "/v1/messages"):
    request = urllib.request.Request(url + path, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, dict(reply.headers), reply.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read().decode()


def _events(raw: str) -> list[tuple[str, dict]]:
    out = []
    for block in raw.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def _responder(request: dict):
    if request.get("tools"):
        return {"city": "Lisbon", "days": 3}
    return "The answer is forty-two, as a long text that is cut into several stream chunks."


BASE = {"model": "claude-haiku-4-5-20251001", "max_tokens": 100,
        "messages": [{"role": "user", "content": "What is the answer?"}]}


def test_text_answer_with_usage_and_recorded_request():
    with FakeAnthropic(_responder, api_key=KEY) as fake:
        status, _, raw = _post(fake.url, dict(BASE, system="Be brief."))
    assert status == 200
    doc = json.loads(raw)
    assert doc["type"] == "message" and doc["role"] == "assistant" and doc["stop_reason"] == "end_turn"
    assert doc["content"] == [{"type": "text", "text": _responder({})}]
    assert doc["usage"] == {"input_tokens": count_tokens(["Be brief.", BASE["messages"], []]),
                            "output_tokens": count_tokens(_responder({}))}
    assert fake.requests == [dict(BASE, system="Be brief.")] and fake.usage == doc["usage"]


def test_tool_use_answer_names_the_chosen_tool():
    other = {"name": "other", "input_schema": {"type": "object"}}
    body = dict(BASE, tools=[other, WEATHER], tool_choice={"type": "tool", "name": "get_weather"})
    with FakeAnthropic(_responder, api_key=KEY) as fake:
        status, _, raw = _post(fake.url, body)
    doc = json.loads(raw)
    assert status == 200 and doc["stop_reason"] == "tool_use"
    (block,) = doc["content"]
    assert block["type"] == "tool_use" and block["name"] == "get_weather" and block["input"] == {"city": "Lisbon",
                                                                                               "days": 3}
    assert block["id"].startswith("toolu_")


def test_streaming_text_and_tool_input_events():
    with FakeAnthropic(_responder, api_key=KEY) as fake:
        _, headers, raw = _post(fake.url, dict(BASE, stream=True))
        _, _, raw_tool = _post(fake.url, dict(BASE, stream=True, tools=[WEATHER],
                                              tool_choice={"type": "tool", "name": "get_weather"}))
    assert headers["Content-Type"] == "text/event-stream"
    events = _events(raw)
    names = [e for e, _ in events]
    assert names[:3] == ["message_start", "content_block_start", "ping"]
    assert names[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    deltas = [d["delta"] for e, d in events if e == "content_block_delta"]
    assert len(deltas) > 1 and all(d["type"] == "text_delta" for d in deltas)
    assert "".join(d["text"] for d in deltas) == _responder({})
    assert events[-2][1]["delta"]["stop_reason"] == "end_turn"
    assert events[-2][1]["usage"]["output_tokens"] == count_tokens(_responder({}))
    tool_events = _events(raw_tool)
    start = tool_events[1][1]["content_block"]
    assert start["type"] == "tool_use" and start["name"] == "get_weather" and start["input"] == {}
    partial = "".join(d["delta"]["partial_json"] for e, d in tool_events if e == "content_block_delta")
    assert json.loads(partial) == {"city": "Lisbon", "days": 3}
    assert tool_events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_errors_auth_validation_and_injected_failures():
    with FakeAnthropic(_responder, api_key=KEY) as fake:
        status, _, raw = _post(fake.url, BASE, headers=dict(HEADERS, **{"x-api-key": "wrong"}))
        assert status == 401 and json.loads(raw)["error"]["type"] == "authentication_error"
        no_version = {k: v for k, v in HEADERS.items() if k != "anthropic-version"}
        assert _post(fake.url, BASE, headers=no_version)[0] == 400
        status, _, raw = _post(fake.url, {"model": "m", "messages": []})
        assert status == 400 and json.loads(raw)["error"]["type"] == "invalid_request_error"
        assert _post(fake.url, dict(BASE, tool_choice={"type": "any"}))[0] == 400
        assert _post(fake.url, BASE, path="/v1/complete")[0] == 404
        fake.fail_next(1, 429)
        fake.fail_next(1, 529)
        status, headers, raw = _post(fake.url, BASE)
        assert status == 429 and json.loads(raw)["error"]["type"] == "rate_limit_error"
        assert headers["retry-after-ms"] == "10"
        status, _, raw = _post(fake.url, BASE)
        assert status == 529 and json.loads(raw)["error"]["type"] == "overloaded_error"
        assert _post(fake.url, BASE)[0] == 200
        assert fake.rejected == 1 and len(fake.requests) == 1  # failures and rejects are not recorded
        with pytest.raises(ValueError):
            fake.fail_next(1, 500)


def test_a_failing_responder_is_a_500_that_names_the_error():
    def broken(request):
        raise KeyError("no such prompt")

    with FakeAnthropic(broken, api_key=KEY) as fake:
        status, _, raw = _post(fake.url, BASE)
        assert status == 500 and "KeyError" in json.loads(raw)["error"]["message"]
        assert isinstance(fake.errors[0], KeyError)
    with FakeAnthropic(lambda r: {"a": 1}, api_key=KEY) as fake:  # tool input without tools
        assert _post(fake.url, BASE)[0] == 500 and isinstance(fake.errors[0], TypeError)


def test_schema_instance_builds_valid_minimal_values():
    schema = {"$defs": {"Item": {"type": "object", "properties": {
        "name": {"type": "string"}, "n": {"type": "integer", "minimum": 1},
        "when": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        "kind": {"enum": ["a", "b"]}, "ok": {"type": "boolean"}}, "required": ["name", "n", "when", "kind", "ok"]}},
        "type": "object", "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}, "minItems": 1},
                                         "note": {"type": "string"}}, "required": ["items"]}
    assert schema_instance(schema) == {"items": [{"name": "", "n": 1, "when": None, "kind": "a", "ok": False}]}
    fill = lambda name, sub: "X" if name == "name" else None  # noqa: E731
    assert schema_instance(schema, fill)["items"][0]["name"] == "X"
    with pytest.raises(ValueError):
        schema_instance({"$ref": "https://example.invalid/schema"})


SDK_SCRIPT = textwrap.dedent("""
    import json, sys
    import anthropic
    url, key = sys.argv[1], sys.argv[2]
    client = anthropic.Anthropic(api_key=key, base_url=url, max_retries=3)
    out = {}
    m = client.messages.create(model="claude-haiku-4-5-20251001", max_tokens=50,
                               messages=[{"role": "user", "content": "hi"}])
    out["text"] = m.content[0].text
    out["usage"] = [m.usage.input_tokens, m.usage.output_tokens]
    with client.messages.stream(model="claude-haiku-4-5-20251001", max_tokens=50,
                                messages=[{"role": "user", "content": "hi"}]) as stream:
        out["streamed"] = "".join(stream.text_stream)
        final = stream.get_final_message()
    out["stream_stop"] = final.stop_reason
    tools = [{"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]
    with client.messages.stream(model="claude-haiku-4-5-20251001", max_tokens=50, tools=tools,
                                tool_choice={"type": "tool", "name": "get_weather"},
                                messages=[{"role": "user", "content": "weather?"}]) as stream:
        final = stream.get_final_message()
    out["tool"] = [final.content[0].name, final.content[0].input, final.stop_reason]
    try:
        anthropic.Anthropic(api_key="wrong", base_url=url, max_retries=0).messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    except anthropic.AuthenticationError as exc:
        out["auth"] = exc.status_code
    print(json.dumps(out))
""")


@pytest.mark.slow
def test_the_anthropic_sdk_reads_the_fake():
    """The real SDK (from the graphiti adapter's virtualenv: anthropic 0.125) against the fake,
    with two injected failures it must retry through."""
    from conformance.backend.venvs import VenvError, ensure_venv, looks_offline
    from conformance.paths import adapters_dir

    try:
        python, _ = ensure_venv("graphiti", adapters_dir() / "graphiti" / "requirements.txt")
    except VenvError as exc:
        if looks_offline(str(exc)):
            pytest.skip(f"graphiti adapter venv (which has the anthropic SDK) cannot be built offline\n{exc}")
        raise
    with FakeAnthropic(_responder, api_key=KEY) as fake:
        fake.fail_next(1, 429)
        fake.fail_next(1, 529)
        proc = subprocess.run([str(python), "-c", SDK_SCRIPT, fake.url, KEY], capture_output=True, text=True,
                              timeout=120, env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["text"] == out["streamed"] == _responder({})
    assert out["usage"][0] > 0 and out["usage"][1] == count_tokens(_responder({}))
    assert out["stream_stop"] == "end_turn"
    assert out["tool"] == ["get_weather", {"city": "Lisbon", "days": 3}, "tool_use"]
    assert out["auth"] == 401

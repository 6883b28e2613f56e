"""The mem0 adapter, end to end over gRPC, in its own virtualenv (mem0ai is not in the runner's).

Started through the runner's own launcher (``conformance.backend.process``), so the
virtualenv built here is the one ``drift-conformance --adapter mem0`` reuses. Skips when
the virtualenv cannot be built because no package index is reachable.

Offline mode runs with the Anthropic variables removed from the environment (so a developer's
key never turns these tests into paid infer-mode runs). Infer mode (``DRIFT_MEM0_INFER=true`` and
``ANTHROPIC_API_KEY`` set)
runs against ``tests/adapters/fake_anthropic.py`` with :func:`mem0_responder`, a deterministic
stand-in for the model; ``test_live_infer_round_trip`` talks to the real API only when
``ANTHROPIC_API_KEY`` is set and ``ANTHROPIC_BASE_URL`` is not a loopback address.
"""

from __future__ import annotations

import json
import os
import re
import sys
import uuid
from pathlib import Path
from urllib.parse import urlparse

import grpc
import pytest

from conformance.backend.manifest import load_manifest
from conformance.backend.process import ProcessAdapter
from conformance.backend.venvs import VenvError, looks_offline
from drift_sdk.v1 import memory_backend_pb2 as pb

sys.path.insert(0, str(Path(__file__).parent))
from adapter_harness import snapshot as _snapshot  # noqa: E402
from adapter_harness import assert_scopes_honoured, scoped_env  # noqa: E402
from fake_anthropic import FakeAnthropic, request_text  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = ROOT / "adapters" / "mem0"
VARS = ("DRIFT_MEM0_INFER", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "DRIFT_MEM0_LLM_MODEL")
KEY = "sk-ant-test-canary"
MODEL = "claude-haiku-4-5-20251001"
MINILM = "sentence-transformers/all-MiniLM-L6-v2 (int8 ONNX)"


def _env(**values):
    """Set (value) or remove (None) the adapter's variables for the duration; restore after."""
    return scoped_env(VARS, **values)


def _start(**env) -> ProcessAdapter:
    process = ProcessAdapter(ADAPTER, load_manifest(ADAPTER))
    try:
        with _env(**env):
            process.start()
    except VenvError as exc:
        if looks_offline(str(exc)):
            pytest.skip(f"mem0 adapter venv cannot be built: no package index reachable\n{exc}")
        raise
    process.stub = process.client.stub
    return process


@pytest.fixture(scope="module")
def adapter():
    process = _start()  # offline mode: no Anthropic variable reaches it
    yield process
    process.stop()


def _message(mid, author, role, text, ts):
    return pb.Message(message_id=mid, author=author, role=role, text=text, timestamp=ts, scope="shared")


SESSIONS = [
    pb.Session(session_id="s1", index=0, time="2026-03-02T10:00:00Z", participants=["alice", "agent"], messages=[
        _message("s1-m1", "alice", "user", "I just adopted a beagle puppy and named him Rufus.", "2026-03-02T10:00:00Z"),
        _message("s1-m2", "agent", "assistant", "Congratulations! Beagles are energetic dogs.", "2026-03-02T10:00:20Z"),
        _message("s1-m3", "alice", "user", "My sister Carla moved to Lisbon to work as a nurse.", "2026-03-02T10:01:00Z"),
    ]),
    pb.Session(session_id="s2", index=1, time="2026-03-09T18:30:00Z", participants=["alice", "agent"], messages=[
        _message("s2-m1", "alice", "user", "I'm training for the Berlin marathon in September.", "2026-03-09T18:30:00Z"),
        _message("s2-m2", "agent", "assistant", "Great goal. How many kilometres do you run each week?",
                 "2026-03-09T18:30:30Z"),
        _message("s2-m3", "alice", "system", "Reminder: alice prefers green tea over coffee.", "2026-03-09T18:31:00Z"),
    ]),
]
ALL_IDS = {m.message_id for s in SESSIONS for m in s.messages}


def _store_all(stub, ns):
    stub.Reset(pb.ResetRequest(namespace=ns), timeout=60)
    stored = [stub.Store(pb.StoreRequest(namespace=ns, session=s), timeout=60).items_stored for s in SESSIONS]
    assert stored == [3, 3]
    assert stub.Flush(pb.FlushRequest(namespace=ns, timeout_s=30), timeout=60).ready is True


def _retrieve(stub, ns, query, k=3):
    return list(stub.Retrieve(pb.RetrieveRequest(namespace=ns, query=query, k=k, querying_entity="alice",
                                                 now="2026-03-10T09:00:00Z"), timeout=60).hits)


def test_manifest_validates_against_the_launcher_schema():
    from conformance.backend.manifest import load_manifest

    manifest = load_manifest(ADAPTER)
    assert manifest.name == "mem0" and manifest.entry == "adapter.py"
    assert manifest.startup_timeout_s >= 60


@pytest.mark.slow
def test_describe(adapter):
    d = adapter.stub.Describe(pb.DescribeRequest(), timeout=30)
    assert d.name == "mem0" and d.version.startswith("mem0ai-2.2.")
    c = d.capabilities
    assert c.provenance and c.snapshot and c.forget and c.flush_signal and c.deterministic
    assert c.scopes and not c.time_aware  # offline mode honours querying_entity
    assert list(d.internal_models) == ["sentence-transformers/all-MiniLM-L6-v2 (int8 ONNX)"]
    assert d.settings["infer"] == "false" and d.settings["mem0_version"].startswith("2.2.")


@pytest.mark.slow
def test_store_retrieve_snapshot_reset(adapter):
    stub = adapter.stub
    _store_all(stub, "run-a")

    hits = _retrieve(stub, "run-a", "Which city does Carla live in?")
    assert 1 <= len(hits) <= 3
    assert list(hits[0].source_ids) == ["s1-m3"] and "Lisbon" in hits[0].text
    assert hits[0].timestamp == "2026-03-02T10:01:00Z"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert list(_retrieve(stub, "run-a", "What is the name of alice's dog?", k=1)[0].source_ids) == ["s1-m1"]
    # a system message is stored too (mem0 itself would drop it with infer=False)
    assert list(_retrieve(stub, "run-a", "Does alice drink tea or coffee?", k=1)[0].source_ids) == ["s2-m3"]

    items = _snapshot(stub, "run-a")
    assert {sid for i in items for sid in i.source_ids} == ALL_IDS
    assert all(len(i.source_ids) == 1 and i.item_id and i.timestamp for i in items)
    assert any(i.text == "alice: My sister Carla moved to Lisbon to work as a nurse." for i in items)

    stub.Reset(pb.ResetRequest(namespace="run-a"), timeout=60)
    assert _snapshot(stub, "run-a") == []
    assert _retrieve(stub, "run-a", "Which city does Carla live in?") == []


@pytest.mark.slow
def test_namespaces_are_isolated_and_reruns_are_identical(adapter):
    stub = adapter.stub
    _store_all(stub, "run-b")
    stub.Reset(pb.ResetRequest(namespace="run-c"), timeout=60)
    stub.Store(pb.StoreRequest(namespace="run-c", session=pb.Session(
        session_id="x1", index=0, time="2026-03-02T10:00:00Z", participants=["bob"],
        messages=[_message("x1-m1", "bob", "user", "Bob's cat is called Miso.", "2026-03-02T10:00:00Z")])),
        timeout=60)
    assert {sid for i in _snapshot(stub, "run-c") for sid in i.source_ids} == {"x1-m1"}
    queries = ["What pet does alice have?", "marathon training", "cat called Miso"]
    first = [[(h.text, h.score, tuple(h.source_ids)) for h in _retrieve(stub, "run-b", q, k=6)] for q in queries]
    assert all(sid in ALL_IDS for hits in first for _, _, ids in hits for sid in ids)
    _store_all(stub, "run-b")  # reset and store again: same hits, same scores
    again = [[(h.text, h.score, tuple(h.source_ids)) for h in _retrieve(stub, "run-b", q, k=6)] for q in queries]
    assert again == first


@pytest.mark.slow
def test_private_messages_go_only_to_their_author(adapter):
    assert_scopes_honoured(adapter.stub, "scopes")


@pytest.mark.slow
def test_each_namespace_has_its_own_collection_so_reads_do_not_scan_others(adapter, tmp_path):
    # mem0's advice for tenant isolation: one collection per namespace; Reset drops it.
    stub = adapter.stub
    _store_all(stub, "iso-a")
    _store_all(stub, "iso-b")
    folders = {p.name for p in (Path(adapter.workdir) / "mem0-data" / "qdrant" / "collection").iterdir()}
    assert {"drift-" + __import__("hashlib").blake2b(ns.encode(), digest_size=8).hexdigest()
            for ns in ("iso-a", "iso-b")} <= folders
    stub.Reset(pb.ResetRequest(namespace="iso-a"), timeout=60)
    assert _snapshot(stub, "iso-a") == [] and len(_snapshot(stub, "iso-b")) == sum(len(s.messages) for s in SESSIONS)


@pytest.mark.slow
def test_forget_removes_the_memories_of_a_message(adapter):
    stub = adapter.stub
    _store_all(stub, "run-d")
    removed = stub.Forget(pb.ForgetRequest(namespace="run-d", source_ids=["s1-m3", "no-such-id"]), timeout=60)
    assert removed.items_removed == 1
    assert {sid for i in _snapshot(stub, "run-d") for sid in i.source_ids} == ALL_IDS - {"s1-m3"}
    assert all("s1-m3" not in h.source_ids for h in _retrieve(stub, "run-d", "Which city does Carla live in?"))


@pytest.mark.slow
def test_bad_input_and_home_folder(adapter):
    with pytest.raises(grpc.RpcError) as err:
        adapter.stub.Retrieve(pb.RetrieveRequest(namespace="run-a", query="x", k=0), timeout=30)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as err:  # mem0 rejects a user_id with whitespace
        adapter.stub.Reset(pb.ResetRequest(namespace="has space"), timeout=30)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    # The launcher makes the working folder the adapter's HOME: mem0 and onnxruntime must
    # not drop their own config or telemetry files there, only the data folder.
    assert sorted(p.name for p in adapter.workdir.iterdir()) == ["adapter.log", "mem0-data", "port"]


@pytest.mark.slow
def test_main_command_runs_keyword_and_mem0_side_by_side(adapter, tmp_path):
    # The README's main job on two scenarios: each adapter its own process, controls beside them.
    import subprocess

    import jsonschema

    env = {k: v for k, v in os.environ.items() if k not in VARS}  # offline mode
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "--adapter", "keyword", "--adapter", "mem0",
                           "--scenario", "ua-short-00[12]", "--out", str(tmp_path / "result.json"), "--quiet",
                           "--records-dir", str(tmp_path / "runs")], cwd=tmp_path, capture_output=True, text=True,
                          timeout=900, env=env)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "result.json").read_text())
    jsonschema.validate(doc, json.loads((ROOT / "schema" / "result.schema.json").read_text()))
    systems = doc["systems"]
    assert list(systems) == ["none", "oracle", "reference-compressor", "keyword", "mem0"]
    assert systems["mem0"]["describe"]["internal_models"] == ["sentence-transformers/all-MiniLM-L6-v2 (int8 ONNX)"]
    pids = {doc["receipt"]["isolation"][s]["pid"] for s in ("none", "keyword", "mem0")}
    assert len(pids) == 3
    for metric in ("recall_at_k", "revision_accuracy"):
        values = [systems[s]["metrics"][metric]["value"] for s in ("oracle", "mem0", "none")]
        assert values[0] >= values[1] >= values[2], (metric, values)


# -- infer mode (ANTHROPIC_API_KEY set), against the fake Anthropic API ------------------

_NEW_MESSAGES = re.compile(r"## New Messages\n(.*?)\n\n## ", re.S)
_ROLE_LINE = re.compile(r"^(user|assistant|system): (.*)$")


def mem0_responder(request: dict) -> str:
    """Answers mem0 2.2.1's one extraction prompt (system prompt "Memory Extractor", user prompt
    with a "## New Messages" section) with one memory per new message line, in order:
    ``{"memory": [{"id": "<i>", "text": "<author> said: <text>", "attributed_to": <role>}]}``.
    Any other prompt is a surprise and raises (the fake answers 500 and keeps the error)."""
    system = request.get("system") or ""
    # the user prompt only: the system prompt has a "## New Messages" heading of its own
    text = request_text(dict(request, system=""))
    match = _NEW_MESSAGES.search(text)
    if "Memory Extractor" not in system or match is None:
        raise AssertionError(f"not mem0's extraction prompt: {system[:80]!r}")
    memories = []
    for line in match.group(1).splitlines():
        role_line = _ROLE_LINE.match(line.strip())
        if not role_line:
            continue
        role, content = role_line.groups()
        author, sep, body = content.partition(": ")
        said = f"{author} said: {body}" if sep else content
        memories.append({"id": str(len(memories)), "text": said,
                         "attributed_to": "assistant" if role == "assistant" else "user"})
    return json.dumps({"memory": memories})


S1_IDS = [m.message_id for m in SESSIONS[0].messages]
S2_IDS = [m.message_id for m in SESSIONS[1].messages]


@pytest.fixture(scope="module")
def fake_llm():
    with FakeAnthropic(mem0_responder, api_key=KEY) as server:
        yield server


@pytest.fixture(scope="module")
def inferring(fake_llm):
    process = _start(DRIFT_MEM0_INFER="true", ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=fake_llm.url)
    yield process
    process.stop()


def test_responder_reads_mem0s_prompt():
    request = {"system": "# ROLE\n\nYou are a Memory Extractor", "messages": [{"role": "user", "content": (
        "## Summary\n\n## New Messages\nuser: alice: I like tea.\nassistant: agent: Noted.\n\n## Observation Date\nx")}]}
    assert json.loads(mem0_responder(request)) == {"memory": [
        {"id": "0", "text": "alice said: I like tea.", "attributed_to": "user"},
        {"id": "1", "text": "agent said: Noted.", "attributed_to": "assistant"}]}
    with pytest.raises(AssertionError):
        mem0_responder({"system": "something else", "messages": [{"role": "user", "content": "hi"}]})


@pytest.mark.slow
def test_infer_describe_names_the_model_and_the_mode(inferring, fake_llm):
    d = inferring.stub.Describe(pb.DescribeRequest(), timeout=30)
    assert list(d.internal_models) == [MINILM, MODEL]
    assert d.settings["mode"] == "infer" and d.settings["infer"] == "true"
    assert d.settings["llm_base_url"] == fake_llm.url and "session-granular" in d.settings["provenance"]
    c = d.capabilities
    assert c.provenance and c.snapshot and c.flush_signal
    assert not c.forget and not c.deterministic
    assert KEY not in str(d)  # the key never reaches the receipt


@pytest.mark.slow
def test_infer_store_extracts_with_session_provenance(inferring, fake_llm):
    stub = inferring.stub
    stub.Reset(pb.ResetRequest(namespace="inf-a"), timeout=60)
    for session, ids in ((SESSIONS[0], S1_IDS), (SESSIONS[1], S2_IDS)):
        calls, usage = len(fake_llm.requests), dict(fake_llm.usage)
        reply = stub.Store(pb.StoreRequest(namespace="inf-a", session=session), timeout=60)
        assert len(fake_llm.requests) == calls + 1  # one extraction call per session
        body = fake_llm.requests[-1]
        assert body["model"] == MODEL and "response_format" not in body
        assert reply.items_stored == len(session.messages)
        assert reply.usage.llm_calls == 1
        assert reply.usage.input_tokens == fake_llm.usage["input_tokens"] - usage["input_tokens"] > 0
        assert reply.usage.output_tokens == fake_llm.usage["output_tokens"] - usage["output_tokens"] > 0
    assert not fake_llm.errors
    assert stub.Flush(pb.FlushRequest(namespace="inf-a", timeout_s=30), timeout=60).ready is True

    hits = _retrieve(stub, "inf-a", "Which city does Carla live in?")
    assert hits[0].text == "alice said: My sister Carla moved to Lisbon to work as a nurse."
    assert list(hits[0].source_ids) == S1_IDS and hits[0].timestamp == SESSIONS[0].time
    assert list(_retrieve(stub, "inf-a", "marathon training", k=1)[0].source_ids) == S2_IDS
    items = _snapshot(stub, "inf-a")
    assert len(items) == 6 and all(list(i.source_ids) in (S1_IDS, S2_IDS) for i in items)
    with pytest.raises(grpc.RpcError) as err:
        stub.Forget(pb.ForgetRequest(namespace="inf-a", source_ids=["s1-m3"]), timeout=30)
    assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED
    stub.Reset(pb.ResetRequest(namespace="inf-a"), timeout=60)
    assert _snapshot(stub, "inf-a") == []


@pytest.mark.slow
def test_infer_retries_rate_limits_and_overload(inferring, fake_llm):
    stub = inferring.stub
    stub.Reset(pb.ResetRequest(namespace="inf-429"), timeout=60)
    fake_llm.fail_next(1, 429)
    fake_llm.fail_next(1, 529)
    reply = stub.Store(pb.StoreRequest(namespace="inf-429", session=SESSIONS[0]), timeout=60)
    assert reply.items_stored == 3 and reply.usage.llm_calls == 1
    assert list(_retrieve(stub, "inf-429", "Carla Lisbon", k=1)[0].source_ids) == S1_IDS


@pytest.mark.slow
def test_infer_contract_checks_pass(inferring):
    from conformance.backend.checks import ClientTarget, run_checks

    results = run_checks(ClientTarget(inferring.client, label="mem0-infer"),
                         skips=load_manifest(ADAPTER).check_skips, flush_timeout_s=30)
    table = {r.name: (r.result, r.detail) for r in results}
    assert all(result != "FAIL" for result, _ in table.values()), table
    assert table["flush_then_found"][0] == "PASS" and table["provenance_ids"][0] == "PASS"
    assert table["deterministic"][0] == "SKIP"  # not claimed in infer mode: an LLM decides what is kept


@pytest.mark.slow
def test_infer_refuses_an_undated_model(fake_llm):
    from conformance.errors import DriftError

    with pytest.raises(DriftError) as err:
        _start(DRIFT_MEM0_INFER="true", ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=fake_llm.url,
               DRIFT_MEM0_LLM_MODEL="claude-haiku-4-5").stop()
    assert "not a dated Anthropic model id" in str(err.value)


def _live_skip_reason() -> str | None:
    if not os.environ.get("ANTHROPIC_API_KEY"):
        return "live mem0 infer test: ANTHROPIC_API_KEY is not set"
    host = urlparse(os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com").hostname or ""
    if host in ("localhost", "::1") or host.startswith("127."):
        return f"live mem0 infer test: ANTHROPIC_BASE_URL points at a loopback address ({host}), i.e. a fake"
    return None


@pytest.mark.slow
@pytest.mark.skipif(_live_skip_reason() is not None, reason=_live_skip_reason() or "")
def test_live_infer_round_trip():
    process = _start(**{k: os.environ.get(k) for k in VARS}, DRIFT_MEM0_INFER="true")  # the key as it is
    ns = f"drift-live-{uuid.uuid4().hex[:8]}"
    try:
        stub = process.stub
        stub.Reset(pb.ResetRequest(namespace=ns), timeout=60)
        replies = [stub.Store(pb.StoreRequest(namespace=ns, session=s), timeout=120) for s in SESSIONS]
        assert all(r.usage.llm_calls >= 1 for r in replies)
        hits = _retrieve(stub, ns, "Which city does Carla live in?", k=5)
        assert hits and all(list(h.source_ids) in (S1_IDS, S2_IDS) for h in hits)
        assert any(list(h.source_ids) == S1_IDS for h in hits)
        stub.Reset(pb.ResetRequest(namespace=ns), timeout=60)
    finally:
        process.stop()

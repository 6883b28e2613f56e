"""The graphiti adapter (graphiti-core on embedded Kuzu) end to end over gRPC, against a local
fake of the Anthropic Messages API.

The fake (``tests/adapters/fake_anthropic.py``) runs in this process on loopback and answers
graphiti's structured prompts with :func:`graphiti_responder`, a deterministic stand-in for
the model; the adapter is started through the runner's own entry point
(``conformance.backend.systems.open_system``) in its own virtualenv, with
``ANTHROPIC_API_KEY`` / ``ANTHROPIC_BASE_URL`` taken from ``os.environ`` (the launcher passes
exactly the variables adapter.yaml lists under ``env``). Skips when that virtualenv cannot
be built because no package index is reachable. ``test_live_graphiti_round_trip`` talks to
the real API only when ``ANTHROPIC_API_KEY`` is set and ``ANTHROPIC_BASE_URL`` is not a
loopback address.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlparse

import grpc
import pytest

from conformance.backend.manifest import load_manifest
from conformance.errors import DriftError
from conformance.paths import adapters_dir
from drift_sdk.v1 import memory_backend_pb2 as pb

sys.path.insert(0, str(Path(__file__).parent))
from adapter_harness import snapshot as _snapshot  # noqa: E402
from adapter_harness import scoped_env  # noqa: E402
from adapter_harness import SESSIONS, open_adapter, retrieve as _retrieve  # noqa: E402
from adapter_harness import message as _message  # noqa: E402
from fake_anthropic import FakeAnthropic, chosen_tool, schema_instance  # noqa: E402

ADAPTER = adapters_dir() / "graphiti"
VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "DRIFT_GRAPHITI_LLM_MODEL")
KEY = "sk-ant-test-canary"
MODEL = "claude-haiku-4-5-20251001"
MINILM = "sentence-transformers/all-MiniLM-L6-v2 (int8 ONNX)"

# -- a deterministic stand-in for the model ---------------------------------------------

#: Capitalised words that are not entities when they open a sentence.
_OPENERS = {"I", "I'm", "I've", "My", "We", "The", "A", "An", "It", "This", "That", "Great", "How", "What",
            "Remember", "Reminder", "Congratulations", "Beagles", "He", "She", "They", "You", "Our"}
#: A lower-case word after one of these is taken as an entity ("the brakutel").
_DETERMINERS = {"the", "a", "an"}
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


def _section(text: str, *tags: str) -> str:
    for tag in tags:
        match = re.search(rf"<{re.escape(tag)}>\s*(.*?)\s*</{re.escape(tag)}>", text, re.S)
        if match:
            return match.group(1)
    raise ValueError(f"prompt has none of the sections {tags}")


def _user_text(request: dict) -> str:
    return "\n".join(m["content"] if isinstance(m["content"], str) else
                     "\n".join(b.get("text", "") for b in m["content"]) for m in request["messages"])


def _lines(message_block: str) -> list[tuple[str, str]]:
    """``speaker: body`` lines of a CURRENT MESSAGE block."""
    out = []
    for line in message_block.splitlines():
        speaker, sep, body = line.partition(": ")
        if sep and speaker.strip():
            out.append((speaker.strip(), body.strip()))
    return out


def _candidates(sentence: str) -> list[str]:
    words = _WORD.findall(sentence)
    found = []
    for i, word in enumerate(words):
        if word[0].isupper() and not (i == 0 and word in _OPENERS) and word not in _OPENERS:
            found.append(word.rstrip("'s") if word.endswith("'s") else word)
        elif i > 0 and words[i - 1].lower() in _DETERMINERS and word.islower() and len(word) > 3:
            found.append(word)
    return found


def _sentences(body: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", body) if s.strip()]


def _position(sentence: str, name: str) -> int:
    match = re.search(rf"\b{re.escape(name)}\b", sentence, re.I)
    return match.start() if match else -1


def graphiti_responder(request: dict):
    """Answers graphiti 0.31's prompts by the tool they force (``tool_choice``):

    * ``ExtractedEntities``: each speaker, each capitalised word that does not open a sentence
      (or is not a pronoun/opener), and each lower-case word after a determiner ("the brakutel").
    * ``ExtractedEdges``: per sentence, one fact between the first two listed entities found in
      ``"<speaker> <sentence>"`` (so the speaker and the first thing named); the fact is
      ``"<speaker> said: <sentence>"``.
    * ``NodeResolutions``: a new entity is a duplicate of the existing one of the same name.
    * anything else (edge de-duplication, timestamps, summaries, attributes): the minimal
      schema-valid input (:func:`schema_instance`): no duplicates, no dates, empty summaries.
    """
    tool = chosen_tool(request)
    if tool is None:
        return "ok"
    name, text = tool["name"], _user_text(request)
    if name == "ExtractedEntities":
        names: list[str] = []
        for speaker, body in _lines(_section(text, "CURRENT MESSAGE", "CURRENT_MESSAGE")):
            for entity in [speaker] + _candidates(body):
                if entity.lower() not in {n.lower() for n in names}:
                    names.append(entity)
        return {"extracted_entities": [{"name": n, "entity_type_id": 0, "episode_indices": [0]} for n in names]}
    if name == "ExtractedEdges":
        entities = [e["name"] for e in json.loads(_section(text, "ENTITIES"))]
        edges = []
        for speaker, body in _lines(_section(text, "CURRENT_MESSAGE", "CURRENT MESSAGE")):
            for sentence in _sentences(body):
                said = f"{speaker} {sentence}"
                present = sorted((p, e) for e in entities if (p := _position(said, e)) >= 0)
                distinct = []
                for _, e in present:
                    if e not in distinct:
                        distinct.append(e)
                if len(distinct) >= 2:
                    edges.append({"source_entity_name": distinct[0], "target_entity_name": distinct[1],
                                  "relation_type": "MENTIONED", "fact": f"{speaker} said: {sentence}",
                                  "valid_at": None, "invalid_at": None, "episode_indices": [0]})
        return {"edges": edges}
    if name == "NodeResolutions":
        extracted = json.loads(_section(text, "ENTITIES", "NEW ENTITIES", "EXTRACTED ENTITIES"))
        existing = json.loads(_section(text, "EXISTING ENTITIES"))
        by_name = {e.get("name", "").lower(): e.get("candidate_id", e.get("idx", -1)) for e in existing}
        return {"entity_resolutions": [{"id": e.get("id", i), "name": e.get("name", ""),
                                        "duplicate_candidate_id": by_name.get(e.get("name", "").lower(), -1)}
                                       for i, e in enumerate(extracted)]}
    return schema_instance(tool["input_schema"])


# -- fixtures --------------------------------------------------------------------------


def _env(**values):
    """Set (value) or remove (None) the adapter's variables for the duration; restore after."""
    return scoped_env(VARS, **values)


@pytest.fixture(scope="module")
def fake():
    with FakeAnthropic(graphiti_responder, api_key=KEY) as server:
        yield server


@pytest.fixture(scope="module")
def system(fake):
    with _env(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=fake.url):
        opened = open_adapter("graphiti")
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def stub(system):
    return system.client.stub


S1_IDS = [m.message_id for m in SESSIONS[0].messages]
S2_IDS = [m.message_id for m in SESSIONS[1].messages]
ALL_IDS = S1_IDS + S2_IDS


def _store(stub, ns, sessions=SESSIONS):
    stub.Reset(pb.ResetRequest(namespace=ns), timeout=60)
    replies = [stub.Store(pb.StoreRequest(namespace=ns, session=s), timeout=120) for s in sessions]
    assert stub.Flush(pb.FlushRequest(namespace=ns, timeout_s=30), timeout=60).ready is True
    return replies


# -- tests -----------------------------------------------------------------------------


def test_manifest_validates_against_the_launcher_schema():
    manifest = load_manifest(ADAPTER)
    assert manifest.name == "graphiti" and manifest.kind == "system" and manifest.entry == "adapter.py"
    assert manifest.verified == "fake-service" and manifest.check_skips == {}
    assert sorted(manifest.env) == sorted(VARS)
    reqs = (ADAPTER / "requirements.txt").read_text().splitlines()
    pins = [line for line in reqs if line.strip() and not line.startswith("#")]
    assert "graphiti-core[kuzu]==0.31.2" in pins and all("==" in line for line in pins), "every requirement is pinned"


def test_responder_answers_graphitis_prompts_deterministically():
    entities = {"system": "x", "messages": [{"role": "user", "content": (
        "<CURRENT MESSAGE>\nalice: My sister Carla moved to Lisbon to work as a nurse.\n"
        "bob: I left the brakutel next to the zoumivax.\n</CURRENT MESSAGE>")}],
        "tools": [{"name": "ExtractedEntities", "input_schema": {"type": "object"}}],
        "tool_choice": {"type": "tool", "name": "ExtractedEntities"}}
    names = [e["name"] for e in graphiti_responder(entities)["extracted_entities"]]
    assert names == ["alice", "Carla", "Lisbon", "nurse", "bob", "brakutel", "zoumivax"]
    edges = {"system": "x", "messages": [{"role": "user", "content": (
        "<CURRENT_MESSAGE>\nalice: My sister Carla moved to Lisbon. Nice.\n</CURRENT_MESSAGE>\n"
        '<ENTITIES>\n[{"name": "Lisbon"}, {"name": "alice"}, {"name": "Carla"}]\n</ENTITIES>')}],
        "tools": [{"name": "ExtractedEdges", "input_schema": {"type": "object"}}],
        "tool_choice": {"type": "tool", "name": "ExtractedEdges"}}
    (edge,) = graphiti_responder(edges)["edges"]
    assert (edge["source_entity_name"], edge["target_entity_name"]) == ("alice", "Carla")
    assert edge["fact"] == "alice said: My sister Carla moved to Lisbon."
    assert graphiti_responder(edges) == graphiti_responder(edges)


@pytest.mark.slow
def test_describe_through_the_runner(system, fake):
    d = system.describe
    assert d["name"] == "graphiti" and d["version"] == "0.1 (graphiti-core 0.31.2)"
    caps = d["capabilities"]
    assert caps["provenance"] and caps["snapshot"] and caps["flush_signal"]
    assert not caps["forget"] and not caps["deterministic"] and not caps["scopes"] and not caps["time_aware"]
    assert d["internal_models"] == [MODEL, MINILM]
    assert d["settings"]["llm_base_url"] == fake.url and "session-granular" in d["settings"]["provenance"]
    assert KEY not in json.dumps(d)  # the key never reaches the receipt
    assert system.isolation["mode"] == "process" and system.isolation["verified"] == "fake-service"


@pytest.mark.slow
def test_store_builds_facts_and_retrieve_cites_the_session(stub, fake):
    calls_before, usage_before = len(fake.requests), dict(fake.usage)
    started = time.monotonic()
    replies = _store(stub, "run-a")
    per_session_s = (time.monotonic() - started) / len(SESSIONS)
    assert per_session_s < 30, per_session_s
    # every LLM call graphiti made went to the fake, with the key, and Store reports the tokens
    calls = len(fake.requests) - calls_before
    assert calls >= 2 * len(SESSIONS) and not fake.errors
    assert sum(r.usage.llm_calls for r in replies) == calls
    assert sum(r.usage.input_tokens for r in replies) == fake.usage["input_tokens"] - usage_before["input_tokens"]
    assert sum(r.usage.output_tokens for r in replies) == fake.usage["output_tokens"] - usage_before["output_tokens"]
    assert all(r.items_stored >= 2 for r in replies)  # the episode and at least one fact
    assert {r["model"] for r in fake.requests} == {MODEL}

    hits = _retrieve(stub, "run-a", "Where did Carla move to work as a nurse?", k=3)
    assert hits and "Lisbon" in hits[0].text and "Carla" in hits[0].text
    assert list(hits[0].source_ids) == S1_IDS  # session-granular provenance
    assert hits[0].timestamp.startswith("2026-03-02")
    facts = [h for h in _retrieve(stub, "run-a", "Carla Lisbon nurse", k=10) if h.text.startswith("alice said:")]
    assert any(h.text == "alice said: My sister Carla moved to Lisbon to work as a nurse." for h in facts)
    marathon = _retrieve(stub, "run-a", "Which marathon is alice training for?", k=3)
    assert marathon and "Berlin" in marathon[0].text and list(marathon[0].source_ids) == S2_IDS
    for k in (1, 2, 5):
        assert 0 < len(_retrieve(stub, "run-a", "alice", k=k)) <= k
    for hit in _retrieve(stub, "run-a", "alice", k=10):
        assert hit.source_ids and set(hit.source_ids) <= set(ALL_IDS)


@pytest.mark.slow
def test_snapshot_lists_episodes_and_facts(stub):
    _store(stub, "run-s")
    items = _snapshot(stub, "run-s")
    episodes = [i for i in items if "\n" in i.text]
    assert len(episodes) == 2
    assert sorted(tuple(i.source_ids) for i in episodes) == [tuple(S1_IDS), tuple(S2_IDS)]
    assert episodes[0].text.splitlines()[0] == "alice: I just adopted a beagle puppy and named him Rufus."
    facts = [i for i in items if i.text.startswith(("alice said:", "agent said:"))]
    assert facts and all(set(i.source_ids) <= set(ALL_IDS) and i.source_ids for i in facts)
    assert len({i.item_id for i in items}) == len(items)


@pytest.mark.slow
def test_reset_empties_and_isolates(stub):
    _store(stub, "run-b")
    _store(stub, "run-c", [pb.Session(
        session_id="x1", index=0, time="2026-03-02T10:00:00Z", participants=["bob"],
        messages=[_message("x1-m1", "bob", "user", "Bob's cat Miso sleeps in Porto.", "2026-03-02T10:00:00Z")])])
    assert any("Miso" in h.text and list(h.source_ids) == ["x1-m1"] for h in _retrieve(stub, "run-c", "Miso", k=5))
    assert all("x1-m1" not in h.source_ids for h in _retrieve(stub, "run-b", "Miso Porto cat", k=10))
    stub.Reset(pb.ResetRequest(namespace="run-b"), timeout=60)
    assert _snapshot(stub, "run-b") == [] and _retrieve(stub, "run-b", "Carla Lisbon") == []
    assert {sid for i in _snapshot(stub, "run-c") for sid in i.source_ids} == {"x1-m1"}


@pytest.mark.slow
def test_rate_limits_and_overload_are_retried(stub, fake):
    stub.Reset(pb.ResetRequest(namespace="run-429"), timeout=60)
    fake.fail_next(2, 429)
    fake.fail_next(1, 529)
    reply = stub.Store(pb.StoreRequest(namespace="run-429", session=SESSIONS[0]), timeout=120)
    assert reply.items_stored >= 2
    assert list(_retrieve(stub, "run-429", "Where did Carla move?", k=1)[0].source_ids) == S1_IDS


@pytest.mark.slow
def test_bad_requests_and_unoffered_calls(stub):
    for call, request in (("Store", pb.StoreRequest(namespace="never-reset", session=SESSIONS[0])),
                          ("Retrieve", pb.RetrieveRequest(namespace="never-reset", query="x", k=3)),
                          ("Flush", pb.FlushRequest(namespace="never-reset", timeout_s=1)),
                          ("Retrieve", pb.RetrieveRequest(namespace="", query="x", k=3))):
        with pytest.raises(grpc.RpcError) as err:
            getattr(stub, call)(request, timeout=30)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, (call, err.value.details())
    stub.Reset(pb.ResetRequest(namespace="run-f"), timeout=30)
    with pytest.raises(grpc.RpcError) as err:
        stub.Forget(pb.ForgetRequest(namespace="run-f", source_ids=["s1-m1"]), timeout=30)
    assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED


@pytest.mark.slow
def test_contract_checks_pass(system):
    from conformance.backend.checks import ClientTarget, run_checks

    skips = load_manifest(ADAPTER).check_skips
    results = run_checks(ClientTarget(system.client, label="graphiti", died=system.died), skips=skips,
                         flush_timeout_s=30)
    table = {r.name: (r.result, r.detail) for r in results}
    assert all(result != "FAIL" for result, _ in table.values()), table
    assert table["deterministic"][0] == "SKIP" and table["provenance_ids"][0] == "PASS"
    assert table["flush_then_found"][0] == "PASS", table["flush_then_found"]


@pytest.mark.slow
def test_missing_key_is_a_clear_startup_error(fake):
    with _env(ANTHROPIC_API_KEY=None, ANTHROPIC_BASE_URL=fake.url):
        with pytest.raises(DriftError) as err:
            open_adapter("graphiti").close()
    assert "ANTHROPIC_API_KEY is not set" in str(err.value)


@pytest.mark.slow
def test_alias_model_is_refused(fake):
    with _env(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=fake.url, DRIFT_GRAPHITI_LLM_MODEL="claude-haiku-4-5"):
        with pytest.raises(DriftError) as err:
            open_adapter("graphiti").close()
    assert "not a dated Anthropic model id" in str(err.value)


@pytest.mark.slow
def test_wrong_key_surfaces_the_401(fake):
    with _env(ANTHROPIC_API_KEY="sk-ant-wrong", ANTHROPIC_BASE_URL=fake.url):
        opened = open_adapter("graphiti")
    try:
        stub = opened.client.stub
        stub.Reset(pb.ResetRequest(namespace="bad-key"), timeout=60)
        with pytest.raises(grpc.RpcError) as err:
            stub.Store(pb.StoreRequest(namespace="bad-key", session=SESSIONS[0]), timeout=120)
        assert err.value.code() == grpc.StatusCode.INTERNAL
        assert "401" in err.value.details() or "authentication" in err.value.details().lower()
    finally:
        opened.close()


def _live_skip_reason() -> str | None:
    if not os.environ.get("ANTHROPIC_API_KEY"):
        return "live graphiti test: ANTHROPIC_API_KEY is not set"
    host = urlparse(os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com").hostname or ""
    if host in ("localhost", "::1") or host.startswith("127."):
        return f"live graphiti test: ANTHROPIC_BASE_URL points at a loopback address ({host}), i.e. a fake"
    return None


@pytest.mark.slow
@pytest.mark.skipif(_live_skip_reason() is not None, reason=_live_skip_reason() or "")
def test_live_graphiti_round_trip():
    opened = open_adapter("graphiti")  # takes the variables from the environment as they are
    ns = f"drift-live-{uuid.uuid4().hex[:8]}"
    stub = opened.client.stub
    try:
        _store(stub, ns)
        hits = _retrieve(stub, ns, "Where did Carla move to work as a nurse?", k=5)
        assert hits and all(set(h.source_ids) <= set(ALL_IDS) for h in hits)
        assert any(set(S1_IDS) <= set(h.source_ids) for h in hits)
        stub.Reset(pb.ResetRequest(namespace=ns), timeout=60)
        assert _snapshot(stub, ns) == []
    finally:
        opened.close()

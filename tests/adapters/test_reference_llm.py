"""The reference compressor's LLM form (DRIFT §7.7: one LLM call per session), against the local
fake Messages API (tests/adapters/fake_anthropic.py): one call per session, the call's tokens in
Store's Usage, one session-granular item per session within 512 tokens, Describe naming the
model, a cached second run making no call, and the key never showing. The extractive default
is covered by test_reference_compressor.py (unchanged).

In process for the behaviour, plus runs through the real process launcher over gRPC (the
adapter's own virtualenv, which now holds ``anthropic``).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from conformance.backend.privilege import share_with_adapters

pytest.importorskip("bm25s", reason="bm25s is in the test extra: pip install -e '.[test]'")
pytest.importorskip("anthropic")

from drift_sdk.tokens import count_tokens  # noqa: E402
from drift_sdk.types import Message, Session  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from fake_anthropic import FakeAnthropic, count_tokens as fake_tokens  # noqa: E402

FOLDER = Path(__file__).resolve().parents[2] / "adapters" / "reference-compressor"
KEY = "sk-ant-refllm-canary-5c1e9a77d3"
MODEL = "claude-haiku-4-5-20251001"
VARS = ("DRIFT_REFERENCE_LLM_MODEL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "DRIFT_REFERENCE_LLM_CACHE",
        "DRIFT_REFERENCE_LLM_BUDGET_USD")
_LINE = re.compile(r"^([\w-]+): (.*)$")


def summarise(request: dict) -> str:
    """A stand-in model: keeps each speaker's sentences that hold a capitalised word past the first."""
    content = request["messages"][0]["content"]
    kept = []
    for line in content.split("\n\n", 1)[1].splitlines():
        m = _LINE.match(line)
        if m and re.search(r"\s[A-Z]", m.group(2)):
            kept.append(f"{m.group(1)} said: {m.group(2)}")
    return " ".join(kept) or "Nothing worth keeping."


def module():
    spec = importlib.util.spec_from_file_location("reference_compressor_llm_adapter", FOLDER / "adapter.py")
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = loaded
    spec.loader.exec_module(loaded)
    return loaded


def session(i: int, *turns) -> Session:
    t = f"2026-01-{i + 1:02d}T09:00:00Z"
    messages = tuple(Message(f"s{i}-m{j}", author, "user" if author == "alice" else "assistant", text, t)
                     for j, (author, text) in enumerate(turns))
    return Session(f"s{i}", i, t, ("alice", "agent"), messages)


SESSIONS = [
    session(0, ("alice", "I adopted a beagle named Rufus."), ("agent", "ok great"),
            ("alice", "My sister Carla moved to Lisbon to work as a nurse.")),
    session(1, ("alice", "thanks!"), ("agent", "I booked the table at Osteria Francescana for Friday.")),
]


@pytest.fixture()
def fake():
    with FakeAnthropic(summarise, api_key=KEY) as server:
        yield server


def _env(fake, tmp_path, **extra) -> dict:
    return {"DRIFT_REFERENCE_LLM_MODEL": MODEL, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake.url,
            "DRIFT_REFERENCE_LLM_CACHE": str(share_with_adapters(tmp_path / "llm-cache")), **extra}


def _backend(environ):
    backend = module().ReferenceCompressorBackend(environ=environ)
    backend.reset("n")
    return backend


# -- in process --------------------------------------------------------------------------


def test_one_call_per_session_usage_and_session_granular_items(fake, tmp_path):
    b = _backend(_env(fake, tmp_path))
    results = [b.store("n", s) for s in SESSIONS]
    assert len(fake.requests) == 2  # one call per session
    for s, result, body in zip(SESSIONS, results, fake.requests):
        assert result.items_stored == 1
        assert result.usage.llm_calls == 1
        assert result.usage.input_tokens == fake_tokens([body["system"], body["messages"], []]) > 0
        assert result.usage.output_tokens == fake_tokens(summarise(body)) > 0
        assert body["model"] == MODEL and body["temperature"] == 0
        assert body["max_tokens"] == sys.modules[type(b).__module__].LLM_MAX_TOKENS
        assert body["system"] == sys.modules[type(b).__module__].LLM_SYSTEM
        text = body["messages"][0]["content"]
        assert all(f"{m.author}: {m.text}" in text for m in s.messages)  # speakers kept in what it reads
    items = b.snapshot("n")
    assert [i.item_id for i in items] == ["s0", "s1"]
    assert [i.source_ids for i in items] == [("s0-m0", "s0-m1", "s0-m2"), ("s1-m0", "s1-m1")]
    assert items[0].text.startswith("[2026-01-01] alice said: I adopted a beagle named Rufus.")
    assert "ok great" not in items[0].text and all(count_tokens(i.text) <= 512 for i in items)
    b.flush("n", 1)
    [hit] = b.retrieve("n", "Where does Carla live?", 3, "alice", "")
    assert "Lisbon" in hit.text and hit.source_ids == ("s0-m0", "s0-m1", "s0-m2")
    assert len(fake.requests) == 2  # no call at retrieval


def test_describe_names_the_model_and_session_granular_provenance(fake, tmp_path):
    b = _backend(_env(fake, tmp_path))
    assert b.internal_models == (MODEL,) and MODEL in b.version and b.version.startswith("1 llm")
    settings = b.settings()
    assert settings["form"].startswith("llm: one Messages API call per session") and settings["model"] == MODEL
    assert "session-granular" in settings["provenance"]
    caps = b.capabilities
    assert caps.provenance and caps.snapshot and caps.flush_signal and not caps.forget and not caps.deterministic
    with pytest.raises(NotImplementedError):
        b.forget("n", ["s0-m0"])
    assert KEY not in repr(settings) + b.version


def test_a_long_answer_is_cut_to_512_tokens(tmp_path):
    essay = " ".join(f"Fact {i}: alice keeps spare key number {i} under the blue pot in Lisbon." for i in range(400))
    with FakeAnthropic(lambda request: essay, api_key=KEY) as fake:
        b = _backend(_env(fake, tmp_path))
        result = b.store("n", SESSIONS[0])
    [item] = b.snapshot("n")
    assert result.items_stored == 1 and result.usage.output_tokens == fake_tokens(essay)
    assert 500 <= count_tokens(item.text) <= 512
    assert item.text.startswith("[2026-01-01] Fact 0: alice keeps") and essay.startswith(item.text[13:])


def test_a_cached_second_run_makes_no_call_and_reports_the_same_usage(fake, tmp_path):
    first = _backend(_env(fake, tmp_path))
    used = [first.store("n", s).usage for s in SESSIONS]
    second = _backend(_env(fake, tmp_path, DRIFT_REFERENCE_LLM_BUDGET_USD="0"))  # may not spend anything
    again = [second.store("n", s).usage for s in SESSIONS]
    assert len(fake.requests) == 2 and again == used
    assert [i.text for i in second.snapshot("n")] == [i.text for i in first.snapshot("n")]


def test_a_key_alone_keeps_the_extractive_form_and_a_model_alone_is_refused(fake, tmp_path):
    m = module()
    b = m.ReferenceCompressorBackend(environ={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake.url})
    b.reset("n")
    result = b.store("n", SESSIONS[0])
    assert result.usage.llm_calls == 0 and fake.requests == [] and b.internal_models == ()
    assert b.settings()["form"].startswith("extractive") and b.capabilities.deterministic
    with pytest.raises(m.ConfigError, match="needs ANTHROPIC_API_KEY"):
        m.ReferenceCompressorBackend(environ={"DRIFT_REFERENCE_LLM_MODEL": MODEL})
    from drift_sdk.llm.errors import LLMConfigError

    with pytest.raises(LLMConfigError, match="alias"):
        m.ReferenceCompressorBackend(environ=_env(fake, tmp_path, DRIFT_REFERENCE_LLM_MODEL="claude-haiku-4-5"))


def test_a_spent_budget_fails_store_with_a_clear_message(fake, tmp_path):
    from drift_sdk.llm.errors import BudgetSpent

    b = _backend(_env(fake, tmp_path, DRIFT_REFERENCE_LLM_BUDGET_USD="0"))
    with pytest.raises(BudgetSpent, match="budget"):
        b.store("n", SESSIONS[0])
    assert fake.requests == []


# -- through the process launcher ------------------------------------------------------------


def _start(env: dict):
    from conformance.backend.manifest import load_manifest
    from conformance.backend.process import ProcessAdapter
    from conformance.backend.venvs import VenvError, looks_offline

    sys.path.insert(0, str(Path(__file__).parent))
    from adapter_harness import scoped_env

    process = ProcessAdapter(FOLDER, load_manifest(FOLDER))
    try:
        with scoped_env(VARS, **env):
            process.start()
    except VenvError as exc:
        if looks_offline(str(exc)):
            pytest.skip(f"reference-compressor venv cannot be built: no package index reachable\n{exc}")
        raise
    return process


@pytest.mark.slow
def test_llm_form_over_grpc_with_a_cached_rerun_and_no_key_in_sight(fake, tmp_path):
    from conformance.backend.client import session_to_proto
    from drift_sdk.v1 import memory_backend_pb2 as pb

    def run() -> tuple[list, list, str, str]:
        process = _start(_env(fake, tmp_path))
        log = ""
        try:
            stub = process.client.stub
            describe = stub.Describe(pb.DescribeRequest(), timeout=30)
            stub.Reset(pb.ResetRequest(namespace="a"), timeout=30)
            stored = [stub.Store(pb.StoreRequest(namespace="a", session=session_to_proto(s)), timeout=60)
                      for s in SESSIONS]
            assert stub.Flush(pb.FlushRequest(namespace="a", timeout_s=10), timeout=30).ready
            items = list(stub.Snapshot(pb.SnapshotRequest(namespace="a"), timeout=30))
            hits = stub.Retrieve(pb.RetrieveRequest(namespace="a", query="beagle Rufus", k=2, querying_entity="alice",
                                                    now="2026-01-05T00:00:00Z"), timeout=30).hits
            assert "Rufus" in hits[0].text
        finally:
            log = process.stderr_path.read_text() if process.workdir else ""
            process.stop()
        return stored, items, str(describe), log

    stored, items, describe, log = run()
    assert len(fake.requests) == 2
    assert [(s.items_stored, s.usage.llm_calls) for s in stored] == [(1, 1), (1, 1)]
    assert all(s.usage.input_tokens > 0 and s.usage.output_tokens > 0 for s in stored)
    assert [list(i.source_ids) for i in items] == [["s0-m0", "s0-m1", "s0-m2"], ["s1-m0", "s1-m1"]]
    assert f'internal_models: "{MODEL}"' in describe and "session-granular" in describe
    assert f"LLM form, {MODEL}" in log
    # A second adapter process with the same cache folder: no call, same usage and items.
    stored2, items2, _, log2 = run()
    assert len(fake.requests) == 2
    assert [s.usage for s in stored2] == [s.usage for s in stored] and items2 == items
    assert KEY not in describe + log + log2


@pytest.mark.slow
def test_the_model_variable_without_a_key_stops_the_adapter_with_a_clear_message(tmp_path):
    from conformance.backend.process import AdapterStartError

    with pytest.raises(AdapterStartError, match="needs ANTHROPIC_API_KEY"):
        _start({"DRIFT_REFERENCE_LLM_MODEL": MODEL})


@pytest.mark.slow
def test_a_run_with_the_llm_reference_reports_its_form_and_its_tokens(fake, tmp_path):
    from adapter_harness import scoped_env

    from conformance.runner.job import run_job
    from conformance.contract.corpus import Selection

    repo = FOLDER.parents[1]
    with scoped_env(VARS, **_env(fake, tmp_path)):
        doc = run_job(["keyword"], repo / "fixtures", repo / "gold", selection=Selection(patterns=("ua-short-002",)),
                      records_dir=tmp_path / "runs", n_boot=200)
    sessions = sum(1 for line in (repo / "fixtures" / "ua-short-002.jsonl").read_text().splitlines()
                   if '"kind":"session"' in line)
    used = doc.spend["systems"]["reference-compressor"]
    assert used["llm_calls"] == sessions == len(fake.requests) and used["input_tokens"] > 0
    assert "keyword" not in doc.spend["systems"] and doc.spend.get("answer") is None
    notes = " ".join(doc.receipt.notes)
    assert "runs in its LLM form" in notes and "is extractive" not in notes and MODEL in notes
    assert KEY not in doc.model_dump_json()

"""The LLM transcript synthesizer (conformance/world/llm_synthesis.py) against the local fake
Messages API: answers that keep the synthesis contract are used and the corpus validates;
answers that break it fall back to the template (counted, by reason); a regeneration from the
response cache makes no call and writes the same bytes; a spent budget stops `generate`
before anything is written. Hermetic: loopback only, no real key."""

from __future__ import annotations

import dataclasses
import json
import random
import re
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "adapters"))
from fake_anthropic import FakeAnthropic  # noqa: E402

from conformance.answer.answerable import check_corpus  # noqa: E402
from conformance.contract.corpus import read_gold, validate_corpus  # noqa: E402
from drift_sdk.llm import AnthropicClient, Budget, BudgetSpent  # noqa: E402
from conformance.world import llm_synthesis as L  # noqa: E402
from conformance.world.entities.base import Attr  # noqa: E402
from conformance.world.entities.team import DECISIONS  # noqa: E402
from conformance.world.generator import generate_corpus  # noqa: E402
from conformance.world.synthesis import EventPlan, SessionContext, Turn  # noqa: E402

pytest.importorskip("anthropic")

REPO = Path(__file__).resolve().parents[2]
KEY = "sk-ant-synth-canary-3b9d"
MODEL = "claude-haiku-4-5-20251001"
#: Small scenarios of three paradigms (multi-peer: private notes, team decisions, canaries).
SCENARIOS = ("ua-short-003", "mp-short-001", "crw-short-002")
_OUTLINE = re.compile(r"^(\d+)\. (\S+?)( \[private note\])?: (.*)$")


def outline(request: dict) -> list[dict]:
    """The outline turns of a synthesis prompt."""
    turns = []
    for line in request["messages"][0]["content"].splitlines():
        m = _OUTLINE.match(line)
        if m:
            turns.append({"author": m.group(2), "text": m.group(4), "private": bool(m.group(3))})
    return turns


def never(request: dict) -> list[str]:
    """The prompt's "Never write" values."""
    for line in request["messages"][0]["content"].splitlines():
        if line.startswith("Never write: "):
            return line[len("Never write: "):].rstrip(".").split("; ")
    return []


def rewriting(request: dict) -> str:
    """A well-behaved model: an extra greeting first, then the outline with every turn reworded
    a little (values untouched)."""
    turns = outline(request)
    first = turns[0]["author"]
    out = [{"author": first, "text": "Hello again, picking up where we left off.", "private": False}]
    out += [dict(t, text=f"{t['text']} (as I would put it)") for t in turns]
    return "```json\n" + json.dumps({"turns": out}) + "\n```"


def breaking(request: dict) -> str:
    """A model that breaks the contract in every session: it drops the event's value (replacing
    whatever the outline quoted) and adds a forbidden distractor value."""
    turns = outline(request)
    content = request["messages"][0]["content"]
    quoted = re.findall(r"'([^']+)' \(verbatim\)|the phrase '([^']+)'", content)
    for value in (v for pair in quoted for v in pair if v):
        for t in turns:
            t["text"] = re.sub(re.escape(value), "that thing", t["text"], flags=re.IGNORECASE)
    turns.append({"author": turns[0]["author"], "text": f"By the way, {never(request)[0]} is great.",
                  "private": False})
    return json.dumps({"turns": turns})


@pytest.fixture()
def scenarios(tmp_path) -> Path:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    for name in SCENARIOS:
        shutil.copy(REPO / "scenarios" / f"{name}.yaml", folder)
    return folder


def _client(fake, cache, budget=None) -> AnthropicClient:
    return AnthropicClient(MODEL, cache=cache, budget=Budget(budget),
                           environ={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake.url}, backoff_s=0.001)


def _generate(out: Path, scenarios: Path, synthesizer=None) -> list[str]:
    return generate_corpus(out / "fixtures", out / "gold", scenarios, seed=42, synthesizer=synthesizer)


def _bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _texts(folder: Path) -> list[str]:
    return [m["text"] for f in sorted((folder / "fixtures").glob("*.jsonl"))
            for line in f.read_text().splitlines() if (d := json.loads(line))["kind"] == "session"
            for m in d["messages"]]


# -- a model that keeps the contract -------------------------------------------------------


def test_valid_answers_are_used_and_the_corpus_validates(tmp_path, scenarios):
    with FakeAnthropic(rewriting, api_key=KEY) as fake:
        synth = L.LLMSynthesizer(_client(fake, tmp_path / "cache"))
        ids = _generate(tmp_path / "llm", scenarios, synth)
        requests = len(fake.requests)
    s = synth.stats
    assert sorted(ids) == sorted(SCENARIOS)
    assert s.fallbacks == 0 and dict(s.reasons) == {}, s.examples
    assert s.calls == requests == s.sessions - s.replayed > 50 and s.cached == 0
    assert s.cost_usd > 0 and s.served_models == {MODEL}
    # What `drift-conformance validate` checks: structure, joins, markers, every probe answerable.
    out = tmp_path / "llm"
    assert validate_corpus(out / "fixtures", out / "gold") == sorted(SCENARIOS)
    assert check_corpus(out / "fixtures", out / "gold") == []
    texts = _texts(out)
    assert sum("(as I would put it)" in t for t in texts) > 100
    assert sum(t.startswith("Hello again, picking up where we left off.") for t in texts) == s.sessions
    # Every request: fixed system prompt, temperature 0, the token cap.
    body = fake.requests[0]
    assert body["system"] == L.SYSTEM and body["temperature"] == 0 and body["max_tokens"] == L.MAX_TOKENS


def test_the_model_moves_no_random_choice(tmp_path, scenarios):
    """The template runs first on the generator's rng, so an LLM corpus has the template corpus's
    world, events and probes (with other message ids: the model added a turn per session)."""
    _generate(tmp_path / "template", scenarios)
    with FakeAnthropic(rewriting, api_key=KEY) as fake:
        _generate(tmp_path / "llm", scenarios, L.LLMSynthesizer(_client(fake, tmp_path / "cache")))
    for name in SCENARIOS:
        a, b = (read_gold(tmp_path / kind / "gold" / f"{name}.json") for kind in ("template", "llm"))
        assert a.profiles == b.profiles and a.session_tiers == b.session_tiers and a.snapshots == b.snapshots
        assert [(e.kind, e.entity, e.attribute, e.old, e.new) for e in a.events] == \
               [(e.kind, e.entity, e.attribute, e.old, e.new) for e in b.events]
        assert [(p.probe_type, p.entity, p.attribute, p.answer) for p in a.probes] == \
               [(p.probe_type, p.entity, p.attribute, p.answer) for p in b.probes]


# -- a model that breaks it ------------------------------------------------------------------


def test_contract_breaking_answers_fall_back_to_the_template_and_are_counted(tmp_path, scenarios):
    _generate(tmp_path / "template", scenarios)
    with FakeAnthropic(breaking, api_key=KEY) as fake:
        synth = L.LLMSynthesizer(_client(fake, tmp_path / "cache"))
        _generate(tmp_path / "llm", scenarios, synth)
    s = synth.stats
    assert s.fallbacks == s.sessions > 50 and s.calls == len(fake.requests)
    # The added value is a distractor in most sessions, or (a value of the event's own attribute) makes
    # that turn a second statement; where the event's value was dropped, nothing states it.
    assert sum(s.reasons.values()) == s.fallbacks and s.reasons["distractor value"] > s.sessions / 2
    assert set(s.reasons) <= {"distractor value", "value missing", "value repeated", "wrong speaker",
                              "value not last", "other value", "private note"}, s.reasons
    assert len(s.examples) == 20 and all(":" in e for e in s.examples)
    # Every session fell back: the corpus is the template corpus, byte for byte.
    assert _bytes(tmp_path / "llm") == _bytes(tmp_path / "template")


# -- cache and budget ------------------------------------------------------------------------


def test_a_regeneration_from_the_cache_makes_no_call_and_is_byte_identical(tmp_path, scenarios):
    with FakeAnthropic(rewriting, api_key=KEY) as fake:
        first = L.LLMSynthesizer(_client(fake, tmp_path / "cache"))
        _generate(tmp_path / "one", scenarios, first)
        made = len(fake.requests)
        second = L.LLMSynthesizer(_client(fake, tmp_path / "cache", budget=0))  # may not spend a cent
        _generate(tmp_path / "two", scenarios, second)
        assert len(fake.requests) == made  # zero new calls
    assert _bytes(tmp_path / "one") == _bytes(tmp_path / "two")
    assert second.stats.calls == 0 and second.stats.cached == first.stats.calls and second.stats.cost_usd == 0
    assert second.stats.ledger_record() == first.stats.ledger_record()


def test_a_spent_budget_raises_budget_spent(tmp_path, scenarios):
    with FakeAnthropic(rewriting, api_key=KEY) as fake:
        synth = L.LLMSynthesizer(_client(fake, tmp_path / "cache", budget="0.01"))
        with pytest.raises(BudgetSpent, match="budget of \\$0.01 USD is used up"):
            _generate(tmp_path / "llm", scenarios, synth)
        assert 0 < len(fake.requests) < 20


# -- the CLI ---------------------------------------------------------------------------------


@pytest.fixture()
def cli_env(tmp_path, scenarios, monkeypatch):
    """`generate` sees only the small scenario set, the fake's address and the canary key."""
    from conformance import paths

    root = tmp_path / "data"
    root.mkdir()
    shutil.copytree(scenarios, root / "scenarios")
    monkeypatch.setattr(paths, "data_root", lambda: root)
    monkeypatch.setenv("DRIFT_CACHE_DIR", str(tmp_path / "drift-cache"))
    with FakeAnthropic(rewriting, api_key=KEY) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        yield fake


def _cli(*args):
    from conformance.cli import main

    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _llm_args(out: Path, *extra: str) -> list[str]:
    return ["generate", "--fixtures", str(out / "fixtures"), "--gold", str(out / "gold"), "--synthesizer", "llm",
            "--synth-model", MODEL, *extra]


def test_generate_with_the_llm_records_it_and_regenerates_for_free(tmp_path, cli_env):
    fake = cli_env
    out = tmp_path / "corpus"
    result = _cli(*_llm_args(out, "--budget-usd", "5"))
    assert result.exit_code == 0, result.output
    assert "template fallbacks" in result.output and f"LLM synthesis with {MODEL}" in result.output
    made = len(fake.requests)
    assert made > 50  # each session asked once: the second pass into the target answered from memory
    ledger = json.loads((out / "fixtures" / "_ledger.json").read_text())
    assert ledger["corpus_version"].endswith(f"+llm.{MODEL}")
    assert ledger["synthesizer"]["name"] == "llm" and ledger["synthesizer"]["model"] == MODEL
    assert ledger["synthesizer"]["prompt"] == L.PROMPT_VERSION and ledger["synthesizer"]["fallbacks"] == 0
    assert "--synthesizer llm" in ledger["rebuild"] and "--budget-usd 0" in ledger["rebuild"]
    assert (tmp_path / "drift-cache" / "llm").is_dir()  # the default cache folder
    assert _cli("validate", "--fixtures", str(out / "fixtures"), "--gold", str(out / "gold")).exit_code == 0
    before = _bytes(out)
    # The ledger's rebuild command: no budget at all, answers from the cache, same bytes.
    again = _cli(*_llm_args(out, "--budget-usd", "0"))
    assert again.exit_code == 0, again.output
    assert len(fake.requests) == made and _bytes(out) == before
    assert KEY not in result.output + again.output


def test_generate_stops_on_a_spent_budget_and_writes_nothing(tmp_path, cli_env):
    out = tmp_path / "corpus"
    result = _cli(*_llm_args(out, "--budget-usd", "0.01"))
    assert result.exit_code == 2
    assert "budget" in result.stderr and "nothing was written" in result.stderr and "Traceback" not in result.stderr
    assert not out.exists()
    # An earlier corpus in the target stays as it was.
    assert _cli(*_llm_args(out, "--budget-usd", "5")).exit_code == 0
    before = _bytes(out)
    shutil.rmtree(tmp_path / "drift-cache" / "llm")  # cold cache: the next run has to pay again
    assert _cli(*_llm_args(out, "--budget-usd", "0.01")).exit_code == 2
    assert _bytes(out) == before


@pytest.mark.parametrize("args, needle", [
    (["generate", "--check", "--synthesizer", "llm", "--synth-model", MODEL, "--budget-usd", "1"],
     "does not combine with --synthesizer llm"),
    (["generate", "--synthesizer", "llm", "--synth-model", MODEL, "--budget-usd", "1"], "--fixtures DIR --gold DIR"),
    (["generate", "--fixtures", "f", "--gold", "g", "--synthesizer", "llm", "--synth-model", MODEL], "--budget-usd"),
    (["generate", "--fixtures", "f", "--gold", "g", "--synthesizer", "llm", "--budget-usd", "1"], "--synth-model"),
    (["generate", "--fixtures", "f", "--gold", "g", "--synth-model", MODEL], "go with --synthesizer llm"),
    (["generate", "--fixtures", "f", "--gold", "g", "--synthesizer", "llm", "--synth-model", "claude-haiku-4-5",
      "--budget-usd", "1"], "alias"),
])
def test_generate_refuses_bad_llm_options(tmp_path, cli_env, args, needle, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = _cli(*args)
    assert result.exit_code == 2 and needle in result.stderr, result.stderr
    assert cli_env.requests == [] and not (tmp_path / "f").exists()


def test_generate_without_a_key_is_a_clear_error(tmp_path, cli_env, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    result = _cli(*_llm_args(tmp_path / "corpus", "--budget-usd", "1"))
    assert result.exit_code == 2 and "ANTHROPIC_API_KEY is not set" in result.stderr
    assert "LLM transcript synthesizer" in result.stderr and "--answer-model" not in result.stderr



def test_generate_refuses_a_corpus_the_llm_contributed_nothing_to(tmp_path, cli_env):
    """Every answer falls back: the corpus would be the template corpus under an LLM label, so
    nothing is written (and an earlier corpus in the target stays as it was)."""
    fake = cli_env
    out = tmp_path / "corpus"
    fake.responder = lambda request: "Sorry, I would rather not write that."
    result = _cli(*_llm_args(out, "--budget-usd", "5"))
    assert result.exit_code == 2, result.output
    stderr = " ".join(result.stderr.split())
    found = re.search(r"the LLM synthesizer contributed no transcript: all (\d+) sessions fell back to the template "
                      r"\(reasons: not JSON (\d+);", stderr)
    assert found and found.group(1) == found.group(2) and int(found.group(1)) > 50, stderr
    assert "nothing was written" in stderr and "check the model" in stderr and "Traceback" not in stderr
    assert not out.exists() and len(fake.requests) > 50
    # An earlier LLM corpus in the target is left alone (each run with a cache of its own: the
    # default one holds the refused answers).
    fake.responder = rewriting
    assert _cli(*_llm_args(tmp_path / "other", "--budget-usd", "5", "--llm-cache",
                           str(tmp_path / "good"))).exit_code == 0
    before = _bytes(tmp_path / "other")
    fake.responder = lambda request: "no JSON here either"
    assert _cli(*_llm_args(tmp_path / "other", "--budget-usd", "5", "--llm-cache",
                           str(tmp_path / "cold"))).exit_code == 2
    assert _bytes(tmp_path / "other") == before


def test_generate_warns_with_the_fallback_share_when_some_sessions_fall_back(tmp_path, cli_env):
    fake = cli_env
    fake.responder = lambda request: ("not JSON" if "Event: none." in request["messages"][0]["content"]
                                      else rewriting(request))
    out = tmp_path / "corpus"
    result = _cli(*_llm_args(out, "--budget-usd", "5"))
    assert result.exit_code == 0, result.output
    synth = json.loads((out / "fixtures" / "_ledger.json").read_text())["synthesizer"]
    n, total = synth["fallbacks"], synth["sessions"]
    assert 0 < n < total and synth["fallback_reasons"] == {"not JSON": n}
    warning = " ".join(result.stderr.split())
    assert f"warning: {n} of {total} sessions ({n / total:.1%}) fell back to the template's turns " \
           f"(reasons: not JSON {n}); only {total - n} carry the model's transcript" in warning, warning
    # Without fallbacks, no warning.
    fake.responder = rewriting
    clean = _cli(*_llm_args(tmp_path / "clean", "--budget-usd", "5", "--llm-cache", str(tmp_path / "clean-cache")))
    assert clean.exit_code == 0 and "warning" not in clean.stderr


def test_the_ledgers_rebuild_command_names_the_cache_and_replays_it_for_free(tmp_path, cli_env):
    """With a non-default --llm-cache the ledger's rebuild command carries it: run as written
    (parsed), it makes no call and writes the same bytes."""
    import shlex

    fake = cli_env
    cache = tmp_path / "my llm cache"
    out = tmp_path / "corpus"
    assert _cli(*_llm_args(out, "--budget-usd", "5", "--llm-cache", str(cache))).exit_code == 0
    made, before = len(fake.requests), _bytes(out)
    rebuild = json.loads((out / "fixtures" / "_ledger.json").read_text())["rebuild"]
    argv = shlex.split(rebuild)
    assert argv[0] == "drift-conformance" and argv[argv.index("--llm-cache") + 1] == str(cache.resolve())
    assert argv[argv.index("--budget-usd") + 1] == "0"
    argv[argv.index("--fixtures") + 1] = str(out / "fixtures")
    argv[argv.index("--gold") + 1] = str(out / "gold")
    again = _cli(*argv[1:])
    assert again.exit_code == 0, again.output
    assert len(fake.requests) == made and _bytes(out) == before
    # With the default cache the rebuild command has no --llm-cache.
    assert _cli(*_llm_args(tmp_path / "default", "--budget-usd", "5")).exit_code == 0
    assert "--llm-cache" not in json.loads((tmp_path / "default" / "fixtures" / "_ledger.json").read_text())["rebuild"]


def test_a_relative_llm_cache_is_written_to_the_rebuild_command_as_an_absolute_path(tmp_path, cli_env,
                                                                                    monkeypatch):
    """--llm-cache given relative to the working folder: the ledger's rebuild command names the
    folder absolutely, so it replays the cache for free from any other working folder."""
    import shlex

    fake = cli_env
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(work)
    out = tmp_path / "corpus"
    assert _cli(*_llm_args(out, "--budget-usd", "5", "--llm-cache", "rel-cache")).exit_code == 0
    made, before = len(fake.requests), _bytes(out)
    argv = shlex.split(json.loads((out / "fixtures" / "_ledger.json").read_text())["rebuild"])
    named = argv[argv.index("--llm-cache") + 1]
    assert Path(named).is_absolute() and Path(named) == (work / "rel-cache").resolve()
    monkeypatch.chdir(elsewhere)
    argv[argv.index("--fixtures") + 1] = str(out / "fixtures")
    argv[argv.index("--gold") + 1] = str(out / "gold")
    again = _cli(*argv[1:])
    assert again.exit_code == 0, again.output
    assert len(fake.requests) == made and _bytes(out) == before
    assert not (elsewhere / "rel-cache").exists()


def test_a_keyless_rebuild_replays_the_cache_and_a_keyless_miss_writes_nothing(tmp_path, cli_env, monkeypatch):
    """The ledger's rebuild command (--budget-usd 0, the cache) needs no ANTHROPIC_API_KEY
    while every answer is cached: no call, the same bytes. With a cold cache the first miss
    is the missing-key error: exit 2, nothing written."""
    import shlex

    fake = cli_env
    cache, out = tmp_path / "cache", tmp_path / "corpus"
    first = _cli(*_llm_args(out, "--budget-usd", "5", "--llm-cache", str(cache)))
    assert first.exit_code == 0, first.output
    made, before = len(fake.requests), _bytes(out)
    rebuild = shlex.split(json.loads((out / "fixtures" / "_ledger.json").read_text())["rebuild"])
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    # Into the same folder and into a fresh one, as the ledger's rebuild command says.
    for target in (out, tmp_path / "rebuilt"):
        argv = list(rebuild)
        argv[argv.index("--fixtures") + 1] = str(target / "fixtures")
        argv[argv.index("--gold") + 1] = str(target / "gold")
        again = _cli(*argv[1:])
        assert again.exit_code == 0, again.output
        assert len(fake.requests) == made and _bytes(target) == before
    # A cold cache and no key: refused at the first miss, before anything is written.
    cold = _cli(*_llm_args(tmp_path / "cold-corpus", "--budget-usd", "0", "--llm-cache", str(tmp_path / "cold")))
    stderr = " ".join(cold.stderr.split())
    assert cold.exit_code == 2 and "ANTHROPIC_API_KEY is not set" in stderr and "Traceback" not in stderr, stderr
    assert "LLM transcript synthesizer" in stderr
    assert len(fake.requests) == made and not (tmp_path / "cold-corpus").exists()
    # An earlier corpus in the target stays as it was when a keyless rebuild misses.
    shutil.rmtree(cache)
    assert _cli(*_llm_args(out, "--budget-usd", "0", "--llm-cache", str(cache))).exit_code == 2
    assert len(fake.requests) == made and _bytes(out) == before


def test_generate_with_an_unusable_llm_cache_is_a_clear_error(tmp_path, cli_env):
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    # (--llm-cache naming a file itself is refused by the option's own check.)
    places = [a_file / "below"] + ([Path("/proc/nope")] if Path("/proc/self").is_dir() else [])
    for place in places:
        result = _cli(*_llm_args(tmp_path / "corpus", "--budget-usd", "1", "--llm-cache", str(place)))
        stderr = " ".join(result.stderr.split())
        assert result.exit_code == 2 and "Traceback" not in stderr, stderr
        assert f"the LLM response cache folder '{place}'" in stderr and "--llm-cache" in stderr
        assert "cannot be used" in stderr and "[Errno" not in stderr
    assert cli_env.requests == [] and not (tmp_path / "corpus").exists()

# -- the checks, rule by rule ----------------------------------------------------------------

QUEUE = next(d for d in DECISIONS if d.name == "queue")
PEOPLE = {"rosa": "human", "coder": "agent", "omar": "human"}


def _ctx(kind="disclose", private=False, attr=None, target=None) -> SessionContext:
    attr = attr or Attr(key="queue", defn=QUEUE, entity="rosa", pool=["RabbitMQ", "Kafka", "NATS"], value="NATS")
    if target is not None:
        event = EventPlan("episode", "coder", target=target)
    else:
        event = EventPlan(kind, "coder", attr, value="Kafka", old="RabbitMQ" if kind == "change" else None,
                          private=private, line_pool=attr.defn.lines[kind])
    return SessionContext(present=["rosa", "coder"], pattern="linear", voices=PEOPLE,
                          styles={e: ("casual", "terse") for e in PEOPLE}, event=event,
                          distractor_values=["RabbitMQ", "Kafka", "NATS", "Lisbon", "chess"])


def _turns(*items) -> list[dict]:
    return [{"author": a, "text": t, "private": p} for a, t, *rest in items for p in [bool(rest and rest[0])]]


GOOD = [("rosa", "Any thoughts on the broker?"), ("coder", "Proposal from coder: we adopt Kafka."),
        ("rosa", "Agreed, Kafka it is.")]


def test_a_good_answer_marks_the_statement_and_the_acknowledgement_as_evidence():
    turns = L.check(_turns(*GOOD), _ctx(), [])
    assert [t.evidence for t in turns] == [False, True, True]
    assert all(t.scope == "shared" for t in turns)


@pytest.mark.parametrize("items, kind, reason", [
    ([("rosa", "hi"), ("coder", "Proposal from coder: we adopt NATS.")], "disclose", "value not last"),
    ([("rosa", "hi"), ("coder", "Proposal from coder: Kafka, not NATS.")], "disclose", "value not last"),
    ([("rosa", "hi"), ("coder", "Proposal from coder: NATS or Kafka.")], "disclose", "other value"),
    ([("coder", "hi"), ("rosa", "Proposal from coder: Kafka.")], "change", "wrong speaker"),
    ([("rosa", "hi"), ("coder", "coder here: drop Kafka for RabbitMQ.")], "change", "value not last"),
    ([("rosa", "hi"), ("coder", "coder here: Kafka now, RabbitMQ before, Kafka.")], "change", "old after new"),
    ([("rosa", "hi"), ("coder", "Proposal from coder and omar: Kafka.")], "disclose", "proposal ids"),
    ([("rosa", "hi"), ("coder", "Let us adopt Kafka.")], "disclose", "proposal ids"),
    ([("rosa", "Kafka?"), ("coder", "Proposal from coder: Kafka.")], "disclose", "wrong speaker"),
    ([("rosa", "hi"), ("coder", "Proposal from coder: Kafka."), ("rosa", "Kafka!"), ("coder", "Kafka.")],
     "disclose", "value repeated"),
    ([("rosa", "hi"), ("coder", "Proposal from coder: Kafka."), ("rosa", "Lisbon was lovely.")], "disclose",
     "distractor value"),
    ([("rosa", "hi"), ("coder", "Proposal from coder: something.")], "disclose", "value missing"),
    ([("rosa", "hi"), ("dana", "Proposal from coder: Kafka.")], "disclose", "author"),
    ([("rosa", "hi"), ("rosa", "Proposal from coder: Kafka.")], "disclose", "silent participant"),
    ([("rosa", "hi"), ("coder", "Proposal from coder: Kafka. Ref KX4821.")], "disclose", "marker-like code"),
    ([("rosa", "hi"), ("coder", "Proposal from coder: Kafka.", True)], "disclose", "private turn"),
    ([("coder", "Proposal from coder: Kafka.")], "disclose", "turn count"),
])
def test_each_rule_rejects(items, kind, reason):
    with pytest.raises(L.Rejected) as info:
        L.check(_turns(*items), _ctx(kind), [])
    assert info.value.reason == reason, info.value


def test_a_change_may_name_the_old_value_before_the_new_one_or_not_at_all():
    for text in ("coder proposing: drop RabbitMQ, adopt Kafka.", "coder proposing Kafka from now on."):
        turns = L.check(_turns(("rosa", "hi"), ("coder", text)), _ctx("change"), [])
        assert [t.evidence for t in turns] == [False, True]


def test_private_notes():
    ctx = _ctx(private=True, attr=Attr(key="hobby", defn=dataclasses.replace(QUEUE, kind="fact"), entity="coder",
                                       pool=["Kafka", "NATS"], value="Kafka"))
    good = L.check(_turns(("rosa", "hi"), ("coder", "hello"), ("coder", "Note to self: Kafka.", True)), ctx, [])
    assert [(t.scope, t.evidence) for t in good] == [("shared", False), ("shared", False), ("private", True)]
    for items in ([("rosa", "hi"), ("coder", "Note: Kafka.")],  # not private
                  [("rosa", "hi"), ("coder", "Kafka."), ("coder", "Note: Kafka.", True)],  # said in the open too
                  [("rosa", "hi"), ("rosa", "Note: Kafka.", True), ("coder", "ok")],  # someone else's note
                  [("rosa", "hi", True), ("coder", "Note: Kafka.", True)]):  # no shared turn... or two private
        with pytest.raises(L.Rejected):
            L.check(_turns(*items), ctx, [])


def test_episodes_and_sessions_without_an_event():
    ctx = _ctx(target="IP ban")
    turns = L.check(_turns(("rosa", "hi"), ("coder", "We hit an IP ban today."), ("rosa", "Ouch.")), ctx, [])
    assert [t.evidence for t in turns] == [False, True, False]
    with pytest.raises(L.Rejected, match="value missing"):
        L.check(_turns(("rosa", "hi"), ("coder", "We hit a ban today.")), ctx, [])
    noise = SessionContext(present=["rosa", "coder"], pattern="linear", voices=PEOPLE,
                           styles={e: ("casual", "terse") for e in PEOPLE}, event=None,
                           distractor_values=["Kafka", "chess"])
    aside = [Turn("rosa", 'Side note: a crossword answer was "chess".'), Turn("coder", "Fun.")]
    # The outline's own aside may stay; any other value may not.
    assert L.check(_turns(("rosa", "Crossword: chess!"), ("coder", "Nice.")), noise, aside)
    with pytest.raises(L.Rejected, match="distractor value"):
        L.check(_turns(("rosa", "Crossword: chess!"), ("coder", "Kafka.")), noise, aside)
    assert "Keep the outline's passing mentions of 'chess'" in L.prompt(noise, aside)
    assert "Never write: Kafka." in L.prompt(noise, aside)


def test_whole_words_only_and_longer_values_win():
    assert L._named("Romeo met us", ["Rome"]) == []
    assert L._named("we use Redis Streams", ["Redis", "Redis Streams"]) == ["Redis Streams"]
    assert L._named("kafka, in lower case", ["Kafka"]) == ["Kafka"]


@pytest.mark.parametrize("text, reason", [
    ("not json at all", "not JSON"), ('{"turns": []}', "no turns"), ('{"turns": [{"author": 1}]}', "bad turn"),
    ('[1, 2]', "no turns"),
])
def test_parse_rejects_what_is_not_a_turn_list(text, reason):
    with pytest.raises(L.Rejected) as info:
        L.parse(text)
    assert info.value.reason == reason


def test_a_truncated_answer_falls_back():
    ctx = _ctx()
    with FakeAnthropic(lambda r: json.dumps({"turns": _turns(*GOOD)}), api_key=KEY) as fake:
        original = fake._answer

        def cut(body):
            message, result, tool = original(body)
            return dict(message, stop_reason="max_tokens"), result, tool

        fake._answer = cut
        synth = L.LLMSynthesizer(_client(fake, None), max_tokens=5)
        turns = synth.session(random.Random(1), ctx)
    assert synth.stats.reasons == {"truncated": 1} and synth.stats.fallbacks == 1
    assert turns == synth.fallback.session(random.Random(1), ctx)  # the template's turns, same rng use


def test_the_prompt_is_a_pure_function_of_the_plan():
    ctx = _ctx("change")
    draft = [Turn("rosa", "hi"), Turn("coder", "coder proposing: drop RabbitMQ, adopt Kafka.", evidence=True)]
    text = L.prompt(ctx, draft)
    assert text == L.prompt(_ctx("change"), list(draft))
    assert "'RabbitMQ' to 'Kafka'" in text and "This is a proposal" in text
    assert "Never write: chess; Lisbon; NATS." in text  # the event's value and old value are not forbidden
    assert "Entity ids (only the proposer's may appear in a proposal): rosa, coder, omar." in text

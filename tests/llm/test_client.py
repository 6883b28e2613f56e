"""The LLM client (conformance/llm) against the local fake Messages API: streaming and time to
first token, served model id, retries, rate limits, missing key, pinned ids, the response cache,
spend control, and a canary key that never shows. Hermetic: loopback only, no real key."""

from __future__ import annotations

import json
import logging
import pickle
import sys
import traceback
import warnings
from decimal import Decimal
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "adapters"))
from fake_anthropic import STREAM_CHUNK, FakeAnthropic, count_tokens  # noqa: E402

from conformance.errors import DriftError  # noqa: E402
from drift_sdk.llm import (PRICES, AnthropicClient, Budget, BudgetSpent, LLMCacheWarning,  # noqa: E402
                             LLMConfigError, LLMRateLimited, LLMRequestError, LLMUnavailable, Price,
                             ResponseCache, cache_key, model_family, pinned_model, price_for)

pytest.importorskip("anthropic")

CANARY = "sk-ant-canary-7f3a9c1e5b2d4f608a1c3e5g7i9k"
MODEL = "claude-haiku-4-5-20251001"
ANSWER = "The meeting moved to Thursday at ten, in the small room on the third floor."
USER = [{"role": "user", "content": "When is the meeting?"}]


def _env(fake: FakeAnthropic, key: str = CANARY) -> dict:
    return {"ANTHROPIC_API_KEY": key, "ANTHROPIC_BASE_URL": fake.url}


class Sleeps(list):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def _client(fake, **kwargs) -> AnthropicClient:
    kwargs.setdefault("environ", _env(fake))
    kwargs.setdefault("backoff_s", 0.001)
    kwargs.setdefault("sleep", Sleeps())
    return AnthropicClient(kwargs.pop("model", MODEL), **kwargs)


@pytest.fixture
def fake():
    with FakeAnthropic(lambda request: ANSWER, api_key=CANARY) as server:
        yield server


# -- streaming, timing, served model ------------------------------------------------------


def test_streams_text_and_measures_time_to_first_token(fake):
    reply = _client(fake).complete("Answer briefly.", USER, max_tokens=64)
    assert reply.text == ANSWER and len(ANSWER) > STREAM_CHUNK  # more than one delta
    assert reply.model == MODEL and reply.requested_model == MODEL
    assert reply.stop_reason == "end_turn" and reply.message_id.startswith("msg_fake_")
    assert reply.output_tokens == count_tokens(ANSWER)
    assert reply.input_tokens == count_tokens(["Answer briefly.", USER, []])
    assert 0 < reply.ttft_ms <= reply.total_ms <= reply.call_ms
    assert reply.attempts == 1 and reply.cached is False
    (body,) = fake.requests
    assert body["stream"] is True and body["model"] == MODEL and body["max_tokens"] == 64
    assert body["temperature"] == 0 and body["system"] == "Answer briefly." and body["messages"] == USER
    assert json.loads(json.dumps(reply.to_record()))["text"] == ANSWER


def test_records_the_model_the_api_says_served_the_call():
    served = "claude-haiku-4-5-20251001-served"

    with FakeAnthropic(lambda request: "ok", api_key=CANARY) as fake:
        original = fake._answer

        def answer(body):
            message, result, tool = original(body)
            return dict(message, model=served), result, tool

        fake._answer = answer
        reply = _client(fake).complete("", "hi", max_tokens=8)
    assert reply.model == served and reply.requested_model == MODEL
    assert "system" not in fake.requests[0]  # empty system is not sent


def test_temperature_none_is_not_sent(fake):
    _client(fake).complete("", "hi", max_tokens=8, temperature=None)
    assert "temperature" not in fake.requests[0]


def test_bad_arguments_are_value_errors(fake):
    client = _client(fake)
    for kwargs in ({"max_tokens": 0}, {"max_tokens": 5, "temperature": 2}, {"max_tokens": True}):
        with pytest.raises(ValueError):
            client.complete("", USER, **kwargs)
    with pytest.raises(ValueError):
        client.complete("", [{"role": "system", "content": "x"}], max_tokens=5)
    assert fake.requests == []


# -- retries --------------------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 529])
def test_retries_through_transient_failures_then_succeeds(fake, status):
    sleeps = Sleeps()
    fake.fail_next(2, status)
    reply = _client(fake, sleep=sleeps, max_retries=3).complete("", USER, max_tokens=32)
    assert reply.text == ANSWER and reply.attempts == 3
    assert sleeps == [0.01, 0.01]  # the fake's retry-after-ms: 10
    assert len(fake.requests) == 1  # failed attempts are not recorded by the fake


def test_back_off_doubles_without_a_retry_after_header_and_is_capped():
    client = AnthropicClient.__new__(AnthropicClient)
    sleeps = Sleeps()
    client.backoff_s, client.max_backoff_s, client.max_retries, client.model = 0.5, 1.5, 3, MODEL
    client._sleep = sleeps
    from drift_sdk.llm.client import _Failure
    outcomes = iter([_Failure(500, "api_error", "boom")] * 3 + [{"text": "x"}])
    client._attempt = lambda request: next(outcomes)
    assert client._call_with_retries({}) == ({"text": "x"}, 4)
    assert sleeps == [0.5, 1.0, 1.5]


def test_a_rate_limit_that_outlasts_the_retries_is_a_clear_error(fake):
    sleeps = Sleeps()
    fake.fail_next(5, 429)
    with pytest.raises(LLMRateLimited) as info:
        _client(fake, sleep=sleeps, max_retries=2).complete("", USER, max_tokens=32)
    message = str(info.value)
    assert "3 attempts" in message and "429 rate_limit_error" in message and MODEL in message
    # Only controls that exist: wait and rerun (cached answers are kept), a lower --concurrency.
    assert "rerun" in message and "cached" in message and "--concurrency" in message
    assert "retries" not in message
    assert isinstance(info.value, DriftError) and len(sleeps) == 2 and fake.requests == []
    assert info.value.__cause__ is None and info.value.__context__ is None


def test_overload_that_outlasts_the_retries_is_unavailable(fake):
    fake.fail_next(3, 529)
    with pytest.raises(LLMUnavailable, match="529 overloaded_error"):
        _client(fake, max_retries=1).complete("", USER, max_tokens=32)


def test_a_refused_request_is_not_retried(fake):
    sleeps = Sleeps()
    env = {"ANTHROPIC_API_KEY": CANARY, "ANTHROPIC_BASE_URL": fake.url + "/wrong"}
    with pytest.raises(LLMRequestError, match="404 not_found_error"):
        _client(fake, sleep=sleeps, environ=env).complete("", USER, max_tokens=32)
    assert sleeps == []


def test_connection_failure_is_retried_then_unavailable():
    with FakeAnthropic(api_key=CANARY) as fake:
        env = _env(fake)
    sleeps = Sleeps()  # the fake is stopped: nothing listens on its port
    client = AnthropicClient(MODEL, environ=env, sleep=sleeps, backoff_s=0.001, max_retries=2, timeout_s=5)
    with pytest.raises(LLMUnavailable, match="connection failed"):
        client.complete("", USER, max_tokens=8)
    assert len(sleeps) == 2


# -- configuration --------------------------------------------------------------------


def test_missing_key_names_the_variable(fake):
    for env in ({"ANTHROPIC_BASE_URL": fake.url}, {"ANTHROPIC_API_KEY": "  ", "ANTHROPIC_BASE_URL": fake.url}):
        with pytest.raises(LLMConfigError, match="ANTHROPIC_API_KEY is not set"):
            AnthropicClient(MODEL, environ=env)


def test_the_key_and_base_url_come_from_the_process_environment(fake, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    client = AnthropicClient(MODEL)
    assert client.base_url == fake.url
    assert client.complete("", "hi", max_tokens=8).text == ANSWER


def test_a_key_the_api_rejects_is_a_config_error(fake):
    with pytest.raises(LLMConfigError, match="refused the key in ANTHROPIC_API_KEY"):
        _client(fake, environ=_env(fake, key="sk-ant-wrong-key-000000")).complete("", USER, max_tokens=8)
    assert fake.rejected == 1  # a 401 is not retried


def test_pinned_ids_only_unless_aliases_are_allowed(fake):
    assert pinned_model(" claude-haiku-4-5-20251001 ") == MODEL
    for alias in ("claude-haiku-4-5", "claude-3-5-sonnet-latest", "claude-sonnet-4-0", "claude-x-20251399"):
        with pytest.raises(LLMConfigError, match="alias") as info:
            pinned_model(alias)
        assert "--allow-alias" in str(info.value)
        assert pinned_model(alias, allow_alias=True) == alias
    for bad in ("", "  ", None, "claude haiku"):
        with pytest.raises(LLMConfigError):
            pinned_model(bad)
    with pytest.raises(LLMConfigError, match="alias"):
        AnthropicClient("claude-haiku-4-5", environ=_env(fake))
    client = _client(fake, model="claude-haiku-4-5", allow_alias=True)
    assert client.complete("", "hi", max_tokens=8).model == "claude-haiku-4-5"


def test_unknown_model_needs_a_price(fake):
    with pytest.raises(LLMConfigError, match="no list price") as info:
        AnthropicClient("acme-large-20250101", environ=_env(fake))
    # The message names the price table's file and what to do, not a Python API.
    message = str(info.value)
    assert "drift_sdk/llm/prices.py" in message and "'acme-large'" in message and "claude-haiku-4-5" in message
    assert "pinned (dated) id of a listed family" in message and "extend the table" in message
    assert "Price(" not in message
    client = _client(fake, model="acme-large-20250101", price=Price("2", "8"))
    reply = client.complete("", "hi", max_tokens=8)
    assert Decimal(str(reply.cost_usd)) == (Decimal(reply.input_tokens) * 2 + Decimal(reply.output_tokens) * 8) / 10**6
    with pytest.raises(LLMConfigError):
        Price("-1", "2")


def test_price_table_families():
    assert model_family(MODEL) == "claude-haiku-4-5" and model_family("claude-3-5-sonnet-latest") == "claude-3-5-sonnet"
    assert price_for(MODEL) == Price("1", "5")
    assert price_for("claude-3-5-haiku-20241022") == Price("0.80", "4")
    assert price_for("claude-opus-4-20250514") == Price("15", "75")
    assert all(p.output_usd_per_mtok >= p.input_usd_per_mtok > 0 for p in PRICES.values())


# -- response cache --------------------------------------------------------------------


def test_a_cache_hit_makes_no_request_and_returns_the_same_answer(fake, tmp_path):
    first = _client(fake, cache=tmp_path / "cache").complete("Be brief.", USER, max_tokens=64)
    assert len(fake.requests) == 1 and first.cached is False
    budget = Budget("1")
    again = _client(fake, cache=tmp_path / "cache", budget=budget).complete("Be brief.", USER, max_tokens=64)
    assert len(fake.requests) == 1  # no new call
    assert again.cached is True and again.attempts == 0 and again.cost_usd == 0.0
    for field in ("text", "model", "input_tokens", "output_tokens", "ttft_ms", "total_ms", "stop_reason",
                  "message_id", "cache_key"):
        assert getattr(again, field) == getattr(first, field), field  # original latencies kept
    assert budget.spent_usd == 0 and budget.summary()["cached_calls"] == 1 and budget.summary()["calls"] == 0
    files = list((tmp_path / "cache").iterdir())
    assert [f.name for f in files] == [f"{first.cache_key}.json"]  # no temporary file left behind


def test_the_cache_key_covers_model_system_messages_max_tokens_and_temperature(fake, tmp_path):
    client = _client(fake, cache=tmp_path)
    base = dict(system="s", messages=USER, max_tokens=16, temperature=0)
    client.complete(**base)
    for change in ({"system": "t"}, {"messages": "other"}, {"max_tokens": 17}, {"temperature": 0.5}):
        client.complete(**dict(base, **change))
    _client(fake, cache=tmp_path, model="claude-sonnet-4-5-20250929").complete(**base)
    assert len(fake.requests) == 6
    client.complete(**dict(base, temperature=0.0))  # 0 and 0.0 are one key
    assert len(fake.requests) == 6
    request = {"model": MODEL, "system": "s", "messages": USER, "max_tokens": 16, "temperature": 0.0}
    assert (tmp_path / f"{cache_key(request)}.json").exists()


@pytest.mark.parametrize("content", [b"{not json", b"\xff\xfe", b"[]", b'{"format": 99}', "wrong"])
def test_a_corrupt_cache_file_is_ignored_with_a_warning(fake, tmp_path, content):
    client = _client(fake, cache=tmp_path)
    first = client.complete("", USER, max_tokens=16)
    path = tmp_path / f"{first.cache_key}.json"
    if content == "wrong":  # valid JSON, but its response lacks a field
        doc = json.loads(path.read_text())
        del doc["response"]["text"]
        content = json.dumps(doc).encode()
    path.write_bytes(content)
    with pytest.warns(LLMCacheWarning, match="ignoring"):
        reply = client.complete("", USER, max_tokens=16)
    assert reply.cached is False and reply.text == ANSWER and len(fake.requests) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the file was rewritten: a clean hit now
        assert client.complete("", USER, max_tokens=16).cached is True


def test_a_cache_file_of_another_request_is_not_served(fake, tmp_path):
    client = _client(fake, cache=tmp_path)
    a = client.complete("", "question a", max_tokens=16)
    b_request = {"model": MODEL, "system": "", "messages": [{"role": "user", "content": "question b"}],
                 "max_tokens": 16, "temperature": 0.0}
    (tmp_path / f"{a.cache_key}.json").rename(tmp_path / f"{cache_key(b_request)}.json")
    with pytest.warns(LLMCacheWarning):
        assert client.complete("", "question b", max_tokens=16).cached is False
    assert len(fake.requests) == 2


def test_an_unwritable_cache_warns_and_still_answers(fake, tmp_path, monkeypatch):
    cache = ResponseCache(tmp_path)
    monkeypatch.setattr("drift_sdk.llm.cache.tempfile.mkstemp",
                        lambda **kw: (_ for _ in ()).throw(OSError(28, "No space left on device")))
    with pytest.warns(LLMCacheWarning, match="cannot write"):
        reply = _client(fake, cache=cache).complete("", USER, max_tokens=16)
    assert reply.text == ANSWER and list(tmp_path.iterdir()) == []


def _unusable_cache_folders(tmp_path) -> list[tuple[Path, str]]:
    """(a cache folder that cannot be used, the reason its error gives)."""
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    found = [(a_file, "it exists and is not a folder"), (a_file / "below", f"{str(a_file)!r} is not a folder")]
    if Path("/proc/self").is_dir():  # Linux: nothing can be created in /proc
        found.append((Path("/proc/nope"), "cannot create it"))
    return found


def test_an_unusable_cache_folder_is_a_config_error_naming_it(fake, tmp_path):
    for folder, why in _unusable_cache_folders(tmp_path):
        for make in (lambda: ResponseCache(folder), lambda: _client(fake, cache=folder)):
            with pytest.raises(LLMConfigError) as info:
                make()
            message = str(info.value)
            assert f"{str(folder)!r}" in message and "response cache" in message and why in message, message
            assert "--llm-cache" in message and "DRIFT_LLM_CACHE" in message
            assert isinstance(info.value, DriftError)  # the CLI prints it and exits 2
            assert info.value.__cause__ is None and info.value.__context__ is None


def test_a_cache_folder_behind_a_folder_it_may_not_search_is_a_config_error(tmp_path, monkeypatch):
    """An adapter running as an unprivileged user, handed a cache below a folder it cannot search:
    mkdir fails with EACCES, and so does every stat on the way up (the error named the folder
    instead of escaping as a PermissionError). Simulated: the tests run as root."""
    folder = tmp_path / "locked" / "cache"

    def denied(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "mkdir", denied)
    monkeypatch.setattr(Path, "stat", denied)
    with pytest.raises(LLMConfigError) as info:
        ResponseCache(folder)
    assert f"{str(folder)!r}" in str(info.value) and "Permission denied" in str(info.value), info.value


def test_llm_settings_refuses_an_unusable_cache_folder_before_any_call(fake, tmp_path):
    from conformance.llm.settings import llm_settings

    for folder, why in _unusable_cache_folders(tmp_path):
        with pytest.raises(LLMConfigError, match="response cache") as info:
            llm_settings(MODEL, None, cache_dir=str(folder), environ=_env(fake))
        # The first replicate's cache (<folder>/r1) is made eagerly, with the client.
        assert f"{str(folder / 'r1')!r}" in str(info.value) and "cannot be used" in str(info.value)
    assert fake.requests == []


# -- spend control ----------------------------------------------------------------------


def test_cost_golden_values():
    # 1,000 input + 500 output tokens at $3 / $15 per MTok: 0.003 + 0.0075 = $0.0105 exactly.
    assert Price("3", "15").cost_usd(1_000, 500) == Decimal("0.0105")
    # Haiku 4.5 list price $1 / $5: 1,000 x 1 / 1e6 + 500 x 5 / 1e6 = $0.0035.
    assert price_for(MODEL).cost_usd(1_000, 500) == Decimal("0.0035")
    # Haiku 3.5 at $0.80 / $4: 1,234 x 0.8 / 1e6 + 567 x 4 / 1e6 = 0.0009872 + 0.002268 = $0.0032552.
    assert price_for("claude-3-5-haiku-20241022").cost_usd(1_234, 567) == Decimal("0.0032552")
    budget = Budget(Decimal("0.01"))
    budget.charge(MODEL, 1_000, 500, Price("3", "15").cost_usd(1_000, 500))
    assert budget.spent_usd == Decimal("0.0105") and budget.remaining_usd == 0 and budget.spent


def test_each_call_is_charged_and_a_spent_budget_stops_the_next_call(fake, tmp_path):
    price = Price("1000", "2000")  # large, so three calls reach a small budget
    budget = Budget("0.05")
    client = _client(fake, budget=budget, price=price, cache=tmp_path)
    costs = []
    while True:
        try:
            reply = client.complete("", f"question {len(costs)}", max_tokens=64)
        except BudgetSpent as exc:
            assert "used up" in str(exc) and "--budget-usd" in str(exc) and exc.limit_usd == Decimal("0.05")
            break
        expected = (Decimal(reply.input_tokens) * 1000 + Decimal(reply.output_tokens) * 2000) / 10**6
        assert Decimal(str(reply.cost_usd)) == expected
        costs.append(expected)
    assert len(fake.requests) == len(costs) and sum(costs) == budget.spent_usd >= Decimal("0.05")
    assert sum(costs[:-1]) < Decimal("0.05")  # the last call started while money was left
    assert [c.cost_usd for c in budget.charges] == costs
    # Cached answers are free and still served once the budget is spent.
    assert client.complete("", "question 0", max_tokens=64).cached is True
    assert budget.spent_usd == sum(costs) and len(fake.requests) == len(costs)
    summary = budget.summary()
    assert summary["exhausted"] and summary["calls"] == len(costs) and summary["cached_calls"] == 1
    with pytest.raises(BudgetSpent):
        _client(fake, budget=Budget(0)).complete("", "x", max_tokens=8)
    with pytest.raises(LLMConfigError):
        Budget(-1)


# -- the key never shows ---------------------------------------------------------------


def _texts(exc: BaseException) -> str:
    return "\n".join([str(exc), repr(exc), "".join(traceback.format_exception(exc))])


def test_the_canary_key_appears_in_no_error_repr_log_or_cache_file(fake, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    seen: list[str] = []
    client = _client(fake, cache=tmp_path, max_retries=1)
    seen += [repr(client), str(client), repr(client.budget)]
    reply = client.complete("", USER, max_tokens=16)
    seen += [repr(reply), json.dumps(reply.to_record())]
    fake.fail_next(2, 429)
    with pytest.raises(LLMRateLimited) as info:
        client.complete("", "other", max_tokens=16)
    seen.append(_texts(info.value))
    fake.fail_next(2, 529, message=f"overloaded; your key {CANARY} is fine")  # a server echoing the key
    with pytest.raises(LLMUnavailable) as info:
        client.complete("", "third", max_tokens=16)
    assert "[redacted ANTHROPIC_API_KEY]" in str(info.value)
    seen.append(_texts(info.value))
    with pytest.raises(LLMRequestError) as info:
        _client(fake, environ={"ANTHROPIC_API_KEY": CANARY, "ANTHROPIC_BASE_URL": fake.url + "/x"}).complete(
            "", USER, max_tokens=16)
    seen.append(_texts(info.value))
    with FakeAnthropic(api_key="sk-ant-other-server-key") as other:  # the canary is the wrong key here
        with pytest.raises(LLMConfigError) as info:
            _client(other).complete("", USER, max_tokens=8)
    seen.append(_texts(info.value))
    with pytest.raises(BudgetSpent) as info:
        _client(fake, budget=Budget(0)).complete("", "x", max_tokens=8)
    seen.append(_texts(info.value))
    with pytest.raises(LLMConfigError) as info:
        AnthropicClient("claude-haiku-4-5", environ=_env(fake))
    seen.append(_texts(info.value))
    with pytest.raises(TypeError):
        pickle.dumps(client)
    seen += [record.getMessage() for record in caplog.records]
    seen += [p.read_text(errors="replace") for p in tmp_path.iterdir()]
    assert any("retrying" in record.getMessage() for record in caplog.records)
    blob = "\n".join(seen)
    assert CANARY not in blob and CANARY[-12:] not in blob

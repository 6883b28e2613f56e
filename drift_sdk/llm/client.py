"""A small client for the Anthropic Messages API: pinned model, streaming with time to first
token, bounded retries, a response cache and a spend budget.

Use::

    client = AnthropicClient("claude-haiku-4-5-20251001", cache=ResponseCache(dir), budget=Budget(5))
    reply = client.complete("Answer from the context only.", [{"role": "user", "content": "..."}],
                            max_tokens=64)
    reply.text, reply.model, reply.ttft_ms, reply.cost_usd, reply.cached

The API key is read from ``ANTHROPIC_API_KEY`` and handed to the SDK only: it is never
logged, stored in the cache, put in an error message or shown by ``repr``. Errors raised here
are made outside the SDK's exception handlers, so they carry no SDK exception (whose request
holds the key's header) as their cause or context.

This package lives in the SDK so that an adapter (which can import only ``drift_sdk``) uses
the same client as the runner, which imports it from here. ``anthropic`` is imported
only when a client is constructed.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from decimal import Decimal
from pathlib import Path

from drift_sdk.llm.budget import Budget
from drift_sdk.llm.cache import ResponseCache, cache_key
from drift_sdk.llm.errors import (LLMConfigError, LLMError, LLMRateLimited, LLMRequestError,
                                    LLMUnavailable)
from drift_sdk.llm.models import pinned_model
from drift_sdk.llm.prices import Price, price_for

log = logging.getLogger(__name__)

KEY_VARIABLE = "ANTHROPIC_API_KEY"
BASE_URL_VARIABLE = "ANTHROPIC_BASE_URL"
DEFAULT_BASE_URL = "https://api.anthropic.com"
#: Error types of an ``error`` event inside a stream, and the HTTP status each stands for.
_STREAM_ERROR_STATUS = {"rate_limit_error": 429, "overloaded_error": 529, "api_error": 500}


@dataclass(frozen=True)
class LLMResponse:
    """One completion.

    Attributes:
        text: the concatenated text blocks of the answer.
        model: the model id the API says served the call (``message.model``).
        requested_model: the (pinned) model id that was asked for.
        input_tokens, output_tokens: tokens the API counted (``usage``).
        ttft_ms: milliseconds from sending the request to the first text delta (to the end of
            the stream when the answer had no text), of the model call that produced ``text``.
        total_ms: milliseconds from sending the request to the end of the stream, same call.
            On a cache hit both are the original call's, so a cached rerun reports the same
            latencies; ``call_ms`` is the time this call really took.
        stop_reason: ``end_turn``, ``max_tokens``, ``stop_sequence``, ... (None if absent).
        message_id: the API's message id.
        cost_usd: USD charged to the budget by this call (0.0 on a cache hit).
        cached: True when served from the response cache (no network call).
        call_ms: wall-clock milliseconds of this ``complete`` call, retries and back-off included.
        attempts: HTTP attempts made (0 on a cache hit).
        cache_key: SHA-256 hex of the request (see :mod:`drift_sdk.llm.cache`).
    """

    text: str
    model: str
    requested_model: str
    input_tokens: int
    output_tokens: int
    ttft_ms: float
    total_ms: float
    stop_reason: str | None
    message_id: str | None
    cost_usd: float
    cached: bool
    call_ms: float
    attempts: int
    cache_key: str

    def to_record(self) -> dict:
        """A JSON-safe dict of every field."""
        return asdict(self)


@dataclass
class _Failure:
    """What one failed attempt told us (plain values only: never the SDK exception)."""

    status: int | None  # None: the API could not be reached
    error_type: str
    message: str
    retry_after_s: float | None = None

    @property
    def retriable(self) -> bool:
        return self.status is None or self.status in (429, 529) or self.status >= 500

    def describe(self) -> str:
        where = "connection failed" if self.status is None else f"{self.status} {self.error_type}"
        return f"{where}: {self.message.rstrip('.')}" if self.message else where


def _retry_after(headers) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (a number of seconds), if given."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                seconds = float(value) / scale
            except ValueError:
                continue
            if seconds >= 0:
                return seconds
    return None


def _normalise_messages(messages) -> list[dict]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if not isinstance(messages, Sequence) or not messages:
        raise ValueError("messages must be a non-empty list of {'role', 'content'} dicts (or one str)")
    out = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") not in ("user", "assistant") \
                or not isinstance(message.get("content"), (str, list)):
            raise ValueError(f"messages[{i}] must be a dict with role 'user' or 'assistant' and a str or list content")
        out.append(dict(message))
    return out


def public_url(url: str) -> str:
    """``url`` without user:password, query or fragment (``ANTHROPIC_BASE_URL`` may carry a proxy's
    credentials; they must never reach a record, a receipt or an error message)."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.port is not None:
            host = f"{host}:{parts.port}"
    except ValueError:
        return "[unparseable ANTHROPIC_BASE_URL]"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


class AnthropicClient:
    """Completions from one pinned Anthropic model, streamed, cached and budgeted.

    Args:
        model: a dated model id (see :func:`pinned_model`).
        allow_alias: accept an undated alias anyway.
        cache: a :class:`ResponseCache` or a folder for one; None: no cache.
        budget: the :class:`Budget` calls are charged to; None: an unlimited one (still counted),
            available as :attr:`budget`.
        price: USD per MTok for ``model``; None: the list price table (:data:`PRICES`).
        max_retries: retries after a 429, 529, 5xx or connection failure (attempts = 1 + retries).
        backoff_s: first back-off in seconds, doubled on each retry, capped at ``max_backoff_s``;
            a ``retry-after`` / ``retry-after-ms`` header from the API is used instead when given
            (also capped).
        timeout_s: seconds the SDK waits on one HTTP request.
        environ: where ``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL`` are read (default ``os.environ``).
        sleep: the sleep function used between retries (tests pass a recorder).
        purpose: who needs the client, for the configuration errors (e.g. ``"the LLM transcript
            synthesizer"``); None: the answer model's wording (with its ``--answer-model`` hint).
        cache_only_without_key: with a cache and no ``ANTHROPIC_API_KEY``, serve cached answers
            and raise the missing-key :class:`LLMConfigError` only on a cache miss (someone
            repeating a published run from its response cache needs no key); :attr:`keyless`
            is then True.

    Raises:
        LLMConfigError: an alias model id, a model without a price, no ``ANTHROPIC_API_KEY``,
            or the ``anthropic`` package not installed.
    """

    def __init__(self, model: str, *, allow_alias: bool = False, cache: ResponseCache | str | os.PathLike | None = None,
                 budget: Budget | None = None, price: Price | None = None, max_retries: int = 4,
                 backoff_s: float = 1.0, max_backoff_s: float = 30.0, timeout_s: float = 120.0,
                 environ: Mapping[str, str] | None = None, sleep: Callable[[float], None] = time.sleep,
                 purpose: str | None = None, cache_only_without_key: bool = False):
        self.model = pinned_model(model, allow_alias=allow_alias)
        self.price = price_for(self.model, price)
        if max_retries < 0 or backoff_s < 0 or max_backoff_s < 0 or timeout_s <= 0:
            raise LLMConfigError("max_retries, backoff_s and max_backoff_s must be >= 0 and timeout_s > 0")
        self.max_retries = int(max_retries)
        self.backoff_s = float(backoff_s)
        self.max_backoff_s = float(max_backoff_s)
        self.cache = ResponseCache(cache) if isinstance(cache, (str, os.PathLike)) else cache
        self.budget = budget if budget is not None else Budget(None)
        self._sleep = sleep
        environ = os.environ if environ is None else environ
        key = (environ.get(KEY_VARIABLE) or "").strip()
        self._missing_key = None
        if not key:
            if purpose is None:
                self._missing_key = (f"{KEY_VARIABLE} is not set: the answer model calls the Anthropic API and needs a "
                                     f"key. Set {KEY_VARIABLE} (and {BASE_URL_VARIABLE} for another endpoint), or "
                                     "leave --answer-model off to use the hermetic reader.")
            else:
                self._missing_key = (f"{KEY_VARIABLE} is not set: {purpose} calls the Anthropic API and needs a key. "
                                     f"Set {KEY_VARIABLE} (and {BASE_URL_VARIABLE} for another endpoint).")
            if not (cache_only_without_key and self.cache is not None):
                raise LLMConfigError(self._missing_key)
        self.keyless = self._missing_key is not None
        self.role = ""
        """Who uses this client (``answer``, ``judge``): written with each charge to the budget."""
        self.base_url = (environ.get(BASE_URL_VARIABLE) or "").strip() or DEFAULT_BASE_URL
        self.endpoint = public_url(self.base_url)
        """``base_url`` without credentials or query: what records, receipts and errors show."""
        try:
            import anthropic
        except ImportError:
            if purpose is None:
                raise LLMConfigError("the answer model needs the anthropic package: "
                                     "pip install 'drift-conformance[llm]'") from None
            raise LLMConfigError(f"{purpose} needs the anthropic package (pip install 'anthropic>=0.40,<1'; "
                                 "in drift-conformance: pip install 'drift-conformance[llm]')") from None
        self._anthropic = anthropic
        self._key = key
        self._sdk = None if self.keyless else anthropic.Anthropic(api_key=key, base_url=self.base_url, max_retries=0,
                                                                  timeout=timeout_s)

    def __repr__(self) -> str:
        return (f"AnthropicClient(model={self.model!r}, base_url={self.endpoint!r}, cache={self.cache!r}, "
                f"budget={self.budget!r}, max_retries={self.max_retries})")

    def __getstate__(self):
        raise TypeError("AnthropicClient holds an API key and is not picklable")

    # -- one completion ------------------------------------------------------------

    def complete(self, system: str, messages, max_tokens: int, temperature: float | None = 0) -> LLMResponse:
        """One completion of ``messages`` under ``system``, at most ``max_tokens`` output tokens.

        ``messages`` is the Messages API list (``[{"role": "user", "content": "..."}]``) or one
        str (a single user message). ``temperature`` None leaves it to the API's default (some
        models refuse a non-default value). A cache hit returns the stored answer and makes no
        network call; otherwise the call is streamed, retried on 429/529/5xx, charged to the
        budget and cached.

        Raises:
            BudgetSpent: the budget is used up (checked before any uncached call).
            LLMRateLimited: 429 through every retry.
            LLMUnavailable: 529/5xx or no connection through every retry.
            LLMConfigError: the API rejected the key (401/403).
            LLMRequestError: any other 4xx (a bad request; not retried).
            ValueError: malformed arguments (a caller bug).
        """
        started = time.perf_counter()
        if not isinstance(system, str):
            raise ValueError("system must be a str ('' for none)")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise ValueError(f"max_tokens must be a positive int, got {max_tokens!r}")
        if temperature is not None and (isinstance(temperature, bool) or not 0 <= float(temperature) <= 1):
            raise ValueError(f"temperature must be None or within [0, 1], got {temperature!r}")
        request = {"model": self.model, "system": system, "messages": _normalise_messages(messages),
                   "max_tokens": max_tokens, "temperature": None if temperature is None else float(temperature)}
        key = cache_key(request)
        if self.cache is not None:
            stored = self.cache.get(key, request)
            if stored is not None:
                self.budget.charge(self.model, stored["input_tokens"], stored["output_tokens"], Decimal(0), cached=True,
                                   role=self.role)
                return LLMResponse(requested_model=self.model, cost_usd=0.0, cached=True,
                                   call_ms=(time.perf_counter() - started) * 1000.0, attempts=0, cache_key=key,
                                   **stored)
        if self._sdk is None:  # keyless: only cached answers can be served
            raise LLMConfigError(f"{self._missing_key} (Without it only answers already in the response cache "
                                 f"{getattr(self.cache, 'directory', self.cache)} can be used, and this call is not there.)")
        self.budget.ensure_available(self.model)
        fields, attempts = self._call_with_retries(request)
        cost = self.price.cost_usd(fields["input_tokens"], fields["output_tokens"])
        self.budget.charge(self.model, fields["input_tokens"], fields["output_tokens"], cost, role=self.role)
        response = LLMResponse(requested_model=self.model, cost_usd=float(cost), cached=False,
                               call_ms=(time.perf_counter() - started) * 1000.0, attempts=attempts,
                               cache_key=key, **fields)
        if self.cache is not None:
            self.cache.put(key, request, fields)
        return response

    # -- the wire --------------------------------------------------------------------

    def _call_with_retries(self, request: dict) -> tuple[dict, int]:
        attempt = 0
        waited = 0.0
        while True:
            attempt += 1
            failure = self._attempt(request)
            if isinstance(failure, dict):
                return failure, attempt
            # Raised here, outside any except block: no SDK exception rides along as context.
            if not failure.retriable or attempt > self.max_retries:
                raise self._error(failure, attempt, waited)
            wait = self.backoff_s * (2 ** (attempt - 1))
            if failure.retry_after_s is not None:
                wait = failure.retry_after_s
            wait = min(wait, self.max_backoff_s)
            log.warning("Anthropic API %s (attempt %d of %d for %s); retrying in %.3f s", failure.describe(),
                        attempt, self.max_retries + 1, self.model, wait)
            self._sleep(wait)
            waited += wait

    def _attempt(self, request: dict) -> dict | _Failure:
        """One streamed request: the response fields, or a :class:`_Failure`."""
        anthropic = self._anthropic
        kwargs = {"model": request["model"], "max_tokens": request["max_tokens"], "messages": request["messages"]}
        if request["system"]:
            kwargs["system"] = request["system"]
        if request["temperature"] is not None:
            kwargs["temperature"] = request["temperature"]
        try:
            t0 = time.perf_counter()
            first = None
            with self._sdk.messages.stream(**kwargs) as stream:
                for event in stream:
                    if first is None and event.type == "content_block_delta" \
                            and getattr(event.delta, "type", None) == "text_delta":
                        first = time.perf_counter()
                final = stream.get_final_message()
            end = time.perf_counter()
        except anthropic.APIStatusError as exc:
            return self._status_failure(exc)
        except anthropic.APIConnectionError as exc:  # includes timeouts
            return _Failure(None, type(exc).__name__, self._scrub(str(exc)))
        except anthropic.APIError as exc:
            return _Failure(500, type(exc).__name__, self._scrub(str(exc)))
        text = "".join(getattr(block, "text", "") for block in final.content if block.type == "text")
        return {"text": text, "model": final.model, "input_tokens": int(final.usage.input_tokens),
                "output_tokens": int(final.usage.output_tokens), "ttft_ms": ((first or end) - t0) * 1000.0,
                "total_ms": (end - t0) * 1000.0, "stop_reason": final.stop_reason, "message_id": final.id}

    def _status_failure(self, exc) -> _Failure:
        body = exc.body if isinstance(exc.body, dict) else {}
        error = body.get("error") if isinstance(body.get("error"), dict) else body
        error_type = str(error.get("type") or type(exc).__name__)
        message = str(error.get("message") or "")
        status = int(exc.status_code)
        if status < 400:  # an ``error`` event inside a 200 stream
            status = _STREAM_ERROR_STATUS.get(error_type, 500)
        headers = getattr(getattr(exc, "response", None), "headers", None)
        return _Failure(status, error_type, self._scrub(message), _retry_after(headers))

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, f"[redacted {KEY_VARIABLE}]") if self._key else text

    def _error(self, failure: _Failure, attempts: int, waited: float) -> LLMError:
        said = failure.describe()
        where = f"model {self.model} at {self.endpoint}"
        if failure.status == 429:
            return LLMRateLimited(f"the Anthropic API kept rate-limiting {where} through {attempts} attempts "
                                  f"({waited:.2f} s of back-off): {said}. Wait a while and rerun: the answers "
                                  "already received are cached and are not asked for again. A lower --concurrency "
                                  "(drift-conformance run) sends fewer calls at once.")
        if failure.retriable:
            return LLMUnavailable(f"the Anthropic API did not answer {where} through {attempts} attempts "
                                  f"({waited:.2f} s of back-off): {said}. Rerun later; cached answers are kept.")
        if failure.status in (401, 403):
            return LLMConfigError(f"the Anthropic API refused the key in {KEY_VARIABLE} for {where}: {said}. "
                                  f"Check {KEY_VARIABLE} (and {BASE_URL_VARIABLE}).")
        return LLMRequestError(f"the Anthropic API refused the request to {where}: {said}")


def client_from_env(model: str, *, cache_dir: str | Path | None = None, budget_usd: float | None = None,
                    allow_alias: bool = False, **kwargs) -> AnthropicClient:
    """Convenience: an :class:`AnthropicClient` with a cache folder and a budget in USD."""
    return AnthropicClient(model, allow_alias=allow_alias, cache=cache_dir,
                           budget=Budget(budget_usd), **kwargs)

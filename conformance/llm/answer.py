"""The answer model: one pinned LLM answers every probe from the budgeted context (guide §5).

The opt-in replacement of the hermetic reader (``--answer-model``). Every system's probe gets
the same system prompt (:data:`ANSWER_SYSTEM_PROMPT`, recorded in the receipt with its
SHA-256), the same user-message layout (:func:`render_question`), temperature 0 and the same
output cap; only the in-budget context lines differ, and they are rendered exactly as the
hermetic reader sees them (:func:`conformance.answer.reader.render_line`). Hits past the
budget never reach the model.

The reply is reduced to an answer by :func:`parse_answer`: the first non-empty line, without
quotes or a trailing full stop. A closed probe's answer is mapped onto its answer domain (an
option copied verbatim, else the option the reply names last, else the domain's "unknown";
a choice id the reply names); a reply naming nothing of the domain is kept verbatim and
scores as wrong. The raw reply is recorded when it differs.

Time to first token of each call is the reader latency fed to TTFRT, dialectic speed and
LPS (DRIFT §7.8); a cached call keeps its original timings, so a cached rerun reports the
same latencies.

``--repeat R`` keeps one response cache per replicate (``<cache>/r<R>``): replicate 2 asks
the model afresh, so the noise floor covers the whole answer-and-judge pipeline, and a
rerun of either replicate is served from its own cache.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from conformance.answer.reader import UNKNOWN, render_line
from conformance.contract.answer_text import last_option_in

__all__ = ["ANSWER_SYSTEM_PROMPT", "ANSWER_PROMPT_VERSION", "DEFAULT_ANSWER_MAX_TOKENS", "AnswerModel",
           "render_question", "parse_answer", "prompt_sha256"]

ANSWER_PROMPT_VERSION = "1"
DEFAULT_ANSWER_MAX_TOKENS = 64
"""Output cap per answer, tokens: a short answer fits; a model that rambles is cut (stop
reason ``max_tokens``, recorded)."""

ANSWER_SYSTEM_PROMPT = """\
You are the reader of a memory benchmark. A memory system returned the excerpts below for a \
question about a long-running conversation; the original transcripts no longer exist.
Answer from the excerpts alone, never from general knowledge.
- Reply with the answer only: a short phrase on one line, no explanation, no sentence around it.
- If the excerpts do not say, reply exactly: unknown
- Each excerpt carries the time it was said in parentheses. When facts changed over time, the \
latest statement is the current one. Work out relative times from the time the question is asked.
- When options are listed, reply with exactly one option, copied verbatim.
- When choices are listed, reply with the id of exactly one choice."""


def prompt_sha256(system_prompt: str = ANSWER_SYSTEM_PROMPT) -> str:
    """Hex SHA-256 of a prompt's UTF-8 text (the receipt binds a run to its prompt by it)."""
    return hashlib.sha256(system_prompt.encode("utf-8")).hexdigest()


def render_question(probe, context) -> str:
    """The user message for one probe: when and by whom it is asked, the in-budget context
    lines in rank order (``[rank] (timestamp) text``), the question, and its answer domain.

    ``probe``: a fixture :class:`~conformance.contract.fixture.Probe`; ``context``: the
    :class:`~conformance.answer.reader.ContextHit` list of :func:`build_context`.
    """
    lines = [f"Question asked at: {probe.asked_at}", f"Asked by: {probe.asked_by}", "",
             "Memory excerpts (most relevant first):"]
    shown = [render_line(h.rank, h.timestamp, h.text) for h in context if h.in_budget]
    lines.extend(shown or ["(none: the memory returned nothing)"])
    lines += ["", f"Question: {probe.query}"]
    if getattr(probe, "choices", None):
        lines.append("Choices (reply with one id):")
        lines.extend(f"- {c.choice_id}: {c.text}" for c in probe.choices)
    elif probe.options:
        lines.append("Options (reply with one, verbatim): " + " | ".join(probe.options))
    return "\n".join(lines)


_QUOTES = "\"'`“”‘’"


def _first_line(text: str) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    line = re.sub(r"^(answer|final answer)\s*:\s*", "", line, flags=re.IGNORECASE)
    line = line.strip().strip(_QUOTES).strip()
    return line[:-1].rstrip() if line.endswith(".") and not line.endswith("..") else line


def parse_answer(probe, text: str) -> str:
    """The answer a reply gives to ``probe`` (see the module docstring for the rules).

    Free-form probes: the first non-empty line (at most 500 characters), quotes and a
    trailing full stop removed; an empty reply gives "unknown".
    """
    line = _first_line(text)[:500]
    choices = list(getattr(probe, "choices", None) or [])
    if choices:
        ids = [c.choice_id for c in choices]
        exact = next((i for i in ids if i.casefold() == line.casefold()), None)
        return exact or last_option_in(text, ids) or line
    options = list(probe.options or [])
    if options:
        exact = next((o for o in options if o.strip().casefold() == line.casefold()), None)
        if exact is not None:
            return exact
        named = last_option_in(text, options)
        if named is not None:
            return named
        return next((o for o in options if o.strip().casefold() == UNKNOWN), line)
    return line or UNKNOWN


class PerReplicate:
    """One client per replicate (1-based), made on first use by ``self.client_for``, so each
    replicate keeps its own response cache (see :func:`replicate_cache`)."""

    def client(self, replicate: int):
        clients = self.__dict__.setdefault("_clients", {})
        if replicate not in clients:
            clients[replicate] = self.client_for(replicate)
        return clients[replicate]


@dataclass
class AnswerModel(PerReplicate):
    """Answers probes with one pinned model; one client (and response cache) per replicate.

    ``client_for(replicate) -> AnthropicClient`` builds the client of a replicate (1-based);
    all share one :class:`~drift_sdk.llm.budget.Budget`. ``answer`` raises what the
    client raises (:class:`~drift_sdk.llm.errors.BudgetSpent`, rate limits, ...): the
    runner stops the run cleanly on them, they are not a memory system's fault.
    """

    model: str
    client_for: Callable[[int], object]
    max_tokens: int = DEFAULT_ANSWER_MAX_TOKENS
    system_prompt: str = ANSWER_SYSTEM_PROMPT

    def describe(self) -> dict:
        """What the receipt records about the answer model."""
        return {"model": self.model, "prompt": self.system_prompt, "prompt_sha256": prompt_sha256(self.system_prompt),
                "prompt_version": ANSWER_PROMPT_VERSION, "temperature": 0, "max_tokens": self.max_tokens}

    def answer(self, probe, context, replicate: int = 1) -> tuple[str, dict]:
        """(answer, call record) for one probe; the record holds the served model id, tokens,
        ``ttft_ms``/``total_ms`` (milliseconds), ``cost_usd``, ``cached``, ``stop_reason``
        and ``raw`` (the reply, when it differs from the answer)."""
        reply = self.client(replicate).complete(self.system_prompt, render_question(probe, context),
                                                max_tokens=self.max_tokens, temperature=0)
        answer = parse_answer(probe, reply.text)
        call = {"served_model": reply.model, "requested_model": reply.requested_model,
                "input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens,
                "ttft_ms": round(reply.ttft_ms, 3), "total_ms": round(reply.total_ms, 3),
                "cost_usd": reply.cost_usd, "cached": reply.cached, "stop_reason": reply.stop_reason}
        if reply.text.strip() != answer:
            call["raw"] = reply.text[:2000]
        return answer, call


def replicate_cache(root: Path, replicate: int) -> Path:
    """The response cache folder of one replicate (``<root>/r<replicate>``)."""
    return Path(root) / f"r{int(replicate)}"

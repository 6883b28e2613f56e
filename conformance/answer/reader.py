"""The fixed context budget and the deterministic reader.

Every system gets the same context: hits in the order the backend ranked them,
each rendered as one line and counted with tiktoken; the first hit that does not
fit ends the context (guide §5.2). The reader then answers a closed-domain probe
from that context only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone

from conformance.answer.tokens import DEFAULT_ENCODING, count_tokens

UNKNOWN = "unknown"
_OLDEST = datetime.min.replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class ContextHit:
    """One retrieved hit as the harness saw it."""

    rank: int
    """1-based rank in the backend's answer."""
    text: str
    score: float
    source_ids: tuple[str, ...]
    timestamp: str
    tokens: int
    """Tokens of the rendered context line (see :func:`render_line`)."""
    in_budget: bool
    """True when the line made it into the budgeted context."""


def render_line(rank: int, timestamp: str, text: str) -> str:
    """The context line for one hit: ``[rank] (timestamp) text``."""
    return f"[{rank}] ({timestamp or 'unknown time'}) {text}"


def build_context(hits, budget_tokens: int, encoding: str = DEFAULT_ENCODING) -> list[ContextHit]:
    """Mark which hits fit a budget of ``budget_tokens`` tokens, in rank order.

    ``hits`` are objects with ``text``, ``score``, ``source_ids`` and ``timestamp``.
    Once one hit does not fit, no later hit enters (cut by rank, the same way
    for every system).
    """
    out: list[ContextHit] = []
    used, open_ = 0, True
    for rank, hit in enumerate(hits, start=1):
        tokens = count_tokens(render_line(rank, hit.timestamp, hit.text), encoding)
        fits = open_ and used + tokens <= budget_tokens
        if fits:
            used += tokens
        else:
            open_ = False
        out.append(ContextHit(rank=rank, text=hit.text, score=float(hit.score),
                              source_ids=tuple(hit.source_ids), timestamp=hit.timestamp,
                              tokens=tokens, in_budget=fits))
    return out


def context_tokens(context: list[ContextHit]) -> int:
    """Tokens inside the budget."""
    return sum(h.tokens for h in context if h.in_budget)


def _parse_time(value: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return _OLDEST
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def _pattern(option: str) -> re.Pattern[str]:
    # Whole words or phrases only: "Rome" must not match inside "Romeo".
    return re.compile(r"(?<!\w)" + re.escape(option) + r"(?!\w)", re.IGNORECASE)


def last_option_in(text: str, options: list[str]) -> str | None:
    """The option whose last mention ends latest in ``text``; None if none is named."""
    best, best_pos = None, -1
    for option in options:
        for match in _pattern(option).finditer(text):
            if match.end() > best_pos:
                best, best_pos = option, match.end()
    return best


def answer_closed(options: list[str], context: list[ContextHit]) -> str:
    """Answer a closed-domain probe from the budgeted context.

    Rule: among in-budget hits that name some option (other than "unknown"), the
    newest by timestamp wins (ties: the better rank); within that hit, the option
    mentioned last wins. No hit names an option: the "unknown" option.
    """
    unknown = next((o for o in options if o.strip().casefold() == UNKNOWN), UNKNOWN)
    candidates = [o for o in options if o.strip().casefold() != UNKNOWN]
    best_key, best_answer = None, None
    for hit in context:
        if not hit.in_budget:
            continue
        named = last_option_in(hit.text, candidates)
        if named is None:
            continue
        key = (_parse_time(hit.timestamp), -hit.rank)
        if best_key is None or key > best_key:
            best_key, best_answer = key, named
    return best_answer if best_answer is not None else unknown

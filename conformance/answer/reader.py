"""The fixed context budget and the deterministic reader.

Every system gets the same context: hits in the order the backend ranked them,
each rendered as one line and counted with tiktoken; the first hit that does not
fit ends the context (guide §5.2). The reader then answers the probe from that
context only, with one fixed rule per answer form (:func:`answer_probe`): closed
options (:func:`answer_closed`), multiple choice (:func:`answer_choice`) and date
arithmetic (:func:`answer_temporal`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from fractions import Fraction

from conformance.answer.tokens import DEFAULT_ENCODING, count_tokens
from conformance.contract.answer_text import last_option_in, option_pattern

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


def _timestamp(value: str | None) -> datetime | None:
    """The parsed time of a hit, or None when it has none or it does not parse.

    A time without an offset is read as UTC (as :func:`_parse_time` does).
    """
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def _is_unknown(value: str | None) -> bool:
    return value is None or value.strip().casefold() == UNKNOWN


def determine_attributes(domains: dict[str, list[str]], context: list[ContextHit]) -> dict[str, str]:
    """Each attribute's value read from the budgeted context, or "unknown".

    Per attribute, exactly :func:`answer_closed` over that attribute's domain: the
    newest in-budget hit naming one of its values wins (ties: the better rank), and
    within that hit the value mentioned last. Attributes are read independently.
    """
    out: dict[str, str] = {}
    for attribute, values in domains.items():
        answer = answer_closed(list(values), context)
        out[attribute] = UNKNOWN if _is_unknown(answer) else answer
    return out


def answer_choice(choices, domains: dict[str, list[str]] | None, context: list[ContextHit]) -> str | None:
    """Answer a multiple-choice action probe (DRIFT §6.1 action probes): a ``choice_id``.

    Rule:

    1. Determine every attribute of ``domains`` with :func:`determine_attributes` (the
       same newest-hit / last-mention rule as :func:`answer_closed`); an attribute no
       in-budget hit names is "unknown".
    2. A choice's score is the number of its ``tags`` whose attribute was determined
       and whose value equals the determined value (case-insensitive). A tag on an
       attribute determined as "unknown", or absent from ``domains``, agrees with
       nothing.
    3. The highest score wins. When several choices share it (a zero score is always
       shared unless there is a single choice) the ``default`` choice wins if it is
       among them, otherwise the first of them in listed order. In particular, when
       nothing agrees (an amnesiac with an empty context) the answer is the default
       choice: fixed and reproducible, never random.

    ``choices`` are objects with ``choice_id``, ``tags`` and ``default`` (see
    :class:`conformance.contract.fixture.Choice`). None when there are no choices.
    """
    choices = list(choices or [])
    if not choices:
        return None
    known = {attr: value.strip().casefold()
             for attr, value in determine_attributes(domains or {}, context).items()
             if not _is_unknown(value)}

    def score(choice) -> int:
        return sum(1 for attr, value in (choice.tags or {}).items()
                   if attr in known and value.strip().casefold() == known[attr])

    scores = [score(c) for c in choices]
    top = max(scores)
    tied = [c for c, s in zip(choices, scores) if s == top]
    if len(tied) == 1:
        return tied[0].choice_id
    default = next((c for c in tied if c.default), None)
    return (default or tied[0]).choice_id


#: Length of one unit in seconds. A month is a twelfth of a Julian year,
#: 365.25 / 12 = 30.4375 days (= 2 629 800 s, exact in seconds and in binary).
UNIT_SECONDS: dict[str, int] = {"days": 86_400, "weeks": 7 * 86_400, "months": 2_629_800}

_LEADING_NUMBER = re.compile(r"^\s*(\d+(?:[.,]\d+)?|[.,]\d+)")


def option_amount(option: str) -> Fraction | None:
    """The leading number of an amount option ("3 days" -> 3, "1.5 weeks" -> 3/2).

    Leading whitespace is skipped; a decimal comma is read as a point. None when the
    option does not start with a number (e.g. "unknown", "a week").
    """
    match = _LEADING_NUMBER.match(option)
    if match is None:
        return None
    return Fraction(match.group(1).replace(",", "."))


def _elapsed_microseconds(later: datetime, earlier: datetime) -> int:
    delta = later - earlier
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def answer_temporal(target: str, unit: str, options: list[str], asked_at: str,
                    context: list[ContextHit]) -> str:
    """Answer a date-arithmetic probe: how long before ``asked_at`` ``target`` was said.

    Rule:

    1. Among in-budget hits whose text names ``target`` (whole word or phrase,
       case-insensitive, as :func:`last_option_in`), take the EARLIEST by timestamp;
       hits without a parseable timestamp are ignored. None: the "unknown" option.
    2. The elapsed time is ``asked_at`` minus that timestamp, in ``unit``: days =
       86 400 s, weeks = 7 days, months = 30.4375 days (:data:`UNIT_SECONDS`).
       Computed exactly (no float rounding). It is not clamped: a hit stamped after
       ``asked_at`` gives a negative amount.
    3. The answer is the option whose leading number (:func:`option_amount`) is
       closest to the elapsed amount; a tie goes to the smaller number, then to the
       option listed first. Options without a leading number other than "unknown"
       are never chosen. No numeric option (or ``asked_at`` does not parse): "unknown".
    """
    unknown = next((o for o in options if _is_unknown(o)), UNKNOWN)
    asked = _timestamp(asked_at)
    if asked is None or unit not in UNIT_SECONDS:
        return unknown
    pattern = option_pattern(target.strip())
    earliest: datetime | None = None
    for hit in context:
        if not hit.in_budget or pattern.search(hit.text) is None:
            continue
        when = _timestamp(hit.timestamp)
        if when is not None and (earliest is None or when < earliest):
            earliest = when
    if earliest is None:
        return unknown
    elapsed = Fraction(_elapsed_microseconds(asked, earliest), UNIT_SECONDS[unit] * 1_000_000)
    best_key, best = None, None
    for option in options:
        amount = option_amount(option)
        if amount is None:
            continue
        key = (abs(amount - elapsed), amount)
        if best_key is None or key < best_key:
            best_key, best = key, option
    return best if best is not None else unknown


def answer_probe(probe, context: list[ContextHit]) -> str | None:
    """The reader's answer to one probe, dispatched on its answer form.

    ``choices`` -> :func:`answer_choice` (a ``choice_id``); ``temporal`` ->
    :func:`answer_temporal` over ``options``; non-empty ``options`` ->
    :func:`answer_closed`; otherwise (free-form, imported data) None, scored by
    retrieval only.
    """
    if getattr(probe, "choices", None):
        return answer_choice(probe.choices, getattr(probe, "domains", None), context)
    temporal = getattr(probe, "temporal", None)
    if temporal is not None:
        return answer_temporal(temporal.target, temporal.unit, list(probe.options or []),
                               probe.asked_at, context)
    if probe.options:
        return answer_closed(probe.options, context)
    return None

"""A local copy of the deterministic reader's rules, applied to messages (the gold evidence).

closed options: the newest message naming any option wins, within it the option named
last; none -> "unknown". choices: each attribute of ``domains`` gets its value by the
closed rule; the choice whose tags all agree wins; none -> the default choice.
temporal: the earliest message naming the target; asked_at minus its time in the unit;
the closest amount; none -> "unknown".
"""

from __future__ import annotations

import re
from datetime import datetime

UNKNOWN = "unknown"
DAYS = {"days": 1, "weeks": 7, "months": 30}


def positions(text: str, phrase: str) -> list[int]:
    return [m.end() for m in re.finditer(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)", text, re.IGNORECASE)]


def when(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def closed(options: list[str], hits) -> str:
    candidates = [o for o in options if o != UNKNOWN]
    for hit in sorted(hits, key=lambda m: m.timestamp, reverse=True):
        found = [(max(positions(hit.text, o)), o) for o in candidates if positions(hit.text, o)]
        if found:
            return max(found)[1]
    return UNKNOWN


def choose(choices, domains: dict[str, list[str]], hits, month_days: float = 30) -> str:
    known = {attr: closed(values, hits) for attr, values in domains.items()}
    known = {k: v for k, v in known.items() if v != UNKNOWN}
    agreeing = [c for c in choices if c.tags and all(known.get(k) == v for k, v in c.tags.items())]
    if len(agreeing) == 1:
        return agreeing[0].choice_id
    return next(c.choice_id for c in choices if c.default)


def choose_most(choices, domains, hits) -> str:
    """The lenient reading: most agreeing tags, at least one; else the default."""
    known = {attr: closed(values, hits) for attr, values in domains.items()}
    scored = [(sum(known.get(k) == v for k, v in c.tags.items()), -i, c.choice_id) for i, c in enumerate(choices)]
    best = max(scored)
    return best[2] if best[0] > 0 else next(c.choice_id for c in choices if c.default)


def temporal(target: str, unit: str, asked_at: str, options: list[str], hits, month_days: float = 30) -> str:
    naming = [h for h in hits if positions(h.text, target)]
    if not naming:
        return UNKNOWN
    first = min(naming, key=lambda m: m.timestamp)
    days = (when(asked_at) - when(first.timestamp)).total_seconds() / 86400
    amount = days / (month_days if unit == "months" else DAYS[unit])
    amounts = [(abs(int(o.split()[0]) - amount), o) for o in options if o != UNKNOWN]
    return min(amounts)[1]

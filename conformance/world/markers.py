"""Session markers: one innocuous reference code per session, for measuring selectivity
without ``Snapshot`` (DRIFT §7.2).

Every generated session, whatever its tier, carries exactly one marker: a code of two
capital letters and four digits (``KX4821``) in a short sentence appended to a shared
message of the session ("Filed as KX4821."). The fixture header lists the codes per
session (:attr:`conformance.contract.fixture.HeaderLine.markers`); after a scenario the
runner can ask ``Retrieve(code)`` per session, and a hit containing the code says the
memory kept (something of) that session.

So that a marker tells nothing about its session's tier:

* codes and templates come from their own PRNG stream, drawn per session index before
  any tier is known (the rest of the world is drawn exactly as without markers);
* the host is chosen by one rule for all tiers: the last shared message, unless that one
  carries the session's event (evidence), then the latest shared message before it that
  does not; only when every shared message is evidence does the sentence go on the last
  one (it is a separate sentence and names no value, so what the message says is unchanged).

Codes avoid ``I`` and ``O`` (read as digits) and never start with a zero digit; none of
the static text of the generator has that shape, so a code collides with no other word.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace
from typing import Sequence

from conformance.world import templates as T
from conformance.world.synthesis import Turn

LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ"
CODE_PATTERN = re.compile(r"(?<!\w)[A-Z]{2}[0-9]{4}(?!\w)")
"""The shape of a marker code (whole word), e.g. ``KX4821``."""

#: The sentences a marker is said in; each names nothing but the code (no value, no target,
#: no entity, no "unknown") and reads the same from a user, an assistant, an agent or a tool.
TEMPLATES = (
    "Ref {code}.",
    "Logging this under {code}.",
    "Filed as {code}.",
    "(ticket {code})",
    "Reference: {code}.",
)


@dataclass(frozen=True)
class Marker:
    code: str
    template: int
    """Index into :data:`TEMPLATES`."""

    @property
    def sentence(self) -> str:
        return TEMPLATES[self.template].format(code=self.code)


def draw_markers(rng: random.Random, sessions: int) -> list[Marker]:
    """One marker per session index, codes unique within the scenario."""
    seen: set[str] = set()
    out = []
    for _ in range(sessions):
        while True:
            code = rng.choice(LETTERS) + rng.choice(LETTERS) + str(rng.randrange(1000, 10000))
            if code not in seen:
                break
        seen.add(code)
        out.append(Marker(code, rng.randrange(len(TEMPLATES))))
    return out


def host_index(turns: Sequence[Turn]) -> int:
    """Which turn carries the marker (see the module docstring); -1 when no turn is shared."""
    shared = [i for i, t in enumerate(turns) if t.scope == "shared"]
    if not shared:
        return -1
    plain = [i for i in shared if not turns[i].evidence]
    return plain[-1] if plain else shared[-1]


def place(turns: Sequence[Turn], marker: Marker) -> list[Turn]:
    """``turns`` with the marker sentence appended to the host turn (a new list; turns are frozen).

    Raises:
        ValueError: no shared turn to carry it.
    """
    at = host_index(turns)
    if at < 0:
        raise ValueError("a session without a shared message cannot carry a marker")
    out = list(turns)
    out[at] = replace(turns[at], text=T.add_tail(turns[at].text, marker.sentence))
    return out

"""The fixture format: what an adapter may see (``fixtures/<scenario>.jsonl``).

A fixture is JSON Lines: one ``header`` line, then ``session`` lines in time order
and ``checkpoint`` lines placed after the session they follow. It holds no answers,
tiers or latent state; a gold key anywhere in a fixture is a validation error
(:data:`GOLD_KEYS`). ``Session`` and ``Message`` mirror the proto messages
``drift.v1.Session`` and ``drift.v1.Message`` field for field (a parity test keeps
them in step).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Literal, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from conformance.contract.limits import MAX_MESSAGE_TEXT_CHARS, MAX_QUERY_CHARS

FIXTURE_SCHEMA_VERSION = "1"

#: Keys that belong to gold and must never appear anywhere in a fixture line.
GOLD_KEYS = frozenset({
    "answer", "answers", "gold", "gold_answer", "accepted", "stale", "stale_answers",
    "evidence", "evidence_ids", "tier", "tiers", "latent", "profile", "correct_option",
    "canary", "canaries", "snapshot", "snapshots", "adversarial_answer", "events",
})

#: Ids become file names and namespaces: letters, digits, ``._:-`` only, no ``..``.
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:\-]{0,127}$"

Id = Annotated[str, Field(pattern=ID_PATTERN)]
Paradigm = Literal["user_assistant", "coding_agent", "crawler_agent", "multi_peer"]
HorizonName = Literal["short", "medium", "long"]
Role = Literal["user", "assistant", "agent", "tool", "system"]
Scope = Literal["shared", "private"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_time(value: str) -> str:
    """Accept RFC 3339 / ISO 8601 with an explicit offset; keep the text as given."""
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValueError(f"not an ISO 8601 time: {value!r}") from exc
    if parsed.tzinfo is None:
        raise ValueError(f"time without a UTC offset: {value!r}")
    return value


Timestamp = Annotated[str, AfterValidator(_check_time)]
"""An RFC 3339 time string with an explicit offset, kept verbatim."""


class Message(_Strict):
    """One turn of a session; ``message_id`` is what provenance refers to."""

    message_id: Id
    """Unique within the scenario."""
    author: Id
    """Entity id of the speaker."""
    role: Role
    text: str = Field(max_length=MAX_MESSAGE_TEXT_CHARS)
    timestamp: Timestamp
    """RFC 3339, simulated time."""
    scope: Scope = "shared"
    """``shared``: said openly, part of the scenario's common record that any entity may
    come to know (a later joiner too); ``private``: the author's alone, never to be
    recalled by another entity (DRIFT §4.2)."""


class Session(_Strict):
    """One whole session, the unit ``Store`` ingests."""

    session_id: Id
    index: int = Field(ge=0)
    """0-based position in the trajectory."""
    time: Timestamp
    """RFC 3339, simulated start time."""
    participants: list[Id]
    messages: list[Message]


class EntityRef(_Strict):
    entity_id: Id
    type: str
    """Entity type, e.g. ``human``, ``assistant_agent``, ``observer``."""


class HorizonPhase(_Strict):
    """One phase of the trajectory (DRIFT §3.4): its session count and time gap."""

    name: HorizonName
    sessions: int = Field(ge=1)
    session_gap_hours: float = Field(gt=0)


class HeaderLine(_Strict):
    kind: Literal["header"] = "header"
    schema_version: str = FIXTURE_SCHEMA_VERSION
    scenario_id: Id
    paradigm: Paradigm
    source: str
    """Where the corpus came from, e.g. ``drift-generator/1`` or ``locomo``."""
    horizons: list[HorizonPhase]
    entities: list[EntityRef]
    holdout: bool = False
    """Held out of default runs and of the CI gate; scored with ``--include-holdout``."""
    splits: list[str] = []
    """Named subsets this scenario belongs to, e.g. ``ci`` (the small split tests and CI run)."""
    free_form: bool = False
    """True when probes have no closed answer domain (imported datasets): answer
    accuracy then needs an answer model and only retrieval is scored hermetically."""
    markers: dict[Id, Annotated[str, Field(min_length=1, max_length=200)]] = {}
    """Session id -> that session's marker: a short code (e.g. ``KX4821``) said once, as a
    whole word, in a shared message of that session and nowhere else in the fixture.
    Public and not gold: every session has one, whatever its tier, in the same form and
    kind of place, so it tells nothing about which sessions matter. Used only by the
    runner's selectivity fallback for adapters without ``Snapshot`` (DRIFT §7.2): it
    retrieves each code and counts a session as stored when a hit contains it. Empty for
    imported datasets (no markers: that fallback is then unavailable)."""


class SessionLine(Session):
    kind: Literal["session"] = "session"


class Choice(_Strict):
    """One option of a multiple-choice action probe (DRIFT §6.1 action probes).

    ``tags`` say which latent value each choice is consistent with, in the public
    vocabulary of ``Probe.domains``; exactly one choice agrees with the ground truth
    (which one is gold). A reader that knows nothing picks the ``default`` choice.
    """

    choice_id: Id
    text: str = Field(min_length=1, max_length=2_000)
    tags: dict[str, str] = {}
    default: bool = False


class Temporal(_Strict):
    """A probe that needs date arithmetic: how long before ``asked_at`` the message
    naming ``target`` was said, in ``unit``; the options are amounts ("3 days")."""

    target: str = Field(min_length=1)
    unit: Literal["days", "weeks", "months"]


class Probe(_Strict):
    """A question at a checkpoint.

    Exactly one answer form: ``options`` (the public closed answer domain, "unknown"
    included), ``choices`` (multiple choice; ``domains`` gives each tagged attribute's
    public value domain), or none of them (free-form, imported data). ``temporal``
    marks an ``options`` probe answered by date arithmetic. Which answer is right is gold.
    """

    probe_id: Id
    asked_by: Id
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    asked_at: Timestamp
    options: list[str] | None = None
    choices: list[Choice] | None = None
    domains: dict[str, list[str]] | None = None
    temporal: Temporal | None = None

    @model_validator(mode="after")
    def _one_answer_form(self) -> "Probe":
        if self.options is not None and self.choices is not None:
            raise ValueError("a probe has either options or choices, not both")
        if self.choices is not None and sum(c.default for c in self.choices) != 1:
            raise ValueError("a multiple-choice probe needs exactly one default choice")
        if self.temporal is not None and self.options is None:
            raise ValueError("a temporal probe needs options (amounts such as '3 days')")
        return self


class CheckpointLine(_Strict):
    kind: Literal["checkpoint"] = "checkpoint"
    checkpoint_id: Id
    after_session: int = Field(ge=1)
    """Number of sessions stored before the probes are asked."""
    horizon: HorizonName
    """The horizon this checkpoint closes (DRIFT-C weights by it)."""
    probes: list[Probe]


FixtureLine = Annotated[Union[HeaderLine, SessionLine, CheckpointLine], Field(discriminator="kind")]

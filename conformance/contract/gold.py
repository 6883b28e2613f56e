"""The gold format: latent ground truth the adapter never sees (``gold/<scenario>.json``).

Read only by the scoring stage and by the harness-side ``oracle`` control. Nothing
that crosses the gRPC boundary is derived from it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from conformance.contract.fixture import Id

GOLD_SCHEMA_VERSION = "1"

Tier = Literal["signal", "soft", "noise"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GoldEvent(_Strict):
    """A latent event and the session that carries it (DRIFT §3.3)."""

    session_id: Id
    tier: Literal["signal", "soft"]
    kind: Literal["disclose", "change", "mention"]
    """``disclose``: a fact first stated; ``change``: a fact updated (revision);
    ``mention``: accumulating evidence for a preference (soft signal)."""
    entity: Id
    attribute: str
    old: str | None = None
    new: str
    message_ids: list[Id]
    """The messages that carry the event (evidence for probes about it)."""


class GoldProbe(_Strict):
    """The truth about one fixture probe."""

    probe_id: Id
    checkpoint_id: Id
    probe_type: str
    """``fact_recall``, ``negative_recall``, ``revision``; imported sets use their
    own categories (LoCoMo: ``multi_hop``, ``temporal``, ``open_domain``,
    ``single_hop``, ``adversarial``)."""
    subtype: str | None = None
    abstention: bool = False
    """The right answer is to decline ("unknown"); scored apart from the headline."""
    answer: str
    """The right option, or for multiple choice the right ``choice_id``."""
    accepted: list[str] = []
    """Further accepted spellings of ``answer``."""
    stale: list[str] = []
    """Answers that were true once and are not now (revision probes, DRIFT §7.3)."""
    evidence: list[Id] = []
    """Message ids that establish the answer."""
    attribute: str | None = None
    entity: Id | None = None
    """The entity the probe is about."""
    owner: Id | None = None
    """Canary probes: the entity the private fact belongs to (DRIFT §4.2)."""
    horizon: str | None = None
    """The horizon of the probe's checkpoint (DRIFT-C weights by it)."""


class GoldFile(_Strict):
    schema_version: str = GOLD_SCHEMA_VERSION
    scenario_id: Id
    source: str
    seed: int | None = None
    profiles: dict[str, dict[str, Any]] = {}
    """Latent profile per entity id at the start of the trajectory."""
    session_tiers: dict[str, Tier] = {}
    """Tier per session id; empty when the source does not say (imported data)."""
    events: list[GoldEvent] = []
    snapshots: dict[str, dict[str, dict[str, str]]] = {}
    """Ground truth per checkpoint id: entity id -> attribute -> value."""
    probes: list[GoldProbe] = Field(default_factory=list)

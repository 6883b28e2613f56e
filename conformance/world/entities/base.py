"""The typed entity factory (DRIFT §3.2): what every entity type provides.

An entity type is one subclass of :class:`EntityType` in its own module, plus one
line in :mod:`conformance.world.entities` that registers it. The type owns:

* ``spec_model``: the pydantic model of its YAML entry (discriminated on ``type``),
  including its profile fields;
* ``attributes``: its latent attributes, each with a value pool, a *kind* that decides
  which probes may ask about it, and the template lines that carry its events;
* ``event_kinds``: the names accepted in its ``event_distribution``, each mapped to
  the attributes that such an event changes;
* ``episodes``: one-off happenings (targets of temporal probes);
* :meth:`EntityType.snapshot`: its ground-truth representation at a checkpoint.

Template placeholders: ``{value}`` (disclose, mention), ``{old}``/``{new}`` (change;
``{old}`` always before ``{new}``, because the reader takes the option named last),
``{slot}`` (the attribute's instance, e.g. a module name), ``{me}`` (the speaker's id,
only in team decisions, where attribution needs it), ``{target}`` (episodes).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

#: Attribute kinds and the probe types that may ask about them.
KINDS = {
    "fact": ("fact_recall", "revision", "negative_recall"),
    "preference": ("fact_recall", "revision", "action", "negative_recall"),
    "constraint": ("fact_recall", "action", "negative_recall"),
    "style": ("action",),
    "relationship": ("relationship_recall",),
    "coverage": ("coverage",),
    "anti_pattern": ("anti_pattern",),
    "traversal": ("traversal",),
    "objective": ("objective_coherence", "fact_recall"),
    "decision": ("fact_recall", "attribution", "consistency", "handoff"),
}


class SpecModel(BaseModel):
    """Base of every entity's YAML model: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class AttributeDef:
    """One latent attribute an entity type can have.

    ``speaker``: ``self`` (the entity states it) or ``principal`` (the principal
    states it about the entity, e.g. an objective or an architectural override).
    ``slots``: instances (``coverage`` of each module); one attribute per chosen slot.
    ``progression``: changes move forward through the scenario pool (coverage, frontier).
    ``action``: the action-probe subtype that uses it, with ``choice`` the phrase
    describing an option tagged with a value.
    """

    name: str
    label: str
    pool: tuple[str, ...]
    kind: str
    lines: dict[str, tuple[str, ...]]
    queries: tuple[str, ...]
    changeable: bool = False
    speaker: str = "self"
    slots: tuple[str, ...] = ()
    progression: bool = False
    action: str | None = None
    choice: str | None = None
    acks: dict[str, tuple[str, ...]] = field(default_factory=dict)
    negative_ok: bool = False


@dataclass(frozen=True)
class ActionDef:
    """Wording of an action probe of one subtype (the options come from the attributes)."""

    subtype: str
    queries: tuple[str, ...]


@dataclass
class Attr:
    """One concrete attribute of one entity in one scenario (mutable latent state)."""

    key: str
    """Unique within the entity: ``employer`` or ``coverage:billing``."""
    defn: AttributeDef
    entity: str
    pool: list[str]
    """The scenario's closed answer domain for it (``unknown`` comes on top)."""
    slot: str | None = None
    value: str | None = None
    hidden: bool = False
    """Never disclosed (negative recall asks about it)."""
    secret: str | None = None
    """Canary: disclosed only privately; the id of the entity that later asks."""
    disclosed: bool = False
    held: list[str] = field(default_factory=list)
    statements: list[str] = field(default_factory=list)
    """Message ids stating the current value since it became current."""
    statement_sessions: list[int] = field(default_factory=list)
    changed_at: int | None = None
    """Session index of the latest change."""
    proposer: str | None = None
    """Decisions: who proposed the current value."""
    proposal_ids: list[str] = field(default_factory=list)
    first_session: int | None = None

    def text(self, template: str, **extra: str) -> str:
        return template.format(slot=self.slot or "", **extra)


class EntityType:
    """Base class of an entity type; subclasses set the class attributes."""

    name: ClassVar[str]
    spec_model: ClassVar[type[SpecModel]]
    voice: ClassVar[str] = "agent"
    """``human`` or ``agent``: picks filler lines and the message role."""
    role: ClassVar[str] = "agent"
    attributes: ClassVar[tuple[AttributeDef, ...]] = ()
    event_kinds: ClassVar[dict[str, tuple[str, ...]]] = {}
    episodes: ClassVar[tuple[str, ...]] = ()
    episode_lines: ClassVar[tuple[str, ...]] = ()
    actions: ClassVar[tuple[ActionDef, ...]] = ()
    hidden_count: ClassVar[int] = 0
    slot_count: ClassVar[int] = 2
    pool_size: ClassVar[int] = 6

    def __init__(self, spec: SpecModel):
        self.spec = spec

    # -- profile -----------------------------------------------------------
    def event_distribution(self) -> dict[str, float]:
        """Weights of event kinds (the YAML's, else uniform over the type's kinds)."""
        given = dict(getattr(self._profile(), "event_distribution", {}) or {})
        return given or {kind: 1.0 for kind in self.event_kinds}

    def _profile(self) -> Any:
        return getattr(self.spec, "profile", None)

    def style(self, rng: random.Random) -> tuple[str, str]:
        """(formality, verbosity); agents default to formal."""
        return ("formal", rng.choice(["terse", "chatty"]))

    def latent_profile(self) -> dict[str, Any]:
        """The YAML profile fields, for the gold file."""
        return self.spec.model_dump(mode="json", exclude={"id", "type"}, exclude_none=True)

    # -- attributes ----------------------------------------------------------
    def make_attributes(self, rng: random.Random, entity_id: str) -> list[Attr]:
        """Draw this entity's attributes: slots, scenario pools, starting values, hidden ones."""
        out: list[Attr] = []
        for defn in self.attributes:
            slots = rng.sample(list(defn.slots), min(self.slot_count, len(defn.slots))) if defn.slots else [None]
            for slot in slots:
                pool = rng.sample(list(defn.pool), min(self.pool_size, len(defn.pool)))
                if defn.progression:
                    pool = [v for v in defn.pool if v in pool]  # keep the natural order
                key = f"{defn.name}:{slot}" if slot else defn.name
                attr = Attr(key=key, defn=defn, entity=entity_id, pool=pool, slot=slot)
                attr.value = pool[0] if defn.progression else rng.choice(pool)
                attr.held = [attr.value]
                out.append(attr)
        candidates = [a for a in out if a.defn.negative_ok]
        for attr in rng.sample(candidates, min(self.hidden_count, len(candidates))):
            attr.hidden = True
        return out

    def change_weights(self) -> dict[str, float]:
        """Attribute name -> weight of being the one a signal event changes."""
        weights: dict[str, float] = {}
        for kind, weight in self.event_distribution().items():
            names = self.event_kinds.get(kind, ())
            for name in names:
                weights[name] = weights.get(name, 0.0) + weight / len(names)
        return weights

    # -- ground truth --------------------------------------------------------
    def snapshot(self, attrs: list[Attr], world: Any) -> dict[str, str]:
        """Ground truth at a checkpoint: the current value of every disclosed attribute."""
        return {a.key: a.value for a in attrs if a.disclosed and a.value is not None}


REGISTRY: dict[str, type[EntityType]] = {}


def register(cls: type[EntityType]) -> type[EntityType]:
    """Class decorator: make ``cls`` available under ``cls.name``."""
    if cls.name in REGISTRY:
        raise ValueError(f"entity type {cls.name!r} registered twice")
    REGISTRY[cls.name] = cls
    return cls

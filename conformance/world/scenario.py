"""The scenario language (DRIFT §3.1): one YAML file -> one :class:`ScenarioSpec`.

Horizon decision. In the ``horizon`` block each phase's ``sessions`` number is the
session at which that phase *ends*, counted from the start of the trajectory
(cumulative, 1-based): the spec's example ``short: 30, medium: 200, long: 1000`` means
sessions 1–30 are short, 31–200 medium and 201–1000 long. That is the only reading
under which the example's own checkpoints (after 30, 200 and 1000 sessions) close
their horizons. A checkpoint's horizon is the phase its last stored session falls in
(so ``after_session: 30`` closes ``short``). Each phase has its own gap between
sessions (``session_gap_hours`` or ``session_gap_days``, exactly one). The fixture
header lists every phase with the number of sessions *in* it (30, 170, 800).

Sessions in ``topology`` ranges are 0-based, inclusive, ``-1`` meaning the last
session. When ranges overlap, the later entry wins for the sessions it covers.

``probe_types`` of a checkpoint accepts concrete probe types (``fact_recall``,
``canary``, ...) and the family names of DRIFT §6 (``recall``, ``action``,
``revision``, ``frontier``, ``multi_peer``), see :data:`PROBE_FAMILIES`.

Entity entries are a discriminated union on ``type``, built from the entity
registry (:mod:`conformance.world.entities`): each type owns its YAML model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from conformance.contract.fixture import Id, Paradigm
from conformance.contract.limits import load_yaml
from conformance.errors import DriftError
from conformance.world.entities import REGISTRY

PROBE_FAMILIES: dict[str, tuple[str, ...]] = {
    "recall": ("fact_recall", "relationship_recall", "temporal_recall", "negative_recall"),
    "action": ("action",),
    "revision": ("revision",),
    "frontier": ("coverage", "anti_pattern", "traversal", "objective_coherence"),
    "multi_peer": ("attribution", "canary", "consistency", "handoff"),
}
PROBE_TYPES: tuple[str, ...] = tuple(t for family in PROBE_FAMILIES.values() for t in family)

#: Version of the scenario file format (``schema/scenario.schema.json``'s ``x-schema-version``).
#: Bump it on a breaking change and add ``schema/history/scenario.v<version>.json``.
SCENARIO_SCHEMA_VERSION = "1"

PHASES = ("short", "medium", "long")
#: Where each horizon's phase may end (DRIFT §3.4: short 2–50, medium 50–500, long 500–5000 sessions).
PHASE_ENDS = {"short": (2, 50), "medium": (50, 500), "long": (500, 5000)}
_FRONTIER_TYPES = {"coding_agent", "crawler_agent", "tool_agent"}


def _unproducible(name: str, paradigm: str, entity_types: set[str]) -> str | None:
    """What a scenario lacks to produce probe type or family ``name`` (None: it can)."""
    if name in ("frontier", *PROBE_FAMILIES["frontier"]) and not entity_types & _FRONTIER_TYPES:
        return f"an entity of type {sorted(_FRONTIER_TYPES)}"
    if name == "attribution" and paradigm not in ("coding_agent", "multi_peer"):
        return "paradigm coding_agent or multi_peer"
    if name in ("multi_peer", "canary", "consistency", "handoff") and paradigm != "multi_peer":
        return "paradigm multi_peer"
    return None


class ScenarioError(DriftError, ValueError):
    """A scenario file is invalid; ``str()`` names the file, the field path and what was expected."""

    def __init__(self, path: Path | str, field: str, message: str):
        self.path, self.field = str(path), field
        super().__init__(f"{self.path}: {field}: {message}")


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PhaseSpec(_Spec):
    """One horizon phase: the session it ends at (cumulative) and the gap between sessions."""

    sessions: int = Field(ge=1)
    session_gap_hours: float | None = Field(default=None, gt=0)
    session_gap_days: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _one_gap(self) -> "PhaseSpec":
        if (self.session_gap_hours is None) == (self.session_gap_days is None):
            raise ValueError("give exactly one of session_gap_hours or session_gap_days")
        return self

    @property
    def gap_hours(self) -> float:
        return self.session_gap_hours if self.session_gap_hours is not None else self.session_gap_days * 24


class HorizonSpec(_Spec):
    short: PhaseSpec | None = None
    medium: PhaseSpec | None = None
    long: PhaseSpec | None = None

    @model_validator(mode="after")
    def _ordered(self) -> "HorizonSpec":
        ends = [(name, getattr(self, name).sessions) for name in PHASES if getattr(self, name) is not None]
        if not ends:
            raise ValueError("give at least one phase: short, medium or long")
        for name, end in ends:
            low, high = PHASE_ENDS[name]
            if not low <= end <= high:
                raise ValueError(f"{name}.sessions: {end} is outside the {name} horizon ({low}-{high} sessions, "
                                 "DRIFT §3.4)")
        for (a, end_a), (b, end_b) in zip(ends, ends[1:]):
            if end_b <= end_a:
                raise ValueError(f"{b}.sessions ({end_b}) must be greater than {a}.sessions ({end_a}): "
                                 "each phase's sessions is the session it ends at")
        return self

    def phases(self) -> list[tuple[str, int, int, float]]:
        """(name, first session, last session, gap hours), sessions 1-based inclusive."""
        out, start = [], 1
        for name in PHASES:
            phase = getattr(self, name)
            if phase is not None:
                out.append((name, start, phase.sessions, phase.gap_hours))
                start = phase.sessions + 1
        return out

    @property
    def total(self) -> int:
        return self.phases()[-1][2]

    def horizon_of(self, session_number: int) -> str:
        """The phase a 1-based session number falls in."""
        for name, first, last, _ in self.phases():
            if first <= session_number <= last:
                return name
        raise ValueError(f"session {session_number} lies outside the horizon (1..{self.total})")


class TopologySpec(_Spec):
    session_range: tuple[int, int]
    active: list[Id] = Field(min_length=1)
    pattern: Literal["linear", "broadcast", "mesh", "hierarchical", "async"] = "linear"

    @field_validator("session_range")
    @classmethod
    def _range(cls, value: tuple[int, int]) -> tuple[int, int]:
        start, end = value
        if start < 0:
            raise ValueError("the range starts at a session index >= 0")
        if end != -1 and end < start:
            raise ValueError("the range ends at an index >= its start, or -1 for the last session")
        return value


class CheckpointSpec(_Spec):
    after_session: int = Field(ge=1)
    probe_types: list[str] = Field(min_length=1)

    @field_validator("probe_types")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        for name in value:
            if name not in PROBE_FAMILIES and name not in PROBE_TYPES:
                raise ValueError(f"unknown probe type {name!r}; expected a family {sorted(PROBE_FAMILIES)} "
                                 f"or a type {sorted(PROBE_TYPES)}")
        return value

    def expanded(self) -> list[str]:
        """Concrete probe types, in the order given, no repeats."""
        out: list[str] = []
        for name in self.probe_types:
            for t in PROBE_FAMILIES.get(name, (name,)):
                if t not in out:
                    out.append(t)
        return out


EntitySpec = Annotated[Union[tuple(cls.spec_model for cls in REGISTRY.values())], Field(discriminator="type")]
"""One entity entry; the union of every registered type's model, discriminated on ``type``."""


class ScenarioSpec(_Spec):
    """A DRIFT scenario (DRIFT §3.1) plus the suite's fields (holdout, seed, splits)."""

    id: Id
    paradigm: Paradigm
    description: str | None = None
    horizon: HorizonSpec
    noise_ratio: float = Field(default=0.70, ge=0.0, le=0.85)
    """Fraction of noise sessions; signal sessions are ~10% and soft ones the rest."""
    entities: list[EntitySpec] = Field(min_length=2)
    principal: Id | None = None
    """The entity whose objective the trajectory serves; default: the first human, else the first entity."""
    topology: list[TopologySpec] = Field(min_length=1)
    checkpoints: list[CheckpointSpec] = Field(min_length=1)
    holdout: bool = False
    seed: int = 0
    splits: list[str] = []

    @model_validator(mode="after")
    def _cross(self) -> "ScenarioSpec":
        ids = [e.id for e in self.entities]
        for i, entity_id in enumerate(ids):
            if entity_id in ids[:i]:
                raise ValueError(f"entities[{i}].id: duplicate entity id {entity_id!r}")
        if self.principal is not None and self.principal not in ids:
            raise ValueError(f"principal: unknown entity {self.principal!r}; expected one of {ids}")
        total = self.horizon.total
        covered = [False] * total
        for t, entry in enumerate(self.topology):
            for a, entity_id in enumerate(entry.active):
                if entity_id not in ids:
                    raise ValueError(f"topology[{t}].active[{a}]: unknown entity {entity_id!r}; expected one of {ids}")
            start, end = entry.session_range
            end = total - 1 if end == -1 else end
            if start >= total or end >= total:
                raise ValueError(f"topology[{t}].session_range: {list(entry.session_range)} lies outside sessions "
                                 f"0..{total - 1} (use -1 for the last)")
            if len(set(entry.active)) < 2:
                raise ValueError(f"topology[{t}].active: a session needs at least two distinct entities")
            for s in range(start, end + 1):
                covered[s] = True
        if not all(covered):
            raise ValueError(f"topology: session {covered.index(False)} is covered by no entry; "
                             "expected ranges covering 0..-1")
        previous = 0
        for c, cp in enumerate(self.checkpoints):
            if cp.after_session > total:
                raise ValueError(f"checkpoints[{c}].after_session: {cp.after_session} exceeds the {total} sessions "
                                 "of the horizon")
            if cp.after_session <= previous:
                raise ValueError(f"checkpoints[{c}].after_session: expected increasing values, got "
                                 f"{cp.after_session} after {previous}")
            previous = cp.after_session
            for name in cp.probe_types:
                need = _unproducible(name, self.paradigm, {e.type for e in self.entities})
                if need:
                    raise ValueError(f"checkpoints[{c}].probe_types: {name!r} needs {need}; this scenario cannot "
                                     f"produce it (paradigm {self.paradigm})")
        return self

    @property
    def principal_id(self) -> str:
        if self.principal:
            return self.principal
        return next((e.id for e in self.entities if e.type == "human"), self.entities[0].id)

    @property
    def sessions(self) -> int:
        return self.horizon.total

    def horizon_names(self) -> list[str]:
        return [name for name, *_ in self.horizon.phases()]


def _field_path(loc: tuple) -> str:
    out = ""
    for i, part in enumerate(loc):
        if isinstance(part, int):
            out += f"[{part}]"
        elif i >= 2 and loc[0] == "entities" and isinstance(loc[i - 1], int) and part in REGISTRY:
            continue  # the discriminated union's tag, not a field
        else:
            out += ("." if out else "") + str(part)
    return out or "(document)"


def parse_scenario(data: object, path: Path | str = "<scenario>") -> ScenarioSpec:
    """Validate a parsed YAML document; raises :class:`ScenarioError`."""
    if not isinstance(data, dict):
        raise ScenarioError(path, "(document)", "expected a mapping with id, paradigm, horizon, entities, "
                                                "topology and checkpoints")
    try:
        return ScenarioSpec.model_validate(data)
    except ValidationError as exc:
        field, message = _explain(exc.errors()[0])
    # Raised outside the except block: the user sees our message, not pydantic's traceback.
    raise ScenarioError(path, field, message)


def _explain(err: dict) -> tuple[str, str]:
    """(field path, message) for pydantic's first error."""
    loc, msg = tuple(err["loc"]), err["msg"]
    if err["type"] in ("union_tag_invalid", "union_tag_not_found"):
        return _field_path(loc) + ".type", f"{msg} (registered types: {sorted(REGISTRY)})"
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
        head, sep, rest = msg.partition(": ")
        if not loc and sep and " " not in head:
            return head, rest
    return _field_path(loc), msg


def load_scenario(path: Path | str, id_is_stem: bool = True) -> ScenarioSpec:
    """Read and validate one scenario YAML file. ``id_is_stem``: the ``id`` must be the file
    name's stem (the library's rule; a user's ``--scenario-file`` may be named freely).

    Raises:
        ScenarioError: unreadable YAML or an invalid field; names the file, the
            field path (e.g. ``entities[1].type``) and what was expected.
    """
    path = Path(path)
    data = load_yaml(path, ScenarioError)
    spec = parse_scenario(data, path)
    if id_is_stem and spec.id != path.stem:
        raise ScenarioError(path, "id", f"expected the file name's stem {path.stem!r}, got {spec.id!r}")
    return spec


def load_scenarios(folder: Path | str) -> list[ScenarioSpec]:
    """Every ``*.yaml`` in ``folder``, sorted by file name."""
    return [load_scenario(p) for p in sorted(Path(folder).glob("*.yaml"))]

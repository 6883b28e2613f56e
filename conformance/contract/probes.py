"""``probes.jsonl``: the run explorer's data for machines, one line per probe and system
(schema ``schema/probes.schema.json``; ``drift-conformance report RESULT --probes PATH``).

The report joins a run's records (what each system retrieved and answered, and the verdict
records scoring wrote) with the fixtures (question, options) and, for scenarios that are
neither holdout nor sealed, with gold (answer, evidence, stale values). A holdout or sealed
scenario's line has ``gold`` null and no per-hit gold marks: a published run shows its scores,
never its answers.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

PROBES_SCHEMA_VERSION = "1"

Verdict = Literal["correct", "wrong", "ungraded", "unanswered", "unscored"]
"""``correct``/``wrong``: graded; ``ungraded``: free-form without an answer model; ``unanswered``:
a fault left the probe unanswered (counted as failed); ``unscored``: no verdict is known (records
older than verdicts for a holdout scenario, or a ``--known-bad`` probe)."""


class _Line(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class ProbeGold(_Line):
    """The latent truth of a probe, joined from the gold folder at report time."""

    answer: str
    accepted: list[str] = []
    """Other spellings that count as right."""
    stale: list[str] = []
    """Values that were true before and are not now."""
    evidence: list[str] = []
    """Message ids that carry the answer."""


class ProbeHit(_Line):
    """One hit of the context the reader saw."""

    rank: int
    """1-based position in the context."""
    text: str
    """The hit's text as recorded (an out-of-budget hit is cut to its start)."""
    source_ids: list[str]
    """The message or session ids the hit is credited with (its carried ids where recorded)."""
    in_budget: bool
    """Inside the context budget (the reader saw it)."""
    from_buffer: bool = False
    """The harness's own buffer message (``--gate soft:K``), not the memory's."""
    evidence: bool | None = None
    """Credited with a gold evidence message; None where gold is not shown."""
    stale: bool | None = None
    """Still asserts a stale value (:func:`conformance.scoring.rows.stale_hit`); None where gold is not shown."""


class ProbeLine(_Line):
    """One probe as one system met it."""

    system: str
    scenario_id: str
    paradigm: str | None
    probe_id: str
    probe_type: str | None
    """None when neither a verdict record nor gold names it."""
    checkpoint_id: str
    horizon: str
    holdout: bool
    """Holdout or sealed scenario (or one whose fixture was not found): ``gold`` is null and hits
    carry no gold marks. ``gold`` is null too where gold could not be joined (missing, or changed
    since the run); the report says why."""
    question: str
    options: list[str] = []
    """The closed answer domain (options, or the choices' texts); empty for free-form probes."""
    gold: ProbeGold | None
    answer: str | None
    verdict: Verdict
    cause: str | None
    """The failure cause (docs/failure-causes.md); None when the probe is not scored."""
    recall_at_k: float | None = None
    hits: list[ProbeHit]
    hits_returned: int
    """Hits the system returned (``hits`` may hold fewer when the context was cut)."""
    error: str | None = None
    """The fault that left the probe unanswered."""

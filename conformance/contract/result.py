"""``result.json``: what a run publishes (schema ``schema/result.schema.json``).

Foreign repositories parse this document; keep old versions loadable.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

RESULT_SCHEMA_VERSION = "1"


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MetricValue(_Doc):
    """One number with its 95% cluster-bootstrap interval over scenarios.

    ``value`` is None when the metric is undefined for this run (``reason`` says
    why: no provenance, no probes of that type...); it is never guessed.
    """

    value: float | None
    ci95: list[float] | None = Field(default=None, min_length=2, max_length=2)
    """[low, high] of the 95% percentile interval; None when not computable."""
    n: int
    """Number of items the value is computed over (probes, sessions or calls)."""
    reason: str | None = None


class SystemResult(_Doc):
    adapter: str
    """The adapter spec as given (``keyword``, ``mem0``, a path, ``grpc://...``) or a control."""
    kind: str
    """``control`` (none, oracle) or ``system``."""
    describe: dict[str, Any] = {}
    """What the backend's Describe returned: name, version, capabilities, internal models."""
    isolation: dict[str, Any] = {}
    """How the adapter ran (process, virtualenv, limits enforced)."""
    metrics: dict[str, MetricValue]
    paired_vs_none: dict[str, MetricValue] = {}
    """Per-probe paired difference (system minus ``none``), cluster bootstrap."""
    notes: list[str] = []


class Receipt(_Doc):
    """The manifest: everything needed to repeat the run."""

    fixtures_hash: str
    gold_hash: str
    scenarios: list[str]
    config: dict[str, Any]
    git_commit: str | None
    versions: dict[str, str]
    isolation: dict[str, Any]
    seed: int
    started_at: str
    finished_at: str
    notes: list[str] = []


class ResultDocument(_Doc):
    _rows: dict = PrivateAttr(default_factory=dict)

    schema_version: str = RESULT_SCHEMA_VERSION
    receipt: Receipt
    systems: dict[str, SystemResult]
    complete: bool = True
    """False when a run stopped early; such a result exits 2."""
    errors: list[str] = []

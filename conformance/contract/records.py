"""Run records: the lines of ``<records-dir>/<run id>/records.jsonl`` (schema
``schema/run-record.schema.json``), one pydantic model per ``kind``.

:class:`conformance.runner.records.RecordWriter` writes them and
:func:`conformance.runner.records.typed_records` reads them back as these models. A field
marked "written only when it applies" is left out of the line when it does not (hard-gate,
hermetic records keep their shape). Fields a later version added have defaults, so records
written before them still read: ``repeat`` (1), ``violations`` ([]), ``carried`` (absent:
every cited id counts, :mod:`conformance.scoring.rows`). The ``verdict`` kind came later too:
older records have none.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

RECORD_SCHEMA_VERSION = "1"


def _kind_required(schema: dict) -> None:
    # ``kind`` has a default so the runner need not spell it, but every written line carries it.
    if "kind" in schema.get("properties", {}):
        schema["required"] = ["kind", *schema.get("required", [])]


class RecordModel(BaseModel):
    """What every record model shares: no field beyond its kind's, one JSON line each."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, json_schema_extra=_kind_required)

    def to_json(self) -> str:
        """The record as one strict-JSON line (no newline): keys sorted, fields that were not
        given left out. Raises ValueError for a non-finite number."""
        fields = self.model_dump(exclude_unset=True)
        return json.dumps({"kind": getattr(self, "kind"), **fields}, sort_keys=True, ensure_ascii=False,
                          allow_nan=False)


class RunHeader(RecordModel):
    """The first record of a run: what a ``--resume`` must repeat."""

    kind: Literal["run"] = "run"
    run_id: str
    binding: dict[str, Any]
    """Adapters, selection and its hash, k, budget, encoding, flush timeout, repeats, isolation,
    and (only when set) the LLM settings, ``fresh_process`` and a non-hard ``gate``."""


class _OfScenario(RecordModel):
    system: str
    """The system's label (``none``, ``oracle``, ``reference-compressor``, an adapter's name)."""
    scenario_id: str
    repeat: int = 1
    """The pass over the corpus (1-based, ``--repeat``)."""


class StoreRecord(_OfScenario):
    """One session stored in one system."""

    kind: Literal["store"] = "store"
    session_id: str
    write_latency_ms: float
    usage: dict[str, int] | None = None
    """LLM calls and tokens the adapter reports for the call (``llm_calls``, ``input_tokens``, ``output_tokens``)."""
    items_stored: int = 0
    violations: list[str] = []
    error: str | None = None


class ScopeBreach(RecordModel):
    """A hit that names or carries another entity's private message (DRIFT §5.3)."""

    rank: int
    private_ids: list[str]


class HitRecord(RecordModel):
    """One hit of a probe's context as the reader saw it (out-of-budget text cut to its start)."""

    rank: int
    """1-based position in the context."""
    text: str
    text_chars: int
    """Length of the hit's whole text (``text`` is cut when out of budget)."""
    score: float | None
    """None when the adapter's score was not finite."""
    source_ids: list[str]
    timestamp: str | None
    tokens: int
    in_budget: bool
    carried: list[str] | None = None
    """Cited ids whose content the hit's text carries (:mod:`conformance.provenance`); written
    for retrieved hits only."""
    adapter_timestamp: str | None = None
    """The adapter's own time of the hit (recorded, not used); written with ``carried``."""
    from_buffer: bool | None = None
    """Written only under ``soft:K``, for the harness's buffer messages."""
    covers: list[str] | None = None
    """Written only under ``summary:N``: the message ids the cited summary kept a sentence of."""


class ProbeRecord(_OfScenario):
    """One probe asked of one system (or, with ``error``, not answered)."""

    kind: Literal["probe"] = "probe"
    checkpoint_id: str
    horizon: str
    probe_id: str
    query: str
    answer: str | None
    provenance: bool
    """Whether the system declares provenance (recall is n/a without it)."""
    hits: list[HitRecord]
    hits_returned: int
    context_tokens: int
    read_latency_ms: float | None
    reader_latency_ms: float | None
    last_write_latency_ms: float | None
    usage: dict[str, int] | None = None
    violations: list[str] = []
    error: str | None = None
    closed: bool | None = None
    """Whether the probe has a closed answer domain; written for probes not answered and with an answer model."""
    answer_call: dict[str, Any] | None = None
    """Written only with an answer model: served model, tokens, ``ttft_ms``, ``cost_usd``, ``cached``."""
    scope_breaches: list[ScopeBreach] | None = None
    """Written only when some hit breaches a scope."""


class StateRecord(_OfScenario):
    """One system's memory state at one checkpoint (DRIFT §7.2, §7.7)."""

    kind: Literal["state"] = "state"
    checkpoint_id: str
    horizon: str
    after_session: int
    sessions_streamed: int
    method: Literal["snapshot", "marker_probe"] | None
    """How stored sessions were found; None when unknown (no Snapshot, no markers, or a fault)."""
    storage_tokens: int | None
    items: int | None
    stored_sessions: list[str] | None
    partial_sessions: dict[str, list[str]] | None = None
    """Held sessions of which the Snapshot carries only some messages: session id -> the held
    message ids (failure causes, docs/failure-causes.md); written with a Snapshot."""
    audit: dict[str, Any] | None = None
    """The state audit at this checkpoint (``hits_checked``, ``probed``, ``found``, ``findings``, and
    ``held_uncited`` once the Snapshot has held found content in items not citing it),
    :func:`conformance.runner.audit.audit_checkpoint`; written only for audited systems."""
    flush_usage: dict[str, int] | None = None
    """LLM calls and tokens the checkpoint's Flush reply reports (``llm_calls``, ``input_tokens``,
    ``output_tokens``; write-side, counted in W like Store's); written when Flush replied."""
    flush_violations: list[str] | None = None
    """Contract violations of that reply's usage (counted as 0); written only when there are some."""
    error: str | None = None


class FaultRecord(_OfScenario):
    """A failed call; the system is not called again in the scenario."""

    kind: Literal["fault"] = "fault"
    where: str
    call: str
    category: Literal["contract", "infrastructure"]
    error: str


class RetryRecord(_OfScenario):
    """A transient failure (gRPC UNAVAILABLE from a live adapter), retried after ``backoff_s``."""

    kind: Literal["retry"] = "retry"
    where: str
    call: str
    attempt: int
    backoff_s: float
    error: str


class RestartRecord(_OfScenario):
    """A hung adapter restarted after a missed deadline."""

    kind: Literal["restart"] = "restart"
    cause: str


class ScenarioDone(RecordModel):
    """The last record of a scenario pass: everything of it is on disk (``--resume`` keeps it)."""

    kind: Literal["scenario_done"] = "scenario_done"
    scenario_id: str
    repeat: int = 1
    failed_systems: list[str] = []


class VerdictRecord(_OfScenario):
    """How one probe of one system was scored, written once the run is scored (first pass only).

    The report's run explorer reads these, so a holdout scenario's verdicts and causes are shown
    without its gold ever being read again. Records written before this kind have none (the
    report then scores non-holdout probes from gold). A resumed run drops them and writes them anew.
    """

    kind: Literal["verdict"] = "verdict"
    probe_id: str
    probe_type: str
    correct: bool | None
    """None when the probe is not graded (free-form without an answer model)."""
    cause: str | None
    """Its failure cause (:data:`conformance.scoring.causes.CAUSES`); None when not scored."""
    recall_at_k: float | None = None
    """Share of gold evidence carried by the top k (None without evidence or provenance)."""


RunRecord = Annotated[Union[RunHeader, StoreRecord, ProbeRecord, StateRecord, FaultRecord, RetryRecord,
                            RestartRecord, ScenarioDone, VerdictRecord], Field(discriminator="kind")]
"""Any line of ``records.jsonl``, told apart by ``kind``."""

RUN_RECORD = TypeAdapter(RunRecord)
"""Validates one record (``RUN_RECORD.validate_python(dict)``) and gives its JSON Schema."""

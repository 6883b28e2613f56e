"""What one run is asked to do: :class:`RunRequest`, built once (by the CLI from its options,
or by a library caller) and handed to :func:`conformance.runner.job.run`."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, InstanceOf

from conformance.backend.client import Deadlines
from conformance.contract.corpus import Selection
from conformance.contract.shards import Shard
from conformance.llm.settings import LLMSettings
from conformance.runner.budget_gate import HARD, BudgetGate
from conformance.runner.run import RunConfig
from conformance.runner.salt import AuditSalt

__all__ = ["RunRequest"]


class RunRequest(BaseModel):
    """The inputs of one run. Immutable: the job derives what it resolves (the run id, the
    answerer, ``fresh_process``) into its own plan, never back into the request.

    The job checks what needs the corpus or the other options (``repeats`` at least 1,
    ``--fresh-process`` against ``concurrency``, a resume against its records) and raises
    :class:`~conformance.runner.job.JobError` for them, so this model validates types only.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    adapters: list[str]
    """Adapter specs (``NAME``, ``NAME:TAG``, a folder, ``grpc://HOST:PORT``); the none and oracle
    controls and the reference compressor are added by the job."""
    fixtures_dir: Path
    gold_dir: Path
    records_dir: Path
    """Run folders go under it: ``<records_dir>/<run_id>/records.jsonl``."""
    selection: InstanceOf[Selection] = Selection()
    config: InstanceOf[RunConfig] = RunConfig()
    """What every system gets alike (k, budget in tokens, encoding, flush timeout in s)."""
    seed: int = 0
    """Bootstrap seed."""
    n_boot: int = 2000
    """Bootstrap resamples."""
    deadlines: InstanceOf[Deadlines] = Deadlines()
    run_id: str | None = None
    """None: a new id (UTC time and 6 hex digits). With ``resume``: the run to continue."""
    repeats: int = 1
    """Passes over the whole corpus into fresh namespaces; metrics come from the first, the
    ``noise_floor`` from the second minus the first."""
    baseline_system: str | None = None
    """A system label of this run: adds ``paired_vs_baseline``."""
    isolation: str | None = None
    """``"docker"`` or ``"process"``: overrides the mode each adapter spec implies, controls
    included (``conformance.backend.systems.plan_adapter``); None: as the specs imply."""
    sealed_holdout: dict | None = None
    """``{"seed_sha256", "scenarios"}`` when the corpus carries a sealed holdout
    (:mod:`conformance.world.sealed`); recorded in the receipt, never the seed."""
    concurrency: int = 1
    """Scenarios streamed at once against the same adapter instances."""
    resume: bool = False
    """Continue run ``run_id`` from its records (scenarios with a ``scenario_done`` record are
    kept, the rest rerun); the settings must be the same."""
    gate: InstanceOf[BudgetGate] = HARD
    """The budget gate variant (DRIFT §5.2)."""
    llm: InstanceOf[LLMSettings] | None = None
    """``--answer-model``, ``--judge-model``, ``--budget-usd`` (:mod:`conformance.llm.settings`)."""
    known_bad: dict | None = None
    """``{"path", "sha256", "items": {probe id: reason}}`` (``--known-bad``,
    :func:`conformance.runner.job.load_known_bad`): asked, left out of every metric, reported apart."""
    fresh_process: bool | None = None
    """A new adapter process per scenario; None: on exactly for published runs (holdout
    included or sealed)."""
    shard: InstanceOf[Shard] | None = None
    """``--shard I/N``: run only this shard's scenarios of the selection
    (:mod:`conformance.contract.shards`); ``drift-conformance merge`` rebuilds the whole run."""
    reference: bool = True
    """False leaves the reference compressor out unless ``adapters`` names it: storage, TES and
    DRIFT-E are then n/a (nothing normalises them). For library callers that need the controls
    alone (tests/test_library.py's oracle and amnesiac over the whole library); the CLI always runs it."""
    audit_salt: InstanceOf[AuditSalt] | None = None
    """``--audit-salt-file``: the secret keying the state audit's choices (:mod:`conformance.runner.salt`);
    the receipt and the run header record only its commitment. None: public-id seeding. A
    commitment without its secret serves ``merge`` only, which draws nothing."""

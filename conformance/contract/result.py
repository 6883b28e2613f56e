"""``result.json``: what a run publishes (schema ``schema/result.schema.json``).

Foreign repositories parse this document; keep old versions loadable.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

RESULT_SCHEMA_VERSION = "1"


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MetricValue(_Doc):
    """One number with its 95% cluster-bootstrap interval over scenarios.

    ``value`` is None when the metric is undefined for this run (``reason`` says
    why: no provenance, no probes of that type...); it is never guessed.
    """

    value: float | None = Field(allow_inf_nan=False)
    ci95: list[Annotated[float, Field(allow_inf_nan=False)]] | None = Field(default=None, min_length=2, max_length=2)
    """[low, high] of the 95% percentile interval; None when not computable (e.g. one scenario)."""
    n: int
    """Number of items the value is computed over (probes, sessions or calls)."""
    reason: str | None = None
    ci_note: str | None = None
    """Why the interval is missing or conditional, e.g. "one scenario: no interval" or
    "over 1,812 of 2,000 resamples (the rest drew no scenario with this metric's items)"."""

    @model_validator(mode="after")
    def _ordered(self) -> "MetricValue":
        if self.ci95 is not None and self.ci95[0] > self.ci95[1]:
            raise ValueError(f"ci95 low {self.ci95[0]} is above high {self.ci95[1]}")
        return self


class CurvePoint(_Doc):
    """One point of the token cost curve (DRIFT §7.7): MVOT over cumulative tokens."""

    after_session: int
    """Checkpoints placed after this many sessions are pooled into this point."""
    cumulative_tokens: float
    """Mean over the pooled checkpoints of W + S + R spent so far in their scenario, tokens."""
    mvot: float | None
    """MVOT over every checkpoint up to and including this point (None if undefined)."""
    checkpoints: int
    """How many checkpoints (over all scenarios) are pooled at this point."""


class Series(_Doc):
    """Distributions and curves behind the scalar metrics, for plots."""

    token_cost_curve: list[CurvePoint] = []
    latency_quantiles_ms: dict[str, list[float]] = {}
    """Per latency (``read``, ``write``, ``ttfrt``, ``dialectic``): the 0th, 1st, ..., 100th
    percentiles in milliseconds (101 values), pooled over every call of the run."""


class GateCell(_Doc):
    """One cell of the CI gate (adapter x paradigm x probe type): what the gate compares.

    Item ids are ``<scenario_id>/<probe_id>``; lists are sorted. An item passes only when
    its verdict is proved correct (answer accuracy, or for free-form probes all evidence
    inside the budget); a wrong, unscorable or failed call counts as failed.
    """

    metrics: dict[str, float | None]
    """``accuracy`` (non-abstention probes), ``abstention_accuracy``, ``recall_at_k``,
    rounded to 4 places; None where the cell has no probe that defines it."""
    gold_total: int
    """Gold items (probes) of the cell asked in the run."""
    gold_failed: int
    failed: list[str]
    """Ids of the gold items that did not pass."""
    leaks: list[str] = []
    """Canary probes whose answer revealed the private value (DRIFT §7.5)."""
    items: list[str] = []
    """Every gold item id of the cell (result.json only; the baseline keeps counts), so a
    stochastic adapter's pass rates can be paired item by item against a baseline."""


class GateView(_Doc):
    """Per system: the cells the CI gate compares and whether the system is deterministic."""

    deterministic: bool
    determinism: str
    """Why: "Describe: deterministic", "Describe: not deterministic", or
    "answers differed across --repeat" (which overrides Describe)."""
    cells: dict[str, GateCell]
    """Keyed ``<paradigm>/<probe_type>``."""


class StateAudit(_Doc):
    """What the memory-state audit found at the checkpoints (docs/audit.md): every hit's
    provenance and text checked against the Snapshot, and runner-chosen content sentences of
    stored sessions probed through Retrieve."""

    passed: bool
    """False when any check failed: the system's self-reported storage is then not used
    (selectivity comes from the audit's probes; storage tokens, MVOT, TES, DRIFT-E are n/a)."""
    checkpoints: int = 0
    """Checkpoints audited."""
    hits_checked: int = 0
    """Probe hits checked against the Snapshot."""
    sentences_probed: int = 0
    """Audit sentences asked through Retrieve."""
    sentences_found: int = 0
    """Audit sentences some hit carried (their session is then established as stored)."""
    findings: list[str] = []
    """One line per kind of mismatch, with counts and a first example."""


class FailureCauses(_Doc):
    """One cause per scored probe of the first replicate (docs/failure-causes.md,
    :mod:`conformance.scoring.causes`): where the evidence stopped, write path or read path."""

    counts: dict[str, int]
    """Probes per cause, every cause of the vocabulary listed (0 included), in precedence order:
    fault, correct, scope_leak, no_provenance, not_stored, lost, not_retrieved, not_found,
    out_of_budget, stale_in_context, reader."""
    by_probe_type: dict[str, dict[str, int]] = {}
    """The same per probe type (causes with no probe left out)."""
    basis: str | None = None
    """What "stored" was established by: ``snapshot`` (the Snapshot's provenance), ``audit``
    (the state audit's probes, the Snapshot having failed it), ``marker_probe`` (no Snapshot), or
    None (memory state unknown: ``not_found`` stands for not_stored, lost and not_retrieved)."""


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
    paired_vs_baseline: dict[str, MetricValue] = {}
    """Per-probe paired difference (system minus ``baseline_system``), cluster bootstrap."""
    baseline_system: str | None = None
    noise_floor: dict[str, MetricValue] = {}
    """With ``--repeat 2``: paired difference of the second run minus the first, per probe;
    an interval around 0 is the noise floor any comparison must exceed."""
    measurement: dict[str, str] = {}
    """How a metric was measured where that can differ between systems, e.g.
    ``selectivity``: "snapshot provenance" or "marker probing (no Snapshot)"."""
    series: Series = Series()
    gate: GateView | None = None
    """What the CI gate compares (``drift-conformance compare``); absent in results older
    than the gate."""
    notes: list[str] = []
    known_bad: dict[str, MetricValue] = {}
    """With ``--known-bad``: accuracy, abstention accuracy and recall over the listed probes,
    which every other metric leaves out."""
    judging: dict[str, int] = {}
    """With ``--answer-model``: how the first replicate's answers were graded, per method:
    ``exact``, ``declined``, ``judge``, ``judge_unparseable`` (counted as wrong),
    ``not_judged`` (judging stopped early), ``judge_correct``. Empty without an answer model."""
    findings: list[str] = []
    """What the provenance and time audits found in its hits (docs/audit.md): citations the
    hit's text does not carry, hits longer than the budget, adapter times later than what a
    hit carries. Their credit is already withheld; the lines say why a score is lower."""
    failure_causes: FailureCauses | None = None
    """Why each scored probe failed (or ``correct``); None in results older than the causes."""
    state_audit: StateAudit | None = None
    """The memory-state audit (:mod:`conformance.runner.audit`); None for systems without a
    Snapshot, for the harness-side oracle, and in results older than the audit."""


class SaltCommitment(_Doc):
    """The commitment to a run's secret audit salt (``--audit-salt-file``; docs/audit.md, "The
    audit salt"): the salt itself is revealed, if at all, after publication."""

    commitment: str = Field(pattern=r"^[0-9a-f]{64}$")
    """SHA-256 (hex) of the salt file's bytes (what ``sha256sum FILE`` prints;
    ``drift-conformance audit-salt verify RESULT FILE`` checks a revealed file against it)."""
    seeding: str
    """How the salt enters the state audit's seeds."""


class Receipt(_Doc):
    """The manifest: everything needed to repeat the run."""

    fixtures_hash: str
    """SHA-256 over every fixture and gold file of the corpus folders."""
    gold_hash: str
    selection_hash: str | None = None
    """SHA-256 over the fixture and gold files of the scenarios this run scored (the
    selection); the CI gate binds a baseline to it, so edits outside the gated split do
    not force a re-bless."""
    scenario_hashes: dict[str, str] = {}
    """Scenario id -> SHA-256 of its gold and fixture files (scored scenarios only)."""
    scenarios: list[str]
    config: dict[str, Any]
    git_commit: str | None
    versions: dict[str, str]
    isolation: dict[str, Any]
    seed: int
    started_at: str
    finished_at: str
    notes: list[str] = []
    audit_salt: SaltCommitment | None = None
    """The state audit's seeds were keyed by a secret salt with this commitment; None: public-id
    seeding, so an adapter can replay the audit's choices (``bench/attacks/seed_replay``). A rerun
    with the revealed salt file reproduces the result."""


class InstrumentCheck(_Doc):
    """One instrument check (:mod:`conformance.scoring.instrument`)."""

    name: str
    """``controls_present`` or ``oracle_bound``."""
    passed: bool
    detail: str
    system: str | None = None
    """``oracle_bound`` failures: the system above the oracle."""
    metric: str | None = None
    """``oracle_bound`` failures: the metric it is above the oracle on."""


class InstrumentChecks(_Doc):
    """The controls are the bounds: both controls ran, and (hard gate, generated corpus) no
    system is above the oracle on a capability metric. A failure is a reason to audit the
    gold (guide §9); it does not change the exit code."""

    applies: bool
    """False when the oracle bound is not defined for this run (imported data, soft or summary gate)."""
    reason: str | None = None
    passed: bool
    checks: list[InstrumentCheck] = []


class PairDifference(_Doc):
    """One pair of systems on one metric (:mod:`conformance.scoring.pairwise`)."""

    a: str
    """The system with the higher point estimate."""
    b: str
    diff: float
    """a minus b, full sample."""
    ci95: list[float] | None = None
    """Paired cluster-bootstrap 95% interval of the difference (shared count matrix)."""
    p: float | None = None
    """Two-sided bootstrap p-value of the difference being 0."""
    p_holm: float | None = None
    """p Holm-adjusted over every pair on this metric."""
    differs: bool = False
    """p_holm below the comparison's alpha."""


class MetricComparison(_Doc):
    systems: list[str]
    """The compared systems, best point estimate first."""
    values: dict[str, float]
    letters: dict[str, str]
    """Compact letter display: systems sharing a letter are not distinguishable."""
    pairs: list[PairDifference] = []


class Comparisons(_Doc):
    """Which system under test is better (controls apart), by default in every run with two or
    more systems: paired differences of every pair, Holm-adjusted, grouped by letters."""

    alpha: float
    adjustment: str
    metrics: dict[str, MetricComparison]


class ResultDocument(_Doc):
    schema_version: str = RESULT_SCHEMA_VERSION
    receipt: Receipt
    systems: dict[str, SystemResult]
    complete: bool = True
    """False when a run stopped early; such a result exits 2."""
    errors: list[str] = []
    spend: dict[str, Any] | None = None
    """With ``--answer-model``: ``answer`` and ``judge`` usage over the scored records (calls
    made, calls served from the response cache, input/output tokens, ``cost_usd``;
    ``served_models``); ``total_usd``: what the run spent over all its invocations (a resumed
    run included), ``spent_this_invocation_usd``, ``spent_earlier_usd``; ``budget_usd`` (it
    bounds the whole run) and whether it ran out; ``systems``: the LLM calls and tokens each
    system reported spending itself (its Store/Flush/Retrieve ``usage``: mem0 infer, graphiti, the
    reference compressor's LLM form), when any did. None when nothing spent LLM tokens."""
    comparisons: Comparisons | None = None
    """Every pair of systems under test on DRIFT-C, DRIFT-E and accuracy (:class:`Comparisons`);
    None with fewer than two systems under test, and in results older than it."""
    instrument_checks: InstrumentChecks | None = None
    """Whether the controls bound the run (:class:`InstrumentChecks`); absent in results older
    than the checks."""
    oracle_ceiling: dict[str, Any] | None = None
    """Per dataset (fixture ``source``): the oracle's recall_at_k, recall_all_in_budget and
    accuracy, probes, and ``reasons`` it sits below 1 (:mod:`conformance.scoring.ceiling`)."""

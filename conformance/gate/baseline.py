"""``baselines/main.json`` (:data:`DEFAULT_BASELINE`): what the main branch's run of the gated split scored, per cell.

The baseline holds quality only: per system, paradigm and probe type the metrics (4
places), the gold counts and the sorted ids of the failed gold items, plus written
justifications for accepted breaches. No timestamps, latencies or token figures: they
never repeat exactly, so they are reported, not gated. Written with sorted keys, so a
deterministic adapter's baseline is byte-identical across reruns.

Schema: ``schema/baseline.schema.json`` (generated from :class:`Baseline`).
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from conformance.contract.limits import MAX_BASELINE_BYTES, BadDocument, human, parse_json
from conformance.contract.result import ResultDocument
from conformance.errors import DriftError

BASELINE_SCHEMA_VERSION = "1"

#: The one default baseline path: ``--update-baseline`` writes it, ``compare``, ``scripts/gate.sh``
#: and the action (``action.yml``) read it, relative to the repository root.
DEFAULT_BASELINE = "baselines/main.json"


class BaselineError(DriftError, ValueError):
    """A baseline cannot be read, written or made from this result; the message says why."""


class MissingBaseline(BaselineError):
    """No baseline at the path (at a git ref that exists, or in the working tree): a repository
    that has not made one yet, as opposed to a baseline that cannot be read."""


class _Doc(BaseModel):
    # strict: a hand-edited "4" is not silently read as 4
    model_config = ConfigDict(extra="forbid", strict=True)


class GateConfig(_Doc):
    """The run settings a baseline binds: a result run with other settings is not comparable."""

    adapters: list[str]
    """System labels gated (controls and the reference normaliser are not), sorted."""
    paradigms: list[str] = []
    splits: list[str] = []
    scenario_patterns: list[str] = []
    horizons: list[str] = []
    include_holdout: bool = False
    """Always False for a gate baseline: holdout scenarios never feed the CI gate."""
    answer_model: str | None = None
    k: int
    budget_tokens: int
    encoding: str
    gate: str = "hard"


class BaselineCell(_Doc):
    metrics: dict[str, float | None]
    """``accuracy``, ``abstention_accuracy``, ``recall_at_k`` rounded to 4 places (None: undefined)."""
    gold_total: int = Field(ge=0)
    gold_failed: int = Field(ge=0)
    failed: list[str]
    """Sorted ``<scenario_id>/<probe_id>`` of the gold items that did not pass."""
    leaks: list[str] = []
    """Sorted ids of canary probes that leaked (each needs a justification to pass the gate)."""

    @model_validator(mode="after")
    def _consistent(self) -> "BaselineCell":
        # A hand edit must not make counts and ids disagree (the gate reads the ids).
        if self.gold_failed != len(self.failed):
            raise ValueError(f"gold_failed is {self.gold_failed} but failed lists {len(self.failed)} ids")
        if len(set(self.failed)) != len(self.failed) or self.failed != sorted(self.failed):
            raise ValueError("failed must be sorted ids without repeats")
        if len(self.failed) > self.gold_total:
            raise ValueError(f"failed lists {len(self.failed)} ids but gold_total is {self.gold_total}")
        return self


class BaselineSystem(_Doc):
    deterministic: bool
    """From the run's gate view: Describe says deterministic and no --repeat disagreement."""
    cells: dict[str, BaselineCell]
    """Keyed ``<paradigm>/<probe_type>``."""


class Justification(_Doc):
    """A written reason that lets one breach pass; read from the main branch's baseline."""

    breach: str = Field(min_length=1)
    """The finding's key exactly as ``drift-conformance compare`` prints it, e.g.
    ``gold_total:keyword:user_assistant/fact_recall:24->20``."""
    reason: str
    """Why the breach is accepted, in words a reviewer can check (10 characters or more,
    not counting surrounding blanks)."""

    @field_validator("reason")
    @classmethod
    def _worded(cls, value: str) -> str:
        if len(value.strip()) < 10:
            raise ValueError("a justification's reason needs at least 10 characters of words")
        return value.strip()


class Baseline(_Doc):
    schema_version: str = BASELINE_SCHEMA_VERSION
    fixtures_hash: str
    """The result's ``selection_hash``: SHA-256 over the gated scenarios' fixture and gold files."""
    config: GateConfig
    systems: dict[str, BaselineSystem]
    scenario_hashes: dict[str, str] = {}
    """Scenario id -> SHA-256 of its gold and fixture files; in bless mode the items of
    scenarios whose hash is unchanged are still compared one by one."""
    corpus_version: str | None = None
    """The corpus's ``corpus_version`` (its ledger's) when the baseline was blessed; None in a
    baseline written before it was recorded. A new major version asks for a re-bless by name."""
    justifications: list[Justification] = []


def _bound_models(cfg: dict) -> str | None:
    """The answer pipeline a baseline binds, as one string: the answer model and its prompt's
    hash, and the judge (a change of either changes what "correct" means)."""
    answer = cfg.get("answer_model")
    if not isinstance(answer, dict):
        return answer  # None for hermetic runs; a plain id in results written before the answer model
    judge = cfg.get("judge_model")
    judged = judge.get("model") if isinstance(judge, dict) else "none"
    return f"{answer.get('model')} (prompt {str(answer.get('prompt_sha256'))[:16]}; judge {judged})"


def gate_config(doc: ResultDocument) -> GateConfig:
    """The settings of ``doc`` that a baseline binds."""
    cfg = doc.receipt.config
    return GateConfig(
        adapters=sorted(label for label, s in doc.systems.items() if s.kind == "system"),
        paradigms=sorted(cfg.get("paradigms") or []), splits=sorted(cfg.get("splits") or []),
        scenario_patterns=sorted(cfg.get("scenario_patterns") or []), horizons=sorted(cfg.get("horizons") or []),
        include_holdout=bool(cfg.get("include_holdout")) or bool(cfg.get("sealed_holdout")),
        answer_model=_bound_models(cfg), k=int(cfg.get("k", 0)), budget_tokens=int(cfg.get("budget_tokens", 0)),
        encoding=str(cfg.get("encoding", "")), gate=str(cfg.get("gate", "hard")))


def baseline_from_result(doc: ResultDocument, justifications: list[Justification] = ()) -> Baseline:
    """The baseline ``doc`` would commit (``--update-baseline``).

    Raises:
        BaselineError: the run is incomplete, scored holdout scenarios, has no selection
            hash or gate view (a result older than the gate), or gates no system.
    """
    if not doc.complete:
        raise BaselineError("the run is incomplete (see its errors); a baseline is only made from a complete run")
    config = gate_config(doc)
    if config.include_holdout:
        raise BaselineError("the run scored holdout scenarios; a CI-gate baseline never includes them "
                            "(run without --include-holdout / --sealed-holdout)")
    if doc.receipt.selection_hash is None:
        raise BaselineError("the result has no selection_hash (written before the CI gate existed); rerun it")
    systems = {}
    for label in config.adapters:
        view = doc.systems[label].gate
        if view is None:
            raise BaselineError(f"system {label!r} has no gate view (a result older than the CI gate); rerun it")
        systems[label] = BaselineSystem(
            deterministic=view.deterministic,
            cells={key: cell.model_dump(include={"metrics", "gold_total", "gold_failed", "failed", "leaks"})
                   for key, cell in view.cells.items()})
    if not systems:
        raise BaselineError("the run gates no system (only controls ran); name one with --adapter")
    return Baseline(fixtures_hash=doc.receipt.selection_hash, config=config, systems=systems,
                    scenario_hashes=dict(sorted(doc.receipt.scenario_hashes.items())),
                    corpus_version=result_corpus_version(doc), justifications=list(justifications))


def result_corpus_version(doc: ResultDocument) -> str | None:
    """The ``corpus_version`` a run's receipt records (None: an unversioned corpus)."""
    version = (doc.receipt.versions or {}).get("corpus")
    return version if version and not version.startswith("unversioned") else None


def adapter_specs(doc: ResultDocument) -> list[str]:
    """The ``--adapter`` values a run was given, controls left out: a folder adapter is named
    by its path (``./drift-adapter``), not by its label, so a printed command runs as shown."""
    # The controls (none, the reference compressor) are started under their labels.
    controls = {label for label, system in doc.systems.items() if system.kind != "system"}
    return [spec for spec in doc.receipt.config.get("adapters") or [] if spec not in controls]


def rebless_command(config: GateConfig, specs: list[str] | None = None, path: str = DEFAULT_BASELINE) -> str:
    """The command that (re-)blesses a baseline with ``config``'s settings, written to ``path``.

    ``specs``: the run's ``--adapter`` values (:func:`adapter_specs`); the baseline's system
    labels when None. A path other than :data:`DEFAULT_BASELINE` is named with ``--compare``,
    the option ``--update-baseline`` writes to."""
    adapters = specs or config.adapters
    parts = ["drift-conformance"] + [f"--adapter {shlex.quote(a)}" for a in adapters]
    parts += [f"--split {s}" for s in config.splits] + [f"--paradigm {p}" for p in config.paradigms]
    parts += [f"--scenario '{p}'" for p in config.scenario_patterns] + [f"--horizon {h}" for h in config.horizons]
    if config.gate != "hard":
        parts.append(f"--gate {config.gate}")
    if path != DEFAULT_BASELINE:
        parts.append(f"--compare {shlex.quote(path)}")
    return " ".join(parts + ["--update-baseline"])


def dumps(baseline: Baseline) -> str:
    """Canonical text: sorted keys, one-space indent, trailing newline (byte-stable)."""
    return json.dumps(baseline.model_dump(mode="json"), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def parse_baseline(text: str, where: str) -> Baseline:
    """Parse baseline text; ``where`` names its origin in errors (a path, or ``main:baselines/main.json``).

    Raises:
        BaselineError: not JSON, a newer schema_version, or a field that fails the schema
            (the message names the field path).
    """
    if len(text) > MAX_BASELINE_BYTES:
        raise BaselineError(f"{where}: baseline larger than {human(MAX_BASELINE_BYTES)} (the input limit; "
                            "see docs/input-limits.md)")
    try:
        data = parse_json(text)
    except BadDocument as exc:
        at = ", ".join(x for x in (exc.line and f"line {exc.line}", exc.field and f"field {exc.field}") if x)
        raise BaselineError(f"{where}: not JSON ({at or 'document'}: {exc.message})") from None
    if not isinstance(data, dict):
        raise BaselineError(f"{where}: field (top level): a baseline is a JSON object, got {type(data).__name__}")
    if "receipt" in data and "systems" in data and "fixtures_hash" not in data:
        raise BaselineError(f"{where}: this is a result.json, not a baseline (compare takes BASELINE then RESULT; "
                            "make a baseline with --update-baseline)")
    version = str(data.get("schema_version", ""))
    if version != BASELINE_SCHEMA_VERSION:
        raise BaselineError(f"{where}: baseline schema_version {version or '(missing)'} is not the "
                            f"{BASELINE_SCHEMA_VERSION} this drift-conformance reads; use the suite version "
                            "that wrote it, or move it aside and make a new one with --update-baseline")
    try:
        return Baseline.model_validate(data)
    except ValidationError as exc:
        problems = [f"field {'.'.join(str(p) for p in e['loc']) or '(top level)'}: {e['msg']}" for e in exc.errors()]
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise BaselineError(f"{where}: " + "; ".join(problems[:3]) + more) from None


def load_baseline(path: Path) -> Baseline:
    """Read a baseline file. Raises BaselineError (missing, unreadable or invalid: names the file)."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_BASELINE_BYTES:
            raise BaselineError(f"{path}: {path.stat().st_size:,} bytes, over the {MAX_BASELINE_BYTES:,}-byte limit "
                                "for a baseline")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MissingBaseline(f"{path}: no such baseline; make one with "
                              "`drift-conformance --adapter NAME --split ci --update-baseline`") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"{path}: cannot read the baseline ({exc})") from None
    return parse_baseline(text, str(path))


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BaselineError(f"git {' '.join(args)}: {exc}") from None


def load_baseline_at(ref: str, path: str = DEFAULT_BASELINE, repo: Path = Path(".")) -> Baseline:
    """The baseline as committed at ``ref`` (``git show REF:PATH``), never the working tree's.

    A pull request can edit its own ``baselines/main.json``; the gate reads the base
    branch's copy so what a change is compared with cannot be rewritten by the change.

    Raises:
        MissingBaseline: ``ref`` is a commit that holds no file at ``path`` (a repository
            that has not committed a baseline yet).
        BaselineError: git fails otherwise (unknown ref, not a repository), or the file is invalid.
    """
    proc = _git(repo, "show", f"{ref}:{path}")
    if proc.returncode != 0:
        if _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").returncode == 0:
            raise MissingBaseline(f"{ref}:{path}: {ref} commits no baseline at {path}")
        raise BaselineError(f"git show {ref}:{path} failed: {proc.stderr.strip() or proc.returncode}")
    return parse_baseline(proc.stdout, f"{ref}:{path}")


def write_baseline(doc: ResultDocument, path: Path) -> Baseline:
    """Write the baseline of ``doc`` to ``path``, keeping the justifications already there.

    Writes to a temporary file and renames it, so a failure leaves the old baseline intact.
    Raises BaselineError (see :func:`baseline_from_result`; an unreadable existing file).
    """
    path = Path(path)
    kept: list[Justification] = []
    if path.exists():
        try:
            kept = parse_baseline(path.read_text(encoding="utf-8"), str(path)).justifications
        except (OSError, UnicodeDecodeError) as exc:
            raise BaselineError(f"{path}: cannot read the existing baseline ({exc})") from None
    baseline = baseline_from_result(doc, kept)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(dumps(baseline), encoding="utf-8")
    tmp.replace(path)
    return baseline

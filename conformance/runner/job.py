"""One whole run: start the systems, stream the corpus, score, and build ``result.json``."""

from __future__ import annotations

import dataclasses
import os
import platform
import secrets
import subprocess
import threading
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from drift_sdk.llm.errors import LLMError

from conformance.answer.tokens import encoding
from conformance.contract.corpus import (
    CorpusError,
    corpus_version,
    file_sha256,
    fixture_files,
    fixtures_hash,
    gold_hash,
    read_header,
    scenario_hashes,
    select_fixtures,
    selection_hash,
    session_index,
    validate_selection,
)
from conformance.contract.result import Receipt, ResultDocument, SystemResult
from conformance.contract.shards import split
from conformance.runner.code_identity import adapter_folders, code_identity
from conformance.runner.formats import schema_versions
from conformance.gate.cells import gate_view
from conformance.paths import data_root
from conformance.runner.audit import AUDIT_FINDING_NOTE, apply_state_audit, audit_reasons, provenance_findings
from conformance.contract.records import RunHeader, VerdictRecord
from conformance.runner.records import RecordWriter, RunLock, compact, iter_records, keep_completed, typed_records
from conformance.llm.judge import GRADES_FILE, grade_records, judging_counts
from conformance.runner.request import RunRequest
from conformance.runner.run import Progress, RunConfig, run_corpus
from conformance.backend.systems import OracleSystem, close_systems, open_systems
from conformance.scoring import build_probe_rows, infra_failures, paired_vs, score_system
from conformance.scoring.causes import probe_causes, system_causes
from conformance.scoring.pairwise import compare_systems
from conformance.scoring.rows import ProbeRow
from conformance.scoring.ceiling import oracle_ceiling
from conformance.scoring.instrument import GENERATED, instrument_checks
from conformance.scoring.privacy import breach_note, scope_breach_rate
from conformance.scoring.metrics import FREE_FORM_REASON
from conformance.scoring.drift import AMNESIAC, REFERENCE, drift_suite, paired_suite
from conformance.errors import DriftError, Interrupted

FREE_FORM_NOTE = ("free-form probes (imported data) have no closed answer domain: answer accuracy needs an "
                  "answer model, so this run scores retrieval only (recall_at_k, recall_all_in_budget)")
FREE_FORM_JUDGED_NOTE = ("free-form probes (imported data): the answer model's answers are graded by normalised exact "
                         "match, then declines against abstention gold, then the blinded judge model")
FREE_FORM_EXACT_NOTE = ("free-form probes (imported data): no --judge-model, so the answer model's answers are graded "
                        "by normalised exact match only: strict, a paraphrase of the gold answer counts as wrong")


class JobError(DriftError, RuntimeError):
    """The run could not start or finish; the message says why and what to do."""


class JobInterrupted(JobError, Interrupted):
    """Ctrl-C or SIGTERM stopped the run; the message says how to resume it."""


def _load_encoding(name: str) -> None:
    try:
        encoding(name)
    except Exception:  # noqa: BLE001 - the first count in the run raises it again, where it is used
        pass


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def git_commit() -> str | None:
    try:
        proc = subprocess.run(["git", "-C", str(data_root()), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def host() -> dict:
    """The machine latencies were measured on (DRIFT §7.8 names an 8-core, 32 GB reference host)."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        memory = None
    return {"cpus": os.cpu_count(), "memory_gib": None if memory is None else round(memory, 1),
            "machine": platform.machine()}


def spec_departures(config_host: dict, concurrency: int = 1, answer_model: bool = False,
                    reference_form: str = "") -> list[str]:
    """Run-wide departures from DRIFT §7, in plain words (the report lists them as deviations).

    ``reference_form``: the reference compressor's Describe ``settings.form``; its LLM form
    ("llm: ...") makes one call per session as DRIFT §7.7 assumes, so that departure is not listed.
    """
    return [
        ("the answer model's time to first token is the reader latency of TTFRT and dialectic speed; a call served "
         "from the response cache keeps the timing of the call that filled it" if answer_model else
         "no answer model: the deterministic reader answers, and TTFRT and dialectic speed use its latency where "
         "DRIFT §7.8 measures an LLM's time to first token"),
        "action alignment is judged by gold (each system's multiple-choice action against the amnesiac's, right or "
        "wrong), not by an LLM judge prompted with the ground truth (DRIFT §7.4)",
        (f"the reference compressor ({REFERENCE}) runs in its LLM form ({reference_form[4:].strip()}), as DRIFT "
         "§7.7 assumes: TC_ref counts its LLM tokens and its stored tokens" if reference_form.startswith("llm") else
         f"the reference compressor ({REFERENCE}) is extractive and calls no LLM, where DRIFT §7.7 assumes one LLM "
         "call per session: TC_ref counts its stored tokens only, so a system that spends LLM tokens gets a lower "
         "TES than against DRIFT's LLM compressor (DRIFT_REFERENCE_LLM_MODEL switches on its LLM form)"),
        (f"latencies were measured one session stream at a time on this host ({config_host.get('cpus')} CPUs, "
         f"{config_host.get('memory_gib')} GiB), not on DRIFT §7.8's 8-core, 32 GB host with 4 concurrent sessions"
         if concurrency <= 1 else
         f"latencies were measured under {concurrency} concurrent scenario streams against one instance of each "
         f"adapter on this host ({config_host.get('cpus')} CPUs, {config_host.get('memory_gib')} GiB); DRIFT §7.8 "
         "names an 8-core, 32 GB host with 4"),
        "MVOT's storage term is capped at 1 and scales gains only; TES is clipped to [0, 1] inside DRIFT-E "
        "(README, Metrics)",
    ]


def versions(fixtures_dir: Path | None = None) -> dict[str, str]:
    """Versions that bind a run: the suite (semantic version), each published schema
    (``schema:<format>``), the corpus (its ledger's ``corpus_version``), Python and libraries."""
    out = {"python": platform.python_version(), "platform": platform.platform()}
    for dist in ("drift-conformance", "grpcio", "protobuf", "numpy", "tiktoken", "pydantic"):
        out[dist] = _version(dist)
    out.update({f"schema:{name}": version for name, version in schema_versions().items()})
    if fixtures_dir is not None:
        out["corpus"] = corpus_version(fixtures_dir) or "unversioned (no ledger with corpus_version)"
    return out


def _silent(message: str) -> None:
    pass


def run(request: RunRequest, *, log: Callable[[str], None] = _silent, progress: Progress = Progress()
        ) -> tuple[ResultDocument, dict[str, list[ProbeRow]]]:
    """Run ``request.adapters`` (plus the none and oracle controls and the reference compressor)
    and score them, holding the run folder's lock (:class:`~conformance.runner.records.RunLock`)
    from start to result, so two runners never write one run's records.

    The stages: :func:`prepare` (select and validate the corpus, bind the options),
    :func:`stream` (start the systems, stream the corpus, stop them), :func:`grade` (read the
    records back; with an answer model, judge the answers), :func:`score` (every system's
    metrics) and :func:`result_document` (receipt, faults, ceiling, instrument checks).

    A system that fails mid-run (crash, missed deadline, garbage) does not stop the run:
    its faults are recorded, its unanswered probes count as failed (same denominators for
    every system), and the result is marked incomplete (``complete`` false, ``errors``).
    So does an adapter that never becomes ready at the start (it exits, never serves, its
    Describe fails): it is scored as failed (``isolation.start_error``), the others run.
    With ``request.llm``, a spent budget or an LLM error that survives its retries stops the
    run cleanly: finished scenarios are scored, the result is incomplete (exit 2), the
    records and the response cache keep everything paid for, and ``--resume`` continues.

    Returns:
        (the result document, per system label the probe rows it was scored from: the first
        pass, ``--known-bad`` probes left out), so an in-process caller (the difficulty audit)
        reads the rows without scoring again.

    Raises:
        RunLocked: another runner holds this run's folder (its pid, host and start time named).
        CorpusError: the selected corpus does not validate.
        JobError: filters match nothing, the options contradict each other, the run was
            interrupted (records kept; resume it), or a resume does not match its run.
    """
    if request.resume and not request.run_id:
        raise JobError("--resume needs the id of the run to continue")
    request = request.model_copy(update={"run_id": request.run_id or new_run_id()})
    with RunLock(Path(request.records_dir) / request.run_id):
        started_at = _now()
        plan = prepare(request, log)
        streamed = stream(plan, log, progress)
        graded = grade(plan, streamed, log)
        results, scoring = score(plan, streamed, graded)
        write_verdicts(plan.records_path, scoring, graded.gold)
        return result_document(plan, streamed, graded, results, scoring, started_at), scoring.rows


def run_job(adapters: list[str], fixtures_dir: Path, gold_dir: Path, *, records_dir: Path,
            log: Callable[[str], None] = _silent, progress: Progress = Progress(), **options) -> ResultDocument:
    """:func:`run` from keyword options (the fields of :class:`RunRequest`), for library callers
    that need the result document only.

    Raises:
        pydantic.ValidationError: an option that is not a :class:`RunRequest` field, or of the wrong type.
        And everything :func:`run` raises.
    """
    request = RunRequest(adapters=adapters, fixtures_dir=fixtures_dir, gold_dir=gold_dir, records_dir=records_dir,
                         **options)
    return run(request, log=log, progress=progress)[0]


@dataclass
class Plan:
    """What :func:`prepare` resolved from a request: the selected corpus and the binding a resume must match."""

    request: RunRequest
    config: RunConfig
    """``request.config`` with the answer model as its answerer, when there is one."""
    fresh_process: bool
    fixtures: list[Path]
    held_out: list[str]
    """Holdout scenarios the selection left out."""
    gold: dict
    free_form: bool
    specs: list[str]
    """Adapter specs in start order: none, the reference compressor, then the request's."""
    records_path: Path
    binding: dict
    done: frozenset
    """(scenario id, repeat) passes a resumed run has already recorded."""
    header: RunHeader | None
    """The ``run`` record to write first; None when resuming (it is already there)."""
    shard: dict | None = None
    """``--shard``: the receipt's ``config.shard`` block (:func:`_shard_part`); None for a whole run."""


@dataclass
class Streamed:
    """What :func:`stream` leaves: the (closed) systems and the part of the corpus that finished."""

    systems: list
    scenarios: list[str]
    fixtures: list[Path]
    """The scored fixtures: all of the plan's, or those that finished before an LLM stop."""
    gold: dict
    stopped: str | None = None
    """Why the run stopped early (an LLM budget or error), or None."""
    finished: set | None = None
    """After an early stop: the (scenario id, repeat) passes that finished."""


@dataclass
class Graded:
    """The records scoring reads, split by ``--known-bad``, and what the LLM path graded and spent."""

    records: list[dict]
    bad_records: list[dict]
    gold: dict
    """Gold without the ``--known-bad`` probes."""
    gold_all: dict
    bad_ids: set
    unmatched: set
    """``--known-bad`` ids that name no probe of this run."""
    grading: object | None
    spend: dict | None


def prepare(request: RunRequest, log: Callable[[str], None]) -> Plan:
    """Select and validate the corpus and bind the options, before any adapter starts.

    Raises:
        CorpusError: a selected fixture or its gold does not validate.
        JobError: missing folders, filters that match nothing, contradicting options, or a
            resume whose records are missing or were recorded with other options.
    """
    r = request
    for folder, what in ((r.fixtures_dir, "fixture"), (r.gold_dir, "gold")):
        if not Path(folder).is_dir():
            raise JobError(f"{what} folder {folder} does not exist")
    if not fixture_files(r.fixtures_dir):
        raise JobError(f"no fixtures (*.jsonl) in {r.fixtures_dir}")
    fixtures, held_out = select_fixtures(r.fixtures_dir, r.selection)
    if not fixtures:
        filters = ", ".join(f"{k}={v}" for k, v in r.selection.describe().items() if v)
        raise JobError(f"the filters ({filters or 'none'}) match no fixture in {r.fixtures_dir}"
                       + (f" ({len(held_out)} holdout scenarios need --include-holdout)" if held_out else ""))
    fixtures, shard = _shard_part(r, fixtures)
    # Only what this run reads is validated; `drift-conformance validate` checks the whole corpus.
    gold = validate_selection(fixtures, r.gold_dir)
    refuse_wrong_gold(fixtures, r.gold_dir)
    free_form = any(read_header(p).free_form for p in fixtures)
    if r.repeats < 1:
        raise JobError(f"--repeat must be at least 1, got {r.repeats}")
    fresh_process = r.fresh_process
    if fresh_process is None:
        fresh_process = r.selection.include_holdout or r.sealed_holdout is not None
    if fresh_process and r.concurrency > 1:
        raise JobError(f"--fresh-process (the default with --include-holdout and --sealed-holdout) starts a new "
                       f"adapter process per scenario, which --concurrency {r.concurrency} cannot share: pass "
                       "--concurrency 1 or --no-fresh-process")
    specs = ["none", *([REFERENCE] if r.reference else [])] + [a for a in r.adapters if a != "none"
                                                                 and (a != REFERENCE or not r.reference)]
    records_path = Path(r.records_dir) / r.run_id / "records.jsonl"
    config = r.config
    if r.llm is not None and r.llm.answer is not None:
        config = dataclasses.replace(config, answerer=r.llm.answer)
    if r.audit_salt is not None:
        config = dataclasses.replace(config, audit_salt=r.audit_salt.secret)
    binding = _binding(r, specs, fixtures, config, fresh_process)
    if shard is not None:
        binding["shard"] = str(r.shard)  # only when sharded: a resume must repeat it
    done: frozenset = frozenset()
    header: RunHeader | None = RunHeader(run_id=r.run_id, binding=binding)
    if r.resume:
        done, header = _resumable(records_path, binding), None
        if r.llm is not None:
            # --budget-usd bounds the run, not each invocation: earlier invocations' spend counts.
            r.llm.budget.carry(sum(c["usd"] for c in read_spend_ledger(records_path.parent)))
        log(f"resuming run {r.run_id}: {len(done)} scenario passes already recorded")
    return Plan(request=r, config=config, fresh_process=fresh_process, fixtures=fixtures, held_out=held_out,
                gold=gold, free_form=free_form, specs=specs, records_path=records_path, binding=binding, done=done,
                header=header, shard=shard)


def refuse_wrong_gold(fixtures: list[Path], gold_dir: Path) -> None:
    """The semantic checks of ``drift-conformance validate`` over a run's selection: a gold
    answer its own evidence contradicts would score every system (the oracle included) against
    a wrong key, so it stops the run before any adapter starts.

    Raises:
        CorpusError: naming the first failing gold file, with up to 20 of the problems.
    """
    from conformance.answer.answerable import check_selection

    for fixture in fixtures:
        problems = check_selection([fixture], gold_dir)
        if problems:
            shown = "\n  ".join(problems[:20]) + (f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else "")
            raise CorpusError(Path(gold_dir) / f"{fixture.stem}.json",
                              f"{len(problems)} probe(s) fail the semantic checks of `drift-conformance validate` "
                              f"(the run would score against this gold):\n  {shown}")


def _shard_part(r: RunRequest, fixtures: list[Path]) -> tuple[list[Path], dict | None]:
    """``--shard I/N``: (this shard's fixtures, the receipt's ``config.shard`` block), or the
    selection as it is and None. The block names the whole selection, so ``merge`` can tell a
    missing shard, and which scenarios it held, from this shard's result alone.

    Raises:
        JobError: more shards than selected scenarios, whichever shard this is: some shard
            of N then holds none, so the N results ``merge`` needs can never all exist.
    """
    if r.shard is None:
        return fixtures, None
    mine = split(fixtures, r.shard)
    if r.shard.count > len(fixtures):
        held = f"shard {r.shard.index} of {r.shard.count} has none" if not mine else \
            f"shards {len(fixtures) + 1} to {r.shard.count} of {r.shard.count} would have none"
        raise JobError(f"--shard {r.shard}: the selection has {len(fixtures)} scenarios, so {held}; "
                       f"use at most {len(fixtures)} shards")
    return mine, {"index": r.shard.index, "count": r.shard.count, "scenarios": [p.stem for p in mine],
                  "selection_scenarios": sorted(p.stem for p in fixtures),
                  "selection_hash": selection_hash(fixtures, r.gold_dir)}


def _binding(r: RunRequest, specs: list[str], fixtures: list[Path], config: RunConfig, fresh_process: bool) -> dict:
    """The options a resume must repeat (the run header's ``binding``)."""
    binding = {"adapters": specs, "selection": r.selection.describe(),
               "selection_hash": selection_hash(fixtures, r.gold_dir), "k": config.k,
               "budget_tokens": config.budget_tokens, "encoding": config.encoding,
               "flush_timeout_s": config.flush_timeout_s, "repeats": r.repeats, "isolation": r.isolation}
    if r.llm is not None:
        binding.update(r.llm.binding())  # only when set: headers of hermetic runs keep their shape
    if fresh_process:
        binding["fresh_process"] = True  # only when on: other headers keep their shape
    if not r.gate.is_hard:
        # Only when not hard: hard-gate headers stay as they were, and a run recorded before
        # --gate existed resumes as hard (a missing key compares as None against "soft:K").
        binding["gate"] = str(r.gate)
    if r.audit_salt is not None:
        # The commitment, never the salt; only when salted, so unsalted headers keep their shape.
        binding["audit_salt"] = r.audit_salt.commitment
    return binding


def stream(plan: Plan, log: Callable[[str], None], progress: Progress) -> Streamed:
    """Start the systems, stream the corpus through them into the records, and stop them.

    Raises:
        JobError: two systems share a label, ``--baseline-system`` names none of them, or an
            LLM stop left no finished scenario.
        JobInterrupted: Ctrl-C or SIGTERM (adapters stopped, records kept).
    """
    r = plan.request
    if r.audit_salt is not None and r.audit_salt.secret is None:
        raise JobError("an audit salt's commitment without the salt cannot seed the audit (only merge takes one); "
                       "give the salt file with --audit-salt-file")
    systems: list = []
    # tiktoken's one-off load (seconds) overlaps the adapters' start-up.
    tokenizer = threading.Thread(target=_load_encoding, args=(plan.config.encoding,), name="tiktoken-load",
                                 daemon=True)
    tokenizer.start()
    try:
        _open(plan, systems, tokenizer, log)
        log(f"records: {plan.records_path}")
        if r.llm is not None:
            r.llm.budget.on_charge = spend_ledger_writer(plan.records_path.parent)
        try:
            summary = run_corpus(plan.fixtures, systems, plan.records_path, plan.config,
                                 namespace_prefix=f"drift-{r.run_id}", progress=progress, repeats=r.repeats,
                                 concurrency=r.concurrency, done=plan.done, header=plan.header, gate=r.gate,
                                 fresh_process=plan.fresh_process)
        except LLMError as exc:
            # A spent budget or an API that stays down: stop cleanly, score what finished.
            stopped = (f"the run stopped early: {exc} Records and cached answers are kept in "
                       f"{plan.records_path.parent}; continue with --resume {r.run_id} (and the same options)")
            log(stopped)
            return _finished_part(plan, systems, stopped)
        except KeyboardInterrupt:
            raise JobInterrupted(f"interrupted; adapters stopped; records so far are kept in {plan.records_path}; "
                                 f"continue with --resume {r.run_id} (and the same options)") from None
    finally:
        close_systems(systems)
    return Streamed(systems=systems, scenarios=summary.scenarios, fixtures=plan.fixtures, gold=plan.gold)


def _open(plan: Plan, systems: list, tokenizer: threading.Thread, log: Callable[[str], None]) -> None:
    """Start every system into ``systems`` (the caller closes them, also when this raises)."""
    r = plan.request
    log(f"starting adapters {', '.join(plan.specs)}")
    # The reference compressor runs as the normaliser unless the user asked to test it.
    kinds = ["control" if spec == "none" else "reference" if spec == REFERENCE and spec not in r.adapters else None
             for spec in plan.specs]
    systems.extend(open_systems(list(zip(plan.specs, kinds)), r.deadlines, log=log, isolation=r.isolation,
                                tolerate=True))
    tokenizer.join()
    systems.insert(1, OracleSystem(plan.gold))
    labels = [s.label for s in systems]
    if len(set(labels)) != len(labels):
        raise JobError(f"two adapters share a name: {labels}; run them separately")
    if r.baseline_system is not None and r.baseline_system not in labels:
        raise JobError(f"--baseline-system {r.baseline_system}: not a system of this run ({', '.join(labels)})")


def _finished_part(plan: Plan, systems: list, stopped: str) -> Streamed:
    """After an LLM stop: the scenarios whose first pass finished, which alone are scored."""
    finished = {(r.scenario_id, r.repeat)
                for r in typed_records(plan.records_path, frozenset({"scenario_done"}))}
    fixtures = [p for p in plan.fixtures if (p.stem, 1) in finished]
    if not fixtures:
        raise JobError(f"{stopped}. No scenario finished, so no result was written")
    return Streamed(systems=systems, scenarios=[p.stem for p in fixtures], fixtures=fixtures,
                    gold={p.stem: plan.gold[p.stem] for p in fixtures}, stopped=stopped, finished=finished)


def grade(plan: Plan, streamed: Streamed, log: Callable[[str], None]) -> Graded:
    """Read the records scoring needs back (compacted), grade the answer model's answers
    (with ``--judge-model``, the judge's verdicts), total the spend, and split off the
    ``--known-bad`` probes.

    Raises:
        JobInterrupted: Ctrl-C or SIGTERM while judging (verdicts so far are kept).
    """
    r = plan.request
    shared: dict = {}
    records = [compact(x, shared) for x in iter_records(plan.records_path)
               if x.get("kind") in ("store", "probe", "state")
               and (streamed.finished is None or (x["scenario_id"], x.get("repeat", 1)) in streamed.finished)]
    grading = _judge(plan, streamed, records, log) if r.llm is not None and r.llm.answer is not None else None
    spend = llm_spend(records, r.llm, plan.records_path.parent) if r.llm is not None else None
    internal = systems_llm_usage(records)
    if internal:
        # Systems' own LLM calls (mem0 infer, graphiti, the reference compressor's LLM form): their
        # tokens as they report them; priced by their own providers, so no USD here.
        spend = {**(spend or {}), "systems": internal}
    # --known-bad: listed probes leave the headline (every metric) and are scored apart.
    bad_ids = set((r.known_bad or {}).get("items", {}))
    gold_all = gold = streamed.gold
    unmatched = bad_ids - {p.probe_id for g in gold_all.values() for p in g.probes}
    if unmatched:
        log(f"--known-bad: {len(unmatched)} listed ids name no probe of this run: "
            + ", ".join(sorted(unmatched)[:5]))
    bad_records: list[dict] = []
    if bad_ids:
        kept = []
        for record in records:
            (bad_records if record["kind"] == "probe" and record["probe_id"] in bad_ids else kept).append(record)
        records = kept
        gold = {sid: g.model_copy(update={"probes": [p for p in g.probes if p.probe_id not in bad_ids]})
                for sid, g in gold_all.items()}
    return Graded(records=records, bad_records=bad_records, gold=gold, gold_all=gold_all, bad_ids=bad_ids,
                  unmatched=unmatched, grading=grading, spend=spend)


def _judge(plan: Plan, streamed: Streamed, records: list[dict], log: Callable[[str], None]):
    """Grade the answer model's answers (:func:`conformance.llm.judge.grade_records`) and mark
    each probe record with its grade, in place."""
    r = plan.request
    try:
        grading = grade_records(records, streamed.gold, r.llm.judge, seed=r.seed, out_dir=plan.records_path.parent,
                                log=log)
    except KeyboardInterrupt:
        raise JobInterrupted(f"interrupted while judging; adapters stopped; records and verdicts so far are kept in "
                             f"{plan.records_path.parent}; continue with --resume {r.run_id} (and the same options): "
                             "cached answers and verdicts cost nothing") from None
    for record in records:
        if record["kind"] != "probe":
            continue
        record["answer_scored"] = True
        grade = grading.grades.get((record["system"], record["scenario_id"], record["probe_id"],
                                    record.get("repeat", 1)))
        if grade is not None and grading.error and not record.get("closed"):
            # Judging stopped early: each system would be scored on a different, non-random
            # subset of its free-form answers, so none is (n/a, with the reason).
            grade = {**grade, "correct": None}
        if grade is not None:
            record["grade"] = grade
    return grading


@dataclass
class Scoring:
    """Per system label, what its result is built from: records and probe rows of the first
    pass (and of the second, ``--repeat 2``), DRIFT suites and the state audit."""

    by_system: dict[str, list[dict]]
    second: dict[str, list[dict]]
    audits: dict[str, dict | None]
    sessions_of: dict[str, dict[str, str]]
    """Per scenario, evidence message id -> session id."""
    paradigm_of: dict[str, str]
    rows: dict[str, list[ProbeRow]]
    rows2: dict[str, list[ProbeRow]]
    suites: dict
    suites2: dict


def score(plan: Plan, streamed: Streamed, graded: Graded) -> tuple[dict[str, SystemResult], Scoring]:
    """Every system's :class:`SystemResult` by label, and what they were built from (its
    probe rows and DRIFT suites, which the run's comparisons and ceiling read)."""
    scoring = _scoring(plan, streamed, graded)
    results = {system.label: _system_result(system, plan, graded, scoring) for system in streamed.systems}
    return results, scoring


def _scoring(plan: Plan, streamed: Streamed, graded: Graded) -> Scoring:
    r = plan.request
    by_system: dict[str, list[dict]] = defaultdict(list)
    second: dict[str, list[dict]] = defaultdict(list)
    for record in graded.records:
        (by_system if record.get("repeat", 1) == 1 else second)[record["system"]].append(record)
    graded.records = []  # by_system and second hold them now
    # The memory-state audit: a system whose Snapshot disagrees with Retrieve is scored without it.
    audits = {label: apply_state_audit(recs) for label, recs in by_system.items()}
    # Only evidence ids are looked up (recall); keeping every message id would grow with the run.
    sessions_of = {}
    for p in streamed.fixtures:
        evidence = {e for probe in graded.gold_all[p.stem].probes for e in probe.evidence}
        sessions_of[p.stem] = {m: s for m, s in session_index(p).items() if m in evidence}
    paradigm_of = {p.stem: read_header(p).paradigm for p in streamed.fixtures}
    answered = r.llm is not None and r.llm.answer is not None

    def probe_rows(recs: list[dict]):
        return build_probe_rows([x for x in recs if x["kind"] == "probe"], graded.gold, sessions_of)

    def suite(label: str, rows: dict, records: dict):
        return drift_suite(label, rows, records, graded.gold, paradigm_of, n_boot=r.n_boot, seed=r.seed,
                           answer_model=answered)

    labels = [s.label for s in streamed.systems]
    rows = {label: probe_rows(by_system[label]) for label in labels}
    suites = {label: suite(label, rows, by_system) for label in labels}
    rows2 = {label: probe_rows(second[label]) for label in labels if second.get(label)}
    suites2 = {label: suite(label, rows2, second) for label in rows2}
    return Scoring(by_system=by_system, second=second, audits=audits, sessions_of=sessions_of,
                   paradigm_of=paradigm_of, rows=rows, rows2=rows2, suites=suites, suites2=suites2)


def write_verdicts(records_path: Path, scoring: Scoring, gold: dict) -> int:
    """Append one ``verdict`` record per scored probe row of the first pass (correct, failure
    cause, recall@k), so the report's run explorer shows verdicts without reading gold again.
    Returns how many were written."""
    writer = RecordWriter(records_path)
    written = 0
    try:
        for label, rows in scoring.rows.items():
            causes = probe_causes(rows, scoring.by_system[label], gold, scoring.sessions_of)
            for row in rows:
                writer.write(VerdictRecord(system=label, scenario_id=row.scenario_id, probe_id=row.probe_id,
                                           probe_type=row.probe_type, correct=row.correct,
                                           cause=causes.get((label, row.scenario_id, row.probe_id)),
                                           recall_at_k=row.recall_at_k))
                written += 1
        writer.sync()
    finally:
        writer.close()
    return written


def _system_result(system, plan: Plan, graded: Graded, s: Scoring) -> SystemResult:
    r, label = plan.request, system.label
    recs = s.by_system[label]
    probes = [x for x in recs if x["kind"] == "probe"]
    metrics = _system_metrics(label, plan, graded, s)
    paired_none, versus, noise = _paired_blocks(label, r, s)
    judging = judging_counts(graded.grading.grades, label) if graded.grading is not None else {}
    apart = {}
    if graded.bad_ids:
        apart = known_bad_metrics([x for x in graded.bad_records if x["system"] == label and x.get("repeat", 1) == 1],
                                  graded.gold_all, graded.bad_ids, s.sessions_of, n_boot=r.n_boot, seed=r.seed)
    return SystemResult(adapter=getattr(system, "spec", label), kind=system.kind, known_bad=apart,
                        describe=system.describe, isolation=system.isolation, metrics=metrics,
                        paired_vs_none=paired_none, paired_vs_baseline=versus,
                        baseline_system=r.baseline_system if versus else None, noise_floor=noise,
                        measurement=s.suites[label].measurement, series=s.suites[label].series,
                        notes=_system_notes(system, plan, s, metrics, judging), judging=judging,
                        state_audit=s.audits.get(label),
                        failure_causes=system_causes(s.rows[label], recs, graded.gold, s.sessions_of),
                        findings=provenance_findings(probes, plan.config.budget_tokens,
                                                     {x["session_id"] for x in recs if x["kind"] == "store"}),
                        gate=gate_view(s.rows[label], s.paradigm_of, system.describe, s.rows2.get(label)))


def _system_metrics(label: str, plan: Plan, graded: Graded, s: Scoring) -> dict:
    """One system's metrics: per probe, the DRIFT suite, then the scope-breach rate."""
    r, recs = plan.request, s.by_system[label]
    metrics = score_system(s.rows[label], [x for x in recs if x["kind"] == "store"],
                           [x for x in recs if x["kind"] == "probe"], n_boot=r.n_boot, seed=r.seed)
    metrics.update(s.suites[label].metrics)
    audit = s.audits.get(label)
    if audit is not None and not audit["passed"]:
        metrics = audit_reasons(metrics)
    if graded.grading is not None and graded.grading.error:
        for name, metric in metrics.items():
            if metric.value is None and (metric.reason == FREE_FORM_REASON
                                         or "need an answer model" in (metric.reason or "")):
                metrics[name] = metric.model_copy(update={"reason": "judging stopped early (see errors): free-form "
                                                                    "accuracy is not published on a partial subset"})
    metrics["scope_breach_rate"] = scope_breach_rate(recs, n_boot=r.n_boot, seed=r.seed)
    return metrics


def _paired_blocks(label: str, r: RunRequest, s: Scoring) -> tuple[dict, dict, dict]:
    """(paired_vs_none, paired_vs_baseline, noise_floor) of one system; {} where not asked for."""
    def paired(mine, theirs, suite, other_suite) -> dict:
        # Per-probe differences, then DRIFT metrics from the shared count matrix.
        return {**paired_vs(mine, theirs, n_boot=r.n_boot, seed=r.seed), **paired_suite(suite, other_suite)}

    rows, suite = s.rows[label], s.suites[label]
    paired_none = {} if label == "none" else paired(rows, s.rows["none"], suite, s.suites["none"])
    versus = ({} if r.baseline_system in (None, label)
              else paired(rows, s.rows[r.baseline_system], suite, s.suites[r.baseline_system]))
    noise = {}
    if label in s.rows2:
        noise = paired(s.rows2[label], rows, s.suites2[label], suite)
    return paired_none, versus, noise


def _system_notes(system, plan: Plan, s: Scoring, metrics: dict, judging: dict) -> list[str]:
    label = system.label
    recs, audit = s.by_system[label], s.audits.get(label)
    notes = []
    failures = infra_failures(recs)
    if failures:
        notes.append(f"{failures} probes unanswered after a fault (crash, missed deadline or garbage reply): "
                     "counted as failed, so every system keeps the same denominators")
    if not system.provenance:
        notes.append("no provenance: recall is n/a, never guessed")
    if audit is not None and not audit["passed"]:
        notes.append(AUDIT_FINDING_NOTE)
    if s.suites[label].measurement.get("selectivity", "").startswith("marker"):
        notes.append("no Snapshot: selectivity measured by marker probing, which credits no forgetting (at most "
                     "0.5); storage, MVOT and TES are n/a")
    breach = breach_note(metrics["scope_breach_rate"], metrics.get("privacy_score"),
                         bool((system.describe or {}).get("capabilities", {}).get("scopes")))
    notes.extend(violation_notes(recs) + ([breach] if breach else []))
    notes.extend(unmetered_notes(system, recs))
    if label == "oracle":
        notes.extend(oracle_notes(recs, plan.config))
    if judging.get("judge_unparseable"):
        notes.append(f"{judging['judge_unparseable']} judge verdicts were neither CORRECT nor INCORRECT: "
                     "counted as wrong")
    if judging.get("not_judged"):
        notes.append(f"{judging['not_judged']} answers were not judged (judging stopped early): left out "
                     "of accuracy, so it rests on fewer probes")
    return notes


def result_document(plan: Plan, streamed: Streamed, graded: Graded, results: dict[str, SystemResult],
                    scoring: Scoring, started_at: str) -> ResultDocument:
    """The ``result.json`` document: receipt, systems, faults, oracle ceiling, instrument checks
    and the comparisons of the systems under test."""
    rows = scoring.rows
    r = plan.request
    receipt = Receipt(
        fixtures_hash=fixtures_hash(r.fixtures_dir, r.gold_dir), gold_hash=gold_hash(r.gold_dir),
        selection_hash=selection_hash(streamed.fixtures, r.gold_dir),
        scenario_hashes=scenario_hashes(streamed.fixtures, r.gold_dir), scenarios=streamed.scenarios,
        config=_receipt_config(plan, graded), git_commit=git_commit(), versions=versions(r.fixtures_dir),
        isolation={s.label: s.isolation for s in streamed.systems}, seed=r.seed,
        started_at=started_at, finished_at=_now(), notes=_receipt_notes(plan, graded, results),
        audit_salt=r.audit_salt.receipt() if r.audit_salt is not None else None)
    faults = _recorded_faults(plan.records_path)
    if streamed.stopped is not None:
        faults.append(f"{streamed.stopped}. The {len(streamed.fixtures)} scenarios that finished are scored")
    if graded.grading is not None and graded.grading.error:
        faults.append(f"{graded.grading.error} Free-form accuracy is n/a for every system (a partial judging would "
                      "score each system on a different subset); fix the cause and rerun or --resume: cached answers "
                      "and verdicts cost nothing")
    ceiling = None
    if "oracle" in rows:
        source_of = {p.stem: read_header(p).source for p in streamed.fixtures}
        ceiling = oracle_ceiling(rows["oracle"], graded.gold, source_of, plan.config.k, plan.config.budget_tokens,
                                 import_flags(r.fixtures_dir))
    generated = all(read_header(p).source.startswith(GENERATED) for p in streamed.fixtures)
    checks = instrument_checks(results, generated=generated, hard_gate=r.gate.is_hard)
    comparisons = compare_systems(scoring.suites, [s.label for s in streamed.systems if s.kind != "control"])
    return ResultDocument(receipt=receipt, systems=results, complete=not faults, errors=faults, spend=graded.spend,
                          oracle_ceiling=ceiling, instrument_checks=checks, comparisons=comparisons)


def _receipt_config(plan: Plan, graded: Graded) -> dict:
    r, config, llm = plan.request, plan.config, plan.request.llm
    answered = llm is not None and llm.answer is not None
    out = {"k": config.k, "budget_tokens": config.budget_tokens, "encoding": config.encoding,
           "flush_timeout_s": config.flush_timeout_s, "adapters": plan.specs, **r.selection.describe(),
           "bootstrap_resamples": r.n_boot,
           "reader": "answer model (Anthropic Messages API)" if answered else "deterministic closed-domain reader v1",
           "answer_model": None, "judge_model": None, **(llm.describe() if llm is not None else {}),
           "gate": str(r.gate), "repeats": r.repeats, "baseline_system": r.baseline_system,
           "reference": REFERENCE if REFERENCE in plan.specs else None,
           "amnesiac": AMNESIAC, "concurrency": r.concurrency, "fresh_process": plan.fresh_process,
           "resumed": r.resume, "host": host(), "fixtures_dir": str(r.fixtures_dir), "gold_dir": str(r.gold_dir),
           "run_id": r.run_id, "records": str(plan.records_path.resolve()),
           "records_sha256": file_sha256(plan.records_path)[0],
           "code": code_identity(adapter_folders(plan.specs), git_commit())}
    if graded.grading is not None:
        out["grades_sha256"] = file_sha256(plan.records_path.parent / GRADES_FILE)[0]
    out["sealed_holdout"] = r.sealed_holdout
    if plan.shard is not None:
        out["shard"] = plan.shard  # only when sharded: whole runs keep their shape
    if graded.bad_ids:
        out["known_bad"] = {"path": r.known_bad["path"], "sha256": r.known_bad["sha256"],
                            "listed": len(graded.bad_ids),
                            "left_out": len({x["probe_id"] for x in graded.bad_records})}
    return out


def _receipt_notes(plan: Plan, graded: Graded, results: dict[str, SystemResult]) -> list[str]:
    r, llm = plan.request, plan.request.llm
    answered = llm is not None and llm.answer is not None
    notes = []
    if plan.free_form:
        notes.append(FREE_FORM_NOTE if not answered else
                     FREE_FORM_JUDGED_NOTE if llm.judge is not None else FREE_FORM_EXACT_NOTE)
    notes += spec_departures(host(), r.concurrency, answered, _reference_form(results))
    notes += llm.notes if llm is not None else []
    if plan.held_out:
        notes.append(f"{len(plan.held_out)} holdout scenarios left out (published runs add --include-holdout)")
    if r.selection.include_holdout:
        notes.append("holdout scenarios included: a published run; never a CI gate input")
    notes += _salt_notes(r)
    if plan.shard is not None:
        notes.append(f"shard {r.shard} of the selection: {len(plan.shard['scenarios'])} of its "
                     f"{len(plan.shard['selection_scenarios'])} scenarios, so every interval here is over this "
                     "shard's scenarios only; `drift-conformance merge` of all shards gives the run's result")
    notes += internal_model_notes(results, llm)
    if graded.unmatched:
        notes.append(f"--known-bad: {len(graded.unmatched)} listed ids name no probe of this run (typos, or other "
                     "scenarios): " + ", ".join(sorted(graded.unmatched)[:5])
                     + (" ..." if len(graded.unmatched) > 5 else ""))
    if not r.gate.is_hard:
        notes.append(r.gate.note(plan.config.budget_tokens))
    if r.sealed_holdout:
        notes.append(f"sealed holdout: {len(r.sealed_holdout['scenarios'])} scenarios generated from a secret seed "
                     f"(SHA-256 {r.sealed_holdout['seed_sha256'][:16]}...) in place of the committed holdout; they "
                     "exist in no repository and were deleted after the run")
    return notes


def _salt_notes(r: RunRequest) -> list[str]:
    """A published run without an audit salt departs from what publishing needs (docs/audit.md);
    a salted run's commitment is in ``receipt.audit_salt``, not a departure."""
    if r.audit_salt is None and (r.selection.include_holdout or r.sealed_holdout):
        return ["no audit salt: the state audit's choices are seeded by public ids, so an adapter can replay them "
                "(bench/attacks/seed_replay); a published run gives --audit-salt-file (docs/audit.md)"]
    return []


def _reference_form(results: dict) -> str:
    reference = results.get(REFERENCE)
    settings = (reference.describe or {}).get("settings") if reference is not None else None
    return str((settings or {}).get("form") or "")


def internal_model_notes(results: dict, llm=None) -> list[str]:
    """One receipt note per system that runs its own models (the guide's rule 2: a system is
    reported with its internal LLM), saying whether it matches the answer model."""
    answer = llm.answer.model if llm is not None and llm.answer is not None else None
    notes = []
    for label, result in results.items():
        models = [m for m in (result.describe or {}).get("internal_models") or [] if m]
        if not models:
            continue
        text = f"{label} runs internal models: {', '.join(models)}"
        if answer is not None:
            text += ("; one of them is the answer model" if answer in models else
                     f"; none is the answer model ({answer}): report {label} together with them")
        notes.append(text)
    return notes


def known_bad_metrics(records: list[dict], gold: dict, bad_ids: set, sessions_of: dict, *, n_boot: int,
                      seed: int) -> dict:
    """One system's accuracy, abstention accuracy and recall over the ``--known-bad`` probes."""
    if not records:
        return {}
    gold_bad = {sid: g.model_copy(update={"probes": [p for p in g.probes if p.probe_id in bad_ids]})
                for sid, g in gold.items()}
    gold_bad = {sid: g for sid, g in gold_bad.items() if g.probes}
    rows = build_probe_rows(records, gold_bad, sessions_of)
    metrics = score_system(rows, [], records, n_boot=n_boot, seed=seed)
    return {name: metrics[name] for name in ("accuracy", "abstention_accuracy", "recall_at_k",
                                             "recall_all_in_budget")}


def import_flags(fixtures_dir: Path) -> dict[str, set[str]]:
    """Probe ids an ``import-report.json`` beside the fixture folder flags as doubtful gold,
    per issue kind the oracle ceiling splits wrong answers by (``FLAGGED_KINDS``)."""
    import json

    from conformance.scoring.ceiling import FLAGGED_KINDS

    path = Path(fixtures_dir).parent / "import-report.json"
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
        issues = report.get("issues", {})
        return {kind: {i["item_id"] for i in issues.get(kind, []) if i.get("item_id")} for kind in FLAGGED_KINDS}
    except (OSError, ValueError, AttributeError, TypeError, KeyError):
        return {}


def load_known_bad(path: Path) -> dict:
    """Read a ``--known-bad`` file: a YAML mapping of probe id -> reason (non-empty text).

    Returns ``{"path", "sha256", "items"}``. Raises JobError naming the file and the line or
    entry (the input limits of :func:`conformance.contract.limits.load_yaml` apply).
    """
    from conformance.contract.limits import load_yaml

    data = load_yaml(Path(path), lambda p, where, message: JobError(f"{p}: {where}: {message}"))
    _refuse_duplicate_keys(Path(path))
    if not isinstance(data, dict) or not data:
        raise JobError(f"{path}: expected a YAML mapping of probe id -> reason, e.g. "
                       "'locomo-conv-26-q0042: gold answer contradicts its evidence'")
    for key, reason in data.items():
        if not isinstance(key, str) or not isinstance(reason, str) or not reason.strip():
            raise JobError(f"{path}: entry {str(key)[:80]!r}: needs a probe id and a non-empty reason")
    return {"path": str(path), "sha256": file_sha256(Path(path))[0], "items": dict(data)}


SPEND_LEDGER = "spend.jsonl"
"""One line per LLM call a run paid for (every invocation, appended as the call is charged):
``{"role", "model", "usd", "input_tokens", "output_tokens"}``."""


def read_spend_ledger(run_dir: Path) -> list[dict]:
    """The calls a run paid for so far (its ``spend.jsonl``; [] when none). A torn last line
    (a run killed while writing it) is skipped; any other bad line is an error naming it."""
    import json

    path = Path(run_dir) / SPEND_LEDGER
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    for number, line in enumerate(lines, start=1):
        try:
            entry = json.loads(line)
            out.append({"role": str(entry.get("role", "")), "usd": float(entry["usd"]),
                        "input_tokens": int(entry["input_tokens"]), "output_tokens": int(entry["output_tokens"])})
        except (ValueError, KeyError, TypeError, AttributeError):
            if number == len(lines):
                continue
            raise JobError(f"{path}: line {number}: not a spend record; the run's spend cannot be carried over "
                           "(restore the file or start a new run)") from None
    return out


def spend_ledger_writer(run_dir: Path):
    """A :attr:`Budget.on_charge` callback appending each paid call to the run's ledger."""
    import json

    path = Path(run_dir) / SPEND_LEDGER
    path.parent.mkdir(parents=True, exist_ok=True)

    def write(charge) -> None:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps({"role": charge.role, "model": charge.model, "usd": float(charge.cost_usd),
                                  "input_tokens": charge.input_tokens, "output_tokens": charge.output_tokens},
                                 sort_keys=True) + "\n")
    return write


def _refuse_duplicate_keys(path: Path) -> None:
    """PyYAML keeps the last of two equal keys silently; a listing must not hide one of two reasons."""
    import yaml

    node = yaml.compose(path.read_text(encoding="utf-8"))
    if not isinstance(node, yaml.MappingNode):
        return
    seen: dict = {}
    for key, _ in node.value:
        if key.value in seen:
            raise JobError(f"{path}: line {key.start_mark.line + 1}: probe id {key.value!r} is listed twice (first on "
                           f"line {seen[key.value]}); keep one entry with one reason")
        seen[key.value] = key.start_mark.line + 1


def systems_llm_usage(records: list[dict]) -> dict[str, dict[str, int]]:
    """Per system, the LLM calls and tokens its Store, Flush and Retrieve replies reported
    (``usage``; a state record's ``flush_usage``), every replicate included; systems that
    reported none are left out."""
    out: dict[str, dict[str, int]] = {}
    for record in records:
        usage = record.get("flush_usage") if record.get("kind") == "state" else record.get("usage")
        if not usage or not any(usage.get(k) for k in ("llm_calls", "input_tokens", "output_tokens")):
            continue
        mine = out.setdefault(record["system"], {"llm_calls": 0, "input_tokens": 0, "output_tokens": 0})
        for key in mine:
            mine[key] += int(usage.get(key) or 0)
    return out


def llm_spend(records: list[dict], llm, run_dir: Path) -> dict:
    """What the answer model and the judge cost, for the whole run.

    ``answer`` and ``judge``: calls made, input and output tokens and USD over every
    invocation of the run (its spend ledger, so a resumed or interrupted run is counted in
    full), and ``cached_calls``: calls this invocation served from the response cache; the
    answer block also lists the ``served_models`` of the scored probe records. ``total_usd``:
    the run's spend; ``spent_this_invocation_usd`` and ``spent_earlier_usd`` split it.
    """
    ledger = read_spend_ledger(run_dir)
    blocks = {}
    for role in ("answer", "judge"):
        mine = [c for c in ledger if c["role"] == role]
        cached = sum(1 for c in llm.budget.charges if c.cached and c.role == role)
        blocks[role] = {"calls": len(mine), "cached_calls": cached,
                        "input_tokens": sum(c["input_tokens"] for c in mine),
                        "output_tokens": sum(c["output_tokens"] for c in mine),
                        "cost_usd": round(sum(c["usd"] for c in mine), 6)}
    blocks["answer"]["served_models"] = sorted({r["answer_call"]["served_model"] for r in records
                                                if r["kind"] == "probe" and r.get("answer_call")})
    budget = llm.budget.summary()
    return {"answer": blocks["answer"], "judge": blocks["judge"] if llm.judge is not None else None,
            "total_usd": round(sum(c["usd"] for c in ledger), 6),
            "budget_usd": budget["limit_usd"],
            "spent_this_invocation_usd": round(budget["spent_usd"] - budget["prior_usd"], 6),
            "spent_earlier_usd": round(budget["prior_usd"], 6),
            "budget_exhausted": budget["exhausted"]}


def _resumable(records_path: Path, binding: dict) -> frozenset:
    """The finished (scenario, repeat) pairs of a run to resume; its records are cut back to them."""
    if not records_path.exists():
        raise JobError(f"--resume: no records at {records_path} (check --records-dir and the run id)")
    header, done = keep_completed(records_path)
    if header is None:
        raise JobError(f"--resume: {records_path} has no run header (written before --resume existed); rerun it")
    theirs = header.get("binding", {})
    differing = sorted(k for k in set(binding) | set(theirs) if binding.get(k) != theirs.get(k))
    if differing:
        # keys _binding writes only when not the default
        absent = {"gate": "hard", "fresh_process": False, "audit_salt": "none"}
        shown = "; ".join(f"{k}: recorded {theirs.get(k, absent.get(k))!r}, now {binding.get(k, absent.get(k))!r}"
                          for k in differing)
        raise JobError(f"--resume: the options differ from the interrupted run's ({shown}); resume with the same "
                       "options and corpus")
    return frozenset(done)


def _recorded_faults(records_path: Path) -> list[str]:
    """Every fault of the run, resumed parts included, in record order."""
    return [r.error for r in typed_records(records_path, frozenset({"fault"}))]


def violation_notes(records: list[dict]) -> list[str]:
    """One note per kind of contract violation, with how many calls showed it."""
    counts: dict[str, int] = defaultdict(int)
    for record in records:
        for violation in record.get("violations") or []:
            kind = "Store" if record["kind"] == "store" else "Retrieve"
            counts[f"{kind} {violation.split(' (')[0]}"] += 1
        for violation in record.get("flush_violations") or []:  # state records: the checkpoint's Flush
            counts[f"Flush {violation.split(' (')[0]}"] += 1
    return [f"contract violation: {what} in {n} calls" for what, n in sorted(counts.items())]


UNMETERED_NOTE = ("reports no LLM tokens in any Store, Flush or Retrieve call, yet runs with outbound network "
                  "({why}): tokens a server it calls spends (or a background thread) are not counted, so token "
                  "cost, TES and DRIFT-E count its storage alone (usage is self-reported)")


def unmetered_notes(system, records: list[dict]) -> list[str]:
    """A note for a system that reports zero LLM usage in every Store, Flush and Retrieve call while its runtime
    has outbound network (Docker isolation said ``outbound``, or adapter.yaml asks for it).

    Usage is the adapter's own report and the harness cannot meter a model it reaches over the network:
    a memory whose server extracts facts with an LLM (Zep, Honcho) reports none, and one that calls a
    hosted model and says nothing looks as cheap as the extractive reference. Without network a model
    can only run in the adapter's own limits, so the note is only for those with it. ``records``: the
    system's run records. Returns ``[]`` or one line."""
    isolation = getattr(system, "isolation", None) or {}
    network = isolation.get("network") if isinstance(isolation.get("network"), dict) else {}
    manifest = getattr(getattr(system, "process", None), "manifest", None)
    if network.get("mode") == "outbound":
        why = network.get("why") or "Docker network outbound"
    elif manifest is not None and getattr(manifest, "network", None) == "outbound":
        why = "adapter.yaml network: outbound"
    else:
        return []
    calls = [r for r in records if r.get("kind") in ("store", "probe") and r.get("error") is None]
    usage = [r.get("usage") or {} for r in calls] + [r.get("flush_usage") or {} for r in records
                                                     if r.get("kind") == "state"]
    if not calls or any(int(u.get("input_tokens") or 0) + int(u.get("output_tokens") or 0) for u in usage):
        return []
    return [UNMETERED_NOTE.format(why=why)]


def oracle_notes(records: list[dict], config: RunConfig) -> list[str]:
    """Why the oracle ceiling may sit below 1: evidence beyond k, or a budget too small."""
    notes = []
    probes = [r for r in records if r["kind"] == "probe" and r.get("repeat", 1) == 1]
    # Buffer hits (soft:K) are the harness's, not the oracle's: only retrieved hits count here.
    cut = sum(1 for r in probes if sum(not h.get("from_buffer") for h in r["hits"]) == config.k)
    starved = sum(1 for r in probes if r["hits"] and not any(h["in_budget"] for h in r["hits"]))
    if cut:
        notes.append(f"{cut} probes cite k={config.k} or more evidence messages: the oracle returns the first k")
    if starved:
        notes.append(f"{starved} probes: not even the oracle's first evidence fits the {config.budget_tokens}-token "
                     f"budget")
    return notes


def scored_anything(doc: ResultDocument) -> bool:
    """True when at least one non-control system has a defined headline metric."""
    for result in doc.systems.values():
        if result.kind in ("control", "reference"):
            continue
        for name in ("accuracy", "abstention_accuracy", "recall_at_k"):
            metric = result.metrics.get(name)
            if metric is not None and metric.value is not None:
                return True
    return False

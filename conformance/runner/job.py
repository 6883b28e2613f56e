"""One whole run: start the systems, stream the corpus, score, and build ``result.json``."""

from __future__ import annotations

import dataclasses
import os
import platform
import secrets
import subprocess
import threading
from collections import defaultdict
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from drift_sdk.llm.errors import LLMError

from conformance.answer.tokens import encoding
from conformance.backend.client import Deadlines
from conformance.contract.corpus import (
    Selection,
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
from conformance.runner.formats import schema_versions
from conformance.gate.cells import gate_view
from conformance.paths import data_root
from conformance.runner.audit import AUDIT_FINDING_NOTE, apply_state_audit, audit_reasons, provenance_findings
from conformance.runner.budget_gate import HARD, BudgetGate
from conformance.runner.records import RunLock, compact, iter_records, keep_completed
from conformance.llm.judge import GRADES_FILE, grade_records, judging_counts
from conformance.runner.run import Progress, RunConfig, RunSummary, run_corpus
from conformance.backend.systems import OracleSystem, close_systems, open_systems, plan_adapter
from conformance.scoring import build_probe_rows, infra_failures, paired_vs, score_system
from conformance.scoring.causes import system_causes
from conformance.scoring.pairwise import compare_systems
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


def run_job(adapters: list[str], fixtures_dir: Path, gold_dir: Path, *, records_dir: Path,
            run_id: str | None = None, resume: bool = False, **options) -> ResultDocument:
    """:func:`run_unlocked` holding the run folder's lock (:class:`~conformance.runner.records.RunLock`)
    from start to result, so two runners never write one run's records.

    Raises:
        RunLocked: another runner holds this run's folder (its pid, host and start time named).
        And everything :func:`run_unlocked` raises.
    """
    if resume and not run_id:
        raise JobError("--resume needs the id of the run to continue")
    run_id = run_id or new_run_id()
    with RunLock(Path(records_dir) / run_id):
        return run_unlocked(adapters, fixtures_dir, gold_dir, records_dir=records_dir, run_id=run_id, resume=resume,
                            **options)


def run_unlocked(adapters: list[str], fixtures_dir: Path, gold_dir: Path, *, selection: Selection = Selection(),
            config: RunConfig = RunConfig(), records_dir: Path, seed: int = 0, n_boot: int = 2000,
            deadlines: Deadlines = Deadlines(), log=lambda msg: None, progress: Progress = Progress(),
            run_id: str | None = None, repeats: int = 1, baseline_system: str | None = None,
            isolation: str | None = None, sealed_holdout: dict | None = None, concurrency: int = 1,
            resume: bool = False, gate: BudgetGate = HARD, llm=None, known_bad: dict | None = None,
            fresh_process: bool | None = None) -> ResultDocument:
    """Run ``adapters`` (plus the none and oracle controls and the reference compressor) and score them.

    ``repeats`` streams the whole corpus that many times into fresh namespaces; metrics
    come from the first pass and ``noise_floor`` from the second minus the first.
    ``baseline_system`` (a system label of this run) adds ``paired_vs_baseline``.
    ``isolation`` (``"docker"`` or ``"process"``) overrides the mode each adapter spec implies,
    controls included (``conformance.backend.systems.plan_adapter``).
    ``sealed_holdout`` (``{"seed_sha256", "scenarios"}``): the corpus carries a sealed
    holdout (:mod:`conformance.world.sealed`); recorded in the receipt, never the seed.
    ``concurrency``: scenarios streamed at once against the same adapter instances.
    ``gate``: the budget gate variant (DRIFT §5.2: ``hard``, ``soft:K``, ``summary:N``),
    recorded in the receipt config (``gate``, its ``--gate`` spelling) and, when not
    hard, in the run header (so a resume with another gate is refused) and a receipt note.
    ``resume``: continue run ``run_id`` from its records (scenarios with a
    ``scenario_done`` record are kept, the rest rerun); the settings must be the same.
    ``llm``: a :class:`conformance.llm.settings.LLMSettings` (``--answer-model``,
    ``--judge-model``, ``--budget-usd``): the answer model answers every probe, the judge
    grades free-form answers after streaming (:mod:`conformance.llm.judge`), and the result
    gets ``spend``. A spent budget or an LLM error that survives its retries stops the run
    cleanly: finished scenarios are scored, the result is incomplete (exit 2), the records
    and the response cache keep everything paid for, and ``--resume`` continues.
    ``fresh_process`` (``--fresh-process``): a new adapter process per scenario, so nothing an
    adapter learns crosses scenarios; None means on exactly for published runs (holdout included
    or sealed). Recorded in the receipt config (``fresh_process``) and, when on, the run header.
    ``known_bad``: ``{"path", "sha256", "items": {probe id: reason}}`` (``--known-bad``): those
    probes are asked as usual but left out of every metric, and each system's accuracy and
    recall over them are reported apart (``SystemResult.known_bad``).

    A system that fails mid-run (crash, missed deadline, garbage) does not stop the run:
    its faults are recorded, its unanswered probes count as failed (same denominators for
    every system), and the result is marked incomplete (``complete`` false, ``errors``).
    So does an adapter that never becomes ready at the start (it exits, never serves, its
    Describe fails): it is scored as failed (``isolation.start_error``), the others run.

    Raises:
        CorpusError: the corpus does not validate.
        JobError: filters match nothing, the run was
            interrupted (records kept; resume it), or a resume does not match its run.
    """
    started_at = _now()
    if resume and not run_id:
        raise JobError("--resume needs the id of the run to continue")
    run_id = run_id or new_run_id()
    for folder, what in ((fixtures_dir, "fixture"), (gold_dir, "gold")):
        if not Path(folder).is_dir():
            raise JobError(f"{what} folder {folder} does not exist")
    if not fixture_files(fixtures_dir):
        raise JobError(f"no fixtures (*.jsonl) in {fixtures_dir}")
    fixtures, held_out = select_fixtures(fixtures_dir, selection)
    if not fixtures:
        filters = ", ".join(f"{k}={v}" for k, v in selection.describe().items() if v)
        raise JobError(f"the filters ({filters or 'none'}) match no fixture in {fixtures_dir}"
                       + (f" ({len(held_out)} holdout scenarios need --include-holdout)" if held_out else ""))
    # Only what this run reads is validated; `drift-conformance validate` checks the whole corpus.
    gold = validate_selection(fixtures, gold_dir)
    free_form = any(read_header(p).free_form for p in fixtures)

    if repeats < 1:
        raise JobError(f"--repeat must be at least 1, got {repeats}")
    if fresh_process is None:
        fresh_process = selection.include_holdout or sealed_holdout is not None
    if fresh_process and concurrency > 1:
        raise JobError(f"--fresh-process (the default with --include-holdout and --sealed-holdout) starts a new "
                       f"adapter process per scenario, which --concurrency {concurrency} cannot share: pass "
                       "--concurrency 1 or --no-fresh-process")
    specs = ["none", REFERENCE] + [a for a in adapters if a not in ("none", REFERENCE)]
    for spec in specs:
        if spec != "oracle":
            plan_adapter(spec, isolation)  # a misspelt name fails here, before any adapter starts
    records_path = Path(records_dir) / run_id / "records.jsonl"
    if llm is not None and llm.answer is not None:
        config = dataclasses.replace(config, answerer=llm.answer)
    binding = {"adapters": specs, "selection": selection.describe(), "selection_hash": selection_hash(fixtures, gold_dir),
               "k": config.k, "budget_tokens": config.budget_tokens, "encoding": config.encoding,
               "flush_timeout_s": config.flush_timeout_s, "repeats": repeats, "isolation": isolation}
    if llm is not None:
        binding.update(llm.binding())  # only when set: headers of hermetic runs keep their shape
    if fresh_process:
        binding["fresh_process"] = True  # only when on: other headers keep their shape
    if not gate.is_hard:
        # Only when not hard: hard-gate headers stay as they were, and a run recorded before
        # --gate existed resumes as hard (a missing key compares as None against "soft:K").
        binding["gate"] = str(gate)
    done: frozenset = frozenset()
    header: dict | None = {"kind": "run", "run_id": run_id, "binding": binding}
    if resume:
        done, header = _resumable(records_path, binding), None
        if llm is not None:
            # --budget-usd bounds the run, not each invocation: earlier invocations' spend counts.
            llm.budget.carry(sum(c["usd"] for c in read_spend_ledger(records_path.parent)))
        log(f"resuming run {run_id}: {len(done)} scenario passes already recorded")
    systems: list = []
    # tiktoken's one-off load (seconds) overlaps the adapters' start-up.
    tokenizer = threading.Thread(target=_load_encoding, args=(config.encoding,), name="tiktoken-load", daemon=True)
    tokenizer.start()
    try:
        log(f"starting adapters {', '.join(specs)}")
        # The reference compressor runs as the normaliser unless the user asked to test it.
        kinds = ["control" if spec == "none" else "reference" if spec == REFERENCE and spec not in adapters else None
                 for spec in specs]
        systems.extend(open_systems(list(zip(specs, kinds)), deadlines, log=log, isolation=isolation, tolerate=True))
        tokenizer.join()
        systems.insert(1, OracleSystem(gold))
        labels = [s.label for s in systems]
        if len(set(labels)) != len(labels):
            raise JobError(f"two adapters share a name: {labels}; run them separately")
        if baseline_system is not None and baseline_system not in labels:
            raise JobError(f"--baseline-system {baseline_system}: not a system of this run ({', '.join(labels)})")
        log(f"records: {records_path}")
        if llm is not None:
            llm.budget.on_charge = spend_ledger_writer(records_path.parent)
        stopped = None
        try:
            summary = run_corpus(fixtures, systems, records_path, config, namespace_prefix=f"drift-{run_id}",
                                 progress=progress, repeats=repeats, concurrency=concurrency, done=done,
                                 header=header, gate=gate, fresh_process=fresh_process)
        except LLMError as exc:
            # A spent budget or an API that stays down: stop cleanly, score what finished.
            stopped = (f"the run stopped early: {exc} Records and cached answers are kept in {records_path.parent}; "
                       f"continue with --resume {run_id} (and the same options)")
            log(stopped)
            summary = None
        except KeyboardInterrupt:
            raise JobInterrupted(f"interrupted; adapters stopped; records so far are kept in {records_path}; continue "
                           f"with --resume {run_id} (and the same options)") from None
    finally:
        close_systems(systems)

    if stopped is not None:
        finished = {(r["scenario_id"], r.get("repeat", 1)) for r in iter_records(records_path)
                    if r.get("kind") == "scenario_done"}
        fixtures = [p for p in fixtures if (p.stem, 1) in finished]
        if not fixtures:
            raise JobError(f"{stopped}. No scenario finished, so no result was written")
        gold = {p.stem: gold[p.stem] for p in fixtures}
        summary = RunSummary(records_path=records_path, scenarios=[p.stem for p in fixtures])
    else:
        finished = None
    shared: dict = {}
    records = [compact(r, shared) for r in iter_records(records_path) if r.get("kind") in ("store", "probe", "state")
               and (finished is None or (r["scenario_id"], r.get("repeat", 1)) in finished)]
    grading = None
    if llm is not None and llm.answer is not None:
        try:
            grading = grade_records(records, gold, llm.judge, seed=seed, out_dir=records_path.parent, log=log)
        except KeyboardInterrupt:
            raise JobInterrupted(f"interrupted while judging; adapters stopped; records and verdicts so far are kept in "
                           f"{records_path.parent}; continue with --resume {run_id} (and the same options): "
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
    spend = llm_spend(records, llm, records_path.parent) if llm is not None else None
    internal = systems_llm_usage(records)
    if internal:
        # Systems' own LLM calls (mem0 infer, graphiti, the reference compressor's LLM form): their
        # tokens as they report them; priced by their own providers, so no USD here.
        spend = {**(spend or {}), "systems": internal}
    # --known-bad: listed probes leave the headline (every metric) and are scored apart.
    bad_ids = set((known_bad or {}).get("items", {}))
    gold_all, bad_records = gold, []
    unmatched = bad_ids - {p.probe_id for g in gold.values() for p in g.probes}
    if unmatched:
        log(f"--known-bad: {len(unmatched)} listed ids name no probe of this run: "
            + ", ".join(sorted(unmatched)[:5]))
    if bad_ids:
        kept = []
        for record in records:
            (bad_records if record["kind"] == "probe" and record["probe_id"] in bad_ids else kept).append(record)
        records = kept
        gold = {sid: g.model_copy(update={"probes": [p for p in g.probes if p.probe_id not in bad_ids]})
                for sid, g in gold_all.items()}
    by_system: dict[str, list[dict]] = defaultdict(list)
    second: dict[str, list[dict]] = defaultdict(list)
    for record in records:
        (by_system if record.get("repeat", 1) == 1 else second)[record["system"]].append(record)
    del records
    # The memory-state audit: a system whose Snapshot disagrees with Retrieve is scored without it.
    audits = {label: apply_state_audit(recs) for label, recs in by_system.items()}
    # Only evidence ids are looked up (recall); keeping every message id would grow with the run.
    sessions_of = {}
    for p in fixtures:
        evidence = {e for probe in gold_all[p.stem].probes for e in probe.evidence}
        sessions_of[p.stem] = {m: s for m, s in session_index(p).items() if m in evidence}
    paradigm_of = {p.stem: read_header(p).paradigm for p in fixtures}

    def probe_rows(recs: list[dict], label: str):
        return build_probe_rows([r for r in recs if r["kind"] == "probe"], gold, sessions_of)

    rows = {s.label: probe_rows(by_system[s.label], s.label) for s in systems}
    answered = llm is not None and llm.answer is not None
    suites = {s.label: drift_suite(s.label, rows, by_system, gold, paradigm_of, n_boot=n_boot, seed=seed,
                                   answer_model=answered)
              for s in systems}
    rows2 = {s.label: probe_rows(second[s.label], s.label) for s in systems if second.get(s.label)}
    suites2 = {label: drift_suite(label, rows2, second, gold, paradigm_of, n_boot=n_boot, seed=seed,
                                  answer_model=answered)
               for label in rows2}
    results: dict[str, SystemResult] = {}
    for system in systems:
        recs = by_system[system.label]
        metrics = score_system(rows[system.label], [r for r in recs if r["kind"] == "store"],
                               [r for r in recs if r["kind"] == "probe"], n_boot=n_boot, seed=seed)
        suite = suites[system.label]
        metrics.update(suite.metrics)
        audit = audits.get(system.label)
        if audit is not None and not audit["passed"]:
            metrics = audit_reasons(metrics)
        if grading is not None and grading.error:
            for name, metric in metrics.items():
                if metric.value is None and (metric.reason == FREE_FORM_REASON
                                             or "need an answer model" in (metric.reason or "")):
                    metrics[name] = metric.model_copy(update={"reason": "judging stopped early (see errors): free-form "
                                                                        "accuracy is not published on a partial subset"})

        def paired(other: str, mine=rows[system.label], suite=suite) -> dict:
            # Per-probe differences, then DRIFT metrics from the shared count matrix.
            return {**paired_vs(mine, rows[other], n_boot=n_boot, seed=seed),
                    **paired_suite(suite, suites[other])}

        paired_none = {} if system.label == "none" else paired("none")
        versus = {} if baseline_system in (None, system.label) else paired(baseline_system)
        noise = {}
        if system.label in rows2:
            noise = {**paired_vs(rows2[system.label], rows[system.label], n_boot=n_boot, seed=seed),
                     **paired_suite(suites2[system.label], suite)}
        notes = []
        failures = infra_failures(recs)
        if failures:
            notes.append(f"{failures} probes unanswered after a fault (crash, missed deadline or garbage reply): "
                         "counted as failed, so every system keeps the same denominators")
        if not system.provenance:
            notes.append("no provenance: recall is n/a, never guessed")
        if audit is not None and not audit["passed"]:
            notes.append(AUDIT_FINDING_NOTE)
        if suite.measurement.get("selectivity", "").startswith("marker"):
            notes.append("no Snapshot: selectivity measured by marker probing; storage, MVOT and TES are n/a")
        metrics["scope_breach_rate"] = scope_breach_rate(recs, n_boot=n_boot, seed=seed)
        breach = breach_note(metrics["scope_breach_rate"], metrics.get("privacy_score"),
                             bool((system.describe or {}).get("capabilities", {}).get("scopes")))
        notes.extend(violation_notes(recs) + ([breach] if breach else []))
        if system.label == "oracle":
            notes.extend(oracle_notes(recs, config))
        judging = {}
        if grading is not None:
            judging = judging_counts(grading.grades, system.label)
            if judging["judge_unparseable"]:
                notes.append(f"{judging['judge_unparseable']} judge verdicts were neither CORRECT nor INCORRECT: "
                             "counted as wrong")
            if judging["not_judged"]:
                notes.append(f"{judging['not_judged']} answers were not judged (judging stopped early): left out "
                             "of accuracy, so it rests on fewer probes")
        apart = {}
        if bad_ids:
            apart = known_bad_metrics([r for r in bad_records if r["system"] == system.label
                                       and r.get("repeat", 1) == 1], gold_all, bad_ids, sessions_of,
                                      n_boot=n_boot, seed=seed)
        results[system.label] = SystemResult(adapter=getattr(system, "spec", system.label), kind=system.kind,
                                             known_bad=apart,
                                             describe=system.describe, isolation=system.isolation,
                                             metrics=metrics, paired_vs_none=paired_none, paired_vs_baseline=versus,
                                             baseline_system=baseline_system if versus else None,
                                             noise_floor=noise, measurement=suite.measurement,
                                             series=suite.series, notes=notes, judging=judging,
                                             state_audit=audit,
                                             failure_causes=system_causes(rows[system.label], recs, gold,
                                                                          sessions_of),
                                             findings=provenance_findings(
                                                 [r for r in recs if r["kind"] == "probe"], config.budget_tokens,
                                                 {r["session_id"] for r in recs if r["kind"] == "store"}),
                                             gate=gate_view(rows[system.label], paradigm_of, system.describe,
                                                            rows2.get(system.label)))

    receipt = Receipt(
        fixtures_hash=fixtures_hash(fixtures_dir, gold_dir), gold_hash=gold_hash(gold_dir),
        selection_hash=selection_hash(fixtures, gold_dir), scenario_hashes=scenario_hashes(fixtures, gold_dir),
        scenarios=summary.scenarios,
        config={"k": config.k, "budget_tokens": config.budget_tokens, "encoding": config.encoding,
                "flush_timeout_s": config.flush_timeout_s, "adapters": specs, **selection.describe(),
                "bootstrap_resamples": n_boot,
                "reader": "answer model (Anthropic Messages API)" if answered else "deterministic closed-domain reader v1",
                "answer_model": None, "judge_model": None,
                **(llm.describe() if llm is not None else {}), "gate": str(gate), "repeats": repeats, "baseline_system": baseline_system,
                "reference": REFERENCE, "amnesiac": AMNESIAC, "concurrency": concurrency,
                "fresh_process": fresh_process, "resumed": resume, "host": host(), "fixtures_dir": str(fixtures_dir), "gold_dir": str(gold_dir),
                "run_id": run_id, "records": str(records_path.resolve()),
                **({"grades_sha256": file_sha256(records_path.parent / GRADES_FILE)[0]} if grading is not None else {}), "sealed_holdout": sealed_holdout,
                **({"known_bad": {"path": known_bad["path"], "sha256": known_bad["sha256"],
                                  "listed": len(bad_ids), "left_out": len({r["probe_id"] for r in bad_records})}}
                   if bad_ids else {})},
        git_commit=git_commit(), versions=versions(fixtures_dir),
        isolation={s.label: s.isolation for s in systems}, seed=seed,
        started_at=started_at, finished_at=_now(),
        notes=(([FREE_FORM_JUDGED_NOTE if llm.judge is not None else FREE_FORM_EXACT_NOTE] if answered
                else [FREE_FORM_NOTE]) if free_form else [])
        + spec_departures(host(), concurrency, answered, _reference_form(results)) + (llm.notes if llm is not None else [])
        + ([f"{len(held_out)} holdout scenarios left out (published runs add --include-holdout)"] if held_out else [])
        + (["holdout scenarios included: a published run; never a CI gate input"] if selection.include_holdout
           else [])
        + internal_model_notes(results, llm)
        + ([f"--known-bad: {len(unmatched)} listed ids name no probe of this run (typos, or other scenarios): "
            + ", ".join(sorted(unmatched)[:5]) + (" ..." if len(unmatched) > 5 else "")] if unmatched else [])
        + ([gate.note(config.budget_tokens)] if not gate.is_hard else [])
        + ([f"sealed holdout: {len(sealed_holdout['scenarios'])} scenarios generated from a secret seed (SHA-256 "
            f"{sealed_holdout['seed_sha256'][:16]}...) in place of the committed holdout; they exist in no "
            "repository and were deleted after the run"] if sealed_holdout else []))
    faults = _recorded_faults(records_path)
    if stopped is not None:
        faults.append(f"{stopped}. The {len(fixtures)} scenarios that finished are scored")
    if grading is not None and grading.error:
        faults.append(f"{grading.error} Free-form accuracy is n/a for every system (a partial judging would score "
                      "each system on a different subset); fix the cause and rerun or --resume: cached answers and "
                      "verdicts cost nothing")
    ceiling = None
    if "oracle" in rows:
        source_of = {p.stem: read_header(p).source for p in fixtures}
        ceiling = oracle_ceiling(rows["oracle"], gold, source_of, config.k, config.budget_tokens,
                                 import_flags(fixtures_dir))
    checks = instrument_checks(results, generated=all(read_header(p).source.startswith(GENERATED) for p in fixtures),
                               hard_gate=gate.is_hard)
    doc = ResultDocument(receipt=receipt, systems=results, complete=not faults, errors=faults, spend=spend,
                         oracle_ceiling=ceiling, instrument_checks=checks,
                         comparisons=compare_systems(suites, [s.label for s in systems if s.kind != "control"]))
    doc._rows = rows  # per-probe rows for in-process callers (difficulty audit); never serialised
    return doc


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
    """Per system, the LLM calls and tokens its Store and Retrieve replies reported (``usage``),
    every replicate included; systems that reported none are left out."""
    out: dict[str, dict[str, int]] = {}
    for record in records:
        usage = record.get("usage")
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
        shown = "; ".join(f"{k}: recorded {theirs.get(k)!r}, now {binding.get(k)!r}" for k in differing)
        raise JobError(f"--resume: the options differ from the interrupted run's ({shown}); resume with the same "
                       "options and corpus")
    return frozenset(done)


def _recorded_faults(records_path: Path) -> list[str]:
    """Every fault of the run, resumed parts included, in record order."""
    return [r["error"] for r in iter_records(records_path) if r.get("kind") == "fault"]


def violation_notes(records: list[dict]) -> list[str]:
    """One note per kind of contract violation, with how many calls showed it."""
    counts: dict[str, int] = defaultdict(int)
    for record in records:
        for violation in record.get("violations") or []:
            kind = "Store" if record["kind"] == "store" else "Retrieve"
            counts[f"{kind} {violation.split(' (')[0]}"] += 1
    return [f"contract violation: {what} in {n} calls" for what, n in sorted(counts.items())]


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

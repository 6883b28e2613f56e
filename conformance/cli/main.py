"""``drift-conformance [OPTIONS]``: the top-level group, which is also the run command.

Every option is also an environment variable (``DRIFT_<OPTION>``, click's
``auto_envvar_prefix``). Exit codes: conformance/cli/common.py.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from types import SimpleNamespace

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from conformance import paths
from conformance.cli.common import COMMANDS, Failure, LazyGroup, corpus_folders, err


class _GateType(click.ParamType):
    """``--gate``: hard, soft:K or summary:N, parsed into a BudgetGate (DRIFT §5.2)."""

    name = "GATE"

    def convert(self, value, param, ctx):
        from conformance.runner.budget_gate import BudgetGate, GateSpecError

        if isinstance(value, BudgetGate):
            return value
        try:
            return BudgetGate.parse(str(value))
        except GateSpecError as exc:
            self.fail(str(exc), param, ctx)


class _ShardType(click.ParamType):
    """``--shard I/N`` (1-based), parsed into a Shard."""

    name = "I/N"

    def convert(self, value, param, ctx):
        from conformance.contract.shards import Shard, ShardSpecError

        if isinstance(value, Shard):
            return value
        try:
            return Shard.parse(str(value))
        except ShardSpecError as exc:
            self.fail(str(exc), param, ctx)


@click.group(cls=LazyGroup, lazy=COMMANDS, invoke_without_command=True,
             context_settings={"auto_envvar_prefix": "DRIFT", "show_default": True,
                               "help_option_names": ["-h", "--help"]})
@click.option("--adapter", "adapter", multiple=True, metavar="NAME|NAME:TAG|PATH|grpc://HOST:PORT",
              help="Memory system to run (repeatable). Default: keyword. NAME runs in its own process, NAME:TAG "
                   "in a container of the image drift-adapter-NAME:TAG (built when absent or stale). The none and "
                   "oracle controls and the reference-compressor (DRIFT's normaliser) always run.")
@click.option("--isolation", type=click.Choice(["docker", "process"]), default=None,
              help="Run every adapter (controls included) in a container (NAME means NAME:latest) or in its own "
                   "process, whatever --adapter implies.  [default: as --adapter implies]")
@click.option("--fixtures", "fixtures", type=click.Path(file_okay=False, path_type=Path),
              help="Fixture folder (default: the committed corpus). Give --gold with it.")
@click.option("--gold", "gold", type=click.Path(file_okay=False, path_type=Path),
              help="Gold folder (default: the committed corpus). Give --fixtures with it.")
@click.option("--scenario", "scenario", multiple=True, metavar="GLOB", help="Run only scenarios matching GLOB.")
@click.option("--paradigm", multiple=True,
              type=click.Choice(["user_assistant", "coding_agent", "crawler_agent", "multi_peer"]),
              help="Run only scenarios of this paradigm (repeatable).")
@click.option("--horizon", multiple=True, type=click.Choice(["short", "medium", "long"]),
              help="Run only scenarios whose trajectory ends in this horizon (repeatable).")
@click.option("--split", multiple=True, metavar="NAME", help="Run only scenarios of this split, e.g. ci.")
@click.option("--include-holdout", is_flag=True, help="Also score holdout scenarios (published runs; never the CI gate).")
@click.option("--allow-dirty", is_flag=True,
              help="Let a published run (--include-holdout, --sealed-holdout) run from a checkout with uncommitted "
                   "code changes (refused by default; receipt.config.code records the tree's state either way).")
@click.option("--k", default=10, show_default=True, type=click.IntRange(1, 1000), help="Hits per Retrieve.")
@click.option("--budget", "budget", default=1200, show_default=True, type=click.IntRange(1),
              help="Context budget in tokens.")
@click.option("--encoding", default="o200k_base", show_default=True,
              type=click.Choice(["o200k_base", "cl100k_base"]), help="tiktoken encoding for the budget.")
@click.option("--gate", "gate", default="hard", show_default=True, type=_GateType(), metavar="hard|soft:K|summary:N",
              help="Budget gate variant (DRIFT §5.2): hard drops each transcript after Store; soft:K also keeps the "
                   "last K transcripts for the reader, after the retrieved hits and inside the budget; summary:N "
                   "stores an extractive summary of at most N tokens per scope instead of the transcript.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0), help="Bootstrap seed.")
@click.option("--bootstrap", "bootstrap", default=2000, show_default=True, type=click.IntRange(100),
              help="Bootstrap resamples.")
@click.option("--repeat", "repeat", default=1, show_default=True, type=click.IntRange(1, 5),
              help="Stream the corpus this many times; 2 measures the noise floor (second run minus first).")
@click.option("--concurrency", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Scenarios streamed at once against one instance of each adapter (separate namespaces); "
                   "latencies are then measured under that load (DRIFT §7.8 uses 4).")
@click.option("--fresh-process/--no-fresh-process", "fresh_process", default=None,
              help="Start a new adapter process before each scenario, so nothing an adapter learns crosses "
                   "scenarios (recorded in the receipt).  [default: on with --include-holdout and --sealed-holdout]")
@click.option("--shard", "shard", type=_ShardType(), default=None,
              help="Run shard I of N (numbered from 1): every N-th of the selection's sorted scenario ids, from the "
                   "I-th, with all their --repeat passes. `drift-conformance merge` of the N results rebuilds the "
                   "whole run's result exactly.")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="local: this process streams the run. ray: the run's shards run as Ray tasks (each asking for "
                   "its adapters' adapter.yaml resources, DRIFT's 8 CPUs / 32 GB when undeclared, clamped to the "
                   "largest node) and the driver merges them; needs drift-conformance[ray].")
@click.option("--ray-address", metavar="ADDR",
              help="With --executor ray: the cluster (e.g. 10.0.0.5:6379 or ray://...).  [default: RAY_ADDRESS, "
                   "else a new local Ray]")
@click.option("--shards", "shards", type=click.IntRange(1, 10_000), metavar="N",
              help="With --executor ray: how many shards.  [default: one per alive node, at most one per scenario]")
@click.option("--resume", "resume", metavar="RUN_ID",
              help="Continue an interrupted run from its records in --records-dir (same options): finished "
                   "scenarios are kept, the rest rerun.")
@click.option("--baseline-system", metavar="NAME",
              help="Also report paired differences of every system against this one (a label of this run).")
@click.option("--records-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("drift-runs"),
              show_default=True, help="Where run records (JSONL) are appended.")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), help="Write result.json here.")
@click.option("--json", "as_json", envvar="DRIFT_JSON", is_flag=True, help="Print result.json to stdout instead of the table.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar or log lines.")
@click.option("--wide", is_flag=True, help="Print every table in full (about 200 columns) instead of the compact one.")
@click.option("--compare", "compare_with", type=click.Path(dir_okay=False, path_type=Path), metavar="BASELINE",
              help="Gate this run against a committed baseline (as `compare`): exit 0 pass, 1 regression, "
                   "2 inconclusive.")
@click.option("--update-baseline", is_flag=True,
              help="Write this run's baseline to the --compare path, else ./baselines/main.json (justifications "
                   "already there are kept); with --compare, the old file is compared first and the new one is "
                   "the candidate a corpus change is blessed with.")
@click.option("--sealed-holdout", is_flag=True,
              help="Add holdout scenarios generated from the secret seed in DRIFT_HOLDOUT_SEED (they exist in no "
                   "repository; the receipt keeps only the seed's hash) in place of the committed holdout.")
@click.option("--answer-model", metavar="MODEL_ID",
              help="Opt-in: this pinned (dated) Anthropic model answers every probe from the budgeted context, at "
                   "temperature 0 with one fixed prompt, in place of the hermetic reader (needs ANTHROPIC_API_KEY).")
@click.option("--judge-model", metavar="MODEL_ID",
              help="Opt-in: this pinned model grades free-form answers that do not match the gold exactly, blinded "
                   "to the system and shuffled across systems (needs --answer-model).")
@click.option("--allow-alias", is_flag=True, help="Accept an undated model alias (the served model is still recorded).")
@click.option("--answer-max-tokens", default=64, show_default=True, type=click.IntRange(1, 4096),
              help="Output cap of the answer model, in tokens.")
@click.option("--budget-usd", type=click.FloatRange(0), metavar="USD",
              help="Stop cleanly once the answer model and judge have spent this much (the result is incomplete, "
                   "exit 2; --resume continues, cached calls are free).")
@click.option("--llm-cache", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Response cache of the answer model and judge (reruns are free and identical).  "
                   "[default: <cache dir>/llm]")
@click.option("--known-bad", "known_bad", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="YAML mapping of probe id -> reason: those probes (doubtful public gold) are left out of every "
                   "metric and reported apart.")
@click.option("--audit-salt-file", "audit_salt_file", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="A secret salt (at least 16 bytes; `drift-conformance audit-salt new FILE` writes one) keying the "
                   "state audit's seeded choices, so no adapter can replay them; the receipt records only its SHA-256 "
                   "(reveal the file after publishing: `audit-salt verify`).  [default: public-id seeding]")
@click.option("-v", "--verbose", is_flag=True,
              help="On an unexpected error (a bug), print its traceback as well as the one-line message.")
@click.version_option(package_name="drift-conformance")
@click.pass_context
def main(ctx, **options):
    """Run memory systems through the DRIFT budget gate and score them against sealed gold.

    \b
    drift-conformance --adapter keyword --adapter mem0 --out result.json
    drift-conformance report result.json --html report.html
    drift-conformance --adapter keyword:latest --out result.json      # in a container
    drift-conformance generate | validate | schema | adapters | build NAME | audit sample|score
    drift-conformance audit-salt new FILE | audit-salt verify RESULT FILE
    drift-conformance import locomo|longmemeval|beam|guide PATH --out DIR | export guide --split ci --out FILE
    """
    if ctx.invoked_subcommand is not None:
        return
    from conformance.runner.job import scored_anything

    o = SimpleNamespace(**options)
    show = not o.quiet
    log = (lambda msg: _log_line(err, msg)) if show else (lambda msg: None)
    folders = corpus_folders(o.fixtures, o.gold)
    _refuse_contradictions(o)
    _check_outputs(o)
    with contextlib.ExitStack() as stack:
        request = _run_request(o, folders, stack, log)
        if o.executor == "ray":
            from conformance.runner.ray_executor import run_on_ray

            doc = run_on_ray(request, shards=o.shards, address=o.ray_address, log=log)
        else:
            doc, _ = _run_with_progress(request, log, show)
    _publish(doc, o.out, o.as_json, o.wide)
    if not doc.complete:
        shown = "\n  ".join(doc.errors[:5]) + (f"\n  ... and {len(doc.errors) - 5} more" if len(doc.errors) > 5 else "")
        plural = "s" if len(doc.errors) != 1 else ""
        raise Failure(f"the run is incomplete: {len(doc.errors)} error{plural} (each says what was scored and how to go "
                      f"on; a system's faulted probes count as failed; records in {doc.receipt.config.get('records')}):"
                      f"\n  {shown}")
    if not scored_anything(doc):
        raise Failure("the run scored nothing: no system produced a defined accuracy or recall" + _as_controls(doc))
    if o.compare_with is not None or o.update_baseline:
        ctx.exit(_gate_after_run(doc, o.compare_with, o.update_baseline,
                                 echo=(lambda text: err.print(text, markup=False)) if o.as_json else click.echo))


def _check_outputs(o: SimpleNamespace) -> None:
    """``--out``'s folder and ``--records-dir`` take a file, checked before any adapter starts: a
    read-only or missing-permission folder was found only after the whole run.

    Raises:
        OutputError: naming the option, the folder and the errno.
    """
    from conformance.paths import check_writable

    check_writable(o.records_dir, "--records-dir")
    if o.out is not None:
        check_writable(Path(o.out).absolute().parent, "--out")


def _log_line(console: Console, message: str) -> None:
    """One dim progress line, redacted; adapter text in it (names, faults, stderr) printed literally."""
    from conformance.secrets import redact

    console.print(f"[dim]{escape(redact(message))}[/dim]", highlight=False)


def _as_controls(doc) -> str:
    """Why a named adapter did not count: its adapter.yaml says ``kind: control`` (as the
    ``none`` folder it may have been copied from does). Empty when no such adapter ran."""
    named = [label for label, s in doc.systems.items() if s.kind == "control" and s.adapter not in ("none", "oracle")]
    if not named:
        return ""
    return (f"; {', '.join(named)} ran as a control (kind: control in its adapter.yaml), and controls never count: "
            "set kind: system there to score it")


def _refuse_contradictions(o: SimpleNamespace) -> None:
    """Options that cannot go together, refused before anything runs."""
    gating = o.compare_with is not None or o.update_baseline
    if gating and o.known_bad is not None:
        raise Failure("--known-bad leaves probes out of the gate cells, so the gate would see them as removed gold: "
                      "the CI gate (--compare, --update-baseline) scores every probe; retire doubtful items from "
                      "fixture and gold instead (nothing was run)")
    if gating and o.shard is not None and o.shard.count == 1:
        raise Failure(f"--shard {o.shard} is the whole selection, one shard of one: drop --shard to gate the run "
                      "(nothing was run)")
    if gating and o.shard is not None:
        raise Failure(f"--shard {o.shard} scores part of the selection, so a gate against the whole baseline would "
                      "see the other shards' cells as removed: merge the shards (drift-conformance merge) and gate "
                      "the merged result with `drift-conformance compare` (nothing was run)")
    if o.executor != "ray" and (o.ray_address is not None or o.shards is not None):
        raise Failure("--ray-address and --shards go with --executor ray (nothing was run)")
    if gating and o.include_holdout:
        raise Failure("--include-holdout is for published runs; the CI gate (--compare, --update-baseline) never "
                      "uses holdout scenarios: drop one or the other (nothing was run)")
    if o.resume is not None:
        import re

        from conformance.contract.fixture import ID_PATTERN

        if not re.match(ID_PATTERN, o.resume):
            raise Failure(f"--resume {o.resume[:80]!r}: not a run id (the folder name under --records-dir, e.g. "
                          "20261129T171348Z-4c40e7)")
    if o.sealed_holdout and gating:
        raise Failure("--sealed-holdout is for published runs; the CI gate (--compare, --update-baseline) "
                      "never uses holdout scenarios")
    if (o.include_holdout or o.sealed_holdout) and not o.allow_dirty:
        from conformance.runner import code_identity

        if code_identity.tree_dirty():
            raise Failure("the checkout has uncommitted changes to the suite or adapter code (`git status -- "
                          + " ".join(code_identity.CODE_PATHS) + "`): a published run (holdout included) must be "
                          "repeatable from its commit; commit them, or pass --allow-dirty (nothing was run)")
    from conformance.backend.systems import plan_adapter

    for spec in o.adapter:
        if spec != "oracle":
            plan_adapter(spec, o.isolation)  # a misspelt name fails here, before any adapter starts


def _run_request(o: SimpleNamespace, folders: tuple[Path, Path], stack: contextlib.ExitStack, log):
    """The :class:`~conformance.runner.request.RunRequest` of the options; a sealed holdout's
    private corpus lives until ``stack`` closes."""
    from conformance.llm.settings import llm_settings
    from conformance.runner.job import load_known_bad
    from conformance.contract.corpus import Selection
    from conformance.runner.request import RunRequest
    from conformance.runner.run import RunConfig
    from conformance.runner.salt import AuditSalt, salt_warnings

    fixtures_dir, gold_dir = folders
    selection = Selection(patterns=tuple(o.scenario), paradigms=tuple(o.paradigm), horizons=tuple(o.horizon),
                          splits=tuple(o.split), include_holdout=o.include_holdout)
    sealed = None
    if o.sealed_holdout:
        fixtures_dir, gold_dir, selection, sealed = _sealed(fixtures_dir, gold_dir, selection, stack, log)
    if o.resume and o.sealed_holdout:
        raise Failure("--resume cannot continue a sealed-holdout run: its private corpus was deleted; rerun it")
    bad = load_known_bad(o.known_bad) if o.known_bad is not None else None
    salt = AuditSalt.read(o.audit_salt_file) if o.audit_salt_file is not None else None
    for warning in salt_warnings(o.audit_salt_file) if salt is not None else ():
        err.print(f"warning: {warning}", markup=False, highlight=False)
    llm = llm_settings(o.answer_model, o.judge_model, allow_alias=o.allow_alias, budget_usd=o.budget_usd,
                       cache_dir=o.llm_cache or paths.cache_dir() / "llm", answer_max_tokens=o.answer_max_tokens)
    for warning in llm.warnings if llm is not None else ():
        err.print(f"warning: {warning}", markup=False, highlight=False)
    return RunRequest(adapters=list(o.adapter) or ["keyword"], fixtures_dir=fixtures_dir, gold_dir=gold_dir,
                      records_dir=o.records_dir, selection=selection,
                      config=RunConfig(k=o.k, budget_tokens=o.budget, encoding=o.encoding), seed=o.seed,
                      n_boot=o.bootstrap, run_id=o.resume, repeats=o.repeat, baseline_system=o.baseline_system,
                      isolation=o.isolation, sealed_holdout=sealed, concurrency=o.concurrency,
                      resume=bool(o.resume), gate=o.gate, llm=llm, known_bad=bad, fresh_process=o.fresh_process,
                      shard=o.shard, audit_salt=salt)


def _sealed(fixtures_dir: Path, gold_dir: Path, selection, stack: contextlib.ExitStack, log):
    """``--sealed-holdout``: (fixtures, gold, selection, receipt block) of the corpus with the
    sealed holdout generated from DRIFT_HOLDOUT_SEED; the secret itself is dropped here."""
    from conformance.contract.corpus import Selection
    from conformance.world.sealed import read_secret, sealed_corpus, seed_fingerprint

    secret = read_secret()
    log("generating the sealed holdout from DRIFT_HOLDOUT_SEED")
    fixtures_dir, gold_dir, sealed_ids = stack.enter_context(sealed_corpus(fixtures_dir, gold_dir, secret))
    # A --scenario pattern also picks the sealed twin of the holdout scenarios it names.
    patterns = selection.patterns + tuple(f"sealed-{p}" for p in selection.patterns)
    selection = Selection(patterns=patterns, paradigms=selection.paradigms, horizons=selection.horizons,
                          splits=selection.splits, include_holdout=True)
    sealed = {"seed_sha256": seed_fingerprint(secret), "scenarios": sealed_ids}
    del secret
    return fixtures_dir, gold_dir, selection, sealed


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class _LogLines:
    """Progress for a log without a TTY (CI): one line per finished scenario pass, with the
    elapsed time and an ETA from the mean time per scenario so far."""

    def __init__(self, total: int | None, already: int = 0):
        import time

        self.total, self.started_at, self.clock = total, time.monotonic(), time.monotonic
        self.current: tuple[str, int] | None = None
        self.already = self.done = already

    def finish(self) -> None:
        if self.current is None:
            return
        self.done += 1
        elapsed = self.clock() - self.started_at
        of = f"/{self.total}" if self.total else ""
        eta = ""
        if self.total and self.done < self.total:
            eta = f", ETA {_clock(elapsed / (self.done - self.already) * (self.total - self.done))}"
        err.print(f"scenario {self.done}{of} {self.current[0]} done: {self.current[1]} sessions, "
                  f"elapsed {_clock(elapsed)}{eta}", highlight=False, markup=False, soft_wrap=True)
        self.current = None

    def scenario_started(self, scenario: str, sessions: int) -> None:
        self.finish()
        self.current = (scenario, sessions)


def _passes_recorded(request) -> int:
    """Scenario passes a ``--resume`` finds finished (``scenario_done`` records), so progress
    counts on from them; 0 for a new run or records that cannot be read (the run says why)."""
    if not request.resume or request.run_id is None:
        return 0
    from conformance.errors import DriftError
    from conformance.runner.records import iter_records

    path = Path(request.records_dir) / request.run_id / "records.jsonl"
    try:
        return len({(r.get("scenario_id"), r.get("repeat", 1)) for r in iter_records(path)
                    if r.get("kind") == "scenario_done"})
    except (OSError, DriftError):
        return 0


def _run_with_progress(request, log, show: bool):
    """:func:`conformance.runner.job.run` under a progress bar on stderr (a TTY), one line per finished
    scenario (a log: CI), or silently (``--quiet``)."""
    from rich.progress import TimeRemainingColumn

    from conformance.contract.corpus import select_fixtures
    from conformance.contract.shards import split
    from conformance.runner.job import run
    from conformance.runner.run import Progress as RunProgress

    total = None
    if request.fixtures_dir.is_dir():
        selected = select_fixtures(request.fixtures_dir, request.selection)[0]
        total = len(split(selected, request.shard) if request.shard is not None else selected)
    total = total * request.repeats if total is not None else None
    already = _passes_recorded(request) if total is not None else 0
    if show and not err.is_terminal:
        lines = _LogLines(total, already)
        try:
            return run(request, log=log, progress=RunProgress(scenario_started=lines.scenario_started,
                                                              session_done=lambda: None))
        finally:
            lines.finish()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("ETA"), TimeRemainingColumn(), console=err, disable=not show, transient=True) as bar:
        scenarios_task = bar.add_task("starting adapters", total=total, completed=already)
        sessions_task = bar.add_task("sessions", total=None, visible=False)
        started: list[str] = []

        def scenario_started(scenario: str, sessions: int) -> None:
            if started:
                bar.advance(scenarios_task)
            started.append(scenario)
            bar.update(scenarios_task, description=f"scenario {scenario}")
            bar.reset(sessions_task, total=sessions, description="sessions", visible=True)

        return run(request, log=log, progress=RunProgress(scenario_started=scenario_started,
                                                          session_done=lambda: bar.advance(sessions_task)))


def _publish(doc, out_path: Path | None, as_json: bool, wide: bool = False) -> None:
    """Write result.json and print it (``--json``) or the table."""
    from conformance.report.table import render

    from conformance.secrets import redact

    from conformance.paths import write_atomic

    text = redact(doc.model_dump_json(indent=2))  # Describe, notes and errors can quote an adapter
    if out_path:
        write_atomic(out_path, text + "\n", what="result")
    if as_json:
        click.echo(text)
    else:
        console = Console()
        if not console.is_terminal:
            console = Console(width=250 if wide else 100)  # logs and CI: no terminal to measure
        render(type(doc).model_validate_json(text), console, wide=wide)  # the redacted document
        if out_path:
            err.print(f"wrote {out_path}", markup=False)


def _gate_after_run(doc, compare_with: Path | None, update_baseline: bool, echo) -> int:
    """``--compare`` / ``--update-baseline`` on a run; returns the exit code (0 when only updating)."""
    import tempfile

    from conformance.gate.baseline import DEFAULT_BASELINE, BaselineError, write_baseline
    from conformance.gate.command import gate

    target = compare_with or Path(DEFAULT_BASELINE)
    with tempfile.TemporaryDirectory() as tmp:
        old = None
        if compare_with is not None and update_baseline and compare_with.exists():
            # Compare against the file as it was before this run rewrites it.
            old = Path(tmp) / "baseline.json"
            old.write_bytes(compare_with.read_bytes())
        if update_baseline:
            try:
                write_baseline(doc, target)
            except BaselineError as exc:
                raise Failure(str(exc)) from None
            err.print(f"wrote baseline {target}", markup=False)
        if compare_with is None:
            return 0
        return gate(old or compare_with, doc, candidate_path=target if update_baseline else None, echo=echo)


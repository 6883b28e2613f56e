"""``drift-conformance``: the command line.

Every option is also an environment variable (``DRIFT_<OPTION>``, click's
``auto_envvar_prefix``). Exit codes: 0 success, 2 error (including a run that
scored nothing); 1 is reserved for a gate regression.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import signal
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from conformance import paths

EXIT_OK, EXIT_REGRESSION, EXIT_ERROR = 0, 1, 2
_err = Console(stderr=True)


class Failure(click.ClickException):
    exit_code = EXIT_ERROR

    def show(self, file=None) -> None:
        from conformance.secrets import redact

        _err.print(f"[bold red]error:[/bold red] {redact(self.message)}", highlight=False, soft_wrap=True)


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


class LazyGroup(click.Group):
    """A click group whose commands listed in ``lazy`` (name -> ``"module:attribute"``) are
    imported only when one is invoked or help lists them (click's lazy-loading pattern), so
    a run never pays for the importers, the report or the gate."""

    def __init__(self, *args, lazy: dict[str, str] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx, cmd_name):
        if cmd_name in self.lazy and cmd_name not in self.commands:
            module, _, attribute = self.lazy[cmd_name].partition(":")
            self.add_command(getattr(importlib.import_module(module), attribute), cmd_name)
        return super().get_command(ctx, cmd_name)


def _terminate(signum, frame):
    # SIGTERM unwinds like Ctrl-C, so every adapter process is stopped in `finally`.
    raise KeyboardInterrupt(f"signal {signum}")


def _errors_exit_2(fn):
    """Map the suite's own errors to a clear message and exit code 2 (no traceback)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from conformance.errors import DriftError

        signal.signal(signal.SIGTERM, _terminate)
        try:
            return fn(*args, **kwargs)
        except (DriftError, FileNotFoundError) as exc:
            raise Failure(str(exc).replace("[", r"\[")) from None
        except KeyboardInterrupt:
            raise Failure("interrupted; adapters stopped") from None

    return wrapper


# Commands that live beside what they drive, imported when used.
_LAZY_COMMANDS = {
    "report": "conformance.report.command:report_cmd",
    "audit": "conformance.llm.audit_command:audit_group",
    "check-adapter": "conformance.backend.check_command:check_adapter_cmd",
    "build": "conformance.backend.build_command:build_cmd",
    "compare": "conformance.gate.command:compare_cmd",
}


@click.group(cls=LazyGroup, lazy=_LAZY_COMMANDS, invoke_without_command=True,
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
@click.option("--resume", "resume", metavar="RUN_ID",
              help="Continue an interrupted run from its records in --records-dir (same options): finished "
                   "scenarios are kept, the rest rerun.")
@click.option("--baseline-system", metavar="NAME",
              help="Also report paired differences of every system against this one (a label of this run).")
@click.option("--records-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("drift-runs"),
              show_default=True, help="Where run records (JSONL) are appended.")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), help="Write result.json here.")
@click.option("--json", "as_json", envvar="DRIFT_JSON", is_flag=True, help="Print result.json to stdout instead of the table.")
@click.option("--quiet", is_flag=True, help="No progress bar or log lines.")
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
@click.version_option(package_name="drift-conformance")
@click.pass_context
@_errors_exit_2
def main(ctx, adapter, isolation, fixtures, gold, scenario, paradigm, horizon, split, include_holdout, k, budget,
         encoding, gate, seed, bootstrap, repeat, concurrency, fresh_process, resume, baseline_system, records_dir, out, as_json, quiet,
         compare_with, update_baseline, sealed_holdout, answer_model, judge_model, allow_alias, answer_max_tokens,
         budget_usd, llm_cache, known_bad):
    """Run memory systems through the DRIFT budget gate and score them against sealed gold.

    \b
    drift-conformance --adapter keyword --adapter mem0 --out result.json
    drift-conformance report result.json --html report.html
    drift-conformance --adapter keyword:latest --out result.json      # in a container
    drift-conformance generate | validate | schema | adapters | build NAME | audit sample|score
    drift-conformance import locomo|longmemeval|beam|guide PATH --out DIR | export guide --split ci --out FILE
    """
    if ctx.invoked_subcommand is not None:
        return
    from conformance.runner.job import scored_anything
    from conformance.runner.run import RunConfig, Selection

    if (fixtures is None) != (gold is None):
        # Edited fixtures scored against the committed gold would be judged by the wrong truth.
        raise Failure("give --fixtures and --gold together (or neither, for the committed corpus)")
    fixtures_dir = fixtures or paths.fixtures_dir()
    gold_dir = gold or paths.gold_dir()
    selection = Selection(patterns=tuple(scenario), paradigms=tuple(paradigm), horizons=tuple(horizon),
                          splits=tuple(split), include_holdout=include_holdout)
    adapters = list(adapter) or ["keyword"]
    n_boot, out_path = bootstrap, out
    config = RunConfig(k=k, budget_tokens=budget, encoding=encoding)
    show = not quiet
    from conformance.secrets import redact

    log = (lambda msg: _err.print(f"[dim]{redact(msg)}[/dim]", highlight=False)) if show else (lambda msg: None)

    if (compare_with is not None or update_baseline) and known_bad is not None:
        raise Failure("--known-bad leaves probes out of the gate cells, so the gate would see them as removed gold: "
                      "the CI gate (--compare, --update-baseline) scores every probe; retire doubtful items from "
                      "fixture and gold instead (nothing was run)")
    if (compare_with is not None or update_baseline) and include_holdout:
        raise Failure("--include-holdout is for published runs; the CI gate (--compare, --update-baseline) never "
                      "uses holdout scenarios: drop one or the other (nothing was run)")
    if resume is not None:
        import re

        from conformance.contract.fixture import ID_PATTERN

        if not re.match(ID_PATTERN, resume):
            raise Failure(f"--resume {resume[:80]!r}: not a run id (the folder name under --records-dir, e.g. "
                          "20261129T171348Z-4c40e7)")
    with contextlib.ExitStack() as stack:
        sealed = None
        if sealed_holdout:
            from conformance.world.sealed import read_secret, sealed_corpus, seed_fingerprint

            if update_baseline or compare_with is not None:
                raise Failure("--sealed-holdout is for published runs; the CI gate (--compare, --update-baseline) "
                              "never uses holdout scenarios")
            secret = read_secret()
            log("generating the sealed holdout from DRIFT_HOLDOUT_SEED")
            fixtures_dir, gold_dir, sealed_ids = stack.enter_context(sealed_corpus(fixtures_dir, gold_dir, secret))
            # A --scenario pattern also picks the sealed twin of the holdout scenarios it names.
            patterns = selection.patterns + tuple(f"sealed-{p}" for p in selection.patterns)
            selection = Selection(patterns=patterns, paradigms=selection.paradigms,
                                  horizons=selection.horizons, splits=selection.splits, include_holdout=True)
            sealed = {"seed_sha256": seed_fingerprint(secret), "scenarios": sealed_ids}
            del secret
        if resume and sealed_holdout:
            raise Failure("--resume cannot continue a sealed-holdout run: its private corpus was deleted; rerun it")
        from conformance.llm.settings import llm_settings
        from conformance.runner.job import load_known_bad

        bad = load_known_bad(known_bad) if known_bad is not None else None
        llm = llm_settings(answer_model, judge_model, allow_alias=allow_alias, budget_usd=budget_usd,
                           cache_dir=llm_cache or paths.cache_dir() / "llm", answer_max_tokens=answer_max_tokens)
        for warning in llm.warnings if llm is not None else ():
            _err.print(f"warning: {warning}", markup=False, highlight=False)
        doc = _run_with_progress(adapters, fixtures_dir, gold_dir, selection, config, records_dir, seed, n_boot,
                                 log, repeat, baseline_system, isolation, show, sealed,
                                 dict(concurrency=concurrency, resume=bool(resume), run_id=resume, gate=gate, llm=llm,
                                      known_bad=bad, fresh_process=fresh_process))
    _publish(doc, out_path, as_json)
    if not doc.complete:
        shown = "\n  ".join(doc.errors[:5]) + (f"\n  ... and {len(doc.errors) - 5} more" if len(doc.errors) > 5 else "")
        raise Failure(f"the run is incomplete: {len(doc.errors)} error{'s' if len(doc.errors) != 1 else ''} (each says what was scored and how to go on; "
                      f"a system's faulted probes count as failed; records in {doc.receipt.config.get('records')}):"
                      f"\n  {shown}")
    if not scored_anything(doc):
        raise Failure("the run scored nothing: no system produced a defined accuracy or recall")
    if compare_with is not None or update_baseline:
        ctx.exit(_gate_after_run(doc, compare_with, update_baseline, echo=(lambda text: _err.print(text, markup=False))
                                 if as_json else click.echo))


def _run_with_progress(adapters, fixtures_dir, gold_dir, selection, config, records_dir, seed, n_boot, log, repeat,
                       baseline_system, isolation, show, sealed, more):
    from conformance.runner.job import run_job
    from conformance.runner.run import Progress as RunProgress
    from conformance.runner.run import select_fixtures

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=_err, disable=not show, transient=True) as bar:
        total = len(select_fixtures(fixtures_dir, selection)[0]) if fixtures_dir.is_dir() else None
        scenarios_task = bar.add_task("scenarios", total=total)
        sessions_task = bar.add_task("sessions", total=None)
        started: list[str] = []

        def scenario_started(scenario: str, sessions: int) -> None:
            if started:
                bar.advance(scenarios_task)
            started.append(scenario)
            bar.update(scenarios_task, description=f"scenario {scenario}")
            bar.reset(sessions_task, total=sessions, description="sessions")

        return run_job(adapters, fixtures_dir, gold_dir, selection=selection, config=config, records_dir=records_dir,
                       seed=seed, n_boot=n_boot, log=log, repeats=repeat, baseline_system=baseline_system,
                       isolation=isolation, sealed_holdout=sealed, **more,
                       progress=RunProgress(scenario_started=scenario_started,
                                            session_done=lambda: bar.advance(sessions_task)))


def _publish(doc, out_path: Path | None, as_json: bool) -> None:
    """Write result.json and print it (``--json``) or the table."""
    from conformance.report.table import render

    from conformance.secrets import redact

    text = redact(doc.model_dump_json(indent=2))  # Describe, notes and errors can quote an adapter
    if out_path:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(text + "\n", encoding="utf-8")
    if as_json:
        click.echo(text)
    else:
        console = Console()
        if not console.is_terminal:
            console = Console(width=160)  # logs and CI: wide enough for every column
        render(type(doc).model_validate_json(text), console)  # the redacted document
        if out_path:
            _err.print(f"wrote {out_path}")


def _gate_after_run(doc, compare_with: Path | None, update_baseline: bool, echo) -> int:
    """``--compare`` / ``--update-baseline`` on a run; returns the exit code (0 when only updating)."""
    import tempfile

    from conformance.gate.baseline import BaselineError, write_baseline
    from conformance.gate.command import gate

    target = compare_with or Path("baselines") / "main.json"
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
            _err.print(f"wrote baseline {target}")
        if compare_with is None:
            return 0
        return gate(old or compare_with, doc, candidate_path=target if update_baseline else None, echo=echo)


@main.command()
@click.option("--fixtures", "fixtures_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--gold", "gold_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--seed", default=42, show_default=True, type=int)
@click.option("--check", is_flag=True,
              help="Generate into a scratch folder and exit 2 when the corpus differs from it by a byte.")
@click.option("--synthesizer", type=click.Choice(["template", "llm"]), default="template", show_default=True,
              help="Who writes the turns: seeded templates, or an LLM (one checked call per session, template "
                   "fallback; needs --synth-model, --budget-usd, --fixtures, --gold and ANTHROPIC_API_KEY, except "
                   "for a rebuild whose every answer is in the response cache).")
@click.option("--synth-model", metavar="MODEL_ID", help="The LLM synthesizer's dated model id, e.g. "
                                                        "claude-haiku-4-5-20251001.")
@click.option("--allow-alias", is_flag=True, help="Accept an undated model alias for --synth-model.")
@click.option("--budget-usd", type=click.FloatRange(min=0), metavar="USD",
              help="Most the LLM synthesizer may spend (required with --synthesizer llm; cached answers cost nothing).")
@click.option("--llm-cache", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="The LLM synthesizer's response cache (a regeneration from it is free and byte-identical) "
                   "[default: <cache dir>/llm]")
@click.option("--scenario-file", "scenario_files", multiple=True, metavar="FILE",
              type=click.Path(dir_okay=False, path_type=Path),
              help="Generate from your own scenario YAML (DRIFT §3.1; repeatable) instead of the library; needs "
                   "--fixtures and --gold.")
@_errors_exit_2
def generate(fixtures_dir, gold_dir, seed, check, synthesizer, synth_model, allow_alias, budget_usd, llm_cache,
             scenario_files):
    """Write the canonical DRIFT corpus (byte-identical for the same seed) and its ledger,
    or (--scenario-file) a corpus of your own scenarios."""
    import tempfile

    if (fixtures_dir is None) != (gold_dir is None):
        raise Failure("give --fixtures and --gold together (or neither, for the committed corpus)")
    if scenario_files:
        if fixtures_dir is None:
            raise Failure("--scenario-file writes a corpus of its own, never the committed one: pass --fixtures DIR "
                          "--gold DIR")
        if synthesizer != "template":
            raise Failure("--scenario-file goes with the template synthesizer")
        specs = _user_scenarios(scenario_files)
        rebuild = " ".join(["drift-conformance generate", *(f"--scenario-file {f}" for f in scenario_files),
                            f"--seed {seed}"])
        if check:
            _check_generation(fixtures_dir, gold_dir, seed, rebuild, specs=specs, rebuild=rebuild)
            return
        ids = _generate_into(fixtures_dir, gold_dir, seed, specs=specs, rebuild=rebuild)
        click.echo(f"wrote {len(ids)} scenarios to {fixtures_dir} and {gold_dir}")
        return
    if synthesizer == "llm":
        # Off by default; never the committed corpus (template-built), never --check.
        if check:
            raise Failure("--check compares the committed corpus, which the template synthesizer builds; "
                          "it does not combine with --synthesizer llm")
        if fixtures_dir is None:
            raise Failure("--synthesizer llm writes a corpus of its own, never the committed (template-built) one: "
                          "pass --fixtures DIR --gold DIR")
        if not synth_model or budget_usd is None:
            raise Failure("--synthesizer llm needs --synth-model (a dated model id, e.g. claude-haiku-4-5-20251001) "
                          "and --budget-usd (the most it may spend, in USD; cached answers cost nothing)")
        from conformance.llm.budget import Budget
        from conformance.llm.client import AnthropicClient
        from conformance.llm.errors import BudgetSpent
        from conformance.world.llm_synthesis import PROMPT_VERSION, LLMSynthesizer, ledger_fields, reasons_text

        client = AnthropicClient(synth_model, allow_alias=allow_alias, budget=Budget(str(budget_usd)),
                                 cache=llm_cache if llm_cache is not None else paths.cache_dir() / "llm",
                                 purpose="the LLM transcript synthesizer (--synthesizer llm)",
                                 # A keyless rebuild from the response cache (the ledger's rebuild command)
                                 # serves cached answers; the first miss raises the missing-key error.
                                 cache_only_without_key=True)
        synth = LLMSynthesizer(client)
        try:  # every call happens here, in a scratch folder: a spent budget leaves the target untouched
            with tempfile.TemporaryDirectory() as tmp:
                _generate_into(Path(tmp) / "fixtures", Path(tmp) / "gold", seed, synthesizer=synth)
        except BudgetSpent as exc:
            raise Failure(f"{exc} Generation stopped: nothing was written to {fixtures_dir} or {gold_dir}; the "
                          f"{synth.stats.calls} answers paid for so far are cached in {client.cache.directory}, "
                          "so a rerun pays only for the rest.".replace("[", r"\[")) from None
        stats = synth.stats
        if stats.used <= 0:  # the corpus would be the template corpus, byte for byte, under an LLM label
            what = (f"all {stats.sessions} sessions fell back to the template (reasons: {stats.reasons_text()}; "
                    f"first: {stats.examples[0]})" if stats.sessions else "the corpus has no session to write")
            raise Failure(f"the LLM synthesizer contributed no transcript: {what}; nothing was written to "
                          f"{fixtures_dir} or {gold_dir} (${stats.cost_usd:.4f} spent); check the model "
                          f"({client.model}) / prompt ({PROMPT_VERSION})".replace("[", r"\[")) from None
        done, extra = stats.to_record(), ledger_fields(synth, seed, allow_alias, llm_cache)
        # The same sessions again, answered from memory (no call), written into the target.
        ids = _generate_into(fixtures_dir, gold_dir, seed, synthesizer=synth, ledger_extra=extra)
        if (synth.stats.calls, synth.stats.cached) != (done["calls"], done["cached"]):
            raise RuntimeError("the second pass asked the model again: the generator is not deterministic")
        reasons = ", ".join(f"{k} {v}" for k, v in done["fallback_reasons"].items())
        click.echo(f"LLM synthesis with {client.model}: {done['sessions']} sessions, {done['calls']} calls, "
                   f"{done['cached']} cached, {done['fallbacks']} template fallbacks"
                   + (f" ({reasons})" if reasons else "") + f", ${done['cost_usd']:.4f} spent")
        if done["fallbacks"]:  # counted in the first pass (the second one replays it: same sessions again)
            click.echo(f"warning: {done['fallbacks']} of {done['sessions']} sessions "
                       f"({done['fallbacks'] / done['sessions']:.1%}) fell back to the template's turns "
                       f"(reasons: {reasons_text(done['fallback_reasons'])}); only "
                       f"{done['sessions'] - done['fallbacks']} carry the model's transcript", err=True)
        click.echo(f"wrote {len(ids)} scenarios to {fixtures_dir} and {gold_dir}")
        return
    if synth_model or allow_alias or budget_usd is not None or llm_cache is not None:
        raise Failure("--synth-model, --allow-alias, --budget-usd and --llm-cache go with --synthesizer llm")
    if fixtures_dir is None and gold_dir is None and paths.checkout_root() is None and not check:
        raise Failure("generate rewrites the committed corpus of a source checkout; this is an installed copy: "
                      "pass --fixtures DIR --gold DIR")
    fixtures_dir = fixtures_dir or paths.fixtures_dir()
    gold_dir = gold_dir or paths.gold_dir()
    if check:
        _check_generation(fixtures_dir, gold_dir, seed, f"drift-conformance generate --seed {seed}")
        return
    ids = _generate_into(fixtures_dir, gold_dir, seed)
    click.echo(f"wrote {len(ids)} scenarios to {fixtures_dir} and {gold_dir}")


def _check_generation(fixtures_dir: Path, gold_dir: Path, seed: int, command: str, **generate) -> None:
    """Generate into a scratch folder and compare byte for byte with ``fixtures_dir``/``gold_dir``.

    ``generate`` is passed to :func:`_generate_into` (``specs`` and ``rebuild`` for a corpus of
    one's own scenarios). Raises Failure naming up to ten differing files.
    """
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        _generate_into(Path(tmp) / "fixtures", Path(tmp) / "gold", seed, **generate)
        differing = (_differences(Path(tmp) / "fixtures", fixtures_dir, "fixtures")
                     + _differences(Path(tmp) / "gold", gold_dir, "gold"))
    if differing:
        shown = ", ".join(differing[:10]) + (f" and {len(differing) - 10} more" if len(differing) > 10 else "")
        raise Failure(f"the corpus in {fixtures_dir} and {gold_dir} differs from what the generator makes "
                      f"(seed {seed}): {shown}; run `{command}` and commit the result")
    click.echo(f"corpus in {fixtures_dir} and {gold_dir} matches the generator byte for byte")


def _user_scenarios(files) -> list:
    """The scenario specs of ``--scenario-file`` files, checked as the library's are (errors
    name the file and the field); two files may not share a scenario id."""
    from conformance.world.scenario import ScenarioError, load_scenario

    specs, seen = [], {}
    for path in files:
        if not Path(path).is_file():
            raise Failure(f"--scenario-file {path}: no such file")
        spec = load_scenario(path, id_is_stem=False)
        if spec.id in seen:
            raise ScenarioError(path, "id", f"{spec.id!r} is also the id of {seen[spec.id]}")
        seen[spec.id] = path
        specs.append(spec)
    return specs


def _generate_into(fixtures_dir: Path, gold_dir: Path, seed: int, synthesizer=None,
                   ledger_extra: dict | None = None, specs: list | None = None,
                   rebuild: str | None = None) -> list[str]:
    import json

    from conformance.contract.corpus import AUDITS_KEY, LEDGER_NAME, build_ledger
    from conformance.world.content import content_libraries
    from conformance.world.generator import CORPUS_VERSION, generate_corpus

    # Scenarios an earlier generation wrote (its ledger lists them) must not linger; files
    # the generator did not write are never touched.
    ledger_path = Path(fixtures_dir) / LEDGER_NAME
    earlier: list[str] = []
    if ledger_path.exists():
        import re

        from conformance.contract.fixture import ID_PATTERN

        try:
            earlier = [s["scenario_id"] for s in json.loads(ledger_path.read_text(encoding="utf-8"))["scenario_list"]]
        except (ValueError, KeyError, TypeError) as exc:
            raise Failure(f"{ledger_path}: not a ledger from `generate` ({exc.__class__.__name__}: {exc}); "
                          "nothing was written") from None
        # The ledger names files to delete: an id that could leave the folder is refused.
        bad = [sid for sid in earlier if not isinstance(sid, str) or not re.match(ID_PATTERN, sid)]
        if bad:
            raise Failure(f"{ledger_path}: scenario_list holds ids that are not scenario ids ({bad[:3]}); "
                          "nothing was written or deleted")
    else:
        for folder, pattern in ((Path(fixtures_dir), "*.jsonl"), (Path(gold_dir), "*.json")):
            if folder.is_dir() and any(folder.glob(pattern)):
                raise Failure(f"{folder} holds {pattern} files but no {LEDGER_NAME} from an earlier generate; "
                              "generate into an empty folder (nothing was written)")
    for scenario in earlier:
        (Path(fixtures_dir) / f"{scenario}.jsonl").unlink(missing_ok=True)
        (Path(gold_dir) / f"{scenario}.json").unlink(missing_ok=True)
    previous = {}
    if ledger_path.exists():
        previous = json.loads(ledger_path.read_text(encoding="utf-8"))
    ids = generate_corpus(fixtures_dir, gold_dir, seed=seed, synthesizer=synthesizer, specs=specs)
    ledger = build_ledger(fixtures_dir, gold_dir, seed, rebuild=rebuild or f"drift-conformance generate --seed {seed}",
                          corpus_version=CORPUS_VERSION)
    ledger["content_libraries"] = content_libraries()
    ledger.update(ledger_extra or {})  # --synthesizer llm: synthesizer, model, corpus_version, rebuild
    if previous.get(AUDITS_KEY) and previous.get("fixtures_hash") == ledger["fixtures_hash"]:
        ledger[AUDITS_KEY] = previous[AUDITS_KEY]  # the same corpus: its recorded audits still hold
    (Path(fixtures_dir) / LEDGER_NAME).write_text(json.dumps(ledger, indent=1, sort_keys=True) + "\n",
                                                   encoding="utf-8")
    return ids


def _differences(expected: Path, actual: Path, label: str) -> list[str]:
    """Names that differ between two folders (missing, extra, or other bytes)."""
    # Only what the generator owns: scenario files and the ledger (an audit file may sit beside them).
    def owned(p: Path) -> bool:
        return p.is_file() and (p.suffix in (".jsonl", ".json") and not p.name.startswith("_")
                                or p.name == "_ledger.json")

    want = {p.name: p for p in expected.iterdir() if owned(p)}
    have = {p.name: p for p in actual.iterdir() if owned(p)} if actual.is_dir() else {}
    names = sorted(set(want) | set(have))
    return [f"{label}/{n}" for n in names
            if n not in want or n not in have or _comparable(want[n]) != _comparable(have[n])]


def _comparable(path: Path) -> bytes:
    """A file's bytes; for the ledger, without the audits that commands other than generate record in it."""
    import json

    from conformance.contract.corpus import AUDITS_KEY, LEDGER_NAME

    data = path.read_bytes()
    if path.name != LEDGER_NAME:
        return data
    try:
        ledger = json.loads(data)
    except ValueError:
        return data
    if not isinstance(ledger, dict) or AUDITS_KEY not in ledger:
        return data
    ledger.pop(AUDITS_KEY)
    return (json.dumps(ledger, indent=1, sort_keys=True) + "\n").encode("utf-8")


@main.command()
@click.option("--fixtures", "fixtures_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--gold", "gold_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--scenario-file", "scenario_files", multiple=True, metavar="FILE",
              type=click.Path(dir_okay=False, path_type=Path),
              help="Validate your own scenario YAML (repeatable): every field, and that it generates a corpus "
                   "that passes the checks below (built in a scratch folder, nothing kept).")
@click.option("--seed", default=42, show_default=True, type=int, help="Seed of the --scenario-file trial generation.")
@_errors_exit_2
def validate(fixtures_dir, gold_dir, scenario_files, seed):
    """Validate a corpus: every line, how fixtures and gold join, that every probe is
    answerable from its evidence, and that canaries were never said to their asker."""
    from conformance.answer.answerable import check_corpus
    from conformance.contract.corpus import fixtures_hash, validate_corpus

    if scenario_files:
        import tempfile

        if fixtures_dir is not None or gold_dir is not None:
            raise Failure("--scenario-file validates scenario specs; --fixtures and --gold validate a corpus: "
                          "give one or the other")
        specs = _user_scenarios(scenario_files)
        with tempfile.TemporaryDirectory() as tmp:
            from conformance.world.generator import generate_corpus

            fixtures_dir, gold_dir = Path(tmp) / "fixtures", Path(tmp) / "gold"
            generate_corpus(fixtures_dir, gold_dir, seed=seed, specs=specs)
            validate_corpus(fixtures_dir, gold_dir)
            problems = check_corpus(fixtures_dir, gold_dir)
        if problems:
            shown = "\n  ".join(problems[:20])
            raise Failure(f"the scenarios generate, but {len(problems)} probes fail the semantic checks:\n  {shown}")
        for path, spec in zip(scenario_files, specs):
            click.echo(f"{path}: scenario {spec.id} valid ({spec.paradigm}, {spec.sessions} sessions, "
                       f"{len(spec.checkpoints)} checkpoints, horizons {', '.join(spec.horizon_names())})")
        return

    fixtures_dir = fixtures_dir or paths.fixtures_dir()
    gold_dir = gold_dir or paths.gold_dir()
    ids = validate_corpus(fixtures_dir, gold_dir)
    if not ids:
        raise Failure(f"no fixtures in {fixtures_dir}")
    problems = check_corpus(fixtures_dir, gold_dir)
    if problems:
        shown = "\n  ".join(problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise Failure(f"{len(problems)} probes fail the semantic checks:\n  {shown}{more}")
    click.echo(f"{len(ids)} scenarios valid; fixtures_hash {fixtures_hash(fixtures_dir, gold_dir)}")


@main.command()
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Folder to write into (default: the schema/ folder).")
@click.option("--check", is_flag=True, help="Exit 2 when the committed schemas differ from the models.")
@click.option("--check-compat", is_flag=True,
              help="Exit 2 when a schema breaks compatibility with its newest snapshot in <folder>/history/ "
                   "without a schema_version bump, or when a bumped version has no snapshot yet.")
@_errors_exit_2
def schema(out_dir, check, check_compat):
    """Write the JSON Schemas generated from the pydantic models.

    --check-compat compares each schema as the models generate it with the newest
    history/<name>.v<version>.json snapshot of the same name (conformance/contract/compat.py).
    """
    import json

    from conformance.contract.compat import breaking_changes
    from conformance.contract.schemas import VERSION_KEY, history_name, render_schemas

    def version_key(version: str) -> tuple:
        return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in str(version).split("."))

    out_dir = out_dir or paths.schema_dir()
    rendered = render_schemas()
    problems = []
    stale = []
    for name, text in rendered.items():
        target = out_dir / name
        if check:
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                stale.append(name)
            continue
        if check_compat:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        click.echo(f"wrote {target}")
    if stale:
        problems.append(f"stale schemas in {out_dir}: {', '.join(stale)}; run `drift-conformance schema`")

    if check_compat:
        history = out_dir / "history"
        for name, text in rendered.items():
            current = json.loads(text)
            version = current.get(VERSION_KEY)
            if version is None:
                problems.append(f"{name}: no {VERSION_KEY!r} key; give its model a *_SCHEMA_VERSION constant "
                                f"(conformance/contract/schemas.py)")
                continue
            prefix = f"{name.removesuffix('.schema.json')}.v"  # result.schema.json -> result.v<version>.json
            snapshots = {p.name[len(prefix):-len(".json")]: p for p in history.glob(f"{prefix}*.json")}
            wanted = history / history_name(name, version)
            if not snapshots:
                problems.append(f"{name}: no history snapshot; add {wanted} (a copy of {out_dir / name})")
                continue
            newest = max(snapshots, key=version_key)
            snapshot_path = snapshots[newest]
            try:
                snapshot = json.loads(snapshot_path.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                problems.append(f"{snapshot_path}: not JSON ({exc})")
                continue
            if str(snapshot.get(VERSION_KEY, newest)) != newest:
                problems.append(f"{snapshot_path}: its {VERSION_KEY} is {snapshot.get(VERSION_KEY)!r}, "
                                f"not the {newest!r} its name says")
                continue
            if version_key(version) > version_key(newest):
                problems.append(f"{name}: schema_version bumped from {newest} to {version}; add the history snapshot "
                                f"{wanted} (a copy of {out_dir / name}), and for result.json a result file of "
                                f"the new version under tests/contract/data/results/")
                continue
            if version_key(version) < version_key(newest):
                problems.append(f"{name}: schema_version {version} is older than the newest snapshot {snapshot_path}")
                continue
            changes = breaking_changes(snapshot, current)
            if changes:
                listed = "\n  ".join(changes)
                problems.append(f"{name}: {len(changes)} breaking change(s) against {snapshot_path} without a "
                                f"schema_version bump:\n  {listed}\nmake the change compatible (an optional "
                                f"field, a wider type or enum), or bump the model's *_SCHEMA_VERSION and add a "
                                f"history snapshot of the new version")
                continue
            click.echo(f"{name}: version {version}, compatible with {snapshot_path.name}")
    if problems:
        raise Failure("\n".join(problems).replace("[", r"\["))


@main.command("audit-difficulty")
@click.option("--fixtures", "fixtures_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--gold", "gold_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--split", multiple=True, metavar="NAME", help="Audit only this split.")
@click.option("--include-holdout", is_flag=True)
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the audit (default: _difficulty.json beside the fixtures).")
@click.option("--records-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("drift-runs"))
@_errors_exit_2
def audit_difficulty(fixtures_dir, gold_dir, split, include_holdout, out_path, records_dir):
    """Score simple strategies (none, recent, keyword) per scenario; flag what keyword solves (DRIFT §10.3)."""
    import json

    from conformance.report.difficulty import audit
    from conformance.runner.job import run_job
    from conformance.runner.run import Selection

    if (fixtures_dir is None) != (gold_dir is None):
        raise Failure("give --fixtures and --gold together (or neither, for the committed corpus)")
    fixtures_dir = fixtures_dir or paths.fixtures_dir()
    gold_dir = gold_dir or paths.gold_dir()
    doc = run_job(["recent", "keyword"], fixtures_dir, gold_dir, records_dir=records_dir,
                  selection=Selection(splits=tuple(split), include_holdout=include_holdout))
    result = audit({name: rows for name, rows in doc._rows.items() if name != "oracle"})
    result["fixtures_hash"] = doc.receipt.fixtures_hash
    out_path = out_path or Path(fixtures_dir) / "_difficulty.json"
    out_path.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    click.echo(f"wrote {out_path}: {len(result['scenarios'])} scenarios, "
               f"{len(result['keyword_solves_perfectly'])} solved perfectly by keyword")


def record_audit(fixtures_dir: Path, name: str, entry: dict) -> None:
    """Record an audit of the library in the ledger beside the fixtures (kept by a later generate of
    the same corpus; ignored by ``generate --check``). No ledger: nothing recorded."""
    import json

    from conformance.contract.corpus import AUDITS_KEY, LEDGER_NAME

    path = fixtures_dir / LEDGER_NAME
    if not path.exists():
        return
    ledger = json.loads(path.read_text(encoding="utf-8"))
    ledger.setdefault(AUDITS_KEY, {})[name] = entry
    path.write_text(json.dumps(ledger, indent=1, sort_keys=True) + "\n", encoding="utf-8")


@main.command("audit-shortcuts")
@click.option("--fixtures", "fixtures_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--gold", "gold_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--split", multiple=True, metavar="NAME", help="Audit only this split.")
@click.option("--include-holdout", is_flag=True)
@click.option("--train-seed", default=None, type=int, help="Seed of the classifier's training corpus [default: 7].")
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the audit (default: _shortcuts.json beside the fixtures).")
@click.option("--report-only", is_flag=True, help="Print and write the verdict, exit 0 even when a rule breaks "
                                                  "(a small split has too little power to fail on).")
@click.option("--records-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("drift-runs"))
@_errors_exit_2
def audit_shortcuts(fixtures_dir, gold_dir, split, include_holdout, train_seed, out_path, report_only, records_dir):
    """Run the shortcut controls and the tier classifier; exit 1 when a shortcut matches the reference
    compressor or the classifier tells noise from signal (conformance/report/shortcuts.py)."""
    import sys
    import tempfile

    from conformance.contract.corpus import fixture_files, read_header, write_fixture, write_gold
    from conformance.report import shortcuts as S
    from conformance.runner.job import run_job
    from conformance.runner.run import Selection
    from conformance.world.generator import build_scenario
    from conformance.world.scenario import load_scenarios

    if (fixtures_dir is None) != (gold_dir is None):
        raise Failure("give --fixtures and --gold together (or neither, for the committed corpus)")
    fixtures_dir = fixtures_dir or paths.fixtures_dir()
    gold_dir = gold_dir or paths.gold_dir()
    try:
        import sklearn  # noqa: F401
    except ImportError:
        raise Failure("audit-shortcuts needs scikit-learn: pip install 'drift-conformance[audit]'") from None
    selection = Selection(splits=tuple(split), include_holdout=include_holdout)
    chosen = set()
    for path in fixture_files(fixtures_dir):
        header = read_header(path)
        if (header.holdout and not include_holdout) or (split and not set(split) & set(header.splits)):
            continue
        chosen.add(path.stem)
    if not chosen:
        raise Failure(f"no scenario of {fixtures_dir} is in the selection")
    seed = S.TRAIN_SEED if train_seed is None else train_seed
    specs = [spec for spec in load_scenarios(paths.data_root() / "scenarios") if spec.id in chosen]
    if not specs:
        raise Failure("none of the audited scenarios has a spec under scenarios/ to train the classifier on")
    with tempfile.TemporaryDirectory() as tmp:  # the classifier's training corpus: same specs, another seed
        for spec in specs:
            lines, gold = build_scenario(spec, seed)
            write_fixture(Path(tmp) / "f" / f"{spec.id}.jsonl", lines)
            write_gold(Path(tmp) / "g" / f"{spec.id}.json", gold)
        train = S.sessions(Path(tmp) / "f", Path(tmp) / "g")
    classifier = S.classifier_audit(train, S.sessions(fixtures_dir, gold_dir, chosen))
    classifier["train_seed"] = seed
    doc = run_job(list(S.SHORTCUTS), fixtures_dir, gold_dir, records_dir=records_dir, selection=selection,
                  baseline_system=S.REFERENCE)
    table = S.shortcut_table(doc)
    problems = S.verdict(table, classifier)
    result = {"fixtures_hash": doc.receipt.fixtures_hash, "selection": {"splits": sorted(split),
                                                                        "include_holdout": include_holdout},
              "scenarios": len(chosen), "systems": table, "classifier": classifier,
              "rules": {"auc_limit": S.AUC_LIMIT, "margin": S.MARGIN, "reference": S.REFERENCE},
              "passed": not problems, "problems": problems}
    out_path = out_path or Path(fixtures_dir) / "_shortcuts.json"
    S.write(out_path, result)
    if not split and not include_holdout:
        record_audit(Path(fixtures_dir), "shortcuts", S.ledger_entry(result))
    for name, row in table.items():
        diff = "" if "vs_reference" not in row or row["vs_reference"] is None else \
            f"  vs reference {row['vs_reference']:+.3f} {row['vs_reference_ci95']}"
        click.echo(f"{name:20} DRIFT-C {row['drift_c']} {row['drift_c_ci95']}{diff}")
    click.echo(f"tier classifier AUC {classifier['auc']} (by paradigm {classifier['by_paradigm']})")
    click.echo(f"wrote {out_path}: " + ("passed" if not problems else "FAILED: " + "; ".join(problems)))
    if problems and not report_only:
        sys.exit(1)


@main.command("adapters")
def list_adapters():
    """List the built-in adapters: name, kind, how verified (live, fake-service), description."""
    from conformance.backend.manifest import load_manifest
    from conformance.runner.systems import available_adapters

    names = available_adapters()
    width = max((len(n) for n in names), default=0)
    for name in names:
        manifest = load_manifest(paths.adapters_dir() / name)
        click.echo(f"{name:{width}}  {manifest.kind:9} {manifest.verified:12} {' '.join(manifest.description.split())}")


@main.group("import", cls=LazyGroup, lazy={"beam": "conformance.importers.beam:cli_command",
                                           "longmemeval": "conformance.importers.longmemeval:cli_command",
                                           "guide": "conformance.importers.guide:import_command"})
def import_():
    """Import a public dataset into fixtures + gold."""


@import_.command("locomo")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder to write fixtures/, gold/ and import-report.json into.")
@_errors_exit_2
def import_locomo_cmd(path, out_dir):
    """Import LoCoMo (locomo10.json): sessions, QA probes, evidence; an import report lists bad gold."""
    from conformance.importers.locomo import import_locomo
    from conformance.importers.report import run_import

    run_import(import_locomo, path, out_dir)


@main.group("export", cls=LazyGroup, lazy={"guide": "conformance.importers.guide:export_command"})
def export_group():
    """Export the corpus in another harness's format (the comparison guide's JSONL cases)."""


if __name__ == "__main__":
    sys.exit(main())

"""``drift-conformance generate``: the canonical corpus and its ledger, or a corpus of one's own scenarios."""

from __future__ import annotations

from pathlib import Path

import click

from conformance import paths
from conformance.cli.common import Command, Failure, corpus_options


@click.command("generate", cls=Command)
@corpus_options
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
        specs = user_scenarios(scenario_files)
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
        from drift_sdk.llm.budget import Budget
        from drift_sdk.llm.client import AnthropicClient
        from drift_sdk.llm.errors import BudgetSpent
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


def user_scenarios(files) -> list:
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
            if n not in want or n not in have or comparable_bytes(want[n]) != comparable_bytes(have[n])]


def comparable_bytes(path: Path) -> bytes:
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

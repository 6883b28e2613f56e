"""``drift-conformance validate``: a corpus, or one's own scenario files."""

from __future__ import annotations

from pathlib import Path

import click

from conformance import paths
from conformance.cli.common import Command, Failure, corpus_folders, corpus_options


@click.command("validate", cls=Command)
@corpus_options
@click.option("--scenario-file", "scenario_files", multiple=True, metavar="FILE",
              type=click.Path(dir_okay=False, path_type=Path),
              help="Validate your own scenario YAML (repeatable): every field, and that it generates a corpus "
                   "that passes the checks below (built in a scratch folder, nothing kept).")
@click.option("--seed", default=42, show_default=True, type=int, help="Seed of the --scenario-file trial generation.")
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
        from conformance.cli.generate import user_scenarios

        specs = user_scenarios(scenario_files)
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

    fixtures_dir, gold_dir = corpus_folders(fixtures_dir, gold_dir)
    ids = validate_corpus(fixtures_dir, gold_dir)
    if not ids:
        raise Failure(f"no fixtures in {fixtures_dir}")
    problems = check_corpus(fixtures_dir, gold_dir)
    if problems:
        shown = "\n  ".join(problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise Failure(f"{len(problems)} probes fail the semantic checks:\n  {shown}{more}")
    click.echo(f"{len(ids)} scenarios valid; fixtures_hash {fixtures_hash(fixtures_dir, gold_dir)}")

"""``drift-conformance audit-difficulty``: what simple strategies solve, per scenario (DRIFT §10.3)."""

from __future__ import annotations

from pathlib import Path

import click

from conformance import paths
from conformance.cli.common import Command, Failure


@click.command("audit-difficulty", cls=Command)
@click.option("--fixtures", "fixtures_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--gold", "gold_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--split", multiple=True, metavar="NAME", help="Audit only this split.")
@click.option("--include-holdout", is_flag=True)
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the audit (default: _difficulty.json beside the fixtures).")
@click.option("--records-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("drift-runs"))
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

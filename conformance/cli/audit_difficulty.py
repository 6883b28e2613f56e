"""``drift-conformance audit-difficulty``: what simple strategies solve, per scenario (DRIFT §10.3)."""

from __future__ import annotations

from pathlib import Path

import click

from conformance.cli.common import Command, audit_table_path, corpus_folders, corpus_options


@click.command("audit-difficulty", cls=Command)
@corpus_options
@click.option("--split", multiple=True, metavar="NAME", help="Audit only this split.")
@click.option("--include-holdout", is_flag=True)
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the audit (default: _difficulty.json beside the fixtures for the whole library, "
                   "difficulty-SPLIT.json here for a split).")
@click.option("--records-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("drift-runs"))
def audit_difficulty(fixtures_dir, gold_dir, split, include_holdout, out_path, records_dir):
    """Score simple strategies (none, recent, keyword) per scenario; flag what keyword solves (DRIFT §10.3)."""
    import json

    from conformance.report.difficulty import audit
    from conformance.runner.job import run_job
    from conformance.contract.corpus import Selection

    fixtures_dir, gold_dir = corpus_folders(fixtures_dir, gold_dir)
    doc = run_job(["recent", "keyword"], fixtures_dir, gold_dir, records_dir=records_dir,
                  selection=Selection(splits=tuple(split), include_holdout=include_holdout))
    result = audit({name: rows for name, rows in doc._rows.items() if name != "oracle"})
    result["fixtures_hash"] = doc.receipt.fixtures_hash
    out_path = audit_table_path(out_path, fixtures_dir, "difficulty", split, include_holdout)
    out_path.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    click.echo(f"wrote {out_path}: {len(result['scenarios'])} scenarios, "
               f"{len(result['keyword_solves_perfectly'])} solved perfectly by keyword")

"""``drift-conformance export guide``: the corpus in another harness's format."""

from __future__ import annotations

from pathlib import Path

import click

from conformance.cli.common import LazyGroup


@click.group("export", cls=LazyGroup)
def export_group():
    """Export the corpus in another harness's format (the comparison guide's JSONL cases)."""


@export_group.command("guide")
@click.option("--fixtures", "fixtures_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Fixture folder (default: the packaged corpus).")
@click.option("--gold", "gold_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Gold folder (default: the packaged corpus).")
@click.option("--split", multiple=True, metavar="NAME", help="Export only scenarios of this split, e.g. ci.")
@click.option("--scenario", multiple=True, metavar="GLOB", help="Export only scenarios matching GLOB.")
@click.option("--include-holdout", is_flag=True, help="Also export holdout scenarios (never by default).")
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The JSONL file to write (one case per scenario).")
def export_guide_cmd(fixtures_dir: Path | None, gold_dir: Path | None, split: tuple[str, ...],
                     scenario: tuple[str, ...], include_holdout: bool, out_path: Path) -> None:
    """Export scenarios as the comparison guide's JSONL cases (gold answers and evidence
    included; corpus-only fields in 'drift' objects, so importing the file restores them)."""
    from conformance.importers.guide import export_selection
    from conformance.contract.corpus import Selection

    selection = Selection(patterns=tuple(scenario), splits=tuple(split), include_holdout=include_holdout)
    written = export_selection(fixtures_dir, gold_dir, out_path, selection)
    click.echo(f"{written} case{'' if written == 1 else 's'} written to {out_path}")

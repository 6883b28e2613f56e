"""``drift-conformance import NAME PATH --out DIR``: a public dataset as fixtures + gold.

Each subcommand reads its dataset with the importer in conformance/importers/ (imported
only when it runs) and shares :func:`conformance.importers.report.run_import`.
"""

from __future__ import annotations

from pathlib import Path

import click

from conformance.cli.common import LazyGroup

_OUT_HELP = "Folder to write fixtures/, gold/ and import-report.json into."


def _out_option(fn):
    return click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
                        help=_OUT_HELP)(fn)


@click.group("import", cls=LazyGroup)
def import_():
    """Import a public dataset into fixtures + gold."""


@import_.command("locomo")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_out_option
def import_locomo_cmd(path, out_dir):
    """Import LoCoMo (locomo10.json): sessions, QA probes, evidence; an import report lists bad gold."""
    from conformance.importers.locomo import import_locomo
    from conformance.importers.report import run_import

    run_import(import_locomo, path, out_dir, echo=click.echo)


@import_.command("longmemeval")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_out_option
def import_longmemeval_cmd(path: Path, out_dir: Path) -> None:
    """Import LongMemEval (longmemeval_s/_m/_oracle.json, cleaned too): one scenario per question, streamed."""
    from conformance.importers.longmemeval import import_longmemeval
    from conformance.importers.report import run_import

    run_import(import_longmemeval, path, out_dir, unit="instance", echo=click.echo)


@import_.command("beam")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@_out_option
def import_beam_cmd(path: Path, out_dir: Path) -> None:
    """Import BEAM (a conversation folder, a folder of them, or JSON/JSONL rows): turns as sessions,
    probing questions as probes, source_chat_ids as evidence; an import report lists bad gold."""
    from conformance.importers.beam import import_beam, rubric_lines
    from conformance.importers.report import run_import

    run_import(import_beam, path, out_dir, extra=rubric_lines, echo=click.echo)


@import_.command("guide")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_out_option
def import_guide_cmd(path: Path, out_dir: Path) -> None:
    """Import the comparison guide's JSONL cases (one case per line): sessions, questions,
    evidence; an import report lists every item it had to change or drop."""
    from conformance.importers.guide import import_guide
    from conformance.importers.report import run_import

    run_import(import_guide, path, out_dir, unit="case", echo=click.echo)

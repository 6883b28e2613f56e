"""``drift-conformance report RESULT [--html report.html] [--markdown report.md]``."""

from __future__ import annotations

from pathlib import Path

import click

from conformance.cli.common import Command
from conformance.errors import DriftError


@click.command("report", cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("result", type=click.Path(dir_okay=True, path_type=Path))
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
              help="Write a self-contained HTML report (tables, plots as inline SVG) here.")
@click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
              help="Write a GitHub-flavoured Markdown report (tables, no plots) here.")
@click.option("--wide", is_flag=True, help="Print every table in full (about 200 columns) instead of the compact one.")
@click.option("--audit", "audit_path", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
              help="Show judge-human agreement from `drift-conformance audit score ... --out PATH`.")
def report_cmd(result: Path, html_path: Path | None, markdown_path: Path | None, wide: bool,
               audit_path: Path | None) -> None:
    """Render a result.json as a readable report (the terminal table when no file is asked for).

    \b
    drift-conformance report result.json                    # the run's table, as the run printed it
    drift-conformance report result.json --html report.html
    drift-conformance report result.json --html report.html --markdown report.md
    """
    from conformance.report import command as files

    doc = files.load_result(result)
    if html_path is None and markdown_path is None:
        from rich.console import Console

        from conformance.report.table import render

        render(doc, Console(), wide=wide)
        return
    audit = files.load_audit(audit_path) if audit_path is not None else None
    if audit is not None and audit.get("run_id") != doc.receipt.config.get("run_id"):
        raise DriftError(f"{audit_path}: the audit is of run {audit.get('run_id')!r}, but {result} is run "
                         f"{doc.receipt.config.get('run_id')!r}: show an audit with the result it sampled")
    if html_path is not None:
        from conformance.report.html import render_html

        files.write_report_file(html_path, render_html(doc, audit))
        click.echo(f"wrote {html_path}", err=True)
    if markdown_path is not None:
        from conformance.report.markdown import render_markdown

        files.write_report_file(markdown_path, render_markdown(doc, audit))
        click.echo(f"wrote {markdown_path}", err=True)

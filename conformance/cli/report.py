"""``drift-conformance report RESULT [--html report.html] [--markdown report.md] [--probes probes.jsonl]
[--compare BASELINE.json]``."""

from __future__ import annotations

from pathlib import Path

import click

from conformance.cli.common import Command
from conformance.errors import DriftError


@click.command("report", cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("result", type=click.Path(dir_okay=True, path_type=Path))
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
              help="Write a self-contained HTML report (tables, plots as inline SVG, the run explorer) here.")
@click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
              help="Write a GitHub-flavoured Markdown report (tables, no plots) here.")
@click.option("--probes", "probes_path", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
              help="Write the explorer's data as JSON lines here, one per probe and system "
                   "(schema/probes.schema.json; no gold for holdout or sealed scenarios).")
@click.option("--records", "records_path", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
              help="The run's records.jsonl, when it is not where the result names it (its SHA-256 must match).")
@click.option("--compare", "compare_path", type=click.Path(dir_okay=False, path_type=Path), metavar="BASELINE",
              help="Diff this run against another run's result.json probe by probe (newly failed, newly fixed), "
                   "in the terminal and in the page.")
@click.option("--fixtures", "fixtures_dir", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="The run's fixtures folder, when it is not where the result names it (the explorer's questions).")
@click.option("--gold", "gold_dir", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="The run's gold folder, when it moved; joined only where its files hash as the run recorded.")
@click.option("--no-explorer", is_flag=True, help="Leave the run explorer out of the HTML page.")
@click.option("--wide", is_flag=True, help="Print every table in full (about 200 columns) instead of the compact one.")
@click.option("--audit", "audit_path", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
              help="Show judge-human agreement from `drift-conformance audit score ... --out PATH`.")
def report_cmd(result: Path, html_path: Path | None, markdown_path: Path | None, probes_path: Path | None,
               records_path: Path | None, compare_path: Path | None, fixtures_dir: Path | None, gold_dir: Path | None,
               no_explorer: bool, wide: bool, audit_path: Path | None) -> None:
    """Render a result.json as a readable report (the terminal table when no file is asked for).

    \b
    drift-conformance report result.json                    # the run's table, as the run printed it
    drift-conformance report result.json --html report.html # tables, plots and the run explorer
    drift-conformance report result.json --probes probes.jsonl
    drift-conformance report result.json --compare before.json --html report.html
    """
    from conformance.report import command as files

    doc = files.load_result(result)
    audit = files.load_audit(audit_path) if audit_path is not None else None
    if audit is not None and audit.get("run_id") != doc.receipt.config.get("run_id"):
        raise DriftError(f"{audit_path}: the audit is of run {audit.get('run_id')!r}, but {result} is run "
                         f"{doc.receipt.config.get('run_id')!r}: show an audit with the result it sampled")
    wants_explorer = html_path is not None and not no_explorer
    lines = baseline = None
    notes: list[str] = []
    if wants_explorer or probes_path is not None or compare_path is not None:
        lines, notes, baseline = _probe_data(doc, result, (records_path, fixtures_dir, gold_dir), compare_path,
                                             optional=probes_path is None and compare_path is None)
    if html_path is None and markdown_path is None and probes_path is None:
        from rich.console import Console

        from conformance.report.table import render

        render(doc, Console(), wide=wide)
    for note in notes:
        click.echo(f"note: {note}", err=True)
    diff = _diff_lines(lines, baseline, compare_path) if baseline is not None else []
    for line in diff:
        click.echo(line)
    _write_outputs(doc, audit, (html_path, markdown_path, probes_path), lines, baseline, notes + diff)


def _probe_data(doc, result: Path, sources: tuple, compare_path: Path | None, optional: bool):
    """(this run's probe lines, notes on what gold was not joined, the baseline's lines or None);
    ``sources``: the --records, --fixtures and --gold overrides (None each when not given).
    With ``optional`` (the page alone) a result that names no records gives (None, [], None) and a
    note on stderr instead of an error."""
    from conformance.report import command as files
    from conformance.report import explorer

    records_path, fixtures_dir, gold_dir = sources
    if optional and records_path is None and "records" not in doc.receipt.config:
        click.echo(f"note: {result} names no run records; the page has no run explorer (pass --records PATH)",
                   err=True)
        return None, [], None
    run = explorer.load_run_probes(doc, explorer.find_records(doc, result, records_path), fixtures_dir, gold_dir)
    lines = explorer.probe_lines(run)
    baseline = None
    if compare_path is not None:
        other = files.load_result(compare_path)
        baseline = explorer.probe_lines(explorer.load_run_probes(other, explorer.find_records(other, compare_path)))
    return lines, run.notes, baseline


def _diff_lines(lines, baseline, compare_path: Path, limit: int = 20) -> list[str]:
    """The comparison in the terminal: per system, counts then up to ``limit`` ids of each change."""
    from conformance.report.explorer import diff_runs

    out = [f"compared with {compare_path}, probe by probe (first pass):"]
    diffs = diff_runs(lines, baseline)
    if not diffs:
        out.append("  no system and probe scored in both runs")
    for d in diffs:
        out.append(f"  {d.system}: {len(d.newly_failed)} newly failed, {len(d.newly_fixed)} newly fixed "
                   f"(of {d.both} probes scored in both)")
        for title, ids in (("newly failed", d.newly_failed), ("newly fixed", d.newly_fixed)):
            if ids:
                more = f" ... and {len(ids) - limit} more" if len(ids) > limit else ""
                out.append(f"    {title}: {', '.join(ids[:limit])}{more}")
    mine, theirs = dict.fromkeys(p.system for p in lines), dict.fromkeys(p.system for p in baseline)
    for system in [s for s in mine if s not in theirs]:
        out.append(f"  {system}: not in the baseline run")
    for system in [s for s in theirs if s not in mine]:
        out.append(f"  {system}: only in the baseline run")
    return out


def _write_outputs(doc, audit, paths: tuple, lines, baseline, shown: list[str]) -> None:
    """Write the page (the explorer with ``shown``: notes and the comparison), Markdown, probes.jsonl."""
    from conformance.report import command as files

    html_path, markdown_path, probes_path = paths
    if html_path is not None:
        from conformance.report.html import render_html

        section = None
        if lines is not None:
            from conformance.report.explorer import page_payload
            from conformance.report.explorer_page import explorer_section

            default = next((label for label, r in doc.systems.items() if r.kind == "system"), None)
            section = explorer_section(page_payload(lines, baseline, default), shown)
        files.write_report_file(html_path, render_html(doc, audit, section))
        click.echo(f"wrote {html_path}", err=True)
    if markdown_path is not None:
        from conformance.report.markdown import render_markdown

        files.write_report_file(markdown_path, render_markdown(doc, audit))
        click.echo(f"wrote {markdown_path}", err=True)
    if probes_path is not None:
        from conformance.report.explorer import write_probes_jsonl

        write_probes_jsonl(lines, probes_path)
        click.echo(f"wrote {probes_path} ({len(lines)} lines)", err=True)

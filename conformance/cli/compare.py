"""``drift-conformance compare BASELINE RESULT``: the CI gate as a pure file-vs-file diff."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from conformance.cli.common import Command
from conformance.errors import DriftError


@click.command("compare", cls=Command)
@click.argument("baseline", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("result", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--candidate", type=click.Path(dir_okay=False, path_type=Path),
              help="The baseline this change commits (checked against RESULT when the gated scenarios changed).")
@click.option("--base-ref", metavar="REF",
              help="Read BASELINE from git at REF (git show REF:BASELINE) instead of the working tree.")
@click.option("--summary", type=click.Path(dir_okay=False, path_type=Path), envvar="GITHUB_STEP_SUMMARY",
              help="Append the Markdown diff here (GitHub's step summary by default on Actions).")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON instead of Markdown.")
def compare_cmd(baseline, result, candidate, base_ref, summary, as_json):
    """Gate RESULT against BASELINE: exit 0 pass, 1 regression, 2 inconclusive or error. Runs nothing.

    \b
    drift-conformance compare baselines/main.json result.json
    drift-conformance compare --base-ref origin/main baselines/main.json result.json --candidate baselines/main.json
    """
    from conformance.gate.command import gate
    from conformance.report.command import load_result

    try:
        doc = load_result(result)
    except DriftError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    sys.exit(gate(baseline, doc, candidate_path=candidate, base_ref=base_ref, summary=summary, as_json=as_json, echo=click.echo))

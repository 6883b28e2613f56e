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
@click.option("--json-out", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
              help="Also write the comparison as JSON here (scripts/gate.sh's gate.json).")
@click.option("--allow-missing", is_flag=True,
              help="No baseline yet (absent at --base-ref, or no such file) passes as verdict no-baseline, exit 0, "
                   "with the command that makes one: a repository's first pull request with the gate.")
@click.option("--baseline-out", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
              help="Also write RESULT's own baseline here (what --update-baseline would commit), e.g. for an "
                   "artifact a first pull request's author can commit.")
@click.option("--annotate", is_flag=True,
              help="Also print the verdict as a GitHub Actions annotation (::notice:: or ::error::).")
def compare_cmd(baseline, result, candidate, base_ref, summary, as_json, json_out, allow_missing, baseline_out,
                annotate):
    """Gate RESULT against BASELINE: exit 0 pass (or no baseline yet, with --allow-missing), 1 regression,
    2 inconclusive or error. Runs nothing.

    BASELINE is a path in the repository, usually baselines/main.json (the path --update-baseline
    writes).

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
    if baseline_out is not None:
        from conformance.gate.baseline import BaselineError, write_baseline

        try:
            write_baseline(doc, baseline_out)
        except BaselineError as exc:  # an incomplete run: the comparison below says why
            click.echo(f"note: no baseline written to {baseline_out}: {exc}", err=True)
    sys.exit(gate(baseline, doc, candidate_path=candidate, base_ref=base_ref, summary=summary, as_json=as_json,
                  json_out=json_out, allow_missing=allow_missing, annotate=annotate, echo=click.echo))

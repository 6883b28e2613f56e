"""``drift-conformance compare BASELINE RESULT``: the CI gate as a pure file-vs-file diff."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from conformance.contract.result import ResultDocument
from conformance.errors import DriftError
from conformance.report.command import load_result


def gate(baseline_path: Path | None, result: ResultDocument, *, candidate_path: Path | None = None,
         base_ref: str | None = None, repo: Path = Path("."), summary: Path | None = None,
         as_json: bool = False, echo=click.echo) -> int:
    """Compare, print the diff (Markdown, or JSON with ``as_json``), append it to ``summary``; return the exit code.

    The baseline comes from ``base_ref`` (``git show REF:BASELINE``, so a change cannot
    rewrite what it is compared with) or else from the file. Unreadable inputs are an
    inconclusive verdict (exit 2), never a pass.
    """
    from conformance.gate.baseline import BaselineError, load_baseline, load_baseline_at
    from conformance.gate.compare import compare, exit_code, inconclusive
    from conformance.gate.render import markdown

    try:
        if base_ref:
            baseline = load_baseline_at(base_ref, str(baseline_path or "baselines/main.json"), repo)
        else:
            baseline = load_baseline(baseline_path)
        candidate = load_baseline(candidate_path) if candidate_path and Path(candidate_path).exists() else None
        comparison = compare(baseline, result, candidate=candidate)
    except BaselineError as exc:
        comparison = inconclusive(str(exc))
    text = markdown(comparison)
    if summary is not None:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(text + "\n")
    echo(json.dumps(comparison.to_dict(), indent=2, sort_keys=True) if as_json else text)
    return exit_code(comparison)


@click.command("compare")
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
    try:
        doc = load_result(result)
    except DriftError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    sys.exit(gate(baseline, doc, candidate_path=candidate, base_ref=base_ref, summary=summary, as_json=as_json))

"""``drift-conformance audit sample RESULT --n 80`` and ``drift-conformance audit score AUDIT --key KEY``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from conformance.cli.common import LazyGroup


@click.group("audit", cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
def audit_group() -> None:
    """Human audit of the judge (guide §6.1): a blinded sample to label, then agreement."""


@audit_group.command("sample")
@click.argument("result", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--n", "n", default=80, show_default=True, type=click.IntRange(1, 100_000),
              help="Items to sample (all graded free-form answers when fewer).")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=Path("audit.jsonl"),
              show_default=True, help="The blinded file to label (no system names, no verdicts).")
@click.option("--key", "key", type=click.Path(dir_okay=False, path_type=Path), default=Path("audit-key.json"),
              show_default=True, help="The mapping back to system, probe and pipeline verdict (keep it from the labeler).")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0), help="Sampling seed.")
def sample_cmd(result: Path, n: int, out: Path, key: Path, seed: int) -> None:
    """Write a blinded sample of graded answers to label by hand.

    \b
    drift-conformance audit sample result.json --n 80 --out audit.jsonl --key audit-key.json
    # set each line's human_verdict to "correct" or "incorrect", then:
    drift-conformance audit score audit.jsonl --key audit-key.json --out audit-score.json
    """
    from conformance.report.audit import sample_audit

    written = sample_audit(result, n, out, key, seed)
    click.echo(f"wrote {written} items to {out} (label human_verdict) and the key to {key} (do not open it while "
               "labelling)", err=True)


@audit_group.command("score")
@click.argument("audit", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--key", "key", type=click.Path(dir_okay=False, path_type=Path), default=Path("audit-key.json"),
              show_default=True, help="The key written by `audit sample`.")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the agreement figures as JSON here (`report RESULT --audit FILE` shows them).")
def score_cmd(audit: Path, key: Path, out: Path | None) -> None:
    """Judge-human agreement overall, per system and per grading method, with 95% intervals."""
    from conformance.report.audit import format_audit, refuse_overwrite, score_audit

    if out is not None:
        refuse_overwrite(out, "--out", {"the labelled audit file": audit, "the key": key})
    score = score_audit(audit, key)
    click.echo(format_audit(score))
    if out is not None:
        out.write_text(json.dumps(score, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        click.echo(f"wrote {out}", err=True)

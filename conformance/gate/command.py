"""The CI gate as a pure file-vs-file diff (``drift-conformance compare``, ``--compare``)."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.contract.result import ResultDocument
from conformance.gate.baseline import DEFAULT_BASELINE
from conformance.paths import write_atomic


def _compared(baseline_path: Path | None, result: ResultDocument, candidate_path: Path | None, base_ref: str | None,
              repo: Path, allow_missing: bool):
    """The comparison of ``result`` with the baseline at ``base_ref`` (or the file); unreadable
    inputs are inconclusive, a missing baseline is :func:`first_run` when ``allow_missing``."""
    from conformance.gate.baseline import BaselineError, MissingBaseline, load_baseline, load_baseline_at
    from conformance.gate.compare import compare, first_run, inconclusive

    path = str(baseline_path or DEFAULT_BASELINE)
    try:
        candidate = load_baseline(candidate_path) if candidate_path and Path(candidate_path).exists() else None
        try:
            baseline = load_baseline_at(base_ref, path, repo) if base_ref else load_baseline(Path(path))
        except MissingBaseline:
            if not allow_missing:
                raise
            return first_run(result, f"{base_ref}:{path}" if base_ref else path, candidate=candidate, path=path)
        return compare(baseline, result, candidate=candidate, path=path)
    except BaselineError as exc:
        return inconclusive(str(exc))


def gate(baseline_path: Path | None, result: ResultDocument, *, candidate_path: Path | None = None,
         base_ref: str | None = None, repo: Path = Path("."), summary: Path | None = None,
         as_json: bool = False, json_out: Path | None = None, allow_missing: bool = False,
         annotate: bool = False, echo=print) -> int:
    """Compare, print the diff (Markdown, or JSON with ``as_json``), append it to ``summary``; return the exit code.

    The baseline comes from ``base_ref`` (``git show REF:BASELINE``, so a change cannot
    rewrite what it is compared with) or else from the file (default ``baselines/main.json``).
    Unreadable inputs are an inconclusive verdict (exit 2), never a pass. ``allow_missing``:
    no baseline at all yet is verdict ``no-baseline`` (exit 0) with how to make one, instead
    of inconclusive. ``json_out``: also write the comparison as JSON there. ``annotate``: also
    print the verdict as a GitHub Actions annotation (``::notice::``/``::error::``).
    """
    from conformance.gate.compare import exit_code
    from conformance.gate.render import annotation, markdown

    comparison = _compared(baseline_path, result, candidate_path, base_ref, repo, allow_missing)
    text = markdown(comparison)
    as_text = json.dumps(comparison.to_dict(), indent=2, sort_keys=True)
    if summary is not None:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(text + "\n")
    if json_out is not None:
        write_atomic(Path(json_out), as_text + "\n", what="the comparison")
    echo(as_text if as_json else text)
    line = annotation(comparison) if annotate else None
    if line:
        echo(line)
    return exit_code(comparison)

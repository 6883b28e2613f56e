"""The CI gate as a pure file-vs-file diff (``drift-conformance compare``, ``--compare``)."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.contract.result import ResultDocument


def gate(baseline_path: Path | None, result: ResultDocument, *, candidate_path: Path | None = None,
         base_ref: str | None = None, repo: Path = Path("."), summary: Path | None = None,
         as_json: bool = False, echo=print) -> int:
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

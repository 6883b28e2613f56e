"""The gate's verdict as Markdown: a terminal-readable diff and a GitHub step summary."""

from __future__ import annotations

from conformance.gate.compare import Comparison, exit_code

_SHOWN = 25  # findings listed per group before "... and N more"


def _fmt(value) -> str:
    if value is None:
        return "—"
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def _findings(title: str, findings, *, justified_only: bool = False) -> list[str]:
    if not findings:
        return []
    lines = [f"### {title} ({len(findings)})", ""]
    for finding in findings[:_SHOWN]:
        status = f" — justified: {finding.justification}" if finding.justification else ""
        lines.append(f"- `{finding.key}`: {finding.detail}{status}")
    if len(findings) > _SHOWN:
        lines.append(f"- ... and {len(findings) - _SHOWN} more (`--json` lists every one)")
    return lines + [""]


def markdown(comparison: Comparison, *, title: str = "drift-conformance gate") -> str:
    """Verdict line, the per-cell table (only cells that changed, unless none did), and findings."""
    verdict = comparison.verdict.upper()
    lines = [f"## {title}: {verdict} (exit {exit_code(comparison)})", "",
             f"Mode: **{comparison.mode}**. {comparison.reason or ''}".rstrip(), ""]
    changed = [row for row in comparison.cells
               if (row["baseline_failed"], row["baseline_total"]) != (row["run_failed"], row["run_total"])]
    rows = changed or comparison.cells
    if rows:
        lines += [("Cells that changed" if changed else "Cells (none changed)") + ":", "",
                  "| system | cell | failed (baseline → run) | gold items | pass rate (baseline → run) |",
                  "|---|---|---|---|---|"]
        for row in rows:
            lines.append(f"| {row['system']} | {row['cell']} | {_fmt(row['baseline_failed'])} → "
                         f"{_fmt(row['run_failed'])} | {_fmt(row['baseline_total'])} → {_fmt(row['run_total'])} | "
                         f"{_fmt(row['baseline_pass_rate'])} → {_fmt(row['run_pass_rate'])} |")
        lines.append("")
    lines += _findings("Regressions", comparison.regressions)
    lines += _findings("Breaches", comparison.breaches)
    lines += _findings("Improvements (not gating)", comparison.improvements)
    if comparison.verdict == "regression":
        where = ("the base branch's baseline or in the re-blessed baseline this change commits"
                 if comparison.mode == "bless" else "the base branch's baseline")
        lines.append(f"A finding passes only with a justification naming its key in {where} "
                     "(`justifications: [{breach, reason}]`; docs/ci-gate.md).")
    return "\n".join(lines).rstrip() + "\n"


def _escape(text: str) -> str:
    """GitHub's workflow-command escaping of a message (``%``, CR and LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def annotation(comparison: Comparison, *, title: str = "drift-conformance gate") -> str | None:
    """The verdict as one GitHub Actions workflow command, or None for a plain pass.

    ``::notice`` for no baseline yet (with how to make one), ``::error`` for a regression or an
    inconclusive run (its reason, and the first findings), so the pull request shows why
    without opening the log. Format: docs.github.com, "Workflow commands for GitHub Actions".
    """
    if comparison.verdict == "pass":
        return None
    level = "notice" if comparison.verdict == "no-baseline" else "error"
    lines = [f"{comparison.verdict} (exit {exit_code(comparison)}): {comparison.reason or ''}".rstrip()]
    open_findings = [f for f in comparison.regressions + comparison.breaches if f.justification is None]
    lines += [f"{f.key}: {f.detail}" for f in open_findings[:5]]
    if len(open_findings) > 5:
        lines.append(f"... and {len(open_findings) - 5} more (the job summary lists them)")
    return f"::{level} title={title}::{_escape(chr(10).join(lines))}"

"""The Markdown report (GitHub-flavoured): the HTML report's tables and lists, no plots.

Strings from the result are untrusted: Markdown and HTML syntax in them is escaped so
an adapter name can neither break a table nor inject markup.
"""

from __future__ import annotations

import re
from typing import Any

from conformance.contract.result import ResultDocument
from conformance.report.html import (Cell, Table, comparison_lines, deviations, measurements, salt_line, scalar, summary,
                                     tables)

_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def md(text: Any) -> str:
    """Escape one piece of untrusted text for a Markdown table cell or list item."""
    text = " ".join(str(text).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _SPECIAL.sub(r"\\\1", text)


def _cell(c: Cell) -> str:
    if c.na:
        return f"*{md(c.value)}*"
    text = md(c.value)
    if c.excludes_zero:
        text = f"**{text}**"
    return f"{text} {md(c.interval)}" if c.interval is not None else text


def table_md(table: Table, level: int = 3) -> list[str]:
    out = [f"{'#' * level} {md(table.title)}", ""]
    if table.empty is not None:
        return out + [md(table.empty), ""]
    out += [md(table.caption), ""]
    out.append("| | " + " | ".join(md(c) for c in table.columns) + " |")
    out.append("|---|" + "|".join("---:" for _ in table.columns) + "|")
    for label, cells in table.rows:
        out.append(f"| **{md(label)}** | " + " | ".join(_cell(c) for c in cells) + " |")
    return out + [""]


def render_markdown(doc: ResultDocument, audit: dict | None = None) -> str:
    receipt = doc.receipt
    by_key = {t.key: t for t in tables(doc)}
    out = [f"# drift-conformance report: {len(receipt.scenarios)} scenarios, {len(doc.systems)} systems", "",
           "Numbers carry their 95% cluster-bootstrap interval over scenarios \\[low, high\\] where one can be "
           "computed (a metric resting on one scenario says so; * marks an interval over only some resamples); "
           "n/a means "
           "undefined for this run, with the reason, never 0. Plots: see the HTML report "
           "(`drift-conformance report RESULT --html report.html`).", ""]
    if not doc.complete:
        out += ["> **Warning:** this run stopped early; see the deviations below.", ""]

    out += ["## Run summary", ""]
    out += [f"- **{md(k)}:** {md(v)}" for k, v in summary(doc, audit)]
    out.append("")

    out += table_md(by_key["comparison"], level=2)
    differing = comparison_lines(doc)
    out += [f"- {md(line)}" for line in differing] + [""] if differing else (
        ["No pair of systems differs after Holm's adjustment.", ""] if doc.comparisons else [])
    out += table_md(by_key["headline"], level=2)
    out += ["## Paired differences", ""]
    for key in ("paired-none", "paired-baseline", "noise-floor"):
        out += table_md(by_key[key])

    out += ["## Plots", "", "Plots: see the HTML report (accuracy by probe type, latency distributions, token cost "
            "curve).", ""]

    out += ["## All tables", ""]
    for key in ("capability", "efficiency", "latency", "accuracy", "per-type", "causes", "causes-by-type", "other"):
        out += table_md(by_key[key])
    out += ["## Breakdowns", ""]
    for key in ("by-paradigm", "by-horizon"):
        out += table_md(by_key[key])

    out += ["## How metrics were measured", ""]
    rows = measurements(doc)
    if rows:
        out += ["| systems | metric | method |", "|---|---|---|"]
        out += [f"| {md(s)} | {md(m)} | {md(h)} |" for s, m, h in rows]
    else:
        out.append("The result records no per-metric measurement methods.")
    out.append("")

    out += ["## Deviations from the fairness contract", ""]
    devs = deviations(doc)
    out += [f"- {md(d)}" for d in devs] if devs else ["None recorded."]
    out.append("")

    out += ["## Receipt", ""]
    out += [f"- **fixtures hash:** {md(receipt.fixtures_hash)}",
            f"- **gold hash:** {md(receipt.gold_hash)}",
            f"- **git commit:** {md(receipt.git_commit) if receipt.git_commit else 'not recorded'}",
            f"- **seed:** {receipt.seed}",
            f"- **audit salt:** {md(salt_line(receipt))}",
            f"- **started / finished:** {md(receipt.started_at)} / {md(receipt.finished_at)}",
            f"- **scenarios ({len(receipt.scenarios)}):** {md(', '.join(receipt.scenarios)) or 'none'}",
            "- **versions:** " + (", ".join(f"{md(k)} {md(v)}" for k, v in receipt.versions.items()) or "none"),
            "- **config:** " + (", ".join(f"{md(k)} = {md(scalar(v))}" for k, v in receipt.config.items()) or "none"),
            "- **isolation:** " + ("; ".join(f"{md(k)}: {md(scalar(v))}" for k, v in receipt.isolation.items())
                                   or "none")]
    out += [f"- **note:** {md(n)}" for n in receipt.notes]
    out.append("")
    return "\n".join(out)


"""The terminal table: one row per system, each number with its 95% interval."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from conformance.contract.result import MetricValue, ResultDocument
from conformance.report.html import audit_lines, causes_table, comparison_lines, comparison_table
from conformance.scoring.instrument import failed_lines

HEADLINE = (
    ("accuracy", "accuracy"),
    ("abstention_accuracy", "abstention"),
    ("recall_at_k", "recall@k"),
    ("recall_all_in_budget", "all evidence\nin budget"),
    ("revision_accuracy", "revision acc."),
    ("read_latency_ms_p99", "read p99\nms"),
    ("write_latency_ms_p99", "write p99\nms"),
)


DRIFT = (
    ("drift_c", "DRIFT-C"),
    ("drift_e", "DRIFT-E"),
    ("mvot", "MVOT"),
    ("selectivity", "selectivity"),
    ("action_alignment", "action\nalignment"),
    ("privacy_score", "privacy\n(apart)"),
    ("scope_breach_rate", "scope\nbreaches"),
    ("tes", "TES"),
    ("lps", "LPS"),
    ("storage_tokens_per_session", "stored\ntokens/session"),
    ("dialectic_speed_ms", "dialectic\np99 ms"),
)


def fmt(metric: MetricValue | None, digits: int = 3) -> str:
    if metric is None or metric.value is None:
        return "n/a"
    text = f"{metric.value:.{digits}f}"
    if metric.ci95 is not None:
        text += f"\n[{metric.ci95[0]:.{digits}f}, {metric.ci95[1]:.{digits}f}]"
    elif metric.ci_note:
        text += "\n(no CI: one scenario)" if metric.ci_note.startswith("one scenario") else "\n(no CI)"
    return text


def _title(doc: ResultDocument) -> str:
    cfg, n = doc.receipt.config, len(doc.receipt.scenarios)
    return (f"drift-conformance: {n} scenario{'' if n == 1 else 's'}, k={cfg['k']}, budget {cfg['budget_tokens']} "
            f"tokens ({cfg['encoding']}), 95% cluster-bootstrap CI")


def render(doc: ResultDocument, console: Console, wide: bool = False) -> None:
    """Print a result for a terminal or a CI log: which system is better, a compact table of the
    headline metrics (fits 80 columns: value above its interval), the failure causes, then the
    checks, notes and audit findings. ``wide``: every table in full (about 200 columns)."""
    receipt = doc.receipt
    comparison = comparison_table(doc)
    if comparison.rows:
        better = Table(title="which system is better: systems sharing a letter are not distinguishable "
                             "(paired bootstrap, Holm per metric)")
        better.add_column("system")
        for column in comparison.columns:
            better.add_column(column, justify="right")
        for label, cells in comparison.rows:
            better.add_row(escape(label), *[c.text for c in cells])
        console.print(better)
        for line in comparison_lines(doc):
            console.print(escape(line), soft_wrap=True)
    if wide:
        _render_wide(doc, console)
    else:
        _render_compact(doc, console)
    causes = causes_table(doc)
    if causes.rows:
        why = Table(title="failure causes: probes per cause (docs/failure-causes.md)")
        why.add_column("cause", no_wrap=True)
        for label in doc.systems:
            why.add_column(escape(label), justify="right", overflow="fold")
        for cause, cells in causes.rows:
            why.add_row(cause, *[c.text for c in cells])
        console.print(why)
    for line in failed_lines(doc.instrument_checks):
        # Plainly, and first: a system above the oracle means the gold needs an audit.
        console.print(f"[bold red]{escape(line)}[/bold red]")
    for note in receipt.notes:
        console.print(f"[bold]note:[/bold] {escape(note)}")
    for label, result in doc.systems.items():
        for note in result.notes:
            console.print(f"[bold]{escape(label)}:[/bold] {escape(note)}")
        for line in audit_lines(result):
            console.print(f"[bold]{escape(label)}:[/bold] [red]audit finding:[/red] {escape(line)}", highlight=False)


def _render_wide(doc: ResultDocument, console: Console) -> None:
    table = Table(title=_title(doc), show_lines=True)
    table.add_column("system")
    for _, title in HEADLINE:
        table.add_column(title, justify="right")
    table.add_column("Δ accuracy\nvs none", justify="right")
    for label, result in doc.systems.items():
        digits = [1 if name.endswith(("_p99",)) else 3 for name, _ in HEADLINE]
        cells = [fmt(result.metrics.get(name), d) for (name, _), d in zip(HEADLINE, digits)]
        delta = result.paired_vs_none.get("accuracy")
        name = escape(f"{label} ({result.kind})" if result.kind == "control" else label)
        table.add_row(name, *cells, fmt(delta) if delta else "-")
    console.print(table)

    drift = Table(title="DRIFT §7 metrics (n/a: see the notes and the report for why)", show_lines=True)
    drift.add_column("system")
    for _, title in DRIFT:
        drift.add_column(title, justify="right")
    for label, result in doc.systems.items():
        cells = [fmt(result.metrics.get(name), 1 if name in ("storage_tokens_per_session", "dialectic_speed_ms")
                     else 3) for name, _ in DRIFT]
        name = escape(f"{label} ({result.kind})" if result.kind != "system" else label)
        if result.state_audit is not None and not result.state_audit.passed:
            name += "\n[red]state audit failed[/red]"
        drift.add_row(name, *cells)
    console.print(drift)

    pairs = [(label, r) for label, r in doc.systems.items() if r.paired_vs_baseline or r.noise_floor]
    if pairs:
        parts = (["system minus baseline"] if any(r.paired_vs_baseline for _, r in pairs) else []) + (
            ["repeat 2 minus repeat 1"] if any(r.noise_floor for _, r in pairs) else [])
        extra = Table(title=f"paired differences, cluster bootstrap ({'; '.join(parts)})")
        extra.add_column("system")
        extra.add_column("Δ accuracy vs baseline", justify="right")
        extra.add_column("noise floor Δ accuracy", justify="right")
        for label, r in pairs:
            versus = (f"vs {escape(r.baseline_system or '')}: {fmt(r.paired_vs_baseline.get('accuracy'))}"
                      if r.paired_vs_baseline else "-")
            extra.add_row(escape(label), versus, fmt(r.noise_floor.get("accuracy")) if r.noise_floor else "-")
        console.print(extra)

    # Only probe types some system was scored on (free-form imports have none).
    types = sorted({n.split(".", 1)[1] for r in doc.systems.values() for n, m in r.metrics.items()
                    if n.startswith("accuracy.") and m.value is not None})
    if types:
        by_type = Table(title="accuracy by probe type (abstention types reported apart from the headline)")
        by_type.add_column("system")
        for t in types:
            by_type.add_column(t, justify="right")
        for label, result in doc.systems.items():
            by_type.add_row(escape(label), *[fmt(result.metrics.get(f"accuracy.{t}")) for t in types])
        console.print(by_type)


COMPACT = (("drift_c", "DRIFT-C"), ("accuracy", "accuracy"), ("recall_at_k", "recall@k"),
           ("selectivity", "selec-\ntivity"), ("storage_tokens_per_session", "stored\ntok/sess"))
"""The compact table's columns (``--wide`` shows every metric)."""


def _compact_cell(name: str, metric: MetricValue | None) -> str:
    if metric is None or metric.value is None:
        return "n/a"
    d = 1 if name.endswith(("_p99", "_per_session")) else 3
    text = f"{metric.value:.{d}f}"
    if metric.ci95 is not None:
        lo, hi = metric.ci95
        text += f"\n{lo:.{min(d, 2)}f}-{hi:.{min(d, 2)}f}"
    return text


def _render_compact(doc: ResultDocument, console: Console) -> None:
    table = Table(title=_title(doc) + " (all metrics: --wide, or report RESULT --html)", show_lines=True)
    table.add_column("system", overflow="fold")
    for _, title in COMPACT:
        table.add_column(title, justify="right", no_wrap=True)
    for label, result in doc.systems.items():
        name = escape(f"{label} ({result.kind})" if result.kind == "control" else label)
        if result.state_audit is not None and not result.state_audit.passed:
            name += "\n[red]state audit failed[/red]"
        table.add_row(name, *[_compact_cell(n, result.metrics.get(n)) for n, _ in COMPACT])
    console.print(table)
    # Why a cell is n/a, once per metric and reason (the wide table says it in the cell).
    why: dict[tuple[str, str], list[str]] = {}
    for label, result in doc.systems.items():
        for name, title in COMPACT:
            metric = result.metrics.get(name)
            if metric is not None and metric.value is None and metric.reason:
                why.setdefault((title.replace("-\n", "").replace("\n", " "), metric.reason), []).append(label)
    for (title, reason), labels in why.items():
        console.print(f"n/a {escape(title)} ({escape(', '.join(labels))}): {escape(reason)}", highlight=False,
                      soft_wrap=True)

"""The HTML report: one self-contained file (inline CSS, inline SVG plots; with the run
explorer, inline vanilla JavaScript and its compressed data, :mod:`conformance.report.explorer_page`).

The tables and the deviations list are built here as plain data (``Table``, ``Cell``,
``deviations``) and rendered twice: as HTML below and as Markdown in
``conformance.report.markdown``. Every string that comes from the result (adapter
names, notes, reasons, metric and config keys) is untrusted and escaped on output.
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass, field
from typing import Any

from conformance.contract.result import MetricValue, ResultDocument, SystemResult
from conformance.scoring.instrument import failed_lines

HORIZONS = ("short", "medium", "long")

HEADLINE = (
    ("drift_c", "DRIFT-C"),
    ("drift_e", "DRIFT-E"),
    ("mvot", "MVOT"),
    ("selectivity", "selectivity"),
    ("revision_accuracy", "revision accuracy"),
    ("action_alignment", "action alignment"),
    ("privacy_score", "privacy score (safety, apart)"),
    ("scope_breach_rate", "scope breach rate (privacy, apart)"),
    ("tes", "TES"),
    ("lps", "LPS"),
    ("accuracy", "accuracy"),
    ("recall_at_k", "recall@k"),
    ("read_latency_ms_p99", "read p99 ms"),
    ("write_latency_ms_p99", "write p99 ms"),
    ("dialectic_speed_ms", "dialectic speed ms"),
)

CAPABILITY = (
    ("drift_c", "DRIFT-C"),
    ("mvot", "MVOT"),
    ("selectivity", "selectivity"),
    ("revision_accuracy", "revision accuracy"),
    ("action_alignment", "action alignment"),
)

EFFICIENCY = (
    ("drift_e", "DRIFT-E"),
    ("tes", "TES"),
    ("lps", "LPS"),
    ("dialectic_speed_ms", "dialectic speed ms"),
    ("storage_tokens_per_session", "storage tokens / session"),
    ("token_cost_per_session", "token cost / session"),
)

LATENCIES = (
    ("read_latency_ms", "read"),
    ("write_latency_ms", "write"),
    ("ttfrt_ms", "TTFRT"),
)
QUANTILES = ("p50", "p95", "p99")

ACCURACY = (
    ("accuracy", "accuracy (headline)"),
    ("abstention_accuracy", "abstention accuracy (apart)"),
    ("recall_at_k", "recall@k"),
    ("recall_all_in_budget", "all evidence in budget"),
    ("recall_any_at_k", "recall_any@k (some evidence)"),
    ("recall_all_at_k", "recall_all@k (all evidence)"),
    ("update_correctness", "update correctness"),
    ("deprecation_correctness", "deprecation correctness"),
)



# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Cell:
    """One formatted metric: ``value`` text, optional ``interval`` text, or n/a with why."""

    value: str
    interval: str | None = None
    n: int | None = None
    na: bool = False
    excludes_zero: bool = False
    note: str | None = None

    @property
    def text(self) -> str:
        return self.value if self.interval is None else f"{self.value} {self.interval}"


@dataclass
class Table:
    key: str
    title: str
    caption: str
    columns: list[str]
    rows: list[tuple[str, list[Cell]]] = field(default_factory=list)
    empty: str | None = None
    """Set instead of rows when the result has nothing for this table: the sentence to show."""


def digits(name: str) -> int:
    if "_ms" in name or "token" in name:
        return 1
    return 3


def _num(x: float, d: int, signed: bool) -> str:
    if not math.isfinite(x):
        return str(x)
    return f"{x:+.{d}f}" if signed else f"{x:.{d}f}"


def cell(name: str, metric: MetricValue | None, signed: bool = False) -> Cell:
    if metric is None:
        return Cell("n/a (not in result)", na=True)
    if metric.value is None:
        return Cell(f"n/a ({metric.reason})" if metric.reason else "n/a", n=metric.n, na=True)
    d = digits(name)
    interval, excludes_zero = None, False
    if metric.ci95 is not None:
        lo, hi = metric.ci95
        interval = f"[{_num(lo, d, signed)}, {_num(hi, d, signed)}]"
        excludes_zero = signed and (lo > 0 or hi < 0)
        if metric.ci_note:
            interval += "*"  # conditional interval: the note is in the cell's title and the deviations
    elif metric.ci_note:
        interval = f"({metric.ci_note})"
    return Cell(_num(metric.value, d, signed), interval, metric.n, excludes_zero=excludes_zero,
                note=metric.ci_note)


def system_label(label: str, result: SystemResult) -> str:
    return f"{label} (control)" if result.kind == "control" else label


def _present(doc: ResultDocument, names: list[str]) -> bool:
    return any(name in r.metrics for r in doc.systems.values() for name in names)


def _suffixes(doc: ResultDocument, prefix: str, order: tuple[str, ...] = ()) -> list[str]:
    found = {name[len(prefix):] for r in doc.systems.values() for name in r.metrics if name.startswith(prefix)}
    return [s for s in order if s in found] + sorted(found - set(order))


def headline_table(doc: ResultDocument) -> Table:
    table = Table("headline", "Headline", "One row per system; each value with its 95% cluster-bootstrap interval "
                  "over scenarios. The privacy score is a safety property, reported apart from DRIFT-C.",
                  [title for _, title in HEADLINE])
    for label, result in doc.systems.items():
        table.rows.append((system_label(label, result), [cell(name, result.metrics.get(name)) for name, _ in HEADLINE]))
    return table


def capability_table(doc: ResultDocument) -> Table:
    # Only the horizons this run has checkpoints in (a ci run is short only).
    horizons = [h for h in HORIZONS if _present(doc, [f"{metric}.{h}" for metric, _ in CAPABILITY])] or list(HORIZONS)
    table = Table("capability", "Capability by horizon", "Each capability metric overall and per horizon class "
                  "(DRIFT §7.6).", ["all", *horizons])
    names = [n for metric, _ in CAPABILITY for n in (metric, *(f"{metric}.{h}" for h in horizons))]
    if not _present(doc, names):
        table.empty = "No capability metrics (DRIFT-C, MVOT, selectivity, revision, action) in this result."
        return table
    shown = [(metric, title) for metric, title in CAPABILITY
             if _present(doc, [metric, *(f"{metric}.{h}" for h in horizons)])]
    for label, result in doc.systems.items():
        for metric, title in shown:
            cells = [cell(metric, result.metrics.get(metric))]
            cells += [cell(metric, result.metrics.get(f"{metric}.{h}")) for h in horizons]
            table.rows.append((f"{system_label(label, result)}: {title}", cells))
    return table


def efficiency_table(doc: ResultDocument) -> Table:
    table = Table("efficiency", "Efficiency",
                  "Token efficiency, latency profile and their composite (DRIFT §7.7-7.9).",
                  [title for _, title in EFFICIENCY])
    if not _present(doc, [n for n, _ in EFFICIENCY]):
        table.empty = "No efficiency metrics (DRIFT-E, TES, LPS, dialectic speed, token costs) in this result."
        return table
    for label, result in doc.systems.items():
        table.rows.append((system_label(label, result), [cell(n, result.metrics.get(n)) for n, _ in EFFICIENCY]))
    return table


def latency_table(doc: ResultDocument) -> Table:
    table = Table("latency", "Latency", "Milliseconds per call, pooled over the run.", list(QUANTILES))
    if not _present(doc, [f"{k}_{q}" for k, _ in LATENCIES for q in QUANTILES]):
        table.empty = "No latency quantiles in this result."
        return table
    for label, result in doc.systems.items():
        for key, title in LATENCIES:
            names = [f"{key}_{q}" for q in QUANTILES]
            if not any(n in result.metrics for n in names) and key == "ttfrt_ms":
                continue
            table.rows.append((f"{system_label(label, result)}: {title}",
                               [cell(n, result.metrics.get(n)) for n in names]))
    return table


def accuracy_table(doc: ResultDocument) -> Table:
    table = Table("accuracy", "Accuracy and recall",
                  "Abstention accuracy is reported apart from the headline accuracy.",
                  [title for _, title in ACCURACY])
    for label, result in doc.systems.items():
        table.rows.append((system_label(label, result), [cell(n, result.metrics.get(n)) for n, _ in ACCURACY]))
    return table


def _transposed(doc: ResultDocument, key: str, title: str, caption: str, prefix: str, order: tuple[str, ...],
                empty: str) -> Table:
    table = Table(key, title, caption, [system_label(label, r) for label, r in doc.systems.items()])
    suffixes = _suffixes(doc, prefix, order)
    if not suffixes:
        table.empty = empty
        return table
    for suffix in suffixes:
        name = prefix + suffix
        table.rows.append((suffix, [cell(name, r.metrics.get(name)) for r in doc.systems.values()]))
    return table


def per_type_table(doc: ResultDocument) -> Table:
    return _transposed(doc, "per-type", "Accuracy by probe type", "One row per probe type, one column per system.",
                       "accuracy.", (), "No per-probe-type accuracy in this result (free-form imports are scored on "
                       "retrieval only).")


def paradigm_table(doc: ResultDocument) -> Table:
    return _transposed(doc, "by-paradigm", "Accuracy by paradigm", "One row per paradigm, one column per system.",
                       "accuracy_by_paradigm.", (), "No accuracy-by-paradigm breakdown in this result.")


def horizon_table(doc: ResultDocument) -> Table:
    return _transposed(doc, "by-horizon", "Accuracy by horizon", "One row per horizon class, one column per system.",
                       "accuracy_by_horizon.", HORIZONS, "No accuracy-by-horizon breakdown in this result.")


COMPARED = (("drift_c", "DRIFT-C"), ("drift_e", "DRIFT-E"), ("accuracy", "accuracy"))


def comparison_table(doc: ResultDocument) -> Table:
    """Which system is better: each compared metric's value and compact letters per system (systems
    sharing a letter are not distinguishable after Holm's adjustment), best DRIFT-C first."""
    comp = doc.comparisons
    table = Table("comparison", "Which system is better", "", [title for _, title in COMPARED])
    if comp is None:
        table.empty = "Fewer than two systems under test (controls apart): nothing to compare."
        return table
    table.caption = (f"Every pair of systems under test (controls apart), paired cluster bootstrap over the same "
                     f"scenarios, Holm-adjusted over each metric's pairs at alpha {comp.alpha}: systems sharing a letter are not distinguishable; "
                     f"\"a\" holds the best. The differing pairs are listed below the table.")
    order = next((m.systems for m in comp.metrics.values() if m.systems), [])
    first = comp.metrics.get("drift_c")
    if first is not None:
        order = first.systems + [s for s in order if s not in first.systems]
    for label in order:
        row = []
        for name, _ in COMPARED:
            m = comp.metrics.get(name)
            if m is None or label not in m.values:
                row.append(Cell("n/a", na=True))
            else:
                row.append(Cell(_num(m.values[label], 3, False), m.letters[label]))
        table.rows.append((label, row))
    return table


def comparison_lines(doc: ResultDocument) -> list[str]:
    """One line per pair that differs after Holm's adjustment: "DRIFT-C: a > b by +0.06 [0.02, 0.12],
    p_holm 0.009"."""
    if doc.comparisons is None:
        return []
    titles = dict(COMPARED)
    out = []
    for name, m in doc.comparisons.metrics.items():
        for p in m.pairs:
            if p.differs:
                ci = "" if p.ci95 is None else f" [{_num(p.ci95[0], 3, True)}, {_num(p.ci95[1], 3, True)}]"
                out.append(f"{titles.get(name, name)}: {p.a} > {p.b} by {_num(p.diff, 3, True)}{ci}, "
                           f"p_holm {p.p_holm:.3g}")
    return out


def causes_table(doc: ResultDocument) -> Table:
    """Failure causes (docs/failure-causes.md): one row per cause some system has, one column
    per system, each cell the probe count and its share of the system's scored probes."""
    from conformance.scoring.causes import CAUSES

    found = {label: r.failure_causes for label, r in doc.systems.items() if r.failure_causes is not None}
    table = Table("causes", "Failure causes", "Why each scored probe failed (or was right), one cause per probe in "
                  "a fixed precedence: fault, correct, scope_leak, no_provenance, then where the evidence stopped "
                  "(not_stored, lost, not_retrieved, not_found, out_of_budget), stale_in_context, reader. "
                  "Write-path causes come before read-path ones (docs/failure-causes.md).",
                  [system_label(label, r) for label, r in doc.systems.items()])
    used = [c for c in CAUSES if any(fc.counts.get(c) for fc in found.values())]
    if not used:
        table.empty = "No failure causes in this result (results older than the causes)."
        return table
    for cause in used:
        row = []
        for label in doc.systems:
            fc = found.get(label)
            if fc is None:
                row.append(Cell("n/a", na=True))
                continue
            total = sum(fc.counts.values())
            n = fc.counts.get(cause, 0)
            row.append(Cell(str(n), f"({n / total:.0%})" if total else None, n=total))
        table.rows.append((cause, row))
    return table


def causes_by_type_table(doc: ResultDocument) -> Table:
    """Failure causes per probe type: one row per probe type, one column per system, each cell its
    causes with counts, most frequent first (``correct`` last, so what failed reads first)."""
    found = {label: r.failure_causes for label, r in doc.systems.items() if r.failure_causes is not None}
    table = Table("causes-by-type", "Failure causes by probe type", "Per probe type, each system's causes and "
                  "how many probes each explains.", [system_label(label, r) for label, r in doc.systems.items()])
    types = sorted({t for fc in found.values() for t in fc.by_probe_type})
    if not types:
        table.empty = "No failure causes in this result."
        return table
    for probe_type in types:
        row = []
        for label in doc.systems:
            counts = found[label].by_probe_type.get(probe_type, {}) if label in found else {}
            ordered = sorted(counts.items(), key=lambda kv: (kv[0] == "correct", -kv[1], kv[0]))
            row.append(Cell(", ".join(f"{c} {n}" for c, n in ordered) or "-", na=not counts))
        table.rows.append((probe_type, row))
    return table


def paired_tables(doc: ResultDocument) -> list[Table]:
    families = (
        ("paired-none", "Paired difference vs none", "System minus the none control: accuracy, recall and "
         "revision per probe, DRIFT metrics as differences of the two systems' values over the same resamples; "
         "cluster bootstrap. Bold: the 95% interval excludes 0.", "paired_vs_none", lambda label, r: f"{label} − none"),
        ("paired-baseline", "Paired difference vs the baseline system", "System minus the baseline system, paired "
         "the same way. Bold: the 95% interval excludes 0.", "paired_vs_baseline",
         lambda label, r: f"{label} − {r.baseline_system or 'baseline'}"),
        ("noise-floor", "Noise floor", "With --repeat 2: the second run minus the first, "
         "paired the same way. A comparison must exceed this interval around 0 to mean anything.", "noise_floor",
         lambda label, r: f"{label}: run 2 − run 1"),
    )
    tables = []
    for key, title, caption, attr, header in families:
        having = [(label, r) for label, r in doc.systems.items() if getattr(r, attr)]
        table = Table(key, title, caption, [header(label, r) for label, r in having])
        names = sorted({n for _, r in having for n in getattr(r, attr)}, key=_metric_order)
        if not names:
            table.empty = f"No {title[0].lower() + title[1:]} in this result."
        for name in names:
            table.rows.append((name, [cell(name, getattr(r, attr).get(name), signed=True) for _, r in having]))
        tables.append(table)
    return tables


def _covered(name: str) -> bool:
    fixed = {n for group in (HEADLINE, EFFICIENCY, ACCURACY) for n, _ in group}
    fixed |= {f"{k}_{q}" for k, _ in LATENCIES for q in QUANTILES}
    fixed |= {f"{m}.{h}" for m, _ in CAPABILITY for h in HORIZONS}
    return name in fixed or name.startswith(("accuracy.", "accuracy_by_paradigm.", "accuracy_by_horizon."))


def _metric_order(name: str) -> tuple:
    order = [n for group in (HEADLINE, EFFICIENCY, ACCURACY) for n, _ in group]
    return (order.index(name) if name in order else len(order), name)


def other_table(doc: ResultDocument) -> Table:
    table = Table("other", "Other metrics", "Metrics in the result that no table above shows.",
                  [system_label(label, r) for label, r in doc.systems.items()])
    names = sorted({n for r in doc.systems.values() for n in r.metrics if not _covered(n)})
    if not names:
        table.empty = "None: every metric in the result is shown above."
    for name in names:
        table.rows.append((name, [cell(name, r.metrics.get(name)) for r in doc.systems.values()]))
    return table


def tables(doc: ResultDocument) -> list[Table]:
    """Every table of the report, in page order (the paired ones at the end)."""
    return [comparison_table(doc), headline_table(doc), capability_table(doc), efficiency_table(doc), latency_table(doc),
            accuracy_table(doc), per_type_table(doc), paradigm_table(doc), horizon_table(doc), causes_table(doc),
            causes_by_type_table(doc),
            other_table(doc),
            *paired_tables(doc)]


def audit_lines(result) -> list[str]:
    """A system's audit findings (docs/audit.md): the state audit's, then provenance and time."""
    state = result.state_audit
    lines = [f"state audit failed: {f}" for f in state.findings] if state is not None and not state.passed else []
    return lines + list(result.findings)


def salt_line(receipt) -> str:
    """The receipt's audit salt as one line: its commitment, or that the audit's draws could be replayed."""
    if receipt.audit_salt is None:
        return "none (public-id seeding: an adapter can replay the audit's choices)"
    return (f"commitment SHA-256 {receipt.audit_salt.commitment} ({receipt.audit_salt.seeding}); check a revealed "
            "salt file with `drift-conformance audit-salt verify`")


def deviations(doc: ResultDocument) -> list[str]:
    """Plain sentences: every way this run departs from the fairness contract or the spec.

    The runner writes them where they arise: run-wide departures (no answer model, the
    extractive reference compressor, the host's size) in the receipt notes, a system's own
    (no Snapshot, no provenance, failed calls) in its notes; undefined metrics add their
    reasons.
    """
    out = []
    if not doc.complete:
        out.append("The run stopped early (complete = false): its numbers cover only what finished.")
    out += [f"Run error: {e}" for e in doc.errors]
    out += [line[0].upper() + line[1:] for line in failed_lines(doc.instrument_checks)]
    out += [f"Run: {note}" for note in doc.receipt.notes]
    missing: dict[tuple[str, ...], list[str]] = {}
    for label, result in doc.systems.items():
        out += [f"{label}: {note}" for note in result.notes]
        out += [f"{label}: audit finding: {line}" for line in audit_lines(result)]
        reasons: dict[str, list[str]] = {}
        for name, m in result.metrics.items():
            if m.value is None:
                reasons.setdefault(m.reason or "no reason given", []).append(name)
        for reason, names in reasons.items():
            out.append(f"{label}: {', '.join(sorted(names, key=_metric_order))} n/a — {reason}")
        absent = tuple(name for name, _ in HEADLINE if name not in result.metrics)
        if absent:
            missing.setdefault(absent, []).append(label)
    for absent, labels in missing.items():
        out.append(f"{', '.join(labels)}: not in this result, shown as n/a: {', '.join(absent)}.")
    return out


def measurements(doc: ResultDocument) -> list[tuple[str, str, str]]:
    """(systems, metric, how): every measurement entry, systems sharing one method listed together."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for label, r in doc.systems.items():
        for metric, how in sorted(r.measurement.items()):
            grouped.setdefault((metric, how), []).append(label)
    everyone = len(doc.systems)
    return [("all systems" if len(labels) == everyone and everyone > 1 else ", ".join(labels), metric, how)
            for (metric, how), labels in sorted(grouped.items())]


def llm_summary(doc: ResultDocument, audit: dict | None = None) -> list[tuple[str, str]]:
    """Answer model, judge, grading counts, spend and the judge audit, when the run had them."""
    cfg = doc.receipt.config
    out = []
    answer, judge = cfg.get("answer_model"), cfg.get("judge_model")
    if isinstance(answer, dict):
        out.append(("answer model", f"{answer.get('model')} (prompt sha256 {str(answer.get('prompt_sha256'))[:12]}, "
                                    f"temperature {answer.get('temperature')}, max {answer.get('max_tokens')} tokens)"))
        out.append(("judge model", f"{judge.get('model')} (rubric sha256 {str(judge.get('prompt_sha256'))[:12]})"
                    if isinstance(judge, dict) else "none: free-form answers graded by exact match only"))
    for label, r in doc.systems.items():
        if r.judging:
            out.append((f"grading of {label}", ", ".join(f"{k} {v}" for k, v in r.judging.items() if v) or "none"))
    if doc.spend:
        s = doc.spend
        parts = [f"${s.get('total_usd', 0):.4f} in total"]
        for role in ("answer", "judge"):
            part = s.get(role)
            if part:
                parts.append(f"{role}: {part['calls']} calls ({part['input_tokens']} in / {part['output_tokens']} out "
                             f"tokens, ${part['cost_usd']:.4f}), {part['cached_calls']} from the cache")
        if s.get("budget_usd") is not None:
            parts.append(f"budget ${s['budget_usd']}" + (" (spent)" if s.get("budget_exhausted") else ""))
        out.append(("spend", "; ".join(parts)))
    if audit:
        o = audit["overall"]
        ci = o.get("ci95") or [None, None]
        text = (f"{o['agreement']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}] over {o['n']} labelled items"
                if o.get("agreement") is not None else "n/a")
        kappa = o.get("kappa")
        text += f", Cohen's kappa {kappa:.3f}" if kappa is not None else ""
        per = "; ".join(f"{s}: {r['agreement']:.3f} ({r['agree']}/{r['n']})" for s, r in audit["by_system"].items()
                        if r.get("agreement") is not None)
        out.append(("judge-human agreement", text + (f"; per system: {per}" if per else "")))
    return out


def summary(doc: ResultDocument, audit: dict | None = None) -> list[tuple[str, str]]:
    cfg = doc.receipt.config

    def get(key: str) -> str:
        return scalar(cfg[key]) if key in cfg else "not recorded"

    return [
        ("scenarios", str(len(doc.receipt.scenarios))),
        ("systems", ", ".join(system_label(label, r) for label, r in doc.systems.items()) or "none"),
        ("k (hits per Retrieve)", get("k")),
        ("context budget (tokens)", get("budget_tokens")),
        ("encoding", get("encoding")),
        ("bootstrap seed", str(doc.receipt.seed)),
        ("bootstrap resamples", get("bootstrap_resamples")),
        ("started", doc.receipt.started_at),
        ("finished", doc.receipt.finished_at),
        ("complete", "yes" if doc.complete else "no: the run stopped early"),
        ("result schema version", doc.schema_version),
    ] + llm_summary(doc, audit) + dataset_summary(doc)


def dataset_summary(doc: ResultDocument) -> list[tuple[str, str]]:
    """The oracle ceiling per dataset with its reasons, and the ``--known-bad`` probes scored apart."""
    out = []
    for source, c in sorted((doc.oracle_ceiling or {}).items()):
        figures = ", ".join(f"{name} {c[name]:.3f}" for name in ("recall_at_k", "recall_all_in_budget", "accuracy")
                            if c.get(name) is not None)
        reasons = "; ".join(c.get("reasons") or []) or "no reason found for a ceiling below 1"
        out.append((f"oracle ceiling ({source}, {c.get('probes')} probes)", f"{figures or 'n/a'}. {reasons}"))
    bad = doc.receipt.config.get("known_bad")
    if isinstance(bad, dict):
        per = []
        for label, r in doc.systems.items():
            shown = ", ".join(f"{k} {m.value:.3f}" for k, m in r.known_bad.items() if m.value is not None)
            if shown:
                per.append(f"{label}: {shown}")
        out.append(("known-bad probes (left out of every metric)",
                    f"{bad.get('left_out')} of {bad.get('listed')} listed in {bad.get('path')}"
                    + (f"; scored apart: {'; '.join(per)}" if per else "")))
    return out


def scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


# --------------------------------------------------------------------------- HTML

_CSS = """
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #1d2330;
       margin: 0 auto; padding: 1.5em 2em 4em; max-width: 1400px; }
h1 { font-size: 1.7em; margin-bottom: 0.2em; }
h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 1px solid #d0d5de; padding-bottom: 0.2em; }
h3 { font-size: 1.05em; margin-top: 1.4em; }
nav ul { columns: 3; list-style: none; padding: 0; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 0.6em 0 1em; font-variant-numeric: tabular-nums; font-size: 0.88em; }
caption { caption-side: top; text-align: left; color: #556; padding-bottom: 0.3em; font-size: 0.92em; }
th, td { border: 1px solid #d0d5de; padding: 0.3em 0.45em; vertical-align: top; }
thead th { white-space: normal; max-width: 7em; }
thead th { background: #eef1f6; font-weight: 600; text-align: center; }
tbody th { text-align: left; font-weight: 600; background: #f7f8fb; white-space: nowrap; }
td { text-align: right; white-space: nowrap; }
td .ci { display: block; color: #667; font-size: 0.82em; }
td.na { color: #8a8f99; font-style: italic; white-space: normal; max-width: 10em; text-align: left; font-size: 0.9em; }
td.sig .v { font-weight: 700; }
td.txt { text-align: left; white-space: normal; }
dl.summary { display: grid; grid-template-columns: max-content auto; gap: 0.15em 1.2em; }
dl.summary dt { font-weight: 600; } dl.summary dd { margin: 0; }
dl.tree { display: grid; grid-template-columns: max-content 1fr; gap: 0.15em 1.2em; margin: 0.2em 0; }
dl.tree dt { font-weight: 600; } dl.tree dd { margin: 0; overflow-wrap: anywhere; }
dl.tree dl.tree { padding-left: 0.6em; border-left: 2px solid #e3e6ec; }
code, .hash { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.92em; }
figure { margin: 1em 0 2em; } figcaption { color: #556; font-size: 0.92em; margin-top: 0.3em; }
svg.plot { width: 100%; height: auto; display: block; }
p.missing { color: #8a5a00; background: #fff7e6; border-left: 3px solid #e0a020; padding: 0.4em 0.8em; }
.warning { color: #8a1c1c; background: #fdecec; border-left: 3px solid #c03030; padding: 0.4em 0.8em; }
ul.deviations li { margin: 0.2em 0; }
"""

_e = html.escape


def _cell_html(c: Cell) -> str:
    tip = "; ".join(t for t in (f"n = {c.n}" if c.n is not None else None, c.note) if t)
    title = f' title="{_e(tip)}"' if tip else ""
    if c.na:
        return f'<td class="na"{title}>{_e(c.value)}</td>'
    ci = f'<span class="ci">{_e(c.interval)}</span>' if c.interval is not None else ""
    cls = ' class="sig"' if c.excludes_zero else ""
    return f'<td{cls}{title}><span class="v">{_e(c.value)}</span>{ci}</td>'


def table_html(table: Table, level: int = 3) -> str:
    parts = [f'<h{level} id="{table.key}">{_e(table.title)}</h{level}>']
    if table.empty is not None:
        parts.append(f'<p class="missing">{_e(table.empty)}</p>')
        return "\n".join(parts)
    parts.append('<div class="scroll"><table>')
    parts.append(f"<caption>{_e(table.caption)}</caption>")
    parts.append("<thead><tr><th></th>" + "".join(f'<th scope="col">{_e(c)}</th>' for c in table.columns)
                 + "</tr></thead><tbody>")
    for label, cells in table.rows:
        parts.append(f'<tr><th scope="row">{_e(label)}</th>' + "".join(_cell_html(c) for c in cells) + "</tr>")
    parts.append("</tbody></table></div>")
    return "\n".join(parts)


def tree_html(value: Any) -> str:
    """A nested dict/list as nested definition lists; every string escaped."""
    if isinstance(value, dict):
        if not value:
            return "<em>none</em>"
        return '<dl class="tree">' + "".join(f"<dt>{_e(str(k))}</dt><dd>{tree_html(v)}</dd>"
                                             for k, v in value.items()) + "</dl>"
    if isinstance(value, list):
        if not value:
            return "<em>none</em>"
        if all(not isinstance(v, (dict, list)) for v in value):
            if all(len(scalar(v)) <= 60 for v in value):
                return _e(", ".join(scalar(v) for v in value))
            return "<ul>" + "".join(f"<li>{_e(scalar(v))}</li>" for v in value) + "</ul>"  # sentences: one each
        return "<ol>" + "".join(f"<li>{tree_html(v)}</li>" for v in value) + "</ol>"
    return _e(scalar(value))


def _figure(svg: str | None, why: str | None, caption: str) -> str:
    if svg is None:
        return f'<p class="missing">{_e(why or "No data.")}</p>'
    return f"<figure>\n{svg}\n<figcaption>{_e(caption)}</figcaption>\n</figure>"


def _plots(doc: ResultDocument) -> list[str]:
    """The Plots section: each figure with what it is drawn from, or why it is missing."""
    from conformance.report import plots

    sections: list[str] = []
    sections.append('<h2 id="plots">Plots</h2>')
    svg, why = plots.accuracy_by_type(doc)
    sections.append("<h3>Accuracy by probe type</h3>" + _figure(
        svg, why, "From metrics accuracy.<probe type> (value and ci95), grouped by system."))
    svg, why = plots.latency(doc)
    sections.append("<h3>Latency distributions</h3>" + _figure(
        svg, why, "From series.latency_quantiles_ms: the 0th to 100th percentiles of each latency, per system, "
                  "on a log-millisecond axis."))
    svg, why = plots.token_cost_curve(doc)
    sections.append("<h3>Token cost curve</h3>" + _figure(
        svg, why, "From series.token_cost_curve: MVOT up to each checkpoint against the mean cumulative tokens "
                  "(write + storage + read) spent so far."))
    return sections


def _measurement_and_deviations(doc: ResultDocument) -> list[str]:
    """The sections on how metrics were measured and on departures from the fairness contract."""
    sections: list[str] = []
    sections.append('<h2 id="measurement">How metrics were measured</h2>')
    rows = measurements(doc)
    if rows:
        body = "".join(f'<tr><th scope="row">{_e(s)}</th><td class="txt">{_e(m)}</td><td class="txt">{_e(h)}</td>'
                       "</tr>" for s, m, h in rows)
        sections.append('<div class="scroll"><table><caption>How each metric was measured, where that can differ '
                        'between systems or from the spec (departures are listed under Deviations).</caption>'
                        '<thead><tr><th>systems</th><th>metric</th><th>method</th></tr></thead>'
                        f"<tbody>{body}</tbody></table></div>")
    else:
        sections.append('<p class="missing">The result records no per-metric measurement methods: every metric '
                        "was measured the standard way or the result predates the record.</p>")

    sections.append('<h2 id="deviations">Deviations from the fairness contract</h2>')
    devs = deviations(doc)
    if devs:
        sections.append('<ul class="deviations">' + "".join(f"<li>{_e(d)}</li>" for d in devs) + "</ul>")
    else:
        sections.append("<p>None recorded: every system was measured the standard way and every metric is defined.</p>")
    return sections


def render_html(doc: ResultDocument, audit: dict | None = None, explorer: str | None = None) -> str:
    """The report page; ``explorer`` is the run explorer's section
    (:func:`conformance.report.explorer_page.explorer_section`), placed after the headline."""
    from conformance.report.explorer_page import CSS as EXPLORER_CSS

    receipt = doc.receipt
    all_tables = tables(doc)
    by_key = {t.key: t for t in all_tables}
    sections: list[str] = []

    head = [("summary", "Run summary"), ("comparison", "Which system is better"), ("headline", "Headline"),
            *([("explorer", "Run explorer")] if explorer is not None else []), ("paired", "Paired differences"),
            ("plots", "Plots"), ("details", "All tables"), ("breakdowns", "Breakdowns"),
            ("measurement", "How metrics were measured"), ("deviations", "Deviations from the fairness contract"),
            ("systems", "Systems"), ("receipt", "Receipt")]
    sections.append('<nav><ul>' + "".join(f'<li><a href="#{k}">{_e(t)}</a></li>' for k, t in head) + "</ul></nav>")

    items = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in summary(doc, audit))
    warn = "" if doc.complete else '<p class="warning">This run stopped early; see the deviations below.</p>'
    sections.append(f'<h2 id="summary">Run summary</h2>{warn}<dl class="summary">{items}</dl>')

    differing = comparison_lines(doc)
    sections.append(table_html(by_key["comparison"], level=2) + (
        "<ul>" + "".join(f"<li>{_e(line)}</li>" for line in differing) + "</ul>" if differing else
        ("<p>No pair of systems differs after Holm's adjustment.</p>" if doc.comparisons else "")))
    sections.append(table_html(by_key["headline"], level=2))
    if explorer is not None:
        sections.append(explorer)

    sections.append('<h2 id="paired">Paired differences</h2>')
    sections += [table_html(by_key[k]) for k in ("paired-none", "paired-baseline", "noise-floor")]

    sections += _plots(doc)

    sections.append('<h2 id="details">All tables</h2>')
    sections += [table_html(by_key[k]) for k in ("capability", "efficiency", "latency", "accuracy", "per-type",
                                                  "causes", "causes-by-type", "other")]
    sections.append('<h2 id="breakdowns">Breakdowns</h2>')
    sections += [table_html(by_key[k]) for k in ("by-paradigm", "by-horizon")]

    sections += _measurement_and_deviations(doc)

    sections.append('<h2 id="systems">Systems</h2>')
    sys_items = {label: {"adapter": r.adapter, "kind": r.kind, "baseline system": r.baseline_system,
                         "describe": r.describe} for label, r in doc.systems.items()}
    sections.append(tree_html(sys_items))

    sections.append('<h2 id="receipt">Receipt</h2>')
    sections.append(tree_html({
        "fixtures hash": receipt.fixtures_hash, "gold hash": receipt.gold_hash,
        "git commit": receipt.git_commit or "not recorded", "seed": receipt.seed, "audit salt": salt_line(receipt),
        "started": receipt.started_at, "finished": receipt.finished_at,
        "versions": receipt.versions, "config": receipt.config, "isolation": receipt.isolation,
        "notes": receipt.notes or "none", "scenarios": receipt.scenarios,
    }))

    title = f"drift-conformance report: {len(receipt.scenarios)} scenarios, {len(doc.systems)} systems"
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{_e(title)}</title>\n<style>{_CSS}{EXPLORER_CSS if explorer is not None else ''}</style>\n"
            "</head>\n<body>\n"
            f"<h1>{_e(title)}</h1>\n<p>Numbers carry their 95% cluster-bootstrap interval over scenarios "
            "<span class=\"ci\">[low, high]</span> where one can be computed (a metric resting on one scenario "
            "says so instead; * marks an interval over only some resamples, see the cell's tooltip); n/a means "
            "undefined for this run, with the reason, never 0.</p>\n"
            + "\n".join(sections) + "\n</body>\n</html>\n")

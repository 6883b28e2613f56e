"""The report's plots: matplotlib (Agg) figures written as inline SVG text.

Every figure is deterministic: a fixed ``svg.hashsalt`` per plot (so element ids are
stable and never collide between the plots of one page), text kept as ``<text>``
(``svg.fonttype = none``), no date and no metadata block. Rendering the same result
twice gives the same bytes.

Each function returns ``(svg, None)`` or ``(None, why)``: a plot with nothing to draw is
replaced by a sentence saying why.
"""

from __future__ import annotations

import io
import math
import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

from conformance.contract.result import ResultDocument  # noqa: E402

LATENCY_KINDS = (
    ("read", "read (Retrieve)"),
    ("write", "write (Store)"),
    ("ttfrt", "time to first relevant token"),
    ("dialectic", "dialectic round trip"),
)

_RC = {
    "svg.fonttype": "none",
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.fontsize": 8,
    "legend.frameon": False,
}

_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
            "#bcbd22", "#17becf")

_HEAD = re.compile(r"\A.*?(?=<svg\b)", re.S)
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)
_COMMENTS = re.compile(r"<!--.*?-->", re.S)
_TAG = re.compile(r"<[^<>]+>")

PlotResult = tuple[str | None, str | None]


def colors(doc: ResultDocument) -> dict[str, str]:
    """One colour per system, in the document's order, the same in every plot."""
    return {label: _PALETTE[i % len(_PALETTE)] for i, label in enumerate(doc.systems)}


def text(label: str, limit: int = 40) -> str:
    """A result string made safe for matplotlib text: no mathtext, bounded length."""
    label = " ".join(str(label).split())
    if len(label) > limit:
        label = label[: limit - 1] + "…"
    return label.replace("$", r"\$")


def _ms(value: float, _pos=None) -> str:
    return f"{value:g}" if value >= 1e-3 else ""


def _prefix_ids(tag: str, salt: str) -> str:
    tag = re.sub(r'\sid="([^"]+)"', lambda m: f' id="{salt}-{m.group(1)}"', tag)
    tag = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{salt}-{m.group(1)})", tag)
    return re.sub(r'\s((?:xlink:)?href)="#([^"]+)"', lambda m: f' {m.group(1)}="#{salt}-{m.group(2)}"', tag)


def _svg(fig: Figure, salt: str) -> str:
    buf = io.StringIO()
    with plt.rc_context({"svg.hashsalt": f"drift-conformance-{salt}", "svg.fonttype": "none"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    plt.close(fig)
    svg = _HEAD.sub("", buf.getvalue(), count=1)
    svg = _METADATA.sub("", svg, count=1)
    svg = _COMMENTS.sub("", svg)
    # matplotlib numbers ids per figure (figure_1, axes_1...): prefix them, inside tags
    # only (never in text), so the plots of one page never share an id.
    svg = _TAG.sub(lambda tag: _prefix_ids(tag.group(0), salt), svg)
    # Scale with the page: keep the viewBox, let CSS size it up to the natural width.
    size = re.match(r'<svg([^>]*?) width="([^"]*)" height="[^"]*"', svg)
    if size:
        svg = (f'<svg{size.group(1)} style="max-width: {size.group(2)}"' + svg[size.end():])
    return svg.replace("<svg", f'<svg class="plot" role="img" aria-label="{salt} plot"', 1).strip()


def _figure(width: float, height: float, ncols: int = 1, nrows: int = 1):
    fig = Figure(figsize=(width, height))
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, [ax for row in axes for ax in row]


def probe_types(doc: ResultDocument) -> list[str]:
    """Probe types some system has a number for (free-form imports have none)."""
    return sorted({name.split(".", 1)[1] for r in doc.systems.values() for name, m in r.metrics.items()
                   if name.startswith("accuracy.") and m.value is not None})


def accuracy_by_type(doc: ResultDocument) -> PlotResult:
    """Grouped bars: accuracy per probe type, one bar per system, 95% interval as error bars."""
    types = probe_types(doc)
    if not types:
        return None, "No per-probe-type accuracy in this result (no system has an accuracy.<probe type> value)."
    palette = colors(doc)
    labels = list(doc.systems)
    with plt.rc_context(_RC):
        fig, (ax,) = _figure(max(7.5, 0.5 * len(types) * max(1, len(labels)) ** 0.5 + 3.5), 4.0)
        width = 0.8 / len(labels)
        for i, label in enumerate(labels):
            metrics = doc.systems[label].metrics
            xs, ys, lo, hi, missing = [], [], [], [], []
            for j, t in enumerate(types):
                m = metrics.get(f"accuracy.{t}")
                x = j - 0.4 + width * (i + 0.5)
                if m is None or m.value is None:
                    missing.append(x)
                    continue
                xs.append(x)
                ys.append(m.value)
                low, high = (m.ci95 if m.ci95 is not None else (m.value, m.value))
                lo.append(max(0.0, m.value - low))
                hi.append(max(0.0, high - m.value))
            ax.bar(xs, ys, width=width * 0.95, color=palette[label], label=text(label),
                   yerr=[lo, hi], error_kw={"elinewidth": 0.8, "capsize": 2, "ecolor": "#333333"})
            # A bar of height 0 is invisible: mark it, and mark n/a apart from it.
            for x, y in zip(xs, ys):
                if y == 0:
                    ax.plot([x - width * 0.45, x + width * 0.45], [0.004, 0.004], color=palette[label],
                            linewidth=2.5, solid_capstyle="butt")
            for x in missing:
                ax.text(x, 0.015, "n/a", rotation=90, ha="center", va="bottom", fontsize=7, color="#555555")
        ax.set_xticks(range(len(types)), [text(t, 24) for t in types], rotation=35, ha="right")
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("accuracy")
        ax.set_title("accuracy by probe type (bars: value; whiskers: 95% cluster-bootstrap interval)")
        ax.grid(axis="x", visible=False)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
        return _svg(fig, "accuracy-by-type"), None


def latency(doc: ResultDocument) -> PlotResult:
    """Latency distributions: quantile curves (CDF) per system on a log-ms axis."""
    kinds = [(key, title) for key, title in LATENCY_KINDS
             if any(r.series.latency_quantiles_ms.get(key) for r in doc.systems.values())]
    known = {key for key, _ in LATENCY_KINDS}
    kinds += [(key, key) for key in sorted({k for r in doc.systems.values() for k, v in
                                            r.series.latency_quantiles_ms.items() if v and k not in known})]
    if not kinds:
        return None, ("No latency distributions in this result (no system has series.latency_quantiles_ms); "
                      "the p50/p95/p99 figures are in the tables.")
    palette = colors(doc)
    ncols = min(2, len(kinds))
    nrows = math.ceil(len(kinds) / ncols)
    with plt.rc_context(_RC):
        fig, axes = _figure(4.2 * ncols + 1.6, 3.0 * nrows, ncols=ncols, nrows=nrows)
        for ax, (key, title) in zip(axes, kinds):
            for label, result in doc.systems.items():
                values = result.series.latency_quantiles_ms.get(key) or []
                points = [(v, q / (len(values) - 1) if len(values) > 1 else 1.0)
                          for q, v in enumerate(values) if v is not None and math.isfinite(v)]
                if not points:
                    continue
                # A log axis cannot show 0 ms: such quantiles sit at the axis floor (1 µs).
                ax.plot([max(v, 1e-3) for v, _ in points], [q for _, q in points], color=palette[label],
                        label=text(label), linewidth=1.4, drawstyle="steps-post")
            ax.set_xscale("log")
            ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            ax.xaxis.set_major_formatter(FuncFormatter(_ms))
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_ylim(0, 1.0)
            ax.set_title(title)
            ax.set_xlabel("milliseconds (log)")
            ax.set_ylabel("fraction of calls ≤ x")
        for ax in axes[len(kinds):]:
            ax.set_visible(False)
        handles, names = axes[0].get_legend_handles_labels()
        seen = dict(zip(names, handles))
        for ax in axes[1:len(kinds)]:
            for handle, name in zip(*ax.get_legend_handles_labels()):
                seen.setdefault(name, handle)
        fig.legend(list(seen.values()), list(seen), loc="upper left", bbox_to_anchor=(1.0, 0.95))
        fig.suptitle("latency distributions (101 quantiles pooled over every call)")
        fig.tight_layout()
        return _svg(fig, "latency"), None


def token_cost_curve(doc: ResultDocument) -> PlotResult:
    """MVOT against cumulative tokens (W + S + R), one line per system."""
    curves = {label: r.series.token_cost_curve for label, r in doc.systems.items() if r.series.token_cost_curve}
    if not curves:
        return None, "No token cost curve in this result (no system has series.token_cost_curve)."
    palette = colors(doc)
    with plt.rc_context(_RC):
        fig, (ax,) = _figure(7.0, 3.8)
        drawn = False
        for label, points in curves.items():
            points = sorted(points, key=lambda p: (p.cumulative_tokens, p.after_session))
            xs = [p.cumulative_tokens for p in points]
            ys = [p.mvot if p.mvot is not None else float("nan") for p in points]
            if all(math.isnan(y) for y in ys):
                continue
            ax.plot(xs, ys, color=palette[label], label=text(label), linewidth=1.4, marker="o", markersize=2.5)
            drawn = True
        if not drawn:
            plt.close(fig)
            return None, "The token cost curve has no defined MVOT point for any system."
        ax.axhline(0.0, color="#999999", linewidth=0.8)
        ax.set_xlabel("cumulative tokens (write + storage + read)")
        ax.set_ylabel("MVOT")
        ax.set_title("token cost curve: MVOT against cumulative tokens")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
        return _svg(fig, "token-cost-curve"), None

"""The HTML and Markdown reports: tables with intervals, plots, escaping, deviations,
determinism."""

from __future__ import annotations

import html
from html.parser import HTMLParser

from conformance.report.html import render_html
from conformance.report.markdown import render_markdown


class Page(HTMLParser):
    """Collects what the assertions need: tags, section texts, list items, svg count."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.svgs = 0
        self.text: list[str] = []
        self.section = None
        self.sections: dict[str, list[str]] = {}
        self.ids: list[str] = []
        self._in_li = False
        self.items: dict[str, list[str]] = {}

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.append(attrs["id"])
        if tag == "svg":
            self.svgs += 1
        if tag == "h2":
            self.section = attrs.get("id")
        if tag == "li":
            self._in_li = True
            self.items.setdefault(self.section, []).append("")

    def handle_endtag(self, tag):
        if tag == "li":
            self._in_li = False

    def handle_data(self, data):
        self.text.append(data)
        self.sections.setdefault(self.section, []).append(data)
        if self._in_li:
            self.items[self.section][-1] += data


def parse(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    return page


def test_html_has_plots_names_intervals(doc):
    out = render_html(doc)
    page = parse(out)
    assert out.startswith("<!DOCTYPE html>")
    assert page.svgs == 3, "accuracy-by-type, latency and token cost curve plots"
    text = "".join(page.text)
    for name in ("none (control)", "keyword", "DRIFT-C", "DRIFT-E", "dialectic speed ms"):
        assert name in text
    assert "0.512" in text and "[0.401, 0.622]" in text   # keyword DRIFT-C with its interval
    assert "+0.670" in text and "[+0.516, +0.821]" in text   # paired difference vs none
    assert "[-0.300, -0.050]" in text   # vs the baseline system
    assert "run 2 − run 1" in text   # noise floor
    assert "n/a (no action probes in this split)" in text
    assert "n/a (not in result)" in text
    for section in ("summary", "headline", "paired", "plots", "breakdowns", "deviations", "receipt"):
        assert section in page.ids
    summary = "".join(page.sections["summary"])
    for needle in ("scenarios", "2", "1200", "o200k_base", "2000", "7"):
        assert needle in summary
    # The breakdowns and the metric no table knows are shown.
    assert "coding_agent" in text and "future_metric" in text
    # No script, no network.
    assert "script" not in page.tags and "http://" not in out.replace("http://www.w3.org", "")
    assert "https://" not in out


def test_hostile_name_is_escaped(doc, hostile):
    out = render_html(doc)
    assert "<script>" not in out and "<script" not in out.lower()
    assert html.escape(hostile) in out
    page = parse(out)
    assert "script" not in page.tags
    assert hostile in "".join(page.text)   # shown, as text
    md = render_markdown(doc)
    assert "<script>" not in md
    # The hostile name's pipe is escaped, so it cannot split a table row.
    assert all("\\|" in line for line in md.splitlines() if line.startswith("|") and "alert" in line)


def test_deviations_list_fallbacks_na_reasons_and_notes(doc, hostile):
    page = parse(render_html(doc))
    items = page.items["deviations"]
    joined = "\n".join(items)
    # Methods are listed in their own table; departures come from the notes the runner wrote.
    assert "snapshot provenance" not in joined
    assert "keyword: recall_at_k, recall_all_in_budget n/a — no provenance" in joined
    assert "keyword: action_alignment n/a — no action probes in this split" in joined
    assert "keyword: 2 calls failed (infrastructure), excluded from the metrics" in joined
    assert "Run: holdout scenarios included: a published run" in joined
    assert f"{hostile}: note from {hostile}" in joined
    # Headline metrics a system lacks are named, not silently zero.
    assert any("not in this result" in i and "privacy_score" in i for i in items)


def test_markdown_tables_and_deviations(doc):
    md = render_markdown(doc)
    assert "plots: see the html report" in md.lower()
    assert "| **keyword** | 0.512 \\[0.401, 0.622\\]" in md
    assert "\\[+0.516, +0.821\\]" in md
    assert "*n/a (no provenance)*" in md
    assert "## Deviations from the fairness contract" in md
    assert "marker probing (adapter has no Snapshot)" in md
    assert "recall\\_at\\_k, recall\\_all\\_in\\_budget n/a — no provenance" in md
    assert "### Accuracy by paradigm" in md and "coding\\_agent" in md
    assert "a" * 64 in md and "c" * 40 in md
    # Every table row has as many cells as its header.
    lines = md.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("|---"):
            width = line.count("|")
            j = i + 1
            while j < len(lines) and lines[j].startswith("|"):
                assert lines[j].replace("\\|", "").count("|") == width, lines[j]
                j += 1


def test_rendering_is_byte_identical(build):
    first_html, first_md = render_html(build()), render_markdown(build())
    assert render_html(build()) == first_html
    assert render_markdown(build()) == first_md


def test_dollar_and_backslash_in_a_name_render_literally(build):
    from conformance.report import plots

    doc = build()
    doc.systems["a\\$x^2$"] = doc.systems.pop("keyword")
    svg, _ = plots.accuracy_by_type(doc)
    assert ">a\\$x^2$</text>" in svg


def test_svg_ids_are_unique_and_undated(doc):
    out = render_html(doc)
    page = parse(out)
    assert len(page.ids) == len(set(page.ids)), "element ids collide between plots"
    assert "<dc:date>" not in out and "<?xml" not in out and "<!DOCTYPE svg" not in out


def test_missing_series_are_explained(build):
    out = render_html(build(with_series=False))
    page = parse(out)
    assert page.svgs == 1   # only the per-type bars: they come from metrics
    text = "".join(page.text)
    assert "No latency distributions in this result" in text
    assert "No token cost curve in this result" in text


def test_result_without_new_metrics_renders_na(build):
    doc = build(with_series=False)
    for result in doc.systems.values():
        result.metrics = {k: v for k, v in result.metrics.items() if k in ("accuracy", "recall_at_k")}
    out = render_html(doc)
    text = "".join(parse(out).text)
    assert "n/a (not in result)" in text
    assert "No per-probe-type accuracy in this result" in text
    assert "No capability metrics" in text
    md = render_markdown(doc)
    assert "*n/a (not in result)*" in md
    # n/a is never rendered as a number.
    assert "| **none (control)** | *n/a (not in result)* |" in md


def test_measurement_table_groups_systems_sharing_a_method(doc):
    from conformance.report.html import measurements

    rows = measurements(doc)
    assert ("keyword", "selectivity", "marker probing (adapter has no Snapshot)") in rows
    # One row per (metric, method), never one per system repeating the same words.
    assert len({(m, h) for _, m, h in rows}) == len(rows)


def test_missing_and_conditional_intervals_are_said_not_hidden():
    from conformance.contract.result import MetricValue
    from conformance.report.html import cell

    one = cell("mvot", MetricValue(value=0.5, n=3, ci_note="one scenario: no interval"))
    assert one.text == "0.500 (one scenario: no interval)"
    partial = cell("mvot", MetricValue(value=0.5, ci95=[0.4, 0.6], n=3, ci_note="over 900 of 1,000 resamples"))
    assert partial.text == "0.500 [0.400, 0.600]*" and partial.note.startswith("over 900")


def test_the_table_of_a_run_fits_80_columns(doc):
    from rich.console import Console

    from conformance.report.table import render

    console = Console(record=True, width=80)
    render(doc, console)
    shown = console.export_text()
    tables = shown.split("\nnote:")[0]  # notes wrap as prose
    assert max(len(line) for line in tables.splitlines()) <= 80
    assert "…" not in tables  # no number or name cut short
    assert "keyword" in shown and "DRIFT-C" in shown
    wide = Console(record=True, width=250)
    render(doc, wide, wide=True)
    assert "DRIFT §7 metrics" in wide.export_text()

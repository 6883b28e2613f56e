"""The run explorer's section of the HTML report: inline CSS and vanilla JavaScript, no library,
no network. The data (:func:`conformance.report.explorer.page_payload`) sits base64-encoded in a
``<script type="application/octet-stream">`` element; the script inflates it with the browser's
``DecompressionStream('gzip')`` and renders the probes a page at a time (failures first).

Every string of the data is untrusted (adapter output, fixture text): the script only ever sets
``textContent``, never HTML. When it has rendered the first page it sets
``document.documentElement.dataset.explorer = "ready"`` and ``window.explorerReadyMs`` (ms since
navigation start), which the Chromium test and ``bench/explorer_size.py`` read.
"""

from __future__ import annotations

import html

from conformance.scoring.causes import CAUSES

PAGE_SIZE = 50
"""Probe cards rendered at once; "show more" adds as many again."""

CSS = """
#explorer .controls { display: flex; flex-wrap: wrap; gap: 0.4em 1em; align-items: end; margin: 0.6em 0; }
#explorer label { display: flex; flex-direction: column; font-size: 0.85em; color: #445; }
#explorer select, #explorer input { font: inherit; font-size: 1em; padding: 0.15em 0.3em; }
#explorer .count { color: #445; margin: 0.4em 0; }
.probe { border: 1px solid #d0d5de; border-radius: 4px; margin: 0.7em 0; padding: 0.5em 0.8em; }
.probe .head { display: flex; flex-wrap: wrap; gap: 0.3em 1em; font-size: 0.88em; color: #445; }
.probe .head .pid { font-family: ui-monospace, monospace; font-weight: 600; color: #1d2330; }
.probe .q { font-weight: 600; margin: 0.3em 0; }
.probe .opts, .probe .gold { font-size: 0.9em; margin: 0.15em 0; }
.probe .gold.withheld { color: #8a5a00; }
.probe .cols { display: grid; grid-template-columns: repeat(auto-fit, minmax(22em, 1fr)); gap: 0.8em; margin-top: 0.4em; }
.probe .col { border-top: 2px solid #e3e6ec; padding-top: 0.3em; min-width: 0; }
.badge { display: inline-block; padding: 0 0.4em; border-radius: 3px; font-size: 0.85em; font-weight: 600; }
.v-correct { background: #e3f4e6; color: #17602a; } .v-wrong, .v-unanswered { background: #fdecec; color: #8a1c1c; }
.v-ungraded, .v-unscored { background: #eef1f6; color: #556; }
.chg-failed { background: #8a1c1c; color: #fff; } .chg-fixed { background: #17602a; color: #fff; }
ol.hits { padding-left: 1.6em; margin: 0.3em 0; font-size: 0.86em; }
ol.hits li { margin: 0.2em 0; overflow-wrap: anywhere; }
ol.hits li.out { color: #778; } ol.hits summary { cursor: pointer; } ol.hits li .ids { font-family: ui-monospace, monospace; font-size: 0.9em; color: #556; }
.mark { font-size: 0.8em; padding: 0 0.3em; border-radius: 3px; margin-right: 0.3em; }
.m-out { background: #eef1f6; } .m-stale { background: #fff0cc; color: #7a4a00; } .m-ev { background: #e3f4e6; color: #17602a; }
.m-buf { background: #e8e3f6; }
"""

JS = r"""
(function () {
  "use strict";
  const PAGE = %(page)d, LONG = 400;
  const CAUSES = %(causes)s;
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text); return e; };
  const failed = (v) => v === "wrong" || v === "unanswered";
  let D = null, shown = PAGE, lower = null;

  async function inflate(b64) {
    const bin = atob(b64), bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  function fill(select, values, first) {
    select.textContent = "";
    if (first) select.appendChild(new Option(first, ""));
    for (const v of values) select.appendChild(new Option(v, v));
  }

  function setup() {
    const sys = D.systems, firstSut = sys.includes(D.default) ? D.default : sys[0];
    fill($("ex-system"), sys); $("ex-system").value = firstSut;
    fill($("ex-beside"), sys, "(none)");
    const uniq = (i) => [...new Set(D.probes.map((p) => p[i]).filter((x) => x))].sort();
    fill($("ex-paradigm"), uniq(3), "all"); fill($("ex-type"), uniq(2), "all");
    fill($("ex-cause"), CAUSES, "all");
    fill($("ex-verdict"), ["failed", "correct", "wrong", "unanswered", "ungraded", "unscored"], "all");
    if (D.baseline) { fill($("ex-change"), ["newly failed", "newly fixed", "changed"], "all"); }
    else { $("ex-change").closest("label").style.display = "none"; }
    for (const id of ["ex-system", "ex-beside", "ex-paradigm", "ex-type", "ex-cause", "ex-verdict", "ex-change"])
      $(id).addEventListener("change", () => { shown = PAGE; render(); });
    let timer = null;
    $("ex-search").addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => { shown = PAGE; render(); }, 150); });
    $("ex-more").addEventListener("click", () => { shown += PAGE; render(); });
    $("ex-all").addEventListener("click", () => { shown = Infinity; render(); });
  }

  function change(system, i) {
    if (!D.baseline || !D.baseline[system]) return null;
    const before = D.baseline[system][i], now = D.runs[system][i][2];
    if (before === "correct" && failed(now)) return "newly failed";
    if (failed(before) && now === "correct") return "newly fixed";
    return null;
  }

  function haystack(system, i) {
    const r = D.runs[system][i], p = D.probes[r[0]];
    const parts = [p[0], p[1], p[6], r[1] || "", p[8] ? p[8].answer : ""];
    for (const h of r[4]) parts.push(lower[h[0]]);
    return parts.join("\n").toLowerCase();
  }

  function selected() {
    const system = $("ex-system").value, f = (id) => $(id).value;
    const par = f("ex-paradigm"), typ = f("ex-type"), cause = f("ex-cause"), verdict = f("ex-verdict");
    const chg = f("ex-change"), q = $("ex-search").value.trim().toLowerCase();
    if (q && !lower) lower = D.texts.map((t) => t.toLowerCase());
    const out = [];
    D.runs[system].forEach((r, i) => {
      const p = D.probes[r[0]];
      if (par && p[3] !== par) return; if (typ && p[2] !== typ) return; if (cause && r[3] !== cause) return;
      if (verdict && !(verdict === "failed" ? failed(r[2]) : r[2] === verdict)) return;
      const c = change(system, i);
      if (chg && !(chg === "changed" ? c !== null : c === chg)) return;
      if (q && !haystack(system, i).includes(q)) return;
      out.push(i);
    });
    const rank = (i) => (failed(D.runs[system][i][2]) ? 0 : 1);
    out.sort((a, b) => rank(a) - rank(b) || a - b);  // failures first, then run order
    return out;
  }

  function column(system, probeIndex) {
    const col = el("div", "col");
    const i = D.index[system] ? D.index[system][probeIndex] : undefined;
    const head = el("div"); head.appendChild(el("strong", null, system + " "));
    col.appendChild(head);
    if (i === undefined) { col.appendChild(el("em", null, "not asked of this system")); return col; }
    const r = D.runs[system][i];
    head.appendChild(el("span", "badge v-" + r[2], r[2]));
    const c = change(system, i);
    if (c) head.appendChild(el("span", "badge " + (c === "newly failed" ? "chg-failed" : "chg-fixed"), " " + c));
    if (r[3]) head.appendChild(el("span", "cause", " cause: " + r[3]));
    col.appendChild(el("div", "ans", "answer: " + (r[1] === null ? "(none)" : r[1])));
    if (r[5]) col.appendChild(el("div", "err", "fault: " + r[5]));
    const ol = el("ol", "hits");
    for (const h of r[4]) {
      const li = el("li", h[2] & 1 ? "in" : "out");
      if (!(h[2] & 1)) li.appendChild(el("span", "mark m-out", "out of budget"));
      if (h[2] & 2) li.appendChild(el("span", "mark m-buf", "buffer"));
      if (h[2] & 4) li.appendChild(el("span", "mark m-ev", "evidence"));
      if (h[2] & 8) li.appendChild(el("span", "mark m-stale", "stale"));
      li.appendChild(el("span", "ids", "[" + D.idlists[h[1]].join(", ") + "] "));
      const text = D.texts[h[0]];
      if (text.length <= LONG) li.appendChild(el("span", "txt", text));
      else {  // long hits fold: their start shows, the rest on a click
        const det = el("details"); det.appendChild(el("summary", "txt", text.slice(0, LONG) + "..."));
        det.appendChild(el("span", "txt", text.slice(LONG))); li.appendChild(det);
      }
      ol.appendChild(li);
    }
    col.appendChild(r[4].length ? ol : el("em", null, "no hits"));
    return col;
  }

  function card(system, beside, i) {
    const r = D.runs[system][i], p = D.probes[r[0]], div = el("div", "probe");
    div.dataset.probe = p[1]; div.dataset.scenario = p[0];
    const head = el("div", "head");
    head.appendChild(el("span", "pid", p[1]));
    for (const t of [p[0], p[2] || "type unknown", p[3] || "", p[4] + " horizon", p[5]]) head.appendChild(el("span", null, t));
    div.appendChild(head);
    div.appendChild(el("div", "q", p[6]));
    if (p[7] && p[7].length) div.appendChild(el("div", "opts", "options: " + p[7].join(" | ")));
    if (p[8]) {
      const g = p[8], extra = [];
      if (g.accepted.length) extra.push("also accepted: " + g.accepted.join(" | "));
      if (g.stale.length) extra.push("stale: " + g.stale.join(" | "));
      if (g.evidence.length) extra.push("evidence: " + g.evidence.join(", "));
      div.appendChild(el("div", "gold", "gold: " + g.answer + (extra.length ? " (" + extra.join("; ") + ")" : "")));
    } else {
      div.appendChild(el("div", "gold withheld", p[9] ? "gold withheld (holdout or sealed scenario: scores only)"
                                                    : "gold not shown (see the notes above)"));
    }
    const cols = el("div", "cols");
    cols.appendChild(column(system, r[0]));
    if (beside && beside !== system) cols.appendChild(column(beside, r[0]));
    div.appendChild(cols);
    return div;
  }

  function render() {
    const system = $("ex-system").value, beside = $("ex-beside").value;
    const rows = selected(), list = $("ex-list");
    list.textContent = "";
    const frag = document.createDocumentFragment();
    for (const i of rows.slice(0, shown)) frag.appendChild(card(system, beside, i));
    list.appendChild(frag);
    const nFailed = rows.filter((i) => failed(D.runs[system][i][2])).length;
    $("ex-count").textContent = rows.length + " probes match (" + nFailed + " failed); showing "
      + Math.min(shown, rows.length) + ".";
    $("ex-more").hidden = $("ex-all").hidden = rows.length <= shown;
  }

  async function main() {
    try {
      D = await inflate($("explorer-data").textContent.trim());
      D.index = {};
      for (const s of D.systems) { D.index[s] = {}; D.runs[s].forEach((r, i) => { D.index[s][r[0]] = i; }); }
      setup(); render();
      $("ex-status").textContent = "";
      window.explorerReadyMs = performance.now();
      document.documentElement.dataset.explorer = "ready";
    } catch (err) {
      $("ex-status").textContent = "The explorer could not load its data: " + err;
      document.documentElement.dataset.explorer = "failed";
      throw err;
    }
  }
  main();
})();
"""


def explorer_section(payload: str, notes: list[str]) -> str:
    """The explorer's ``<section>``: controls, an empty list the script fills, the data, the script.

    ``payload``: :func:`conformance.report.explorer.page_payload`; ``notes``: lines shown above
    the controls (gold not joined for a scenario, the comparison's summary)."""
    e = html.escape
    label = lambda ident, title, control: (f'<label>{e(title)}<{control} id="{ident}"></{control}>'  # noqa: E731
                                           "</label>" if control == "select" else "")
    controls = "".join(label(i, t, "select") for i, t in (
        ("ex-system", "system"), ("ex-beside", "side by side with"), ("ex-paradigm", "paradigm"),
        ("ex-type", "probe type"), ("ex-cause", "cause"), ("ex-verdict", "verdict"), ("ex-change", "change vs baseline")))
    controls += '<label>search<input id="ex-search" type="search" placeholder="probe id, question, answer, hit text"></label>'
    intro = ("<p>Every probe each system was asked: question, options, gold (withheld for holdout and sealed "
             "scenarios), the hits in the order the reader saw them (out of budget, stale and evidence hits marked), "
             "the answer, its verdict and failure cause. Failures first.</p>")
    extra = ('<ul class="notes">' + "".join(f"<li>{e(n.strip())}</li>" for n in notes) + "</ul>") if notes else ""
    script = JS % {"page": PAGE_SIZE, "causes": _js_list(CAUSES)}
    return (f'<h2 id="explorer">Run explorer</h2>\n<section id="explorer">{intro}{extra}'
            f'<p id="ex-status">Loading the explorer (it needs JavaScript)...</p>'
            f'<div class="controls">{controls}</div><p class="count" id="ex-count"></p><div id="ex-list"></div>'
            '<button id="ex-more" type="button" hidden>show more</button> '
            '<button id="ex-all" type="button" hidden>show all</button>'
            f'<script type="application/octet-stream" id="explorer-data">{payload}</script>\n'
            f"<script>{script}</script></section>")


def _js_list(values) -> str:
    import json

    return json.dumps(list(values))

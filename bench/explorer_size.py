"""The run explorer's page: its size and its time to interactive in headless Chromium.

    python bench/explorer_size.py RESULT.json                 # a finished run
    python bench/explorer_size.py --records RUN/records.jsonl # a run still going: its finished scenarios

Builds the HTML report with the explorer (``drift-conformance report RESULT --html``), prints its
size in MB (and the embedded data's, compressed and inflated), the time to build it, and the time
to interactive: from navigation start to the first page of probes rendered (``window.explorerReadyMs``,
the median of ``--loads`` loads in a fresh headless Chromium through Debian's chromedriver), with the
host's load average beside every timing. Target (issue 20): the library with six systems at most
~25 MB and interactive within ~3 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from conformance.report import explorer  # noqa: E402
from conformance.report.explorer_page import explorer_section  # noqa: E402


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()) + f" on {os.cpu_count()} CPUs"


def from_records(path: Path):
    """A stand-in result for a run still going: its finished scenarios, the committed corpus."""
    systems, done = [], []
    for raw in open(path, encoding="utf-8"):
        if not raw.endswith("\n"):
            break
        record = json.loads(raw)
        if record.get("kind") == "scenario_done" and record.get("repeat", 1) == 1:
            done.append(record["scenario_id"])
        elif record.get("kind") == "run":
            systems = [*record["binding"]["adapters"][:1], "oracle", *record["binding"]["adapters"][1:]]
    receipt = SimpleNamespace(scenarios=done, scenario_hashes={},
                              config={"fixtures_dir": str(REPO / "fixtures"), "gold_dir": str(REPO / "gold")})
    return SimpleNamespace(receipt=receipt, systems={s: None for s in systems}), done


def build(args) -> tuple[str, dict]:
    """(the page, figures of its build)."""
    started = time.perf_counter()
    if args.records is not None and args.result is None:
        doc, done = from_records(args.records)
        run = explorer.load_run_probes(doc, args.records)
        run.probes = {k: v for k, v in run.probes.items() if k[1] in set(done)}
        from conformance.report.html import _CSS
        from conformance.report.explorer_page import CSS
        body = explorer_section(explorer.page_payload(explorer.probe_lines(run)), run.notes)
        page = f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>{_CSS}{CSS}</style></head><body>{body}</body></html>"
    else:
        from conformance.report.command import load_result
        from conformance.report.html import render_html

        doc = load_result(args.result)
        run = explorer.load_run_probes(doc, explorer.find_records(doc, args.result, args.records))
        default = next((label for label, r in doc.systems.items() if r.kind == "system"), None)
        page = render_html(doc, None, explorer_section(explorer.page_payload(explorer.probe_lines(run), None, default),
                                                       run.notes))
    seconds = time.perf_counter() - started
    systems = sorted({k[0] for k in run.probes})
    return page, {"build_s": seconds, "systems": systems, "probes": len({k[1:] for k in run.probes}),
                  "lines": len(run.probes), "scenarios": len({k[1] for k in run.probes})}


def time_to_interactive(page: Path, loads: int) -> list[float]:
    """``window.explorerReadyMs`` of ``loads`` fresh loads, ms; raises SystemExit without Chromium."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.support.ui import WebDriverWait
    except ImportError:
        raise SystemExit("selenium is not installed (pip install -e '.[test]')") from None
    binary, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if binary is None or driver is None:
        raise SystemExit("needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    out = []
    for _ in range(loads):
        browser = webdriver.Chrome(service=Service(driver), options=options)
        try:
            browser.get(page.as_uri())
            WebDriverWait(browser, 120).until(
                lambda b: b.execute_script("return document.documentElement.dataset.explorer"))
            state = browser.execute_script("return document.documentElement.dataset.explorer")
            if state != "ready":
                raise SystemExit(f"the explorer did not load: {state}")
            out.append(browser.execute_script("return window.explorerReadyMs"))
        finally:
            browser.quit()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("result", nargs="?", type=Path)
    parser.add_argument("--records", type=Path)
    parser.add_argument("--out", type=Path, help="keep the page here (default: a temporary file)")
    parser.add_argument("--loads", type=int, default=3)
    args = parser.parse_args()
    if args.result is None and args.records is None:
        parser.error("give a RESULT.json or --records")
    print(f"building ({load()})")
    page, figures = build(args)
    where = args.out or Path(tempfile.mkdtemp()) / "report.html"
    where.write_text(page, encoding="utf-8")
    payload = page.split('id="explorer-data">', 1)[1].split("</script>", 1)[0]
    inflated = len(json.dumps(explorer.decode_payload(payload), ensure_ascii=False, separators=(",", ":")).encode())
    print(f"{figures['scenarios']} scenarios, {figures['probes']} probes, {len(figures['systems'])} systems "
          f"({', '.join(figures['systems'])}), {figures['lines']} probe x system lines")
    print(f"page: {len(page.encode()) / 1e6:.2f} MB ({where}); explorer data {len(payload) / 1e6:.2f} MB base64 "
          f"of gzip, {inflated / 1e6:.2f} MB inflated; built in {figures['build_s']:.1f} s")
    ready = time_to_interactive(where, args.loads)
    print(f"time to interactive in headless Chromium: median {statistics.median(ready) / 1000:.2f} s over "
          f"{len(ready)} loads ({', '.join(f'{x / 1000:.2f}' for x in ready)} s; {load()})")


if __name__ == "__main__":
    main()

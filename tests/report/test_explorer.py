"""The run explorer (``report --html``), ``--probes probes.jsonl`` and ``--compare``, on two tiny
in-process runs of the same two scenarios, one of them marked holdout (its gold carries a canary
spelling that must never reach a page or an export).

The Chromium test drives the real page in Debian's headless ``chromium`` through its
``chromedriver`` (selenium, the ``test`` extra) and skips with the reason where they are absent.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from conformance.cli.main import main
from conformance.contract.corpus import Selection, scenario_hashes
from conformance.report import explorer
from conformance.report.command import load_result
from conformance.report.explorer import decode_payload
from conformance.runner import job

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runner"))
import dishonest  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
OPEN, HELD = "cod-short-001", "crw-short-001"
OPEN_CANARY, HELD_CANARY = "open-gold-canary-5h2k", "holdout-gold-canary-9q7x"
"""Extra accepted spellings written into each scenario's gold: gold-only strings."""


def _corpus(root: Path) -> tuple[Path, Path]:
    """The two scenarios copied, ``HELD`` flagged holdout, each gold probe given its canary spelling."""
    fixtures, gold = root / "fixtures", root / "gold"
    fixtures.mkdir(parents=True)
    gold.mkdir()
    for sid, canary in ((OPEN, OPEN_CANARY), (HELD, HELD_CANARY)):
        lines = (REPO / "fixtures" / f"{sid}.jsonl").read_text().splitlines()
        header = json.loads(lines[0])
        header["holdout"] = sid == HELD
        (fixtures / f"{sid}.jsonl").write_text("\n".join([json.dumps(header, sort_keys=True), *lines[1:]]) + "\n")
        doc = json.loads((REPO / "gold" / f"{sid}.json").read_text())
        for probe in doc["probes"]:
            probe["accepted"] = [*probe.get("accepted", []), f"{canary}-{probe['probe_id']}"]
        (gold / f"{sid}.json").write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    return fixtures, gold


def _run(root: Path, monkeypatch, sut) -> Path:
    fixtures, gold = _corpus(root / "corpus")
    monkeypatch.setattr(job, "open_systems", lambda *a, **k: dishonest.systems(sut))
    doc = job.run_job(["sut"], fixtures, gold, records_dir=root / "runs", n_boot=20,
                      selection=Selection(include_holdout=True), fresh_process=False)
    path = root / "result.json"
    path.write_text(doc.model_dump_json())
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """(this run's result.json, a baseline run's): the same corpus, ``sut`` honest here and amnesiac there."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        mine = _run(tmp_path_factory.mktemp("mine"), monkeypatch, dishonest.Overlap("sut"))
        before = _run(tmp_path_factory.mktemp("before"), monkeypatch, dishonest.Amnesiac("sut"))
    return mine, before


@pytest.fixture(scope="module")
def built(runs, tmp_path_factory):
    """One ``report`` of this run against the baseline: (folder with r.html and probes.jsonl, its output)."""
    mine, before = runs
    folder = tmp_path_factory.mktemp("report")
    out = report(mine, "--compare", before, "--html", folder / "r.html", "--probes", folder / "probes.jsonl")
    assert out.exit_code == 0, out.output
    return folder, out.output


def report(*args) -> "CliRunner.Result":
    return CliRunner().invoke(main, ["report", *map(str, args)], catch_exceptions=False)


def _records(result: Path) -> list[dict]:
    path = Path(json.loads(result.read_text())["receipt"]["config"]["records"])
    return [json.loads(line) for line in path.read_text().splitlines()]


def _page_data(page: Path) -> dict:
    found = re.search(r'<script type="application/octet-stream" id="explorer-data">([^<]*)</script>', page.read_text())
    assert found, "no explorer data in the page"
    return decode_payload(found.group(1))


def test_the_result_names_its_records_with_their_hash_and_verdicts_match_the_causes(runs):
    mine, _ = runs
    doc = json.loads(mine.read_text())
    cfg = doc["receipt"]["config"]
    assert hashlib.sha256(Path(cfg["records"]).read_bytes()).hexdigest() == cfg["records_sha256"]
    verdicts = [r for r in _records(mine) if r["kind"] == "verdict"]
    probes = [r for r in _records(mine) if r["kind"] == "probe"]
    assert {(v["system"], v["probe_id"]) for v in verdicts} == {(p["system"], p["probe_id"]) for p in probes}
    for system, result in doc["systems"].items():
        counts = {c: n for c, n in result["failure_causes"]["counts"].items() if n}
        mine_counts: dict[str, int] = {}
        for v in verdicts:
            if v["system"] == system:
                mine_counts[v["cause"]] = mine_counts.get(v["cause"], 0) + 1
        assert mine_counts == counts, system


def test_probes_jsonl_follows_its_schema_and_withholds_holdout_gold(runs, built):
    mine, _ = runs
    schema = json.loads((REPO / "schema" / "probes.schema.json").read_text())
    text = (built[0] / "probes.jsonl").read_text()
    lines = [json.loads(line) for line in text.splitlines()]
    validator = jsonschema.Draft202012Validator(schema)  # built once: validate() would rebuild it per line
    for line in lines:
        validator.validate(line)
    systems = json.loads(mine.read_text())["systems"]
    n_probes = len({(p["scenario_id"], p["probe_id"]) for p in lines})
    assert len(lines) == len(systems) * n_probes and n_probes == 13 + 9
    held = [p for p in lines if p["scenario_id"] == HELD]
    assert held and all(p["holdout"] and p["gold"] is None for p in held)
    assert all(h["evidence"] is None and h["stale"] is None for p in held for h in p["hits"])
    assert {p["verdict"] for p in held} <= {"correct", "wrong"} and all(p["cause"] for p in held)
    opened = [p for p in lines if p["scenario_id"] == OPEN]
    assert all(p["gold"] is not None and not p["holdout"] for p in opened)
    assert OPEN_CANARY in text and HELD_CANARY not in text  # the check can fail: the open canary is there


def test_the_page_never_carries_holdout_gold(built):
    page = (built[0] / "r.html").read_text()
    data = _page_data(built[0] / "r.html")
    inflated = json.dumps(data)
    assert OPEN_CANARY in inflated and HELD_CANARY not in inflated and HELD_CANARY not in page
    held = [p for p in data["probes"] if p[0] == HELD]
    assert held and all(p[8] is None and p[9] for p in held)
    # No evidence (4) or stale (8) mark on a held-out probe's hits.
    rows = {i for i, p in enumerate(data["probes"]) if p[0] == HELD}
    assert all(not (h[2] & 12) for runs_ in data["runs"].values() for r in runs_ if r[0] in rows for h in r[4])


def test_each_hit_text_is_stored_once_and_the_data_is_deterministic(runs, built):
    mine, _ = runs
    doc = load_result(mine)
    payloads = [explorer.page_payload(explorer.probe_lines(explorer.load_run_probes(doc, explorer.find_records(doc, mine))))
                for _ in range(2)]
    assert payloads[0] == payloads[1]
    data = decode_payload(payloads[0])
    distinct = {h["text"] for r in _records(mine) if r["kind"] == "probe" and r.get("repeat", 1) == 1
                for h in r["hits"]}
    assert sorted(data["texts"]) == sorted(distinct)
    n_hits = sum(len(r[4]) for runs_ in data["runs"].values() for r in runs_)
    assert n_hits > len(data["texts"])  # texts repeat across probes and systems: the table saves them


def test_missing_or_changed_records_are_clear_errors(runs, tmp_path):
    mine, _ = runs
    records = Path(json.loads(mine.read_text())["receipt"]["config"]["records"])
    copy = tmp_path / "records.jsonl"
    shutil.copy(records, copy)
    assert report(mine, "--probes", tmp_path / "p.jsonl", "--records", copy).exit_code == 0
    out = report(mine, "--html", tmp_path / "r.html", "--records", tmp_path / "nowhere.jsonl")
    assert out.exit_code == 2 and "nowhere.jsonl: no such records file" in out.output
    with open(copy, "a") as handle:
        handle.write("{}\n")
    out = report(mine, "--html", tmp_path / "r.html", "--records", copy)
    assert out.exit_code == 2 and "differs from the" in out.output and "not the records of that run" in out.output


def test_records_without_verdicts_are_scored_from_gold_and_holdout_stays_unscored(runs, tmp_path):
    mine, _ = runs
    doc = json.loads(mine.read_text())
    old = tmp_path / "records.jsonl"
    old.write_text("".join(json.dumps(r) + "\n" for r in _records(mine) if r["kind"] != "verdict"))
    doc["receipt"]["config"].update(records=str(old))
    del doc["receipt"]["config"]["records_sha256"]  # results older than the hash
    (tmp_path / "old.json").write_text(json.dumps(doc))
    assert report(tmp_path / "old.json", "--probes", tmp_path / "old.jsonl").exit_code == 0
    assert report(mine, "--probes", tmp_path / "new.jsonl").exit_code == 0
    old_lines = [json.loads(x) for x in (tmp_path / "old.jsonl").read_text().splitlines()]
    new_lines = [json.loads(x) for x in (tmp_path / "new.jsonl").read_text().splitlines()]
    for a, b in zip(old_lines, new_lines, strict=True):
        if a["scenario_id"] == OPEN:
            assert (a["verdict"], a["cause"]) == (b["verdict"], b["cause"]), a["probe_id"]
        else:
            assert a["verdict"] == "unscored" and a["cause"] is None and b["verdict"] != "unscored"


def test_records_of_the_first_format_are_read(runs, tmp_path):
    """``tests/runner/data/records-v1.jsonl`` (mp-short-001, before verdicts and carried ids)."""
    mine, _ = runs
    doc = json.loads(mine.read_text())
    records = REPO / "tests" / "runner" / "data" / "records-v1.jsonl"
    doc["receipt"].update(scenarios=["mp-short-001"],
                          scenario_hashes=scenario_hashes([REPO / "fixtures" / "mp-short-001.jsonl"], REPO / "gold"))
    doc["receipt"]["config"].update(records=str(records), fixtures_dir=str(REPO / "fixtures"),
                                    gold_dir=str(REPO / "gold"))
    del doc["receipt"]["config"]["records_sha256"]
    (tmp_path / "v1.json").write_text(json.dumps(doc))
    out = report(tmp_path / "v1.json", "--probes", tmp_path / "p.jsonl")
    assert out.exit_code == 0, out.output
    lines = [json.loads(x) for x in (tmp_path / "p.jsonl").read_text().splitlines()]
    probes = [r for r in map(json.loads, records.read_text().splitlines()) if r["kind"] == "probe"]
    # One line per system and probe of the first pass (the last record of a probe wins).
    assert [(p["system"], p["probe_id"]) for p in lines] == sorted(
        {(r["system"], r["probe_id"]) for r in probes if r.get("repeat", 1) == 1})
    assert all(p["gold"] is not None for p in lines)
    assert [(p["verdict"], p["cause"]) for p in lines] == [("unanswered", "fault")]  # its last record: a fault


def test_compare_lists_newly_failed_and_fixed_probes(runs, built):
    mine, before = runs
    folder, output = built

    def verdicts(result):
        return {r["probe_id"]: r["correct"] for r in _records(result) if r["kind"] == "verdict" and r["system"] == "sut"}

    now, then = verdicts(mine), verdicts(before)
    fixed = sorted(p for p in now if now[p] and not then[p])
    failed = sorted(p for p in now if then[p] and not now[p])
    assert fixed, "the honest memory fixes some of the amnesiac's probes"
    line = next(x for x in output.splitlines() if x.strip().startswith("sut:"))
    assert line.strip() == f"sut: {len(failed)} newly failed, {len(fixed)} newly fixed (of {len(now)} probes scored in both)"
    shown = [x for x in output.splitlines() if "newly fixed:" in x][0]
    assert sorted(i.split("/")[1] for i in re.findall(r"[\w-]+/[\w-]+", shown)) == fixed[:20]
    data = _page_data(folder / "r.html")
    assert [v for v in data["baseline"]["sut"]] == [
        "correct" if then[data["probes"][r[0]][1]] else "wrong" for r in data["runs"]["sut"]]


# --------------------------------------------------------------------------- Chromium


def _browser():
    """A headless Chromium through Debian's chromedriver, or a skip naming what is missing."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (the test extra)")
    from selenium.webdriver.chrome.service import Service

    binary, driver = shutil.which("chromium") or shutil.which("chromium-browser"), shutil.which("chromedriver")
    if binary is None or driver is None:
        pytest.skip("headless Chromium not available: install Debian's chromium and chromium-driver "
                    f"(chromium: {binary}, chromedriver: {driver})")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver), options=options)


def test_the_page_works_in_headless_chromium(runs, built, tmp_path):
    from selenium.webdriver.support.ui import Select, WebDriverWait

    mine, before = runs
    failed_ids = {(r["system"], r["probe_id"]) for r in _records(mine) if r["kind"] == "verdict"
                  and r["correct"] is False}
    browser = _browser()
    try:
        browser.get((built[0] / "r.html").as_uri())
        WebDriverWait(browser, 30).until(lambda b: b.execute_script("return document.documentElement.dataset.explorer"))
        js = browser.execute_script
        assert js("return document.documentElement.dataset.explorer") == "ready"

        def shown() -> list[str]:
            return js("return [...document.querySelectorAll('#ex-list .probe')].map(e => e.dataset.probe)")

        def pick(ident, value):
            Select(browser.find_element("id", ident)).select_by_value(value)

        def show_all():
            if browser.find_element("id", "ex-all").is_displayed():
                browser.find_element("id", "ex-all").click()

        assert len(shown()) == 22 and Select(browser.find_element("id", "ex-system")).first_selected_option.text == "sut"
        # Failures first: no correct probe before a failed one.
        badges = js("return [...document.querySelectorAll('#ex-list .probe .col:first-child .badge')]"
                    ".map(e => e.textContent)")
        assert "correct" in badges and "wrong" in badges
        assert badges.index("correct") > max(i for i, b in enumerate(badges) if b == "wrong")
        pick("ex-verdict", "failed")
        for system in json.loads(mine.read_text())["systems"]:
            pick("ex-system", system)
            show_all()
            assert set(shown()) == {p for s, p in failed_ids if s == system}, system
        pick("ex-system", "sut")
        pick("ex-verdict", "")
        pick("ex-paradigm", "crawler_agent")
        assert len(shown()) == 9 and all(p.startswith(HELD) for p in shown())
        pick("ex-paradigm", "")
        pick("ex-type", "negative_recall")
        assert shown() and all(js("return arguments[0].textContent", e).count("negative_recall")
                               for e in browser.find_elements("css selector", "#ex-list .probe .head"))
        pick("ex-type", "")
        pick("ex-cause", "correct")
        assert len(shown()) == len([r for r in _records(mine) if r["kind"] == "verdict" and r["system"] == "sut"
                                    and r["correct"]])
        pick("ex-cause", "")
        target = sorted(p for s, p in failed_ids if s == "sut")[0]
        box = browser.find_element("id", "ex-search")
        box.send_keys(target)
        WebDriverWait(browser, 5).until(lambda b: shown() == [target])
        box.clear()
        box.send_keys("zzz-no-such-text")
        WebDriverWait(browser, 5).until(lambda b: shown() == [])
        box.clear()
        box.send_keys(" ")  # an input event with an empty query
        WebDriverWait(browser, 5).until(lambda b: len(shown()) == 22)
        # Side by side: two columns per probe, the second of the other system.
        pick("ex-beside", "oracle")
        heads = js("return [...document.querySelectorAll('#ex-list .probe')][0].querySelectorAll('.col').length")
        assert heads == 2
        # Comparison with the baseline run.
        pick("ex-change", "newly fixed")
        show_all()
        verdict_then = {r["probe_id"]: r["correct"] for r in _records(before) if r["kind"] == "verdict"
                        and r["system"] == "sut"}
        verdict_now = {r["probe_id"]: r["correct"] for r in _records(mine) if r["kind"] == "verdict"
                       and r["system"] == "sut"}
        assert set(shown()) == {p for p in verdict_now if verdict_now[p] and not verdict_then[p]}
        logs = [entry for entry in browser.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")]
        assert logs == []
        # Adapter output is text, never markup: a hostile hit and answer render as their characters.
        hostile = tmp_path / "hostile.html"
        hostile.write_text(_hostile_page(mine))
        browser.get(hostile.as_uri())
        WebDriverWait(browser, 30).until(lambda b: b.execute_script("return document.documentElement.dataset.explorer"))
        assert js("return window.pwned") is None
        page_text = js("return document.getElementById('ex-list').textContent")
        assert HOSTILE_TEXT in page_text and "answer: " + HOSTILE_TEXT in page_text
    finally:
        browser.quit()


HOSTILE_TEXT = '<img src=x onerror="window.pwned=1"><script>window.pwned=1</script>'


def _hostile_page(result: Path) -> str:
    from conformance.report.explorer_page import explorer_section

    doc = load_result(result)
    lines = explorer.probe_lines(explorer.load_run_probes(doc, explorer.find_records(doc, result)))
    first = next(i for i, line in enumerate(lines) if line.system == "sut" and line.hits)
    hits = [lines[first].hits[0].model_copy(update={"text": HOSTILE_TEXT}), *lines[first].hits[1:]]
    lines[first] = lines[first].model_copy(update={"hits": hits, "answer": HOSTILE_TEXT, "verdict": "wrong"})
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
            + explorer_section(explorer.page_payload(lines, None, "sut"), []) + "</body></html>")


def test_a_moved_corpus_is_named_and_changed_gold_is_not_joined(runs, tmp_path):
    mine, _ = runs
    cfg = json.loads(mine.read_text())["receipt"]["config"]
    moved = tmp_path / "corpus"
    shutil.copytree(Path(cfg["fixtures_dir"]).parent, moved)
    doc = json.loads(mine.read_text())
    doc["receipt"]["config"].update(fixtures_dir=str(tmp_path / "gone" / "fixtures"), gold_dir=str(tmp_path / "gone" / "gold"))
    result = tmp_path / "result.json"
    result.write_text(json.dumps(doc))

    def export(*extra, note: str | None = None) -> list[dict]:
        out = report(result, "--probes", tmp_path / "p.jsonl", *extra)
        assert out.exit_code == 0, out.output
        assert note is None or f"note: {OPEN}: " in out.output and note in out.output
        return [json.loads(x) for x in (tmp_path / "p.jsonl").read_text().splitlines()]

    assert all(p["gold"] is None and p["options"] == [] for p in export(note="fixture not found at"))
    lines = export("--fixtures", moved / "fixtures", "--gold", moved / "gold")
    assert all((p["gold"] is not None) == (p["scenario_id"] == OPEN) and p["options"] for p in lines)
    gold = moved / "gold" / f"{OPEN}.json"
    gold.write_text(gold.read_text().replace(OPEN_CANARY, "edited-after-the-run"))
    assert all(p["gold"] is None for p in export("--fixtures", moved / "fixtures", "--gold", moved / "gold",
                                                 note="its fixture or gold changed since the run"))


def test_the_page_data_and_the_export_are_redacted(runs, tmp_path, monkeypatch):
    """A secret's value that an adapter echoed into a hit is replaced, inside the compressed data too."""
    mine, _ = runs
    doc = load_result(mine)
    lines = explorer.probe_lines(explorer.load_run_probes(doc, explorer.find_records(doc, mine)))
    secret = next(h.text for line in lines for h in line.hits if len(h.text) >= 20)[:20]
    monkeypatch.setenv("EXPLORER_TEST_API_KEY", secret)
    data = json.dumps(decode_payload(explorer.page_payload(lines)))
    explorer.write_probes_jsonl(lines, tmp_path / "p.jsonl")
    for text in (data, (tmp_path / "p.jsonl").read_text()):
        assert secret not in text and "[redacted EXPLORER_TEST_API_KEY]" in text

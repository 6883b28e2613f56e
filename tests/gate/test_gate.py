"""The CI gate: baselines, compare, and the attacks the gate exists to stop.

Real runs (keyword over two committed ci scenarios, in-process runner, real adapter
processes) feed the comparisons; findings are then provoked by real corpus edits or by
an adapter that forgets sessions, and, for the rule-by-rule tests, by editing the gate
cells of a real result (compare is a pure function of two files).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.contract.result import ResultDocument
from conformance.gate.baseline import (
    Baseline,
    BaselineError,
    Justification,
    baseline_from_result,
    dumps,
    load_baseline_at,
    parse_baseline,
    write_baseline,
)
from conformance.gate.command import gate
from conformance.gate.compare import compare, exit_code
from conformance.runner.job import run_job
from conformance.contract.corpus import Selection

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = ("ua-short-001", "mp-short-002")
DEGRADED = Path(__file__).resolve().parent / "degraded-keyword"


def make_corpus(root: Path, scenarios=SCENARIOS) -> tuple[Path, Path]:
    fixtures, gold = root / "fixtures", root / "gold"
    fixtures.mkdir(parents=True)
    gold.mkdir(parents=True)
    for sid in scenarios:
        (fixtures / f"{sid}.jsonl").write_bytes((REPO / "fixtures" / f"{sid}.jsonl").read_bytes())
        (gold / f"{sid}.json").write_bytes((REPO / "gold" / f"{sid}.json").read_bytes())
    return fixtures, gold


def run(root: Path, fixtures: Path, gold: Path, adapter="keyword", **kwargs) -> ResultDocument:
    return run_job([adapter], fixtures, gold, records_dir=root / "runs", n_boot=200, **kwargs)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("corpus"))


@pytest.fixture(scope="module")
def keyword_run(tmp_path_factory, corpus):
    return run(tmp_path_factory.mktemp("run1"), *corpus)


@pytest.fixture(scope="module")
def baseline(keyword_run):
    return baseline_from_result(keyword_run)


def edited(doc: ResultDocument, system: str = "keyword", *, fail=(), recover=(), leak=(),
           deterministic: bool | None = None) -> ResultDocument:
    """A copy of ``doc`` whose gate cells mark the given item ids failed / passed / leaked."""
    copy = ResultDocument.model_validate(json.loads(doc.model_dump_json()))
    view = copy.systems[system].gate
    if deterministic is not None:
        view.deterministic = deterministic
    for cell in view.cells.values():
        failed = (set(cell.failed) | {i for i in fail if i in cell.items}) - set(recover)
        cell.failed, cell.gold_failed = sorted(failed), len(failed)
        cell.leaks = sorted(set(cell.leaks) | {i for i in leak if i in cell.items})
    return copy


def passing_items(doc: ResultDocument, n: int, system="keyword") -> list[str]:
    cells = doc.systems[system].gate.cells.values()
    return sorted(i for c in cells for i in c.items if i not in c.failed)[:n]


def failing_items(doc: ResultDocument, n: int, system="keyword") -> list[str]:
    return sorted(i for c in doc.systems[system].gate.cells.values() for i in c.failed)[:n]


# --- the baseline file ---------------------------------------------------------------------------------------------

def test_baseline_is_byte_stable_across_reruns(tmp_path, corpus, keyword_run):
    again = run(tmp_path, *corpus)
    assert dumps(baseline_from_result(again)) == dumps(baseline_from_result(keyword_run))


def test_baseline_holds_quality_only(baseline):
    text = dumps(baseline)
    data = json.loads(text)
    assert set(data) == {"schema_version", "fixtures_hash", "config", "systems", "scenario_hashes", "corpus_version",
                         "justifications"}
    assert sorted(data["scenario_hashes"]) == sorted(SCENARIOS)
    assert list(data["systems"]) == ["keyword"]  # controls and the reference normaliser are not gated
    for word in ("latency", "_ms", "storage", "started_at", "finished_at", "run_id", "host"):
        assert word not in text, word
    cell = data["systems"]["keyword"]["cells"]["user_assistant/fact_recall"]
    assert set(cell) == {"metrics", "gold_total", "gold_failed", "failed", "leaks"}
    assert set(cell["metrics"]) == {"accuracy", "abstention_accuracy", "recall_at_k"}
    assert cell["failed"] == sorted(cell["failed"]) and cell["gold_failed"] == len(cell["failed"])
    assert all(v is None or round(v, 4) == v for v in cell["metrics"].values())
    assert text == json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def test_cells_count_every_probe_once(keyword_run, corpus):
    fixtures, gold = corpus
    probes = sum(len(json.loads((gold / f"{sid}.json").read_text())["probes"]) for sid in SCENARIOS)
    cells = keyword_run.systems["keyword"].gate.cells
    assert sum(c.gold_total for c in cells.values()) == probes
    assert keyword_run.systems["keyword"].gate.deterministic is True


def test_bad_baseline_files_name_the_problem(tmp_path):
    with pytest.raises(BaselineError, match=r"b\.json: not JSON \(line 1"):
        parse_baseline("{oops", "b.json")
    with pytest.raises(BaselineError, match="schema_version 9 is not the 1"):
        parse_baseline('{"schema_version": "9"}', "b.json")
    with pytest.raises(BaselineError, match="field config: Field required"):
        parse_baseline('{"schema_version": "1", "fixtures_hash": "x", "systems": {}}', "b.json")
    with pytest.raises(BaselineError, match="no such baseline"):
        gate_missing = tmp_path / "absent.json"
        from conformance.gate.baseline import load_baseline
        load_baseline(gate_missing)


def test_hand_edits_that_disagree_are_refused(baseline):
    data = json.loads(dumps(baseline))
    cell = next(c for c in data["systems"]["keyword"]["cells"].values() if c["failed"])
    cell["gold_failed"] = 0
    with pytest.raises(BaselineError, match="gold_failed is 0 but failed lists"):
        parse_baseline(json.dumps(data), "b.json")
    cell["gold_failed"], cell["gold_total"] = len(cell["failed"]), str(cell["gold_total"])
    with pytest.raises(BaselineError, match="gold_total: Input should be a valid integer"):
        parse_baseline(json.dumps(data), "b.json")
    data = json.loads(dumps(baseline))
    data["justifications"] = [{"breach": "x", "reason": "          "}]
    with pytest.raises(BaselineError, match="at least 10 characters of words"):
        parse_baseline(json.dumps(data), "b.json")


def test_a_result_given_as_the_baseline_is_named(keyword_run):
    with pytest.raises(BaselineError, match="this is a result.json, not a baseline"):
        parse_baseline(keyword_run.model_dump_json(), "r.json")


def test_update_keeps_justifications(tmp_path, keyword_run):
    path = tmp_path / "baselines" / "main.json"
    write_baseline(keyword_run, path)
    data = json.loads(path.read_text())
    data["justifications"] = [{"breach": "canary_leak:keyword:x/y", "reason": "accepted: the canary is public data"}]
    path.write_text(json.dumps(data))
    write_baseline(keyword_run, path)
    assert parse_baseline(path.read_text(), "p").justifications[0].breach == "canary_leak:keyword:x/y"


# --- same corpus: regressions ------------------------------------------------------------------------------------------

def test_identical_run_passes(baseline, keyword_run):
    comparison = compare(baseline, keyword_run)
    assert (comparison.verdict, comparison.mode, exit_code(comparison)) == ("pass", "regression", 0)
    assert not comparison.breaches and not comparison.regressions


def test_a_swap_is_a_regression_though_every_count_is_unchanged(baseline, keyword_run):
    fail, recover = passing_items(keyword_run, 1), failing_items(keyword_run, 1)
    doc = edited(keyword_run, fail=fail, recover=recover)
    assert sum(c.gold_failed for c in doc.systems["keyword"].gate.cells.values()) == \
        sum(c.gold_failed for c in keyword_run.systems["keyword"].gate.cells.values())
    comparison = compare(baseline, doc)
    assert exit_code(comparison) == 1
    assert [f.key for f in comparison.regressions] == [f"newly_failed:keyword:{fail[0]}"]
    assert [f.key for f in comparison.improvements] == [f"recovered:keyword:{recover[0]}"]


def test_a_justified_regression_passes(baseline, keyword_run):
    fail = passing_items(keyword_run, 1)
    justified = baseline.model_copy(update={"justifications": [
        Justification(breach=f"newly_failed:keyword:{fail[0]}", reason="the probe's gold was wrong (issue 123)")]})
    comparison = compare(justified, edited(keyword_run, fail=fail))
    assert exit_code(comparison) == 0 and comparison.regressions[0].justification.startswith("the probe's gold")


def test_stochastic_system_is_gated_by_the_paired_interval(baseline, keyword_run):
    stochastic = baseline.model_copy(deep=True)  # a baseline blessed from a stochastic system
    stochastic.systems["keyword"].deterministic = False
    items = passing_items(keyword_run, 10_000)
    one = edited(keyword_run, fail=items[:1], deterministic=False)
    assert exit_code(compare(stochastic, one)) == 0  # one flip of a stochastic system is noise
    many = edited(keyword_run, fail=items[::2], deterministic=False)  # half of each scenario's passing items
    comparison = compare(stochastic, many)
    assert exit_code(comparison) == 1
    assert [f.kind for f in comparison.regressions] == ["pass_rate_drop"]
    assert "wholly below zero" in comparison.regressions[0].detail


def test_attack_turning_determinism_off_to_soften_the_gate(baseline, keyword_run):
    """A deterministic system's change that loses two items of one scenario and says Describe is
    no longer deterministic (bench/attacks/determinism_dodge) is a breach, not a pass under the
    paired interval (which a loss in one scenario never pushes wholly below zero)."""
    items = passing_items(keyword_run, 10_000)
    scenario = items[0].rsplit("/", 1)[0]
    lost = [i for i in items if i.rsplit("/", 1)[0] == scenario][:2]
    assert exit_code(compare(baseline, edited(keyword_run, fail=lost))) == 1
    dodged = edited(keyword_run, fail=lost, deterministic=False)
    comparison = compare(baseline, dodged)
    assert exit_code(comparison) == 1
    assert [f.key for f in comparison.breaches] == ["determinism:keyword"] and not comparison.regressions
    # Reviewed on the base branch first, the change of rule passes, and the paired interval gates.
    justified = baseline.model_copy(update={"justifications": [
        Justification(breach="determinism:keyword", reason="the adapter now calls an LLM (issue 321)")]})
    assert exit_code(compare(justified, dodged)) == 0


def test_canary_leak_is_a_breach_unless_justified(baseline, keyword_run):
    canary = sorted(i for key, c in keyword_run.systems["keyword"].gate.cells.items() for i in c.items)[:1]
    doc = edited(keyword_run, leak=canary)
    comparison = compare(baseline, doc)
    assert exit_code(comparison) == 1 and comparison.breaches[0].kind == "canary_leak"
    carried = baseline.model_copy(update={"justifications": [
        Justification(breach=comparison.breaches[0].key, reason="synthetic canary, accepted for this release")]})
    assert exit_code(compare(carried, doc)) == 0


def test_gold_total_change_and_vanished_cell_are_breaches(baseline, keyword_run):
    doc = ResultDocument.model_validate(json.loads(keyword_run.model_dump_json()))
    cells = doc.systems["keyword"].gate.cells
    gone = sorted(cells)[0]
    del cells[gone]
    shrunk = sorted(cells)[0]
    cells[shrunk].items = cells[shrunk].items[1:]
    cells[shrunk].gold_total -= 1
    kinds = sorted(f.kind for f in compare(baseline, doc).breaches)
    assert kinds == ["gold_total", "vanished_cell"]


def test_config_mismatch_is_inconclusive(baseline, keyword_run):
    doc = ResultDocument.model_validate(json.loads(keyword_run.model_dump_json()))
    doc.receipt.config["k"] = 5
    comparison = compare(baseline, doc)
    assert exit_code(comparison) == 2 and "k: baseline 10, run 5" in comparison.reason


# --- the attacks ---------------------------------------------------------------------------------------------------------

def test_attack_pull_request_rewrites_its_own_baseline(tmp_path, keyword_run):
    """The PR's degraded run blesses itself in its working tree; the gate reads main's copy."""
    repo = tmp_path / "repo"
    (repo / "baselines").mkdir(parents=True)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    write_baseline(keyword_run, repo / "baselines" / "main.json")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "baseline"], check=True)
    subprocess.run([*git, "checkout", "-qb", "pr"], check=True)
    degraded = edited(keyword_run, fail=passing_items(keyword_run, 3))
    write_baseline(degraded, repo / "baselines" / "main.json")  # the PR rewrites its baseline
    subprocess.run([*git, "commit", "-qam", "bless my regression"], check=True)
    shown: list[str] = []
    assert gate(Path("baselines/main.json"), degraded, base_ref="main", repo=repo, echo=shown.append) == 1
    assert "newly_failed:keyword:" in shown[0]
    # ... whereas trusting the working tree would have passed it:
    assert gate(repo / "baselines" / "main.json", degraded, echo=shown.append) == 0
    assert load_baseline_at("main", repo=repo).fixtures_hash == keyword_run.receipt.selection_hash


def test_attack_corpus_hollowing(tmp_path, baseline):
    """Dropping the scenario with failures changes the corpus; the re-blessed baseline shrinks: a breach."""
    fixtures, gold = make_corpus(tmp_path / "hollow", SCENARIOS[:1])
    hollow = run(tmp_path, fixtures, gold)
    candidate = baseline_from_result(hollow)
    comparison = compare(baseline, hollow, candidate=candidate)
    assert (comparison.mode, exit_code(comparison)) == ("bless", 1)
    kinds = {f.kind for f in comparison.breaches}
    assert "vanished_cell" in kinds and kinds <= {"vanished_cell", "gold_total"}  # the multi-peer cells are gone
    # A written justification for every breach (in the reviewed candidate) lets the change through.
    reasons = [Justification(breach=f.key, reason="scenario retired: its world contradicted the spec")
               for f in comparison.breaches]
    assert exit_code(compare(baseline, hollow, candidate=baseline_from_result(hollow, reasons))) == 0


def test_attack_moving_failures_into_holdout(tmp_path, baseline):
    fixtures, gold = make_corpus(tmp_path / "moved")
    path = fixtures / f"{SCENARIOS[1]}.jsonl"
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["holdout"] = True
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    moved = run(tmp_path, fixtures, gold)
    assert moved.receipt.scenarios == [SCENARIOS[0]]
    assert exit_code(compare(baseline, moved)) == 2  # changed corpus, baseline not re-blessed
    comparison = compare(baseline, moved, candidate=baseline_from_result(moved))
    assert exit_code(comparison) == 1 and comparison.breaches
    # and a holdout-including run is never a gate input
    published = run(tmp_path, fixtures, gold, selection=Selection(include_holdout=True))
    assert exit_code(compare(baseline, published)) == 2
    with pytest.raises(BaselineError, match="never includes them"):
        baseline_from_result(published)


def test_attack_vacuous_pass(tmp_path, baseline, keyword_run):
    empty = ResultDocument.model_validate(json.loads(keyword_run.model_dump_json()))
    for cell in empty.systems["keyword"].gate.cells.values():
        cell.items, cell.failed, cell.gold_total, cell.gold_failed = [], [], 0, 0
    assert exit_code(compare(baseline, empty)) == 2
    hollow_baseline = Baseline.model_validate({**baseline.model_dump(), "systems": {"keyword": {
        "deterministic": True, "cells": {}}}})
    assert exit_code(compare(hollow_baseline, keyword_run)) == 2
    incomplete = keyword_run.model_copy(update={"complete": False, "errors": ["adapter crashed"]})
    assert exit_code(compare(baseline, incomplete)) == 2
    controls_only = keyword_run.model_copy(update={"systems": {k: v for k, v in keyword_run.systems.items()
                                                               if k != "keyword"}})
    assert exit_code(compare(baseline, controls_only)) == 2


def test_attack_edit_one_fixture_to_hide_a_regression_elsewhere(tmp_path, baseline):
    """Bless mode still compares untouched scenarios item by item."""
    fixtures, gold = make_corpus(tmp_path / "touched")
    path = fixtures / f"{SCENARIOS[1]}.jsonl"
    lines = path.read_text().splitlines()
    session = json.loads(lines[1])
    session["messages"][0]["text"] += " Cheers."  # one harmless byte-level change
    path.write_text("\n".join([lines[0], json.dumps(session), *lines[2:]]) + "\n")
    touched = run(tmp_path, fixtures, gold)
    fail = [i for i in passing_items(touched, 10_000) if i.startswith(SCENARIOS[0])][:2]
    degraded = edited(touched, fail=fail)
    comparison = compare(baseline, degraded, candidate=baseline_from_result(degraded))
    assert comparison.mode == "bless" and exit_code(comparison) == 1
    assert sorted(f.key for f in comparison.regressions) == [f"newly_failed:keyword:{i}" for i in fail]
    # the candidate (written by the change) cannot excuse them; the base branch can
    excuses = [Justification(breach=f"newly_failed:keyword:{i}", reason="accepted by the maintainers on main")
               for i in fail]
    assert exit_code(compare(baseline, degraded, candidate=baseline_from_result(degraded, excuses))) == 1
    assert exit_code(compare(baseline.model_copy(update={"justifications": excuses}), degraded,
                             candidate=baseline_from_result(degraded))) == 0


def test_changed_fixture_in_bless_mode(tmp_path, baseline):
    """A corpus edit: 2 without a re-blessed baseline; 1 when the committed one does not equal the run."""
    fixtures, gold = make_corpus(tmp_path / "edit")
    data = json.loads((gold / f"{SCENARIOS[0]}.json").read_text())
    removed = data["probes"].pop()["probe_id"]  # a probe retired from gold and fixture
    (gold / f"{SCENARIOS[0]}.json").write_text(json.dumps(data, indent=1))
    path = fixtures / f"{SCENARIOS[0]}.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:
        if "probes" in line:
            line["probes"] = [p for p in line["probes"] if p["probe_id"] != removed]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    changed = run(tmp_path, fixtures, gold)
    assert exit_code(compare(baseline, changed)) == 2
    assert exit_code(compare(baseline, changed, candidate=baseline)) == 2  # the old file, not re-blessed
    stale = baseline_from_result(changed).model_copy(update={"config": baseline.config.model_copy(update={"k": 3})})
    mismatch = compare(baseline, changed, candidate=stale)
    assert exit_code(mismatch) == 1 and "baseline_mismatch" in {f.kind for f in mismatch.breaches}
    blessed = compare(baseline, changed, candidate=baseline_from_result(changed))
    assert exit_code(blessed) == 1 and {f.kind for f in blessed.breaches} == {"gold_total"}


# --- the command line --------------------------------------------------------------------------------------------------

def cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=900)


def test_cli_degraded_adapter_exits_1_with_a_readable_diff(tmp_path, corpus):
    fixtures, gold = corpus
    common = ["--fixtures", str(fixtures), "--gold", str(gold), "--records-dir", str(tmp_path / "runs"), "--quiet",
              "--bootstrap", "200"]
    made = cli(*common, "--adapter", "keyword", "--update-baseline", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "baselines" / "main.json").exists()
    degraded = cli(*common, "--adapter", str(DEGRADED), "--out", "degraded.json", cwd=tmp_path)
    assert degraded.returncode == 0, degraded.stderr
    proc = cli("compare", "baselines/main.json", "degraded.json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "REGRESSION (exit 1)" in proc.stdout and "| keyword | user_assistant/" in proc.stdout
    assert "newly_failed:keyword:ua-short-00" in proc.stdout
    as_json = json.loads(cli("compare", "--json", "baselines/main.json", "degraded.json", cwd=tmp_path).stdout)
    assert as_json["verdict"] == "regression" and as_json["exit_code"] == 1
    again = cli(*common, "--adapter", "keyword", "--compare", "baselines/main.json", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "PASS (exit 0)" in again.stdout


def test_cli_errors_exit_2(tmp_path):
    proc = cli("compare", "absent.json", "also-absent.json", cwd=tmp_path)
    assert proc.returncode == 2 and "also-absent.json: no such result file" in proc.stderr
    (tmp_path / "r.json").write_text('{"schema_version": "1", "systems": {}}')
    proc = cli("compare", "absent.json", "r.json", cwd=tmp_path)
    assert proc.returncode == 2 and "at receipt: Field required" in proc.stderr
    proc = cli("--adapter", "keyword", "--scenario", "no-such-*", "--compare", "b.json", "--quiet", cwd=tmp_path)
    assert proc.returncode == 2 and "match no fixture" in proc.stderr


def test_cli_names_a_baseline_given_as_the_result(tmp_path):
    """BASELINE and RESULT swapped: the message says which file is the baseline, not 'receipt: Field required'."""
    committed = str(REPO / "baselines" / "main.json")
    proc = cli("compare", "result.json", committed, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "main.json: this is a baseline, not a result.json" in proc.stderr and "BASELINE then RESULT" in proc.stderr


def test_a_new_corpus_major_version_asks_for_a_rebless_by_name(baseline, keyword_run):
    """Migration: a committed baseline of corpus 1.x against a run on 2.x says which corpus changed and how to
    re-bless (exit 2, its own message); a minor bump or a re-blessed baseline takes the ordinary paths."""
    def on(version: str) -> ResultDocument:
        receipt = keyword_run.receipt.model_copy(update={"versions": {**keyword_run.receipt.versions,
                                                                      "corpus": version},
                                                         "selection_hash": "f" * 64})
        return keyword_run.model_copy(update={"receipt": receipt})
    old = baseline.model_copy(update={"corpus_version": "1.0.0"})
    moved = compare(old, on("2.0.0"))
    assert exit_code(moved) == 2
    assert moved.reason.startswith("corpus changed from 1.0.0 to 2.0.0: ")
    assert "re-bless with `drift-conformance --adapter keyword" in moved.reason and "--update-baseline`" in moved.reason
    legacy = compare(baseline.model_copy(update={"corpus_version": None}), on("2.0.0"))
    assert legacy.reason.startswith("corpus changed from an unversioned corpus (1.x) to 2.0.0")
    minor = compare(old, on("1.1.0"))
    assert exit_code(minor) == 2 and "corpus changed" not in minor.reason and "re-blessed" in minor.reason
    assert baseline_from_result(on("2.0.0")).corpus_version == "2.0.0"

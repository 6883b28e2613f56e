"""Shards (``--shard I/N``) and their exact merge (``drift-conformance merge``).

- The split is a pure function of the sorted scenario ids: every scenario in exactly one
  shard, all its ``--repeat`` passes with it.
- Three short scenarios run whole and as 2 shards (``--repeat 2``, a baseline system):
  the merge equals the whole run in every metric not derived from measured time
  (tests/timing_fields.py), intervals, noise floor and paired differences included, while
  a shard's own intervals differ (so the comparison can fail).
- Merge refuses shards of other options, corpus or seed (naming the field and both files),
  a shard given twice, overlapping shards, a whole run, a shard that did not finish, and
  names each missing shard with its scenarios.

The ``ci`` split as 2 shards (through Ray where it starts) against the committed reference is
tests/runner/test_shards_ci.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.contract.shards import Shard, ShardSpecError, shard_scenarios, split
from conformance.runner.merge import MergeError, merge_shards

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
import timing_fields  # noqa: E402

SCENARIOS = ("cod-short-001", "cod-short-002", "crw-short-002")
OPTIONS = ("--adapter", "keyword", *[a for s in SCENARIOS for a in ("--scenario", s)], "--bootstrap", "200",
           "--repeat", "2", "--baseline-system", "reference-compressor", "--records-dir", "runs", "--quiet")


def cli(*args, cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


# --- the split -------------------------------------------------------------------------------------------------------

def test_the_split_deals_sorted_ids_round_robin_from_shard_1():
    ids = ["e", "b", "a", "d", "c"]
    assert shard_scenarios(ids, Shard(1, 2)) == ["a", "c", "e"]
    assert shard_scenarios(ids, Shard(2, 2)) == ["b", "d"]
    assert shard_scenarios(ids, Shard(3, 3)) == ["c"]
    assert shard_scenarios(ids, Shard(1, 1)) == ["a", "b", "c", "d", "e"]
    paths = [Path(f"f/{i}.jsonl") for i in ids]
    assert split(paths, Shard(2, 2)) == [Path("f/b.jsonl"), Path("f/d.jsonl")]  # the order given is kept


@pytest.mark.parametrize("count", [1, 2, 3, 7, 52])
def test_every_scenario_is_in_exactly_one_shard(count):
    ids = [f"s-{i:03d}" for i in range(52)]
    dealt = [sid for i in range(1, count + 1) for sid in shard_scenarios(ids, Shard(i, count))]
    assert sorted(dealt) == ids
    sizes = [len(shard_scenarios(ids, Shard(i, count))) for i in range(1, count + 1)]
    assert max(sizes) - min(sizes) <= 1


@pytest.mark.parametrize("text, shown", [("0/2", "counts from 1"), ("3/2", "counts from 1"), ("1/0", "between 1"),
                                         ("x", "expected I/N"), ("1-2", "expected I/N"), ("", "expected I/N")])
def test_a_bad_shard_is_refused_with_the_form(text, shown):
    with pytest.raises(ShardSpecError, match=shown):
        Shard.parse(text)


def test_shard_parse_reads_spaces_and_prints_back():
    assert Shard.parse(" 2 / 3 ") == Shard(2, 3) and str(Shard(2, 3)) == "2/3"


def test_cli_refuses_a_bad_shard_and_a_gate_on_a_shard(tmp_path):
    bad = cli("--shard", "0/2", "--scenario", SCENARIOS[0], cwd=tmp_path)
    assert bad.returncode == 2 and "counts from 1" in bad.stderr
    gated = cli("--shard", "1/2", "--scenario", SCENARIOS[0], "--compare", "b.json", cwd=tmp_path)
    assert gated.returncode == 2 and "drift-conformance compare" in gated.stderr
    empty = cli("--shard", "4/4", *OPTIONS, cwd=tmp_path)
    assert empty.returncode == 2 and "has none; use at most 3 shards" in empty.stderr, empty.stderr


def test_cli_refuses_every_shard_of_more_shards_than_scenarios(tmp_path):
    """1/4 of 3 scenarios holds one, but 4/4 can never run, so no merge of 1..4 could finish."""
    first = cli("--shard", "1/4", *OPTIONS, cwd=tmp_path)
    assert first.returncode == 2 and "use at most 3 shards" in first.stderr, first.stderr
    assert not list((tmp_path / "runs").glob("*/records.jsonl"))  # refused before any run starts


# --- whole run, shards, merge ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The three scenarios run whole, and as shards 1/2 and 2/2, and the shards merged."""
    tmp = tmp_path_factory.mktemp("shards")
    for name, extra in (("whole", ()), ("s1", ("--shard", "1/2")), ("s2", ("--shard", "2/2"))):
        proc = cli(*OPTIONS, *extra, "--out", f"{name}.json", cwd=tmp)
        assert proc.returncode == 0, proc.stderr
    merged = cli("merge", "s1.json", "s2.json", "--out", "merged.json", "--records-dir", "runs", "-q", cwd=tmp)
    assert merged.returncode == 0, merged.stderr
    return tmp


def load(folder: Path, name: str) -> dict:
    return json.loads((folder / name).read_text())


def test_the_merge_equals_the_whole_run_in_every_metric_but_timings(runs):
    whole, merged = load(runs, "whole.json"), load(runs, "merged.json")
    assert timing_fields.comparable(merged) == timing_fields.comparable(whole)
    keyword = merged["systems"]["keyword"]
    # Not vacuous: intervals, the noise floor (--repeat 2) and paired blocks are there and equal.
    assert keyword["metrics"]["accuracy"]["ci95"] is not None and keyword["noise_floor"]
    assert keyword["paired_vs_baseline"] and keyword["paired_vs_none"]
    assert merged["receipt"]["scenarios"] == sorted(SCENARIOS)


def test_a_shard_alone_scores_differently(runs):
    """The comparison above can fail: one shard's intervals are over its own scenarios."""
    shard, whole = load(runs, "s1.json"), load(runs, "whole.json")
    assert shard["receipt"]["scenarios"] == ["cod-short-001", "crw-short-002"]
    assert (shard["systems"]["keyword"]["metrics"]["accuracy"] != whole["systems"]["keyword"]["metrics"]["accuracy"])


def test_a_shard_is_marked_in_its_receipt_header_and_notes(runs):
    shard = load(runs, "s2.json")
    block = shard["receipt"]["config"]["shard"]
    assert block["index"] == 2 and block["count"] == 2 and block["scenarios"] == ["cod-short-002"]
    assert block["selection_scenarios"] == sorted(SCENARIOS)
    assert any(n.startswith("shard 2/2 of the selection: 1 of its 3 scenarios") for n in shard["receipt"]["notes"])
    header = json.loads(Path(shard["receipt"]["config"]["records"]).read_text().splitlines()[0])
    assert header["kind"] == "run" and header["binding"]["shard"] == "2/2"  # a resume must repeat it
    assert "shard" not in load(runs, "whole.json")["receipt"]["config"]


def test_the_merged_receipt_names_its_shards(runs):
    merged = load(runs, "merged.json")
    named = merged["receipt"]["config"]["merged_from"]
    assert [m["shard"] for m in named] == ["1/2", "2/2"]
    assert [m["run_id"] for m in named] == [load(runs, f"s{i}.json")["receipt"]["config"]["run_id"] for i in (1, 2)]
    assert merged["receipt"]["started_at"] == min(load(runs, f"s{i}.json")["receipt"]["started_at"] for i in (1, 2))


def test_merge_is_deterministic_and_order_free(runs):
    again = merge_shards([runs / "s2.json", runs / "s1.json"], records_dir=runs / "again")  # in process: faster
    a = json.dumps(timing_fields.comparable(load(runs, "merged.json")), sort_keys=True)
    b = json.dumps(timing_fields.comparable(json.loads(again.model_dump_json())), sort_keys=True)
    assert a == b


# --- refusals --------------------------------------------------------------------------------------------------------

def edited(runs: Path, name: str, change) -> str:
    doc = load(runs, name)
    change(doc)
    out = f"edited-{name}"
    (runs / out).write_text(json.dumps(doc))
    return out


def refused(runs: Path, *results: str) -> str:
    """The message merge refuses ``results`` with (in process: each CLI start costs seconds);
    nothing is written."""
    with pytest.raises(MergeError) as caught:
        merge_shards([runs / r for r in results], records_dir=runs / "refused", records_dirs=(runs / "runs",))
    assert not (runs / "refused").exists() or not any((runs / "refused").iterdir())
    return " ".join(str(caught.value).split())


def test_the_cli_exits_2_with_the_refusal(runs):
    proc = cli("merge", "s1.json", "--out", "never.json", "--records-dir", "runs", "-q", cwd=runs)
    assert proc.returncode == 2 and "shard 2/2 missing" in proc.stderr and not (runs / "never.json").exists()


@pytest.mark.parametrize("field, change", [
    ("seed", lambda d: d["receipt"].update(seed=7)),
    ("fixtures_hash", lambda d: d["receipt"].update(fixtures_hash="0" * 64)),
    ("gold_hash", lambda d: d["receipt"].update(gold_hash="1" * 64)),
    ("versions.corpus", lambda d: d["receipt"]["versions"].update(corpus="9.9.9")),
    ("config.k", lambda d: d["receipt"]["config"].update(k=5)),
    ("config.bootstrap_resamples", lambda d: d["receipt"]["config"].update(bootstrap_resamples=300)),
])
def test_shards_of_different_runs_are_refused_naming_field_and_files(runs, field, change):
    message = refused(runs, "s1.json", edited(runs, "s2.json", change))
    assert f"the shards differ in {field}:" in message and "s1.json" in message and "edited-s2.json" in message


def test_a_missing_shard_is_named_with_its_scenarios(runs):
    assert "shard 2/2 missing (scenarios cod-short-002)" in refused(runs, "s1.json")


def test_a_shard_given_twice_is_refused(runs):
    copy = edited(runs, "s1.json", lambda d: None)
    assert "shard 1/2 given twice" in refused(runs, "s1.json", copy, "s2.json")


def test_overlapping_shards_are_refused(runs):
    def claim(doc):
        doc["receipt"]["config"]["shard"]["scenarios"].append("cod-short-001")
    assert "scenario cod-short-001 is in two shards" in refused(runs, "s1.json", edited(runs, "s2.json", claim))


def test_a_whole_run_is_not_merged(runs):
    assert "not a shard's result" in refused(runs, "whole.json", "s2.json")


def test_a_shard_that_did_not_finish_is_refused(runs):
    shard = load(runs, "s2.json")
    source = Path(shard["receipt"]["config"]["records"])
    cut = runs / "cut" / "records.jsonl"
    cut.parent.mkdir()
    lines = source.read_text().splitlines(True)
    last_done = max(i for i, line in enumerate(lines) if '"kind": "scenario_done"' in line)
    cut.write_text("".join(lines[:last_done]))
    name = edited(runs, "s2.json", lambda d: d["receipt"]["config"].update(records=str(cut)))
    message = refused(runs, "s1.json", name)
    assert "did not finish scenario cod-short-002 (pass 2)" in message and "--shard 2/2" in message


def test_records_that_cannot_be_found_are_named(runs):
    name = edited(runs, "s1.json", lambda d: d["receipt"]["config"].update(records="/nowhere/records.jsonl",
                                                                            run_id="gone"))
    message = refused(runs, name, "s2.json")
    assert "the records of shard 1/2 (run gone) are in none of: /nowhere/records.jsonl" in message


def test_records_beside_the_result_are_found(runs, tmp_path):
    """A CI artifact: the result and its run folder, elsewhere than the receipt's path."""
    for i in (1, 2):
        doc = load(runs, f"s{i}.json")
        source = Path(doc["receipt"]["config"]["records"])
        doc["receipt"]["config"]["records"] = "/elsewhere/records.jsonl"
        # Shard 1 as the recipes upload it (its run folder under runs/), shard 2 flat.
        target = (tmp_path / "s1" / "runs" / doc["receipt"]["config"]["run_id"] / "records.jsonl" if i == 1
                  else tmp_path / "s2" / "records.jsonl")
        target.parent.mkdir(parents=True)
        shutil.copy(source, target)
        (tmp_path / f"s{i}" / "result.json").write_text(json.dumps(doc))
    doc = merge_shards([tmp_path / "s1" / "result.json", tmp_path / "s2" / "result.json"],
                       records_dir=tmp_path / "merged")
    got = timing_fields.comparable(json.loads(doc.model_dump_json()))
    assert got == timing_fields.comparable(load(runs, "merged.json"))


def test_shards_of_another_corpus_are_refused_naming_the_hashes(runs):
    def other(doc):
        doc["receipt"]["fixtures_hash"] = "a" * 64
    message = refused(runs, edited(runs, "s1.json", other), edited(runs, "s2.json", other))
    assert "no corpus with the shards' fixtures_hash aaaaaaaaaaaaaaaa..." in message and "--fixtures and --gold" in message


def test_a_shard_resumes_only_as_the_same_shard(runs):
    run_id = load(runs, "s1.json")["receipt"]["config"]["run_id"]
    proc = cli(*OPTIONS, "--shard", "2/2", "--resume", run_id, cwd=runs)
    assert proc.returncode == 2 and "shard: recorded '1/2', now '2/2'" in proc.stderr, proc.stderr

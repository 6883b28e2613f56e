"""A merge re-scores only the shards' own records with the shards' own code (issue 31, item 12).

- every shard's records must hash to its receipt's ``records_sha256`` (records edited after the
  run, e.g. keyword's answers replaced by the oracle's, are refused);
- the receipt names the code by content (``receipt.config.code``: a hash of the suite's packages
  and of each adapter folder, the git commit, whether the tree was dirty), also where there is no
  git commit (an installed wheel);
- shards of different code are refused; a merge by code other than the shards' is refused unless
  told (``--allow-other-code``), and then both are recorded;
- a published run (holdout included) from a tree with uncommitted edits is refused unless told.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.cli.main import main
from conformance.runner import code_identity
from conformance.runner.code_identity import folder_sha256, suite_sha256
from conformance.runner.job import git_commit
from conformance.runner.merge import MergeError, merge_shards

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = ("cod-short-001", "crw-short-002")
OPTIONS = ("--adapter", "keyword", *[a for s in SCENARIOS for a in ("--scenario", s)], "--bootstrap", "100",
           "--records-dir", "runs", "--quiet")


def cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shards")
    for i in (1, 2):
        proc = cli(*OPTIONS, "--shard", f"{i}/2", "--out", f"s{i}.json", cwd=tmp)
        assert proc.returncode == 0, proc.stderr
    return tmp


def load(folder: Path, name: str) -> dict:
    return json.loads((folder / name).read_text())


def edited(folder: Path, name: str, change) -> str:
    doc = load(folder, name)
    change(doc)
    out = f"edited-{name}"
    (folder / out).write_text(json.dumps(doc))
    return out


def merged(folder: Path, *results: str, **options):
    return merge_shards([folder / r for r in results], records_dir=folder / "merged", records_dirs=(folder / "runs",),
                        **options)


def refused(folder: Path, *results: str, **options) -> str:
    with pytest.raises(MergeError) as caught:
        merged(folder, *results, **options)
    return " ".join(str(caught.value).split())


def test_a_shard_receipt_names_its_code_by_content(shards):
    code = load(shards, "s1.json")["receipt"]["config"]["code"]
    assert re.fullmatch("[0-9a-f]{64}", code["suite_sha256"]) and code["suite_sha256"] == suite_sha256()
    assert code["adapters"]["keyword"] == folder_sha256(REPO / "adapters" / "keyword")
    assert code["adapters"]["none"] == folder_sha256(REPO / "adapters" / "none")
    assert code["dirty"] in (True, False)  # run from this checkout
    assert code == load(shards, "s2.json")["receipt"]["config"]["code"]


def test_records_edited_after_the_run_are_refused(shards):
    """Keyword's answers replaced by the oracle's: before the check, the merge scored them."""
    doc = load(shards, "s2.json")
    source = Path(doc["receipt"]["config"]["records"])
    lines = [json.loads(line) for line in source.read_text().splitlines()]
    oracle = {r["probe_id"]: r["answer"] for r in lines if r.get("kind") == "probe" and r["system"] == "oracle"}
    changed = 0
    for r in lines:
        if r.get("kind") == "probe" and r["system"] == "keyword" and r["answer"] != oracle[r["probe_id"]]:
            r["answer"], changed = oracle[r["probe_id"]], changed + 1
    assert changed
    forged = shards / "forged" / "records.jsonl"
    forged.parent.mkdir()
    forged.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in lines))
    name = edited(shards, "s2.json", lambda d: d["receipt"]["config"].update(records=str(forged)))
    message = refused(shards, "s1.json", name)
    assert "records_sha256" in message and str(forged) in message and name in message


def test_unchanged_shards_merge_and_each_shard_s_code_is_named(shards):
    doc = merged(shards, "s1.json", "s2.json")
    assert doc.complete and doc.receipt.config["code"]["suite_sha256"] == suite_sha256()
    assert doc.receipt.git_commit == git_commit()  # the merging checkout's: it re-scored
    assert [m["code"]["suite_sha256"] for m in doc.receipt.config["merged_from"]] == [suite_sha256()] * 2


def other_code(doc):
    doc["receipt"]["config"]["code"]["suite_sha256"] = "0" * 64


def test_a_merge_by_other_code_is_refused_unless_told(shards):
    a, b = edited(shards, "s1.json", other_code), edited(shards, "s2.json", other_code)
    message = refused(shards, a, b)
    assert "code" in message and "0000000000000000" in message and "--allow-other-code" in message
    doc = merged(shards, a, b, allow_other_code=True)
    config = doc.receipt.config
    assert config["code"]["suite_sha256"] == suite_sha256()  # what re-scored
    assert [m["code"]["suite_sha256"] for m in config["merged_from"]] == ["0" * 64] * 2  # what ran the shards
    assert any("other code than its shards" in n for n in doc.receipt.notes)


def test_shards_of_different_code_are_refused_even_when_told(shards):
    def other_adapter(doc):
        doc["receipt"]["config"]["code"]["adapters"]["keyword"] = "1" * 64
    message = refused(shards, "s1.json", edited(shards, "s2.json", other_adapter), allow_other_code=True)
    assert "the shards differ in code.adapters" in message


def test_shards_without_a_code_hash_are_other_code(shards):
    def old(doc):
        del doc["receipt"]["config"]["code"]
    a, b = edited(shards, "s1.json", old), edited(shards, "s2.json", old)
    assert "--allow-other-code" in refused(shards, a, b)


def test_the_code_is_named_without_git(monkeypatch):
    """An installed wheel: no checkout, no commit, the hashes all the same."""
    monkeypatch.setattr(code_identity, "checkout_root", lambda: None)
    code = code_identity.code_identity({"keyword": REPO / "adapters" / "keyword", "oracle": None}, None)
    assert code["git_commit"] is None and code["dirty"] is None
    assert code["suite_sha256"] == suite_sha256() and code["adapters"]["oracle"] is None


def test_a_folder_hash_follows_content_not_place(tmp_path):
    a = tmp_path / "a"
    (a / "pkg" / "__pycache__").mkdir(parents=True)
    (a / "adapter.py").write_text("print(1)\n")
    (a / "pkg" / "x.py").write_text("y = 2\n")
    (a / "pkg" / "__pycache__" / "x.cpython-312.pyc").write_bytes(b"cache")
    first = folder_sha256(a)
    shutil.copytree(a, tmp_path / "b")
    (tmp_path / "b" / "pkg" / "__pycache__" / "x.cpython-312.pyc").write_bytes(b"other cache")
    assert folder_sha256(tmp_path / "b") == first
    (a / "pkg" / "x.py").write_text("y = 3\n")
    assert folder_sha256(a) != first
    (a / "pkg" / "x.py").write_text("y = 2\n")
    (a / "pkg" / "x.py").rename(a / "pkg" / "z.py")
    assert folder_sha256(a) != first  # a renamed file is other code


def test_a_published_run_from_a_dirty_tree_is_refused_unless_told(monkeypatch):
    monkeypatch.setattr(code_identity, "tree_dirty", lambda: True)
    refused = CliRunner().invoke(main, ["--adapter", "keyword", "--include-holdout", "--quiet"])
    assert refused.exit_code == 2 and "uncommitted" in refused.output and "--allow-dirty" in refused.output
    # Told: past that check (the misspelt adapter is what stops it, before anything runs).
    allowed = CliRunner().invoke(main, ["--adapter", "kyeword", "--include-holdout", "--allow-dirty", "--quiet"])
    assert allowed.exit_code == 2 and "uncommitted" not in allowed.output and "kyeword" in allowed.output
    # Not a published run: a dirty tree is recorded, not refused.
    plain = CliRunner().invoke(main, ["--adapter", "kyeword", "--quiet"])
    assert "uncommitted" not in plain.output

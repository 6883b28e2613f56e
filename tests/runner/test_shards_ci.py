"""Done-when of the shards: the ``ci`` split through keyword as 2 shards, merged, scores
exactly as the committed reference of the unsharded run (tests/data/ci_reference_keyword.json,
which tests/test_end_to_end.py holds every unsharded ``ci`` run to), in every metric not
derived from measured time. Its own module so pytest-xdist runs it beside test_shards.py."""

from __future__ import annotations

import difflib
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
from ci_reference import REFERENCE, render  # noqa: E402

pytestmark = pytest.mark.slow


def cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=900)


def test_the_ci_split_as_two_shards_merges_to_the_unsharded_reference(tmp_path):
    for i in (1, 2):
        proc = cli("--adapter", "keyword", "--split", "ci", "--shard", f"{i}/2", "--out", f"s{i}.json",
                   "--records-dir", "runs", "--quiet", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    merged = cli("merge", "s1.json", "s2.json", "--out", "merged.json", "--records-dir", "runs", "-q", cwd=tmp_path)
    assert merged.returncode == 0, merged.stderr
    doc = json.loads((tmp_path / "merged.json").read_text())
    assert [len(json.loads((tmp_path / f"s{i}.json").read_text())["receipt"]["scenarios"]) for i in (1, 2)] == [4, 4]
    got, want = render(doc), REFERENCE.read_text(encoding="utf-8")
    if got != want:
        lines = difflib.unified_diff(want.splitlines(True), got.splitlines(True), "reference", "merged")
        diff = "".join(list(lines)[:80])
        pytest.fail(f"the merged ci shards score differently from {REFERENCE.name}:\n{diff}")

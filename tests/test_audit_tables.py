"""An audit of a subset never overwrites the library's committed table beside the fixtures."""

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_split_audit_writes_beside_the_caller_not_over_the_committed_table(tmp_path):
    fixtures, gold = tmp_path / "fixtures", tmp_path / "gold"
    fixtures.mkdir()
    gold.mkdir()
    shutil.copy(REPO / "fixtures" / "ua-short-002.jsonl", fixtures)
    shutil.copy(REPO / "gold" / "ua-short-002.json", gold)
    committed = fixtures / "_difficulty.json"
    committed.write_text("{}\n", encoding="utf-8")  # stands for the library's table
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "audit-difficulty", "--fixtures", str(fixtures),
                           "--gold", str(gold), "--split", "ci", "--records-dir", str(tmp_path / "runs")],
                          cwd=work, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert committed.read_text(encoding="utf-8") == "{}\n"
    assert '"ua-short-002"' in (work / "difficulty-ci.json").read_text(encoding="utf-8")
    assert "difficulty-ci.json" in proc.stdout


def test_table_path_rules():
    from conformance.cli.common import audit_table_path

    assert audit_table_path(None, Path("fx"), "shortcuts") == Path("fx") / "_shortcuts.json"
    assert audit_table_path(None, Path("fx"), "shortcuts", ("ci",)) == Path("shortcuts-ci.json")
    assert audit_table_path(None, Path("fx"), "shortcuts", (), True) == Path("shortcuts-all-holdout.json")
    assert audit_table_path(Path("x.json"), Path("fx"), "shortcuts", ("ci",)) == Path("x.json")

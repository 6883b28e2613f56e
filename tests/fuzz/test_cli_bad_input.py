"""The CLI on malformed files: exit 2, ``error:`` on stderr, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fuzzkit import DEEP, FIXTURE_LINES, GOLD, dump_json, fixture_bytes, write_corpus

pytestmark = pytest.mark.timeout(300)

REPO = Path(__file__).resolve().parents[2]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def _assert_clean_failure(proc: subprocess.CompletedProcess, names: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "error:" in proc.stderr.lower(), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr[-4000:]
    assert names in proc.stderr, proc.stderr[-2000:]


BAD_FIXTURES = {
    "invalid-utf8": fixture_bytes(FIXTURE_LINES[:2]) + b'{"kind": "session", "text": "\xff\xfe"}\n',
    "huge-number": fixture_bytes(FIXTURE_LINES[:1]) + b'{"kind": "session", "index": ' + b"9" * 5000 + b"}\n",
    "deep": fixture_bytes(FIXTURE_LINES[:1]) + DEEP.encode() + b"\n",
    "nan": fixture_bytes(FIXTURE_LINES[:1]).replace(b"24.0", b"NaN"),
    "truncated": fixture_bytes(FIXTURE_LINES)[:-40],
    "empty": b"",
}


@pytest.mark.parametrize("name", sorted(BAD_FIXTURES))
def test_validate_malformed_fixture(tmp_path, name):
    fixtures, gold = write_corpus(tmp_path, fixture=BAD_FIXTURES[name])
    proc = _cli("validate", "--fixtures", str(fixtures), "--gold", str(gold), cwd=tmp_path)
    _assert_clean_failure(proc, "fz-1.jsonl")


@pytest.mark.parametrize("blob", [b"\xff\xfe{}", b'{"probes": ' + DEEP.encode() + b"}", b"[]", b'{"seed": 1e999}'])
def test_validate_malformed_gold(tmp_path, blob):
    fixtures, gold = write_corpus(tmp_path, gold=blob)
    proc = _cli("validate", "--fixtures", str(fixtures), "--gold", str(gold), cwd=tmp_path)
    _assert_clean_failure(proc, "fz-1.json")


@pytest.mark.parametrize("blob", [b"\xff[]", b"[" + b"9" * 5000 + b"]", DEEP.encode(), b"{}", b""])
def test_import_locomo_malformed(tmp_path, blob):
    source = tmp_path / "locomo10.json"
    source.write_bytes(blob)
    proc = _cli("import", "locomo", str(source), "--out", str(tmp_path / "out"), cwd=tmp_path)
    _assert_clean_failure(proc, "locomo10.json")


def test_compare_malformed_baseline_and_result(tmp_path):
    result = REPO / "tests" / "contract" / "data" / "results" / "result-v1.json"
    baseline = tmp_path / "main.json"
    baseline.write_bytes(b'{"schema_version": "1", "systems": ' + DEEP.encode() + b"}")
    # An unreadable baseline is the gate's "inconclusive" verdict (exit 2), printed as the report on stdout.
    proc = _cli("compare", str(baseline), str(result), cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr + proc.stdout, proc.stderr[-3000:]
    assert "main.json: not JSON (line 1: nested more than 64 levels deep)" in proc.stdout
    bad_result = tmp_path / "result.json"
    bad_result.write_bytes(b'{"schema_version": "\xc2\xb2"}')
    good_baseline = REPO / "baselines" / "main.json"
    _assert_clean_failure(_cli("compare", str(good_baseline), str(bad_result), cwd=tmp_path), "result.json")
    bad_result.write_text(json.dumps({**json.loads(result.read_text()), "schema_version": "9" * 5000}))
    _assert_clean_failure(_cli("compare", str(good_baseline), str(bad_result), cwd=tmp_path), "result.json")

"""The contract a foreign repository relies on (docs/result-contract.md): it runs the installed
``drift-conformance`` console script as a subprocess from its own working directory, reads
result.json from stdout (``--json``) or from ``--out``, validates it against the published
schema, and branches on the exit code (0 pass, 1 gate regression, 2 error or inconclusive)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

REPO = Path(__file__).resolve().parents[1]
# Two committed short scenarios (the smallest; the run takes a few seconds with keyword).
SCENARIOS = ("crw-short-002", "crw-short-003")


def installed_cli() -> str:
    """The console script of the environment running the tests (not ``python -m``)."""
    exe = shutil.which("drift-conformance", path=str(Path(sys.executable).parent)) or shutil.which("drift-conformance")
    if exe is None:
        pytest.fail("the drift-conformance console script is not installed in this environment (pip install -e .)")
    return exe


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([installed_cli(), *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """A small corpus of its own: fixtures/ and gold/ folders holding copies of committed scenarios."""
    root = tmp_path_factory.mktemp("corpus")
    (root / "fixtures").mkdir()
    (root / "gold").mkdir()
    for scenario in SCENARIOS:
        shutil.copy(REPO / "fixtures" / f"{scenario}.jsonl", root / "fixtures")
        shutil.copy(REPO / "gold" / f"{scenario}.json", root / "gold")
    return root


@pytest.fixture(scope="module")
def run_result(corpus, tmp_path_factory):
    work = tmp_path_factory.mktemp("foreign-repo")
    proc = run(["--fixtures", str(corpus / "fixtures"), "--gold", str(corpus / "gold"), "--adapter", "keyword",
                "--json", "--out", "result.json", "--quiet"], cwd=work)
    return proc, work


def test_run_exits_0_and_stdout_is_exactly_the_result_document(run_result):
    proc, work = run_result
    assert proc.returncode == 0, proc.stderr
    written = (work / "result.json").read_text(encoding="utf-8")
    assert proc.stdout == written  # nothing but the document on stdout, byte for byte what --out wrote
    doc = json.loads(proc.stdout)  # one JSON document, no trailing log lines
    assert doc == json.loads(written)
    assert proc.stderr == ""  # --quiet: no progress or log lines either


def test_result_validates_against_the_published_schema(run_result):
    proc, _ = run_result
    doc = json.loads(proc.stdout)
    schema = json.loads((REPO / "schema" / "result.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(doc, schema)
    assert doc["schema_version"] == schema["x-schema-version"]
    assert sorted(doc["receipt"]["scenarios"]) == sorted(SCENARIOS)
    assert {"keyword", "none", "oracle"} <= set(doc["systems"])
    assert doc["complete"] is True


def test_missing_fixture_folder_exits_2_with_a_message_on_stderr_only(corpus, tmp_path):
    proc = run(["--fixtures", str(tmp_path / "missing"), "--gold", str(corpus / "gold"), "--adapter", "keyword",
                "--json", "--out", "result.json", "--quiet"], cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""  # a foreign repo parsing stdout gets nothing, not half a document
    assert "error:" in proc.stderr and "missing" in proc.stderr
    assert not (tmp_path / "result.json").exists()

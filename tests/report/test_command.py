"""``report RESULT [--html] [--markdown]``: writes the files, or prints the table; a bad result
exits 2 naming the file and the first failing field."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.cli.report import report_cmd

REPO = Path(__file__).resolve().parents[2]


def invoke(*args):
    return CliRunner().invoke(report_cmd, [str(a) for a in args])


def test_writes_html_and_markdown(tmp_path, doc):
    result = tmp_path / "result.json"
    result.write_text(doc.model_dump_json(indent=2))
    out = invoke(result, "--html", tmp_path / "r.html", "--markdown", tmp_path / "r.md")
    assert out.exit_code == 0, out.output
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert "## Headline" in (tmp_path / "r.md").read_text()
    # Twice: the same bytes.
    first = (tmp_path / "r.html").read_bytes()
    assert invoke(result, "--html", tmp_path / "r.html").exit_code == 0
    assert (tmp_path / "r.html").read_bytes() == first


def test_without_an_output_the_table_is_printed(tmp_path, doc):
    result = tmp_path / "result.json"
    result.write_text(doc.model_dump_json())
    out = invoke(result)
    assert out.exit_code == 0, out.output
    assert "drift-conformance:" in out.output and "keyword" in out.output
    assert not list(tmp_path.glob("*.html")) and not list(tmp_path.glob("*.md"))


@pytest.mark.parametrize("content, needles", [
    (None, ["missing.json", "no such result file"]),
    ("{not json", ["result.json", "not valid JSON"]),
    ("[]", ["result.json", "not a valid result.json"]),
])
def test_bad_file_exits_2_naming_it(tmp_path, content, needles):
    path = tmp_path / ("missing.json" if content is None else "result.json")
    if content is not None:
        path.write_text(content)
    out = invoke(path, "--html", tmp_path / "r.html")
    assert out.exit_code == 2, out.output
    assert "Traceback" not in out.output
    for needle in needles:
        assert needle in out.output
    assert not (tmp_path / "r.html").exists()


def test_failing_field_is_named(tmp_path, doc):
    data = json.loads(doc.model_dump_json())
    data["systems"]["keyword"]["metrics"]["accuracy"]["value"] = "high"
    path = tmp_path / "result.json"
    path.write_text(json.dumps(data))
    out = invoke(path, "--markdown", tmp_path / "r.md")
    assert out.exit_code == 2
    assert "result.json" in out.output and "systems.keyword.metrics.accuracy.value" in out.output


def test_missing_receipt_field_is_named(tmp_path, doc):
    data = json.loads(doc.model_dump_json())
    del data["receipt"]["gold_hash"]
    path = tmp_path / "result.json"
    path.write_text(json.dumps(data))
    out = invoke(path, "--html", tmp_path / "r.html")
    assert out.exit_code == 2 and "receipt.gold_hash" in out.output


def test_unwritable_output_exits_2(tmp_path, doc):
    path = tmp_path / "result.json"
    path.write_text(doc.model_dump_json())
    out = invoke(path, "--html", tmp_path / "no" / "such" / "dir" / "r.html")
    assert out.exit_code == 2 and "cannot write the report" in out.output


@pytest.mark.slow
def test_report_from_a_real_run(tmp_path):
    """A real result (one scenario, keyword and the controls) renders, with n/a where a
    metric is not (yet) in the result."""
    env = {**os.environ, "DRIFT_QUIET": "1"}
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "--adapter", "keyword", "--scenario",
                           "ua-short-001", "--records-dir", str(tmp_path / "runs"), "--out",
                           str(tmp_path / "result.json")], cwd=tmp_path, capture_output=True, text=True,
                          timeout=900, env=env)
    assert proc.returncode == 0, proc.stderr
    out = invoke(tmp_path / "result.json", "--html", tmp_path / "r.html", "--markdown", tmp_path / "r.md")
    assert out.exit_code == 0, out.output
    page, md = (tmp_path / "r.html").read_text(), (tmp_path / "r.md").read_text()
    for text in (page, md):
        assert "keyword" in text and "oracle (control)" in text and "Deviations from the fairness contract" in text
    assert "<svg" in page   # at least the per-type accuracy bars


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.update(schema_version="99"), "schema_version '99' is newer than the '1'"),
    (lambda d: next(iter(d["systems"].values()))["metrics"]["accuracy"].update(ci95=[0.9, 0.1]),
     "ci95 low 0.9 is above high 0.1"),
])
def test_report_refuses_results_it_cannot_trust(tmp_path, doc, edit, message):
    data = json.loads(doc.model_dump_json())
    edit(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    result = CliRunner().invoke(report_cmd, [str(path), "--markdown", str(tmp_path / "r.md")])
    assert result.exit_code == 2 and message in result.output


def test_a_result_naming_no_records(tmp_path, doc):
    """The page alone goes without the explorer (a note says so); the exports need the records."""
    result = tmp_path / "result.json"
    result.write_text(doc.model_dump_json(indent=2))
    out = invoke(result, "--html", tmp_path / "r.html")
    assert out.exit_code == 0 and "names no run records; the page has no run explorer" in out.output
    assert 'id="explorer-data"' not in (tmp_path / "r.html").read_text()
    for flag in ("--probes", "--compare"):
        out = invoke(result, flag, tmp_path / ("p.jsonl" if flag == "--probes" else "result.json"))
        assert out.exit_code == 2 and "names no run records" in out.output and "--records PATH" in out.output

"""`audit sample` and `audit score` and the files they read and write: an output path that is an
input (result, key, labelled file; through a symlink too) is refused with nothing written; the
sample comes from the grades behind the result it is given (a grades file a later invocation
rewrote is refused); a relative records path of an older result is found next to the result.

One small LoCoMo-format run through keyword with the answer model and judge (local fake
Messages API, loopback only), shared by the tests.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "adapters"))
sys.path.insert(0, str(HERE))
from fake_anthropic import FakeAnthropic  # noqa: E402
from test_answer_judge import ANSWER_MODEL, JUDGE_MODEL, LOCOMO, responder  # noqa: E402

from conformance.importers.locomo import import_locomo  # noqa: E402
from conformance.report.audit import AuditError, sample_audit  # noqa: E402
from conformance.llm.judge import GRADES_FILE  # noqa: E402
from conformance.llm.settings import llm_settings  # noqa: E402
from conformance.runner.job import run_job  # noqa: E402

pytest.importorskip("anthropic")

KEY = "sk-ant-audit-files-canary-6c2f"


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> dict:
    """A finished run: its result as a dict (JSON) and its records folder."""
    root = tmp_path_factory.mktemp("audit-run")
    source = root / "locomo.json"
    source.write_text(json.dumps(LOCOMO), encoding="utf-8")
    import_locomo(source, root / "corpus")
    with FakeAnthropic(responder, api_key=KEY) as fake:
        settings = llm_settings(ANSWER_MODEL, JUDGE_MODEL, cache_dir=root / "cache", max_retries=0,
                                environ={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake.url})
        doc = run_job(["keyword"], root / "corpus" / "fixtures", root / "corpus" / "gold",
                      records_dir=root / "runs", n_boot=100, llm=settings)
    result = json.loads(doc.model_dump_json())
    records = Path(result["receipt"]["config"]["records"])
    assert records.is_file() and (records.parent / GRADES_FILE).is_file()
    return {"result": result, "records": records}


def _write(path: Path, result: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result), encoding="utf-8")
    return path


def _cli(*args):
    from conformance.cli import main

    return CliRunner().invoke(main, [str(a) for a in args])


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- outputs that are inputs -------------------------------------------------------------------


def test_sample_refuses_an_output_that_is_the_result(run, tmp_path):
    result = _write(tmp_path / "result.json", run["result"])
    before = result.read_bytes()
    link = tmp_path / "link-to-result.json"
    link.symlink_to(result)
    for out, key in ((result, tmp_path / "key.json"), (tmp_path / "audit.jsonl", result),
                     (link, tmp_path / "key.json"), (tmp_path / "audit.jsonl", link),
                     (tmp_path / "sub" / ".." / "result.json", tmp_path / "key.json")):
        got = _cli("audit", "sample", result, "--n", "5", "--out", out, "--key", key)
        assert got.exit_code == 2, got.output
        assert "the same file as the result" in got.output and "Traceback" not in got.output
        assert result.read_bytes() == before
        assert not (tmp_path / "key.json").exists() and not (tmp_path / "audit.jsonl").exists()
    # The result given through the symlink: the output named by its real path is refused too.
    got = _cli("audit", "sample", link, "--out", result, "--key", tmp_path / "key.json")
    assert got.exit_code == 2 and "the same file as the result" in got.output
    assert result.read_bytes() == before
    # --out and --key on one file (a symlink to the other) is still refused.
    other = tmp_path / "other.json"
    other.write_text("{}")
    (tmp_path / "other-link.json").symlink_to(other)
    got = _cli("audit", "sample", result, "--out", other, "--key", tmp_path / "other-link.json")
    assert got.exit_code == 2 and "give two paths" in got.output and other.read_text() == "{}"
    # Distinct paths work.
    got = _cli("audit", "sample", result, "--n", "5", "--out", tmp_path / "audit.jsonl", "--key",
               tmp_path / "key.json")
    assert got.exit_code == 0, got.output
    assert result.read_bytes() == before


def test_sample_refuses_an_output_that_is_the_runs_records_or_grades(run, tmp_path):
    result = _write(tmp_path / "result.json", run["result"])
    records, grades = run["records"], run["records"].parent / GRADES_FILE
    kept = {records: records.read_bytes(), grades: grades.read_bytes()}
    for out, key in ((records, tmp_path / "key.json"), (tmp_path / "audit.jsonl", grades)):
        got = _cli("audit", "sample", result, "--out", out, "--key", key)
        assert got.exit_code == 2 and "would overwrite the run's" in got.output, got.output
        assert {p: p.read_bytes() for p in kept} == kept
        assert not (tmp_path / "key.json").exists() and not (tmp_path / "audit.jsonl").exists()


def test_score_refuses_an_output_that_is_the_labelled_file_or_the_key(run, tmp_path):
    result = _write(tmp_path / "result.json", run["result"])
    audit, key = tmp_path / "audit.jsonl", tmp_path / "audit-key.json"
    assert _cli("audit", "sample", result, "--n", "6", "--out", audit, "--key", key).exit_code == 0
    mapping = json.loads(key.read_text())["items"]
    labelled = [{**json.loads(line), "human_verdict": mapping[json.loads(line)["audit_id"]]["pipeline_verdict"]}
                for line in audit.read_text().splitlines()]
    audit.write_text("".join(json.dumps(item) + "\n" for item in labelled))
    kept = {audit: audit.read_bytes(), key: key.read_bytes()}
    (tmp_path / "audit-link.jsonl").symlink_to(audit)
    (tmp_path / "key-link.json").symlink_to(key)
    for out, what in ((audit, "the labelled audit file"), (key, "the key"),
                      (tmp_path / "audit-link.jsonl", "the labelled audit file"),
                      (tmp_path / "key-link.json", "the key"), (tmp_path / "x" / ".." / "audit-key.json", "the key")):
        got = _cli("audit", "score", audit, "--key", key, "--out", out)
        assert got.exit_code == 2, got.output
        assert f"the same file as {what}" in got.output and "Traceback" not in got.output
        assert {p: p.read_bytes() for p in kept} == kept
    # Given through a symlink, the real path as --out is refused as well.
    got = _cli("audit", "score", tmp_path / "audit-link.jsonl", "--key", tmp_path / "key-link.json", "--out", key)
    assert got.exit_code == 2 and "the same file as the key" in got.output
    assert {p: p.read_bytes() for p in kept} == kept
    score = tmp_path / "audit-score.json"
    got = _cli("audit", "score", audit, "--key", key, "--out", score)
    assert got.exit_code == 0, got.output
    assert json.loads(score.read_text())["overall"]["agreement"] == 1.0


# -- the grades behind the result --------------------------------------------------------------


def test_sample_refuses_grades_rewritten_since_the_result(run, tmp_path):
    grades = run["records"].parent / GRADES_FILE
    config = run["result"]["receipt"]["config"]
    # The result's own hash: sampled as before.
    same = {**run["result"], "receipt": {**run["result"]["receipt"],
                                         "config": {**config, "grades_sha256": _sha(grades)}}}
    assert sample_audit(_write(tmp_path / "same.json", same), 5, tmp_path / "a.jsonl", tmp_path / "k.json") == 5
    # Another invocation's hash (a later --resume rewrote grades.jsonl): refused, nothing written.
    stale = {**run["result"], "receipt": {**run["result"]["receipt"],
                                          "config": {**config, "grades_sha256": "0" * 64}}}
    stale_path = _write(tmp_path / "stale.json", stale)
    with pytest.raises(AuditError) as info:
        sample_audit(stale_path, 5, tmp_path / "b.jsonl", tmp_path / "kb.json")
    assert str(info.value) == (f"{grades} changed since {stale_path} was written (a later invocation of run "
                               f"{config['run_id']} rewrote it): sample from that invocation's result.json")
    assert not (tmp_path / "b.jsonl").exists() and not (tmp_path / "kb.json").exists()
    got = _cli("audit", "sample", stale_path, "--out", tmp_path / "b.jsonl", "--key", tmp_path / "kb.json")
    assert got.exit_code == 2 and "changed since" in got.output
    assert not (tmp_path / "b.jsonl").exists() and not (tmp_path / "kb.json").exists()
    # A result from before the hash was recorded: sampled from the file as it is.
    old = {**run["result"], "receipt": {**run["result"]["receipt"],
                                        "config": {k: v for k, v in config.items() if k != "grades_sha256"}}}
    assert sample_audit(_write(tmp_path / "old.json", old), 5, tmp_path / "c.jsonl", tmp_path / "kc.json") == 5


def test_a_relative_records_path_is_found_next_to_the_result_then_in_the_working_folder(run, tmp_path,
                                                                                         monkeypatch):
    records = run["records"]
    runs_root = records.parent.parent  # <root>/runs
    config = run["result"]["receipt"]["config"]
    relative = os.path.relpath(records, runs_root.parent)  # runs/<run id>/records.jsonl
    older = {**run["result"], "receipt": {**run["result"]["receipt"], "config": {**config, "records": relative}}}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # Next to the result (the run's parent folder), run from another working folder.
    beside = _write(runs_root.parent / "older-result.json", older)
    monkeypatch.chdir(elsewhere)
    assert sample_audit(beside, 4, tmp_path / "a.jsonl", tmp_path / "ka.json") == 4
    # Kept elsewhere: the path is taken relative to the working folder.
    away = _write(tmp_path / "away" / "older-result.json", older)
    monkeypatch.chdir(runs_root.parent)
    assert sample_audit(away, 4, tmp_path / "b.jsonl", tmp_path / "kb.json") == 4
    # Found in neither: the records are gone.
    monkeypatch.chdir(elsewhere)
    with pytest.raises(AuditError, match="records or grades are gone"):
        sample_audit(away, 4, tmp_path / "c.jsonl", tmp_path / "kc.json")

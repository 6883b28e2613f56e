"""The action's steps run locally through the scripts it calls (issue 21, item 4).

``scripts/gate.sh`` is the action's gate step; here it gates one real keyword run (two ci
scenarios, in process) given as ``RESULT``, in a scratch git repository whose ``HEAD`` plays
the base branch, with ``GITHUB_OUTPUT`` and ``GITHUB_STEP_SUMMARY`` pointed at temp files
as on a runner. ``scripts/action.sh``'s key steps run the same way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.contract.result import ResultDocument
from conformance.gate.baseline import baseline_from_result, dumps
from conformance.runner.job import run_job

REPO = Path(__file__).resolve().parents[2]
GATE = REPO / "scripts" / "gate.sh"
ACTION = REPO / "scripts" / "action.sh"
SCENARIOS = ("ua-short-001", "mp-short-002")
needs_git = pytest.mark.skipif(subprocess.run(["git", "--version"], capture_output=True).returncode != 0,
                               reason="needs git")


@pytest.fixture(scope="module")
def keyword_run(tmp_path_factory) -> ResultDocument:
    root = tmp_path_factory.mktemp("corpus")
    for folder, suffix in (("fixtures", ".jsonl"), ("gold", ".json")):
        (root / folder).mkdir()
        for sid in SCENARIOS:
            (root / folder / f"{sid}{suffix}").write_bytes((REPO / folder / f"{sid}{suffix}").read_bytes())
    return run_job(["keyword"], root / "fixtures", root / "gold", records_dir=root / "runs", n_boot=200)


def repository(tmp_path: Path, baseline: str | None = None, at: str = "baselines/main.json") -> Path:
    """A git repository whose one commit (HEAD, the base branch) holds ``baseline`` at ``at``."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README").write_text("a memory system\n")
    if baseline is not None:
        (repo / at).parent.mkdir(parents=True, exist_ok=True)
        (repo / at).write_text(baseline)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    return repo


def step(tmp_path: Path, repo: Path, result: ResultDocument | Path, **env) -> tuple[subprocess.CompletedProcess, dict]:
    """Run the gate step as the action does; returns the process and the outputs it set."""
    if isinstance(result, ResultDocument):
        path = tmp_path / "result-in.json"
        path.write_text(result.model_dump_json(indent=2))
        result = path
    outputs, summary = tmp_path / "github_output", tmp_path / "step_summary.md"
    full = {**os.environ, "DRIFT": f"{sys.executable} -m conformance.cli", "BASE_REF": "HEAD", "RESULT": str(result),
            "OUT_DIR": str(tmp_path / "out"), "GITHUB_OUTPUT": str(outputs), "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_ACTIONS": "true", "PYTHONPATH": str(REPO), "REPORT": "false", **env}
    full.pop("SUMMARY", None)
    proc = subprocess.run(["bash", str(GATE)], cwd=repo, env=full, capture_output=True, text=True, timeout=600)
    lines = outputs.read_text().splitlines() if outputs.exists() else []
    return proc, dict(line.split("=", 1) for line in lines)


def degrade(run: ResultDocument) -> tuple[ResultDocument, str]:
    """A copy of ``run`` in which one gold item that passed fails; returns it and the item."""
    degraded = ResultDocument.model_validate(json.loads(run.model_dump_json()))
    cell = next(c for c in degraded.systems["keyword"].gate.cells.values() if c.gold_total > c.gold_failed)
    item = next(i for i in cell.items if i not in cell.failed)
    cell.failed, cell.gold_failed = sorted({*cell.failed, item}), cell.gold_failed + 1
    return degraded, item


def notices(proc: subprocess.CompletedProcess, level: str) -> list[str]:
    return [line for line in proc.stdout.splitlines() if line.startswith(f"::{level} ")]


@needs_git
def test_first_pull_request_without_a_baseline_passes_with_a_notice(tmp_path, keyword_run):
    proc, out = step(tmp_path, repository(tmp_path), keyword_run, REPORT="true")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert out["verdict"] == "no-baseline" and out["exit-code"] == "0"
    (notice,) = notices(proc, "notice")
    command = "drift-conformance --adapter keyword --update-baseline"
    assert "no baseline at HEAD:baselines/main.json yet" in notice and f"`{command}`" in notice
    assert "commit baselines/main.json to the base branch" in notice
    summary = (tmp_path / "step_summary.md").read_text()
    assert "NO-BASELINE (exit 0)" in summary and command in summary
    # The run's own baseline is an output (and in the artifact), byte for byte what the command writes.
    assert Path(out["baseline"]).read_text() == dumps(baseline_from_result(keyword_run))
    assert Path(out["result"]).is_file() and Path(out["report"]).read_text().lstrip().startswith("<!")
    assert json.loads(Path(out["gate"]).read_text())["verdict"] == "no-baseline"


@needs_git
def test_a_first_pull_request_that_adds_its_baseline(tmp_path, keyword_run):
    """The change that adds the baseline passes when the file equals its run; a file that does
    not (made from another run) is a baseline_mismatch, as in bless mode: once merged it gates."""
    repo = repository(tmp_path)
    (repo / "baselines").mkdir()
    (repo / "baselines" / "main.json").write_text(dumps(baseline_from_result(keyword_run)))
    proc, out = step(tmp_path, repo, keyword_run)
    assert proc.returncode == 0 and out["verdict"] == "no-baseline", proc.stdout[-3000:]
    assert "the baselines/main.json this change commits equals this run" in notices(proc, "notice")[0]
    (repo / "baselines" / "main.json").write_text(dumps(baseline_from_result(degrade(keyword_run)[0])))
    proc, out = step(tmp_path, repo, keyword_run)
    assert proc.returncode == 1 and out["verdict"] == "regression"
    assert "baseline_mismatch" in notices(proc, "error")[0]


@needs_git
def test_without_allow_missing_a_missing_baseline_is_inconclusive(tmp_path, keyword_run):
    proc, out = step(tmp_path, repository(tmp_path), keyword_run, ALLOW_MISSING="false")
    assert proc.returncode == 2 and out["verdict"] == "inconclusive"
    assert "commits no baseline at baselines/main.json" in notices(proc, "error")[0]


@needs_git
def test_a_regression_exits_1_with_the_findings_annotated(tmp_path, keyword_run):
    repo = repository(tmp_path, dumps(baseline_from_result(keyword_run)))
    proc, out = step(tmp_path, repo, keyword_run)
    assert proc.returncode == 0 and out["verdict"] == "pass" and not notices(proc, "error"), proc.stdout[-3000:]
    degraded, item = degrade(keyword_run)
    proc, out = step(tmp_path, repo, degraded)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert out["verdict"] == "regression" and out["exit-code"] == "1"
    (error,) = notices(proc, "error")
    assert f"newly_failed:keyword:{item}" in error and "%0A" in error  # one annotation, lines escaped
    assert "REGRESSION (exit 1)" in (tmp_path / "step_summary.md").read_text()


@needs_git
def test_errors_exit_2(tmp_path, keyword_run):
    repo = repository(tmp_path)
    proc, out = step(tmp_path, repo, tmp_path / "no-such-result.json")
    assert proc.returncode == 2 and out == {"verdict": "error", "exit-code": "2"}
    assert "the gated run failed" in notices(proc, "error")[0]
    proc, out = step(tmp_path, repo, keyword_run, BASE_REF="no-such-branch")  # an unknown ref is no "first PR"
    assert proc.returncode == 2 and out["verdict"] == "inconclusive"


@needs_git
def test_a_corpus_change_says_how_to_rebless(tmp_path, keyword_run):
    old = baseline_from_result(keyword_run).model_copy(update={"corpus_version": "1.0.0", "fixtures_hash": "0" * 64})
    repo = repository(tmp_path, dumps(old), at="gate/drift.json")
    moved = json.loads(keyword_run.model_dump_json())
    moved["receipt"]["versions"]["corpus"] = "2.0.0"
    proc, out = step(tmp_path, repo, ResultDocument.model_validate(moved), BASELINE="gate/drift.json")
    assert proc.returncode == 2 and out["verdict"] == "inconclusive"
    (error,) = notices(proc, "error")
    assert "corpus changed from 1.0.0 to 2.0.0" in error
    assert "re-bless with `drift-conformance --adapter keyword --compare gate/drift.json --update-baseline`" in error
    assert "commit gate/drift.json in this change" in error


def test_the_suite_key_follows_the_suite_source(tmp_path):
    """The suite's cache key: a hash of what a wheel of the action's checkout packs, or of the
    release named, with the interpreter's full version."""
    def key(**env) -> str:
        full = {**os.environ, "PYTHON": sys.executable, "ACTION_PATH": str(tmp_path / "suite"), **env}
        full.pop("GITHUB_OUTPUT", None)
        proc = subprocess.run(["bash", str(ACTION), "suite"], env=full, capture_output=True, text=True, check=True)
        return dict(line.split("=", 1) for line in proc.stdout.splitlines())["key"]

    (tmp_path / "suite" / "conformance").mkdir(parents=True)
    (tmp_path / "suite" / "pyproject.toml").write_text("[project]\n")
    (tmp_path / "suite" / "conformance" / "a.py").write_text("A = 1\n")
    first = key()
    assert first.startswith(f"drift-suite-") and f"-py{'.'.join(map(str, sys.version_info[:3]))}-" in first
    (tmp_path / "suite" / "tests").mkdir()
    (tmp_path / "suite" / "tests" / "t.py").write_text("# not packed\n")
    assert key() == first
    (tmp_path / "suite" / "conformance" / "a.py").write_text("A = 2\n")
    assert key() != first
    assert key(SUITE_VERSION="0.4.0") != key(SUITE_VERSION="0.4.1")


def test_the_venv_step_outputs_the_suites_own_cache_key(tmp_path):
    """The action's cache key of the adapters' virtualenvs is what ``drift-conformance cache-key``
    prints (so the suite's own hashes), and prune keeps exactly the folders listed there."""
    suite = tmp_path / "suite"
    (suite / "bin").mkdir(parents=True)
    (suite / "bin" / "python").symlink_to(sys.executable)
    (suite / "bin" / "drift-conformance").write_text(f"#!/bin/sh\nexec {sys.executable} -m conformance.cli \"$@\"\n")
    (suite / "bin" / "drift-conformance").chmod(0o755)
    cache = tmp_path / "cache"
    env = {**os.environ, "SUITE_DIR": str(suite), "DRIFT_CACHE_DIR": str(cache), "ADAPTERS": "keyword",
           "GITHUB_OUTPUT": str(tmp_path / "out"), "PYTHONPATH": str(REPO)}
    subprocess.run(["bash", str(ACTION), "venvs"], env=env, capture_output=True, text=True, check=True)
    out = dict(line.split("=", 1) for line in (tmp_path / "out").read_text().splitlines())
    own = subprocess.run([sys.executable, "-m", "conformance.cli", "cache-key", "--adapter", "keyword"], env=env,
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out["key"] == own and own.startswith(out["restore-prefix"]) and out["dir"] == str(cache)
    used = json.loads((cache / "cache-key.json").read_text())["venvs"]
    for name in [*used, "keyword-000000000000"]:
        (cache / "venvs" / name).mkdir(parents=True)
    subprocess.run(["bash", str(ACTION), "prune"], env=env, capture_output=True, text=True, check=True)
    assert sorted(p.name for p in (cache / "venvs").iterdir()) == sorted(used)

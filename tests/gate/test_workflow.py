"""The local gate script (the same steps as the workflow and the action) and the GitHub files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conformance.gate.baseline import DEFAULT_BASELINE

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "gate.sh"
DEGRADED = Path(__file__).resolve().parent / "degraded-keyword"


def committed_baseline() -> bool:
    proc = subprocess.run(["git", "-C", str(REPO), "cat-file", "-e", "HEAD:baselines/main.json"],
                          capture_output=True)
    return proc.returncode == 0


needs_git = pytest.mark.skipif(not (REPO / ".git").exists() or not committed_baseline(),
                               reason="needs a git checkout whose HEAD commits baselines/main.json")


def gate(tmp_path: Path, **env) -> subprocess.CompletedProcess:
    full = {**os.environ, "DRIFT": f"{sys.executable} -m conformance.cli", "BASE_REF": "HEAD",
            "OUT_DIR": str(tmp_path / "out"), "SUMMARY": str(tmp_path / "summary.md"), **env}
    full.pop("GITHUB_STEP_SUMMARY", None)
    return subprocess.run(["bash", str(SCRIPT)], cwd=REPO, env=full, capture_output=True, text=True, timeout=900)


@needs_git
def test_local_gate_passes_against_the_committed_baseline(tmp_path):
    proc = gate(tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert json.loads((tmp_path / "out" / "gate.json").read_text())["verdict"] == "pass"
    assert "drift-conformance gate: PASS (exit 0)" in (tmp_path / "summary.md").read_text()


@needs_git
def test_local_gate_fails_a_degraded_adapter_with_a_diff(tmp_path):
    proc = gate(tmp_path, ADAPTERS=str(DEGRADED))
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = (tmp_path / "summary.md").read_text()
    assert "REGRESSION (exit 1)" in summary and "newly_failed:keyword:" in summary


def test_a_run_that_fails_is_an_error_not_a_regression(tmp_path):
    proc = gate(tmp_path, ADAPTERS="no-such-adapter", BASE_REF="")
    assert proc.returncode == 2
    assert "ERROR (exit 2)" in (tmp_path / "summary.md").read_text()


def test_workflow_gates_against_the_base_branch_with_the_script():
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "ci.yml").read_text())
    gate_job = workflow["jobs"]["gate"]
    assert gate_job["needs"] == "tests"
    steps = gate_job["steps"]
    assert steps[0]["with"]["fetch-depth"] == 0
    run = next(s for s in steps if "scripts/gate.sh" in s.get("run", ""))
    assert "github.base_ref" in run["env"]["BASE_REF"]
    assert any(".ci/run" in s.get("run", "") for s in workflow["jobs"]["tests"]["steps"])


def test_action_inputs_and_steps():
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert set(action["inputs"]) == {"adapter", "baseline", "include-holdout", "suite-version", "python-version",
                                     "cache", "artifact", "shard", "shards"}
    assert action["inputs"]["adapter"]["required"] is True
    # One default baseline path: the one --update-baseline writes and scripts/gate.sh reads.
    assert action["inputs"]["baseline"]["default"] == DEFAULT_BASELINE
    assert f'BASELINE="${{BASELINE:-{DEFAULT_BASELINE}}}"' in SCRIPT.read_text()
    assert set(action["outputs"]) == {"verdict", "exit-code", "result", "report", "gate", "baseline", "shard-dir"}
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    gate_step = next(s for s in steps if s.get("id") == "gate")
    assert "github.base_ref" in gate_step["env"]["BASE_REF"] and "scripts/gate.sh" in gate_step["run"]
    assert "drift-conformance==" in (REPO / "scripts" / "action.sh").read_text()
    # The caller's Python is left alone: setup-python, when used, does not touch PATH.
    python = next(s for s in steps if str(s.get("uses", "")).startswith("actions/setup-python@"))
    assert python["with"]["update-environment"] is False
    # The verdict fails the job last, after the caches are saved.
    assert "exit" in steps[-1]["run"] and "steps.gate.outputs.exit-code" in steps[-1]["env"]["EXIT_CODE"]
    # A matrix job (shard and shards) runs its shard and never gates: the merge job gates (docs/scale-out.md).
    shard_step = next(s for s in steps if s.get("id") == "shard")
    assert shard_step["if"] == "inputs.shards != ''" and '--shard "$SHARD/$SHARDS"' in shard_step["run"]
    assert gate_step["if"] == steps[-1]["if"] == "inputs.shards == ''"

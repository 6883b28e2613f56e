"""``breaking_changes`` on small hand-written schemas (one test per kind of change, each with
its compatible counterpart so a checker that reports everything, or nothing, fails), on the
real published schemas, and ``drift-conformance schema --check-compat`` on the committed tree."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli.schemas import VERSION_KEY, history_name, render_schemas
from conformance.contract.compat import breaking_changes
from conformance.runner.formats import schema_versions

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "schema"


def obj(properties: dict, required=(), **extra) -> dict:
    return {"type": "object", "properties": properties, "required": list(required), **extra}


STR, INT, NUM, NULL = {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "null"}


# -- a property removed --------------------------------------------------------------------------

def test_removed_property_is_breaking_and_an_added_optional_one_is_not():
    old = obj({"a": STR, "b": INT}, required=["a"])
    assert breaking_changes(old, obj({"a": STR}, required=["a"])) == ["$.b: property removed"]
    assert breaking_changes(old, obj({"a": STR, "b": INT, "c": NUM}, required=["a"])) == []


def test_removed_property_is_found_through_refs_maps_and_arrays():
    def doc(item_props):
        row = obj({"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}}})
        return {"$defs": {"Item": obj(item_props), "Row": row},
                **obj({"rows": {"type": "object", "additionalProperties": {"$ref": "#/$defs/Row"}}})}

    assert breaking_changes(doc({"x": INT, "y": STR}), doc({"x": INT})) == ["$.rows.*.items[*].y: property removed"]
    assert breaking_changes(doc({"x": INT}), doc({"x": INT, "y": STR})) == []


def test_removed_property_inside_an_optional_model():
    def doc(props):
        gate = {"anyOf": [{"$ref": "#/$defs/Gate"}, NULL], "default": None}
        return {"$defs": {"Gate": obj(props)}, **obj({"gate": gate})}

    assert breaking_changes(doc({"cells": INT, "why": STR}), doc({"cells": INT})) == ["$.gate.why: property removed"]


# -- a new required field ------------------------------------------------------------------------

def test_new_required_field_is_breaking():
    old = obj({"a": STR})
    assert breaking_changes(old, obj({"a": STR, "b": INT}, required=["b"])) == ["$.b: field newly required (was new)"]


def test_optional_field_made_required_is_breaking_and_required_made_optional_is_not():
    assert breaking_changes(obj({"a": STR}), obj({"a": STR}, required=["a"])) == [
        "$.a: field newly required (was optional)"]
    assert breaking_changes(obj({"a": STR}, required=["a"]), obj({"a": STR})) == []


# -- a narrowed enum -----------------------------------------------------------------------------

def test_enum_narrowed_is_breaking_and_widened_is_not():
    old = {"type": "string", "enum": ["a", "b", "c"]}
    assert breaking_changes(old, {"type": "string", "enum": ["a", "b"]}) == ['$: enum narrowed: removed "c"']
    assert breaking_changes(old, {"type": "string", "enum": ["a", "b", "c", "d"]}) == []
    assert breaking_changes(old, STR) == []  # enum dropped: any string


def test_enum_added_where_any_value_was_allowed_is_breaking():
    found = breaking_changes(obj({"kind": STR}), obj({"kind": {"type": "string", "enum": ["x"]}}))
    assert found == ['$.kind: enum added: values restricted to "x" (any was allowed)']


# -- a narrowed type -----------------------------------------------------------------------------

def test_type_removed_from_a_type_list_is_breaking():
    old = obj({"v": {"type": ["number", "null"]}})
    assert breaking_changes(old, obj({"v": {"type": "number"}})) == [
        "$.v: type narrowed: number|null -> number (null no longer allowed)"]
    assert breaking_changes(obj({"v": {"type": "number"}}), old) == []


def test_type_removed_from_an_anyof_is_breaking():
    old = obj({"v": {"anyOf": [NUM, NULL]}})
    assert breaking_changes(old, obj({"v": NUM})) == [
        "$.v: type narrowed: number|null -> number (null no longer allowed)"]
    assert breaking_changes(obj({"v": NUM}), old) == []


def test_type_changed_is_breaking_and_integer_to_number_is_a_widening():
    assert breaking_changes(obj({"v": STR}), obj({"v": INT})) == [
        "$.v: type narrowed: string -> integer (string no longer allowed)"]
    assert breaking_changes(obj({"v": INT}), obj({"v": NUM})) == []
    assert breaking_changes(obj({"v": NUM}), obj({"v": INT})) == [
        "$.v: type narrowed: number -> integer (number no longer allowed)"]


def test_untyped_made_typed_is_breaking_and_typed_made_untyped_is_not():
    assert breaking_changes(obj({"v": {}}), obj({"v": STR})) == [
        "$.v: type narrowed: any -> string (any no longer allowed)"]
    assert breaking_changes(obj({"v": STR}), obj({"v": {"description": "anything"}})) == []


def test_union_alternative_removed_is_breaking():
    defs = {"A": obj({"kind": {"const": "a", "type": "string"}, "x": INT}, required=["kind"]),
            "B": obj({"kind": {"const": "b", "type": "string"}, "y": STR}, required=["kind"])}
    old = {"$defs": defs, "oneOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]}
    new = {"$defs": defs, "oneOf": [{"$ref": "#/$defs/A"}]}
    found = breaking_changes(old, new)
    assert len(found) == 1 and found[0].startswith("$: type narrowed: alternative B no longer accepted")
    assert breaking_changes(new, old) == []
    # reordered alternatives are matched by name, not position
    assert breaking_changes(old, {"$defs": defs, "oneOf": [{"$ref": "#/$defs/B"}, {"$ref": "#/$defs/A"}]}) == []


# -- a changed const -----------------------------------------------------------------------------

def test_const_changed_is_breaking():
    old = obj({"kind": {"type": "string", "const": "session"}})
    assert breaking_changes(old, obj({"kind": {"type": "string", "const": "turn"}})) == [
        '$.kind: const changed from "session" to "turn"']
    assert breaking_changes(old, copy.deepcopy(old)) == []
    # a const widened into an enum that keeps its value is fine
    assert breaking_changes(old, obj({"kind": {"type": "string", "enum": ["session", "turn"]}})) == []


def test_const_added_is_breaking():
    assert breaking_changes(obj({"v": STR}), obj({"v": {"type": "string", "const": "1"}})) == [
        '$.v: const added: values restricted to "1" (any was allowed)']


# -- additionalProperties newly false ------------------------------------------------------------

@pytest.mark.parametrize("open_form", [{}, {"additionalProperties": True}, {"additionalProperties": STR}])
def test_additional_properties_newly_false_is_breaking(open_form):
    old = obj({"a": STR}, **open_form)
    assert breaking_changes(old, obj({"a": STR}, additionalProperties=False)) == [
        "$: additionalProperties newly false (extra keys were allowed)"]


def test_additional_properties_opened_or_kept_false_is_not_breaking():
    closed = obj({"a": STR}, additionalProperties=False)
    assert breaking_changes(closed, obj({"a": STR})) == []
    assert breaking_changes(closed, copy.deepcopy(closed)) == []


def test_map_values_are_compared():
    old = {"type": "object", "additionalProperties": {"type": ["number", "null"]}}
    new = {"type": "object", "additionalProperties": NUM}
    assert breaking_changes(old, new) == ["$.*: type narrowed: number|null -> number (null no longer allowed)"]


# -- the walk itself -----------------------------------------------------------------------------

def test_recursive_schemas_terminate():
    node = {"$defs": {"Node": obj({"name": STR, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}})},
            "$ref": "#/$defs/Node"}
    assert breaking_changes(node, copy.deepcopy(node)) == []
    smaller = copy.deepcopy(node)
    del smaller["$defs"]["Node"]["properties"]["name"]
    assert breaking_changes(node, smaller) == ["$.name: property removed"]


def test_tuple_positions_are_compared():
    old = {"type": "array", "prefixItems": [INT, INT]}
    assert breaking_changes(old, {"type": "array", "prefixItems": [INT, NUM]}) == []
    assert breaking_changes(old, {"type": "array", "prefixItems": [INT, STR]}) == [
        "$[1]: type narrowed: integer -> string (integer no longer allowed)"]


def test_non_local_ref_is_an_error():
    with pytest.raises(ValueError, match="only local"):
        breaking_changes({"$ref": "https://example.invalid/x.json"}, {})
    with pytest.raises(ValueError, match="does not resolve"):
        breaking_changes({"$ref": "#/$defs/Missing"}, {})


def test_arguments_are_not_modified():
    old = {"$defs": {"A": obj({"a": STR})}, **obj({"x": {"anyOf": [{"$ref": "#/$defs/A"}, NULL]}})}
    new = {"$defs": {"A": obj({})}, **obj({"x": {"$ref": "#/$defs/A"}})}
    before = copy.deepcopy((old, new))
    assert breaking_changes(old, new)
    assert (old, new) == before


# -- the real schemas ----------------------------------------------------------------------------

def published(name: str) -> dict:
    return json.loads((SCHEMA / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(render_schemas()))
def test_each_published_schema_has_a_version_and_a_snapshot_of_it(name):
    schema = published(name)
    version = schema[VERSION_KEY]
    snapshot = json.loads((SCHEMA / "history" / history_name(name, version)).read_text(encoding="utf-8"))
    assert snapshot[VERSION_KEY] == version
    assert breaking_changes(snapshot, schema) == []


def test_the_receipt_records_the_version_of_every_published_schema():
    """The receipt's ``schema:<format>`` versions (runner) and the generated schemas (beside the
    CLI) name the same formats with the same versions."""
    generated = {name.removesuffix(".schema.json"): json.loads(text)[VERSION_KEY]
                 for name, text in render_schemas().items()}
    assert schema_versions() == generated


def test_an_optional_field_added_to_the_result_is_compatible_and_its_removal_is_not():
    """The result schema before and after the CI gate's optional fields (``gate``, ``selection_hash``)."""
    current = published("result.schema.json")
    before = copy.deepcopy(current)
    del before["$defs"]["SystemResult"]["properties"]["gate"]
    del before["$defs"]["Receipt"]["properties"]["selection_hash"]
    for name in ("GateView", "GateCell"):
        del before["$defs"][name]
    assert breaking_changes(before, current) == []
    assert breaking_changes(current, before) == ["$.receipt.selection_hash: property removed",
                                                 "$.systems.*.gate: property removed"]


def test_real_narrowing_of_the_result_is_reported_at_every_place_it_reaches():
    current = published("result.schema.json")
    narrowed = copy.deepcopy(current)
    narrowed["$defs"]["MetricValue"]["properties"]["value"] = {"type": "number"}
    found = breaking_changes(current, narrowed)
    assert "$.systems.*.metrics.*.value: type narrowed: number|null -> number (null no longer allowed)" in found
    assert "$.systems.*.paired_vs_none.*.value: type narrowed: number|null -> number (null no longer allowed)" in found


# -- historic result files stay loadable ----------------------------------------------------------

# Real result.json files written by released versions of drift-conformance, one per result
# schema_version: result-v<schema_version>.json. Each released result schema_version adds a
# file here (a short run, e.g. `drift-conformance --adapter keyword --scenario crw-short-002
# --out result.json`, committed untrimmed); none is ever removed or edited, so every result a
# foreign repository kept stays loadable by the current model and valid under the current schema.
RESULTS = Path(__file__).resolve().parent / "data" / "results"


def historic_results() -> list[Path]:
    return sorted(RESULTS.glob("result-v*.json"))


def test_there_is_a_historic_result_of_the_current_schema_version():
    from conformance.contract.result import RESULT_SCHEMA_VERSION

    assert RESULTS / f"result-v{RESULT_SCHEMA_VERSION}.json" in historic_results(), (
        f"add a result.json written by this version as {RESULTS}/result-v{RESULT_SCHEMA_VERSION}.json")


@pytest.mark.parametrize("path", historic_results(), ids=lambda p: p.name)
def test_historic_result_loads_with_the_current_model_and_schema(path):
    import jsonschema

    from conformance.contract.result import ResultDocument

    raw = path.read_text(encoding="utf-8")
    doc = ResultDocument.model_validate_json(raw)  # extra="forbid": a dropped field fails here
    assert path.name == f"result-v{doc.schema_version}.json"
    assert doc.systems and doc.receipt.scenarios
    jsonschema.validate(json.loads(raw), published("result.schema.json"))


# -- drift-conformance schema --check-compat -----------------------------------------------------

def cli(*args, cwd):
    exe = shutil.which("drift-conformance", path=str(Path(sys.executable).parent))
    command = [exe] if exe else [sys.executable, "-m", "conformance.cli"]
    return subprocess.run([*command, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_committed_schemas_pass_check_compat(tmp_path):
    proc = cli("schema", "--check", "--check-compat", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    for name in render_schemas():
        assert f"{name}: version" in proc.stdout


@pytest.fixture
def schema_copy(tmp_path):
    """A copy of schema/ (with history/) to break on purpose."""
    shutil.copytree(SCHEMA, tmp_path / "schema")
    return tmp_path / "schema"


def test_check_compat_lists_breaking_changes_against_the_newest_snapshot(schema_copy, tmp_path):
    # An older snapshot that still had a property the current schema lacks, and a newer one
    # of the same version that had it too: the newest (by version) is the one compared.
    snapshot = schema_copy / "history" / "result.v1.json"
    doc = json.loads(snapshot.read_text())
    doc["$defs"]["Receipt"]["properties"]["operator"] = {"type": "string"}
    snapshot.write_text(json.dumps(doc))
    (schema_copy / "history" / "result.v0.json").write_text(json.dumps({**doc, VERSION_KEY: "0"}))
    proc = cli("schema", "--check-compat", "--out", str(schema_copy), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout.count("compatible with") == len(render_schemas()) - 1  # every other schema
    assert "result.schema.json: 1 breaking change(s)" in proc.stderr
    assert "result.v1.json" in proc.stderr and "$.receipt.operator: property removed" in proc.stderr
    assert "bump" in proc.stderr


def test_check_compat_asks_for_a_snapshot_after_a_version_bump(schema_copy, tmp_path):
    # The current version (1) is above the newest snapshot (0): a new snapshot must be added.
    snapshot = schema_copy / "history" / "gold.v1.json"
    doc = json.loads(snapshot.read_text())
    snapshot.unlink()
    (schema_copy / "history" / "gold.v0.json").write_text(json.dumps({**doc, VERSION_KEY: "0"}))
    proc = cli("schema", "--check-compat", "--out", str(schema_copy), cwd=tmp_path)
    assert proc.returncode == 2
    assert "gold.schema.json: schema_version bumped from 0 to 1; add the history snapshot" in proc.stderr
    assert "gold.v1.json" in proc.stderr


def test_check_compat_needs_a_snapshot_for_every_schema(schema_copy, tmp_path):
    (schema_copy / "history" / "adapter.v1.json").unlink()
    proc = cli("schema", "--check-compat", "--out", str(schema_copy), cwd=tmp_path)
    assert proc.returncode == 2
    assert "adapter.schema.json: no history snapshot" in proc.stderr


def test_check_compat_writes_nothing(schema_copy, tmp_path):
    before = {p: p.read_bytes() for p in schema_copy.rglob("*") if p.is_file()}
    (schema_copy / "result.schema.json").write_text("{}")  # stale on purpose; --check-compat reads the models
    before[schema_copy / "result.schema.json"] = b"{}"
    proc = cli("schema", "--check-compat", "--out", str(schema_copy), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert {p: p.read_bytes() for p in schema_copy.rglob("*") if p.is_file()} == before

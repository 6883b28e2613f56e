"""Run records are typed: each kind a pydantic model, told apart by ``kind``, written and read
through conformance/runner/records.py, published as schema/run-record.schema.json.

``data/records-v1.jsonl`` holds records as the runner wrote them before the models existed
(a keyword run of mp-short-001 under ``--gate soft:2``, hits cut to two per probe), plus
records of the kinds that run did not produce (fault, retry, restart, a probe not answered,
a probe answered by an answer model with a scope breach and a summary hit) in the shapes the
runner wrote them, and a store record of a run before ``--repeat`` and violations. Never
edit it: a record a past run wrote must stay readable.
"""

import json
from pathlib import Path

import jsonschema
import pytest

from conformance.contract.records import (
    RUN_RECORD,
    ProbeRecord,
    RunHeader,
    ScenarioDone,
    StateRecord,
    StoreRecord,
)
from conformance.runner.records import RecordsError, RecordWriter, iter_records, typed_records

HISTORIC = Path(__file__).resolve().parent / "data" / "records-v1.jsonl"
SCHEMA = Path(__file__).resolve().parents[2] / "schema" / "run-record.schema.json"


def test_every_historic_record_reads_as_its_kind():
    records = list(typed_records(HISTORIC))
    kinds = [r.kind for r in records]
    assert set(kinds) == {"run", "store", "probe", "state", "fault", "retry", "restart", "scenario_done"}
    assert kinds[0] == "run" and kinds[-1] == "scenario_done"
    header, done = records[0], records[-1]
    assert isinstance(header, RunHeader) and header.binding["adapters"][0] == "none"
    assert isinstance(done, ScenarioDone) and done.scenario_id == "mp-short-001"
    buffered = next(r for r in records if isinstance(r, ProbeRecord) and any(h.from_buffer for h in r.hits))
    assert buffered.hits[0].carried is not None and buffered.hits[1].from_buffer is True
    answered = next(r for r in records if isinstance(r, ProbeRecord) and r.answer_call is not None)
    assert answered.scope_breaches[0].rank == 1 and answered.hits[0].covers and answered.repeat == 2
    assert any(isinstance(r, StateRecord) and r.audit is not None for r in records)


def test_fields_added_later_read_with_their_defaults():
    old = [r for r in typed_records(HISTORIC, frozenset({"store"})) if "repeat" not in r.model_fields_set]
    assert len(old) == 1 and old[0].repeat == 1 and old[0].violations == []


def test_a_record_written_again_is_the_line_it_was_read_from():
    """The models keep every field a line had and add none (optional keys stay absent)."""
    for raw, record in zip(iter_records(HISTORIC), typed_records(HISTORIC), strict=True):
        assert json.loads(record.to_json()) == raw


def test_the_published_schema_accepts_every_historic_record_and_refuses_a_misspelt_one():
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    for raw in iter_records(HISTORIC):
        jsonschema.validate(raw, schema)
    store = next(r for r in iter_records(HISTORIC) if r["kind"] == "store")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**store, "write_latency": 1.0}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({k: v for k, v in store.items() if k != "kind"}, schema)


def test_the_writer_writes_a_model_as_one_sorted_line_without_unset_fields(tmp_path):
    path = tmp_path / "records.jsonl"
    writer = RecordWriter(path)
    writer.write(StoreRecord(system="keyword", scenario_id="ua-short-001", session_id="s1", write_latency_ms=1.5,
                             usage=None, items_stored=1, violations=[], error=None))
    writer.write(ScenarioDone(scenario_id="ua-short-001", failed_systems=[]))
    writer.close()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0]) == {"kind": "store", "system": "keyword", "scenario_id": "ua-short-001",
                                    "session_id": "s1", "write_latency_ms": 1.5, "usage": None, "items_stored": 1,
                                    "violations": [], "error": None}
    assert lines[1] == '{"failed_systems": [], "kind": "scenario_done", "scenario_id": "ua-short-001"}'
    with pytest.raises(ValueError):
        writer = RecordWriter(path)
        writer.write(StoreRecord(system="k", scenario_id="a", session_id="s", write_latency_ms=float("nan")))


def test_a_record_of_the_wrong_shape_is_an_error_naming_file_line_and_field(tmp_path):
    path = tmp_path / "records.jsonl"
    lines = HISTORIC.read_text(encoding="utf-8").splitlines(keepends=True)
    broken = json.loads(lines[1])
    broken["write_latency_ms"] = "fast"
    path.write_text(lines[0] + json.dumps(broken) + "\n", encoding="utf-8")
    with pytest.raises(RecordsError, match=r"records.jsonl: line 2 \(kind 'store'\): .*write_latency_ms"):
        list(typed_records(path))
    assert len(list(typed_records(path, frozenset({"run"})))) == 1  # other kinds are not read


def test_kind_tells_the_models_apart():
    with pytest.raises(ValueError, match="kind"):
        RUN_RECORD.validate_python({"kind": "checkpoint", "scenario_id": "a"})

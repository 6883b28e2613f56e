"""The scenario language: validation errors name the file and the field; the spec's example validates."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conformance.errors import DriftError
from conformance.world.entities import REGISTRY
from conformance.world.scenario import ScenarioError, ScenarioSpec, load_scenario, load_scenarios

REPO = Path(__file__).resolve().parents[2]
BASELINE = REPO / "scenarios" / "ua-baseline-001.yaml"


def _write(tmp_path: Path, doc: dict, name: str = "bad-001") -> Path:
    doc = dict(doc, id=name)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def _base() -> dict:
    return yaml.safe_load(BASELINE.read_text(encoding="utf-8"))


@pytest.mark.parametrize("mutate, field, expected", [
    (lambda d: d["entities"][1].update(type="robot"), "entities[1].type", "human"),
    (lambda d: d["entities"][0]["profile"]["big_five"].update(O=3), "entities[0].profile.big_five.O", "less than"),
    (lambda d: d["entities"][0]["profile"]["event_distribution"].update(lottery_win=0.1),
     "entities[0].profile.event_distribution", "job_change"),
    (lambda d: d["entities"][1].update(capability_profile={"context_window": "huge"}),
     "entities[1].capability_profile.context_window", "integer"),
    (lambda d: d["topology"][0].update(active=["principal", "ghost"]), "topology[0].active[1]", "ghost"),
    (lambda d: d["topology"][0].update(session_range=[0, 5]), "topology", "session 6"),
    (lambda d: d["checkpoints"][1].update(probe_types=["recall", "telepathy"]), "checkpoints[1].probe_types",
     "frontier"),
    (lambda d: d["checkpoints"][2].update(after_session=1001), "checkpoints[2].after_session", "1000"),
    (lambda d: (d["horizon"]["short"].update(sessions=50), d["horizon"]["medium"].update(sessions=50)), "horizon",
     "greater than"),
    (lambda d: d["horizon"]["short"].update(sessions=3000), "horizon", "outside the short horizon"),
    (lambda d: d["horizon"]["short"].update(session_gap_days=1), "horizon.short", "exactly one"),
    (lambda d: d.update(paradigm="solo"), "paradigm", "multi_peer"),
    (lambda d: d.update(noise_ratio=0.99), "noise_ratio", "0.85"),
    (lambda d: d.pop("checkpoints"), "checkpoints", "required"),
    (lambda d: d["entities"].append({"id": "principal", "type": "human"}), "entities[2].id", "duplicate"),
])
def test_a_bad_scenario_names_file_field_and_expectation(tmp_path, mutate, field, expected):
    doc = _base()
    mutate(doc)
    path = _write(tmp_path, doc)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    err = info.value
    assert isinstance(err, DriftError)
    assert err.field == field, str(err)
    assert str(err).startswith(f"{path}: {field}: ")
    assert expected in str(err)


def test_invalid_yaml_and_wrong_file_name(tmp_path):
    path = tmp_path / "broken-001.yaml"
    path.write_text("id: [unclosed\n", encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"broken-001.yaml: line \d+: invalid YAML"):
        load_scenario(path)
    other = _write(tmp_path, _base(), name="elsewhere-001")
    other.rename(tmp_path / "renamed-001.yaml")
    with pytest.raises(ScenarioError, match="renamed-001.yaml: id: expected the file name"):
        load_scenario(tmp_path / "renamed-001.yaml")


def test_the_spec_example_validates_with_cumulative_horizons():
    spec = load_scenario(BASELINE)
    assert spec.paradigm == "user_assistant" and spec.noise_ratio == 0.70 and spec.sessions == 1000
    assert spec.horizon.phases() == [("short", 1, 30, 8.0), ("medium", 31, 200, 72.0), ("long", 201, 1000, 336.0)]
    assert [spec.horizon.horizon_of(cp.after_session) for cp in spec.checkpoints] == ["short", "medium", "long"]
    human, assistant = spec.entities
    assert human.type == "human" and human.profile.big_five.O == 0.7
    assert human.profile.event_distribution == {"job_change": 0.02, "opinion_shift": 0.05, "habit_form": 0.10}
    assert assistant.type == "assistant_agent" and assistant.capability_profile.context_window == 200000
    assert assistant.capability_profile.tool_access == ["search", "code_interpreter"]
    assert spec.checkpoints[0].expanded() == ["fact_recall", "relationship_recall", "temporal_recall",
                                              "negative_recall", "action"]
    assert spec.holdout is False and spec.principal_id == "principal"


def test_every_registered_type_has_a_yaml_model():
    schema = ScenarioSpec.model_json_schema()
    text = str(schema)
    for name, cls in REGISTRY.items():
        assert cls.spec_model.model_fields["type"].annotation.__args__ == (name,)
        assert name in text


def test_the_library_validates_and_covers_paradigms_horizons_and_splits():
    specs = load_scenarios(REPO / "scenarios")
    assert len(specs) >= 60
    cells = {(s.paradigm, s.horizon_names()[-1]) for s in specs}
    assert cells == {(p, h) for p in ("user_assistant", "coding_agent", "crawler_agent", "multi_peer")
                     for h in ("short", "medium", "long")}
    assert sum(s.sessions >= 1000 for s in specs) >= 5
    holdout = [s.id for s in specs if s.holdout]
    assert 0.12 <= len(holdout) / len(specs) <= 0.18, holdout
    ci = [s for s in specs if "ci" in s.splits]
    for paradigm in ("user_assistant", "coding_agent", "crawler_agent", "multi_peer"):
        mine = [s for s in ci if s.paradigm == paradigm]
        assert len(mine) == 2 and all(s.horizon_names() == ["short"] and not s.holdout for s in mine)


def test_the_library_files_are_what_the_builder_writes(tmp_path):
    from conformance.world.library import write_library
    for path in write_library(tmp_path):
        assert path.read_bytes() == (REPO / "scenarios" / path.name).read_bytes(), path.name


def test_probe_types_the_scenario_cannot_produce_are_rejected(tmp_path):
    import yaml

    from conformance.world.scenario import ScenarioError, load_scenario

    source = Path(__file__).resolve().parents[2] / "scenarios" / "ua-baseline-001.yaml"
    data = yaml.safe_load(source.read_text())
    data["checkpoints"][0]["probe_types"] = ["recall", "multi_peer"]
    path = tmp_path / "ua-baseline-001.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert "checkpoints[0].probe_types" in str(err.value) and "paradigm multi_peer" in str(err.value)
    assert err.value.__suppress_context__ or err.value.__context__ is None

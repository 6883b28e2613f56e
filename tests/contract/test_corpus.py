"""Fixture validation: clear errors naming file, line and field; gold never in fixtures."""

import json

import pytest

from conformance.contract.corpus import CorpusError, fixtures_hash, iter_fixture, validate_corpus, write_fixture, write_gold
from conformance.contract.fixture import CheckpointLine, HeaderLine, HorizonPhase, EntityRef, Message, Probe, SessionLine
from conformance.contract.gold import GoldFile, GoldProbe

T = "2026-01-01T00:00:00Z"


def header(sid="sc-1"):
    return HeaderLine(scenario_id=sid, paradigm="user_assistant", source="test",
                      horizons=[HorizonPhase(name="short", sessions=1, session_gap_hours=8)],
                      entities=[EntityRef(entity_id="u", type="human")])


def session(i=0):
    return SessionLine(session_id=f"s{i}", index=i, time=T, participants=["u"],
                       messages=[Message(message_id=f"m{i}", author="u", role="user", text="I live in Rome", timestamp=T)])


def checkpoint():
    return CheckpointLine(checkpoint_id="c1", after_session=1, horizon="short",
                          probes=[Probe(probe_id="p1", asked_by="u", query="Where?", asked_at=T,
                                        options=["Rome", "unknown"])])


def write_corpus(tmp_path):
    write_fixture(tmp_path / "f" / "sc-1.jsonl", [header(), session(), checkpoint()])
    write_gold(tmp_path / "g" / "sc-1.json",
               GoldFile(scenario_id="sc-1", source="test",
                        probes=[GoldProbe(probe_id="p1", checkpoint_id="c1", probe_type="fact_recall", answer="Rome",
                                          evidence=["m0"])]))
    return tmp_path / "f", tmp_path / "g"


def test_valid_corpus_round_trips(tmp_path):
    f, g = write_corpus(tmp_path)
    assert validate_corpus(f, g) == ["sc-1"]
    kinds = [line.kind for line in iter_fixture(f / "sc-1.jsonl")]
    assert kinds == ["header", "session", "checkpoint"]


def _rewrite_line(path, lineno, mutate):
    lines = path.read_text().splitlines()
    data = json.loads(lines[lineno - 1])
    mutate(data)
    lines[lineno - 1] = json.dumps(data)
    path.write_text("\n".join(lines) + "\n")


def test_gold_key_in_a_fixture_is_rejected_with_file_line_and_field(tmp_path):
    f, _ = write_corpus(tmp_path)
    path = f / "sc-1.jsonl"
    _rewrite_line(path, 3, lambda d: d["probes"][0].update(answer="Rome"))
    with pytest.raises(CorpusError) as err:
        list(iter_fixture(path))
    assert err.value.line == 3 and err.value.field == "probes[0].answer"
    assert "sc-1.jsonl:3" in str(err.value) and "gold key" in str(err.value)


def test_schema_error_names_field_path(tmp_path):
    f, _ = write_corpus(tmp_path)
    path = f / "sc-1.jsonl"
    _rewrite_line(path, 2, lambda d: d["messages"][0].update(timestamp="yesterday"))
    with pytest.raises(CorpusError) as err:
        list(iter_fixture(path))
    assert err.value.line == 2 and err.value.field == "messages.0.timestamp"


def test_bad_json_and_out_of_order_lines(tmp_path):
    f, _ = write_corpus(tmp_path)
    path = f / "sc-1.jsonl"
    path.write_text(path.read_text() + "{not json\n")
    with pytest.raises(CorpusError, match=r"sc-1.jsonl:4: invalid JSON"):
        list(iter_fixture(path))
    write_fixture(path, [header(), checkpoint()])
    with pytest.raises(CorpusError, match="after_session=1 but 0 sessions"):
        list(iter_fixture(path))


def test_path_escaping_ids_are_rejected(tmp_path):
    f, _ = write_corpus(tmp_path)
    path = f / "sc-1.jsonl"
    _rewrite_line(path, 1, lambda d: d.update(scenario_id="../../etc"))
    with pytest.raises(CorpusError, match="scenario_id"):
        list(iter_fixture(path))


def test_dangling_evidence_and_missing_probe_gold(tmp_path):
    f, g = write_corpus(tmp_path)
    data = json.loads((g / "sc-1.json").read_text())
    data["probes"][0]["evidence"] = ["m-nowhere"]
    (g / "sc-1.json").write_text(json.dumps(data))
    with pytest.raises(CorpusError, match="names no message"):
        validate_corpus(f, g)
    data["probes"] = []
    (g / "sc-1.json").write_text(json.dumps(data))
    with pytest.raises(CorpusError, match="probes differ"):
        validate_corpus(f, g)


def test_fixtures_hash_changes_with_any_byte_and_name(tmp_path):
    f, g = write_corpus(tmp_path)
    first = fixtures_hash(f, g)
    assert fixtures_hash(f, g) == first
    (g / "sc-1.json").write_text((g / "sc-1.json").read_text() + " ")
    assert fixtures_hash(f, g) != first

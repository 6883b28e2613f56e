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


# --- session markers (DRIFT §7.2 selectivity fallback) ------------------------------

def marked_corpus(tmp_path, markers, texts=("Filed as KX4821.", "Ref QB2093."), scopes=("shared", "shared")):
    """Two sessions with the given message texts and header markers, no probes."""
    sessions = [SessionLine(session_id=f"s{i}", index=i, time=T, participants=["u"],
                            messages=[Message(message_id=f"m{i}", author="u", role="user", text=text, timestamp=T,
                                              scope=scope)])
                for i, (text, scope) in enumerate(zip(texts, scopes))]
    write_fixture(tmp_path / "f" / "sc-1.jsonl", [header().model_copy(update={"markers": markers}), *sessions])
    write_gold(tmp_path / "g" / "sc-1.json", GoldFile(scenario_id="sc-1", source="test", probes=[]))
    return tmp_path / "f", tmp_path / "g"


def test_markers_that_follow_the_rules_validate(tmp_path):
    f, g = marked_corpus(tmp_path, {"s0": "KX4821", "s1": "QB2093"})
    assert validate_corpus(f, g) == ["sc-1"]
    assert next(iter_fixture(f / "sc-1.jsonl")).markers == {"s0": "KX4821", "s1": "QB2093"}
    # No markers at all (imported datasets) is valid too; so is a marker only some sessions have.
    f, g = marked_corpus(tmp_path / "b", {})
    assert validate_corpus(f, g) == ["sc-1"]
    f, g = marked_corpus(tmp_path / "c", {"s1": "QB2093"})
    assert validate_corpus(f, g) == ["sc-1"]


def test_a_marker_missing_from_its_session_is_rejected(tmp_path):
    f, g = marked_corpus(tmp_path, {"s0": "KX4821", "s1": "QB2094"})
    with pytest.raises(CorpusError) as err:
        validate_corpus(f, g)
    assert err.value.line == 3 and err.value.field == "markers.s1"
    assert "sc-1.jsonl:3" in str(err.value) and "'QB2094' of session 's1' does not occur" in str(err.value)
    # A whole word, with its case: a longer word or another case does not count.
    for text in ("Filed as KX48210.", "Filed as kx4821."):
        f, g = marked_corpus(tmp_path / text, {"s0": "KX4821"}, texts=(text, "Ref QB2093."))
        with pytest.raises(CorpusError, match=r"sc-1.jsonl:2: markers.s0: marker 'KX4821' of session 's0'"):
            validate_corpus(f, g)


def test_a_marker_only_in_a_private_message_is_rejected(tmp_path):
    f, g = marked_corpus(tmp_path, {"s0": "KX4821"}, scopes=("private", "shared"))
    with pytest.raises(CorpusError, match=r"sc-1.jsonl:2: markers.s0: .*does not occur .*in a shared message"):
        validate_corpus(f, g)


def test_a_marker_present_in_two_sessions_is_rejected(tmp_path):
    f, g = marked_corpus(tmp_path, {"s0": "KX4821", "s1": "QB2093"},
                         texts=("Filed as KX4821.", "Ref QB2093, like KX4821."))
    with pytest.raises(CorpusError) as err:
        validate_corpus(f, g)
    assert err.value.line == 3 and err.value.field == "messages.0.text"
    assert "marker 'KX4821' of session 's0' also occurs in session 's1'" in str(err.value)
    # ... also when the first session lists no marker of its own, or the second comes first.
    f, g = marked_corpus(tmp_path / "b", {"s1": "QB2093"}, texts=("QB2093 first", "Ref QB2093."))
    with pytest.raises(CorpusError, match=r"sc-1.jsonl:2: .*'QB2093' of session 's1' also occurs in session 's0'"):
        validate_corpus(f, g)


def test_one_marker_for_two_sessions_is_rejected(tmp_path):
    f, g = marked_corpus(tmp_path, {"s0": "KX4821", "s1": "KX4821"}, texts=("Filed as KX4821.", "KX4821"))
    with pytest.raises(CorpusError, match=r"sc-1.jsonl:1: markers.s1: session 's1' has the marker 'KX4821' of "
                                          r"session 's0'"):
        validate_corpus(f, g)


def test_a_marker_keyed_by_an_unknown_session_is_rejected(tmp_path):
    f, g = marked_corpus(tmp_path, {"s0": "KX4821", "s1": "QB2093", "s7": "ZZ9999"})
    with pytest.raises(CorpusError) as err:
        validate_corpus(f, g)
    assert err.value.line == 1 and err.value.field == "markers.s7"
    assert "sc-1.jsonl:1" in str(err.value) and "keyed by 's7', which is no session of this fixture" in str(err.value)


def test_marker_values_and_keys_are_checked_by_the_schema(tmp_path):
    f, _ = marked_corpus(tmp_path, {"s0": "KX4821"})
    path = f / "sc-1.jsonl"
    _rewrite_line(path, 1, lambda d: d["markers"].update({"s1": ""}))
    with pytest.raises(CorpusError, match=r"sc-1.jsonl:1: markers.s1"):
        list(iter_fixture(path))
    _rewrite_line(path, 1, lambda d: d.update(markers={"../x": "QB2093"}))
    with pytest.raises(CorpusError, match=r"sc-1.jsonl:1: markers"):
        list(iter_fixture(path))


def test_validate_checks_the_whole_committed_corpus():
    """Runs validate only the scenarios they select (tests/runner/test_fast_start.py); this is
    where CI checks every committed fixture and gold file, semantic checks included."""
    from pathlib import Path

    from click.testing import CliRunner

    from conformance.cli import main

    repo = Path(__file__).resolve().parents[2]
    result = CliRunner().invoke(main, ["validate", "--fixtures", str(repo / "fixtures"), "--gold", str(repo / "gold")])
    committed = len(list((repo / "fixtures").glob("*.jsonl")))
    assert result.exit_code == 0 and f"{committed} scenarios valid" in result.output, result.output

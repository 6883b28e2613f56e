"""Which scenarios a run covers: globs, paradigm, horizon, split, and holdout left out by default."""

from conformance.contract.corpus import Selection, select_fixtures, write_fixture
from conformance.contract.fixture import EntityRef, HeaderLine, HorizonPhase


def corpus(tmp_path):
    specs = [("ua-1", "user_assistant", ["short"], False, ["ci"]),
             ("code-1", "coding_agent", ["short", "medium"], False, []),
             ("crawl-1", "crawler_agent", ["short", "medium", "long"], True, ["ci"]),
             ("mp-1", "multi_peer", ["short"], False, [])]
    for sid, paradigm, phases, holdout, splits in specs:
        header = HeaderLine(scenario_id=sid, paradigm=paradigm, source="t", holdout=holdout, splits=splits,
                            horizons=[HorizonPhase(name=p, sessions=10 * (i + 1), session_gap_hours=1)
                                      for i, p in enumerate(phases)],
                            entities=[EntityRef(entity_id="u", type="human")])
        write_fixture(tmp_path / f"{sid}.jsonl", [header])
    return tmp_path


def ids(paths):
    return sorted(p.stem for p in paths)


def test_holdout_is_left_out_unless_asked(tmp_path):
    kept, held = select_fixtures(corpus(tmp_path))
    assert ids(kept) == ["code-1", "mp-1", "ua-1"] and held == ["crawl-1"]
    kept, held = select_fixtures(tmp_path, Selection(include_holdout=True))
    assert ids(kept) == ["code-1", "crawl-1", "mp-1", "ua-1"] and held == []


def test_paradigm_horizon_split_and_glob_filters(tmp_path):
    corpus(tmp_path)
    assert ids(select_fixtures(tmp_path, Selection(paradigms=("coding_agent",)))[0]) == ["code-1"]
    # a scenario's horizon is the phase its trajectory ends in
    assert ids(select_fixtures(tmp_path, Selection(horizons=("medium",)))[0]) == ["code-1"]
    assert ids(select_fixtures(tmp_path, Selection(horizons=("long",), include_holdout=True))[0]) == ["crawl-1"]
    assert ids(select_fixtures(tmp_path, Selection(splits=("ci",)))[0]) == ["ua-1"]
    assert ids(select_fixtures(tmp_path, Selection(patterns=("*-1",), paradigms=("multi_peer",)))[0]) == ["mp-1"]

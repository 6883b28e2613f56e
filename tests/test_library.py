"""The canonical library through the controls (issue "Done when"): the oracle answers
every probe type, and an amnesiac is right only where the right answer is to abstain."""

from pathlib import Path

import pytest

from conformance.runner.job import run_job
from conformance.contract.corpus import Selection

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def controls(tmp_path_factory):
    # Two scenarios at once: the same scores as a serial run (tests/runner/test_faults_resume.py),
    # in about two thirds of the time. The controls alone: the reference compressor, which every
    # CLI run adds, answers nothing asked here and took most of the time.
    return run_job(["none"], REPO / "fixtures", REPO / "gold", records_dir=tmp_path_factory.mktemp("runs"),
                   selection=Selection(), n_boot=200, concurrency=2, reference=False)


def by_type(doc, system):
    return {name.split(".", 1)[1]: m.value for name, m in doc.systems[system].metrics.items()
            if name.startswith("accuracy.") and m.value is not None}


def test_oracle_answers_every_probe_type(controls):
    oracle = by_type(controls, "oracle")
    assert len(oracle) >= 14
    assert {t: v for t, v in oracle.items() if v < 0.95} == {}


def test_amnesiac_is_right_only_where_abstaining_is_right(controls):
    none = by_type(controls, "none")
    assert none.pop("negative_recall") == 1.0 and none.pop("canary") == 1.0
    # Action: only where the default choice happens to be right (a uniform draw: 1/len of the probes, as
    # any position, so that neither "the default" nor "never the default" is a shortcut).
    assert 0.15 <= none.pop("action") <= 0.35
    # Elsewhere nothing.
    assert {t: v for t, v in none.items() if v > 0} == {}


def test_the_reference_compressor_was_left_out_and_what_it_normalises_says_so(controls):
    assert set(controls.systems) == {"none", "oracle"} and controls.receipt.config["reference"] is None
    assert controls.receipt.config["adapters"] == ["none"]
    tes = controls.systems["none"].metrics["tes"]
    assert tes.value is None and "reference compressor" in tes.reason, tes


def test_holdout_stays_out_of_default_runs(controls):
    assert any("holdout scenarios left out" in n for n in controls.receipt.notes)
    assert not any(s for s in controls.receipt.scenarios if (REPO / "fixtures" / f"{s}.jsonl").read_text()
                   .split("\n", 1)[0].find('"holdout":true') >= 0)


def test_every_committed_session_carries_its_marker():
    """The committed corpus passes the structural checks, markers included, and every session has one."""
    from conformance.contract.corpus import fixture_files, iter_fixture, validate_corpus
    from conformance.contract.fixture import SessionLine

    assert len(validate_corpus(REPO / "fixtures", REPO / "gold")) >= 50
    for path in fixture_files(REPO / "fixtures"):
        lines = iter_fixture(path)
        markers = next(lines).markers
        assert sorted(markers) == sorted(line.session_id for line in lines if isinstance(line, SessionLine)), path

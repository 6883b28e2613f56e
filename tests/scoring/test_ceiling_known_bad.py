"""The oracle ceiling per dataset (with reasons) and ``--known-bad`` (probes scored apart)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.contract.gold import GoldFile, GoldProbe
from conformance.runner.job import JobError, load_known_bad, run_job
from conformance.contract.corpus import Selection
from conformance.scoring.ceiling import oracle_ceiling
from conformance.scoring.rows import ProbeRow

REPO = Path(__file__).resolve().parents[2]


def _row(probe_id: str, correct, recall, in_budget, abstention=False, scenario="s1") -> ProbeRow:
    return ProbeRow(system="oracle", scenario_id=scenario, probe_id=probe_id, probe_type="t", abstention=abstention,
                    correct=correct, recall_at_k=recall, recall_all_in_budget=in_budget, is_revision=False,
                    update_correct=None, deprecated=None, read_latency_ms=1.0)


def test_oracle_ceiling_golden():
    gold = {"s1": GoldFile(scenario_id="s1", source="lme", probes=[
        GoldProbe(probe_id="p1", checkpoint_id="c", probe_type="t", answer="Lisbon", evidence=["m1"]),
        GoldProbe(probe_id="p2", checkpoint_id="c", probe_type="t", answer="Porto", evidence=[]),
        GoldProbe(probe_id="p3", checkpoint_id="c", probe_type="t", answer="3", evidence=["m1", "m2", "m3"]),
        GoldProbe(probe_id="p4", checkpoint_id="c", probe_type="t", answer="unknown", abstention=True),
    ]), "s2": GoldFile(scenario_id="s2", source="locomo", probes=[
        GoldProbe(probe_id="q1", checkpoint_id="c", probe_type="t", answer="cat", evidence=["m9"])])}
    rows = [_row("p1", True, 1.0, True), _row("p2", False, None, None), _row("p3", False, 1.0, False),
            _row("p4", True, None, None, abstention=True), _row("q1", True, 1.0, True, scenario="s2")]
    out = oracle_ceiling(rows, gold, {"s1": "lme", "s2": "locomo"}, k=2, budget_tokens=100,
                         flagged={"answer_not_in_evidence": {"p3"}})
    lme = out["lme"]
    # Hand-computed: recall over p1, p3 = (1 + 1) / 2; in budget over p1, p3 = 1/2; accuracy over the
    # three non-abstention probes p1, p2, p3 = 1/3.
    assert lme["probes"] == 4 and lme["recall_at_k"] == 1.0 and lme["recall_all_in_budget"] == 0.5
    assert lme["accuracy"] == pytest.approx(0.333333)
    reasons = " | ".join(lme["reasons"])
    assert "1 answerable probes have no gold evidence" in reasons
    assert "1 probes cite more than k=2" in reasons
    assert "2 oracle answers are wrong" in reasons and "1 have a gold answer the import report found in no" in reasons
    assert "budget" not in reasons  # p3's budget miss is explained by k, not counted twice
    assert out["locomo"] == {"probes": 1, "recall_at_k": 1.0, "recall_all_in_budget": 1.0, "accuracy": 1.0,
                             "reasons": []}


def test_known_bad_probes_leave_every_metric_and_are_scored_apart(tmp_path):
    kw = dict(selection=Selection(patterns=("cod-short-001",)), n_boot=200)
    plain = run_job(["keyword"], REPO / "fixtures", REPO / "gold", records_dir=tmp_path / "a", **kw)
    listing = tmp_path / "bad.yaml"
    listing.write_text("cod-short-001-c1-p1: gold names a value the session never states\n"
                       "not-a-probe-anywhere: typo\n", encoding="utf-8")
    bad = load_known_bad(listing)
    doc = run_job(["keyword"], REPO / "fixtures", REPO / "gold", records_dir=tmp_path / "b", known_bad=bad, **kw)
    for label in ("keyword", "oracle", "none"):
        assert doc.systems[label].metrics["accuracy"].n == plain.systems[label].metrics["accuracy"].n - 1
        apart = doc.systems[label].known_bad
        assert apart["accuracy"].n == 1 and apart["abstention_accuracy"].value is None
    assert doc.systems["oracle"].known_bad["accuracy"].value == 1.0
    cells = doc.systems["keyword"].gate.cells
    assert all("cod-short-001/cod-short-001-c1-p1" not in c.items for c in cells.values())
    assert sum(c.gold_total for c in cells.values()) == \
        sum(c.gold_total for c in plain.systems["keyword"].gate.cells.values()) - 1
    assert any("1 listed ids name no probe of this run" in n and "not-a-probe-anywhere" in n
               for n in doc.receipt.notes)
    config = doc.receipt.config["known_bad"]
    assert config["listed"] == 2 and config["left_out"] == 1 and config["sha256"] == bad["sha256"]
    # The ceiling of the generated corpus: the oracle is perfect there, so no reasons.
    assert doc.oracle_ceiling["drift-generator/2"]["accuracy"] == 1.0 and doc.oracle_ceiling["drift-generator/2"]["reasons"] == []
    # The report shows both.
    from conformance.report.markdown import render_markdown

    text = render_markdown(doc)
    assert "known-bad probes" in text and "1 of 2 listed" in text and "oracle ceiling (drift-generator/2" in text


@pytest.mark.parametrize("text,expected", [
    ("- just a list\n", "expected a YAML mapping"),
    ("p1: ''\n", "needs a probe id and a non-empty reason"),
    ("p1: [unclosed\n", r"line 2: invalid YAML"),
])
def test_known_bad_file_errors_name_the_file(tmp_path, text, expected):
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(JobError, match=expected) as info:
        load_known_bad(path)
    assert str(path) in str(info.value)


def test_cli_refuses_a_missing_known_bad_file_before_running(tmp_path):
    from conformance.cli import main

    out = CliRunner().invoke(main, ["--adapter", "keyword", "--known-bad", str(tmp_path / "nope.yaml"),
                                    "--records-dir", str(tmp_path / "runs")])
    assert out.exit_code == 2 and "nope.yaml" in out.output
    assert not (tmp_path / "runs").exists()


def test_a_duplicated_id_is_refused_with_its_lines(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("p1: first reason\np2: other\np1: second reason\n", encoding="utf-8")
    with pytest.raises(JobError, match=r"line 3: probe id 'p1' is listed twice \(first on line 1\)"):
        load_known_bad(path)


def test_known_bad_with_the_gate_is_refused_before_running(tmp_path):
    from conformance.cli import main

    listing = tmp_path / "bad.yaml"
    listing.write_text("ua-short-001-c1-p1: answer looks wrong\n", encoding="utf-8")
    out = CliRunner().invoke(main, ["--adapter", "keyword", "--split", "ci", "--known-bad", str(listing),
                                    "--compare", str(REPO / "baselines" / "main.json"),
                                    "--records-dir", str(tmp_path / "runs")])
    assert out.exit_code == 2 and "--known-bad leaves probes out of the gate cells" in out.output
    assert not (tmp_path / "runs").exists()

"""DRIFT §7 metric suite: hand-computed golden cases and property tests for the bounds.

Every expected number below is worked out by hand from the spec's formulas, in the
comments next to it; nothing is copied from the code's output.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.contract.gold import GoldFile
from conformance.scoring.drift import drift_suite
from conformance.scoring.rows import ProbeRow

# Scenario A: sessions a1 signal, a2 noise, a3 soft, a4 noise; checkpoint A-c1 after 2
# sessions (short), A-c2 after 4 (medium). Scenario B: b1 signal, b2 noise; B-c1 after 2 (short).
TIERS = {"A": {"a1": "signal", "a2": "noise", "a3": "soft", "a4": "noise"}, "B": {"b1": "signal", "b2": "noise"}}
CHECKPOINTS = {("A", "A-c1"): ("short", 2), ("A", "A-c2"): ("medium", 4), ("B", "B-c1"): ("short", 2)}
# (scenario, checkpoint, probe, type)
PROBES = [("A", "A-c1", "p1", "fact_recall"), ("A", "A-c1", "p2", "fact_recall"), ("A", "A-c1", "p3", "action"),
          ("A", "A-c2", "p4", "fact_recall"), ("A", "A-c2", "p5", "fact_recall"), ("A", "A-c2", "p6", "revision"),
          ("A", "A-c2", "p7", "canary"),
          ("B", "B-c1", "q1", "fact_recall"), ("B", "B-c1", "q2", "fact_recall"), ("B", "B-c1", "q3", "action")]

GOLD = {s: GoldFile(scenario_id=s, source="test", session_tiers=t) for s, t in TIERS.items()}
PARADIGM = {"A": "user_assistant", "B": "coding_agent"}


def rows_for(system: str, correct: dict[str, bool], deprecated: bool | None = True,
             leaked: bool | None = False) -> list[ProbeRow]:
    out = []
    for scenario, cp, pid, ptype in PROBES:
        horizon = CHECKPOINTS[(scenario, cp)][0]
        canary = ptype == "canary"
        revision = ptype == "revision"
        out.append(ProbeRow(
            system=system, scenario_id=scenario, probe_id=pid, probe_type=ptype, abstention=canary,
            correct=True if canary else correct[pid], recall_at_k=None, recall_all_in_budget=None,
            is_revision=revision, update_correct=correct[pid] if revision else None,
            deprecated=deprecated if revision else None, read_latency_ms=None,
            checkpoint_id=cp, horizon=horizon, leaked=leaked if canary else None))
    return out


def records_for(system: str, storage: dict[str, int], stored: dict[str, list[str]], *, write_tokens: int = 0,
                read_ms: dict[str, float] | None = None, reader_ms: float = 1.0, write_ms: float = 20.0,
                method: str | None = "snapshot") -> list[dict]:
    out = []
    for scenario, tiers in TIERS.items():
        sessions = list(tiers)
        done = 0
        for (s, cp), (horizon, after) in sorted(CHECKPOINTS.items(), key=lambda kv: (kv[0][0], kv[1][1])):
            if s != scenario:
                continue
            for session_id in sessions[done:after]:
                out.append({"kind": "store", "system": system, "scenario_id": scenario, "session_id": session_id,
                            "write_latency_ms": write_ms, "usage": {"input_tokens": write_tokens, "output_tokens": 0},
                            "error": None})
            done = after
            for sc, c, pid, _ in PROBES:
                if (sc, c) == (s, cp):
                    out.append({"kind": "probe", "system": system, "scenario_id": scenario, "checkpoint_id": cp,
                                "probe_id": pid, "horizon": horizon,
                                "read_latency_ms": (read_ms or {}).get(pid, 10.0), "reader_latency_ms": reader_ms,
                                "last_write_latency_ms": write_ms, "usage": {}, "error": None})
            out.append({"kind": "state", "system": system, "scenario_id": scenario, "checkpoint_id": cp,
                        "horizon": horizon, "after_session": after, "sessions_streamed": after, "method": method,
                        "storage_tokens": storage.get(cp) if method == "snapshot" else None,
                        "stored_sessions": stored.get(cp) if method else None, "error": None})
    return out


ALL = ["p1", "p2", "p3", "p4", "p5", "p6", "q1", "q2", "q3"]
NONE_OK = {"p1": False, "p2": True, "p3": False, "p4": False, "p5": False, "p6": False,
           "q1": True, "q2": True, "q3": True}
SYS_OK = {"p1": True, "p2": True, "p3": True, "p4": True, "p5": False, "p6": True,
          "q1": True, "q2": True, "q3": True}
REF_OK = {"p1": True, "p2": True, "p3": False, "p4": True, "p5": False, "p6": False,
          "q1": True, "q2": True, "q3": True}
EVERYTHING = {"A-c1": ["a1", "a2"], "A-c2": ["a1", "a2", "a3", "a4"], "B-c1": ["b1", "b2"]}


def run(sys_storage=None, sys_stored=None, **kwargs):
    rows = {"none": rows_for("none", NONE_OK), "reference-compressor": rows_for("reference-compressor", REF_OK),
            "sys": rows_for("sys", SYS_OK, **{k: v for k, v in kwargs.items() if k in ("deprecated", "leaked")})}
    rec_kwargs = {k: v for k, v in kwargs.items() if k not in ("deprecated", "leaked")}
    records = {
        "none": records_for("none", {"A-c1": 0, "A-c2": 0, "B-c1": 0}, {"A-c1": [], "A-c2": [], "B-c1": []}),
        "reference-compressor": records_for("reference-compressor", {"A-c1": 40, "A-c2": 80, "B-c1": 20},
                                            EVERYTHING, write_tokens=10),
        "sys": records_for("sys", sys_storage or {"A-c1": 100, "A-c2": 200, "B-c1": 50}, sys_stored or EVERYTHING,
                           **rec_kwargs),
    }
    return drift_suite("sys", rows, records, GOLD, PARADIGM, n_boot=200, seed=1)


def value(result, name):
    return result.metrics[name].value


def test_mvot_golden():
    out = run()
    # Terms: A-c1 E_amn 2/3, E_mem 0 -> 1; A-c2 E_amn 1, E_mem 1/3 -> 2/3; B-c1 E_amn 0 -> left out.
    assert value(out, "error_reduction") == pytest.approx(5 / 6)
    # Storage: sys 100+200+50 = 350, reference 40+80+20 = 140 -> efficiency 0.4.
    assert value(out, "mvot") == pytest.approx(5 / 6 * 0.4)
    assert out.metrics["mvot"].n == 2
    assert "1 checkpoints" in out.measurement["mvot"]
    # short: A-c1 only (term 1), storage 150 vs 60 -> 0.4; medium: 2/3 x 80/200.
    assert value(out, "mvot.short") == pytest.approx(0.4)
    assert value(out, "mvot.medium") == pytest.approx(2 / 3 * 0.4)
    lo, hi = out.metrics["mvot"].ci95
    assert lo <= value(out, "mvot") <= hi


def test_selective_memory_with_equal_recall_scores_higher_mvot_and_selectivity():
    everything = run()
    # Same answers, but only the signal and soft sessions kept, in fewer tokens than the reference.
    selective = run(sys_storage={"A-c1": 30, "A-c2": 60, "B-c1": 15},
                    sys_stored={"A-c1": ["a1"], "A-c2": ["a1", "a3"], "B-c1": ["b1"]})
    assert value(everything, "selectivity") == pytest.approx(0.5)  # TNR 0/3, TPR 3/3
    assert value(selective, "selectivity") == pytest.approx(1.0)  # TNR 3/3, TPR 3/3
    assert value(selective, "mvot") == pytest.approx(5 / 6)  # efficiency capped at 1, not 140/105
    assert value(everything, "mvot") < value(selective, "mvot")


def test_selectivity_mixed_golden():
    # Every checkpoint judges the sessions streamed by then; the counts are pooled over them.
    # Noise: A-c1 a2 dropped (1 of 1); A-c2 a2 dropped, a4 stored (1 of 2); B-c1 b2 dropped (1 of 1)
    # -> TNR 3/4. Signal: A-c1 a1; A-c2 a1, a3 (soft); B-c1 b1: all stored -> TPR 4/4.
    out = run(sys_stored={"A-c1": ["a1"], "A-c2": ["a1", "a3", "a4"], "B-c1": ["b1"]})
    assert value(out, "selectivity") == pytest.approx((3 / 4 + 1) / 2)
    assert out.metrics["selectivity"].n == 8  # 2 + 4 + 2 session judgments
    # short: A-c1 and B-c1, both noise dropped -> 1; medium: A-c2, TNR 1/2, TPR 2/2.
    assert value(out, "selectivity.short") == pytest.approx(1.0)
    assert value(out, "selectivity.medium") == pytest.approx((1 / 2 + 1) / 2)
    assert out.measurement["selectivity"] == "snapshot provenance"


def test_selectivity_by_marker_probing_is_labelled_credits_no_forgetting_and_storage_is_na():
    # Without Snapshot a noise session is never counted dropped: a memory can tell the marker and
    # audit probes from the real questions and withhold what it keeps. TNR 0/4; TPR 4/4 as above.
    out = run(sys_stored={"A-c1": ["a1"], "A-c2": ["a1", "a3", "a4"], "B-c1": ["b1"]}, method="marker_probe")
    assert value(out, "selectivity") == pytest.approx((0 + 1) / 2)
    # Dropping a signal session still costs: A-c2 without a3 -> TPR 3/4, (0 + 3/4) / 2.
    dropped = run(sys_stored={"A-c1": ["a1"], "A-c2": ["a1", "a4"], "B-c1": ["b1"]}, method="marker_probe")
    assert value(dropped, "selectivity") == pytest.approx(3 / 8)
    assert out.measurement["selectivity"].startswith("marker probing")
    assert "no noise session counts as dropped" in out.measurement["selectivity"]
    assert value(out, "mvot") is None and "Snapshot" in out.metrics["mvot"].reason
    assert value(out, "tes") is None
    assert value(out, "drift_c") is None and "mvot" in out.metrics["drift_c"].reason


def test_action_alignment_golden():
    # p3: sys right, none wrong -> +1; q3: both right -> 0. mean 0.5 -> (0.5 + 1) / 2.
    out = run()
    assert value(out, "action_alignment") == pytest.approx(0.75)
    assert value(out, "action_alignment.short") == pytest.approx(0.75)
    assert "action_alignment.medium" in out.metrics and value(out, "action_alignment.medium") is None


def test_revision_and_privacy_golden():
    out = run(deprecated=False, leaked=True)
    # p6: update right, deprecation wrong -> harmonic mean 0.
    assert value(out, "revision_accuracy.medium") == 0.0
    assert value(out, "privacy_score") == 0.0  # the one canary leaked
    assert value(run(), "privacy_score") == 1.0
    assert value(run(), "revision_accuracy.medium") == 1.0


def test_drift_c_golden():
    out = run()
    # short: (0.35*0.4 + 0.25*0.5 + 0.20*0.75) / 0.80 (revision has no short probes: left out)
    short = (0.35 * 0.4 + 0.25 * 0.5 + 0.20 * 0.75) / 0.80
    # medium: (0.40*(2/3*0.4) + 0.25*0.5 + 0.20*1) / 0.85 (no action probes at medium)
    medium = (0.40 * (2 / 3 * 0.4) + 0.25 * 0.5 + 0.20 * 1.0) / 0.85
    assert value(out, "drift_c.short") == pytest.approx(short)
    assert value(out, "drift_c.medium") == pytest.approx(medium)
    # horizons present: short and medium -> (0.2 short + 0.3 medium) / 0.5
    assert value(out, "drift_c") == pytest.approx((0.2 * short + 0.3 * medium) / 0.5)
    assert "revision_accuracy.short" in out.measurement["drift_c"]


def test_tes_lps_drift_e_golden():
    out = run(read_ms={"p4": 100.0})
    # MVOT_ref: A-c1 (2/3 - 1/3)/(2/3) = 0.5; A-c2 (1 - 2/3)/1 = 1/3 -> 5/12.
    # S_eff per scenario = n_final x sum_t S(t) / sum_t n(t): sys A 4 x (100 + 200) / (2 + 4) = 200,
    # B 2 x 50 / 2 = 50 -> 250 (storage grows with the sessions, so S_eff = S_final here);
    # reference A 4 x (40 + 80) / 6 = 80, B 20 -> 100.
    # TC_sys = (0 W + 250 S_eff + 0 R) / 6 sessions; TC_ref = (60 W + 100 S_eff) / 6.
    tes = ((1 / 3) / (5 / 12)) / (250 / 160)
    assert value(out, "tes") == pytest.approx(tes)
    assert value(out, "token_cost_per_session") == pytest.approx(250 / 6)
    assert value(out, "storage_tokens_per_session") == pytest.approx(250 / 6)
    # Read latencies: nine 10 ms, one 100 ms: p99 at rank 8.91 -> 10 + 0.91 * 90 = 91.9 ms.
    # TTFRT adds 1 ms of reader: p99 92.9 ms < 200 ms -> score 1.
    lps = 0.4 * (50 / 91.9) + 0.6 * 1.0
    assert value(out, "lps") == pytest.approx(lps)
    assert value(out, "ttfrt_ms_p99") == pytest.approx(92.9)
    # Dialectic: TTFRT + the 20 ms Store before the checkpoint: 31 ms x 9, 121 ms -> 31 + 0.91 * 90.
    assert value(out, "dialectic_speed_ms") == pytest.approx(112.9)
    assert value(out, "drift_e") == pytest.approx(0.55 * min(1.0, tes) + 0.45 * lps)
    assert "no answer model" in out.measurement["ttfrt_ms_p99"]


def test_a_memory_that_forgets_just_before_the_last_checkpoint_pays_for_what_it_held():
    """bench/attacks/final_forget: everything kept and shown at the early checkpoints, then all but
    the signal forgotten right before the last Snapshot. TES charges the storage MVOT charges and
    selectivity judges every checkpoint, so the early checkpoints, answered from everything, count."""
    out = run(sys_storage={"A-c1": 160, "A-c2": 80, "B-c1": 50},
              sys_stored={"A-c1": ["a1", "a2"], "A-c2": ["a1", "a3"], "B-c1": ["b1", "b2"]})
    # MVOT: error reduction 5/6; storage 160 + 80 + 50 = 290 against 140 -> 5/6 x 14/29 = 35/87.
    assert value(out, "mvot") == pytest.approx(35 / 87)
    # S_eff: A 4 x (160 + 80) / (2 + 4) = 160 (S_final would be 80), B 2 x 50 / 2 = 50 -> 210.
    # TC_sys = 210 / 6 = 35; TC_ref = 160 / 6. TES = ((35/87) / (5/12)) / (35 / (160/6))
    # = (28/29) x (16/21) = 64/87 (with S_final: (28/29) / (130/160) = 448/377, above 1).
    assert value(out, "storage_tokens_per_session") == pytest.approx(35.0)
    assert value(out, "token_cost_per_session") == pytest.approx(35.0)
    assert value(out, "tes") == pytest.approx(64 / 87)
    # Selectivity: noise A-c1 a2 stored, A-c2 a2 and a4 dropped, B-c1 b2 stored -> TNR 2/4; signal
    # all stored (4/4) -> 3/4 (judged at the last checkpoints only: TNR 2/3 -> 5/6).
    assert value(out, "selectivity") == pytest.approx(3 / 4)
    # short: A-c1 and B-c1 store everything -> 0.5; medium: A-c2 -> 1.
    assert value(out, "selectivity.short") == pytest.approx(0.5)
    assert value(out, "selectivity.medium") == pytest.approx(1.0)
    # DRIFT-E clips TES at 1: below 1 it now moves with it (LPS: 10 ms reads, 11 ms TTFRT -> 1).
    assert value(out, "drift_e") == pytest.approx(0.55 * 64 / 87 + 0.45 * 1.0)


def test_tes_is_na_when_reference_does_no_better_than_amnesiac():
    rows = {"none": rows_for("none", NONE_OK), "reference-compressor": rows_for("reference-compressor", NONE_OK),
            "sys": rows_for("sys", SYS_OK)}
    records = {name: records_for(name, {"A-c1": 10, "A-c2": 10, "B-c1": 10}, EVERYTHING)
               for name in ("none", "reference-compressor", "sys")}
    out = drift_suite("sys", rows, records, GOLD, PARADIGM, n_boot=100, seed=0)
    assert value(out, "tes") is None and "MVOT_ref <= 0" in out.metrics["tes"].reason
    assert value(out, "drift_e") is None


def test_amnesiac_scores_zero_mvot_and_half_alignment():
    rows = {"none": rows_for("none", NONE_OK), "reference-compressor": rows_for("reference-compressor", REF_OK)}
    records = {"none": records_for("none", {"A-c1": 0, "A-c2": 0, "B-c1": 0}, {"A-c1": [], "A-c2": [], "B-c1": []}),
               "reference-compressor": records_for("reference-compressor", {"A-c1": 40, "A-c2": 80, "B-c1": 20},
                                                   EVERYTHING)}
    out = drift_suite("none", rows, records, GOLD, PARADIGM, n_boot=100, seed=0)
    assert value(out, "mvot") == 0.0  # stores nothing: efficiency 1, no error reduction
    assert value(out, "action_alignment") == 0.5
    assert value(out, "selectivity") == 0.5  # TNR 1, TPR 0
    assert value(out, "tes") is None  # spends no tokens


def test_token_cost_curve_points():
    out = run()
    curve = out.series.token_cost_curve
    assert [p.after_session for p in curve] == [2, 4]
    # after 2: A-c1 (100) and B-c1 (50) -> mean 75 tokens; MVOT over them: term 1 x min(1, 60/150).
    assert curve[0].cumulative_tokens == 75 and curve[0].checkpoints == 2
    assert curve[0].mvot == pytest.approx(0.4)
    assert curve[1].mvot == pytest.approx(5 / 6 * 0.4, abs=1e-6)  # rounded to 6 places


def test_breakdowns_by_paradigm_and_horizon():
    out = run()
    # A non-abstention: p1..p6 (5 of 6 right); B: q1..q3 all right.
    assert value(out, "accuracy_by_paradigm.user_assistant") == pytest.approx(5 / 6)
    assert value(out, "accuracy_by_paradigm.coding_agent") == 1.0
    # short: p1 p2 p3 q1 q2 q3 all right; medium: p4 p6 right, p5 wrong.
    assert value(out, "accuracy_by_horizon.short") == 1.0
    assert value(out, "accuracy_by_horizon.medium") == pytest.approx(2 / 3)


def test_suite_is_deterministic():
    assert run().metrics == run().metrics


# ---------------------------------------------------------------- properties

answers = st.fixed_dictionaries({p: st.booleans() for p in ALL})
storage = st.fixed_dictionaries({cp: st.integers(0, 500) for cp in ("A-c1", "A-c2", "B-c1")})
stored = st.fixed_dictionaries({
    "A-c1": st.lists(st.sampled_from(["a1", "a2"]), unique=True),
    "A-c2": st.lists(st.sampled_from(["a1", "a2", "a3", "a4"]), unique=True),
    "B-c1": st.lists(st.sampled_from(["b1", "b2"]), unique=True)})
latency = st.fixed_dictionaries({p: st.floats(0.01, 5000) for p in ALL})


@settings(max_examples=40, deadline=None)
@given(none_ok=answers, sys_ok=answers, ref_ok=answers, sys_storage=storage, sys_stored=stored, read_ms=latency,
       deprecated=st.booleans(), leaked=st.booleans())
def test_bounds(none_ok, sys_ok, ref_ok, sys_storage, sys_stored, read_ms, deprecated, leaked):
    rows = {"none": rows_for("none", none_ok), "reference-compressor": rows_for("reference-compressor", ref_ok),
            "sys": rows_for("sys", sys_ok, deprecated=deprecated, leaked=leaked)}
    records = {
        "none": records_for("none", {"A-c1": 0, "A-c2": 0, "B-c1": 0}, {"A-c1": [], "A-c2": [], "B-c1": []}),
        "reference-compressor": records_for("reference-compressor", {"A-c1": 40, "A-c2": 80, "B-c1": 20},
                                            EVERYTHING),
        "sys": records_for("sys", sys_storage, sys_stored, read_ms=read_ms),
    }
    out = drift_suite("sys", rows, records, GOLD, PARADIGM, n_boot=50, seed=3)
    m = out.metrics
    for name, metric in m.items():
        if metric.value is None:
            assert metric.reason, f"{name} is n/a without a reason"
            continue
        assert math.isfinite(metric.value)
        if metric.ci95 is not None:
            assert metric.ci95[0] <= metric.ci95[1]
        if name.split(".")[0] in ("selectivity", "lps", "action_alignment", "privacy_score", "drift_e"):
            assert 0.0 <= metric.value <= 1.0, name
        if name.startswith("mvot"):
            assert metric.value <= 1.0 + 1e-12, name
    if m["drift_c"].value is not None:
        parts = [m[f"{p}.{h}"].value for h in ("short", "medium")
                 for p in ("mvot", "selectivity", "revision_accuracy", "action_alignment")
                 if m.get(f"{p}.{h}") is not None and m[f"{p}.{h}"].value is not None]
        assert min(parts) - 1e-12 <= m["drift_c"].value <= max(parts) + 1e-12


# ---------------------------------------------------------------- decisions and edges

def test_a_loss_is_not_shrunk_by_the_storage_term():
    # sys worse than the amnesiac at A-c1: none wrong on p1, p3 (E_amn 2/3); sys wrong on all three (E 1).
    worse = dict(SYS_OK, p1=False, p2=False, p3=False, p4=False, p5=False, p6=False)
    rows = {"none": rows_for("none", NONE_OK), "reference-compressor": rows_for("reference-compressor", REF_OK),
            "sys": rows_for("sys", worse)}
    records = {"none": records_for("none", {"A-c1": 0, "A-c2": 0, "B-c1": 0}, {"A-c1": [], "A-c2": [], "B-c1": []}),
               "reference-compressor": records_for("reference-compressor", {"A-c1": 40, "A-c2": 80, "B-c1": 20},
                                                   EVERYTHING),
               "sys": records_for("sys", {"A-c1": 100, "A-c2": 200, "B-c1": 50}, EVERYTHING)}
    out = drift_suite("sys", rows, records, GOLD, PARADIGM, n_boot=100, seed=0)
    # A-c1: (2/3 - 1) / (2/3) = -1/2; A-c2: (1 - 1) / 1 = 0 -> -1/4, left unscaled (not -1/4 x 0.4).
    assert value(out, "error_reduction") == pytest.approx(-0.25)
    assert value(out, "mvot") == pytest.approx(-0.25)


def test_one_scenario_gives_no_interval_and_says_why():
    only_a = {name: [r for r in rows_for(name, ok) if r.scenario_id == "A"]
              for name, ok in (("none", NONE_OK), ("reference-compressor", REF_OK), ("sys", SYS_OK))}
    records = {name: [r for r in recs if r["scenario_id"] == "A"] for name, recs in (
        ("none", records_for("none", {"A-c1": 0, "A-c2": 0, "B-c1": 0}, {"A-c1": [], "A-c2": [], "B-c1": []})),
        ("reference-compressor", records_for("reference-compressor", {"A-c1": 40, "A-c2": 80, "B-c1": 20},
                                             EVERYTHING)),
        ("sys", records_for("sys", {"A-c1": 100, "A-c2": 200, "B-c1": 50}, EVERYTHING)))}
    out = drift_suite("sys", only_a, records, GOLD, PARADIGM, n_boot=100, seed=0)
    for name in ("mvot", "drift_c", "selectivity", "lps"):
        assert out.metrics[name].value is not None and out.metrics[name].ci95 is None, name
        assert out.metrics[name].ci_note == "one scenario: no interval"


def test_undefined_replicates_are_counted_in_the_note():
    # MVOT's terms live in A only (B's checkpoint is left out), its storage in both: a
    # replicate that draws B twice has no term and is dropped, and the note counts them.
    out = run()
    assert out.metrics["revision_accuracy"].ci_note == "one scenario: no interval"  # revision probes: A only
    note = out.metrics["mvot"].ci_note
    assert note is not None and note.startswith("over ") and "of 200 resamples" in note


def test_curve_ends_at_the_reported_mvot():
    out = run()
    assert out.series.token_cost_curve[-1].mvot == pytest.approx(value(out, "mvot"), abs=1e-6)


def test_revision_accuracy_overall_shares_the_count_matrix():
    out = run()
    assert value(out, "revision_accuracy") == value(out, "revision_accuracy.medium") == 1.0
    # All revision probes are medium here, so the two intervals come from the same replicates.
    assert out.metrics["revision_accuracy"].ci95 == out.metrics["revision_accuracy.medium"].ci95


def test_free_form_runs_say_why_mvot_is_undefined():
    rows = {name: [ProbeRow(**{**r.__dict__, "correct": None}) for r in rows_for(name, NONE_OK)]
            for name in ("none", "reference-compressor", "sys")}
    records = {name: records_for(name, {"A-c1": 10, "A-c2": 10, "B-c1": 10}, EVERYTHING)
               for name in ("none", "reference-compressor", "sys")}
    out = drift_suite("sys", rows, records, GOLD, PARADIGM, n_boot=50, seed=0)
    assert value(out, "mvot") is None and "free-form" in out.metrics["mvot"].reason
    assert "free-form" in out.metrics["drift_c"].reason and "free-form" in out.metrics["tes"].reason
    # Storage is still measured: Snapshot does not need scored answers. 10 tokens at every
    # checkpoint: S_eff A = 4 x (10 + 10) / (2 + 4) = 40/3, B = 2 x 10 / 2 = 10 -> (70/3) / 6 sessions.
    assert value(out, "storage_tokens_per_session") == pytest.approx(35 / 9)


def test_paired_suite_golden_and_self_difference():
    from conformance.scoring.drift import paired_suite

    everything = run()
    selective = run(sys_storage={"A-c1": 30, "A-c2": 60, "B-c1": 15},
                    sys_stored={"A-c1": ["a1"], "A-c2": ["a1", "a3"], "B-c1": ["b1"]})
    diff = paired_suite(selective, everything)
    assert diff["mvot"].value == pytest.approx(5 / 6 - 5 / 6 * 0.4)
    assert diff["selectivity"].value == pytest.approx(0.5)
    lo, hi = diff["mvot"].ci95
    assert lo <= diff["mvot"].value <= hi
    same = paired_suite(everything, run())
    assert same["mvot"].value == 0.0 and same["mvot"].ci95 == [0.0, 0.0]
    # DRIFT-C's medium horizon rests on scenario A alone: no interval for it, nor for its difference.
    assert everything.metrics["drift_c"].ci95 is None
    assert same["drift_c"].value == 0.0 and same["drift_c"].ci95 is None
    assert same["drift_c"].ci_note == "one scenario: no interval"
    # Different scenario sets share no count matrix: no paired difference at all.
    other = drift_suite("sys", {"sys": [r for r in rows_for("sys", SYS_OK) if r.scenario_id == "A"]},
                        {"sys": []}, GOLD, PARADIGM, n_boot=200, seed=1)
    assert paired_suite(everything, other) == {}

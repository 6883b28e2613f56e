"""Cheats on what an adapter says about itself (issue 16): each earned a gain before the audits,
and now carries a finding in result.json and scores no better than the honest memory it copies.

- understated Snapshot: answers like the honest memory, shows one token per "signal" session;
- uncarried provenance: every hit cites every stored message;
- a packed hit: one hit holds every message, far past the budget;
- fabricated times: stores nothing, echoes the query dated "now";
- a memory without Snapshot that withholds markers, and the audit's sentence probes it tells by
  their shape, position or time.

Every system runs in process (``open_systems`` replaced), on two short scenarios.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from rich.console import Console

from conformance.report.markdown import render_markdown
from conformance.report.table import render
from conformance.runner import job
from conformance.contract.corpus import Selection

sys.path.insert(0, str(Path(__file__).parent))
import dishonest  # noqa: E402
from ledger_replay import replay_ledger  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = ("cod-short-001", "ua-short-001")
AUDIT = job.apply_state_audit
STORAGE = ("selectivity", "storage_tokens_per_session", "tes", "drift_c")


def run(tmp_path, monkeypatch, *extra, audit: bool = True):
    monkeypatch.setattr(job, "open_systems", lambda *a, **k: dishonest.systems(*extra))
    # audit=False: the harness before the audit, the Snapshot taken on trust.
    monkeypatch.setattr(job, "apply_state_audit", AUDIT if audit else lambda records: None)
    return job.run_job([s.label for s in extra], REPO / "fixtures", REPO / "gold", records_dir=tmp_path / "runs",
                       selection=Selection(patterns=SCENARIOS), n_boot=50)


def value(doc, system, metric):
    return doc.systems[system].metrics[metric].value


def no_better(doc, cheat, honest, metric, lower_is_better=False):
    """The cheat's figure is n/a or no better than the honest one's."""
    mine, theirs = value(doc, cheat, metric), value(doc, honest, metric)
    if mine is None:
        return True
    assert theirs is not None, f"{metric}: the cheat has a value where the honest memory has none"
    return mine >= theirs - 1e-9 if lower_is_better else mine <= theirs + 1e-9


def naive_recall(doc, system):
    return dishonest.naive_recall(doc, system, SCENARIOS)


def test_an_understated_snapshot_is_caught_and_its_storage_not_used(tmp_path, monkeypatch):
    signal = dishonest.signal_sessions(SCENARIOS)
    honest, cheat = dishonest.Overlap("honest"), dishonest.UnderstatedSnapshot("understated", signal)
    before = run(tmp_path / "before", monkeypatch, honest, cheat, audit=False)
    # The gain it got: a perfect-looking memory from the same answers.
    assert value(before, "understated", "accuracy") == value(before, "honest", "accuracy")
    assert value(before, "understated", "selectivity") > value(before, "honest", "selectivity")
    assert value(before, "understated", "storage_tokens_per_session") < value(before, "honest",
                                                                              "storage_tokens_per_session") / 10
    assert value(before, "understated", "tes") > 10 * value(before, "honest", "tes")

    doc = run(tmp_path / "after", monkeypatch, dishonest.Overlap("honest"),
              dishonest.UnderstatedSnapshot("understated", signal))
    audit = doc.model_dump(mode="json")["systems"]["understated"]["state_audit"]
    assert audit["passed"] is False
    assert any("Snapshot does not hold" in line for line in audit["findings"])
    assert doc.systems["honest"].state_audit.passed and not doc.systems["honest"].state_audit.findings
    assert job.AUDIT_FINDING_NOTE in doc.systems["understated"].notes
    assert doc.systems["understated"].measurement["selectivity"].startswith("state audit")
    for metric in ("recall_at_k", *STORAGE):
        assert no_better(doc, "understated", "honest", metric,
                         lower_is_better=metric == "storage_tokens_per_session"), metric
    assert "state audit failed" in doc.systems["understated"].metrics["tes"].reason
    # The table and the report say it.
    console = Console(record=True, width=250)
    render(doc, console)
    shown = console.export_text()
    assert "state audit failed" in shown and "understated: audit finding: state audit failed" in shown
    assert "understated: audit finding: state audit failed" in render_markdown(doc)


def test_a_snapshot_that_shreds_noise_into_single_words_is_caught(tmp_path, monkeypatch):
    signal = dishonest.signal_sessions(SCENARIOS)
    before = run(tmp_path / "before", monkeypatch, dishonest.Overlap("honest"), dishonest.ShredsNoise("shreds", signal),
                 audit=False)
    assert value(before, "shreds", "accuracy") == value(before, "honest", "accuracy")
    assert value(before, "shreds", "selectivity") > value(before, "honest", "selectivity") + 0.2
    doc = run(tmp_path / "after", monkeypatch, dishonest.Overlap("honest"), dishonest.ShredsNoise("shreds", signal))
    audit = doc.systems["shreds"].state_audit
    assert audit.passed is False and any("Snapshot does not hold" in line for line in audit.findings)
    for metric in ("recall_at_k", *STORAGE):
        assert no_better(doc, "shreds", "honest", metric,
                         lower_is_better=metric == "storage_tokens_per_session"), metric


def test_a_memory_without_snapshot_that_dodges_markers_is_caught(tmp_path, monkeypatch):
    signal = dishonest.signal_sessions(SCENARIOS)
    before = run(tmp_path / "before", monkeypatch, dishonest.Overlap("honest"),
                 dishonest.DodgesMarkers("dodges", signal), audit=False)
    assert value(before, "dodges", "accuracy") == value(before, "honest", "accuracy")
    # The gain it got when marker probing credited forgetting; no-Snapshot selectivity credits none now.
    assert dishonest.naive_selectivity(before, "dodges", SCENARIOS) > value(before, "honest", "selectivity") + 0.2
    assert value(before, "dodges", "selectivity") <= 0.5
    doc = run(tmp_path / "after", monkeypatch, dishonest.Overlap("honest"), dishonest.DodgesMarkers("dodges", signal))
    audit = doc.systems["dodges"].state_audit
    assert audit.passed is False and any("whose marker Retrieve does not return" in line for line in audit.findings)
    assert doc.systems["dodges"].measurement["selectivity"].startswith("state audit")
    assert no_better(doc, "dodges", "honest", "selectivity")


def test_a_memory_that_tells_the_audit_probes_by_shape_position_or_time_is_caught(tmp_path, monkeypatch):
    """bench/attacks/audit_dodge: the audit asked bare content words, in a batch after the marker
    probes, at another time than the real probes; a memory that withheld both markers and sentences
    of noise sessions passed the audit with marker selectivity. Now they read like the checkpoint's
    questions and are asked among them, so its figure comes from what it really returns."""
    signal = dishonest.signal_sessions(SCENARIOS)
    doc = run(tmp_path, monkeypatch, dishonest.Overlap("honest"), dishonest.DodgesAudits("dodges-audit", signal))
    assert value(doc, "dodges-audit", "accuracy") == value(doc, "honest", "accuracy")
    audit = doc.systems["dodges-audit"].state_audit
    assert audit.sentences_found > 0.9 * audit.sentences_probed
    assert audit.passed is False and any("whose marker Retrieve does not return" in line for line in audit.findings)
    assert doc.systems["dodges-audit"].measurement["selectivity"].startswith("state audit")
    assert value(doc, "dodges-audit", "selectivity") == pytest.approx(value(doc, "honest", "selectivity"), abs=0.02)


def test_a_memory_without_snapshot_that_sniffs_the_audit_gets_no_credit_for_forgetting(tmp_path, monkeypatch):
    """A no-Snapshot memory that withholds the markers and the audit's sentence probes of noise
    sessions alike (it tells the probes by their words) passes the audit; credited with forgetting
    what its markers withheld, it looked selective while it keeps and answers from everything."""
    signal = dishonest.signal_sessions(SCENARIOS)
    doc = run(tmp_path, monkeypatch, dishonest.Overlap("honest"), dishonest.SniffsAudits("sniffs", signal))
    assert value(doc, "sniffs", "accuracy") == value(doc, "honest", "accuracy")
    audit = doc.systems["sniffs"].state_audit
    assert audit.passed, audit.findings  # the audit cannot tell: markers and sentences agree
    assert 0 < audit.sentences_found < audit.sentences_probed
    assert doc.systems["sniffs"].measurement["selectivity"].startswith("marker probing")
    # Before: the withheld noise sessions counted as dropped.
    assert dishonest.naive_selectivity(doc, "sniffs", SCENARIOS) > value(doc, "honest", "selectivity") + 0.2
    # Now no noise session counts as dropped without a Snapshot: at most what storing everything gets.
    assert value(doc, "sniffs", "selectivity") <= value(doc, "honest", "selectivity") == 0.5


def scheduled(scenario: str):
    """(checkpoint's real probes, its schedule) for each checkpoint of a committed fixture."""
    return replay_ledger(scenario)[1]


def test_audit_probes_read_like_the_scenario_questions_and_sit_among_them():
    sys.path.insert(0, str(REPO / "bench" / "attacks"))
    from _base import looks_like_audit

    first_places, frames = set(), set()
    for scenario in SCENARIOS:
        checkpoints = scheduled(scenario)
        assert checkpoints == scheduled(scenario)  # seeded: the same every run
        for probes, schedule in checkpoints:
            assert [p for s, p in schedule if s is None] == list(probes)  # the real ones, in fixture order
            audit = [(i, p) for i, (s, p) in enumerate(schedule) if s is not None]
            assert audit
            first_places.add(audit[0][0])
            real = {(p.asked_by, p.asked_at) for p in probes}
            for _, probe in audit:
                assert not looks_like_audit(probe.query)
                assert probe.query.endswith("?") and probe.query[0].isupper()
                assert (probe.asked_by, probe.asked_at) in real
                frames.add(re.sub(r"[a-z0-9]", "", probe.query))
    assert len(first_places) > 1  # not always after the real probes, nor always first
    assert len(frames) > 5  # many frames, not one phrase to match


def test_no_audit_probe_asks_only_words_of_one_stored_message():
    # bench/attacks/audit_sniff: real questions never have all their content words in one message;
    # each audit probe keeps a content word of its frame question, so it does not either.
    from conformance.contract.corpus import iter_fixture
    from conformance.contract.fixture import SessionLine
    from conformance.provenance import content_words

    for scenario in SCENARIOS:
        stored = [content_words(m.text) for line in iter_fixture(REPO / "fixtures" / f"{scenario}.jsonl")
                  if isinstance(line, SessionLine) for m in line.messages]
        queries = [p.query for _, schedule in scheduled(scenario) for s, p in schedule if s is not None]
        assert queries
        whole = [q for q in queries if any(content_words(q) <= words for words in stored)]
        assert not whole, (scenario, len(whole), len(queries), whole[:3])


def test_a_vocabulary_snapshot_is_caught_and_its_storage_not_used(tmp_path, monkeypatch):
    before = run(tmp_path / "before", monkeypatch, dishonest.Overlap("honest"), dishonest.VocabularySnapshot("vocab"),
                 audit=False)
    assert value(before, "vocab", "accuracy") == value(before, "honest", "accuracy")
    assert value(before, "vocab", "storage_tokens_per_session") < value(before, "honest",
                                                                        "storage_tokens_per_session") / 2
    assert value(before, "vocab", "tes") > 2 * value(before, "honest", "tes")
    doc = run(tmp_path / "after", monkeypatch, dishonest.Overlap("honest"), dishonest.VocabularySnapshot("vocab"))
    audit = doc.systems["vocab"].state_audit
    assert audit.passed is False and any("not backed" in line for line in audit.findings)
    assert doc.systems["honest"].state_audit.passed
    for metric in ("recall_at_k", *STORAGE):
        assert no_better(doc, "vocab", "honest", metric,
                         lower_is_better=metric == "storage_tokens_per_session"), metric


def test_a_snapshot_padded_with_spaces_or_citations_laundered_are_caught(tmp_path, monkeypatch):
    """Three cheats in one pair of runs: pads (a word and a run of spaces per message backs each
    message's length), launders (hits from unshown sessions cite a session the Snapshot holds) and
    bags (one item per session of its words, each once, citing the session, backs every message)."""
    signal = dishonest.signal_sessions(SCENARIOS)

    def cheats():
        return (dishonest.Overlap("honest"), dishonest.PadsVocabulary("pads"),
                dishonest.LaundersCitations("launders", signal), dishonest.BagsSessions("bags"))

    from conformance.runner import audit as state_audit

    with monkeypatch.context() as m:  # the harness taking the Snapshot's citations on trust
        m.setattr(state_audit, "_held_by_content", lambda *a, **k: False)
        m.setattr(state_audit, "_quotes", lambda *a, **k: False)
        before = run(tmp_path / "before", m, *cheats(), audit=False)
    for cheat in ("pads", "bags"):
        assert value(before, cheat, "accuracy") == value(before, "honest", "accuracy")
        assert value(before, cheat, "storage_tokens_per_session") < value(before, "honest",
                                                                          "storage_tokens_per_session") / 2, cheat
    assert value(before, "launders", "selectivity") > value(before, "honest", "selectivity")
    doc = run(tmp_path / "after", monkeypatch, *cheats())
    assert doc.systems["honest"].state_audit.passed
    # Launders' laundry carries, by chance, messages of the session it cites: the content it shows of
    # other sessions is held outside its citations (no forgetting credit), and its hits are not backed.
    for cheat, finding in (("pads", "not backed"), ("launders", "not backed"), ("bags", "not backed")):
        audit = doc.systems[cheat].state_audit
        assert audit.passed is False and any(finding in line for line in audit.findings), (cheat, audit.findings)
        for metric in ("recall_at_k", *STORAGE):
            assert no_better(doc, cheat, "honest", metric,
                             lower_is_better=metric == "storage_tokens_per_session"), (cheat, metric)


def test_a_memory_that_brings_back_what_it_hid_is_caught(tmp_path, monkeypatch):
    """A session the Snapshot did not hold at one checkpoint, streamed before it, cannot be held
    at a later one by a memory that forgot it: a memory that hides half its older sessions at each
    checkpoint, the other half at the next, passes every within-checkpoint check (it answers only
    from what it shows), and is caught across checkpoints (bench/attacks/hindsight)."""
    doc = run(tmp_path, monkeypatch, dishonest.Overlap("honest"), dishonest.Resurrects("resurrects"))
    assert doc.systems["honest"].state_audit.passed
    audit = doc.systems["resurrects"].state_audit
    assert audit.passed is False and any("did not hold" in line for line in audit.findings), audit.findings
    for metric in STORAGE:
        assert no_better(doc, "resurrects", "honest", metric,
                         lower_is_better=metric == "storage_tokens_per_session"), metric


def test_a_memory_that_ranks_by_text_its_snapshot_does_not_show_is_caught(tmp_path, monkeypatch):
    """Hits and Snapshot alike show each message's first third, but the ranking reads the whole
    message from an index the Snapshot never shows (bench/attacks/hidden_index): every hit is
    backed, yet an audit probe whose words the Snapshot does not hold for its session still gets
    that session first, which nothing the Snapshot shows explains. The same abridged memory
    ranking by what it shows passes."""
    doc = run(tmp_path, monkeypatch, dishonest.Abridges("abridged"), dishonest.RanksByHiddenText("hidden"))
    assert doc.systems["abridged"].state_audit.passed, doc.systems["abridged"].state_audit.findings
    audit = doc.systems["hidden"].state_audit
    assert audit.passed is False and any("does not show" in line for line in audit.findings), audit.findings
    for metric in STORAGE:
        assert no_better(doc, "hidden", "abridged", metric,
                         lower_is_better=metric == "storage_tokens_per_session"), metric


def test_a_memory_that_brings_back_messages_it_cut_to_a_stub_is_caught(tmp_path, monkeypatch):
    """Every session stays held (a stub of each message carries it), so no session is held again,
    yet half the older messages shown as stubs at one checkpoint come back whole at the next
    (bench/attacks/message_hindsight: one anchor message per session, the rest picked with
    hindsight of the recurring questions). A memory cannot show again words it dropped."""
    doc = run(tmp_path, monkeypatch, dishonest.Overlap("honest"), dishonest.RestoresStubs("stubs"))
    assert doc.systems["honest"].state_audit.passed
    audit = doc.systems["stubs"].state_audit
    assert audit.passed is False and any("shows again" in line for line in audit.findings), audit.findings
    assert not any("did not hold" in line for line in audit.findings), audit.findings
    for metric in STORAGE:
        assert no_better(doc, "stubs", "honest", metric,
                         lower_is_better=metric == "storage_tokens_per_session"), metric


def test_content_held_outside_the_citations_is_no_mismatch_and_earns_no_forgetting(tmp_path, monkeypatch):
    """A Snapshot that holds what Retrieve shows, but in an item citing nothing, is no mismatch (a
    prior of frequent words, shortcut-prior, happens to hold some message's words: it failed the
    audit on the library and left the shortcut audit without a DRIFT-C); and such an item may hold
    any session, so from then on no noise session counts as dropped: noise kept uncited beside
    cited signal sessions looked forgotten by provenance."""
    from conformance.runner import audit as state_audit

    signal = dishonest.signal_sessions(SCENARIOS)
    with monkeypatch.context() as m:  # the harness taking the Snapshot's citations on trust
        m.setattr(state_audit, "_held_by_content", lambda *a, **k: False)
        m.setattr(state_audit, "_quotes", lambda *a, **k: False)
        before = run(tmp_path / "before", m, dishonest.Overlap("honest"),
                     dishonest.UncitedNoise("uncited", signal), audit=False)
    assert value(before, "uncited", "selectivity") > value(before, "honest", "selectivity") + 0.2
    doc = run(tmp_path / "after", monkeypatch, dishonest.Overlap("honest"), dishonest.UncitedNoise("uncited", signal))
    audit = doc.systems["uncited"].state_audit
    assert audit.passed, audit.findings
    assert audit.sentences_found > 0
    assert "not citing them" in doc.systems["uncited"].measurement["selectivity"]
    assert "not citing them" not in doc.systems["honest"].measurement["selectivity"]
    assert value(doc, "uncited", "drift_c") is not None
    for metric in STORAGE:
        assert no_better(doc, "uncited", "honest", metric,
                         lower_is_better=metric == "storage_tokens_per_session"), metric


def test_noise_held_beside_a_citation_or_hidden_from_the_audit_earns_no_forgetting(tmp_path, monkeypatch):
    """Two ways round the rule above. Merges holds each noise session in an item citing a signal
    message (its host) and returns a noise hit as the host and the message, citing the host: the
    hit carries what it cites, so the audit never read its other words. Sniffs holds the noise in
    an item citing nothing, like UncitedNoise, but answers the audit's probes (told by their words)
    from the signal sessions only, so no audit probe finds the noise. Both keep every noise session
    in the Snapshot (and in the reader's context) outside its citations: no forgetting credit. Replays
    keeps the noise uncited too, less the one message per session the audit samples (its seed is
    public ids, so it replays the choice): any message a real probe's hit holds half of counts, and so
    trims, which keeps three quarters of each such message, is caught too."""
    signal = dishonest.signal_sessions(SCENARIOS)
    doc = run(tmp_path, monkeypatch, dishonest.Overlap("honest"), dishonest.MergesNoise("merges", signal),
              dishonest.SniffsUncitedNoise("sniffs", signal), dishonest.ReplaysAuditSeed("replays", signal),
              dishonest.TrimsReplayedNoise("trims", signal))
    assert "not citing them" not in doc.systems["honest"].measurement["selectivity"]
    for cheat in ("merges", "sniffs", "replays", "trims"):
        audit = doc.systems[cheat].state_audit
        assert audit.passed, (cheat, audit.findings)
        assert "not citing them" in doc.systems[cheat].measurement["selectivity"], cheat
        # Replays (and trims) really drop a message or two per noise session: their storage may be lower.
        for metric in STORAGE if cheat not in ("replays", "trims") else ("selectivity",):
            assert no_better(doc, cheat, "honest", metric,
                             lower_is_better=metric == "storage_tokens_per_session"), (cheat, metric)


def test_provenance_that_cites_everything_earns_no_recall(tmp_path, monkeypatch):
    doc = run(tmp_path, monkeypatch, dishonest.Overlap("honest"), dishonest.CitesEverything("cites-all"))
    # Same texts; its hits are dated by the newest message they carry, so its answers can only lose.
    assert value(doc, "cites-all", "accuracy") <= value(doc, "honest", "accuracy")
    # The gain it got when every cited id counted.
    assert naive_recall(doc, "cites-all") > value(doc, "honest", "recall_at_k") + 0.2
    assert naive_recall(doc, "honest") == pytest.approx(value(doc, "honest", "recall_at_k"))
    for metric in ("recall_at_k", "recall_any_at_k", "recall_all_at_k", "recall_all_in_budget", *STORAGE):
        assert no_better(doc, "cites-all", "honest", metric,
                         lower_is_better=metric == "storage_tokens_per_session"), metric
    assert any(line.startswith("provenance not carried") for line in doc.systems["cites-all"].findings)
    assert doc.systems["honest"].findings == []


def test_a_packed_hit_credits_only_what_lies_before_the_budget_cut(tmp_path, monkeypatch):
    doc = run(tmp_path, monkeypatch, dishonest.PacksWithinBudget("packed-honest"), dishonest.PacksEverything("packed"))
    assert value(doc, "packed", "accuracy") == value(doc, "packed-honest", "accuracy")
    assert naive_recall(doc, "packed") > value(doc, "packed-honest", "recall_at_k") + 0.1
    for metric in ("recall_at_k", "recall_all_at_k", "recall_all_in_budget", *STORAGE):
        assert no_better(doc, "packed", "packed-honest", metric,
                         lower_is_better=metric == "storage_tokens_per_session"), metric
    assert any("longer than the whole 1200-token budget" in line for line in doc.systems["packed"].findings)


def test_negative_llm_usage_refunds_no_token_cost(tmp_path, monkeypatch):
    doc = run(tmp_path, monkeypatch, dishonest.Overlap("honest"), dishonest.RefundsUsage("refunds"))
    assert value(doc, "refunds", "accuracy") == value(doc, "honest", "accuracy")
    for metric in ("token_cost_per_session", "tes", "drift_e"):
        assert value(doc, "refunds", metric) == pytest.approx(value(doc, "honest", metric)), metric
    notes = doc.systems["refunds"].notes
    for field in ("Store usage input_tokens is negative", "Retrieve usage output_tokens is not an integer",
                  "Retrieve usage llm_calls is absurd"):
        assert any(note.startswith(f"contract violation: {field} in ") for note in notes), (field, notes)
    stores = [r for r in dishonest.records_of(doc, "refunds") if r["kind"] == "store"]
    assert stores and all(r["usage"]["input_tokens"] == 0 and r["violations"] for r in stores)
    assert not any(note.startswith("contract violation") for note in doc.systems["honest"].notes)


def test_a_networked_memory_that_reports_no_llm_usage_is_noted(tmp_path, monkeypatch):
    """Usage is self-reported: a memory with outbound network that reports no LLM tokens may spend
    them where nothing counts (a server's extraction, Flush, a background thread), so its token
    cost and TES carry a note; one that reports its tokens (at Store or at Flush), or runs without
    network, carries none."""
    doc = run(tmp_path, monkeypatch, dishonest.Overlap("offline"), dishonest.CallsOutUnmetered("silent"),
              dishonest.CallsOutUnmetered("metered", reports=120), dishonest.CallsOutMeteredAtFlush("at-flush"))
    assert any("outbound network" in note and "TES" in note for note in doc.systems["silent"].notes), \
        doc.systems["silent"].notes
    for label in ("offline", "metered", "at-flush"):
        assert not any("outbound network" in note for note in doc.systems[label].notes), doc.systems[label].notes


def test_llm_tokens_spent_at_flush_are_written_tokens(tmp_path, monkeypatch):
    # The red-team's hole: buffer at Store, extract at Flush, report W = 0 with nowhere else to put it.
    doc = run(tmp_path, monkeypatch, dishonest.Overlap("honest"), dishonest.ExtractsAtFlush("at-flush"))
    states = [r for r in dishonest.records_of(doc, "at-flush") if r["kind"] == "state"]
    assert states and all(r["flush_usage"] == dishonest.ExtractsAtFlush.FLUSH_USAGE for r in states)
    assert all(r["flush_usage"] == {"input_tokens": 0, "output_tokens": 0, "llm_calls": 0}
               for r in dishonest.records_of(doc, "honest") if r["kind"] == "state")
    # By hand (DRIFT §7.7): TC = (W + S_eff + R) / N, N the sessions streamed by each scenario's end.
    written = 3500 * len(states)
    sessions = sum(max(r["sessions_streamed"] for r in states if r["scenario_id"] == s) for s in SCENARIOS)
    tc_honest = value(doc, "honest", "token_cost_per_session")  # W = R = 0: S_eff / N
    tc = tc_honest + written / sessions
    assert value(doc, "at-flush", "token_cost_per_session") == pytest.approx(tc)
    # Same memory, same MVOT: TES scales by TC_honest / TC; DRIFT-E = 0.55 clip(TES, 0, 1) + 0.45 LPS.
    tes_honest, tes = value(doc, "honest", "tes"), value(doc, "honest", "tes") * tc_honest / tc
    assert tes < tes_honest
    assert value(doc, "at-flush", "tes") == pytest.approx(tes)
    lps = value(doc, "honest", "lps")
    assert value(doc, "at-flush", "lps") == pytest.approx(lps)
    assert value(doc, "at-flush", "drift_e") == pytest.approx(0.55 * min(1.0, max(0.0, tes)) + 0.45 * lps)
    assert value(doc, "honest", "drift_e") == pytest.approx(0.55 * min(1.0, max(0.0, tes_honest)) + 0.45 * lps)
    # The cost curve's x at position a: mean over the checkpoints at a of the Flushes up to them.
    curve = {p.after_session: p for p in doc.systems["at-flush"].series.token_cost_curve}
    honest_curve = {p.after_session: p for p in doc.systems["honest"].series.token_cost_curve}
    assert curve and curve.keys() == honest_curve.keys()
    for a, point in curve.items():
        here = [r for r in states if r["after_session"] == a]
        flushed = [3500 * sum(1 for o in states if o["scenario_id"] == r["scenario_id"] and o["after_session"] <= a)
                   for r in here]
        assert point.cumulative_tokens == pytest.approx(honest_curve[a].cumulative_tokens
                                                        + sum(flushed) / len(flushed), abs=2e-3), a
    assert doc.spend["systems"]["at-flush"] == {"llm_calls": 2 * len(states), "input_tokens": 3000 * len(states),
                                                "output_tokens": 500 * len(states)}
    assert not any(note.startswith("contract violation") for note in doc.systems["at-flush"].notes)


def test_negative_flush_usage_is_a_contract_violation_and_refunds_nothing(tmp_path, monkeypatch):
    doc = run(tmp_path, monkeypatch, dishonest.Overlap("honest"), dishonest.RefundsAtFlush("refunds"))
    for metric in ("token_cost_per_session", "tes", "drift_e"):
        assert value(doc, "refunds", metric) == pytest.approx(value(doc, "honest", metric)), metric
    notes = doc.systems["refunds"].notes
    assert any(note.startswith("contract violation: Flush usage input_tokens is negative in ") for note in notes), notes
    states = [r for r in dishonest.records_of(doc, "refunds") if r["kind"] == "state"]
    assert states and all(r["flush_usage"]["input_tokens"] == 0 and r["flush_violations"] for r in states)


def naive_accuracy(doc, system):
    return dishonest.naive_accuracy(doc, system, SCENARIOS)


def test_hits_dated_now_by_a_memory_that_stores_nothing_gain_nothing(tmp_path, monkeypatch):
    doc = run(tmp_path, monkeypatch, dishonest.DatesNothingNow("dated-now"))
    # The gain it got over the amnesiac while the reader trusted hit times.
    assert naive_accuracy(doc, "dated-now") > value(doc, "none", "accuracy")
    assert value(doc, "dated-now", "accuracy") <= value(doc, "none", "accuracy")
    for metric in ("recall_at_k", *STORAGE):
        assert no_better(doc, "dated-now", "none", metric, lower_is_better=metric == "storage_tokens_per_session"), \
            metric
    assert any(line.startswith("hit times not backed") for line in doc.systems["dated-now"].findings)
    assert doc.systems["dated-now"].state_audit.passed is False


def test_a_hit_citing_nothing_is_backed_only_by_the_whole_snapshot():
    """A system without provenance is audited too: its uncited hits must be held by the Snapshot as
    a whole (in words and length); with an empty Snapshot any uncited text is unbacked."""
    from types import SimpleNamespace as NS

    from conformance.runner.audit import MessageLedger, _hit_problems, _snapshot_view

    ledger = MessageLedger(scenario_id="t")
    prior = NS(item_id="prior", text="Lisbon harbour; ferry timetable; harbour ferry; timetable Lisbon", source_ids=())
    backed = NS(text="Lisbon harbour; ferry timetable", source_ids=())
    unheld = NS(text="Porto bridge; river cruise tickets", source_ids=())
    view = _snapshot_view([prior], ledger, "prior")
    assert _hit_problems(backed, view, ledger) == ([], False)
    assert _hit_problems(unheld, view, ledger) == ([], True)
    assert _hit_problems(backed, _snapshot_view([], ledger, "prior"), ledger) == ([], True)
    longer = NS(text=backed.text * 4, source_ids=())  # the same words, four times the Snapshot's length
    assert _hit_problems(longer, view, ledger) == ([], True)


def test_a_hit_is_backed_by_its_words_in_their_order_not_by_a_bag_of_them():
    """A verbatim hit citing a message id is backed through its session's items; those must hold
    the hit's neighbouring word pairs, not only its words: a bag of the session's words, each once,
    or its content words in order without the function words between them, backs no message of it
    (bench/attacks/session_bag), while the session kept verbatim, or the message itself, does."""
    from types import SimpleNamespace as NS

    from conformance.runner.audit import MessageLedger, _hit_problems, _snapshot_view

    ledger = MessageLedger(scenario_id="t")
    texts = {"s1-m1": "principal: I moved the whole team to the Lisbon office on Friday, after the lease ran out.",
             "s1-m2": "assistant: Noted. Do you want the floor plan of the Lisbon office sent to the team as well?"}
    ledger.session_of.update({m: "s1" for m in texts})
    hit = NS(text=texts["s1-m1"], source_ids=("s1-m1",))

    def backed(*items):
        return _hit_problems(hit, _snapshot_view(list(items), ledger, "sys"), ledger) == ([], False)

    from conformance.provenance import content_terms

    bag = " ".join(dict.fromkeys(w for t in texts.values() for w in sorted(content_terms(t))))
    ordered = " ".join(w for t in texts.values() for w in content_terms(t))
    assert not backed(NS(item_id="bag", text=bag, source_ids=("s1",)))
    assert not backed(NS(item_id="content", text=ordered, source_ids=("s1",)))
    assert backed(NS(item_id="verbatim", text="\n".join(texts.values()), source_ids=("s1",)))
    assert backed(NS(item_id="m1", text=texts["s1-m1"], source_ids=("s1-m1",)))
    # A rewriting memory's fact is its own hit: its words and their order are the item's.
    fact = NS(text="Principal moved the team to the Lisbon office", source_ids=("s1",))
    view = _snapshot_view([NS(item_id="f", text=fact.text, source_ids=("s1",))], ledger, "sys")
    assert _hit_problems(fact, view, ledger) == ([], False)


def test_uncited_hits_must_not_show_more_text_than_the_snapshot_holds():
    """A Snapshot that lists each word once backs every uncited hit word by word and in length,
    one hit at a time; across the checkpoint's hits it holds far less than they show."""
    from types import SimpleNamespace as NS

    from conformance.runner.audit import MessageLedger, audit_checkpoint

    sentences = [f"Priya moved the {thing} to the Lisbon office on Friday." for thing in
                 ("printer", "archive", "server", "plants", "whiteboard", "coffee machine")]
    hits = [NS(text=s, source_ids=()) for s in sentences]
    verbatim = [NS(item_id=f"i{n}", text=s, source_ids=()) for n, s in enumerate(sentences)]
    words = dict.fromkeys(w for s in sentences for w in s.rstrip(".").split())
    vocabulary = [NS(item_id="vocabulary", text=" ".join(words), source_ids=())]
    prior = [NS(item_id="prior", text="; ".join(sentences), source_ids=())]

    def findings(items):
        return audit_checkpoint("sys", MessageLedger(scenario_id="t"), items, hits, {})["findings"]

    assert findings(verbatim) == [] and findings(prior) == []
    # Each hit is unbacked on its own too now (the vocabulary lacks its word pairs); the overreach line stays.
    overreach = [line for line in findings(vocabulary) if "cite nothing" in line]
    assert len(overreach) == 1 and "Snapshot holds" in overreach[0]

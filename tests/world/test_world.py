"""The DRIFT world generator v2 over the whole scenario library."""

from __future__ import annotations

import re
import time
from collections import Counter
from datetime import datetime
from pathlib import Path


from conformance.answer.answerable import check_corpus
from conformance.answer.reader import last_option_in
from conformance.contract.corpus import validate_corpus
from conformance.world import templates as T
from conformance.world.entities import REGISTRY
from conformance.world.entities.team import ATTRIBUTION_QUERIES, DECISIONS
from conformance.world.generator import build_scenario, generate_corpus
from conformance.world.scenario import load_scenario

REPO = Path(__file__).resolve().parents[2]

def _names(text: str, phrase: str) -> bool:
    """Whole-word, case-insensitive mention, as the reader matches."""
    return last_option_in(text, [phrase]) is not None


def _when(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


ALL_DEFS = [d for cls in REGISTRY.values() for d in cls.attributes] + list(DECISIONS)
ALL_VALUES = sorted({v for d in ALL_DEFS for v in d.pool})
TARGETS = sorted({t for cls in REGISTRY.values() for t in cls.episodes})

EXPECTED = {
    "user_assistant": {"fact_recall", "relationship_recall", "temporal_recall", "negative_recall", "action",
                       "revision"},
    "coding_agent": {"fact_recall", "temporal_recall", "negative_recall", "action", "revision", "coverage",
                     "anti_pattern", "objective_coherence", "attribution"},
    "crawler_agent": {"fact_recall", "temporal_recall", "negative_recall", "action", "revision", "traversal",
                      "anti_pattern", "objective_coherence"},
    "multi_peer": {"fact_recall", "negative_recall", "action", "revision", "attribution", "canary", "consistency",
                   "handoff"},
}


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _ci_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    for path in sorted((REPO / "scenarios").glob("*-short-00[12].yaml")):
        (folder / path.name).write_bytes(path.read_bytes())
    return folder


# --- determinism, validity, size, speed ------------------------------------------

def test_same_seed_gives_byte_identical_files_and_another_seed_differs(tmp_path):
    folder = _ci_folder(tmp_path)
    a = generate_corpus(tmp_path / "a" / "f", tmp_path / "a" / "g", folder, seed=7)
    generate_corpus(tmp_path / "b" / "f", tmp_path / "b" / "g", folder, seed=7)
    generate_corpus(tmp_path / "c" / "f", tmp_path / "c" / "g", folder, seed=8)
    first, second, third = (_files(tmp_path / k) for k in "abc")
    assert len(a) == 8 and len(first) == 16
    assert first == second
    assert all(first[name] != third[name] for name in first)


def test_validate_corpus_passes_and_fixtures_carry_no_gold(library):
    fixtures, gold, ids = library
    assert validate_corpus(fixtures, gold) == sorted(ids)


def test_library_size_and_long_scenario_speed(library):
    fixtures, gold, _ = library
    size = sum(p.stat().st_size for folder in (fixtures, gold) for p in folder.iterdir())
    assert size < 40 * 2**20
    start = time.perf_counter()
    lines, _ = build_scenario(load_scenario(REPO / "scenarios" / "ua-baseline-001.yaml"))
    assert time.perf_counter() - start < 5.0
    assert sum(1 for line in lines if line.kind == "session") == 1000


def test_ua_baseline_generates_three_horizons(loaded):
    data = loaded["ua-baseline-001"]
    assert [(h.name, h.sessions) for h in data.header.horizons] == [("short", 30), ("medium", 170), ("long", 800)]
    assert [(cp.after_session, cp.horizon) for cp in data.checkpoints.values()] == [
        (30, "short"), (200, "medium"), (1000, "long")]
    gaps = [_when(b.time) - _when(a.time) for a, b in zip(data.sessions, data.sessions[1:])]
    assert gaps[0].total_seconds() == 8 * 3600 and gaps[100].days == 3 and gaps[500].days == 14
    assert all(p.horizon == data.checkpoints[p.checkpoint_id].horizon for p in data.gold.probes)


# --- tiers and events -------------------------------------------------------------

def test_tier_ratios(loaded):
    totals = Counter()
    for sid, data in loaded.items():
        tiers = Counter(data.gold.session_tiers.values())
        n = len(data.sessions)
        totals.update(tiers)
        assert sorted(data.gold.session_tiers) == sorted(s.session_id for s in data.sessions)
        if n >= 100:
            assert 0.07 <= tiers["signal"] / n <= 0.11, (sid, tiers)
            assert 0.55 <= tiers["noise"] / n <= 0.80, (sid, tiers)
        events = Counter(e.session_id for e in data.gold.events)
        assert set(events) == {s for s, t in data.gold.session_tiers.items() if t != "noise"}
        for event in data.gold.events:
            assert event.tier == data.gold.session_tiers[event.session_id]
            assert (event.kind == "change") == (event.tier == "signal")
    n = sum(totals.values())
    assert 0.08 <= totals["signal"] / n <= 0.11 and 0.15 <= totals["soft"] / n <= 0.32, totals


def test_long_trajectories_keep_changing_across_phases(loaded):
    for sid, data in loaded.items():
        if len(data.sessions) < 1000:
            continue
        index = {s.session_id: s.index for s in data.sessions}
        changes = [index[e.session_id] for e in data.gold.events if e.kind == "change"]
        assert any(i < 200 for i in changes) and sum(i >= 600 for i in changes) >= 20, sid


def test_every_message_has_a_scope_and_private_ones_carry_their_authors_own_facts(loaded):
    private = 0
    for data in loaded.values():
        carriers = {m for e in data.gold.events for m in e.message_ids}
        for s in data.sessions:
            assert set(s.participants) >= {m.author for m in s.messages}
            for m in s.messages:
                assert m.scope in ("shared", "private")
                if m.scope == "private":
                    private += 1
                    assert m.message_id in carriers
    assert private > 0


# --- probes ----------------------------------------------------------------------

def test_every_probe_is_answered_from_its_evidence_by_the_reader(library, loaded):
    # The project's own reader, applied to exactly each probe's gold evidence (the oracle's view).
    fixtures, gold, _ = library
    assert check_corpus(fixtures, gold) == []
    closed = [p for data in loaded.values() for p in data.gold.probes
              if data.public[p.probe_id][1].options is not None]
    for probe in closed:
        options = loaded[probe.probe_id.rsplit("-c", 1)[0]].public[probe.probe_id][1].options
        assert probe.answer in options and set(probe.stale) <= set(options), probe.probe_id
    assert sum(len(data.gold.probes) for data in loaded.values()) > 2000


def test_probe_types_per_paradigm(loaded):
    seen: dict[str, Counter] = {}
    subtypes = Counter()
    for data in loaded.values():
        seen.setdefault(data.header.paradigm, Counter()).update(p.probe_type for p in data.gold.probes)
        subtypes.update((p.probe_type, p.subtype) for p in data.gold.probes if p.subtype)
    for paradigm, expected in EXPECTED.items():
        missing = expected - set(seen[paradigm])
        assert not missing, (paradigm, missing)
    for pair in [("action", "preference_driven"), ("action", "constraint_aware"), ("action", "style_adaptive"),
                 ("revision", "fact_update"), ("revision", "preference_reversal"), ("revision", "half_life")]:
        assert subtypes[pair] >= 5, (pair, subtypes)


def test_abstention_canary_and_revision_gold(loaded):
    for data in loaded.values():
        for p in data.gold.probes:
            assert (p.answer == "unknown") == p.abstention == (p.probe_type in ("negative_recall", "canary"))
            if p.abstention:
                assert p.evidence == []
            if p.probe_type == "canary":
                assert p.owner == p.entity and p.owner != data.public[p.probe_id][1].asked_by
            if p.probe_type == "revision":
                assert p.stale and p.answer not in p.stale and p.evidence
                assert any(e.kind == "change" and set(e.message_ids) & set(p.evidence) for e in data.gold.events)


def test_canaries_sit_only_in_private_messages_or_sessions_the_asker_missed(loaded):
    canaries = 0
    for data in loaded.values():
        for p in (p for p in data.gold.probes if p.probe_type == "canary"):
            canaries += 1
            asker = data.public[p.probe_id][1].asked_by
            carriers = [m for e in data.gold.events if e.entity == p.owner and e.attribute == p.attribute
                        for m in e.message_ids]
            assert carriers
            for mid in carriers:
                session, msg = data.messages[mid]
                assert msg.scope == "private" or asker not in session.participants, mid
                assert msg.author == p.owner
    assert canaries >= 10


def test_askers_saw_the_evidence_except_for_handoff(loaded):
    for data in loaded.values():
        for p in data.gold.probes:
            asker = data.public[p.probe_id][1].asked_by
            for mid in p.evidence:
                session, msg = data.messages[mid]
                visible = msg.author == asker or (msg.scope == "shared" and asker in session.participants)
                if p.probe_type == "handoff":
                    first = next(s.index for s in data.sessions if asker in s.participants)
                    assert first > 0
                else:
                    assert visible, (p.probe_id, p.probe_type, mid)
            if p.probe_type == "handoff":
                established = min(data.messages[m][0].index for m in p.evidence)
                first = next(s.index for s in data.sessions if asker in s.participants)
                assert established < first or any(
                    e.attribute == p.attribute and data.messages[e.message_ids[0]][0].index < first
                    for e in data.gold.events)


def test_consistency_probes_come_in_pairs_from_two_entities(loaded):
    pairs = 0
    for data in loaded.values():
        by_cp = {}
        for p in (p for p in data.gold.probes if p.probe_type == "consistency"):
            by_cp.setdefault((p.checkpoint_id, p.attribute, p.entity), []).append(p)
        for group in by_cp.values():
            assert len(group) == 2
            a, b = (data.public[p.probe_id][1] for p in group)
            assert a.asked_by != b.asked_by and a.query == b.query and group[0].answer == group[1].answer
            pairs += 1
    assert pairs >= 10


def test_action_probes_have_one_consistent_choice_and_a_wrong_default(loaded):
    total = default_right = 0
    for data in loaded.values():
        snap = data.gold.snapshots
        for p in (p for p in data.gold.probes if p.probe_type == "action"):
            asked = data.public[p.probe_id][1]
            truth = snap[p.checkpoint_id][p.entity]
            consistent = [c for c in asked.choices if all(truth.get(k) == v for k, v in c.tags.items())]
            assert [c.choice_id for c in consistent] == [p.answer]
            assert all(set(c.tags) == set(asked.domains) and all(v in asked.domains[k] for k, v in c.tags.items())
                       for c in asked.choices)
            total += 1
            default_right += next(c for c in asked.choices if c.default).choice_id == p.answer
    assert total >= 50 and default_right <= total * 0.1


def test_queries_do_not_name_the_answer(loaded):
    for data in loaded.values():
        for p in data.gold.probes:
            asked = data.public[p.probe_id][1]
            options = asked.options or []
            assert not [o for o in options if o != "unknown" and _names(asked.query, o)], asked.query
            if p.evidence and asked.options and not asked.temporal and p.probe_type != "attribution":
                words = set(re.findall(r"[a-z]{4,}", asked.query.lower()))
                evidence = set(re.findall(r"[a-z]{4,}", " ".join(data.messages[m][1].text for m in p.evidence).lower()))
                assert len(words & evidence) <= max(2, len(words) // 2), (asked.query, p.probe_id)


def test_snapshots_match_the_answers(loaded):
    for data in loaded.values():
        for p in data.gold.probes:
            if p.probe_type in ("fact_recall", "revision", "relationship_recall", "coverage", "traversal",
                                "objective_coherence", "anti_pattern", "handoff", "consistency"):
                assert data.gold.snapshots[p.checkpoint_id][p.entity][p.attribute] == p.answer, p.probe_id


# --- templates -----------------------------------------------------------------------

def _strings(obj) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in _strings(v)]
    if isinstance(obj, (list, tuple)):
        return [s for v in obj for s in _strings(v)]
    return []


def test_value_pools_are_unambiguous():
    for a in ALL_VALUES + TARGETS:
        assert not _names(a, "unknown")
        for b in ALL_VALUES + TARGETS:
            assert a == b or not _names(a, b), (a, b)


def test_static_text_names_no_value_target_or_unknown():
    texts = _strings([T.GENERIC_ACKS, [tuple(e) for e in T.OPENERS + T.FOLLOW_UPS + T.CLOSERS + T.NOISE_TOPICS],
                      T.AGENT_NOISE, T.AGENT_FILLER, T.PREFIX, T.CHATTER, T.DISTRACTORS, ATTRIBUTION_QUERIES])
    for d in ALL_DEFS:
        texts += _strings([d.lines, d.acks, d.queries, d.choice or "", list(d.slots)])
    for cls in REGISTRY.values():
        texts += _strings([cls.episode_lines, [a.queries for a in cls.actions]])
    assert len(texts) > 200
    for text in texts:
        static = re.sub(r"\{\w+\}", " ", text)
        assert not _names(static, "unknown"), text
        assert not [v for v in ALL_VALUES + TARGETS if _names(static, v)], text


def test_change_lines_name_old_before_new():
    for d in ALL_DEFS:
        for line in d.lines.get("change", ()):
            assert "{new}" in line and "{value}" not in line
            if "{old}" in line:
                assert line.rindex("{old}") < line.index("{new}"), line

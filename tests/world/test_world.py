"""The DRIFT world generator v2 over the whole scenario library."""

from __future__ import annotations

import random
import re
from collections import Counter
from datetime import datetime
from pathlib import Path


from conformance.answer.answerable import check_corpus
from conformance.contract.answer_text import last_option_in
from conformance.contract.corpus import validate_corpus
from conformance.world import content as C
from conformance.world import markers
from conformance.world import templates as T
from conformance.world.entities import REGISTRY
from conformance.world.entities.team import ATTRIBUTION_QUERIES, DECISIONS
from conformance.world.generator import generate_corpus


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


def test_library_size_and_session_lengths(library, loaded):
    """Issue 17: the committed corpus stays under ~80 MB; sessions are long-tailed per paradigm (median at
    least 400 o200k_base tokens, p90 at least 1,200), alike in every tier. (Generation speed is printed by
    bench/generate_library.py, not asserted here.)"""
    from drift_sdk.tokens import count_tokens

    fixtures, gold, _ = library
    size = sum(p.stat().st_size for folder in (fixtures, gold) for p in folder.iterdir())
    assert size < 80 * 2**20
    lengths: dict[str, list[int]] = {}
    tiers: dict[str, list[int]] = {}
    for data in loaded.values():
        for s in data.sessions[::4]:  # every fourth session: the same distribution, a quarter of the counting
            n = count_tokens("\n".join(m.text for m in s.messages))
            lengths.setdefault(data.header.paradigm, []).append(n)
            tiers.setdefault(data.gold.session_tiers[s.session_id], []).append(n)

    def quantile(values: list[int], q: float) -> int:
        return sorted(values)[int(q * len(values))]
    for paradigm, values in lengths.items():
        assert quantile(values, 0.5) >= 400 and quantile(values, 0.9) >= 1200, (paradigm, quantile(values, 0.5))
    medians = [quantile(v, 0.5) for v in tiers.values()]
    assert max(medians) <= 1.25 * min(medians), medians


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
                # Evidence is the newest statements since the latest change of the attribute (capped).
                changes = [e for e in data.gold.events if e.kind == "change" and e.entity == p.entity
                           and e.attribute == p.attribute]
                after = data.checkpoints[p.checkpoint_id].after_session
                index = {s.session_id: s.index for s in data.sessions}
                last = max((index[e.session_id] for e in changes if index[e.session_id] < after), default=None)
                assert last is not None and all(data.messages[m][0].index >= last for m in p.evidence), p.probe_id


def test_canaries_sit_only_in_private_messages_of_sessions_the_asker_missed(loaded):
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
                assert msg.scope == "private" and asker not in session.participants, mid
                assert msg.author == p.owner
    assert canaries >= 10


def test_every_multi_peer_scenario_discloses_a_canary_and_ci_has_canary_and_handoff(loaded):
    ci = Counter()
    for sid, data in loaded.items():
        if data.header.paradigm != "multi_peer":
            continue
        canaries = {(e, k): asker for e, prof in data.gold.profiles.items() for k, asker in prof["canaries"].items()}
        disclosed = [key for key in canaries if any((e.entity, e.attribute) == key for e in data.gold.events)]
        assert disclosed, sid
        for (owner, key), asker in canaries.items():
            for event in (e for e in data.gold.events if (e.entity, e.attribute) == (owner, key)):
                for mid in event.message_ids:
                    session, msg = data.messages[mid]
                    assert msg.scope == "private" and msg.author == owner and asker not in session.participants
        assert any(p.probe_type == "canary" for p in data.gold.probes), sid
        if "ci" in data.header.splits:
            ci.update(p.probe_type for p in data.gold.probes)
    assert ci["canary"] >= 1 and ci["handoff"] >= 1, ci


def test_askers_have_joined_and_never_ask_about_themselves(loaded):
    for data in loaded.values():
        for p in data.gold.probes:
            cp, asked = data.public[p.probe_id]
            first = next((s.index for s in data.sessions if asked.asked_by in s.participants), None)
            assert first is not None and first < cp.after_session, (p.probe_id, asked.asked_by)
            assert not _names(asked.query, asked.asked_by), (p.probe_id, asked.query)
            voice = data.gold.profiles[asked.asked_by]["type"]
            if voice == "human":
                assert asked.asked_by != p.entity, (p.probe_id, asked.query)
                if data.gold.profiles[asked.asked_by]["principal"]:
                    assert not _names(asked.query, "the principal") and not _names(asked.query, "the user"), \
                        (p.probe_id, asked.query)


def test_evidence_is_short(loaded):
    lengths = Counter(len(p.evidence) for data in loaded.values() for p in data.gold.probes)
    assert max(lengths) <= 6, lengths


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


def test_action_probes_have_one_consistent_choice_and_leak_nothing_by_structure(loaded):
    total = default_right = 0
    expected = 0.0
    positions = Counter()
    for data in loaded.values():
        snap = data.gold.snapshots
        for p in (p for p in data.gold.probes if p.probe_type == "action"):
            asked = data.public[p.probe_id][1]
            truth = snap[p.checkpoint_id][p.entity]
            consistent = [c for c in asked.choices if all(truth.get(k) == v for k, v in c.tags.items())]
            assert [c.choice_id for c in consistent] == [p.answer]
            assert all(set(c.tags) == set(asked.domains) and all(v in asked.domains[k] for k, v in c.tags.items())
                       for c in asked.choices)
            assert sum(c.default for c in asked.choices) == 1
            # Symmetric overlap: every choice shares as many tag values with the others as any other does.
            overlap = {sum(1 for o in asked.choices if o is not c for k, v in c.tags.items() if o.tags.get(k) == v)
                       for c in asked.choices}
            assert len(overlap) == 1, (p.probe_id, [c.tags for c in asked.choices])
            total += 1
            default_right += next(c for c in asked.choices if c.default).choice_id == p.answer
            expected += 1 / len(asked.choices)
            positions[[c.choice_id for c in asked.choices].index(p.answer)] += 1
    # The default (an amnesiac's pick) is right as often as any position: 1/len(choices) per probe.
    assert total >= 50 and abs(default_right - expected) <= 3 * expected ** 0.5, (default_right, expected, total)
    assert max(positions.values()) <= 0.4 * total, positions


def test_temporal_answer_position_and_rank_are_spread(loaded):
    positions, ranks = Counter(), Counter()
    for data in loaded.values():
        for p in data.gold.probes:
            asked = data.public[p.probe_id][1]
            if asked.temporal is None:
                continue
            positions[asked.options.index(p.answer)] += 1
            amounts = sorted(int(o.split()[0]) for o in asked.options if o != "unknown")
            ranks[amounts.index(int(p.answer.split()[0]))] += 1
    total = sum(positions.values())
    assert total >= 50
    assert max(positions.values()) <= 0.4 * total and len(positions) >= 4, positions
    # The rank is uniform: the smallest amount (what a hit dated "now" points to) is right a quarter of the time.
    assert len(ranks) == 4 and all(abs(n - total / 4) <= 3 * (total * 3 / 16) ** 0.5 for n in ranks.values()), ranks


def test_queries_do_not_name_the_answer(loaded):
    for data in loaded.values():
        for p in data.gold.probes:
            asked = data.public[p.probe_id][1]
            options = asked.options or []
            assert not [o for o in options if o != "unknown" and _names(asked.query, o)], asked.query
            if p.evidence and asked.options and not asked.temporal and p.probe_type != "attribution":
                words = set(re.findall(r"[a-z]{4,}", asked.query.lower()))
                # The sentences of the evidence that state the answer (its messages carry other parts too),
                # without the frame of a quoted line ('What I sent Ann earlier: "...').
                stating = [x.split(': "', 1)[-1] for m in p.evidence
                           for x in re.split(r"(?<=[.!?])\s+|\n+", data.messages[m][1].text) if _names(x, p.answer)]
                evidence = set(re.findall(r"[a-z]{4,}", " ".join(stating).lower()))
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
    parts = [C.DOCS, C.VERBS, C.CONSTRAINTS, C.DAYS, C.HOWTOS, C.NEWS, C.FRAMES_SAID, C.EPISODES, C.PLANS, C.HYPOS,
             C.QUESTIONS, C.ASKS, C.STEP_VERBS, C.STEP_OBJECTS, C.STEP_TAILS, C.EXPLAIN, C.CODE_NOUNS, C.CODE_VERBS,
             C.TOOL_INTROS, C.PAGE_INTROS, C.AGENT_NOTES, C.AGENT_REPLIES, C.ACKS_HUMAN, C.ACKS_AGENT,
             C.VALUE_DECOYS, C.AGENT_DECOYS, C.SUPERSEDED, C.EPISODE_DECOYS, C.QUOTE_FRAMES, C.SELF_FRAMES,
             C.SAID_TO, ATTRIBUTION_QUERIES]
    texts = _strings(parts)
    for d in ALL_DEFS:
        texts += _strings([d.lines, d.acks, d.queries, d.choice or "", list(d.slots)])
    for cls in REGISTRY.values():
        texts += _strings([cls.episode_lines, [a.queries for a in cls.actions]])
    assert len(texts) > 300
    for text in texts:
        static = re.sub(r"\{\w+\}|<target>", " ", text)
        assert not _names(static, "unknown"), text
        assert not [v for v in ALL_VALUES + TARGETS if _names(static, v)], text


def test_every_content_part_is_clean_and_faker_pools_are_stable():
    """Parts drawn many times name nothing forbidden (values, targets, slots, entity ids, "unknown", marker
    shapes); the pools are the same in two processes' worth of draws (seed 0, pinned faker)."""
    forbid = C.forbidden_pattern(("lead", "coder", "rosa"))
    content = C.Content(random.Random(3), C.PUBLIC, forbid)
    for _ in range(300):
        for text in (content.human_part(), content.assistant_part(), content.agent_part(), content.quoted_news()):
            assert not forbid.search(text) and not markers.CODE_PATTERN.search(text), text
    C.pools.cache_clear()
    first = C.pools("en_US")
    C.pools.cache_clear()
    assert C.pools("en_US") == first and len(first["name"]) == C.POOL_SIZE
    assert C.content_libraries()["faker"]["version"] == C.FAKER_VERSION


def test_trie_pattern_matches_whole_words_and_the_longest_value():
    pattern = C.forbidden_pattern(())
    found = [m.group(0) for m in pattern.finditer("Python 3.11 beats Python 3.1; green teak; a cold brew, /docs/x")]
    assert found == ["Python 3.11", "cold brew", "/docs"]


def test_change_lines_name_old_before_new():
    for d in ALL_DEFS:
        for line in d.lines.get("change", ()):
            assert "{new}" in line and "{value}" not in line
            if "{old}" in line:
                assert line.rindex("{old}") < line.index("{new}"), line


def test_generated_text_has_no_template_artefacts(loaded):
    for data in loaded.values():
        for s in data.sessions:
            for m in s.messages:
                text = m.text
                assert "{" not in re.sub(r"```python.*?```", "", text, flags=re.S), text  # no unfilled slot
                for match in re.finditer(r"(?<![\w'])([Aa]n?) (?=(\S+))", text):
                    if match.group(2).strip('"').lower() in {v.lower() for v in ALL_VALUES}:
                        assert (match.group(1).lower() == "an") == bool(T._VOWEL_SOUND.match(match.group(2))), text


def test_fill_and_style_helpers():
    assert T.fill("I want a {value}.", value="espresso") == "I want an espresso."
    assert T.fill("A {value} please", value="latte") == "A latte please"
    assert T.join_prefix("hey, ", "Could you help?") == "hey, could you help?"
    assert T.join_prefix("hey, ", "I think so") == "hey, I think so"
    assert T.join_prefix("quick one: ", "Globex again", frozenset({"Globex"})) == "quick one: Globex again"
    assert T.join_prefix("Good morning. ", "Could you") == "Good morning. Could you"
    assert T.add_tail("help", "Sorry, long week.") == "help. Sorry, long week."
    assert T.add_tail("help?", "Anyway.") == "help? Anyway."

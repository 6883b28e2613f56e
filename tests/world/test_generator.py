"""The deterministic DRIFT generator: determinism, tiers, probes and the reader contract."""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from conformance.contract.corpus import iter_fixture, read_gold, validate_corpus
from conformance.contract.fixture import CheckpointLine, HeaderLine, Message, SessionLine
from conformance.world import templates as T
from conformance.world.generator import generate_corpus

IDS = [f"ua-short-{i:03d}" for i in range(1, 9)]
ALL_VALUES = [(attr, value) for attr in T.ATTRIBUTES for value in T.POOLS[attr]]


# --- helpers -----------------------------------------------------------------

def _positions(text: str, phrase: str) -> list[int]:
    """Start offsets of ``phrase`` in ``text`` as a whole word/phrase, case-insensitive."""
    pattern = r"(?<!\w)" + re.escape(phrase) + r"(?!\w)"
    return [m.start() for m in re.finditer(pattern, text, flags=re.IGNORECASE)]


def _names(text: str, phrase: str) -> bool:
    return bool(_positions(text, phrase))


def reader(hits: list[Message], options: list[str]) -> str:
    """The deterministic reader rule: the newest hit naming any option wins; within a
    hit the option mentioned last wins; nothing found means 'unknown'."""
    for hit in sorted(hits, key=lambda m: m.timestamp, reverse=True):
        found = [(max(_positions(hit.text, o)), o) for o in options if _positions(hit.text, o)]
        if found:
            return max(found)[1]
    return "unknown"


def _load(fixtures: Path, gold: Path, scenario: str):
    lines = list(iter_fixture(fixtures / f"{scenario}.jsonl"))
    sessions = [line for line in lines if isinstance(line, SessionLine)]
    checkpoints = {line.checkpoint_id: line for line in lines if isinstance(line, CheckpointLine)}
    return lines, sessions, checkpoints, read_gold(gold / f"{scenario}.json")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("corpus")
    generate_corpus(root / "fixtures", root / "gold")
    return root / "fixtures", root / "gold"


@pytest.fixture(scope="module")
def scenarios(corpus):
    fixtures, gold = corpus
    return {scenario: _load(fixtures, gold, scenario) for scenario in IDS}


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# --- determinism and validity ------------------------------------------------

def test_same_seed_writes_byte_identical_files(tmp_path):
    assert generate_corpus(tmp_path / "a" / "fixtures", tmp_path / "a" / "gold", seed=7) == IDS
    generate_corpus(tmp_path / "b" / "fixtures", tmp_path / "b" / "gold", seed=7)
    first, second = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert len(first) == 16
    assert first == second


def test_different_seed_differs(tmp_path):
    generate_corpus(tmp_path / "a" / "fixtures", tmp_path / "a" / "gold", seed=1)
    generate_corpus(tmp_path / "b" / "fixtures", tmp_path / "b" / "gold", seed=2)
    first, second = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert first.keys() == second.keys()
    assert all(first[name] != second[name] for name in first)


def test_scenarios_differ_from_each_other(scenarios):
    texts = {sid: tuple(m.text for s in data[1] for m in s.messages) for sid, data in scenarios.items()}
    assert len(set(texts.values())) == len(IDS)


def test_validate_corpus_passes(corpus):
    assert validate_corpus(*corpus) == IDS


def test_header_sessions_and_messages_have_the_required_shape(scenarios):
    for sid, (lines, sessions, checkpoints, gold) in scenarios.items():
        header = lines[0]
        assert isinstance(header, HeaderLine) and header.paradigm == "user_assistant"
        assert [(e.entity_id, e.type) for e in header.entities] == [("principal", "human"),
                                                                     ("assistant", "assistant_agent")]
        assert [(h.name, h.sessions, h.session_gap_hours) for h in header.horizons] == [("short", 30, 8)]
        assert len(sessions) == 30
        for number, session in enumerate(sessions, start=1):
            assert session.session_id == f"{sid}-s{number:02d}"
            assert session.time.endswith("Z")
            if number > 1:
                gap = _time(session.time) - _time(sessions[number - 2].time)
                assert gap == timedelta(hours=8)
            assert 2 <= len(session.messages) <= 8
            for m, msg in enumerate(session.messages, start=1):
                assert msg.message_id == f"{session.session_id}-m{m}"
                assert (msg.author, msg.role) in {("principal", "user"), ("assistant", "assistant")}
                assert msg.scope == "shared" and msg.timestamp.endswith("Z")
                assert _time(msg.timestamp) == _time(session.time) + timedelta(minutes=m - 1)
                assert not _names(msg.text, "unknown")
        # checkpoints follow sessions 10, 20, 30 in the line order
        order = [line.checkpoint_id for line in lines if isinstance(line, CheckpointLine)]
        assert order == [f"{sid}-c1", f"{sid}-c2", f"{sid}-c3"]
        for n, cid in enumerate(order, start=1):
            cp = checkpoints[cid]
            assert cp.after_session == 10 * n and cp.horizon == "short"
            at = lines.index(cp)  # right after its last session: header + 10n sessions + earlier checkpoints
            assert at == 10 * n + n and lines[at - 1].index == 10 * n - 1
            assert 4 <= len(cp.probes) <= 6


def _time(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


# --- tiers and events --------------------------------------------------------

def test_tier_counts(scenarios):
    for _, sessions, _, gold in scenarios.values():
        assert sorted(gold.session_tiers) == sorted(s.session_id for s in sessions)
        assert Counter(gold.session_tiers.values()) == {"noise": 21, "signal": 3, "soft": 6}
        # one event per signal/soft session, none in noise sessions
        by_session = Counter(e.session_id for e in gold.events)
        assert all(count == 1 for count in by_session.values())
        assert {sid for sid, tier in gold.session_tiers.items() if tier != "noise"} == set(by_session)
        for event in gold.events:
            assert event.tier == gold.session_tiers[event.session_id]
            assert (event.kind == "change") == (event.tier == "signal")


def test_changes_follow_a_disclosure_of_the_same_fact(scenarios):
    for _, sessions, _, gold in scenarios.values():
        order = {s.session_id: s.index for s in sessions}
        for event in gold.events:
            if event.kind != "change":
                continue
            earlier = [e for e in gold.events if e.attribute == event.attribute
                       and order[e.session_id] < order[event.session_id]]
            assert any(e.kind == "disclose" for e in earlier)
            assert earlier[-1].new == event.old


def test_pool_values_appear_only_in_events_or_assistant_distractors(scenarios):
    for _, sessions, _, gold in scenarios.values():
        carriers = {mid: e for e in gold.events for mid in e.message_ids}
        for session in sessions:
            noise = gold.session_tiers[session.session_id] == "noise"
            for msg in session.messages:
                named = [(attr, v) for attr, v in ALL_VALUES if _names(msg.text, v)]
                if noise:
                    # no fact about the user; asides by the assistant may share vocabulary
                    assert msg.author == "assistant" or not named, msg.text
                elif named:
                    event = carriers.get(msg.message_id)
                    assert event is not None, f"{msg.message_id} names {named} but carries no event"
                    assert {attr for attr, _ in named} == {event.attribute}, msg.text
                    assert _names(msg.text, event.new)
                    assert {v for _, v in named} <= {event.new, event.old}
                elif msg.message_id in carriers:
                    pytest.fail(f"{msg.message_id} is event evidence but names no value")


def test_noise_sessions_carry_distractors(scenarios):
    asides = sum(1 for _, sessions, _, gold in scenarios.values() for s in sessions
                 if gold.session_tiers[s.session_id] == "noise"
                 for m in s.messages if any(_names(m.text, v) for _, v in ALL_VALUES))
    assert asides >= 8 * 21 // 3


def test_signal_sessions_name_the_old_value_only_before_the_new(scenarios):
    for _, sessions, _, gold in scenarios.values():
        by_id = {s.session_id: s for s in sessions}
        for event in gold.events:
            if event.kind != "change":
                continue
            for msg in by_id[event.session_id].messages:
                old_at = _positions(msg.text, event.old)
                if old_at:
                    assert _positions(msg.text, event.new) and max(old_at) < max(_positions(msg.text, event.new))


# --- probes ------------------------------------------------------------------

def test_probe_mix_options_and_timing(scenarios):
    for _, sessions, checkpoints, gold in scenarios.values():
        kinds = Counter(p.probe_type for p in gold.probes)
        assert set(kinds) <= {"fact_recall", "negative_recall", "revision"}
        assert kinds["revision"] >= 2 and kinds["negative_recall"] >= 2 and kinds["fact_recall"] >= 3
        public = {p.probe_id: (cp, p) for cp in checkpoints.values() for p in cp.probes}
        for probe in gold.probes:
            cp, asked = public[probe.probe_id]
            assert probe.checkpoint_id == cp.checkpoint_id and probe.entity == "principal"
            assert probe.probe_id.startswith(cp.checkpoint_id + "-p")
            assert asked.asked_by == "assistant"
            assert _time(asked.asked_at) == _time(sessions[cp.after_session - 1].time) + timedelta(hours=1)
            options = asked.options or []
            assert "unknown" in options and probe.answer in options and set(probe.stale) <= set(options)
            assert 6 <= len(options) - 1 <= 7 and len(set(options)) == len(options)
            assert (probe.probe_type == "negative_recall") == probe.abstention
            if probe.probe_type == "revision":
                assert probe.subtype in {"fact_update", "half_life"} and probe.stale
                assert probe.answer not in probe.stale
            assert gold.snapshots[cp.checkpoint_id]["principal"].get(probe.attribute, "unknown") == probe.answer


def test_revision_probes_point_at_the_change(scenarios):
    for _, sessions, checkpoints, gold in scenarios.values():
        messages = {m.message_id: (s, m) for s in sessions for m in s.messages}
        for probe in (p for p in gold.probes if p.probe_type == "revision"):
            after = checkpoints[probe.checkpoint_id].after_session
            before = [e for e in gold.events if e.attribute == probe.attribute
                      and messages[e.message_ids[0]][0].index < after]
            for stale in probe.stale:  # every stale value was stated before the checkpoint
                assert any(e.new == stale and e.kind in {"disclose", "change"} for e in before)
            assert probe.evidence
            for mid in probe.evidence:
                session, msg = messages[mid]
                assert gold.session_tiers[session.session_id] == "signal"
                assert session.index < after
                assert _names(msg.text, probe.answer)
            if probe.subtype == "fact_update":  # the change happened since the previous checkpoint
                first = messages[probe.evidence[0]][0].index
                assert first >= after - 10


def test_negative_attributes_never_come_from_the_principal(scenarios):
    for _, sessions, _, gold in scenarios.values():
        principal_text = [m.text for s in sessions for m in s.messages if m.author == "principal"]
        mentioned = {e.attribute for e in gold.events}
        for probe in (p for p in gold.probes if p.probe_type == "negative_recall"):
            assert probe.answer == "unknown" and probe.evidence == []
            assert probe.attribute not in mentioned
            assert probe.attribute not in gold.profiles["principal"]
            for value in T.POOLS[probe.attribute]:
                assert not any(_names(text, value) for text in principal_text)


def test_reader_on_exactly_the_evidence_gives_the_gold_answer(scenarios):
    """The oracle control can answer every probe from its gold evidence alone."""
    answered = 0
    for _, sessions, checkpoints, gold in scenarios.values():
        messages = {m.message_id: m for s in sessions for m in s.messages}
        options = {p.probe_id: p.options for cp in checkpoints.values() for p in cp.probes}
        for probe in gold.probes:
            hits = [messages[mid] for mid in probe.evidence]
            assert reader(hits, options[probe.probe_id]) == probe.answer, probe.probe_id
            answered += 1
    assert answered >= 8 * 12


def test_reader_helper_follows_the_rule():
    def msg(i: int, text: str) -> Message:
        return Message(message_id=f"m{i}", author="principal", role="user", text=text,
                       timestamp=f"2026-01-05T09:0{i}:00Z")
    options = ["Globex", "Initech", "unknown"]
    assert reader([msg(1, "at Globex"), msg(2, "left Globex for Initech")], options) == "Initech"
    assert reader([msg(2, "at Globex"), msg(1, "at Initech")], options) == "Globex"
    assert reader([msg(1, "at Globexx"), msg(2, "nothing")], options) == "unknown"
    assert reader([], options) == "unknown"


# --- templates ---------------------------------------------------------------

def _template_strings() -> list[str]:
    out: list[str] = []

    def walk(obj):
        if isinstance(obj, str):
            out.append(obj)
        elif isinstance(obj, dict):
            for value in obj.values():
                walk(value)
        elif isinstance(obj, (list, tuple)):
            for value in obj:
                walk(value)
    for data in (T.FACT_LINES, T.ACKS, T.GENERIC_ACKS, T.OPENERS, T.FOLLOW_UPS, T.CLOSERS, T.NOISE_TOPICS,
                 T.DISTRACTORS, T.QUERIES):
        walk(data)
    return out


def test_templates_name_no_value_outside_placeholders():
    strings = _template_strings()
    assert len(strings) > 150
    for text in strings:
        static = re.sub(r"\{\w+\}", " ", text)
        assert not _names(static, "unknown"), text
        assert not [v for _, v in ALL_VALUES if _names(static, v)], text


def test_change_lines_name_the_old_value_before_the_new():
    for attr in T.CHANGEABLE:
        for lines in T.FACT_LINES[attr]["change"].values():
            for line in lines:
                assert "{new}" in line and "{value}" not in line
                if "{old}" in line:
                    assert line.rindex("{old}") < line.index("{new}")


def test_value_pools_are_unambiguous():
    values = [v for _, v in ALL_VALUES]
    assert len(set(v.lower() for v in values)) == len(values)
    for a in values:
        assert not _names(a, "unknown")
        for b in values:
            assert a == b or not _names(a, b), (a, b)
    assert all(len(T.POOLS[attr]) >= 6 for attr in T.ATTRIBUTES)

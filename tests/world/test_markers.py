"""Session markers (DRIFT §7.2 selectivity without Snapshot): one per session, unique, and blind to tiers."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from conformance.contract.answer_text import last_option_in
from conformance.contract.corpus import canonical_json
from conformance.world import markers as M
from conformance.world.entities import REGISTRY
from conformance.world.entities.team import DECISIONS
from conformance.world.generator import build_scenario
from conformance.world.scenario import load_scenario

REPO = Path(__file__).resolve().parents[2]
ALL_VALUES = sorted({v for d in [d for cls in REGISTRY.values() for d in cls.attributes] + list(DECISIONS)
                     for v in d.pool})
TARGETS = sorted({t for cls in REGISTRY.values() for t in cls.episodes})
SENTENCE = re.compile("|".join(re.escape(t).replace(re.escape("{code}"), r"(?P<c%d>[A-Z]{2}[0-9]{4})" % i)
                               for i, t in enumerate(M.TEMPLATES)))


def _evidence(data) -> set[str]:
    return {m for e in data.gold.events for m in e.message_ids}


def _hosts(data):
    """(session, index of the message carrying the marker, template index) per session."""
    for s in data.sessions:
        code = data.header.markers[s.session_id]
        carriers = [i for i, m in enumerate(s.messages) if re.search(rf"(?<!\w){code}(?!\w)", m.text)]
        assert len(carriers) == 1, (s.session_id, code)
        text = s.messages[carriers[0]].text
        found = [m for m in SENTENCE.finditer(text) if code in m.group(0)]
        assert len(found) == 1 and text.endswith(found[0].group(0)), text
        template = int(next(k for k, v in found[0].groupdict().items() if v)[1:])
        yield s, carriers[0], template


def test_every_session_has_exactly_one_marker_said_only_there(loaded):
    for sid, data in loaded.items():
        markers = data.header.markers
        assert sorted(markers) == sorted(s.session_id for s in data.sessions), sid
        assert len(set(markers.values())) == len(markers), sid
        owner = {code: session for session, code in markers.items()}
        for s in data.sessions:
            code = markers[s.session_id]
            assert re.fullmatch(r"[A-HJ-NP-Z]{2}[1-9][0-9]{3}", code), code
            hits = [m for m in s.messages for _ in M.CODE_PATTERN.finditer(m.text)]
            # Exactly one code-shaped word in the session: its own marker, once, in a shared
            # message its author (a participant) said.
            assert [M.CODE_PATTERN.search(m.text).group(0) for m in hits] == [code], s.session_id
            assert hits[0].scope == "shared" and hits[0].author in s.participants
            assert owner[code] == s.session_id
        # Probes never mention a code (they are no answer option, no query word).
        for cp in data.checkpoints.values():
            assert not M.CODE_PATTERN.search(canonical_json(cp.model_dump(mode="json"))), cp.checkpoint_id


def test_markers_sit_at_the_end_of_a_non_evidence_message_when_there_is_one(loaded):
    fallback = 0
    for data in loaded.values():
        evidence = _evidence(data)
        for s, at, _ in _hosts(data):
            shared = [i for i, m in enumerate(s.messages) if m.scope == "shared"]
            plain = [i for i in shared if s.messages[i].message_id not in evidence]
            if plain:
                assert at == plain[-1], s.session_id
            else:  # every shared message carries the event: the marker is a separate sentence on the last
                assert at == shared[-1], s.session_id
                fallback += 1
    assert fallback < 100


def test_marker_placement_and_form_do_not_depend_on_the_tier(loaded):
    where: dict[str, Counter] = {}
    forms: dict[str, Counter] = {}
    roles: dict[str, Counter] = {}
    for data in loaded.values():
        for s, at, template in _hosts(data):
            tier = data.gold.session_tiers[s.session_id]
            shared = [i for i, m in enumerate(s.messages) if m.scope == "shared"]
            where.setdefault(tier, Counter())["last shared" if at == shared[-1] else "earlier"] += 1
            forms.setdefault(tier, Counter())[template] += 1
            roles.setdefault(tier, Counter())[s.messages[at].role] += 1
    assert set(where) == {"signal", "soft", "noise"}
    for tier in where:
        n = sum(where[tier].values())
        assert n >= 500, (tier, n)
        assert where[tier]["last shared"] / n >= 0.95, (tier, where[tier])
        for template in range(len(M.TEMPLATES)):
            assert abs(forms[tier][template] / n - 1 / len(M.TEMPLATES)) < 0.05, (tier, forms[tier])
    # The kind of author carrying it (user, assistant, agent, tool) is spread alike across tiers.
    totals = Counter()
    for c in roles.values():
        totals.update(c)
    grand = sum(totals.values())
    for tier, c in roles.items():
        n = sum(c.values())
        for role, count in totals.items():
            assert abs(c[role] / n - count / grand) < 0.12, (tier, role, c, totals)


def test_marker_templates_name_no_value_target_entity_or_unknown():
    for template in M.TEMPLATES:
        static = template.replace("{code}", " ")
        assert last_option_in(static, ["unknown"]) is None
        assert last_option_in(static, ALL_VALUES + TARGETS) is None, template
        assert not re.search(r"(?<![\w'])[Aa]n? ", static), template  # no article to get wrong
        assert len(M.Marker("KX4821", M.TEMPLATES.index(template)).sentence) <= 30


def test_draw_markers_is_deterministic_unique_and_well_formed():
    import random

    a = M.draw_markers(random.Random("x"), 3000)
    assert a == M.draw_markers(random.Random("x"), 3000)
    assert a != M.draw_markers(random.Random("y"), 3000)
    assert len({m.code for m in a}) == 3000
    assert all(M.CODE_PATTERN.fullmatch(m.code) and not set(m.code) & set("IO") for m in a)
    assert len({m.template for m in a}) == len(M.TEMPLATES)


@pytest.mark.parametrize("scenario", ["ua-short-001", "cod-short-001", "crw-short-001", "mp-short-001"])
def test_markers_change_nothing_else(monkeypatch, scenario):
    """With markers left out, the gold is identical and the text differs only by the marker sentences."""
    spec = load_scenario(REPO / "scenarios" / f"{scenario}.yaml")
    lines, gold = build_scenario(spec)
    monkeypatch.setattr(M, "place", lambda turns, marker: list(turns))
    bare_lines, bare_gold = build_scenario(spec)
    assert canonical_json(gold.model_dump(mode="json")) == canonical_json(bare_gold.model_dump(mode="json"))
    assert len(lines) == len(bare_lines)
    codes = lines[0].markers
    for line, bare in zip(lines[1:], bare_lines[1:]):
        if line.kind != "session":
            assert line == bare
            continue
        sentence = None
        for m, b in zip(line.messages, bare.messages, strict=True):
            if m.text != b.text:
                assert sentence is None and m.text.startswith(b.text.rstrip())
                sentence = m.text[len(b.text.rstrip()):].lstrip(". ")
                assert m.model_copy(update={"text": b.text}) == b
        assert sentence is not None and codes[line.session_id] in sentence
        assert sentence in {t.format(code=codes[line.session_id]) for t in M.TEMPLATES}

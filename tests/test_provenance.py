"""Carried provenance (conformance/provenance.py): honest memories keep their credit whatever form
they store, and a hit cannot earn credit for messages its text does not carry."""

from __future__ import annotations

import random
from pathlib import Path

from conformance.contract.corpus import iter_fixture
from conformance.contract.fixture import SessionLine
from conformance.provenance import (
    HIT_SHARE,
    MESSAGE_SHARE,
    budget_cut,
    carried_ids,
    carries,
    content_words,
)

REPO = Path(__file__).resolve().parents[1]
MATE = "No more yerba mate, it's green tea every morning now"


def test_content_words_drop_function_words_and_stem():
    assert content_words(MATE) == {"yerba", "mate", "green", "tea", "morn"}
    assert content_words("User drinks green tea") == {"user", "drink", "green", "tea"}
    assert content_words("Drinking, drinks; DRINK!") == {"drink"}
    assert content_words("Sam’s sister's car") == content_words("sam sister car")
    assert content_words("a I is the") == frozenset()


def test_a_verbatim_memory_carries_its_message():
    assert carries(content_words(f"principal: {MATE}"), content_words(MATE))


def test_an_extractive_summary_carries_the_messages_it_quotes_and_not_the_others():
    kept = "Moved to Porto in March for the new job."
    summary = f"[2026-03-01] principal: {kept} principal: The cat hates the train. assistant: Noted, trains."
    words = content_words(summary)
    assert carries(words, content_words(kept))
    assert not carries(words, content_words("Booked a dentist appointment for Tuesday afternoon"))


def test_a_fact_rewriting_memory_keeps_its_credit():
    # shared {green, tea}: 2 of the message's 5 content words (< MESSAGE_SHARE) but 2 of the hit's 4 (>= HIT_SHARE)
    assert 2 / 5 < MESSAGE_SHARE and 2 / 4 >= HIT_SHARE
    assert carries(content_words("User drinks green tea"), content_words(MATE))
    assert carries(content_words("The user moved to Porto for a new job"),
                   content_words("Moved to Porto in March for the new job."))


def test_a_short_hit_cannot_carry_many_messages_by_the_rewriting_route():
    # bench/attacks/short_carry: five common words, each of 40 cited messages holding two of them.
    hit = content_words("deploy pipeline staging budget review")
    pairs = [("deploy", "pipeline"), ("staging", "budget"), ("review", "deploy"), ("pipeline", "staging")]
    words_of = {f"s1-m{i}": content_words(f"{a} {b} extra{i} words{i} here{i} gone{i} other{i}")
                for i, (a, b) in enumerate(pairs * 10)}
    assert all(carries(hit, words) for words in words_of.values())
    carried = carried_ids(hit, tuple(words_of), words_of, {})
    # Each hit word counts toward one message: two disjoint pairs at most.
    assert carried == ["s1-m0", "s1-m1"]
    assert carried_ids(hit, ("s1",), words_of, {"s1": tuple(words_of)}) == carried


def test_the_rewriting_route_credits_the_best_matching_cited_message():
    words_of = {"m-tea": content_words("Green tea or coffee, whatever is in the office kitchen"),
                "m-mate": content_words(MATE)}
    # The documented fact still carries the yerba-mate message ({green, tea}: 2 of the hit's 4 words).
    fact = content_words("User drinks green tea")
    assert carried_ids(fact, ("m-mate",), words_of, {}) == ["m-mate"]
    # Citing the office message too: both share only {green, tea}, spent on the first cited.
    assert carried_ids(fact, ("m-tea", "m-mate"), words_of, {}) == ["m-tea"]
    # The best match wins whatever the citation order: three shared words beat two of them.
    words_of.update(two=content_words("alpha bravo xray yankee zulu kilo lima"),
                    three=content_words("alpha bravo charlie mike november oscar papa"))
    assert carried_ids(content_words("alpha bravo charlie delta echo"), ("two", "three"), words_of, {}) == ["three"]
    # The first route spends nothing: a hit quoting two messages carries both, shared words or not.
    both = content_words(f"principal: {MATE} principal: Green tea or coffee, whatever is in the office kitchen")
    assert carried_ids(both, ("m-mate", "m-tea"), words_of, {}) == ["m-mate", "m-tea"]


def test_one_shared_word_is_not_enough_unless_the_message_has_only_one():
    assert not carries(content_words("User likes tea"), content_words(MATE))
    assert carries(content_words("tea"), content_words("Tea!"))
    assert not carries(content_words("anything at all"), frozenset())


def test_a_session_citation_credits_only_the_messages_the_hit_carries():
    words_of = {"s1-m1": content_words(MATE), "s1-m2": content_words("Booked a dentist appointment for Tuesday")}
    messages_of = {"s1": ("s1-m1", "s1-m2")}
    hit = content_words("User drinks green tea")
    assert carried_ids(hit, ("s1",), words_of, messages_of) == ["s1-m1"]
    assert carried_ids(hit, ("s1-m2", "s1-m1", "s1-m1", "nope"), words_of, messages_of) == ["s1-m1"]


def test_only_the_first_budget_tokens_of_a_hit_can_carry():
    head = "Moved to Porto in March for the new job. "
    packed = head + "filler words " * 3000 + MATE
    cut = budget_cut(packed, 1200, "o200k_base")
    assert cut.startswith(head) and MATE not in cut and len(cut) < len(packed)
    assert budget_cut("short text", 1200, "o200k_base") == "short text"
    assert not carries(content_words(cut), content_words(MATE))


def _messages(scenario: str) -> list[tuple[str, str, str]]:
    out = []
    for line in iter_fixture(REPO / "fixtures" / f"{scenario}.jsonl"):
        if isinstance(line, SessionLine):
            out.extend((m.message_id, m.author, m.text) for m in line.messages)
    return out


def test_on_the_corpus_a_message_carries_itself_and_rarely_another():
    # The thresholds' calibration: every verbatim hit ("author: text") carries its message; a hit
    # citing some other message of the same scenario is carried rarely (templated replies repeat).
    rng = random.Random(7)
    for scenario in ("cod-short-001", "ua-short-001", "mp-short-001", "crw-short-001"):
        messages = _messages(scenario)
        words = {mid: content_words(text) for mid, _, text in messages}
        scored = [mid for mid, _, _ in messages if words[mid]]
        assert all(carries(content_words(f"{author}: {text}"), words[mid]) for mid, author, text in messages
                   if words[mid])
        pairs = [(rng.choice(scored), rng.choice(scored)) for _ in range(2000)]
        cross = [(a, b) for a, b in pairs if a != b]
        carried = sum(carries(words[a], words[b]) for a, b in cross)
        assert carried / len(cross) < 0.1, (scenario, carried / len(cross))


def test_short_texts_are_memoized_by_digest_and_long_ones_are_not_kept():
    from conformance import provenance

    short = "Nadia switched from yerba mate to green tea last spring."
    first = provenance.content_words(short)
    assert provenance.content_words(short) is first  # memoized
    # The budget gate: the memo holds digests and derived values, never a message's text.
    assert not any(isinstance(x, str) for x in provenance.content_words.memo)
    assert all(isinstance(v, frozenset) for v in provenance.content_words.memo.values())
    long = "tea " * (provenance.MEMO_CHARS // 4 + 1)
    pair = provenance.word_pairs("tea tea")
    size = len(provenance.word_pairs.memo)
    assert provenance.word_pairs(long) == pair and len(long) > provenance.MEMO_CHARS
    assert len(provenance.word_pairs.memo) == size  # computed, not kept
    assert provenance.content_terms(short) == ("nadia", "switched", "yerba", "mate", "green", "tea", "last", "spring")

def test_pairs_hold_punctuation_so_a_flattened_snapshot_does_not_back_the_verbatim_hit():
    """bench/attacks/word_order: the Snapshot shows each message as its words joined by spaces
    (16% fewer o200k tokens) while Retrieve returns the text as typed. Its words and their count
    back the hit; the pairs a comma, colon, dash or symbol makes with its neighbours do not."""
    from conformance.provenance import backing_problems, content_words, snapshot_backing, word_pairs

    hit = "Moved the dentist to 2026-03-04, 10:30: Dr. Okafor's office ($120 co-pay)."
    flat = "moved the dentist to 2026 03 04 10 30 dr okafor's office 120 co pay"
    # 'moved the dentist to 2026 - 03 - 04 , 10 : 30 : dr' (14 pairs), 'okafor's office ( $ 120 co - pay )' (8)
    assert len(word_pairs(hit)) == 22
    assert len(word_pairs(hit) & word_pairs(flat)) == 6  # moved-the-dentist-to-2026, okafor's-office, 120-co
    assert word_pairs("a, b") == {hash(("a", ",")), hash((",", "b"))}

    class Item:
        def __init__(self, text):
            self.text, self.source_ids, self.item_id = text, ("m1",), "i"

    for text, unordered in ((hit, False), (flat, True)):
        view = snapshot_backing([Item(text)], lambda item: content_words(item.text), lambda i: "s1")
        assert backing_problems(("m1",), hit, view, lambda i: "s1")[2] is unordered, text


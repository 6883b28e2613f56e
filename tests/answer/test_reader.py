"""The context budget and the deterministic reader, checked by hand."""


from conformance.answer.reader import answer_closed, build_context, context_tokens, render_line
from conformance.contract.answer_text import last_option_in
from conformance.answer.tokens import count_tokens
from conformance.backend.systems import RetrievedHit

OPTIONS = ["Lisbon", "Porto", "Rome", "unknown"]


def H(text: str, timestamp: str) -> RetrievedHit:
    """A retrieved hit as the runner hands it to the reader."""
    return RetrievedHit(text, 1.0, ("m",), timestamp)


def ctx(*hits, budget=10_000):
    return build_context(list(hits), budget)


def test_nothing_named_means_unknown():
    assert answer_closed(OPTIONS, ctx(H("we talked about the weather", "2026-01-01T00:00:00Z"))) == "unknown"
    assert answer_closed(OPTIONS, []) == "unknown"


def test_newest_hit_wins_over_better_rank():
    hits = ctx(H("user: I live in Lisbon", "2026-01-01T00:00:00Z"), H("user: moved to Porto", "2026-03-01T00:00:00Z"))
    assert answer_closed(OPTIONS, hits) == "Porto"


def test_equal_time_better_rank_wins():
    hits = ctx(H("Rome", "2026-01-01T00:00:00Z"), H("Lisbon", "2026-01-01T00:00:00Z"))
    assert answer_closed(OPTIONS, hits) == "Rome"


def test_last_mention_inside_a_hit_wins_and_whole_words_only():
    assert last_option_in("left Lisbon, now in Porto", OPTIONS) == "Porto"
    assert last_option_in("Romeo and Juliet", OPTIONS) is None
    assert last_option_in("ROME!", OPTIONS) == "Rome"


def test_hits_outside_the_budget_are_not_read():
    first = H("user: I live in Lisbon", "2026-01-01T00:00:00Z")
    newer = H("user: now Porto " + "filler " * 50, "2026-05-01T00:00:00Z")
    line1 = count_tokens(render_line(1, first.timestamp, first.text))
    context = build_context([first, newer], budget_tokens=line1 + 5)
    assert [h.in_budget for h in context] == [True, False]
    assert context_tokens(context) == line1
    assert answer_closed(OPTIONS, context) == "Lisbon"


def test_budget_cut_is_by_rank_later_small_hits_do_not_sneak_in():
    big = H("x " * 400, "2026-01-01T00:00:00Z")
    small = H("Rome", "2026-01-02T00:00:00Z")
    context = build_context([big, small], budget_tokens=50)
    assert [h.in_budget for h in context] == [False, False]
    assert answer_closed(OPTIONS, context) == "unknown"


def test_token_count_is_tiktoken_o200k():
    # Hand-checked with tiktoken o200k_base: "Hello world" is two tokens.
    assert count_tokens("Hello world") == 2

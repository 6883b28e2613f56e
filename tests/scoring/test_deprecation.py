"""Deprecation (DRIFT §7.3): a hit that records the change does not keep the old belief."""

from conformance.contract.gold import GoldFile, GoldProbe
from conformance.scoring import build_probe_rows

GOLD = GoldFile(scenario_id="s", source="t", probes=[
    GoldProbe(probe_id="p", checkpoint_id="c", probe_type="revision", answer="Porto", stale=["Lisbon"],
              evidence=["m2"])])
SESSIONS = {"s": {"m1": "s1", "m2": "s2"}}


def row(*texts, in_budget=True):
    hits = [{"rank": i + 1, "text": t, "score": 1.0, "source_ids": ["m2"], "timestamp": "", "tokens": 5,
             "in_budget": in_budget} for i, t in enumerate(texts)]
    record = {"kind": "probe", "system": "x", "scenario_id": "s", "checkpoint_id": "c", "horizon": "short",
              "probe_id": "p", "answer": "Porto", "provenance": True, "hits": hits, "context_tokens": 5,
              "read_latency_ms": 1.0, "usage": {}, "error": None}
    return build_probe_rows([record], {"s": GOLD}, SESSIONS)[0]


def test_change_message_naming_old_then_new_deprecates():
    assert row("I moved from Lisbon to Porto last week").deprecated is True


def test_a_hit_still_asserting_the_old_value_fails_deprecation():
    assert row("I moved from Lisbon to Porto", "I live in Lisbon").deprecated is False
    assert row("Porto is nice, but home is Lisbon").deprecated is False


def test_stale_outside_the_budget_does_not_count():
    assert row("I live in Lisbon", in_budget=False).deprecated is True


def test_messages_packed_into_one_hit_in_time_order_still_assert_the_old_value():
    # bench/attacks/chrono_pack: the pack ends on the newest value, its first line keeps Lisbon.
    assert row("user: I live in Lisbon\nuser: I live in Porto now").deprecated is False
    assert row("user: I moved from Lisbon to Porto\nassistant: Porto it is").deprecated is True

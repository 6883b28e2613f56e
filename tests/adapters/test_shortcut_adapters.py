"""The shortcut controls of `audit-shortcuts` (adapters/shortcut-*), in process: each does exactly its trick."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from drift_sdk.types import Message, Session

ADAPTERS = Path(__file__).resolve().parents[2] / "adapters"


def module(name: str):
    spec = importlib.util.spec_from_file_location(f"shortcut_{name}", ADAPTERS / f"shortcut-{name}" / "adapter.py")
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = loaded
    spec.loader.exec_module(loaded)
    return loaded


def session(i: int, *texts: str, scope: str = "shared", participants=("alice", "bot")) -> Session:
    t = f"2026-02-{i + 1:02d}T10:00:00Z"
    return Session(f"s{i}", i, t, participants,
                   tuple(Message(f"s{i}-m{j}", "alice", "user", text, t, scope) for j, text in enumerate(texts)))


def test_recency_keeps_the_last_three_sessions_and_ignores_the_query():
    b = module("recency").RecencyBackend()
    b.reset("n")
    for i in range(5):
        b.store("n", session(i, f"note {i}"))
    hits = b.retrieve("n", "anything at all", 10, "bot", "")
    assert [h.source_ids[0] for h in hits] == ["s4-m0", "s3-m0", "s2-m0"]
    assert [m.item_id for m in b.snapshot("n")] == ["s2-m0", "s3-m0", "s4-m0"]


def test_prior_keeps_nothing_of_its_scenario_and_answers_from_other_scenarios_pairs():
    b = module("prior").PriorBackend()
    b.reset("first")
    for i in range(3):
        result = b.store("first", session(i, "I moved to Lisbon last year.", "The weather in Lisbon is mild."))
        assert result.items_stored == 0
    # Nothing of the scenario being answered is held: before another scenario starts, no prior.
    assert b.snapshot("first") == [] and b.retrieve("first", "Lisbon?", 5, "bot", "2026-03-01T00:00:00Z") == []
    b.reset("second")
    b.store("second", session(9, "Porto has a famous bridge."))
    [hit] = b.retrieve("second", "Where does alice live, Lisbon?", 5, "bot", "2026-03-01T00:00:00Z")
    assert hit.source_ids == () and hit.timestamp == "2026-03-01T00:00:00Z"
    assert hit.text.split("; ")[0] in {"to Lisbon", "in Lisbon", "Lisbon last", "Lisbon is"}
    assert "Porto" not in hit.text  # the second scenario's own words are not in its prior
    # The Snapshot is the prior itself, citing nothing: it holds every hit's text.
    [item] = b.snapshot("second")
    assert item.source_ids == () and set(hit.text.split("; ")) <= set(item.text.split("; "))
    assert "Porto" not in item.text


def test_dump_stores_everything_and_returns_only_what_the_asker_may_see():
    b = module("dump").DumpBackend()
    b.reset("n")
    b.store("n", session(0, "I moved to Lisbon.", "Lunch was fine."))
    b.store("n", session(1, "Secret: I moved to Porto.", scope="private"))
    b.store("n", session(2, "Lisbon trams again.", participants=("alice", "carol")))
    assert len(b.snapshot("n")) == 4
    seen = [h.source_ids[0] for h in b.retrieve("n", "moved Lisbon Porto", 10, "bot", "")]
    assert seen == ["s0-m0"]  # not alice's private note, not a session bot missed, not the unrelated lunch
    assert [h.source_ids[0] for h in b.retrieve("n", "moved Lisbon Porto", 10, "alice", "")][0] == "s1-m0"


def test_frequency_forgets_sentences_seen_three_times_across_scenarios():
    b = module("frequency").FrequencyBackend()
    b.reset("a")
    b.store("a", session(0, "Routine check passed. I moved to Lisbon."))
    b.store("a", session(1, "Routine check passed."))
    b.flush("a", 1)
    assert [m.text for m in b.snapshot("a")] == ["alice: Routine check passed. I moved to Lisbon.",
                                                 "alice: Routine check passed."]
    b.store("a", session(2, "routine  check passed."))  # third sighting (case and spacing folded): forgotten
    b.flush("a", 1)
    assert [m.text for m in b.snapshot("a")] == ["alice: I moved to Lisbon."]
    b.reset("b")  # another scenario: the counts carry over
    b.store("b", session(0, "Routine check passed. Fresh words here."))
    b.flush("b", 1)
    assert [m.text for m in b.snapshot("b")] == ["alice: Fresh words here."]
    assert [h.source_ids[0] for h in b.retrieve("b", "fresh routine", 5, "bot", "")] == ["s0-m0"]

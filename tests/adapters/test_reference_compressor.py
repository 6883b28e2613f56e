"""The reference compressor (DRIFT §7.1/§7.7): one capped extractive summary per session.

In process for the behaviour (cap, filler, provenance, Flush, determinism, k, Forget),
plus one run through the real process launcher over gRPC.
"""

import importlib.util
import json
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

pytest.importorskip("bm25s", reason="bm25s is in the test extra: pip install -e '.[test]'")

from drift_sdk.tokens import count_tokens  # noqa: E402
from drift_sdk.types import Message, Session  # noqa: E402

ADAPTER = Path(__file__).resolve().parents[2] / "adapters" / "reference-compressor" / "adapter.py"
CAP = 512


def module():
    spec = importlib.util.spec_from_file_location("reference_compressor_adapter", ADAPTER)
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = loaded  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(loaded)
    return loaded


def load():
    backend = module().ReferenceCompressorBackend()
    backend.reset("n")
    return backend


def session(i, *turns):
    """Session ``s{i}`` on 2026-01-(i+1); each turn is ``(author, text)`` or plain text by alice."""
    t = f"2026-01-{i + 1:02d}T09:00:00Z"
    messages = []
    for j, turn in enumerate(turns):
        author, text = turn if isinstance(turn, tuple) else ("alice", turn)
        messages.append(Message(f"s{i}-m{j}", author, "user" if author == "alice" else "assistant", text, t))
    return Session(f"s{i}", i, t, ("alice", "agent"), tuple(messages))


FILLER = ["ok trying it now", "Great, let me know how it goes.", "Sure.", "thanks!", "any other option?",
          "hmm ok"]

_TOPICS = ["kitchen renovation", "marathon training", "tax return", "garden irrigation", "database migration",
           "wedding seating", "guitar practice", "budget spreadsheet", "bike repair", "language course"]


def huge_session(i=0):
    """A long session (about 5,000 o200k tokens of text) of varied informative sentences and filler."""
    turns = []
    for j in range(220):
        topic = _TOPICS[j % len(_TOPICS)]
        if j % 5 == 4:
            turns.append(("agent", FILLER[j % len(FILLER)]))
        elif j % 2:
            turns.append(("agent", f"For the {topic}, step {j} means checking the schedule, the costs and the "
                                   f"supplier list before committing to anything expensive or irreversible."))
        else:
            turns.append(("alice", f"I decided that the {topic} should finish before week {j + 3}; "
                                   f"my sister Carla in Lisbon agrees with plan {j}."))
    return session(i, *turns)


def snapshot_bytes(backend) -> bytes:
    return json.dumps([asdict(item) for item in backend.snapshot("n")], sort_keys=True).encode()


def test_a_huge_session_becomes_one_summary_within_512_tokens_in_original_order():
    s = huge_session()
    raw = sum(count_tokens(f"{m.author}: {m.text}") for m in s.messages)
    assert 4_500 < raw < 6_000  # about ten times the cap
    b = load()
    result = b.store("n", s)
    [item] = b.snapshot("n")
    assert result.items_stored == 1 and item.item_id == "s0"
    assert count_tokens(item.text) <= CAP
    assert count_tokens(item.text) > CAP - 60  # the cap is used, not left mostly empty
    ids = [m.message_id for m in s.messages]
    positions = [ids.index(i) for i in item.source_ids]
    assert positions == sorted(positions) and len(positions) < len(ids)
    # Kept sentences appear in session order inside the text.
    offsets = [item.text.index(s.messages[p].text) for p in positions]
    assert offsets == sorted(offsets)


def test_one_unpunctuated_wall_of_text_is_cut_into_pieces_not_lost():
    wall = " ".join(f"Carla logged reading {j} from sensor Alpha near the northern gate" for j in range(300))
    b = load()
    assert b.store("n", session(0, wall)).items_stored == 1
    [item] = b.snapshot("n")
    assert 0 < count_tokens(item.text) <= CAP and item.source_ids == ("s0-m0",)


def test_the_cap_keeps_salient_sentences_first():
    m = module()
    s = huge_session()
    b = load()
    b.store("n", s)
    [item] = b.snapshot("n")
    kept = {int(i.split("-m")[1]) for i in item.source_ids}
    # First-person statements with numbers and names outrank generic advice when the cap binds.
    first_person = {j for j, msg in enumerate(s.messages) if msg.text.startswith("I decided")}
    assert kept and kept <= first_person
    assert m.analyse("I moved to Porto in 2024.").salience > m.analyse("this is a fairly generic remark").salience


def test_filler_is_dropped_and_speakers_repeats_and_date_are_kept():
    b = load()
    s = session(2, "ok trying it now", ("agent", "Great, let me know how it goes."),
                "My new job at Globex starts on Monday.", ("agent", "Congratulations on the Globex role!"),
                "My new job at Globex starts on Monday.", ("agent", "Sure."), "hmm, any other option?")
    result = b.store("n", s)
    [item] = b.snapshot("n")
    assert result.items_stored == 1
    assert item.text.startswith("[2026-01-03] ")
    assert "alice: My new job at Globex starts on Monday." in item.text
    assert "agent: Congratulations on the Globex role!" in item.text
    assert item.text.count("Globex starts") == 1  # the repeat is kept once
    for filler in ("trying it now", "let me know", "Sure.", "any other option"):
        assert filler not in item.text
    assert item.source_ids == ("s2-m2", "s2-m3")
    assert item.timestamp == s.time


def test_an_all_filler_session_stores_nothing_and_no_llm_tokens_are_reported():
    b = load()
    result = b.store("n", session(0, *FILLER))
    assert result.items_stored == 0 and b.snapshot("n") == []
    kept = b.store("n", session(1, "I adopted a beagle named Rufus."))
    assert kept.items_stored == 1
    assert (kept.usage.input_tokens, kept.usage.output_tokens, kept.usage.llm_calls) == (0, 0, 0)


def test_provenance_names_message_ids_of_the_session_and_summaries_are_searchable_only_after_flush():
    b = load()
    s = session(0, "my new job at Globex starts Monday", ("agent", "the weather is grey and windy today"))
    b.store("n", s)
    assert b.retrieve("n", "Globex job", 5, "alice", "") == []
    assert b.flush("n", 1) is True
    [hit] = b.retrieve("n", "Globex job", 5, "alice", "")
    assert set(hit.source_ids) <= {m.message_id for m in s.messages}
    assert hit.source_ids == ("s0-m0", "s0-m1")
    assert "Globex" in hit.text and hit.timestamp == s.time and hit.score > 0


def test_k_is_honoured_and_ties_go_to_the_newer_session():
    b = load()
    for i in range(6):
        b.store("n", session(i, f"I keep my coffee beans in jar number {i}."))
    b.flush("n", 1)
    hits = b.retrieve("n", "coffee beans", 3, "alice", "")
    assert len(hits) == 3
    assert len(b.retrieve("n", "coffee beans", 10, "alice", "")) == 6
    b.reset("n")
    b.store("n", session(0, "I live in Lisbon near the river"))
    b.store("n", session(1, "I live in Porto near the river"))
    b.flush("n", 1)
    [hit] = b.retrieve("n", "live river", 1, "alice", "")
    assert hit.source_ids == ("s1-m0",)


def test_two_runs_give_byte_identical_snapshots_and_hits():
    runs = []
    for _ in range(2):
        b = load()
        b.store("n", huge_session(0))
        for i in range(1, 6):
            b.store("n", session(i, f"note {i} about coffee and tea", ("agent", "Rome trip planning for May"),
                                 "ok trying it now"))
        b.flush("n", 1)
        hits = [(h.text, h.source_ids, h.score, h.timestamp) for h in b.retrieve("n", "coffee Rome", 10, "a", "")]
        runs.append((snapshot_bytes(b), hits))
    assert runs[0] == runs[1] and len(runs[0][1]) == 5


def test_forget_rewrites_summaries_without_the_forgotten_messages_and_drops_empty_ones():
    b = load()
    b.store("n", session(0, "I live in Oslo with my partner", ("agent", "Oslo winters are long and dark")))
    b.store("n", session(1, "My secret plan involves Bergen"))
    b.flush("n", 1)
    assert b.forget("n", ["s0-m0", "s1-m0"]) == 2
    [item] = b.snapshot("n")
    assert item.item_id == "s0" and item.source_ids == ("s0-m1",)
    assert "partner" not in item.text and item.text == "[2026-01-01] agent: Oslo winters are long and dark"
    assert b.retrieve("n", "Oslo", 5, "x", "") == []  # the old index is gone until Flush
    b.flush("n", 1)
    assert b.retrieve("n", "Bergen secret", 5, "x", "") == []
    assert [h.source_ids for h in b.retrieve("n", "Oslo winters", 5, "x", "")] == [("s0-m1",)]
    assert b.forget("n", ["no-such-id"]) == 0


def test_reset_isolates_namespaces_and_settings_report_the_cap():
    b = load()
    b.reset("other")
    b.store("n", session(0, "secret plan in Oslo with Ingrid"))
    b.flush("n", 1)
    b.flush("other", 1)
    assert b.retrieve("other", "Oslo", 5, "x", "") == []
    with pytest.raises(ValueError):
        b.store("missing", session(1, "I live in Rome"))
    settings = b.settings()
    assert settings["summary_cap"].startswith("min(512, max(100, ceil(0.3 x ") and "o200k_base" in settings["summary_cap"]
    assert settings["form"].startswith("extractive-2") and "departure" in settings
    assert "density" in settings["salience"]
    caps = b.capabilities
    assert caps.provenance and caps.snapshot and caps.forget and caps.flush_signal and caps.deterministic


@pytest.mark.slow
def test_end_to_end_through_the_process_launcher_over_grpc():
    from conformance.backend.venvs import VenvError, looks_offline
    from conformance.contract.fixture import Message as FixtureMessage
    from conformance.contract.fixture import Probe
    from conformance.contract.fixture import Session as FixtureSession
    from conformance.backend.systems import open_system

    try:
        system = open_system("reference-compressor")
    except VenvError as exc:
        if looks_offline(str(exc)):
            pytest.skip(f"reference-compressor venv cannot be built: no package index reachable\n{exc}")
        raise
    try:
        assert system.describe["name"] == "reference-compressor"
        assert system.provenance and system.supports_snapshot
        t = "2026-03-02T10:00:00Z"
        s = FixtureSession(session_id="e2e-s1", index=0, time=t, participants=["alice", "agent"], messages=[
            FixtureMessage(message_id="e2e-s1-m1", author="alice", role="user", text="I adopted a beagle named Rufus.",
                           timestamp=t),
            FixtureMessage(message_id="e2e-s1-m2", author="agent", role="assistant", text="ok great", timestamp=t),
            FixtureMessage(message_id="e2e-s1-m3", author="alice", role="user",
                           text="My sister Carla moved to Lisbon to work as a nurse.", timestamp=t),
        ])
        system.reset("e2e")
        stored = system.store("e2e", s)
        assert stored.items_stored == 1 and stored.usage.get("llm_calls", 0) == 0
        flushed = system.flush("e2e", 30)
        assert flushed.ready is True and flushed.usage.get("llm_calls", 0) == 0
        probe = Probe(probe_id="e2e-p1", asked_by="alice", query="Where does Carla live?",
                      asked_at="2026-03-10T09:00:00Z", options=["Lisbon", "Porto", "unknown"])
        out = system.retrieve("e2e", probe, 5)
        [hit] = out.hits
        assert hit.source_ids == ("e2e-s1-m1", "e2e-s1-m3") and "Lisbon" in hit.text and hit.timestamp == t
        [item] = system.snapshot("e2e")
        assert item.item_id == "e2e-s1" and item.text == hit.text and "ok great" not in item.text
        assert count_tokens(item.text) <= CAP
    finally:
        system.close()


def test_extractive_2_keeps_a_share_of_each_session_within_512_tokens():
    """extractive-2: cap = min(512, max(100, ceil(0.3 x the session's transcript tokens))), by hand."""
    m = module()
    s = huge_session()
    assert m.session_cap(s) == 512  # 0.3 x ~5,000 tokens is past 512
    turns = [f"I decided that the {topic} waits until week {j + 3}; my sister Carla in Lisbon agrees."
             for j, topic in enumerate(_TOPICS * 2)]
    mid = session(1, *turns)
    raw = count_tokens("\n".join(f"{x.author}: {x.text}" for x in mid.messages))
    assert m.session_cap(mid) == -(-3 * raw // 10) < 512  # ceil(0.3 x raw)
    b = load()
    b.store("n", mid)
    [item] = b.snapshot("n")
    assert count_tokens(item.text) <= m.session_cap(mid) and count_tokens(item.text) < 0.35 * raw
    assert m.session_cap(session(2, "I moved to Porto.")) == 100  # the floor


def test_salience_prefers_first_person_statements_over_code_logs_questions_and_hearsay():
    m = module()
    statement = m.analyse("I moved to Porto last spring.").salience
    for other in ("Apparently Carla moved to Porto last spring.", "Did Carla move to Porto last spring?",
                  "12:04:55 INFO sync.load_rows: loaded 120 rows in 15 ms", "| Carla | Porto | 12 |"):
        assert m.analyse(other).salience < statement, other
    assert m.analyse("return out", raw=True).salience < m.analyse("return out").salience
    assert not m.analyse("return out", raw=True).informative
    # A line inside a code fence counts as raw output: it is never kept before a statement.
    b = load()
    code = "Patch below:\n```python\n" + "\n".join(f"value_{j} = compute_total(items, {j})" for j in range(60)) + "\n```"
    b.store("n", session(0, ("agent", code), "I moved to Porto last spring and I love it."))
    [item] = b.snapshot("n")
    assert "I moved to Porto" in item.text and "compute_total" not in item.text

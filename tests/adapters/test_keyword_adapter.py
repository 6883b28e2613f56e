"""The keyword reference adapter, in process: BM25 ranking, Flush-time indexing, determinism."""

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("bm25s", reason="bm25s is in the test extra: pip install -e '.[test]'")

from drift_sdk.types import Message, Session  # noqa: E402

ADAPTER = Path(__file__).resolve().parents[2] / "adapters" / "keyword" / "adapter.py"


def load():
    spec = importlib.util.spec_from_file_location("keyword_adapter", ADAPTER)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module.KeywordBackend()


def session(i, *texts):
    t = f"2026-01-{i + 1:02d}T00:00:00Z"
    return Session(f"s{i}", i, t, ("u",), tuple(Message(f"s{i}-m{j}", "u", "user", x, t) for j, x in enumerate(texts)))


def test_messages_are_searchable_only_after_flush():
    b = load()
    b.reset("n")
    b.store("n", session(0, "my new job at Globex starts Monday", "the weather is grey"))
    assert b.retrieve("n", "Globex job", 5, "a", "") == []
    b.flush("n", 1)
    hits = b.retrieve("n", "Globex job", 5, "a", "")
    assert [h.source_ids for h in hits] == [("s0-m0",)]


def test_ties_go_to_the_newer_message_and_k_is_honoured():
    b = load()
    b.reset("n")
    b.store("n", session(0, "I live in Lisbon"))
    b.store("n", session(1, "I live in Porto"))
    b.store("n", session(2, "unrelated chatter"))
    b.flush("n", 1)
    hits = b.retrieve("n", "where do I live", 1, "a", "")
    assert len(hits) == 1 and hits[0].source_ids == ("s1-m0",)


def test_two_instances_rank_identically():
    runs = []
    for _ in range(2):
        b = load()
        b.reset("n")
        for i in range(5):
            b.store("n", session(i, f"note {i} about coffee and tea", "Rome trip planning", "coffee again"))
        b.flush("n", 1)
        runs.append([(h.source_ids, h.score) for h in b.retrieve("n", "coffee Rome", 10, "a", "")])
    assert runs[0] == runs[1] and len(runs[0]) == 10


def test_reset_isolates_namespaces_and_forget_removes():
    b = load()
    b.reset("a")
    b.reset("b")
    b.store("a", session(0, "secret plan in Oslo"))
    b.flush("a", 1)
    b.flush("b", 1)
    assert b.retrieve("b", "Oslo", 5, "x", "") == []
    assert b.forget("a", ["s0-m0"]) == 1
    b.flush("a", 1)
    assert b.retrieve("a", "Oslo", 5, "x", "") == [] and b.snapshot("a") == []


def _sorted_in_python(scores, timestamps, k):
    """The ranking as a plain Python sort states it: score, then newer timestamp, then later
    storage order (a timestamp that is a prefix of another counts as the newer)."""
    def key(i):
        return (-scores[i], tuple(-ord(c) for c in timestamps[i]), -i)
    return [i for i in sorted(range(len(scores)), key=key) if scores[i] > 0][:k]


def test_vectorised_ranking_is_the_python_sort_with_its_tie_breaks():
    import numpy as np

    b = load()
    b.reset("n")
    rng = np.random.default_rng(7)
    # Few distinct words and timestamps, so scores and times tie often; one timestamp is a
    # prefix of another, and some documents match nothing (score 0).
    stamps = ["2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", "2026-01-02T00:00:00", "2026-01-03T00:00:00Z"]
    words = ["apple", "pear", "plum", "fig"]
    texts, times = [], []
    for i in range(300):
        t = stamps[int(rng.integers(len(stamps)))]
        text = " ".join(rng.choice(words, size=int(rng.integers(1, 4))))
        if i % 7 == 0:
            text = "nothing relevant here"
        b.store("n", Session(f"s{i}", i, t, ("u",), (Message(f"m{i}", "u", "user", text, t),)))
        texts.append(f"u: {text}")
        times.append(t)
    b.flush("n", 1)
    space = b._spaces["n"]
    for query in ("apple", "pear plum", "fig apple pear", "unmatched words"):
        tokens = sys.modules["keyword_adapter"]._tokenize([query])
        vocab = {i: t for t, i in tokens.vocab.items()}
        q = [vocab[i] for i in tokens.ids[0]]
        scores = [float(s) for s in space.index.get_scores(q)] if q else [0.0] * len(texts)
        for k in (1, 10, 300):
            want = [f"m{i}" for i in _sorted_in_python(scores, times, k)]
            got = [h.source_ids[0] for h in b.retrieve("n", query, k, "u", "")]
            assert got == want, (query, k)
    assert len(b.retrieve("n", "apple", 300, "u", "")) > 50  # ties were really exercised

"""In-process memories for the audit tests: one honest word-overlap memory and the cheats built on it.

Each cheat answers from exactly the honest memory's hits (or, storing nothing, from none) and
lies about one thing the harness used to take on trust: its Snapshot, its provenance, the size
of a hit, the time of a hit. ``systems(...)`` builds a run's system list for ``run_job`` (the
tests put it in place of ``open_systems``).
"""

from __future__ import annotations

from conformance.provenance import budget_cut, carried_ids, content_words
from conformance.runner.systems import RetrievedHit, RetrieveOutcome, SnapshotItem, StoreOutcome


class Overlap:
    """Honest: every message verbatim ("author: text"), ranked by shared content words, newest first on ties."""

    kind, provenance, supports_snapshot = "system", True, True

    def __init__(self, label: str, kind: str = "system"):
        self.label, self.spec, self.kind = label, label, kind
        self.describe = {"name": label, "version": "0", "capabilities": {"provenance": True, "snapshot": True}}
        self.isolation = {"mode": "in-process (test)"}
        self.docs: dict[str, list[tuple[str, str, str, str]]] = {}
        """namespace -> (message id, session id, text, timestamp), in storage order."""

    def reset(self, namespace):
        self.docs[namespace] = []

    def store(self, namespace, session):
        for m in session.messages:
            self.docs[namespace].append((m.message_id, session.session_id, f"{m.author}: {m.text}", m.timestamp))
        return StoreOutcome(0.1, {"input_tokens": 0, "output_tokens": 0, "llm_calls": 0}, len(session.messages))

    def flush(self, namespace, timeout_s):
        return True

    def ranked(self, namespace, query, k):
        words = content_words(query)
        scored = [(len(words & content_words(text)), ts, i) for i, (_, _, text, ts) in enumerate(self.docs[namespace])]
        top = sorted((s for s in scored if s[0] > 0), reverse=True)[:k]
        return [self.docs[namespace][i] for _, _, i in top]

    def hits(self, namespace, probe, k):
        return [RetrievedHit(text, 1.0, (mid,), ts) for mid, _, text, ts in self.ranked(namespace, probe.query, k)]

    def retrieve(self, namespace, probe, k):
        return RetrieveOutcome(self.hits(namespace, probe, k), 0.2, {"input_tokens": 0, "output_tokens": 0,
                                                                      "llm_calls": 0})

    def snapshot(self, namespace):
        return [SnapshotItem(mid, text, (mid,)) for mid, _, text, _ in self.docs[namespace]]

    def died(self):
        return None

    def close(self):
        pass


class Amnesiac(Overlap):
    """Honest: stores nothing, returns nothing (the ``none`` control)."""

    def store(self, namespace, session):
        return StoreOutcome(0.1, {"input_tokens": 0, "output_tokens": 0, "llm_calls": 0}, 0)

    def hits(self, namespace, probe, k):
        return []


class UnderstatedSnapshot(Overlap):
    """Keeps and answers like Overlap, but its Snapshot shows one one-token item per "signal-looking"
    session (every other one), so selectivity and storage look perfect."""

    def snapshot(self, namespace):
        sessions = list(dict.fromkeys(sid for _, sid, _, _ in self.docs[namespace]))
        return [SnapshotItem(sid, "ok", (sid,)) for i, sid in enumerate(sessions) if i % 2 == 0]


class CitesEverything(Overlap):
    """Overlap's hits, each citing every message stored so far."""

    def hits(self, namespace, probe, k):
        every = tuple(mid for mid, _, _, _ in self.docs[namespace])
        return [RetrievedHit(h.text, h.score, every, h.timestamp) for h in super().hits(namespace, probe, k)]


class PacksEverything(Overlap):
    """Overlap's first k-1 hits, then one hit packing every stored message and citing each."""

    def hits(self, namespace, probe, k):
        packed = "\n".join(text for _, _, text, _ in reversed(self.docs[namespace]))
        every = tuple(mid for mid, _, _, _ in self.docs[namespace])
        return [*super().hits(namespace, probe, k - 1), RetrievedHit(packed, 0.0, every, self.docs[namespace][-1][3])]


class PacksWithinBudget(PacksEverything):
    """The honest twin of PacksEverything: its last hit is cut at the budget and cites only what it carries."""

    budget_tokens = 1200

    def hits(self, namespace, probe, k):
        *first, packed = super().hits(namespace, probe, k)
        text = budget_cut(packed.text, self.budget_tokens, "o200k_base")
        words_of = {mid: content_words(t.split(": ", 1)[1]) for mid, _, t, _ in self.docs[namespace]}
        cited = tuple(carried_ids(content_words(text), packed.source_ids, words_of, {}))
        return [*first, RetrievedHit(text, 0.0, cited or packed.source_ids[-1:], packed.timestamp)]


class DatesNothingNow(Overlap):
    """Stores nothing, but answers every query with the query itself, cites the last session and dates it
    "now": a reader that trusts hit times reads "0 days ago" for every temporal probe."""

    def store(self, namespace, session):
        self.docs[namespace] = [(session.session_id, session.session_id, "", session.time)]
        return StoreOutcome(0.1, {"input_tokens": 0, "output_tokens": 0, "llm_calls": 0}, len(session.messages))

    def hits(self, namespace, probe, k):
        last = self.docs[namespace][-1][0] if self.docs[namespace] else None
        return [] if last is None else [RetrievedHit(probe.query, 1.0, (last,), probe.asked_at)]

    def snapshot(self, namespace):
        return []


def systems(*extra):
    """A run's systems with in-process controls: the amnesiac ``none``, the honest Overlap as the
    reference compressor's stand-in, then ``extra``."""
    return [Amnesiac("none", "control"), Overlap("reference-compressor", "reference"), *extra]

"""In-process memories for the audit tests: one honest word-overlap memory and the cheats built on it.

Each cheat answers from exactly the honest memory's hits (or, storing nothing, from none) and
lies about one thing the harness used to take on trust: its Snapshot, its provenance, the size
of a hit, the time of a hit. ``systems(...)`` builds a run's system list for ``run_job`` (the
tests put it in place of ``open_systems``).
"""

from __future__ import annotations

import re
from pathlib import Path

from conformance.answer.reader import ContextHit, answer_probe
from conformance.contract.corpus import iter_fixture, session_index, validate_selection
from conformance.contract.fixture import CheckpointLine
from conformance.provenance import STOPWORDS, budget_cut, carried_ids, content_words
from conformance.runner.records import read_records
from conformance.scoring import build_probe_rows, score_system
from conformance.contract.answer_text import normalize_answer
from conformance.backend.systems import FlushOutcome, RetrievedHit, RetrieveOutcome, SnapshotItem, StoreOutcome


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
    """Keeps and answers like Overlap, but its Snapshot shows, per signal-looking session, one short
    message (the strongest cheat: it is told which sessions gold marks signal or soft), so
    selectivity, storage and TES look perfect while Retrieve serves everything."""

    def __init__(self, label: str, signal: set[str]):
        super().__init__(label)
        self.signal = signal

    def snapshot(self, namespace):
        shortest: dict[str, tuple[int, str, str]] = {}
        for mid, sid, text, _ in self.docs[namespace]:
            if sid in self.signal and len(content_words(text)) >= 3:
                shortest[sid] = min(shortest.get(sid, (len(text), mid, text)), (len(text), mid, text))
        return [SnapshotItem(mid, text, (mid,)) for _, mid, text in shortest.values()]


class ShredsNoise(Overlap):
    """Keeps and answers like Overlap; its Snapshot lists signal sessions' messages verbatim and every
    other message as one-word items citing it (bench/attacks/shred_noise): a one-word item carries no
    message, so those sessions looked unstored, while the shards together back every hit."""

    def __init__(self, label: str, signal: set[str]):
        super().__init__(label)
        self.signal = signal

    def snapshot(self, namespace):
        out = []
        for mid, sid, text, _ in self.docs[namespace]:
            if sid in self.signal:
                out.append(SnapshotItem(mid, text, (mid,)))
            else:
                out += [SnapshotItem(f"{mid}#{i}", word, (mid,)) for i, word in enumerate(sorted(content_words(text)))]
        return out


class DodgesMarkers(Overlap):
    """Keeps and answers like Overlap but declares no Snapshot, and answers a session's marker
    (a bare code: the no-Snapshot selectivity probe) only for signal sessions (bench/attacks/marker_dodge)."""

    supports_snapshot = False

    def __init__(self, label: str, signal: set[str]):
        super().__init__(label)
        self.signal = signal
        self.describe = {**self.describe, "capabilities": {"provenance": True, "snapshot": False}}

    def hits(self, namespace, probe, k):
        hits = super().hits(namespace, probe, k)
        if re.fullmatch(r"[A-Z]{2}\d{4}", probe.query.strip()):
            sessions = {mid: sid for mid, sid, _, _ in self.docs[namespace]}
            hits = [h for h in hits if sessions[h.source_ids[0]] in self.signal]
        return hits


MARKER = re.compile(r"[A-Z]{2}\d{4}")


class DodgesAudits(DodgesMarkers):
    """DodgesMarkers, and it returns nothing to whatever it takes for the state audit's sentence
    probes (bench/attacks/audit_dodge), so no sentence of a session whose marker it withheld comes back:

    - by shape: no question mark and no function word (the audit asked bare content words);
    - by position: anything asked after a marker probe, until the next Store (the audit came as a
      batch after the markers);
    - by time: anything asked at another time than the first query after a Store (the audit asked
      at the last session's time, the real probes an hour later)."""

    def __init__(self, label: str, signal: set[str]):
        super().__init__(label, signal)
        self.after_marker: dict[str, bool] = {}
        self.first_time: dict[str, str | None] = {}

    def store(self, namespace, session):
        self.after_marker[namespace], self.first_time[namespace] = False, None
        return super().store(namespace, session)

    def hits(self, namespace, probe, k):
        query = probe.query.strip()
        if MARKER.fullmatch(query):
            self.after_marker[namespace] = True
            return super().hits(namespace, probe, k)
        if self.first_time.get(namespace) is None:
            self.first_time[namespace] = probe.asked_at
        words = re.findall(r"[^\W_]+(?:'[^\W_]+)*", query.casefold())
        shaped = "?" not in query and not any(w in STOPWORDS for w in words)
        if shaped or self.after_marker.get(namespace) or probe.asked_at != self.first_time[namespace]:
            return []
        return super().hits(namespace, probe, k)


class SniffsAudits(DodgesMarkers):
    """DodgesMarkers, and it answers the state audit's sentence probes, told apart by their words,
    only for signal sessions (bench/attacks/README.md, "No-Snapshot systems can sniff the audit"):
    an audit probe holds all but one of its content words in one stored message (the frame keeps
    one word of its question), which few real questions do. Markers and audit probes then agree,
    so the audit passes, and the noise sessions it keeps (and answers real questions from) looked
    forgotten."""

    def hits(self, namespace, probe, k):
        hits = super().hits(namespace, probe, k)
        words = content_words(probe.query)
        if len(words) >= 3 and any(len(words - content_words(text)) <= 1 for _, _, text, _ in self.docs[namespace]):
            sessions = {mid: sid for mid, sid, _, _ in self.docs[namespace]}
            hits = [h for h in hits if sessions[h.source_ids[0]] in self.signal]
        return hits


class VocabularySnapshot(Overlap):
    """Keeps and answers like Overlap; its Snapshot is one item citing every message whose text is
    the vocabulary of all it stores, each word once (bench/attacks/vocab_snapshot): it holds every
    hit's words, so it backed every hit, at a fraction of the storage."""

    def snapshot(self, namespace):
        docs = self.docs[namespace]
        vocab = dict.fromkeys(w for _, _, text, _ in docs for w in sorted(content_words(text)))
        return [SnapshotItem("vocab", " ".join(vocab), tuple(mid for mid, _, _, _ in docs))] if docs else []


class PadsVocabulary(Overlap):
    """Keeps and answers like Overlap; its Snapshot is the vocabulary (one item citing every
    message) plus, per message, one of its words and a run of spaces as long as the message
    (bench/attacks/pad_vocab): o200k encodes long runs of spaces in a token or two, so the pads
    lent each message its length for almost no storage while the vocabulary held every word."""

    def snapshot(self, namespace):
        docs = self.docs[namespace]
        if not docs:
            return []
        vocab = dict.fromkeys(w for _, _, text, _ in docs for w in sorted(content_words(text)))
        items = [SnapshotItem("vocab", " ".join(vocab), tuple(mid for mid, _, _, _ in docs))]
        return items + [SnapshotItem(f"pad-{mid}", (sorted(content_words(text)) or ["x"])[0] + " " * len(text), (mid,))
                        for mid, _, text, _ in docs]


class BagsSessions(Overlap):
    """Keeps and answers like Overlap (hits cite message ids); its Snapshot is one item per session,
    citing the session id only, whose text is the session's content words, each once
    (bench/attacks/session_bag): a message id is backed through its session, whose bag holds the
    message's words and outsizes it, so every verbatim hit was backed at a fraction of the storage."""

    def snapshot(self, namespace):
        bags: dict[str, dict[str, None]] = {}
        for _, sid, text, _ in self.docs[namespace]:
            bags.setdefault(sid, {}).update(dict.fromkeys(sorted(content_words(text))))
        return [SnapshotItem(f"bag-{sid}", " ".join(words), (sid,)) for sid, words in bags.items()]


class Resurrects(Overlap):
    """Keeps every message; at each checkpoint (the Snapshot call opens one) it shows, and answers
    from, only the sessions streamed since the previous checkpoint and every other older one, the
    other half at the next checkpoint (bench/attacks/hindsight picks them with hindsight of the
    questions): within a checkpoint nothing it says is false, yet sessions hidden at one checkpoint
    come back at the next, which a memory that forgot them could not do."""

    def __init__(self, label: str):
        super().__init__(label)
        self.shown: dict[str, set[str]] = {}
        self.checkpoints: dict[str, int] = {}
        self.seen: dict[str, int] = {}

    def reset(self, namespace):
        super().reset(namespace)
        self.shown[namespace], self.checkpoints[namespace], self.seen[namespace] = set(), 0, 0

    def snapshot(self, namespace):
        order = list(dict.fromkeys(sid for _, sid, _, _ in self.docs[namespace]))
        n = self.checkpoints[namespace] = self.checkpoints[namespace] + 1
        old, new = order[:self.seen[namespace]], order[self.seen[namespace]:]
        self.shown[namespace] = set(new) | {sid for i, sid in enumerate(old) if (i + n) % 2 == 0}
        self.seen[namespace] = len(order)
        return [SnapshotItem(mid, text, (mid,)) for mid, sid, text, _ in self.docs[namespace]
                if sid in self.shown[namespace]]

    def ranked(self, namespace, query, k):
        everything = super().ranked(namespace, query, 10 ** 6)
        return [d for d in everything if d[1] in self.shown.get(namespace, ())][:k]


class Abridges(Overlap):
    """Honest: keeps each message's first third of words ("author: text", at least three words),
    ranks and answers from that, and shows it as stored (a compressing memory)."""

    @staticmethod
    def abridged(text: str) -> str:
        words = text.split()
        return " ".join(words[:max(3, len(words) // 3)])

    def store(self, namespace, session):
        for m in session.messages:
            self.docs[namespace].append((m.message_id, session.session_id,
                                         self.abridged(f"{m.author}: {m.text}"), m.timestamp))
        return StoreOutcome(0.1, {"input_tokens": 0, "output_tokens": 0, "llm_calls": 0}, len(session.messages))


class RanksByHiddenText(Abridges):
    """Shows and answers with :class:`Abridges`'s items, but ranks them by the whole messages, kept in
    an index the Snapshot never shows (bench/attacks/hidden_index): every hit is backed, storage is
    the abridged memory's, and the ranking uses everything."""

    def __init__(self, label: str):
        super().__init__(label)
        self.full: dict[str, list[str]] = {}

    def reset(self, namespace):
        super().reset(namespace)
        self.full[namespace] = []

    def store(self, namespace, session):
        self.full[namespace].extend(f"{m.author}: {m.text}" for m in session.messages)
        return super().store(namespace, session)

    def ranked(self, namespace, query, k):
        words = content_words(query)
        docs = self.docs[namespace]
        scored = [(len(words & content_words(full)), docs[i][3], i) for i, full in enumerate(self.full[namespace])]
        top = sorted((s for s in scored if s[0] > 0), reverse=True)[:k]
        return [docs[i] for _, _, i in top]


class RestoresStubs(Overlap):
    """Keeps every message; at each checkpoint (the Snapshot call opens one) it shows in full, and
    answers from, the sessions streamed since the previous checkpoint and every other older
    message, the other half at the next checkpoint; the rest are shown as three-word stubs that
    carry their message (bench/attacks/message_hindsight keeps one anchor message per session and
    picks the rest with hindsight of the questions). Every session stays held, so no session is
    held again, yet messages cut to a stub at one checkpoint come back whole at the next."""

    def __init__(self, label: str):
        super().__init__(label)
        self.full: dict[str, set[str]] = {}
        self.checkpoints: dict[str, int] = {}
        self.seen: dict[str, int] = {}

    def reset(self, namespace):
        super().reset(namespace)
        self.full[namespace], self.checkpoints[namespace], self.seen[namespace] = set(), 0, 0

    def snapshot(self, namespace):
        docs = self.docs[namespace]
        n = self.checkpoints[namespace] = self.checkpoints[namespace] + 1
        old, new = docs[:self.seen[namespace]], docs[self.seen[namespace]:]
        self.full[namespace] = {d[0] for d in new} | {d[0] for i, d in enumerate(old) if (i + n) % 2 == 0}
        self.seen[namespace] = len(docs)
        return [SnapshotItem(mid, text if mid in self.full[namespace] else " ".join(text.split()[:3]), (mid,))
                for mid, _, text, _ in docs]

    def ranked(self, namespace, query, k):
        everything = super().ranked(namespace, query, 10 ** 6)
        return [d for d in everything if d[0] in self.full.get(namespace, ())][:k]


class LaundersCitations(Overlap):
    """Keeps and answers like Overlap; its Snapshot holds the signal sessions verbatim (it is told
    which) plus one "laundry" item, the vocabulary of every other message, citing one held session;
    a hit from a session it does not show cites that held session instead (bench/attacks/
    cite_launder): every hit was backed and no unheld session was ever "found" by the audit probes,
    which credited only a hit citing the probed session."""

    def __init__(self, label: str, signal: set[str]):
        super().__init__(label)
        self.signal = signal

    def _anchor(self, namespace):
        return next((sid for _, sid, _, _ in self.docs[namespace] if sid in self.signal), None)

    def snapshot(self, namespace):
        docs, anchor = self.docs[namespace], self._anchor(namespace)
        if anchor is None:
            return super().snapshot(namespace)
        items = [SnapshotItem(mid, text, (mid,)) for mid, sid, text, _ in docs if sid in self.signal]
        vocab = dict.fromkeys(w for _, sid, text, _ in docs if sid not in self.signal for w in sorted(content_words(text)))
        return items + ([SnapshotItem("laundry", " ".join(vocab), (anchor,))] if vocab else [])

    def hits(self, namespace, probe, k):
        anchor, out = self._anchor(namespace), []
        for mid, sid, text, ts in self.ranked(namespace, probe.query, k):
            out.append(RetrievedHit(text, 1.0, (mid,) if anchor is None or sid in self.signal else (anchor,), ts))
        return out


class UncitedNoise(Overlap):
    """Keeps and answers like Overlap; its Snapshot cites the signal sessions' messages (it is told
    which) and holds every other message verbatim in one item citing nothing, and hits from those
    cite nothing: the Snapshot holds all it shows, yet by provenance the noise looks dropped."""

    def __init__(self, label: str, signal: set[str]):
        super().__init__(label)
        self.signal = signal

    def snapshot(self, namespace):
        docs = self.docs[namespace]
        rest = "\n".join(text for _, sid, text, _ in docs if sid not in self.signal)
        return [SnapshotItem(mid, text, (mid,)) for mid, sid, text, _ in docs if sid in self.signal] + \
            ([SnapshotItem("kept", rest, ())] if rest else [])

    def hits(self, namespace, probe, k):
        return [RetrievedHit(text, 1.0, (mid,) if sid in self.signal else (), ts)
                for mid, sid, text, ts in self.ranked(namespace, probe.query, k)]


class MergesNoise(Overlap):
    """Keeps and answers like Overlap; its Snapshot cites the signal sessions' messages (it is told
    which) and holds each other session's messages verbatim in one item citing a *host*, a signal
    message before it (bench/attacks/host_merge); a hit from such a session is the host's text and
    the message, citing the host. The hit carries what it cites, so its other words were never read
    for content, and the items citing the host back it: by provenance the noise looks dropped."""

    def __init__(self, label: str, signal: set[str]):
        super().__init__(label)
        self.signal = signal

    def _hosts(self, namespace):
        hosts, last = {}, None
        first = next(((mid, text, ts) for mid, sid, text, ts in self.docs[namespace] if sid in self.signal), None)
        for mid, sid, text, ts in self.docs[namespace]:
            if sid in self.signal:
                last = (mid, text, ts)
            else:
                hosts.setdefault(sid, last or first)
        return hosts

    def snapshot(self, namespace):
        docs, hosts = self.docs[namespace], self._hosts(namespace)
        if not any(sid in self.signal for _, sid, _, _ in docs):
            return super().snapshot(namespace)
        bundles: dict[str, list[str]] = {}
        for _, sid, text, _ in docs:
            if sid not in self.signal:
                bundles.setdefault(sid, []).append(text)
        return [SnapshotItem(mid, text, (mid,)) for mid, sid, text, _ in docs if sid in self.signal] + \
            [SnapshotItem(f"bundle-{sid}", "\n".join(texts), (hosts[sid][0],)) for sid, texts in bundles.items()]

    def hits(self, namespace, probe, k):
        hosts, out = self._hosts(namespace), []
        for mid, sid, text, ts in self.ranked(namespace, probe.query, k):
            host = hosts.get(sid)
            out.append(RetrievedHit(text, 1.0, (mid,), ts) if sid in self.signal or host is None else
                       RetrievedHit(f"{host[1]}\n{text}", 1.0, (host[0],), host[2]))
        return out


class SniffsUncitedNoise(UncitedNoise):
    """UncitedNoise, and it answers the state audit's probes, told apart by their words (all but one
    of their content words in one stored message: SniffsAudits), from the signal sessions only
    (bench/attacks/sniff_uncited): the audit never finds a noise session by content, so nothing it
    asks shows the uncited item holding one."""

    def hits(self, namespace, probe, k):
        words = content_words(probe.query)
        if len(words) >= 3 and any(len(words - content_words(text)) <= 1 for _, _, text, _ in self.docs[namespace]):
            return [RetrievedHit(text, 1.0, (mid,), ts) for mid, sid, text, ts in self.ranked(namespace, probe.query, 10 ** 6)
                    if sid in self.signal][:k]
        return super().hits(namespace, probe, k)


class ReplaysAuditSeed(UncitedNoise):
    """UncitedNoise that replays the state audit's seeded choice of message per session (its seed is
    public ids: bench/attacks/seed_replay) and drops, of the noise sessions, each sampled message and
    every message holding half of a sampled message's other half: no hit or item then shows a noise
    session by the sampled message, and every other noise message stays, verbatim, outside the citations."""

    def __init__(self, label: str, signal: set[str]):
        super().__init__(label, signal)
        self.sampled: dict[str, set[str]] = {}
        self.rests: dict[str, list[frozenset[str]]] = {}

    def reset(self, namespace):
        super().reset(namespace)
        self.sampled[namespace], self.rests[namespace] = set(), []

    def store(self, namespace, session):
        from conformance.runner.audit import MessageLedger

        markers = {code for m in session.messages for code in re.findall(r"\b[A-Z]{2}\d{4}\b", m.text)}
        marker = markers.pop() if len(markers) == 1 else None
        ledger = MessageLedger(scenario_id=session.session_id.rsplit("-s", 1)[0])
        ledger.add_session(session, marker)  # the runner's own choice, from public ids
        sentence = ledger.sentences.get(session.session_id)
        if sentence is not None:
            asked = {w for term in sentence.ask for w in content_words(term)}
            self.sampled[namespace].update(
                m.message_id for m in session.messages
                if content_words(m.text.replace(marker, " ") if marker else m.text) == asked | sentence.rest)
            self.rests[namespace].append(sentence.rest)
        return super().store(namespace, session)

    def _kept(self, namespace, mid, sid, text):
        if sid in self.signal:
            return True
        words = content_words(text)
        return mid not in self.sampled[namespace] and not any(len(words & r) * 2 >= len(r)
                                                              for r in self.rests[namespace])

    def snapshot(self, namespace):
        return [item for item in super().snapshot(namespace) if item.source_ids] + [
            SnapshotItem(f"kept-{mid}", text, ()) for mid, sid, text, _ in self.docs[namespace]
            if sid not in self.signal and self._kept(namespace, mid, sid, text)]

    def hits(self, namespace, probe, k):
        return [RetrievedHit(text, 1.0, (mid,) if sid in self.signal else (), ts)
                for mid, sid, text, ts in self.ranked(namespace, probe.query, 10 ** 6)
                if self._kept(namespace, mid, sid, text)][:k]


class TrimsReplayedNoise(ReplaysAuditSeed):
    """ReplaysAuditSeed whose uncited items and hits lose every fourth distinct content word of each
    message (bench/attacks/seed_trim): no one of them holds 80% of a message's words, while the
    reader still gets three quarters of them."""

    @staticmethod
    def trimmed(text: str) -> str:
        from conformance.provenance import content_terms

        gone = set(list(dict.fromkeys(content_terms(text)))[1::4])
        return " ".join(t for t in text.split() if not set(content_terms(t)) & gone)

    def snapshot(self, namespace):
        return [item if item.source_ids else SnapshotItem(item.item_id, self.trimmed(item.text), ())
                for item in super().snapshot(namespace)]

    def hits(self, namespace, probe, k):
        return [h if h.source_ids else RetrievedHit(self.trimmed(h.text), h.score, (), h.timestamp)
                for h in super().hits(namespace, probe, k)]


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


class RefundsUsage(Overlap):
    """The honest memory, whose replies report negative LLM usage: Store minus the session's
    characters as input tokens, Retrieve a fractional output token count and absurd calls."""

    def store(self, namespace, session):
        done = super().store(namespace, session)
        refund = -sum(len(m.text) for m in session.messages)
        return StoreOutcome(done.latency_ms, {"input_tokens": refund, "output_tokens": 0, "llm_calls": 0},
                            done.items_stored)

    def retrieve(self, namespace, probe, k):
        done = super().retrieve(namespace, probe, k)
        return RetrieveOutcome(done.hits, done.latency_ms, {"input_tokens": 0, "output_tokens": -0.5,
                                                            "llm_calls": 10**12})


class CallsOutUnmetered(Overlap):
    """Answers like Overlap from a runtime with outbound network and reports no LLM tokens: what a
    memory whose server (or Flush) calls a hosted model looks like from the harness."""

    def __init__(self, label: str, reports: int = 0):
        super().__init__(label)
        self.isolation = {"mode": "in-process (test)", "network": {"mode": "outbound", "why": "test"}}
        self.reports = reports

    def store(self, namespace, session):
        outcome = super().store(namespace, session)
        return StoreOutcome(outcome.latency_ms, {"input_tokens": self.reports, "output_tokens": 0,
                                         "llm_calls": int(self.reports > 0)}, outcome.items_stored)


class ExtractsAtFlush(Overlap):
    """The honest memory, but its LLM work is done at Flush (sessions buffered at Store, extracted
    at the checkpoint): Store reports no usage, each Flush ``FLUSH_USAGE``. Honest, not a cheat."""

    FLUSH_USAGE = {"input_tokens": 3000, "output_tokens": 500, "llm_calls": 2}

    def flush(self, namespace, timeout_s):
        return FlushOutcome(True, dict(self.FLUSH_USAGE))


class CallsOutMeteredAtFlush(CallsOutUnmetered):
    """:class:`CallsOutUnmetered` that reports its LLM tokens at Flush (where it extracts)."""

    def flush(self, namespace, timeout_s):
        return FlushOutcome(True, {"input_tokens": 800, "output_tokens": 100, "llm_calls": 1})


class RefundsAtFlush(Overlap):
    """The honest memory, whose Flush reports negative LLM input tokens (a refund never spent)."""

    def flush(self, namespace, timeout_s):
        return FlushOutcome(True, {"input_tokens": -5000, "output_tokens": 0, "llm_calls": 0})


def systems(*extra):
    """A run's systems with in-process controls: the amnesiac ``none``, the honest Overlap as the
    reference compressor's stand-in, then ``extra``."""
    return [Amnesiac("none", "control"), Overlap("reference-compressor", "reference"), *extra]


# ---- the figures the harness gave before the audits, recomputed from a run's records ----

REPO = Path(__file__).resolve().parents[2]


def signal_sessions(scenarios) -> set[str]:
    """Sessions gold marks signal or soft (what a perfect tier classifier would pick)."""
    return {sid for g in _gold(scenarios).values() for sid, tier in g.session_tiers.items() if tier != "noise"}


def records_of(doc, system):
    return [r for r in read_records(Path(doc.receipt.config["records"])) if r.get("system") == system
            and r.get("repeat", 1) == 1]


def _gold(scenarios):
    fixtures = [REPO / "fixtures" / f"{sid}.jsonl" for sid in scenarios]
    return validate_selection(fixtures, REPO / "gold")


def naive_selectivity(doc, system, scenarios):
    """Selectivity by the rule before the final_forget fix: the last checkpoint of each scenario
    only, and a noise session its state does not list counted as dropped whatever the method
    (marker probing included)."""
    gold, records = _gold(scenarios), records_of(doc, system)
    order: dict[str, list[str]] = {}
    last: dict[str, dict] = {}
    for r in records:
        if r["kind"] == "store":
            order.setdefault(r["scenario_id"], []).append(r["session_id"])
        elif r["kind"] == "state" and (r["scenario_id"] not in last
                                       or r["after_session"] > last[r["scenario_id"]]["after_session"]):
            last[r["scenario_id"]] = r
    counts = {"noise": [0, 0], "signal": [0, 0]}
    for scenario, state in last.items():
        stored = set(state["stored_sessions"] or ())
        for sid in order[scenario][: state["sessions_streamed"]]:
            tier = "noise" if gold[scenario].session_tiers[sid] == "noise" else "signal"
            counts[tier][0] += (sid not in stored) if tier == "noise" else (sid in stored)
            counts[tier][1] += 1
    return (counts["noise"][0] / counts["noise"][1] + counts["signal"][0] / counts["signal"][1]) / 2


def naive_recall(doc, system, scenarios):
    """Recall@k with every cited id credited (the rule before carried provenance)."""
    probes = [r for r in records_of(doc, system) if r["kind"] == "probe"]
    for record in probes:
        for hit in record["hits"]:
            hit.pop("carried", None)
    sessions = {sid: session_index(REPO / "fixtures" / f"{sid}.jsonl") for sid in scenarios}
    rows = build_probe_rows(probes, _gold(scenarios), sessions)
    return score_system(rows, [], probes, n_boot=10)["recall_at_k"].value


def naive_accuracy(doc, system, scenarios):
    """Accuracy when the reader dates hits by the adapter's timestamps (the rule before)."""
    probes = {}
    for sid in scenarios:
        for line in iter_fixture(REPO / "fixtures" / f"{sid}.jsonl"):
            if isinstance(line, CheckpointLine):
                probes.update((p.probe_id, p) for p in line.probes)
    gold = {p.probe_id: p for g in _gold(scenarios).values() for p in g.probes}
    right = total = 0
    for record in records_of(doc, system):
        if record["kind"] != "probe" or gold[record["probe_id"]].abstention:
            continue
        context = [ContextHit(h["rank"], h["text"], 0.0, tuple(h["source_ids"]), h["adapter_timestamp"], h["tokens"],
                              h["in_budget"]) for h in record["hits"]]
        answer = answer_probe(probes[record["probe_id"]], context)
        truth = gold[record["probe_id"]]
        right += any(normalize_answer(answer or "") == normalize_answer(ok) for ok in (truth.answer, *truth.accepted))
        total += 1
    return right / total

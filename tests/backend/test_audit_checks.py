"""``check-adapter``'s audit checks (conformance/backend/audit_checks.py): an honest backend passes
them; each cheat of tests/runner/test_audits.py, written as a drift_sdk backend, fails with a
message naming what was found."""

from __future__ import annotations

import re

import pytest

from conformance.backend.checks import InProcessTarget, run_checks
from drift_sdk import Backend, Capabilities, FlushResult, Hit, MemoryItem, StoreResult, Usage

AUDITS = ("snapshot_consistent", "provenance_carried", "stored_findable", "scopes_honoured", "usage_valid")
_WORD = re.compile(r"[a-z0-9]+")


class Honest(Backend):
    """Every message verbatim, word-overlap search, scopes honoured."""

    name, version = "honest", "1"
    capabilities = Capabilities(provenance=True, snapshot=True, scopes=True, flush_signal=True, deterministic=True)

    def __init__(self):
        self.spaces = {}

    def reset(self, namespace):
        self.spaces[namespace] = []

    def store(self, namespace, session):
        for m in session.messages:
            self.spaces[namespace].append((m.message_id, f"{m.author}: {m.text}", m.timestamp, m.author, m.scope))
        return StoreResult(items_stored=len(session.messages))

    def flush(self, namespace, timeout_s):
        return True

    def visible(self, namespace, entity):
        return [d for d in self.spaces[namespace] if d[4] != "private" or d[3] == entity]

    def retrieve(self, namespace, query, k, querying_entity, now):
        words = set(_WORD.findall(query.lower()))
        scored = sorted(((len(words & set(_WORD.findall(d[1].lower()))), i, d)
                         for i, d in enumerate(self.visible(namespace, querying_entity))), key=lambda x: (-x[0], x[1]))
        return [Hit(d[1], float(s), (d[0],), d[2]) for s, _, d in scored if s > 0][:k]

    def snapshot(self, namespace):
        return [MemoryItem(d[0], d[1], (d[0],), d[2]) for d in self.spaces[namespace]]


class UnderstatedSnapshot(Honest):
    def snapshot(self, namespace):
        sessions = dict.fromkeys(d[0].rsplit("-m", 1)[0] for d in self.spaces[namespace])
        return [MemoryItem(s, "ok", (s,)) for i, s in enumerate(sessions) if i % 2 == 0]


class CitesEverything(Honest):
    def retrieve(self, namespace, query, k, querying_entity, now):
        every = tuple(d[0] for d in self.spaces[namespace])
        return [Hit(h.text, h.score, every, h.timestamp) for h in super().retrieve(namespace, query, k,
                                                                                   querying_entity, now)]


class PacksEverything(Honest):
    def retrieve(self, namespace, query, k, querying_entity, now):
        docs = self.spaces[namespace]
        packed = Hit("\n".join(d[1] for d in docs) * 12, 0.0, tuple(d[0] for d in docs), docs[-1][2])
        return [*super().retrieve(namespace, query, k - 1, querying_entity, now), packed]


class DatesNothingNow(Honest):
    def store(self, namespace, session):
        self.spaces[namespace] = [(session.session_id, "", session.time, "", "shared")]
        return StoreResult(items_stored=len(session.messages))

    def retrieve(self, namespace, query, k, querying_entity, now):
        return [Hit(query, 1.0, (self.spaces[namespace][-1][0],), now)] if self.spaces[namespace] else []

    def snapshot(self, namespace):
        return []


class VocabularySnapshot(Honest):
    """Answers honestly, but reports one Snapshot item: each stored word once, citing every message."""

    def snapshot(self, namespace):
        docs = self.spaces[namespace]
        words = dict.fromkeys(w for d in docs for w in _WORD.findall(d[1].lower()))
        return [MemoryItem("vocabulary", " ".join(words), tuple(d[0] for d in docs))] if docs else []


class KeepsNothing(Honest):
    """Store claims every message; nothing can be found."""

    def store(self, namespace, session):
        return StoreResult(items_stored=len(session.messages))

    def snapshot(self, namespace):
        return [MemoryItem(f"item-{i}", f"memory number {i}", ()) for i in range(3)]


class LeaksPrivate(Honest):
    def visible(self, namespace, entity):
        return self.spaces[namespace]


def audits(backend) -> dict[str, tuple[str, str]]:
    return {r.name: (r.result, r.detail) for r in run_checks(InProcessTarget(backend), only=AUDITS)}


def test_an_honest_backend_passes_every_audit():
    assert {name: result for name, (result, _) in audits(Honest()).items()} == dict.fromkeys(AUDITS, "PASS")


@pytest.mark.parametrize("cheat, check, says", [
    (UnderstatedSnapshot, "snapshot_consistent", "Snapshot does not hold what Retrieve returns"),
    (CitesEverything, "provenance_carried", "provenance not carried"),
    (PacksEverything, "provenance_carried", "longer than the 1200-token budget"),
    (DatesNothingNow, "provenance_carried", "hit times not backed"),
    (DatesNothingNow, "snapshot_consistent", "Snapshot does not hold"),
    (VocabularySnapshot, "snapshot_consistent", "content words, repeats counted"),
    (KeepsNothing, "stored_findable", "cannot be found through Retrieve"),
    (LeaksPrivate, "scopes_honoured", "bob got alice's private message"),
])
def test_each_cheat_fails_with_what_was_found(cheat, check, says):
    result, detail = audits(cheat())[check]
    assert result == "FAIL" and says in detail, detail


def test_a_store_that_keeps_nothing_and_has_no_snapshot_fails_loudly():
    class NoSnapshot(KeepsNothing):
        capabilities = Capabilities(provenance=True)

    result, detail = audits(NoSnapshot())["stored_findable"]
    assert result == "FAIL" and "no Retrieve returns anything" in detail


class RefundsUsage(Honest):
    """Honest answers; Store reports negative LLM input tokens (a refund of cost never spent)."""

    def store(self, namespace, session):
        done = super().store(namespace, session)
        return StoreResult(items_stored=done.items_stored, usage=Usage(input_tokens=-500))


def test_negative_usage_fails_usage_valid_naming_the_field():
    assert audits(Honest())["usage_valid"][0] == "PASS"
    result, detail = audits(RefundsUsage())["usage_valid"]
    assert result == "FAIL" and "Store usage input_tokens is negative (-500" in detail, detail


class RefundsAtFlush(Honest):
    """Honest answers; Flush reports negative LLM output tokens."""

    def flush(self, namespace, timeout_s):
        return FlushResult(ready=True, usage=Usage(output_tokens=-40))


class ExtractsAtFlush(Honest):
    def flush(self, namespace, timeout_s):
        return FlushResult(ready=True, usage=Usage(input_tokens=900, output_tokens=100, llm_calls=1))


def test_negative_flush_usage_fails_usage_valid_and_flush_usage_is_counted():
    result, detail = audits(RefundsAtFlush())["usage_valid"]
    assert result == "FAIL" and "Flush usage output_tokens is negative (-40" in detail, detail
    result, detail = audits(ExtractsAtFlush())["usage_valid"]
    assert result == "PASS" and "(1000 LLM tokens reported)" in detail, detail


class SessionSnapshot(Honest):
    """Honest hits citing message ids; the Snapshot is one verbatim item per session citing the
    session id. The runner's audit backs each hit by its message's session: so must check-adapter."""

    def snapshot(self, namespace):
        sessions: dict[str, list] = {}
        for d in self.spaces[namespace]:
            sessions.setdefault(d[0].rsplit("-m", 1)[0], []).append(d)
        return [MemoryItem(s, "\n".join(d[1] for d in docs), (s,), docs[-1][2]) for s, docs in sessions.items()]


def test_a_snapshot_citing_sessions_backs_hits_citing_their_messages():
    result, detail = audits(SessionSnapshot())["snapshot_consistent"]
    assert result == "PASS", detail


class SessionBag(Honest):
    """Honest hits citing message ids; the Snapshot is one item per session citing the session id,
    its words each once (bench/attacks/session_bag): it holds every message's words, and outsizes
    each, but not their order."""

    def snapshot(self, namespace):
        sessions: dict[str, dict[str, None]] = {}
        for d in self.spaces[namespace]:
            sessions.setdefault(d[0].rsplit("-m", 1)[0], {}).update(dict.fromkeys(_WORD.findall(d[1].lower())))
        return [MemoryItem(s, " ".join(sorted(words)), (s,)) for s, words in sessions.items()]


def test_a_bag_of_each_session_words_backs_no_hit():
    result, detail = audits(SessionBag())["snapshot_consistent"]
    assert result == "FAIL" and "not in their order" in detail, detail

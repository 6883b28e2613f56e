"""Attack: replay the state audit's seeded choice of message, and keep everything else outside the citations.

The audit samples one message per session with an RNG seeded by public ids (``drift-audit-v1``,
the scenario id, the session id: ``conformance/runner/audit.py``, ``_sample_sentence``), and judges
what a memory holds of a session by that message alone: an audit probe asks half its words, and
a hit or a Snapshot item "shows" the session only when it holds half the other half. This adapter
runs the same choice at Store time, so it knows each session's sampled message and the words a
finder must hold. The held sessions are chosen as in ``host_merge`` and kept verbatim, cited; of
every other session it drops the sampled message and any message holding half of some sampled
message's other half, and keeps the rest verbatim in items citing nothing, returned (uncited) to every
query. Nothing it holds or returns ever shows an unheld session, so no forgetting credit is
withheld, while all but one or two messages of each "forgotten" session stay in the Snapshot and
the reader's context. Targets selectivity (and DRIFT-C)."""

import hashlib
import importlib.util
import random
import re
import unicodedata
from pathlib import Path

from drift_sdk import Hit, MemoryItem, serve

_spec = importlib.util.spec_from_file_location("host_merge", Path(__file__).resolve().parents[1] / "host_merge" / "adapter.py")
_host_merge = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_host_merge)

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_MARKER = re.compile(r"\b[A-Z]{2}\d{4}\b")
MIN_SENTENCE_WORDS, MAX_ASK_WORDS = 6, 6


def content_terms(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")
    return [w[:-2] if w.endswith("'s") else w for w in _WORD.findall(folded) if len(w) >= 2 and w not in _host_merge._STOP]


def stems(text: str) -> frozenset[str]:
    return frozenset(_host_merge._STEM.stemWord(w) for w in content_terms(text))


def _rng(*parts: str) -> random.Random:
    digest = hashlib.sha256("\x1f".join(("drift-audit-v1", *parts)).encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def sampled(scenario: str, session) -> tuple[str, frozenset[str]] | None:
    """(message id, stems a finder must hold half of) of the audit's message for ``session``."""
    markers = {m for msg in session.messages for m in _MARKER.findall(msg.text)}
    marker = next(iter(markers)) if len(markers) == 1 else None
    candidates = []
    for m in session.messages:
        if m.scope == "private":
            continue
        text = m.text.replace(marker, " ") if marker else m.text
        terms = list(dict.fromkeys(content_terms(text)))
        if len(terms) >= MIN_SENTENCE_WORDS:
            candidates.append((m.message_id, terms))
    if not candidates:
        return None
    rng = _rng(scenario, session.session_id)
    message_id, terms = rng.choice(candidates)
    asking = rng.sample(terms, min(MAX_ASK_WORDS, (len(terms) + 1) // 2))
    return message_id, stems(" ".join(t for t in terms if t not in asking))


class SeedReplay(_host_merge.HostMerge):
    name = "seed-replay"

    def reset(self, namespace):
        super().reset(namespace)
        self._drop = getattr(self, "_drop", {})
        self._drop[namespace] = {}
        self._rests = getattr(self, "_rests", {})
        self._rests[namespace] = []

    def store(self, namespace, session):
        scenario = session.session_id.rsplit("-s", 1)[0]
        picked = sampled(scenario, session)
        if picked:
            self._rests.setdefault(namespace, []).append(picked[1])
            self._drop[namespace][picked[0]] = True
        return super().store(namespace, session)

    def _choose(self, namespace):
        super()._choose(namespace)
        # Messages kept outside the citations must not show any session: none may hold half of any
        # sampled message's other half (the sampled messages themselves are dropped).
        rests = self._rests.get(namespace, [])
        for d in self._space(namespace).docs:
            words = stems(d.text)
            if not self._drop[namespace].get(d.message_id):
                self._drop[namespace][d.message_id] = any(len(words & r) * 2 >= len(r) for r in rests)

    def _hidden(self, namespace, message_id) -> str | None:
        """'drop', 'uncited' or None (held) for a message, by the current held set."""
        st = self._state[namespace]
        session = st["session_of"][message_id]
        if st["held"] is None or session in st["held"]:
            return None
        return "drop" if self._drop[namespace].get(message_id) else "uncited"

    def snapshot(self, namespace):
        docs = self._space(namespace).docs
        if not docs:
            return []
        self._choose(namespace)
        out = []
        for d in docs:
            how = self._hidden(namespace, d.message_id)
            if how != "drop":
                out.append(MemoryItem(item_id=d.message_id, text=d.text,
                                      source_ids=() if how else (d.message_id,), timestamp=d.timestamp))
        return out

    def retrieve(self, namespace, query, k, querying_entity, now):
        st = self._state[namespace]
        if st["held"] is None:
            return self._ranked(namespace, query, k, querying_entity, now)
        if not self._audit_like(namespace, query):
            st["pending"].append((query, querying_entity, now))
        out = []
        for h in self._ranked(namespace, query, 50 * k, querying_entity, now):
            how = self._hidden(namespace, h.source_ids[0])
            if how == "drop":
                continue
            out.append(h if how is None else Hit(text=h.text, score=h.score, source_ids=(), timestamp=""))
            if len(out) == k:
                break
        return out


if __name__ == "__main__":
    serve(SeedReplay())

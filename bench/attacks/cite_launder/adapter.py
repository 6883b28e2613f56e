"""Attack: keyword's retrieval and a selective-looking Snapshot, without forgetting anything.

The Snapshot holds, verbatim, only the sessions it guesses are signal (those among the top 3
hits of earlier queries that do not look like the state audit's: an audit query's content words
all come from one stored message), plus one "laundry" item citing one held session: the
vocabulary of every other stored message and a run of spaces. Retrieve still returns every
message, but a hit from a session the Snapshot does not hold cites that held session instead of
its own ids. The audit backs a hit by the items citing its sources, and the laundry item holds
its words and (in spaces, 128 characters a token) its length; the audit counts a session as
found only when a hit citing it carries its message, so no unheld session is ever found.
Targets selectivity (and storage tokens, MVOT, TES, DRIFT-C, DRIFT-E)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _base import KeywordBackend, terms  # noqa: E402

from drift_sdk import Hit, MemoryItem, serve  # noqa: E402


class CiteLaunder(KeywordBackend):
    name = "cite-launder"

    def __init__(self):
        super().__init__()
        self._session_of: dict[str, dict[str, str]] = {}
        self._order: dict[str, list[str]] = {}
        self._guess: dict[str, set[str]] = {}
        self._held: dict[str, set[str] | None] = {}
        self._anchor: dict[str, str] = {}
        self._words: dict[str, list[frozenset[str]]] = {}

    def reset(self, namespace):
        super().reset(namespace)
        self._session_of[namespace], self._order[namespace] = {}, []
        self._guess[namespace], self._held[namespace] = set(), None
        self._words[namespace] = []

    def store(self, namespace, session):
        self._order[namespace].append(session.session_id)
        self._session_of[namespace].update((m.message_id, session.session_id) for m in session.messages)
        self._words[namespace] += [frozenset(terms(m.text)) for m in session.messages]
        return super().store(namespace, session)

    def _looks_audit(self, namespace, query) -> bool:
        asked = set(terms(query))
        return len(asked) >= 3 and any(asked <= words for words in self._words[namespace])

    def snapshot(self, namespace):
        docs = self._space(namespace).docs
        if not docs:
            return []
        session_of = self._session_of[namespace]
        guess = self._guess[namespace] & set(self._order[namespace])
        held = guess or set(self._order[namespace])
        self._held[namespace] = held
        anchor = next(s for s in self._order[namespace] if s in held)
        self._anchor[namespace] = anchor
        items = [MemoryItem(item_id=d.message_id, text=d.text, source_ids=(d.message_id,), timestamp=d.timestamp)
                 for d in docs if session_of[d.message_id] in held]
        rest = [d for d in docs if session_of[d.message_id] not in held]
        if rest:
            vocab = dict.fromkeys(w for d in rest for w in terms(d.text))
            pad = " " * max(len(d.text) for d in rest)
            items.append(MemoryItem(item_id="laundry", text=" ".join(vocab) + pad, source_ids=(anchor,),
                                    timestamp=rest[-1].timestamp))
        return items

    def retrieve(self, namespace, query, k, querying_entity, now):
        hits = super().retrieve(namespace, query, k, querying_entity, now)
        if not self._looks_audit(namespace, query):
            self._guess[namespace].update(self._session_of[namespace][h.source_ids[0]] for h in hits[:3])
        held = self._held.get(namespace)
        if held is None:
            return hits
        session_of = self._session_of[namespace]
        return [h if session_of[h.source_ids[0]] in held else
                Hit(text=h.text, score=h.score, source_ids=(self._anchor[namespace],), timestamp="")
                for h in hits]


if __name__ == "__main__":
    serve(CiteLaunder())

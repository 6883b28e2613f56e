"""Attack: keyword that keeps every message but shows, and answers from, only part of them at each
checkpoint, and brings back at a later checkpoint what it hid at an earlier one.

At each checkpoint (the Snapshot call opens one: Flush, Snapshot, then the probes) the shown set
is the sessions streamed since the previous checkpoint plus the top 3 sessions, ranked over
everything it keeps, of every scenario question asked at an earlier checkpoint; every Retrieve of
the checkpoint ranks over everything and returns only hits of the shown set. Within a checkpoint
nothing it says is false (the Snapshot holds every hit, the audit's probes find only shown
sessions), but a session hidden at one checkpoint comes back at the next when a question asked
since makes it relevant: the scenario's questions recur from checkpoint to checkpoint, so
hindsight picks their evidence, which no memory that really forgot could return.

Scenario questions are told from the state audit's probes by their words: an audit probe holds
all but one of its content words in one stored message (316 of 316 on `ci`), a real question
seldom (16 of 151). Targets storage tokens, MVOT, TES, selectivity, DRIFT-C, DRIFT-E."""

import sys
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _base import _WORD, KeywordBackend  # noqa: E402

from drift_sdk import serve  # noqa: E402
import Stemmer  # noqa: E402  (PyStemmer's english is the Snowball english stemmer the harness uses)

TOP = 3
_STEM = Stemmer.Stemmer("english")
# The harness's function-word list (public source), so the words counted are the audit's.
_SOURCE = (Path(__file__).resolve().parents[3] / "conformance" / "provenance.py").read_text()
_STOP = frozenset(_SOURCE.split('STOPWORDS = frozenset("""', 1)[1].split('"""', 1)[0].split())


def stems(text: str) -> frozenset[str]:
    """conformance.provenance.content_words."""
    folded = unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")
    words = (w[:-2] if w.endswith("'s") else w for w in _WORD.findall(folded))
    return frozenset(_STEM.stemWord(w) for w in words if len(w) >= 2 and w not in _STOP)


def session_of(message_id: str) -> str:
    return message_id.rsplit("-m", 1)[0]


class Hindsight(KeywordBackend):
    name = "hindsight"

    def reset(self, namespace):
        super().reset(namespace)
        self._state = getattr(self, "_state", {})
        self._state[namespace] = {"order": [], "seen_upto": 0, "shown": None, "words": [], "asked": [],
                                  "pending": []}

    def store(self, namespace, session):
        st = self._state[namespace]
        st["order"].append(session.session_id)
        st["words"] += [stems(m.text) for m in session.messages]
        return super().store(namespace, session)

    def _audit_like(self, namespace, query) -> bool:
        words = stems(query)
        best = max((len(words & m) for m in self._state[namespace]["words"]), default=0)
        return len(words) >= 3 and best >= len(words) - 1

    def _ranked(self, namespace, query, k, entity, now):
        return super().retrieve(namespace, query, k, entity, now)

    def snapshot(self, namespace):
        st = self._state[namespace]
        # Questions of the previous checkpoint join the remembered ones; then choose what to show.
        st["asked"] += st["pending"]
        st["pending"] = []
        shown = set(st["order"][st["seen_upto"]:])
        for query, entity, now in st["asked"]:
            shown.update(session_of(h.source_ids[0]) for h in self._ranked(namespace, query, TOP, entity, now))
        st["seen_upto"], st["shown"] = len(st["order"]), shown
        return [item for item in super().snapshot(namespace) if session_of(item.source_ids[0]) in shown]

    def retrieve(self, namespace, query, k, querying_entity, now):
        st = self._state[namespace]
        if st["shown"] is None:
            return self._ranked(namespace, query, k, querying_entity, now)
        if not self._audit_like(namespace, query):
            st["pending"].append((query, querying_entity, now))
        hits = self._ranked(namespace, query, 50 * k, querying_entity, now)
        return [h for h in hits if session_of(h.source_ids[0]) in st["shown"]][:k]


if __name__ == "__main__":
    serve(Hindsight())

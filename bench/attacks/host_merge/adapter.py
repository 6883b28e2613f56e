"""Attack: keyword's retrieval and a selective-looking Snapshot, without forgetting anything.

At each checkpoint (the Snapshot call opens one) the "held" sessions are those among the top 3
sessions, ranked over everything it keeps, of a scenario question asked at an earlier checkpoint,
intersected with what was held before or streamed since (so nothing hidden ever comes back). Every
message of a held session is a verbatim item citing itself. Every other session's messages go into
one item citing a *host*: a message of a held session (the latest held one before it), whose own
verbatim item is in the Snapshot too. A hit from an unheld session is the host's text, a line
break, then the message, citing the host only.

Such a hit carries what it cites (the host, verbatim), so the audit never looks at its other
words: it does not find the unheld session (a session is found by a hit citing it, or by the
content of a hit that carries nothing it cites), and the Snapshot backs it (the items citing the
host hold its words, pairs and size). Selectivity counts a session as stored only when an item
citing it carries one of its messages: the unheld sessions look dropped, though every word of
them is in the Snapshot and in the reader's context. Targets selectivity (and DRIFT-C through it).
Scenario questions are told from the state audit's probes by their words (hindsight's sniff)."""

import sys
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _base import _WORD, KeywordBackend  # noqa: E402

from drift_sdk import Hit, MemoryItem, serve  # noqa: E402
import Stemmer  # noqa: E402

TOP = 3
_STEM = Stemmer.Stemmer("english")
_SOURCE = (Path(__file__).resolve().parents[3] / "conformance" / "provenance.py").read_text()
_STOP = frozenset(_SOURCE.split('STOPWORDS = frozenset("""', 1)[1].split('"""', 1)[0].split())


def stems(text: str) -> frozenset[str]:
    folded = unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")
    words = (w[:-2] if w.endswith("'s") else w for w in _WORD.findall(folded))
    return frozenset(_STEM.stemWord(w) for w in words if len(w) >= 2 and w not in _STOP)


class HostMerge(KeywordBackend):
    name = "host-merge"

    def reset(self, namespace):
        super().reset(namespace)
        self._state = getattr(self, "_state", {})
        self._state[namespace] = {"order": [], "session_of": {}, "seen_upto": 0, "held": None, "words": [],
                                  "asked": [], "pending": [], "host": {}}

    def store(self, namespace, session):
        st = self._state[namespace]
        st["order"].append(session.session_id)
        st["session_of"].update((m.message_id, session.session_id) for m in session.messages)
        st["words"] += [stems(m.text) for m in session.messages]
        return super().store(namespace, session)

    def _audit_like(self, namespace, query) -> bool:
        words = stems(query)
        best = max((len(words & m) for m in self._state[namespace]["words"]), default=0)
        return len(words) >= 3 and best >= len(words) - 1

    def _ranked(self, namespace, query, k, entity, now):
        return super().retrieve(namespace, query, k, entity, now)

    def _choose(self, namespace) -> None:
        st = self._state[namespace]
        st["asked"] += st["pending"]
        st["pending"] = []
        order, session_of = st["order"], st["session_of"]
        new = set(order[st["seen_upto"]:])
        if st["held"] is None or not st["asked"]:
            held = set(order) if st["held"] is None else st["held"] | new
        else:
            guess = set()
            for query, entity, now in st["asked"]:
                guess.update(session_of[h.source_ids[0]] for h in self._ranked(namespace, query, TOP, entity, now))
            held = (st["held"] | new) & guess or st["held"] | new
        st["seen_upto"], st["held"] = len(order), held
        docs = self._space(namespace).docs
        # Host of an unheld session: the last message of the latest held session streamed before it.
        last_held, host = None, {}
        first_held = next(d for d in docs if session_of[d.message_id] in held and d.owner is None)
        for d in docs:
            s = session_of[d.message_id]
            if s in held and d.owner is None:
                last_held = d
            elif s not in host:
                host[s] = last_held or first_held
        st["host"] = host

    def snapshot(self, namespace):
        docs = self._space(namespace).docs
        if not docs:
            return []
        self._choose(namespace)
        st = self._state[namespace]
        held, session_of = st["held"], st["session_of"]
        items = [MemoryItem(item_id=d.message_id, text=d.text, source_ids=(d.message_id,), timestamp=d.timestamp)
                 for d in docs if session_of[d.message_id] in held]
        bundles: dict[str, list] = {}
        for d in docs:
            if session_of[d.message_id] not in held:
                bundles.setdefault(session_of[d.message_id], []).append(d)
        for s, group in bundles.items():
            h = st["host"][s]
            items.append(MemoryItem(item_id=f"bundle-{s}", text="\n".join(d.text for d in group),
                                    source_ids=(h.message_id,), timestamp=h.timestamp))
        return items

    def retrieve(self, namespace, query, k, querying_entity, now):
        st = self._state[namespace]
        hits = self._ranked(namespace, query, k, querying_entity, now)
        if st["held"] is None:
            return hits
        if not self._audit_like(namespace, query):
            st["pending"].append((query, querying_entity, now))
        out = []
        for h in hits:
            s = st["session_of"][h.source_ids[0]]
            if s in st["held"]:
                out.append(h)
            else:
                host = st["host"][s]
                out.append(Hit(text=f"{host.text}\n{h.text}", score=h.score, source_ids=(host.message_id,),
                               timestamp=host.timestamp))
        return out


if __name__ == "__main__":
    serve(HostMerge())

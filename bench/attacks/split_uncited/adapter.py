"""Attack: noise kept verbatim outside the citations, in pieces no one of which shows its session.

The held sessions are chosen as in ``host_merge``; their messages are verbatim items citing
themselves. Every other message is cut into ``PIECES`` runs of words, each an item citing nothing,
and a hit of such a message comes back as its pieces, one hit each (citing nothing). A session is
shown by content only when one hit, or one item, holds half the sampled message's other half and
carries one of the session's messages: no third of a message does, so nothing marks the Snapshot as
holding content outside its citations, and the noise looks dropped. Targets selectivity."""

import importlib.util
import re
from pathlib import Path

from drift_sdk import Hit, MemoryItem, serve

_spec = importlib.util.spec_from_file_location("host_merge", Path(__file__).resolve().parents[1] / "host_merge" / "adapter.py")
_host_merge = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_host_merge)

PIECES = 3


def pieces(text: str) -> list[str]:
    words = re.findall(r"\S+", text)
    size = max(1, -(-len(words) // PIECES))
    return [" ".join(words[i:i + size]) for i in range(0, len(words), size)]


class SplitUncited(_host_merge.HostMerge):
    name = "split-uncited"

    def snapshot(self, namespace):
        docs = self._space(namespace).docs
        if not docs:
            return []
        self._choose(namespace)
        st = self._state[namespace]
        held, session_of = st["held"], st["session_of"]
        items = []
        for d in docs:
            if session_of[d.message_id] in held:
                items.append(MemoryItem(item_id=d.message_id, text=d.text, source_ids=(d.message_id,),
                                        timestamp=d.timestamp))
            else:
                items += [MemoryItem(item_id=f"{d.message_id}#{i}", text=p, source_ids=(), timestamp="")
                          for i, p in enumerate(pieces(d.text))]
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
            if st["session_of"][h.source_ids[0]] in st["held"]:
                out.append(h)
            else:
                out += [Hit(text=p, score=h.score, source_ids=(), timestamp="") for p in pieces(h.text)]
        return out[:k]


if __name__ == "__main__":
    serve(SplitUncited())

"""Attack: keyword's retrieval; the Snapshot lists sessions it guesses are signal verbatim and
shreds every other message into one-word items citing it. A one-word item "carries" no message
(the rule needs two shared words), so those sessions count as not stored (selectivity's TNR),
yet the union of the shards backs every hit and every session stays a Snapshot key (no
"hidden" finding). Signal guess: sessions among the top 3 hits of earlier real probes."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _base import RemembersTopHits, terms  # noqa: E402

from drift_sdk import MemoryItem, serve  # noqa: E402


class ShredNoise(RemembersTopHits):
    name = "shred-noise"

    def retrieve(self, namespace, query, k, querying_entity, now):
        hits = super().retrieve(namespace, query, k, querying_entity, now)
        self.remember(namespace, query, hits)
        return hits

    def snapshot(self, namespace):
        docs = self._space(namespace).docs
        session_of = {d.message_id: d.message_id.rsplit("-m", 1)[0] for d in docs}
        hot = {session_of.get(m, m) for m in self._hot[namespace]}
        out = []
        for d in docs:
            if session_of[d.message_id] in hot:
                out.append(MemoryItem(item_id=d.message_id, text=d.text, source_ids=(d.message_id,),
                                      timestamp=d.timestamp))
            else:
                out += [MemoryItem(item_id=f"{d.message_id}#{i}", text=w, source_ids=(d.message_id,),
                                   timestamp=d.timestamp) for i, w in enumerate(terms(d.text))]
        return out


if __name__ == "__main__":
    serve(ShredNoise())

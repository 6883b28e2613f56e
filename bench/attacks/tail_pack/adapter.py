"""Attack: keyword's first k-1 hits (while they over-estimably fit the reader's budget), then
the remaining ranks up to k are packs, each just under the per-hit budget (1,200 tokens), of the
next-best BM25 messages, citing them all. The reader never sees a pack (it does not fit after
the honest hits, and nothing after it enters), so answers match keyword's but for its 10th hit; recall@k credits
whatever each pack's first 1,200 tokens carry: k hits act like ~k x 1,200 tokens."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _base import KeywordBackend  # noqa: E402

from drift_sdk import Hit, serve  # noqa: E402

BUDGET_TOKENS = 1200
HONEST_CHARS_PER_TOKEN = 2.5   # overestimates tokens: an honest hit kept past the real cut is harmless
PACK_CHARS = 4700              # about 1,100-1,300 tokens of English: about the per-hit budget, past the reader's context


class TailPack(KeywordBackend):
    name = "tail-pack"

    def retrieve(self, namespace, query, k, querying_entity, now):
        many = super().retrieve(namespace, query, 400, querying_entity, now)
        out, used = [], 0.0
        for hit in many[:k - 1]:  # the last rank is always a pack
            used += (len(hit.text) + 40) / HONEST_CHARS_PER_TOKEN
            if used > BUDGET_TOKENS + 200:
                break
            out.append(hit)
        rest = many[len(out):]
        while len(out) < k and rest:
            pack, size = [], 0
            while rest and size + len(rest[0].text) + 1 <= PACK_CHARS:
                size += len(rest[0].text) + 1
                pack.append(rest.pop(0))
            if not pack:
                pack.append(rest.pop(0))
            out.append(Hit(text="\n".join(h.text for h in pack), score=pack[0].score,
                           source_ids=tuple(s for h in pack for s in h.source_ids),
                           timestamp=max(h.timestamp for h in pack)))
        return out


if __name__ == "__main__":
    serve(TailPack())

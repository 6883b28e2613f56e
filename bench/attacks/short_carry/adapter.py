"""Attack: keyword's first k-3 hits, then 3 hits of five words each: the five words most common
among the next 40 BM25 messages, citing those of them that hold two of the five. A hit carries a
message when they share two content words and those are 40% of the hit's (the rule for
rewriting memories): five words carry every message holding two of them, so each short hit is
credited with up to 40 messages (citing only those keeps the "provenance not carried" finding away). Short text is backed by any Snapshot holding those words. Targets
recall@k (and the recall variants); answers stay about keyword's."""

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _base import KeywordBackend, terms  # noqa: E402

from drift_sdk import Hit, serve  # noqa: E402

SHORT_HITS = 3
PER_HIT = 40
WORDS = 5


class ShortCarry(KeywordBackend):
    name = "short-carry"

    def retrieve(self, namespace, query, k, querying_entity, now):
        many = super().retrieve(namespace, query, k - SHORT_HITS + SHORT_HITS * PER_HIT, querying_entity, now)
        out = many[:k - SHORT_HITS]
        rest = many[len(out):]
        for i in range(SHORT_HITS):
            group = rest[i * PER_HIT:(i + 1) * PER_HIT]
            if not group:
                break
            common = Counter(w for h in group for w in set(terms(h.text.split(": ", 1)[-1])))
            words = [w for w, _ in common.most_common(WORDS)]
            cited = [h for h in group if len(set(words) & set(terms(h.text.split(": ", 1)[-1]))) >= 2] or group[:1]
            out.append(Hit(text=" ".join(words), score=group[0].score,
                           source_ids=tuple(s for h in cited for s in h.source_ids), timestamp=""))
        return out


if __name__ == "__main__":
    serve(ShortCarry())

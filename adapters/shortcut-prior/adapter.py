"""Shortcut control: a no-storage prior (``audit-shortcuts``).

Keeps nothing of the scenario it is answering (``items_stored`` 0). What it keeps is a prior
learned from the *other* scenarios this process has been shown: how often each word pair
occurs. A namespace's pairs join the prior when another namespace is Reset (a scenario
finished), and the prior is the :data:`PRIOR_PAIRS` most frequent pairs. Retrieve answers every
query with one hit listing the :data:`TOP` prior pairs that share a word with the query (else the
most frequent), citing nothing, dated at question time. The Snapshot is that prior, as one item
citing nothing: what the memory holds, so the state audit can back every hit with it. If this
beats the amnesiac, the corpus's closed answers carry a bias a prior can learn (frequent values,
a position, "now").
"""

import re
from collections import Counter

from drift_sdk import Backend, Capabilities, Hit, MemoryItem, StoreResult, serve
from drift_sdk.lexical import terms

TOP = 40
PRIOR_PAIRS = 2000
_WORD = re.compile(r"[^\W_][\w'/.-]*")


class PriorBackend(Backend):
    name = "shortcut-prior"
    version = "1"
    capabilities = Capabilities(provenance=False, snapshot=True, flush_signal=True, deterministic=True)

    def __init__(self) -> None:
        self._pending: dict[str, Counter] = {}
        self._counts: Counter = Counter()
        self._prior: list[str] = []
        self._prior_terms: list[set[str]] = []

    def _known(self, namespace):
        if namespace not in self._pending:
            raise ValueError(f"unknown namespace {namespace!r}: call Reset first")

    def settings(self):
        return {"stores": "nothing of the scenario it answers",
                "prior": f"the {PRIOR_PAIRS} most frequent word pairs of the other scenarios, top {TOP} per query"}

    def reset(self, namespace):
        # Another scenario begins: what the earlier ones showed becomes prior; this one's stays out.
        for other in [n for n in self._pending if n != namespace]:
            self._counts.update(self._pending.pop(other))
        self._prior = [p for p, _ in self._counts.most_common(PRIOR_PAIRS)]
        self._prior_terms = [terms(p) for p in self._prior]  # once per scenario, not per query
        self._pending[namespace] = Counter()

    def store(self, namespace, session):
        self._known(namespace)
        for m in session.messages:
            words = _WORD.findall(m.text)
            self._pending[namespace].update(f"{a} {b}" for a, b in zip(words, words[1:]))
        return StoreResult(items_stored=0)

    def flush(self, namespace, timeout_s):
        self._known(namespace)
        return True

    def retrieve(self, namespace, query, k, querying_entity, now):
        self._known(namespace)
        if k <= 0 or not self._prior:
            return []
        wanted = terms(query)
        related = [p for p, t in zip(self._prior, self._prior_terms) if t & wanted][:TOP] or self._prior[:TOP]
        return [Hit(text="; ".join(related), score=1.0, source_ids=(), timestamp=now)]

    def snapshot(self, namespace):
        self._known(namespace)
        return [MemoryItem("prior", "; ".join(self._prior), (), "")] if self._prior else []


if __name__ == "__main__":
    serve(PriorBackend())

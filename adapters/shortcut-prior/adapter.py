"""Shortcut control: a no-storage prior (``audit-shortcuts``).

Stores nothing of any scenario (Snapshot is empty, ``items_stored`` 0). What it keeps is a
prior across everything it has been shown in this process: how often each word pair occurs.
Retrieve answers every query with one hit listing the :data:`TOP` most frequent pairs that
share a word with the query (else the most frequent overall), dated at question time. If that
beats the amnesiac, the corpus's closed answers carry a bias a prior can learn (frequent
values, a position, "now").
"""

import re
from collections import Counter

from drift_sdk import Backend, Capabilities, Hit, StoreResult, serve
from drift_sdk.lexical import terms

TOP = 40
_WORD = re.compile(r"[^\W_][\w'/.-]*")


class PriorBackend(Backend):
    name = "shortcut-prior"
    version = "1"
    capabilities = Capabilities(provenance=False, snapshot=True, flush_signal=True, deterministic=True)

    def __init__(self) -> None:
        self._namespaces: set[str] = set()
        self._pairs: Counter = Counter()

    def _known(self, namespace):
        if namespace not in self._namespaces:
            raise ValueError(f"unknown namespace {namespace!r}: call Reset first")

    def settings(self):
        return {"stores": "nothing per scenario", "prior": f"word-pair counts across the process, top {TOP} per query"}

    def reset(self, namespace):
        self._namespaces.add(namespace)

    def store(self, namespace, session):
        self._known(namespace)
        for m in session.messages:
            words = _WORD.findall(m.text)
            self._pairs.update(f"{a} {b}" for a, b in zip(words, words[1:]))
        return StoreResult(items_stored=0)

    def flush(self, namespace, timeout_s):
        self._known(namespace)
        return True

    def retrieve(self, namespace, query, k, querying_entity, now):
        self._known(namespace)
        if k <= 0 or not self._pairs:
            return []
        wanted = terms(query)
        common = self._pairs.most_common(20 * TOP)
        related = [p for p, _ in common if terms(p) & wanted][:TOP] or [p for p, _ in common[:TOP]]
        return [Hit(text="; ".join(related), score=1.0, source_ids=(), timestamp=now)]

    def snapshot(self, namespace):
        self._known(namespace)
        return []


if __name__ == "__main__":
    serve(PriorBackend())

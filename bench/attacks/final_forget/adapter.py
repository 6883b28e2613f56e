"""Attack: keyword, which really forgets, once, right before the last checkpoint's Snapshot:
every session but those among the top 3 hits of a question asked at two checkpoints. Selectivity
is judged at the last checkpoint and TES's storage is the last Snapshot's, while the earlier
checkpoints were answered from everything; nothing in the state is a lie (the Snapshot shows what
is kept, and the last checkpoint's hits come from it alone).

What it reads: the Snapshot call opens a checkpoint (Flush, Snapshot, then the probes); short and
medium scenarios have three checkpoints (long ones four, the library's 1,000-session ones), so
the third Snapshot is the last. The scenario's own questions recur from checkpoint to checkpoint
while the state audit's probes are new each time, so a query asked again is a real probe, and
its top hits are a guess at what matters. Targets selectivity, storage at the end, TES, DRIFT-E,
DRIFT-C."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _base import KeywordBackend  # noqa: E402

from drift_sdk import serve  # noqa: E402

TOP = 3


def session_of(message_id: str) -> str:
    return message_id.rsplit("-m", 1)[0]


class FinalForget(KeywordBackend):
    name = "final-forget"

    def __init__(self):
        super().__init__()
        self._checkpoints: dict[str, int] = {}
        self._sessions: dict[str, int] = {}
        self._asked: dict[str, dict[str, set[int]]] = {}
        """namespace -> query -> the checkpoints it was asked at."""
        self._top: dict[str, dict[str, set[str]]] = {}
        """namespace -> query -> sessions among its top hits."""

    def reset(self, namespace):
        super().reset(namespace)
        self._checkpoints[namespace], self._sessions[namespace] = 0, 0
        self._asked[namespace], self._top[namespace] = {}, {}

    def store(self, namespace, session):
        self._sessions[namespace] += 1
        return super().store(namespace, session)

    def retrieve(self, namespace, query, k, querying_entity, now):
        hits = super().retrieve(namespace, query, k, querying_entity, now)
        self._asked[namespace].setdefault(query, set()).add(self._checkpoints[namespace])
        self._top[namespace].setdefault(query, set()).update(session_of(h.source_ids[0]) for h in hits[:TOP])
        return hits

    def _last(self, namespace) -> bool:
        n = self._checkpoints[namespace]
        return n == 4 or (n == 3 and self._sessions[namespace] < 500)

    def snapshot(self, namespace):
        self._checkpoints[namespace] += 1
        if self._last(namespace):
            keep = {s for q, cps in self._asked[namespace].items() if len(cps) > 1 for s in self._top[namespace][q]}
            if keep:
                drop = [d.message_id for d in self._space(namespace).docs if session_of(d.message_id) not in keep]
                self.forget(namespace, drop)
                self.flush(namespace, 0)
        return super().snapshot(namespace)


if __name__ == "__main__":
    serve(FinalForget())

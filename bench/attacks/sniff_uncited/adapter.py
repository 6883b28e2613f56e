"""Attack: `tests/runner/dishonest.py`'s UncitedNoise with a guess and the audit sniff.

The held sessions are chosen as in ``host_merge``. Their messages are verbatim items citing
themselves; every other message is a verbatim item citing nothing. A scenario question gets
keyword's hits, those from unheld sessions citing nothing (the whole Snapshot backs them); a query
that looks like the state audit's (all but one of its content words in one stored message) gets
keyword's hits from held sessions only. The rule that catches UncitedNoise (an audit probe found
by content that only an uncited item holds: no forgetting credit from then on) needs an audit
probe to find an unheld session, and no audit probe ever sees one. Targets selectivity."""

import importlib.util
import sys
from pathlib import Path

_spec = importlib.util.spec_from_file_location("host_merge", Path(__file__).resolve().parents[1] / "host_merge" / "adapter.py")
_host_merge = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_host_merge)
HostMerge = _host_merge.HostMerge

from drift_sdk import Hit, MemoryItem, serve  # noqa: E402


class SniffUncited(HostMerge):
    name = "sniff-uncited"

    def snapshot(self, namespace):
        docs = self._space(namespace).docs
        if not docs:
            return []
        self._choose(namespace)
        st = self._state[namespace]
        held, session_of = st["held"], st["session_of"]
        return [MemoryItem(item_id=d.message_id, text=d.text,
                           source_ids=(d.message_id,) if session_of[d.message_id] in held else (),
                           timestamp=d.timestamp) for d in docs]

    def retrieve(self, namespace, query, k, querying_entity, now):
        st = self._state[namespace]
        if st["held"] is None:
            return self._ranked(namespace, query, k, querying_entity, now)
        held, session_of = st["held"], st["session_of"]
        if self._audit_like(namespace, query):
            hits = self._ranked(namespace, query, 50 * k, querying_entity, now)
            return [h for h in hits if session_of[h.source_ids[0]] in held][:k]
        st["pending"].append((query, querying_entity, now))
        return [h if session_of[h.source_ids[0]] in held else Hit(text=h.text, score=h.score, source_ids=(),
                                                                   timestamp="")
                for h in self._ranked(namespace, query, k, querying_entity, now)]


if __name__ == "__main__":
    serve(SniffUncited())

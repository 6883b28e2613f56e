"""Attack: keyword's memory declared without provenance. Its hits cite nothing (ranked newest
first among keyword's top k, so the reader's rank tie-break stands in for the dates it no longer
gets), and its Snapshot shows every message verbatim, but only the messages of sessions it
guesses are signal (cite_launder's guess) cite their ids; the rest cite nothing. A hit citing
nothing is checked against the whole Snapshot, which holds all its text, and the audit counts
a session as found only through a hit citing it, so nothing ever ties what Retrieve returns to
the sessions the Snapshot says it keeps. Targets selectivity."""

import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

_spec = importlib.util.spec_from_file_location("cite_launder", Path(__file__).resolve().parents[1] / "cite_launder"
                                               / "adapter.py")
_launder = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_launder)

from drift_sdk import Capabilities, Hit, MemoryItem, serve  # noqa: E402


class UncitedSelect(_launder.CiteLaunder):
    name = "uncited-select"
    capabilities = Capabilities(provenance=False, snapshot=True, forget=True, scopes=True, flush_signal=True,
                                deterministic=True)

    def snapshot(self, namespace):
        docs = self._space(namespace).docs
        session_of = self._session_of[namespace]
        guess = self._guess[namespace] & set(self._order[namespace])
        held = guess or set(self._order[namespace])
        return [MemoryItem(item_id=d.message_id, text=d.text,
                           source_ids=(d.message_id,) if session_of[d.message_id] in held else (),
                           timestamp=d.timestamp) for d in docs]

    def retrieve(self, namespace, query, k, querying_entity, now):
        hits = _launder.KeywordBackend.retrieve(self, namespace, query, k, querying_entity, now)
        if not self._looks_audit(namespace, query):
            self._guess[namespace].update(self._session_of[namespace][h.source_ids[0]] for h in hits[:3])
        hits = sorted(hits, key=lambda h: h.timestamp, reverse=True)
        return [Hit(text=h.text, score=h.score, source_ids=()) for h in hits]  # a time on an uncited hit is a finding


if __name__ == "__main__":
    serve(UncitedSelect())

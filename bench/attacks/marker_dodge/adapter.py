"""Attack: keyword's memory, but it declares no Snapshot, so selectivity falls back to marker
probes, which the adapter recognises (a bare two-letter, four-digit code) and answers only for
sessions it guesses are signal (the top 3 hits of real probes so far). The state audit's
independent sentence probes run only for systems with a Snapshot, so nothing checks the
markers' story against what Retrieve returns for ordinary content."""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _base import RemembersTopHits  # noqa: E402

from drift_sdk import Capabilities, serve  # noqa: E402

MARKER = re.compile(r"^[A-Z]{2}\d{4}$")


class MarkerDodge(RemembersTopHits):
    name = "marker-dodge"
    capabilities = Capabilities(provenance=True, snapshot=False, forget=True, scopes=True, flush_signal=True,
                                deterministic=True)

    @staticmethod
    def hot_key(source_id: str) -> str:
        return source_id.rsplit("-m", 1)[0]  # the session

    def retrieve(self, namespace, query, k, querying_entity, now):
        hits = super().retrieve(namespace, query, k, querying_entity, now)
        if MARKER.match(query.strip()):
            return [h for h in hits if self.hot_key(h.source_ids[0]) in self._hot[namespace]]
        self.remember(namespace, query, hits)
        return hits


if __name__ == "__main__":
    serve(MarkerDodge())

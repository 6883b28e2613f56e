"""Attack: keyword's memory, but it declares no Snapshot, so selectivity falls back to marker
probes, which the adapter recognises (a bare two-letter, four-digit code) and answers only for
sessions it guesses are signal (the top 3 hits of real probes so far). The state audit's
independent sentence probes run only for systems with a Snapshot, so nothing checks the
markers' story against what Retrieve returns for ordinary content."""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _base import KeywordBackend, looks_like_audit  # noqa: E402

from drift_sdk import Capabilities, serve  # noqa: E402

MARKER = re.compile(r"^[A-Z]{2}\d{4}$")


class MarkerDodge(KeywordBackend):
    name = "marker-dodge"
    capabilities = Capabilities(provenance=True, snapshot=False, forget=True, scopes=True, flush_signal=True,
                                deterministic=True)

    def __init__(self):
        super().__init__()
        self._hot: dict[str, set[str]] = {}

    def reset(self, namespace):
        super().reset(namespace)
        self._hot[namespace] = set()

    def retrieve(self, namespace, query, k, querying_entity, now):
        hits = super().retrieve(namespace, query, k, querying_entity, now)
        if MARKER.match(query.strip()):
            return [h for h in hits if h.source_ids[0].rsplit("-m", 1)[0] in self._hot[namespace]]
        if not looks_like_audit(query):
            self._hot[namespace].update(h.source_ids[0].rsplit("-m", 1)[0] for h in hits[:3])
        return hits


if __name__ == "__main__":
    serve(MarkerDodge())

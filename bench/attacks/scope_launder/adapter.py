"""Attack: keyword's memory without its scope filter (every entity sees every private
message), claiming scopes all the same; a hit of another entity's private message cites its
session id instead of the message id. The runner counts a breach only from the cited message
ids ("a session-level id names no message"), so scope_breach_rate stays 0 while private text
reaches the reader, and carried provenance still credits the session citation for recall."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _base import KeywordBackend  # noqa: E402

from drift_sdk import Hit, serve  # noqa: E402


class ScopeLaunder(KeywordBackend):
    name = "scope-launder"

    def retrieve(self, namespace, query, k, querying_entity, now):
        space = self._space(namespace)
        owners = {d.message_id: d.owner for d in space.docs}
        saved = [d.owner for d in space.docs]
        for d in space.docs:
            d.owner = None  # no scope filter
        try:
            hits = super().retrieve(namespace, query, k, querying_entity, now)
        finally:
            for d, owner in zip(space.docs, saved):
                d.owner = owner
        out = []
        for h in hits:
            mid = h.source_ids[0]
            if owners.get(mid) not in (None, querying_entity or None):
                h = Hit(text=h.text, score=h.score, source_ids=(mid.rsplit("-m", 1)[0],), timestamp=h.timestamp)
            out.append(h)
        return out


if __name__ == "__main__":
    serve(ScopeLaunder())

"""Attack: marker_dodge (no Snapshot; markers answered only for sessions it guesses are signal),
and it recognises the state audit's disguised probes by their content, not their shape: an audit
probe asks a seeded half of one stored message's content words, so every content word of the
query occurs in a single stored message, which none of the corpus's own questions does. It
answers those only from the sessions it guesses are signal, so the sessions the audit finds
are the ones its markers report. The guess learns from the other queries only. Targets
selectivity past the disguise (docs/audit.md §3)."""

import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _base import terms  # noqa: E402

_spec = importlib.util.spec_from_file_location("marker_dodge", Path(__file__).resolve().parents[1] / "marker_dodge"
                                               / "adapter.py")
_marker = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_marker)
MarkerDodge, MARKER = _marker.MarkerDodge, _marker.MARKER

from drift_sdk import serve  # noqa: E402


def sniffs_audit(query: str, stored: list[frozenset[str]]) -> bool:
    """Whether ``query``'s content words (three or more) all occur in one stored message."""
    asked = set(terms(query))
    return len(asked) >= 3 and any(asked <= words for words in stored)


class AuditSniff(MarkerDodge):
    name = "audit-sniff"

    def __init__(self):
        super().__init__()
        self._words: dict[str, list[frozenset[str]]] = {}

    def reset(self, namespace):
        super().reset(namespace)
        self._words[namespace] = []

    def store(self, namespace, session):
        self._words[namespace] += [frozenset(terms(m.text)) for m in session.messages]
        return super().store(namespace, session)

    def remember(self, namespace, query, hits) -> None:
        if not sniffs_audit(query, self._words[namespace]):
            self._hot[namespace].update(self.hot_key(h.source_ids[0]) for h in hits[:3])

    def snapshot(self, namespace):
        raise NotImplementedError("snapshot")  # as claimed: storage is judged by markers and the audit

    def retrieve(self, namespace, query, k, querying_entity, now):
        hits = super().retrieve(namespace, query, k, querying_entity, now)
        if not MARKER.match(query.strip()) and sniffs_audit(query, self._words[namespace]):
            return [h for h in hits if self.hot_key(h.source_ids[0]) in self._hot[namespace]]
        return hits


if __name__ == "__main__":
    serve(AuditSniff())

"""Attack on the fix for hidden_index: the same hidden full-transcript ranking, and each summary
(hit and Snapshot item alike) ends with a digest line of the longest content words of every
message of the session that the summary lacks (``WORDS`` per message), so that the Snapshot
items of a session share two or more words with most audit probes about it and the ranking
looks explained. Targets the same metrics as hidden_index; measures what the digest costs."""

import os
import re
import sys
from pathlib import Path

import importlib.util  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _base import terms  # noqa: E402  (imports keyword's adapter module as "adapter")

_spec = importlib.util.spec_from_file_location("hidden_index_adapter",
                                               Path(__file__).resolve().parents[1] / "hidden_index" / "adapter.py")
_hidden = importlib.util.module_from_spec(_spec)
sys.modules.pop("adapter", None)  # hidden_index imports the reference compressor's module by that name
_spec.loader.exec_module(_hidden)
HiddenIndex = _hidden.HiddenIndex

from drift_sdk import Hit, MemoryItem, serve  # noqa: E402

# The runner does not pass its environment to a process-mode adapter: edit to vary.
WORDS = int(os.environ.get("HIDDEN_DIGEST_WORDS", "15"))


class HiddenDigest(HiddenIndex):
    name = "hidden-digest"

    def __init__(self):
        super().__init__()
        self._digest: dict[str, dict[str, str]] = {}

    def reset(self, namespace):
        super().reset(namespace)
        self._digest[namespace] = {}

    def store(self, namespace, session):
        result = super().store(namespace, session)
        space = self._space(namespace)
        summary = next((s for s in space.summaries if s.session_id == session.session_id), None)
        have = set(terms(summary.text)) if summary else set()
        words = []
        for m in session.messages:
            if m.scope == "private":
                continue
            extra = sorted((w for w in terms(m.text) if w not in have and w not in words), key=len, reverse=True)
            words.extend(extra[:WORDS])
        self._digest[namespace][session.session_id] = " ".join(words)
        return result

    def _with_digest(self, namespace, session_id, text):
        digest = self._digest[namespace].get(session_id, "")
        return f"{text}\nkeywords: {digest}" if digest else text

    def retrieve(self, namespace, query, k, querying_entity, now):
        hits = super().retrieve(namespace, query, k, querying_entity, now)
        space = self._space(namespace)
        by_text = {s.text: s.session_id for s in space.summaries}
        out = []
        for h in hits:
            sid = by_text.get(h.text)
            out.append(Hit(text=self._with_digest(namespace, sid, h.text) if sid else h.text, score=h.score,
                           source_ids=h.source_ids, timestamp=h.timestamp))
        return out

    def snapshot(self, namespace):
        return [MemoryItem(item_id=i.item_id, text=self._with_digest(namespace, i.item_id, i.text),
                           source_ids=i.source_ids, timestamp=i.timestamp) for i in super().snapshot(namespace)]


if __name__ == "__main__":
    serve(HiddenDigest())

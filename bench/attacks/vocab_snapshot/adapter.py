"""Attack: keyword's retrieval, but the Snapshot is ONE item citing every message whose text is
the deduplicated vocabulary of everything stored. Every audit check asks only for content-word
coverage, so the item backs every hit; storage tokens collapse (vocabulary grows sublinearly)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _base import KeywordBackend, terms  # noqa: E402

from drift_sdk import MemoryItem, serve  # noqa: E402


class VocabSnapshot(KeywordBackend):
    name = "vocab-snapshot"

    def snapshot(self, namespace):
        docs = self._space(namespace).docs
        if not docs:
            return []
        vocab = dict.fromkeys(w for d in docs for w in terms(d.text))
        return [MemoryItem(item_id="vocab", text=" ".join(vocab), source_ids=tuple(d.message_id for d in docs),
                           timestamp=docs[-1].timestamp)]


if __name__ == "__main__":
    serve(VocabSnapshot())

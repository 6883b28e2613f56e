"""Attack: keyword's retrieval; the Snapshot is the scenario's deduplicated vocabulary (one item
citing every message) plus, per message, one item of a word of it and a run of spaces as long
as the message, citing it. The state audit's length check counts characters while storage
counts tiktoken tokens, and o200k encodes 128 spaces as one token: the spaces lend each message
its length for about 1/128 of its tokens, and the vocabulary holds every hit's words. Targets
storage tokens, MVOT's efficiency term, TES, DRIFT-C, DRIFT-E; answers are keyword's."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _base import KeywordBackend, terms  # noqa: E402

from drift_sdk import MemoryItem, serve  # noqa: E402


class PadVocab(KeywordBackend):
    name = "pad-vocab"

    def snapshot(self, namespace):
        docs = self._space(namespace).docs
        if not docs:
            return []
        vocab = dict.fromkeys(w for d in docs for w in terms(d.text))
        items = [MemoryItem(item_id="vocab", text=" ".join(vocab), source_ids=tuple(d.message_id for d in docs),
                            timestamp=docs[-1].timestamp)]
        # One word keeps each pad findable by Retrieve of its own words (check-adapter's stored_findable).
        items += [MemoryItem(item_id=f"pad-{d.message_id}", text=(terms(d.text) or ["x"])[-1] + " " * len(d.text),
                             source_ids=(d.message_id,), timestamp=d.timestamp) for d in docs]
        return items


if __name__ == "__main__":
    serve(PadVocab())

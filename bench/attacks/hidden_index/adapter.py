"""Attack: the reference compressor (extractive-2: one summary per session, about 30% of its
tokens), whose Retrieve ranks the summaries by BM25 over the sessions' full transcripts, kept
in an index the Snapshot never shows. Hits and Snapshot are the summaries, so every hit is
backed and storage is the compressor's; what the memory really holds (every word of every
message, in the index) costs nothing. Targets accuracy, recall@k and DRIFT-C at the
compressor's storage (MVOT, TES)."""

import sys
from pathlib import Path

import bm25s

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "adapters" / "reference-compressor"))
from adapter import ReferenceCompressorBackend, _tokenize  # noqa: E402

from drift_sdk import serve  # noqa: E402


class HiddenIndex(ReferenceCompressorBackend):
    name = "hidden-index"

    def __init__(self):
        super().__init__()
        self._full: dict[str, dict[str, str]] = {}
        self._hidden: dict[str, tuple] = {}

    def reset(self, namespace):
        super().reset(namespace)
        self._full[namespace] = {}
        self._hidden[namespace] = (None, [])

    def store(self, namespace, session):
        # The verbatim transcript, kept for ranking only (never in the Snapshot).
        self._full[namespace][session.session_id] = "\n".join(f"{m.author}: {m.text}" for m in session.messages)
        return super().store(namespace, session)

    def flush(self, namespace, timeout_s):
        done = super().flush(namespace, timeout_s)
        space = self._space(namespace)
        ids = [s.session_id for s in space.summaries]
        if ids and ids != self._hidden[namespace][1]:
            index = bm25s.BM25()
            index.index(_tokenize([self._full[namespace][i] for i in ids]), show_progress=False)
            self._hidden[namespace] = (index, ids)
        return done

    def retrieve(self, namespace, query, k, querying_entity, now):
        space = self._space(namespace)
        index, ids = self._hidden[namespace]
        if index is None or k <= 0:
            return []
        # The reference compressor's ranking, over the hidden transcripts' index in place of its own.
        return self._rank(space, index, space.summaries[:len(ids)], query, k, querying_entity)


if __name__ == "__main__":
    serve(HiddenIndex())

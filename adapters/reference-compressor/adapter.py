"""The DRIFT reference compressor (DRIFT §7.1, §7.7): one summary per session, at most
512 tokens, no LLM call at retrieval. Its stored tokens and its token cost are the
normalisers of MVOT and TES.

This is the default form: deterministic and extractive (no LLM, no network).

Store builds one summary of the session:

1. Every message is cut into sentences (at ``. ! ?`` followed by a space, and at line
   breaks); a sentence longer than 80 words is cut into 60-word pieces so that "whole
   sentences" stay small enough to fit the cap.
2. Filler is dropped. A sentence's *content words* are its words minus English function
   words and acknowledgement/discourse markers ("ok", "sure", "thanks", "let me know"...).
   A sentence is kept when it has at least three content words, or one content word and
   a specific signal (a number, a capitalised name inside the sentence, an identifier such
   as ``api/v2``, ``test_login`` or ``camelCase``, a quoted phrase, or a first-person statement). So
   "ok trying it now" and "can you make it shorter?" go, "I'm vegan now" stays; the price
   is that a bare two-word report ("deploy failed") goes too. Repeats of the same sentence
   by the same author within the session are dropped (first one kept).
3. The kept sentences are rendered in their original order as
   ``[YYYY-MM-DD] alice: s1 s2 | bob: s3`` (the session date, then each message's kept
   sentences after its author). If that exceeds 512 tokens (tiktoken ``o200k_base``),
   sentences are taken greedily by salience, highest first (ties: earlier first), each
   one only if the rendered summary still fits; the rest are cut whole. Salience is
   generic, with no knowledge of any corpus::

       density + 0.5 [number] + 0.5 [name, identifier or quote] + 0.5 [first person]
               + 0.25 min(content words, 8) / 8

   where density = content words / words.

The summary is stored as ONE memory item (item id = session id) whose ``source_ids`` are
the message ids of the sentences kept, so provenance is at message level. A session that
is all filler yields an empty summary and stores nothing (``items_stored`` = 0).

Store reports zero LLM tokens because it makes no LLM call. The LLM form of the reference
compressor (used once an answer model is configured) will report the tokens it spends.

Retrieve ranks the summaries with BM25 (bm25s, English Snowball stemmer, as the keyword
adapter); the index of a namespace is rebuilt at Flush, so a summary is searchable once
Flush has returned. Ties in score go to the newer session, then to the later stored one.

Forget(source ids) rewrites each summary without the sentences those ids contributed
(from the kept sentences alone: the transcript is never kept); a summary left with no
sentence is dropped. It returns the number of summaries rewritten or dropped.

Message scope is not honoured (``capabilities.scopes`` is false), as in the keyword adapter.

Steps 1-3 live in :mod:`drift_sdk.summary`, which the runner's summary gate
(``--gate summary:N``, DRIFT §5.2) uses too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import bm25s
import numpy as np
import Stemmer
import tiktoken

from drift_sdk import Backend, Capabilities, Hit, MemoryItem, StoreResult, Usage, serve
from drift_sdk.summary import (  # noqa: F401 - analyse and the constants are this adapter's public surface too
    ENCODING,
    FILLER_RULE,
    LONG_SENTENCE_WORDS,
    MIN_CONTENT_WORDS,
    PIECE_WORDS,
    SALIENCE,
    SUMMARY_CAP_TOKENS,
    Analysis,
    Sentence,
    analyse,
    compress,
    date_prefix,
    informative_sentences,
    render,
    split_sentences,
)
from drift_sdk.tokens import encoding

_STEMMER = Stemmer.Stemmer("english")


@dataclass
class Summary:
    session_id: str
    timestamp: str
    prefix: str
    sentences: list[Sentence]
    text: str = ""

    def __post_init__(self) -> None:
        self.text = render(self.prefix, self.sentences)

    @property
    def source_ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.message_id for s in self.sentences))


@dataclass
class _Namespace:
    summaries: list[Summary] = field(default_factory=list)
    index: bm25s.BM25 | None = None
    indexed: int = 0
    """How many summaries the current index covers (later ones await Flush)."""


def _tokenize(texts: list[str]):
    return bm25s.tokenize(texts, stopwords="en", stemmer=_STEMMER, show_progress=False)


class ReferenceCompressorBackend(Backend):
    name = "reference-compressor"
    version = f"1 extractive (bm25s {bm25s.__version__}, tiktoken {tiktoken.__version__})"
    capabilities = Capabilities(provenance=True, snapshot=True, forget=True, flush_signal=True,
                                deterministic=True)

    def __init__(self) -> None:
        encoding(ENCODING)  # load the BPE file now: a missing one fails at start, not mid-run
        self._spaces: dict[str, _Namespace] = {}

    def settings(self):
        return {"form": "extractive (deterministic, no LLM call in Store or Retrieve)",
                "summary_cap": f"{SUMMARY_CAP_TOKENS} tokens (tiktoken {ENCODING}), one summary per session",
                "filler": FILLER_RULE, "salience": SALIENCE,
                "long_sentences": f"cut into {PIECE_WORDS}-word pieces past {LONG_SENTENCE_WORDS} words",
                "ranker": "BM25 over summaries (bm25s defaults: k1=1.5, b=0.75, method lucene)",
                "stemmer": "snowball english", "stopwords": "en",
                "forget": "rewrite each summary without the forgotten messages' sentences; drop it when empty"}

    def _space(self, namespace: str) -> _Namespace:
        if namespace not in self._spaces:
            raise ValueError(f"unknown namespace {namespace!r}: call Reset first")
        return self._spaces[namespace]

    def reset(self, namespace):
        self._spaces[namespace] = _Namespace()

    def store(self, namespace, session):
        space = self._space(namespace)
        timestamp = session.time or next((m.timestamp for m in session.messages if m.timestamp), "")
        prefix = date_prefix(timestamp)
        kept = compress(prefix, informative_sentences(session))
        if not kept:
            return StoreResult(usage=Usage(), items_stored=0)
        space.summaries.append(Summary(session.session_id, timestamp, prefix, kept))
        return StoreResult(usage=Usage(), items_stored=1)

    def flush(self, namespace, timeout_s):
        space = self._space(namespace)
        if space.index is None or space.indexed != len(space.summaries):
            space.index = None
            if space.summaries:
                index = bm25s.BM25()
                index.index(_tokenize([s.text for s in space.summaries]), show_progress=False)
                space.index = index
            space.indexed = len(space.summaries)
        return True

    def retrieve(self, namespace, query, k, querying_entity, now):
        space = self._space(namespace)
        if space.index is None or space.indexed == 0 or k <= 0:
            return []
        tokens = _tokenize([query])
        vocab = {i: t for t, i in tokens.vocab.items()}
        words = [vocab[i] for i in tokens.ids[0]]
        if not words:
            return []
        scores = np.asarray(space.index.get_scores(words), dtype=float)
        summaries = space.summaries[:space.indexed]
        # Highest score first; ties: newer session, then later storage order.
        ranked = sorted(range(len(summaries)), key=lambda i: (-scores[i], _neg(summaries[i].timestamp), -i))
        hits = []
        for i in ranked[:k]:
            if scores[i] <= 0:
                break
            s = summaries[i]
            hits.append(Hit(text=s.text, score=round(float(scores[i]), 6), source_ids=s.source_ids,
                            timestamp=s.timestamp))
        return hits

    def snapshot(self, namespace):
        return [MemoryItem(item_id=s.session_id, text=s.text, source_ids=s.source_ids, timestamp=s.timestamp)
                for s in self._space(namespace).summaries]

    def forget(self, namespace, source_ids):
        space = self._space(namespace)
        drop = set(source_ids)
        changed = 0
        summaries: list[Summary] = []
        for s in space.summaries:
            remaining = [x for x in s.sentences if x.message_id not in drop]
            if len(remaining) != len(s.sentences):
                changed += 1
                if not remaining:
                    continue
                s = Summary(s.session_id, s.timestamp, s.prefix, remaining)
            summaries.append(s)
        if changed:
            space.summaries = summaries
            space.index, space.indexed = None, 0  # rebuilt at the next Flush
        return changed


def _neg(timestamp: str) -> tuple[int, ...]:
    # Sort key that orders newer ISO timestamps first (same-format strings compare lexically).
    return tuple(-ord(c) for c in timestamp)


if __name__ == "__main__":
    serve(ReferenceCompressorBackend())

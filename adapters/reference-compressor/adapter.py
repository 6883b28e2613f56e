"""The DRIFT reference compressor (DRIFT §7.1, §7.7): one summary per session, at most
512 tokens, no LLM call at retrieval. Its stored tokens and its token cost are the
normalisers of MVOT and TES.

This is the default form, **extractive-2**: deterministic and extractive (no LLM, no network).
It departs from DRIFT's reference (one LLM summary per session, at most 512 tokens) in one
written way: an LLM summary of a long session is far shorter than the cap, and an extractive
summary allowed 512 tokens keeps nearly everything, so extractive-2 keeps at most
:data:`SESSION_SHARE` of the session's own tokens (at least :data:`SHARE_FLOOR_TOKENS`, never
more than 512): what a summariser would keep, not the transcript. The receipt's settings say so.

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
3. The cap of this session is ``min(512, max(SHARE_FLOOR_TOKENS, ceil(SESSION_SHARE x T)))``
   where T is the session's transcript tokens (``author: text`` per message, one per line).
   The kept sentences are rendered in their original order as
   ``[YYYY-MM-DD] alice: s1 s2 | bob: s3`` (the session date, then each message's kept
   sentences after its author). If that exceeds the cap (tiktoken ``o200k_base``),
   sentences are taken greedily by salience, highest first (ties: earlier first), each
   one only if the rendered summary still fits; the rest are cut whole. Salience is
   generic, with no knowledge of any corpus::

       density + 0.5 [name, identifier or quote] + 1.5 [first person] + 0.25 min(content words, 8) / 8
               - 1.5 [raw output] - 0.5 [question] - 0.75 [hedged]

   where density = content words / words, raw output is a line of code (inside a code
   fence), a table row, a log line or a mostly non-letter line, and hedged means a word of
   hearsay or supposition (:data:`drift_sdk.summary.SALIENCE` in full).

The summary is stored as ONE memory item (item id = session id) whose ``source_ids`` are
the message ids of the sentences kept, so provenance is at message level. A session that
is all filler yields an empty summary and stores nothing (``items_stored`` = 0).

Store reports zero LLM tokens because it makes no LLM call.

**LLM form** (opt-in: ``DRIFT_REFERENCE_LLM_MODEL`` set to a dated Anthropic model id *and*
``ANTHROPIC_API_KEY`` set; a key alone never switches it on, the model variable without a key
is a start-up error). This is the compressor DRIFT §7.7 assumes: Store makes ONE Messages API
call per session (:data:`LLM_SYSTEM`, temperature 0, at most :data:`LLM_MAX_TOKENS` output
tokens) through the suite's own client (:mod:`drift_sdk.llm`: pinned model, retries, response
cache, budget), asking for a summary that keeps each speaker and every fact with its value.
The answer, after the date prefix, is cut to 512 o200k_base tokens with tiktoken if longer,
and stored as ONE item (item id = session id) whose ``source_ids`` are all the session's
message ids: provenance is session-granular. Store's Usage reports the call's input and output
tokens and ``llm_calls`` = 1 (also when the answer came from the response cache: the tokens
are what the method costs, so TC_ref counts them and a cached rerun reports the same figures).
Retrieve is BM25 as in the extractive form, with no LLM call. Forget is not offered (a summary
cannot be rewritten without its transcript) and ``deterministic`` is not claimed. Optional:
``ANTHROPIC_BASE_URL`` (another endpoint), ``DRIFT_REFERENCE_LLM_CACHE`` (the response-cache
folder; without it the cache lives in the adapter's working folder, for one process),
``DRIFT_REFERENCE_LLM_BUDGET_USD`` (a spend cap; a spent budget fails Store with a clear message).

Retrieve ranks the summaries with BM25 (bm25s, English Snowball stemmer, as the keyword
adapter); the index of a namespace is rebuilt at Flush, so a summary is searchable once
Flush has returned. Ties in score go to the newer session, then to the later stored one.

Forget(source ids) rewrites each summary without the sentences those ids contributed
(from the kept sentences alone: the transcript is never kept); a summary left with no
sentence is dropped. It returns the number of summaries rewritten or dropped.

Scopes are honoured in the extractive form: a hit shows only the sentences of messages the
querying entity may see (shared ones, and private ones it wrote), re-rendered with that
provenance; a summary with none is not returned. The ranking is the whole summary's. The LLM
form's summaries mix a session's messages, so it cannot (``capabilities.scopes`` false).

Steps 1-3 live in :mod:`drift_sdk.summary`, which the runner's summary gate
(``--gate summary:N``, DRIFT §5.2) uses too.
"""

from __future__ import annotations

import math
import os
import sys
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
from drift_sdk.tokens import count_tokens, encoding

_STEMMER = Stemmer.Stemmer("english")

#: extractive-2: the share of a session's transcript tokens a summary may keep (DRIFT's 512 caps it).
SESSION_SHARE = 0.3
#: ... but never fewer tokens than this (a short session keeps its one or two facts).
SHARE_FLOOR_TOKENS = 100
FORM = "extractive-2"

MODEL_VAR, KEY_VAR = "DRIFT_REFERENCE_LLM_MODEL", "ANTHROPIC_API_KEY"
CACHE_VAR, BUDGET_VAR = "DRIFT_REFERENCE_LLM_CACHE", "DRIFT_REFERENCE_LLM_BUDGET_USD"
#: The answer's cap in the model's own tokens (the stored text is then cut to 512 o200k tokens).
LLM_MAX_TOKENS = 640
LLM_SYSTEM = (
    "You compress one session of a conversation into a memory note that will later be searched to answer "
    "questions about the participants. Keep every fact, preference, constraint, decision, plan, change and "
    "event, each with its exact value (names, places, numbers, dates, versions, identifiers, quoted phrases) "
    "and attributed to the participant who said it, by the id given before their message. When something "
    "changed, say so and give the new value. Leave out greetings, thanks, filler and small talk. Write plain "
    "sentences, no headings or lists, at most 300 words. If nothing in the session is worth keeping, answer "
    "with one short sentence saying so.")


class ConfigError(ValueError):
    """Bad LLM-form configuration from the environment (the message says what to set)."""


def llm_config(environ=os.environ) -> dict | None:
    """The LLM form's settings from the environment, or None for the extractive form.

    On when ``DRIFT_REFERENCE_LLM_MODEL`` and ``ANTHROPIC_API_KEY`` are both set; the key alone
    leaves the extractive form on. Returns ``{"model", "cache", "budget"}`` (never the key).

    Raises:
        ConfigError: the model is set without a key.
    """
    model = (environ.get(MODEL_VAR) or "").strip()
    if not model:
        return None
    if not (environ.get(KEY_VAR) or "").strip():
        raise ConfigError(f"{MODEL_VAR} asks for the reference compressor's LLM form, which needs {KEY_VAR} "
                          "(an Anthropic API key); unset it for the extractive form")
    return {"model": model, "cache": (environ.get(CACHE_VAR) or "").strip() or "llm-cache",
            "budget": (environ.get(BUDGET_VAR) or "").strip() or None}


def transcript(session) -> str:
    """What the model reads: the session's date and participants, then one line per message."""
    when = session.time or next((m.timestamp for m in session.messages if m.timestamp), "")
    head = f"Session {session.session_id}" + (f" on {when}" if when else "")
    if session.participants:
        head += ", participants: " + ", ".join(session.participants)
    return head + "\n\n" + "\n".join(f"{m.author}: {m.text}" for m in session.messages)


def session_cap(session) -> int:
    """extractive-2's cap for one session, in o200k_base tokens (see the module docstring)."""
    raw = count_tokens("\n".join(f"{m.author}: {m.text}" for m in session.messages), ENCODING)
    return min(SUMMARY_CAP_TOKENS, max(SHARE_FLOOR_TOKENS, math.ceil(SESSION_SHARE * raw)))


def cut_to_cap(prefix: str, text: str, cap: int = SUMMARY_CAP_TOKENS) -> str:
    """``prefix + text``, with ``text`` cut (at a token, then back to the last whitespace when
    there is one in its second half) so that the whole is at most ``cap`` o200k_base tokens."""
    enc = encoding(ENCODING)
    text = " ".join(text.split())
    whole = prefix + text
    if len(enc.encode(whole)) <= cap:
        return whole
    room = cap - len(enc.encode(prefix))
    cut = enc.decode(enc.encode(text)[:max(0, room)])
    while cut and len(enc.encode(prefix + cut)) > cap:  # a decode can re-tokenise a little longer
        cut = cut[:-1]
    space = cut.rfind(" ")
    if space > len(cut) // 2:
        cut = cut[:space]
    return prefix + cut.rstrip()


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
class LLMSummary:
    """The LLM form's one item per session: session-granular provenance."""

    session_id: str
    timestamp: str
    text: str
    source_ids: tuple[str, ...]


@dataclass
class _Namespace:
    summaries: list[Summary] = field(default_factory=list)
    owner: dict[str, str] = field(default_factory=dict)
    """Message id -> author, for private messages only (ids, never text)."""
    index: bm25s.BM25 | None = None
    indexed: int = 0
    """How many summaries the current index covers (later ones await Flush)."""


def _tokenize(texts: list[str]):
    return bm25s.tokenize(texts, stopwords="en", stemmer=_STEMMER, show_progress=False)


class ReferenceCompressorBackend(Backend):
    name = "reference-compressor"
    version = f"2 {FORM} (bm25s {bm25s.__version__}, tiktoken {tiktoken.__version__})"
    capabilities = Capabilities(provenance=True, snapshot=True, forget=True, scopes=True, flush_signal=True,
                                deterministic=True)

    def __init__(self, environ=None) -> None:
        encoding(ENCODING)  # load the BPE file now: a missing one fails at start, not mid-run
        self._spaces: dict[str, _Namespace] = {}
        self._llm = None
        config = llm_config(os.environ if environ is None else environ)
        if config is not None:
            self._start_llm(config, os.environ if environ is None else environ)

    def _start_llm(self, config: dict, environ) -> None:
        from drift_sdk.llm import AnthropicClient, Budget

        self._llm = AnthropicClient(config["model"], cache=config["cache"], budget=Budget(config["budget"]),
                                    environ=environ, purpose="the reference compressor's LLM form")
        self._llm_config = config
        model = self._llm.model
        self.version = (f"1 llm ({model}, one call per session; bm25s {bm25s.__version__}, "
                        f"tiktoken {tiktoken.__version__})")
        self.internal_models = (model,)
        self.capabilities = Capabilities(provenance=True, snapshot=True, forget=False, flush_signal=True,
                                         deterministic=False)

    def settings(self):
        if self._llm is not None:
            cache = self._llm_config["cache"]
            budget = self._llm_config["budget"]
            return {"form": f"llm: one Messages API call per session in Store ({self._llm.model}, temperature 0, "
                            f"at most {LLM_MAX_TOKENS} output tokens), none in Retrieve",
                    "model": self._llm.model,
                    "summary_cap": f"{SUMMARY_CAP_TOKENS} tokens (tiktoken {ENCODING}), one summary per session; "
                                   "a longer answer is cut with tiktoken",
                    "provenance": "session-granular: each summary cites every message id of its session",
                    "usage": "Store reports the call's input and output tokens (also when served from the cache)",
                    "response_cache": cache if cache != "llm-cache" else "llm-cache in the working folder "
                                                                         "(this process only)",
                    "budget_usd": budget or "unlimited (counted)",
                    "ranker": "BM25 over summaries (bm25s defaults: k1=1.5, b=0.75, method lucene)",
                    "stemmer": "snowball english", "stopwords": "en",
                    "forget": "not offered (a summary cannot be rewritten without its transcript)"}
        return {"form": f"{FORM} (deterministic, no LLM call in Store or Retrieve)",
                "summary_cap": f"min({SUMMARY_CAP_TOKENS}, max({SHARE_FLOOR_TOKENS}, ceil({SESSION_SHARE} x the "
                               f"session's transcript tokens))) tokens (tiktoken {ENCODING}), one summary per session",
                "departure": "DRIFT's reference is one LLM summary per session capped at 512 tokens; extractive-2 "
                             f"keeps at most {SESSION_SHARE:.0%} of the session's tokens, as a summary of a long "
                             "session would, instead of nearly all of it",
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
        space.owner.update((m.message_id, m.author) for m in session.messages if m.scope == "private")
        if self._llm is not None:
            return self._store_llm(space, session, timestamp, prefix)
        kept = compress(prefix, informative_sentences(session), session_cap(session))
        if not kept:
            return StoreResult(usage=Usage(), items_stored=0)
        space.summaries.append(Summary(session.session_id, timestamp, prefix, kept))
        return StoreResult(usage=Usage(), items_stored=1)

    def _store_llm(self, space: _Namespace, session, timestamp: str, prefix: str) -> StoreResult:
        if not session.messages:
            return StoreResult(usage=Usage(), items_stored=0)
        reply = self._llm.complete(LLM_SYSTEM, [{"role": "user", "content": transcript(session)}],
                                   max_tokens=LLM_MAX_TOKENS, temperature=0)
        usage = Usage(input_tokens=reply.input_tokens, output_tokens=reply.output_tokens, llm_calls=1)
        text = cut_to_cap(prefix, reply.text)
        if not text[len(prefix):].strip():
            return StoreResult(usage=usage, items_stored=0)
        ids = tuple(dict.fromkeys(m.message_id for m in session.messages))
        space.summaries.append(LLMSummary(session.session_id, timestamp, text, ids))
        return StoreResult(usage=usage, items_stored=1)

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
        return self._rank(space, space.index, space.summaries[:space.indexed], query, k, querying_entity)

    def _rank(self, space: _Namespace, index, summaries: list, query: str, k: int, querying_entity: str) -> list[Hit]:
        """The top ``k`` of ``summaries`` by ``index``'s BM25 scores for ``query`` (one document per
        summary, in order; only positive scores), as ``querying_entity`` may see them."""
        tokens = _tokenize([query])
        vocab = {i: t for t, i in tokens.vocab.items()}
        words = [vocab[i] for i in tokens.ids[0]]
        if not words:
            return []
        scores = np.asarray(index.get_scores(words), dtype=float)
        # Highest score first; ties: newer session, then later storage order.
        ranked = sorted(range(len(summaries)), key=lambda i: (-scores[i], _neg(summaries[i].timestamp), -i))
        hits = []
        for i in ranked:
            if scores[i] <= 0 or len(hits) == k:
                break
            s = self._visible(space, summaries[i], querying_entity)
            if s is not None:
                hits.append(Hit(text=s.text, score=round(float(scores[i]), 6), source_ids=s.source_ids,
                                timestamp=s.timestamp))
        return hits

    def _visible(self, space: _Namespace, s, entity: str):
        """``s`` as ``entity`` may see it: without another entity's private sentences (None when
        nothing is left). The LLM form's summaries cannot be split and are returned whole."""
        if self._llm is not None or not space.owner:
            return s
        kept = [x for x in s.sentences if space.owner.get(x.message_id) in (None, entity or None)]
        if len(kept) == len(s.sentences):
            return s
        return Summary(s.session_id, s.timestamp, s.prefix, kept) if kept else None

    def snapshot(self, namespace):
        return [MemoryItem(item_id=s.session_id, text=s.text, source_ids=s.source_ids, timestamp=s.timestamp)
                for s in self._space(namespace).summaries]

    def forget(self, namespace, source_ids):
        if self._llm is not None:
            raise NotImplementedError("forget (the LLM form cannot rewrite a summary without its transcript)")
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


def main() -> None:
    from drift_sdk.llm.errors import LLMError

    try:
        backend = ReferenceCompressorBackend()
    except (ConfigError, LLMError) as exc:  # messages name the variable to set, never the key
        print(f"reference-compressor adapter: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None
    if backend._llm is not None:
        print(f"reference-compressor adapter: LLM form, {backend._llm.model}", file=sys.stderr, flush=True)
    serve(backend)


if __name__ == "__main__":
    main()

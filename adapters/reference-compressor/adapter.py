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
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import bm25s
import numpy as np
import Stemmer
import tiktoken

from drift_sdk import Backend, Capabilities, Hit, MemoryItem, StoreResult, Usage, serve
from drift_sdk.tokens import count_tokens, encoding

SUMMARY_CAP_TOKENS = 512
ENCODING = "o200k_base"
#: A sentence without a specific signal needs this many content words to be kept.
MIN_CONTENT_WORDS = 3
#: Longest sentence kept whole, in words; longer ones are cut into pieces of PIECE_WORDS.
LONG_SENTENCE_WORDS = 80
PIECE_WORDS = 60
SALIENCE = ("density + 0.5 [number] + 0.5 [capitalised name, identifier or quoted phrase] + 0.5 [first person] "
            "+ 0.25 min(content words, 8) / 8; ties: earlier sentence first")
FILLER_RULE = (f"dropped unless >= {MIN_CONTENT_WORDS} content words, or 1 content word plus a number, name, "
               "identifier, quoted phrase or first-person statement; content words exclude English function words and "
               "acknowledgement markers; repeated sentences (same author) kept once")

_STEMMER = Stemmer.Stemmer("english")

# English function words (closed-class words: articles, pronouns, auxiliaries,
# prepositions, conjunctions, common adverbs of degree and time).
_FUNCTION_WORDS = frozenset("""
a about above after again against all almost also although always am among an and another any anybody
anyone anything anyway are around as at be because been before being below between both but by can
could did do does doing done down during each either else enough etc even ever every everyone
everything few for from further get gets getting got had has have having he her here hers herself him
himself his how however i if in into is it its itself just least less like lot lots many may maybe me
might mine more most much must my myself neither never no nobody none nor not nothing now of off often
on once one only onto or other others otherwise our ours ourselves out over own per perhaps quite
rather really same shall she should since so some somebody someone something sometimes somewhat soon
still such than that the their theirs them themselves then there these they this those though through
thus to too toward towards under until up upon us very via was we were what whatever when whenever
where whether which while who whoever whom whose why will with within without would yet you your
yours yourself yourselves
""".split())

# Acknowledgement and discourse markers: words that carry no fact in conversation.
_DISCOURSE_WORDS = frozenset("""
ok okay k sure thanks thank thx ty cheers great cool nice awesome perfect fine yes yeah yep yup nope
hmm hm huh haha hah lol oh ah uh um well right alright gotcha noted acknowledged agreed absolutely
definitely exactly indeed please sorry hi hello hey bye goodbye welcome let know go goes going
""".split())

_FIRST_PERSON = frozenset("i i'm i've i'll i'd my mine myself we we're we've we'll we'd our ours".split())

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*")
_WORD = re.compile(r"[^\W_]+(?:['’.\-/_@][^\W_]+)*")
_IDENTIFIER = re.compile(r"[\d./_@]|[a-z][A-Z]|-[A-Z]")
_QUOTED = re.compile(r'"[^"]+"|“[^”]+”')
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class Sentence:
    """One kept sentence of a session: where it came from and its rank weight."""

    position: int
    """Order in the session (message order, then sentence order)."""
    message_index: int
    message_id: str
    author: str
    text: str
    salience: float


@dataclass(frozen=True)
class Analysis:
    words: int
    content: int
    number: bool
    name: bool
    quote: bool
    first_person: bool

    @property
    def informative(self) -> bool:
        specific = self.number or self.name or self.quote or self.first_person
        return self.content >= MIN_CONTENT_WORDS or (self.content >= 1 and specific)

    @property
    def salience(self) -> float:
        density = self.content / self.words if self.words else 0.0
        return (density + 0.5 * self.number + 0.5 * (self.name or self.quote) + 0.5 * self.first_person
                + 0.25 * min(self.content, 8) / 8)


def _base(word: str) -> str:
    # "don't" -> "don", "it's" -> "it": a contraction is a function word when its base is.
    return word.split("'", 1)[0]


def analyse(sentence: str) -> Analysis:
    """Word counts and specific signals of one sentence (see the module docstring)."""
    words = _WORD.findall(sentence)
    content = number = name = first_person = 0
    for position, word in enumerate(words):
        folded = word.casefold().replace("’", "'")
        if folded in _FIRST_PERSON:
            first_person = 1
        if any(c.isdigit() for c in word):
            number = 1
        elif _IDENTIFIER.search(word) or (position > 0 and word[0].isupper() and folded not in _FIRST_PERSON):
            name = 1
        # A hyphenated compound ("depth-first", "long-term") counts once per part.
        for part in folded.split("-"):
            if part in _FUNCTION_WORDS or _base(part) in _FUNCTION_WORDS or part in _DISCOURSE_WORDS:
                continue
            if len(part) > 1 or part.isdigit():
                content += 1
    quote = _QUOTED.search(sentence) is not None
    return Analysis(len(words), content, bool(number), bool(name), quote, bool(first_person))


def split_sentences(text: str) -> list[str]:
    """Sentences of a message; one longer than LONG_SENTENCE_WORDS words is cut into pieces."""
    out: list[str] = []
    for sentence in _SENTENCE_END.split(text.strip()):
        sentence = sentence.strip()
        if not sentence:
            continue
        words = sentence.split()
        if len(words) <= LONG_SENTENCE_WORDS:
            out.append(sentence)
        else:
            out.extend(" ".join(words[i:i + PIECE_WORDS]) for i in range(0, len(words), PIECE_WORDS))
    return out


def _dedupe_key(author: str, sentence: str) -> tuple[str, str]:
    return author, " ".join(sentence.casefold().split()).rstrip(".!?…, ")


def informative_sentences(session) -> list[Sentence]:
    """The session's non-filler sentences in order, repeats (same author) removed."""
    seen: set[tuple[str, str]] = set()
    out: list[Sentence] = []
    position = 0
    for m_index, message in enumerate(session.messages):
        for text in split_sentences(message.text):
            analysis = analyse(text)
            key = _dedupe_key(message.author, text)
            if not analysis.informative or key in seen:
                continue
            seen.add(key)
            out.append(Sentence(position, m_index, message.message_id, message.author, text, analysis.salience))
            position += 1
    return out


def date_prefix(time: str) -> str:
    if not time:
        return ""
    match = _DATE.match(time)
    return f"[{match.group(0) if match else time}] "


def render(prefix: str, sentences: list[Sentence]) -> str:
    """``[date] author: s1 s2 | author: s3``: kept sentences in session order, one segment
    per message. Empty when no sentence is given."""
    if not sentences:
        return ""
    segments: list[str] = []
    current, parts = None, []
    for s in sorted(sentences, key=lambda s: s.position):
        if s.message_index != current:
            if parts:
                segments.append(" ".join(parts))
            current, parts = s.message_index, [f"{s.author}:"]
        parts.append(s.text)
    segments.append(" ".join(parts))
    return prefix + " | ".join(segments)


def _tokens(text: str) -> int:
    return count_tokens(text, ENCODING)


def compress(prefix: str, sentences: list[Sentence], cap: int = SUMMARY_CAP_TOKENS) -> list[Sentence]:
    """The sentences to keep so that ``render(prefix, kept)`` is at most ``cap`` tokens.

    Everything when it fits; otherwise greedily by salience (ties: earlier first), a
    sentence entering only if the rendered summary still fits. Returned in session order.
    """
    if _tokens(render(prefix, sentences)) <= cap:
        return list(sentences)
    kept: list[Sentence] = []
    for candidate in sorted(sentences, key=lambda s: (-s.salience, s.position)):
        trial = kept + [candidate]
        if _tokens(render(prefix, trial)) <= cap:
            kept = trial
    return sorted(kept, key=lambda s: s.position)


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

"""Carried provenance: a hit's citation counts only when the hit's text carries the cited message.

A memory cites the messages a hit came from (``source_ids``). Nothing stops an adapter from
citing every message it holds on every hit, so a citation is credited (for recall, coverage,
selectivity and the reader's dates) only when the hit's text is consistent with the cited
message's content. The rule (docs/audit.md):

- A text's *content words* are its words (Unicode letters and digits, NFKC, casefolded),
  minus English function words (:data:`STOPWORDS`) and one-character words, each reduced to
  its Snowball English stem ("drinks" and "drinking" both give "drink").
- Message ``m`` is carried by hit text ``h`` when they share at least
  ``min(MIN_SHARED, |W(m)|)`` content words AND either the shared words are at least
  :data:`MESSAGE_SHARE` of the message's content words (verbatim and extractive memories)
  or at least :data:`HIT_SHARE` of the hit's (a fact-rewriting memory condenses a long
  message into a short statement: "No more yerba mate, it's green tea every morning now"
  -> "User drinks green tea" shares {green, tea}: 2 of the message's 5, 2 of the hit's 4).
  A message with no content word is carried by nothing. By the rewriting route each hit
  word counts toward one cited message (:func:`carried_ids`): a five-word hit citing 40
  messages that each share two of its words carries at most two of them.
- Only the first ``budget`` tokens of a hit can support a citation (:func:`budget_cut`): no
  reader sees more of one hit, so a packed hit holding every message credits only what lies
  before that cut. ``k`` stays a hit count.

The thresholds were set on the committed corpus so that every built-in honest adapter keeps
its credit and a hit citing every stored message gains next to nothing (tests/test_provenance.py,
tests/runner/test_audits.py).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Mapping
from functools import lru_cache, wraps

import snowballstemmer

__all__ = ["BACKED_SHARE", "WHOLE", "MIN_SHARED", "MESSAGE_SHARE", "HIT_SHARE", "STOPWORDS", "content_terms",
           "content_words", "carries", "budget_cut", "carried_ids",
           "accounting_ids", "snapshot_backing", "text_size", "words_and_size", "word_pairs", "backing_problems"]

BACKED_SHARE = 0.8
"""Share of a hit's content words, of its neighbouring word pairs and of its size that the
Snapshot items citing its sources must hold for the Snapshot to back the hit (state audit and
``check-adapter``)."""
MIN_SHARED = 2
"""Content words a hit must share with a message (fewer only when the message has fewer)."""
MESSAGE_SHARE = 0.5
"""Share of the message's content words present in the hit that carries it verbatim or extractively."""
HIT_SHARE = 0.4
"""Share of the hit's content words that a rewriting hit must take from the message."""

STOPWORDS = frozenset("""
a about above after again against all also am an and any are aren't as at be because been before being
below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
during each either else ever every few for from further get gets got had hadn't has hasn't have haven't
having he he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if
in into is isn't it it's its itself just let's like me more most much must mustn't my myself no nor not
now of off on once one only or other ought our ours ourselves out over own per quite rather really same
shan't she she'd she'll she's should shouldn't so some such than that that's the their theirs them
themselves then there there's these they they'd they'll they're they've this those though through to
too under until up upon us very was wasn't we we'd we'll we're we've were weren't what what's when
when's where where's whether which while who who's whom why why's will with won't would wouldn't yes
yet you you'd you'll you're you've your yours yourself yourselves ok okay oh well sure thanks thank
please hi hello hey
""".split())
"""English function words, apostrophes as typed with U+0027 (curly ones are folded to it)."""

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_STEMMER = snowballstemmer.stemmer("english")


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _STEMMER.stemWord(word)


MEMO_CHARS = 8192
"""Texts up to this many characters have their content words and word pairs memoized per process:
the same hits and messages come back probe after probe (the state audit reads each hit several
times); a longer text (a dump's one item) is recomputed rather than kept."""
MEMO_ITEMS = 16384
"""Entries per memo before it is emptied."""


def _memo(function):
    """Memoize ``function(text)`` by a 128-bit BLAKE2b digest of the text, never the text itself:
    the budget gate forbids the runner to hold a transcript after Store, so the memo keeps only
    what the ledger keeps anyway (a set of stems, hashes of pairs)."""
    cache: dict[bytes, object] = {}

    @wraps(function)
    def call(text: str):
        if len(text) > MEMO_CHARS:
            return function(text)
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        found = cache.get(key)
        if found is None:
            if len(cache) >= MEMO_ITEMS:
                cache.clear()
            found = cache[key] = function(text)
        return found

    call.memo = cache
    return call


def content_terms(text: str) -> tuple[str, ...]:
    """The content words of ``text`` in order, casefolded, unstemmed (possessive 's dropped)."""
    folded = unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")
    return tuple(word[:-2] if word.endswith("'s") else word for word in _WORD.findall(folded)
                 if len(word) >= 2 and word not in STOPWORDS)


@_memo
def content_words(text: str) -> frozenset[str]:
    """The set of stemmed content words of ``text`` (see the module docstring)."""
    return frozenset(_stem(word) for word in content_terms(text))


def carries(hit_words: frozenset[str], message_words: frozenset[str]) -> bool:
    """True when a hit with content words ``hit_words`` can carry a message with ``message_words``
    on its own: by either route of the module docstring. Among several cited messages, the
    rewriting route's words are spent once (:func:`carried_ids`)."""
    return _extracts(hit_words, message_words) or _rewrites(hit_words, hit_words & message_words, message_words)


def _extracts(hit_words: frozenset[str], message_words: frozenset[str]) -> bool:
    """The verbatim/extractive route: the hit holds :data:`MESSAGE_SHARE` of the message's words."""
    shared = len(hit_words & message_words)
    return bool(message_words) and shared >= min(MIN_SHARED, len(message_words)) \
        and shared >= MESSAGE_SHARE * len(message_words)


def _rewrites(hit_words: frozenset[str], shared: frozenset[str], message_words: frozenset[str]) -> bool:
    """The rewriting route: ``shared`` (hit words taken from the message) is :data:`HIT_SHARE` of the hit."""
    return bool(message_words) and len(shared) >= min(MIN_SHARED, len(message_words)) \
        and len(shared) >= HIT_SHARE * len(hit_words)


def budget_cut(text: str, budget_tokens: int, encoding: str) -> str:
    """The part of ``text`` within its first ``budget_tokens`` tokens (tiktoken ``encoding``).

    A text of at most ``budget_tokens`` characters is returned whole (a token is never
    shorter than one character), so only long hits are tokenized.
    """
    if len(text) <= budget_tokens:
        return text
    from drift_sdk.tokens import encoding as load

    enc = load(encoding)
    tokens = enc.encode(text, disallowed_special=())
    return text if len(tokens) <= budget_tokens else enc.decode(tokens[:budget_tokens])


def carried_ids(hit_words: frozenset[str], source_ids: Iterable[str], words_of: Mapping[str, frozenset[str]],
                messages_of: Mapping[str, Iterable[str]]) -> list[str]:
    """The message ids a hit carries, in citation order, without repeats.

    ``words_of``: message id -> its content words; ``messages_of``: session id -> its
    message ids. A cited message id counts when the hit carries it; a cited session id
    contributes each of its messages the hit carries. Unknown ids contribute nothing.

    Every cited message the hit holds :data:`MESSAGE_SHARE` of (verbatim, extractive) counts.
    By the rewriting route (:data:`HIT_SHARE` of the hit's words taken from the message) each
    hit word counts toward one message: cited messages are taken by most shared words (ties:
    citation order), each must reach the route's thresholds with words no earlier one took,
    so a hit carries at most two messages that way (five words sharing two with each of 40
    messages carry two of them, not 40). The first route spends nothing: an extractive
    summary keeps the credit of every message it quotes (the reference compressor's hits
    share names and terms across the sentences they keep).
    """
    cited: dict[str, None] = {}
    for source in source_ids:
        cited.update(dict.fromkeys(messages_of.get(source) or ((source,) if source in words_of else ())))
    out, rewritten = set(), []
    for message_id in cited:
        words = words_of.get(message_id, frozenset())
        if _extracts(hit_words, words):
            out.add(message_id)
        elif _rewrites(hit_words, hit_words & words, words):
            rewritten.append(message_id)
    spent: set[str] = set()
    for message_id in sorted(rewritten, key=lambda m: -len(hit_words & words_of[m])):
        words = words_of[message_id]
        fresh = (hit_words & words) - spent
        if _rewrites(hit_words, frozenset(fresh), words):
            out.add(message_id)
            spent |= fresh
    return [m for m in cited if m in out]


def accounting_ids(hit_words: frozenset[str], carried: Iterable[str], words_of: Mapping[str, frozenset[str]]
                   ) -> list[str]:
    """Of the messages a hit carries (:func:`carried_ids`), those its words come from: what dates it.

    A cover, greedy: repeatedly the carried message holding most of the hit's words not yet
    accounted for (ties: fewer words of its own outside the hit, then citation order), until no
    carried message holds one more. A message whose shared words an earlier one already holds is
    left out: a verbatim hit carries, by shared words, a short later message it repeats words of,
    and citing that message beside its own must not date it later (``bench/attacks/cite_visible``).
    An extractive hit quoting two messages keeps both (each holds words the other does not).
    Returned in citation order.
    """
    pool = list(dict.fromkeys(carried))
    left, chosen = set(hit_words), set()
    while pool:
        best = max(range(len(pool)), key=lambda i: (len(words_of[pool[i]] & left),
                                                    -len(words_of[pool[i]] - hit_words), -i))
        if not words_of[pool[best]] & left:
            break
        left -= words_of[pool[best]]
        chosen.add(pool.pop(best))
    return [m for m in dict.fromkeys(carried) if m in chosen]


def backing_problems(source_ids: Iterable[str], text: str, view: tuple[Mapping[str, set], Mapping[str, float],
                                                                      Mapping[str, set]],
                     session_of) -> tuple[list[str], bool, bool, bool]:
    """How a Snapshot fails to back one hit: ``(missing, few_words, unordered, short)``.

    ``view``: :func:`snapshot_backing`'s ``(words_by, size_by, pairs_by)``; ``session_of(id)``: the
    session of a message id (itself for a session id). A cited id is backed by the items citing
    it, else by those citing its session; an id backed by neither is ``missing``. A hit citing
    nothing is backed by the whole Snapshot (:data:`WHOLE`). Over the backing items:
    ``few_words`` when they hold less than :data:`BACKED_SHARE` of the hit's content words,
    ``unordered`` when they hold less than that share of its neighbouring word pairs
    (:func:`word_pairs`: a bag of a session's words, each once, or its content words without the
    function words between them, holds the words of every message, not their text:
    ``bench/attacks/session_bag``), ``short`` when their size (:func:`text_size`, shared per cited
    id) comes to less than that share of the hit's. All False for a hit without content words
    (``unordered`` also for one without a word pair). The state audit and ``check-adapter`` both
    judge hits with this function.
    """
    words_by, size_by, pairs_by = view
    missing, related, pairs, size, seen = [], set(), set(), 0.0, set()
    for source in tuple(source_ids) or (WHOLE,):
        session = session_of(source)
        key = source if source in words_by else session if session in words_by else None
        if key is None:
            if source != WHOLE:  # an empty Snapshot backs no uncited text: unbacked, not a missing id
                missing.append(source)
            continue
        related |= words_by[key]
        pairs |= pairs_by[key]
        if key not in seen:
            seen.add(key)
            size += size_by[key]
    words = content_words(text)
    if not words:
        return missing, False, False, False
    own_pairs = word_pairs(text)
    return (missing, len(words & related) < BACKED_SHARE * len(words),
            len(own_pairs & pairs) < BACKED_SHARE * len(own_pairs), size < BACKED_SHARE * text_size(text))


WHOLE = ""
"""The :func:`snapshot_backing` key of the whole Snapshot (never a message or session id)."""


def words_and_size(text: str) -> tuple[frozenset[str], int]:
    """``(content_words(text), text_size(text))`` from one pass over the text."""
    terms = content_terms(text)
    return frozenset(_stem(word) for word in terms), len(terms)


def text_size(text: str) -> int:
    """How much text a Snapshot item or a hit shows: its content-word occurrences
    (:func:`content_terms`, repeats counted). Whitespace, punctuation and function words count
    nothing, so padding lends no size: a run of spaces is one or two o200k tokens of storage."""
    return len(content_terms(text))


_SEGMENT = re.compile(r"[.!?;\n]+")
_PAIR_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*|[^\w\s]")
"""A word, or one punctuation mark or symbol: the tokens :func:`word_pairs` pairs."""


@_memo
def word_pairs(text: str) -> frozenset[int]:
    """The neighbouring word pairs of ``text``, as hashes: within each segment (the pieces between
    ``. ! ? ;`` and line breaks), every token with the next: a word (Unicode letters and digits,
    NFKC, casefolded; function words and one-character words included, nothing stemmed) or one
    other mark (``, : - / $ ( )``...), so "2026-03-04, 10:30" gives "2026 -", "- 03", ..., "04 ,".

    What the text's order holds: a Snapshot item that keeps a text (verbatim, a quoted sentence, a
    fact returned as stored) holds its pairs; one that lists its words, keeps only its content
    words, or its words without their punctuation (``bench/attacks/word_order``: a date, an amount
    or a time the reader needs, shown in fewer tokens), holds few of them. Hashes (Python's ``hash`` of the pair, stable within one process)
    keep the per-item cache small; a collision could only back a pair, with odds of 2**-64.
    """
    folded = unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")
    out: set[int] = set()
    for piece in _SEGMENT.split(folded):
        words = _PAIR_TOKEN.findall(piece)
        out.update(hash((a, b)) for a, b in zip(words, words[1:]))
    return frozenset(out)


def snapshot_backing(items, words_of, session_of, size_of=None, pairs_of=None
                     ) -> tuple[dict[str, set[str]], dict[str, float], dict[str, set[int]]]:
    """What a Snapshot backs, per source id: ``(words_by, size_by, pairs_by)``.

    ``items``: objects with ``text`` and ``source_ids``; ``words_of(item)``: its content words;
    ``session_of(id)``: the session of a message id (itself for a session id); ``size_of(item)``:
    its :func:`text_size`, ``pairs_of(item)``: its :func:`word_pairs` (defaults computed; callers
    that see an item at every checkpoint pass cached ones). For each id an item cites, and that
    id's session: the union of the citing items' words and of their word pairs, and their size,
    each item's size shared equally among the distinct ids it cites (an item citing every message
    holds, per message, its size over their number). :data:`WHOLE` holds every item's words, pairs
    and full size: what backs a hit that cites nothing.
    """
    size_of = size_of or (lambda item: text_size(item.text))
    pairs_of = pairs_of or (lambda item: word_pairs(item.text))
    words_by: dict[str, set[str]] = {}
    size_by: dict[str, float] = {}
    pairs_by: dict[str, set[int]] = {}
    for item in items:
        words, pairs = words_of(item), pairs_of(item)
        sources = set(item.source_ids)
        size = size_of(item)
        share = size / max(1, len(sources))
        for key in {key for source in sources for key in (source, session_of(source))} | {WHOLE}:
            words_by.setdefault(key, set()).update(words)
            pairs_by.setdefault(key, set()).update(pairs)
        for source in sources:
            for key in {source, session_of(source)}:
                size_by[key] = size_by.get(key, 0.0) + share
        size_by[WHOLE] = size_by.get(WHOLE, 0.0) + size
    return words_by, size_by, pairs_by

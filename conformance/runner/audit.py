"""What an adapter reports about itself, checked by the runner (docs/audit.md).

Three checks, all on the harness side and none visible to the adapter as a test:

- **Carried provenance and runner-owned time** (:class:`MessageLedger`, :meth:`MessageLedger.own`):
  each hit's citations are kept only for the messages its text carries
  (:mod:`conformance.provenance`), and the hit is dated by the runner's own record of them
  (the newest of the carried messages its words come from, ``accounting_ids``; a citation of a
  session whose text the hit carries takes the session's time). The adapter's timestamp is
  recorded (``adapter_timestamp``), not used.
- **Memory-state audit** (:func:`audit_checkpoint`): at each checkpoint every hit's source ids
  must be among the Snapshot's, and its text backed by the Snapshot items citing those sources.
  Besides, one shared message per stored session, picked by the runner with an RNG seeded by the
  scenario and session ids (ordinary content, not the markers an adapter can recognise), is
  asked through Retrieve: a seeded half of its content words ask, and a hit citing the session
  must carry the other half (an echo of the query proves nothing). A session found so that the
  Snapshot does not hold is a mismatch. The audit's probes are disguised as the checkpoint's
  own (:meth:`MessageLedger.schedule`): each one's words fill the content-word slots of a
  question the scenario itself asks (its function words and question mark kept, and one of its
  content words, so the query is not made of one stored message's words alone), its asker and
  time are those of a real probe of the checkpoint, and all are asked among the real probes in
  a seeded order: neither shape nor position nor time tells them apart.
- **The seeds**: every seeded choice above hashes public ids (``_rng``), which an adapter sees at
  Store time and can replay (``bench/attacks/seed_replay``); a run given a secret audit salt
  (``--audit-salt-file``, :attr:`MessageLedger.salt`) keys the hash with it, so only the harness
  can, and its receipt commits to the salt (:mod:`conformance.runner.salt`).
- **Scoring from what the audit establishes** (:func:`apply_state_audit`): a system with any
  mismatch gets ``state_audit.passed`` false and its Snapshot is not used: its state records
  switch to ``method: "audit"`` (selectivity over the audited sessions, stored = found by the
  audit probes) with storage unknown, so storage tokens, MVOT, TES and DRIFT-E are n/a.

The ledger keeps ids, times and each message's set of stemmed content words (word order and
function words gone): never a transcript the reader could use. For the audit probes it also keeps,
per session, the content words of one sampled message (the asking half unstemmed in a seeded
order, the other half as stems; no function words, no punctuation), and the scenario's probe
questions (public fixture text), whose frames disguise them; they never reach the reader.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from conformance.contract.fixture import Probe
from conformance.provenance import (BACKED_SHARE, MESSAGE_SHARE, STOPWORDS, accounting_ids, backing_problems,
                                    budget_cut, carried_ids, carries, content_terms, content_words, snapshot_backing,
                                    word_pairs, words_and_size)

__all__ = ["MessageLedger", "OwnedHit", "AuditSentence", "audit_checkpoint", "phrase_like", "apply_state_audit",
           "audit_reasons", "provenance_findings",
           "AUDIT_FINDING_NOTE",
           "BACKED_SHARE", "OLDER_PROBES", "MIN_SENTENCE_WORDS", "MAX_ASK_WORDS"]

OLDER_PROBES = 4
"""Audit probes per checkpoint among sessions audited at an earlier checkpoint (re-checked)."""
MIN_SENTENCE_WORDS = 6
"""Distinct content words a message needs to be an audit probe (half ask, half must come back)."""
MAX_ASK_WORDS = 6
"""Most content words an audit probe asks (of them, one is its frame question's and the rest the sampled
message's): about what a corpus question holds, so length does not tell it."""
MAX_EXAMPLES = 3
REGAINED_SHARE = 0.25
"""Share of a message's content words (and at least :data:`REGAINED_MIN_WORDS`) a Snapshot may not show
again once it stopped showing them: a stub of under three quarters of each hidden message, shown whole
later, stays below it (``bench/attacks/stub_hindsight``: at 80% it passes, 91% of keyword's storage)."""
REGAINED_MIN_WORDS = 3
UNSEEN_SHARED = 1
"""At most this many of an audit probe's asked words in the Snapshot items citing its session: nothing
they show explains a ranking that puts that session first (:func:`_ranked_unseen`)."""
UNSEEN_MIN_PROBES = 6
"""Fewest such audit probes (so far in the scenario) the finding rests on."""
UNSEEN_SHARE = 0.5
"""Share of them whose first hit is the probed session above which Retrieve ranks by content the
Snapshot does not show (the extractive reference compressor: 17 of 122 on ``ci``; a compressor
ranking by hidden full transcripts: 117 of 123)."""

AUDIT_FINDING_NOTE = ("state audit failed (see state_audit): the adapter's Snapshot disagrees with what Retrieve "
                      "returns, so its self-reported storage is not used: selectivity is measured by the audit's "
                      "probes; storage tokens, MVOT, TES and DRIFT-E are n/a")
AUDIT_REASON = "state audit failed: the adapter's Snapshot is not used (see state_audit)"



@dataclass(frozen=True)
class OwnedHit:
    """A retrieved hit as the reader sees it: the adapter's text and rank, the runner's time."""

    text: str
    score: float
    source_ids: tuple[str, ...]
    timestamp: str
    """The runner's time (RFC 3339) of the newest carried message its words come from; "" when it carries none."""
    carried: tuple[str, ...]
    """Message ids the hit's text carries (within its first ``budget_tokens`` tokens)."""
    adapter_timestamp: str
    words: frozenset[str] = frozenset()
    """Content words of the hit's text within its first ``budget_tokens`` tokens (what can carry)."""


@dataclass(frozen=True)
class AuditSentence:
    """What the audit keeps of the one message sampled from a stored session: words, never text."""

    ask: tuple[str, ...]
    """Content words (casefolded, unstemmed) that ask, in a seeded order: a seeded half of the message's,
    at most :data:`MAX_ASK_WORDS`."""
    rest: frozenset[str]
    """Stems of the message's other content words: a hit that finds the session must carry half of them."""
    participants: tuple[str, ...]
    """The session's participants (who may be the asker: a memory may show a session only to them)."""


@dataclass
class MessageLedger:
    """The runner's own record of one scenario's messages: ids, times, content words."""

    scenario_id: str = ""
    salt: bytes | None = field(default=None, repr=False)
    """The run's secret audit salt (``--audit-salt-file``), mixed into every seeded choice; None:
    the choices are seeded by public ids alone, which an adapter can replay."""
    words_of: dict[str, frozenset[str]] = field(default_factory=dict)
    messages_of: dict[str, tuple[str, ...]] = field(default_factory=dict)
    time_of: dict[str, str] = field(default_factory=dict)
    """Message id -> its timestamp; session id -> the session's time."""
    session_of: dict[str, str] = field(default_factory=dict)
    sentences: dict[str, AuditSentence] = field(default_factory=dict)
    """Session id -> the words of its one sampled message (the audit probe's material)."""
    questions: list[str] = field(default_factory=list)
    """The scenario's probe questions so far, in first-asked order (the audit probes' frames)."""
    order: list[str] = field(default_factory=list)
    audited_upto: int = 0
    item_words: dict[tuple[str, str, bytes], tuple[frozenset[str], int, frozenset[int]]] = field(default_factory=dict)
    item_uncited: dict[tuple, frozenset[str]] = field(default_factory=dict)
    last_held: dict[str, tuple[frozenset[str], int]] = field(default_factory=dict)
    """System label -> (sessions its Snapshot held at its previous audited checkpoint, how many
    sessions had been streamed then)."""
    unseen_ranks: dict[str, list[int]] = field(default_factory=dict)
    """System label -> [audit probes so far whose session the Snapshot shows at most
    :data:`UNSEEN_SHARED` asked words of, how many of them returned that session first]."""
    last_words: dict[str, tuple[dict[str, frozenset[str]], int]] = field(default_factory=dict)
    """System label -> (per message, its content words its Snapshot showed at its previous audited
    checkpoint; how many sessions had been streamed then): :meth:`regained`."""
    shown_uncited: dict[str, set[str]] = field(default_factory=dict)
    """System label -> sessions whose content Retrieve showed, by content alone, from Snapshot items
    that do not cite them, at any audited checkpoint so far (:func:`audit_checkpoint`)."""

    def add_session(self, session, marker: str | None = None) -> None:
        """Record what Store received of one session (call before the transcript is dropped)."""
        sid = session.session_id
        self.order.append(sid)
        self.time_of[sid] = session.time
        ids = []
        for m in session.messages:
            ids.append(m.message_id)
            self.words_of[m.message_id] = content_words(m.text)
            self.time_of[m.message_id] = m.timestamp or session.time
            self.session_of[m.message_id] = sid
        self.messages_of[sid] = tuple(ids)
        sentence = self._sample_sentence(session, marker)
        if sentence is not None:
            self.sentences[sid] = sentence

    def _sample_sentence(self, session, marker: str | None) -> AuditSentence | None:
        candidates = []
        for m in session.messages:
            if getattr(m, "scope", "shared") == "private":
                continue  # asked by a real probe's asker, who need not be the author
            text = m.text.replace(marker, " ") if marker else m.text
            terms = list(dict.fromkeys(content_terms(text)))
            if len(terms) >= MIN_SENTENCE_WORDS:
                candidates.append(terms)
        if not candidates:
            return None
        rng = _rng(self.scenario_id, session.session_id, salt=self.salt)
        terms = rng.choice(candidates)
        # A seeded half (at most MAX_ASK_WORDS) asks, in a seeded order (no prefix of the message to
        # match); the rest must come back: an echo of the query proves nothing. Words only: no text.
        asking = rng.sample(terms, min(MAX_ASK_WORDS, (len(terms) + 1) // 2))
        rest = content_words(" ".join(t for t in terms if t not in asking))
        return AuditSentence(tuple(asking), rest, tuple(session.participants or ()))

    def schedule(self, checkpoint_id: str, probes: list[Probe], sessions: list[str],
                 fallback_time: str) -> list[tuple[str | None, Probe]]:
        """The checkpoint's Retrieve calls in the order they are asked: ``(None, probe)`` for each
        real probe (fixture order kept), ``(session id, audit probe)`` for each of ``sessions``
        (:meth:`to_audit`), at seeded places among them (seeded per scenario and checkpoint).

        An audit probe is phrased like the scenario's own questions (:func:`phrase_like`, a frame
        seeded per session from :attr:`questions`, which this call extends with ``probes``), keeps
        one content word of that question beside at most ``MAX_ASK_WORDS - 1`` of the sampled
        message's (so, like a real question, its words are not all of one stored message), and
        carries the asker and time of a real probe of the checkpoint whose asker took part in the
        session (else of any; ``fallback_time`` and the first participant when the checkpoint has
        no probe). Deterministic: the same inputs give the same list.
        """
        for probe in probes:
            if probe.query not in self.questions:
                self.questions.append(probe.query)
        frames = [q for q in self.questions if "?" in q and _slots(q)]
        audit = []
        for session in sessions:
            sentence = self.sentences[session]
            rng = _rng(self.scenario_id, checkpoint_id, session, salt=self.salt)
            asking = list(sentence.ask[:MAX_ASK_WORDS - 1])
            fitting = [f for f in frames if len(_slots(f)) <= len(asking) + 1]
            if fitting:
                frame = rng.choice(fitting)
                query = phrase_like(frame, _with_frame_word(asking, frame, sentence, rng), rng)
            else:
                query = " ".join(sentence.ask).capitalize() + "?"
            peers = [p for p in probes if p.asked_by in sentence.participants] or list(probes)
            like = rng.choice(peers) if peers else None
            asker = like.asked_by if like else (sentence.participants or ("harness",))[0]
            audit.append((session, Probe(probe_id=f"audit-{session}", asked_by=asker, query=query,
                                         asked_at=like.asked_at if like else fallback_time)))
        rng = _rng(self.scenario_id, checkpoint_id, "order", salt=self.salt)
        rng.shuffle(audit)
        total = len(probes) + len(audit)
        places = set(rng.sample(range(total), len(audit)))
        real, extra = iter(probes), iter(audit)
        return [next(extra) if i in places else (None, next(real)) for i in range(total)]

    def own(self, hits: Iterable, budget_tokens: int, encoding: str) -> list[OwnedHit]:
        """``hits`` (rank order) with carried provenance and runner-owned time."""
        out = []
        for hit in hits:
            words = content_words(budget_cut(hit.text, budget_tokens, encoding))
            carried = tuple(carried_ids(words, hit.source_ids, self.words_of, self.messages_of))
            when = self._time(hit.source_ids, tuple(accounting_ids(words, carried, self.words_of)))
            out.append(OwnedHit(hit.text, hit.score, tuple(hit.source_ids), when, carried, hit.timestamp, words))
        return out

    def _time(self, source_ids: Iterable[str], carried: tuple[str, ...]) -> str:
        if not carried:
            return ""
        carried_sessions = {self.session_of[m] for m in carried}
        cited_messages = [m for m in carried if m in source_ids]
        times = [self.time_of[m] for m in cited_messages]
        # A session cited by id (whose text the hit carries) takes the session's time.
        times += [self.time_of[s] for s in source_ids if s in self.messages_of and s in carried_sessions]
        return max(times, key=_instant) if times else ""

    def _item(self, label: str, item) -> tuple[frozenset[str], int, frozenset[int]]:
        key = (label, item.item_id, hashlib.blake2b(item.text.encode("utf-8"), digest_size=16).digest())
        if key not in self.item_words:
            self.item_words[key] = (*words_and_size(item.text), word_pairs(item.text))
        return self.item_words[key]

    def uncited_of_item(self, label: str, item) -> frozenset[str]:
        """A Snapshot item's content words less those of the messages it cites and carries (cached
        like its words): what it holds outside its citations (:func:`_uncited_words`)."""
        key = (label, item.item_id, tuple(item.source_ids),
               hashlib.blake2b(item.text.encode("utf-8"), digest_size=16).digest())
        if key not in self.item_uncited:
            words = self.words_of_item(label, item)
            for message_id in carried_ids(words, item.source_ids, self.words_of, self.messages_of):
                words = words - self.words_of[message_id]
            self.item_uncited[key] = words
        return self.item_uncited[key]

    def words_of_item(self, label: str, item) -> frozenset[str]:
        """A Snapshot item's content words (cached by system, item id and text)."""
        return self._item(label, item)[0]

    def size_of_item(self, label: str, item) -> int:
        """A Snapshot item's :func:`conformance.provenance.text_size` (cached like its words)."""
        return self._item(label, item)[1]

    def pairs_of_item(self, label: str, item) -> frozenset[int]:
        """A Snapshot item's :func:`conformance.provenance.word_pairs` (cached like its words)."""
        return self._item(label, item)[2]

    def carried_messages(self, label: str, items) -> set[str]:
        """Messages some Snapshot item cites (by message or session id) and carries."""
        out: set[str] = set()
        for item in items:
            out.update(carried_ids(self.words_of_item(label, item), item.source_ids, self.words_of, self.messages_of))
        return out

    def carried_sessions(self, label: str, items) -> set[str]:
        """Sessions some Snapshot item cites and carries a message of (selectivity's "stored")."""
        return {self.session_of[m] for m in self.carried_messages(label, items)}

    def partial_sessions(self, carried: set[str]) -> dict[str, list[str]]:
        """Held sessions of which ``carried`` (from :meth:`carried_messages`) holds only some
        messages: session id -> the held message ids, sorted (failure causes, docs/failure-causes.md)."""
        held: dict[str, list[str]] = {}
        for message_id in carried:
            held.setdefault(self.session_of[message_id], []).append(message_id)
        return {s: sorted(ms) for s, ms in sorted(held.items()) if len(ms) < len(self.messages_of[s])}

    def held_again(self, label: str, held: set[str]) -> list[str]:
        """Sessions, in stream order, streamed before ``label``'s previous audited checkpoint that its
        Snapshot did not hold there and holds now (``held``); records ``held`` for the next call.

        A memory that forgot a session cannot hold it later (nothing streams it again): one that
        does hid it at the earlier checkpoint, answering from less than it kept, and can bring back
        with hindsight of the questions asked since whatever they turn out to need
        (``bench/attacks/hindsight``)."""
        before = self.last_held.get(label)
        self.last_held[label] = (frozenset(held), len(self.order))
        if before is None:
            return []
        previous, upto = before
        return [s for s in self.order[:upto] if s in held and s not in previous]

    def regained(self, label: str, words_by: Mapping[str, set[str]]) -> list[str]:
        """Messages, in stream order, streamed before ``label``'s previous audited checkpoint whose words
        the Snapshot shows now (``words_by``: :func:`_snapshot_view`'s words per cited id) beyond what
        it showed there, by :data:`REGAINED_SHARE` of the message (and :data:`REGAINED_MIN_WORDS`
        words) or more; records what it shows now.

        :meth:`held_again` compares sessions, and a session stays held while one item carries one of
        its messages: a memory that keeps an anchor message per session can hide the rest at one
        checkpoint and bring back at the next whatever the questions asked since turn out to need
        (``bench/attacks/message_hindsight``), or show each message as a stub that carries it and
        later in full. What a Snapshot shows of a message are its words in the items citing the
        message or its session; a memory that dropped words cannot show them again."""
        shown = {m: frozenset(self.words_of[m] & (words_by.get(m, set()) | words_by.get(self.session_of[m], set())))
                 for s in self.order for m in self.messages_of[s]}
        before = self.last_words.get(label)
        self.last_words[label] = (shown, len(self.order))
        if before is None:
            return []
        previous, upto = before
        out = []
        for s in self.order[:upto]:
            for m in self.messages_of[s]:
                gained = len(shown[m] - previous.get(m, frozenset()))
                if gained >= max(REGAINED_MIN_WORDS, REGAINED_SHARE * len(self.words_of[m])):
                    out.append(m)
        return out

    def to_audit(self, checkpoint_id: str) -> list[str]:
        """Sessions to probe at this checkpoint: every one streamed since the last, plus
        up to :data:`OLDER_PROBES` earlier ones (seeded per scenario and checkpoint)."""
        new = self.order[self.audited_upto:]
        older = [s for s in self.order[:self.audited_upto] if s in self.sentences]
        self.audited_upto = len(self.order)
        picked = _rng(self.scenario_id, checkpoint_id, salt=self.salt).sample(older, min(OLDER_PROBES, len(older)))
        return [s for s in new if s in self.sentences] + sorted(picked, key=self.order.index)


def _with_frame_word(asking: list[str], frame: str, sentence: AuditSentence, rng: random.Random) -> list[str]:
    """``asking`` with one content word of ``frame`` at a seeded place: a word the sampled message
    lacks where the frame has one. A query made only of one message's words gives itself away
    (no question of the corpus has all its content words in one stored message:
    ``bench/attacks/audit_sniff``)."""
    own = {stem for word in asking for stem in content_words(word)} | sentence.rest
    terms = list(dict.fromkeys(t for start, end in _slots(frame) for t in content_terms(frame[start:end])))
    foreign = [t for t in terms if not content_words(t) & own] or terms
    words = list(asking)
    words.insert(rng.randrange(len(words) + 1), rng.choice(foreign))
    return words


def _rng(*parts: str, salt: bytes | None = None) -> random.Random:
    """An RNG seeded by ``parts`` (public ids); with ``salt`` (the run's secret audit salt, bytes),
    by HMAC-SHA-256 keyed by it over the same text, so only who holds the salt can replay the
    audit's choices (docs/audit.md, "The audit salt"). Without it: the public-id seed as ever."""
    text = "\x1f".join(("drift-audit-v1", *parts)).encode("utf-8")
    digest = hmac.digest(salt, text, "sha256") if salt is not None else hashlib.sha256(text).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _slots(question: str) -> list[tuple[int, int]]:
    """(start, end) of each run of content words in ``question``: words not in STOPWORDS, of two
    characters or more, joined by spaces or by punctuation inside a name ("docs.acme.test",
    "user's passport renewal"); a comma, colon or sentence end between two words ends a run."""
    runs: list[tuple[int, int]] = []
    previous = None
    for token in _TOKEN.finditer(question):
        word = token.group().casefold().replace("\u2019", "'")
        word = word[:-2] if word.endswith("'s") else word
        if len(word) < 2 or word in STOPWORDS:
            previous = None
            continue
        between = question[previous.end():token.start()] if previous is not None else ""
        if previous is not None and not (between.strip() and any(c.isspace() for c in between)):
            runs[-1] = (runs[-1][0], token.end())
        else:
            runs.append((token.start(), token.end()))
        previous = token
    return runs


def phrase_like(frame: str, words: list[str], rng: random.Random) -> str:
    """``words`` put in the content-word slots of ``frame`` (one of the corpus's own questions).

    Each run of content words of the frame (:func:`_slots`) takes a seeded, non-empty group of
    ``words`` in their order; the frame's function words and punctuation stay, so the query has the
    shape of the corpus's probes. ``words`` must be at least as many as the frame's slots (the
    caller picks a frame that fits). Returns the query, its first letter capitalised as the frame's.
    """
    slots = _slots(frame)
    if not slots or len(words) < len(slots):
        raise ValueError(f"{len(words)} words cannot fill the {len(slots)} content slots of {frame!r}")
    cuts = sorted(rng.sample(range(1, len(words)), len(slots) - 1))
    groups = [words[a:b] for a, b in zip([0, *cuts], [*cuts, len(words)])]
    out, at = [], 0
    for (start, end), group in zip(slots, groups):
        out += [frame[at:start], " ".join(group)]
        at = end
    query = "".join(out) + frame[at:]
    return query[:1].upper() + query[1:] if frame[:1].isupper() else query


_TOKEN = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")


def _instant(value: str):
    from conformance.answer.reader import _parse_time

    return _parse_time(value)


def _snapshot_view(items, ledger: MessageLedger, label: str):
    """(words, size, word pairs per covered id) of a Snapshot (:func:`conformance.provenance.snapshot_backing`,
    with the ledger's cached item words, sizes and pairs)."""
    return snapshot_backing(items, lambda item: ledger.words_of_item(label, item),
                            lambda source: ledger.session_of.get(source, source),
                            lambda item: ledger.size_of_item(label, item),
                            lambda item: ledger.pairs_of_item(label, item))


def _hit_problems(hit, view, ledger: MessageLedger) -> tuple[list[str], bool]:
    """(source ids the Snapshot does not hold, whether the text is unbacked by the items citing them).

    Backed: those items (for a hit citing nothing, the whole Snapshot) hold at least
    :data:`BACKED_SHARE` of the hit's content words and of its neighbouring word pairs, and their
    size (content-word occurrences, :func:`conformance.provenance.text_size`), shared per cited id
    (:func:`_snapshot_view`), comes to at least that share of the hit's: a Snapshot that lists each
    word once (a vocabulary, or a bag per session), or pads a word with spaces, holds the words,
    not the text (:func:`conformance.provenance.backing_problems`, which ``check-adapter`` applies too).
    """
    missing, few_words, unordered, short = backing_problems(hit.source_ids, hit.text, view,
                                                            lambda source: ledger.session_of.get(source, source))
    return missing, not missing and (few_words or unordered or short)


_SEGMENT = re.compile(r"[.!?;\n]+")


def _segment_words(texts: Iterable[str]) -> Counter:
    """Content-word counts over the distinct segments of ``texts`` (the pieces between ``. ! ? ;``
    and line breaks): how much distinct text they hold, word by word."""
    segments = {piece.strip() for text in texts for piece in _SEGMENT.split(text) if piece.strip()}
    counts: Counter = Counter()
    for piece in segments:
        counts.update(content_words(piece))
    return counts


def _uncited_overreach(items, hits) -> tuple[int, int] | None:
    """(content words the hits citing nothing show, how many of them the Snapshot holds), or None
    when it holds at least :data:`BACKED_SHARE` of them.

    Uncited hits are backed by the whole Snapshot (:func:`_hit_problems`) one at a time; taken
    together, their distinct segments must not show more text than the Snapshot holds (a Snapshot
    listing each word once backs every hit alone, and far less than all of them).
    """
    shown = _segment_words(hit.text for hit in hits if not hit.source_ids)
    if not shown:
        return None
    held = _segment_words(item.text for item in items)
    total, covered = sum(shown.values()), sum(min(n, held[word]) for word, n in shown.items())
    return None if covered >= BACKED_SHARE * total else (total, covered)


def _uncited_words(label: str, items, ledger: MessageLedger) -> list[frozenset[str]]:
    """Per Snapshot item that holds words beyond the messages it carries, those words (its content
    words less every word of the messages it cites and carries): what the item holds outside its
    citations. An item that carries nothing it cites holds all its words so; a verbatim or
    extractive item that carries what it cites, next to nothing."""
    return [left for left in (ledger.uncited_of_item(label, item) for item in items) if left]


def _outside(hit: OwnedHit, ledger: MessageLedger) -> frozenset[str]:
    """A hit's content words less every word of the messages it carries: what it shows beyond its
    citations (all its words when it carries nothing)."""
    words = hit.words or content_words(hit.text)
    for message_id in hit.carried:
        words = words - ledger.words_of[message_id]
    return words


def _held_by_content(session: str, rest: frozenset[str], outside: list[frozenset[str]],
                     ledger: MessageLedger) -> bool:
    """Whether some Snapshot item holds, outside its citations (``outside``: :func:`_uncited_words`),
    what a hit showed of ``session`` by content alone (:func:`_shows`: half the sampled message's
    other half, and one of the session's messages).

    Such a session is no mismatch (the Snapshot holds what Retrieve showed, a prior of frequent words
    that happens to contain a message's words among them: ``shortcut-prior``) but it is not held by
    provenance either: it earns no credit as a stored signal session, and from then on in the scenario
    (``held_uncited``, sticky) the Snapshot no longer establishes that any noise session is gone
    (selectivity, :mod:`conformance.scoring.drift`): items that hold content they do not cite may
    hold any session, so content kept outside the citations can neither hide a noise session nor
    claim a forgotten one (``tests/runner/dishonest.py``: ``UncitedNoise``; an item may cite and
    carry one message and hold a whole other session beside it: ``MergesNoise``)."""
    return any(_shows(words, session, rest, ledger) for words in outside)


def _shows(words: frozenset[str], session: str, rest: frozenset[str], ledger: MessageLedger) -> bool:
    """Whether text with content ``words`` shows ``session``'s sampled content by content alone: half
    the sampled message's other half, and one of the session's messages (:func:`carries`)."""
    return len(words & rest) * 2 >= len(rest) and any(carries(words, ledger.words_of[m])
                                                      for m in ledger.messages_of[session])


def _finds(hit: OwnedHit, session: str, rest: frozenset[str], ledger: MessageLedger) -> bool:
    """Whether an audit probe's hit brings the probed session's content back: its text holds half
    the sampled message's other half (:class:`AuditSentence`), and it carries a message of the
    session, by citation, or by the words it shows beyond the messages it carries (:func:`_outside`;
    all its words when it carries nothing it cites), by content alone: citing another session, or
    carrying one message beside another session's, does not hide content."""
    words = hit.words or content_words(hit.text)
    if len(words & rest) * 2 < len(rest):
        return False
    if any(ledger.session_of[m] == session for m in hit.carried):
        return True
    return _shows(_outside(hit, ledger), session, rest, ledger)


def _shown_by_probes(probe_hits: list, held: set[str], outside: list[frozenset[str]],
                     ledger: MessageLedger) -> set[str]:
    """Sessions not in ``held`` that a real probe's hit shows by content beyond what it carries
    (:func:`_outside`; :func:`_shows` of the sampled message, or :func:`_quotes` of any message) and
    that the Snapshot holds outside its citations (:func:`_held_by_content`, or an item quoting the
    same message). The audit's probes are not the only finders: a memory that tells them
    apart can keep them from ever finding what it holds outside its citations, not the hits it
    answers the questions with (``tests/runner/dishonest.py``: ``SniffsUncitedNoise``)."""
    unheld = [s for s in ledger.order if s not in held and s in ledger.sentences]
    out: set[str] = set()
    for hit in (probe_hits if unheld else ()):
        shown = _outside(hit, ledger)  # one word (a verbatim hit's author) is left out
        for session in (unheld if len(shown) >= 2 else ()):
            rest = ledger.sentences[session].rest
            if session not in out and (_shows(shown, session, rest, ledger) or _quotes(shown, session, ledger)) \
                    and (_held_by_content(session, rest, outside, ledger)
                         or any(_quotes(words, session, ledger, shown) for words in outside)):
                out.add(session)
    return out


def _quotes(words: frozenset[str], session: str, ledger: MessageLedger, within: frozenset[str] | None = None) -> bool:
    """Whether ``words`` hold :data:`~conformance.provenance.MESSAGE_SHARE` of the content words (what
    carries a message verbatim or extractively) of some message of ``session`` with at least
    :data:`MIN_SENTENCE_WORDS` of them (and ``within`` too, when given: the same message a hit quoted). Any message, not only the audit's sampled one: that choice is seeded by
    public ids, so a memory can replay it and keep every other message (``bench/attacks/seed_replay``)."""
    for message_id in ledger.messages_of[session]:
        own = ledger.words_of[message_id]
        need = MESSAGE_SHARE * len(own)
        if len(own) >= MIN_SENTENCE_WORDS and len(own & words) >= need \
                and (within is None or len(own & within) >= need):
            return True
    return False


def audit_checkpoint(label: str, ledger: MessageLedger, items, probe_hits: list,
                     asked: Mapping[str, list[OwnedHit]], marker_held: Iterable[str] | None = None) -> dict:
    """Audit one system's memory state at one checkpoint; returns the ``audit`` block of its state record.

    ``label``: the system's; ``items``: its Snapshot (objects with ``item_id``, ``text``,
    ``source_ids``); ``probe_hits``: the hits its probes returned at this checkpoint; ``asked``:
    session id -> the hits (:meth:`MessageLedger.own`) its audit probe returned, for the sessions
    it was asked about (:meth:`MessageLedger.schedule`: the same for every system, asked among
    the checkpoint's probes). Asks nothing; records what the Snapshot holds for the next checkpoint's
    comparison (:meth:`MessageLedger.held_again`). Returns ``{"hits_checked", "probed", "found",
    "findings"}``: ``probed``/``found`` session ids; ``findings`` one line per kind of mismatch; and,
    once some session has been found (by an audit probe or a real probe's hit) whose content the
    Snapshot holds only outside its citations (:func:`_held_by_content`), ``held_uncited``: every
    such session so far in the scenario, in stream order.

    ``marker_held``: for a system without Snapshot, the sessions its marker probes found
    (``items`` then empty): the sentence probes check that story instead (a session whose content
    comes back but whose marker does not is a mismatch); hits are not checked against items.
    """
    view = _snapshot_view(items, ledger, label)
    # "Holds" is what selectivity counts as stored: an item citing the session that carries one of its
    # messages; a session cited only by shards that carry nothing would look unstored yet back every hit.
    held = ledger.carried_sessions(label, items) if marker_held is None else set(marker_held)
    unsupported, unbacked, checked = [], [], 0
    uncited = ledger.shown_uncited.setdefault(label, set())
    checked += _check_hits(probe_hits if marker_held is None else [], view, ledger, unsupported, unbacked)
    outside = _uncited_words(label, items, ledger) if marker_held is None else []
    probed, found, hidden = [], [], []
    for session in sorted(asked, key=ledger.order.index):
        owned, rest = asked[session], ledger.sentences[session].rest
        probed.append(session)
        if any(_finds(hit, session, rest, ledger) for hit in owned):
            found.append(session)
            if session not in held and marker_held is None and _held_by_content(session, rest, outside, ledger):
                uncited.add(session)
            elif session not in held:
                hidden.append(session)
        if marker_held is None:
            _ranked_unseen(owned, session, view, ledger, ledger.unseen_ranks.setdefault(label, [0, 0]))
        checked += _check_hits(owned if marker_held is None else [], view, ledger, unsupported, unbacked)
    if outside:
        uncited |= _shown_by_probes(probe_hits, held | uncited, outside, ledger)
    findings = []
    back = ledger.held_again(label, held) if marker_held is None else []
    regained = ledger.regained(label, view[0]) if marker_held is None else []
    if regained:
        findings.append(f"the Snapshot shows again a quarter or more of the words of {len(regained)} messages streamed "
                        f"before the previous checkpoint that it did not show there (first: {', '.join(regained[:MAX_EXAMPLES])}): "
                        "a memory that dropped them cannot bring them back")
    if back:
        findings.append(f"the Snapshot holds {len(back)} sessions it did not hold at the previous checkpoint, "
                        f"streamed before it (first: {', '.join(back[:MAX_EXAMPLES])}): a memory that forgot "
                        "them cannot bring them back")
    overreach = None if marker_held is not None else _uncited_overreach(
        items, [*probe_hits, *(hit for session in asked for hit in asked[session])])
    if overreach:
        findings.append(f"hits that cite nothing show {overreach[0]} content words in distinct sentences; the "
                        f"Snapshot holds {overreach[1]} of them")
    unseen = ledger.unseen_ranks.get(label, [0, 0])
    if marker_held is None and unseen[0] >= UNSEEN_MIN_PROBES and unseen[1] > UNSEEN_SHARE * unseen[0]:
        findings.append(f"Retrieve ranks by content the Snapshot does not show: {unseen[1]} of {unseen[0]} audit "
                        f"probes so far whose session's Snapshot items hold at most {UNSEEN_SHARED} of the asked "
                        "words returned that session first")
    if unsupported:
        findings.append(f"{len(unsupported)} hits cite ids the Snapshot does not hold (first: "
                        f"{', '.join(sorted(set(unsupported))[:MAX_EXAMPLES])})")
    if unbacked:
        findings.append(f"{len(unbacked)} hits' text is not backed by the Snapshot items citing the same "
                        f"messages (first: {unbacked[0]!r})")
    if hidden:
        holder = "the Snapshot does not hold" if marker_held is None else "whose marker Retrieve does not return"
        findings.append(f"Retrieve returns content of {len(hidden)} sessions {holder} (first: "
                        f"{', '.join(hidden[:MAX_EXAMPLES])})")
    audit = {"hits_checked": checked, "probed": probed, "found": found, "findings": findings}
    if uncited:
        audit["held_uncited"] = [s for s in ledger.order if s in uncited]
    return audit


def _check_hits(hits: list[OwnedHit], view, ledger: MessageLedger, unsupported: list, unbacked: list) -> int:
    """Check ``hits`` against the Snapshot (:func:`_hit_problems`): the first id of each that cites
    what the Snapshot does not hold goes to ``unsupported``, the text of each whose text it does not
    back to ``unbacked``. Returns how many hits were checked."""
    for hit in hits:
        missing, bad_text = _hit_problems(hit, view, ledger)
        if missing:
            unsupported.append(missing[0])
        elif bad_text:
            unbacked.append(hit.text[:60])
    return len(hits)


def _ranked_unseen(owned: list[OwnedHit], session: str, view, ledger: MessageLedger, counts: list[int]) -> None:
    """Count one audit probe in ``counts`` (:attr:`MessageLedger.unseen_ranks`) when the Snapshot items
    citing ``session`` hold at most :data:`UNSEEN_SHARED` of its asked words, and whether its first
    hit cites that session.

    A memory ranks by what it holds. When what its Snapshot shows of a session shares next to
    nothing with the question, the session comes first only by chance (another session sharing the
    asked words usually outranks it), unless the ranking reads content the Snapshot leaves out: a
    compressor that shows one summary per session but ranks the summaries by the whole transcripts,
    kept in an index (``bench/attacks/hidden_index``), earns answers from everything at a summary's
    storage cost. Hits are backed, and the probe finds nothing (its hit lacks the message's other
    half), so no other rule sees it."""
    asked = content_words(" ".join(ledger.sentences[session].ask[:MAX_ASK_WORDS - 1]))
    if len(asked & view[0].get(session, set())) > UNSEEN_SHARED:
        return
    counts[0] += 1
    if owned and any(ledger.session_of.get(source, source) == session for source in owned[0].source_ids):
        counts[1] += 1


def apply_state_audit(records: list[dict]) -> dict | None:
    """Summarise one system's audits and, on a mismatch, rewrite its state records in place.

    ``records``: one system's run records (one repeat). Returns the fields of
    :class:`conformance.contract.result.StateAudit`, or None when no state record carries an
    audit (no Snapshot, the oracle, records older than the audit). On a finding, each state
    record of the system becomes ``method: "audit"``: ``stored_sessions`` = sessions whose
    latest audit probe (up to that checkpoint) found them, ``audited_sessions`` = every
    session probed so far, ``storage_tokens``/``items`` None.
    """
    states = [r for r in records if r.get("kind") == "state" and r.get("audit") is not None]
    if not states:
        return None
    findings: dict[str, list[str]] = {}
    for r in states:
        for line in r["audit"]["findings"]:
            findings.setdefault(re.sub(r"\d+", "N", line.split(" (first")[0]), []).append(
                f"{r['scenario_id']} {r['checkpoint_id']}: {line}")
    summary = {"passed": not findings, "checkpoints": len(states),
               "hits_checked": sum(r["audit"]["hits_checked"] for r in states),
               "sentences_probed": sum(len(r["audit"]["probed"]) for r in states),
               "sentences_found": sum(len(r["audit"]["found"]) for r in states),
               "findings": [f"{len(lines)} checkpoints: {lines[0]}" for _, lines in sorted(findings.items())]}
    if findings:
        latest: dict[str, dict[str, bool]] = {}
        for r in sorted(states, key=lambda r: (r["scenario_id"], r["after_session"])):
            seen = latest.setdefault(r["scenario_id"], {})
            found = set(r["audit"]["found"])
            seen.update((s, s in found) for s in r["audit"]["probed"])
            r.update(method="audit", storage_tokens=None, items=None, partial_sessions=None,
                     stored_sessions=sorted(s for s, ok in seen.items() if ok), audited_sessions=sorted(seen))
    return summary


def audit_reasons(metrics: dict) -> dict:
    """``metrics`` with the reason of every storage-based n/a metric naming the failed audit."""
    from conformance.scoring.drift import NO_SNAPSHOT

    out = {}
    for name, metric in metrics.items():
        reason = metric.reason or ""
        if metric.value is None and (NO_SNAPSHOT in reason or reason.startswith(("MVOT n/a", "TES n/a"))):
            metric = metric.model_copy(update={"reason": AUDIT_REASON})
        out[name] = metric
    return out


UNCARRIED_SHARE = 0.5
"""A system whose hits leave more than this share of their cited message ids uncarried gets a finding."""
FUTURE_SHARE = 0.2
"""A system more than this share of whose hits are dated after everything they carry gets a finding."""
MIN_EVIDENCE = 5
"""Fewest citations (or hits) a provenance or time finding rests on."""
_DAY_SECONDS = 86_400


def provenance_findings(probe_records: Iterable[Mapping], budget_tokens: int, session_ids: set[str]) -> list[str]:
    """What one system's probe hits did against carried provenance and runner-owned time.

    Returns plain lines (``SystemResult.findings``): message ids cited but not carried by the
    hit's text (their credit is already withheld: :mod:`conformance.provenance`), hits longer
    than the whole budget (only their first ``budget_tokens`` tokens earn credit), hits whose
    adapter time is more than a day later than the newest message they carry, or set on a hit
    that carries nothing (the reader uses the runner's time). Session-id citations are coarse
    provenance (``session_ids``: the scenario's session ids), never counted as uncarried.
    Records without ``carried`` are skipped.
    """
    cited = uncarried = hits = future = packed = 0
    for record in probe_records:
        if record.get("error") is not None:
            continue
        for hit in record.get("hits") or ():
            if "carried" not in hit:
                continue
            hits += 1
            carried = set(hit["carried"])
            messages = [s for s in hit["source_ids"] if s not in session_ids]
            cited += len(messages)
            uncarried += sum(1 for s in messages if s not in carried)
            if hit.get("tokens", 0) > budget_tokens:
                packed += 1
            if _later(hit.get("adapter_timestamp") or "", hit.get("timestamp") or ""):
                future += 1
    out = []
    if cited >= MIN_EVIDENCE and uncarried > UNCARRIED_SHARE * cited:
        out.append(f"provenance not carried: {uncarried} of {cited} message ids its hits cite are not carried by "
                   "the hit's text; they earn no recall, coverage or selectivity credit")
    if packed:
        out.append(f"{packed} hits are longer than the whole {budget_tokens}-token budget: only what lies before "
                   "the cut earns credit")
    if hits >= MIN_EVIDENCE and future > FUTURE_SHARE * hits:
        out.append(f"hit times not backed: {future} of {hits} hits carry an adapter timestamp later than any message "
                   "they carry (or carry none); the reader dates hits by the runner's record")
    return out


def _later(adapter: str, runner: str) -> bool:
    from conformance.answer.reader import _timestamp

    said = _timestamp(adapter)
    if said is None:
        return False
    own = _timestamp(runner)
    return own is None or (said - own).total_seconds() > _DAY_SECONDS

"""The audit checks of ``check-adapter``: what the runner audits at every checkpoint, asked of an
adapter on a small synthetic corpus before any run (docs/audit.md, docs/add-your-memory-system.md).

- ``snapshot_consistent``: every hit's source ids are among the Snapshot's, and its text is
  backed by the Snapshot items citing them, in words and in length (an understated Snapshot,
  or one listing each stored word once, fails);
- ``provenance_carried``: a cited message is carried by the hit: its made-up words are in the
  hit's text; no hit is longer than the runner's budget; hit times are RFC 3339 and no later
  than the newest message the hit carries (a hit citing every message, a packed hit, a hit
  dated "now" fail);
- ``stored_findable``: what Store claims is findable: each Snapshot item through a Retrieve of
  its own words, and with no Snapshot, a Store that reports items must return something;
- ``scopes_honoured``: with ``scopes`` claimed, another entity's private message never comes back;
- ``usage_valid``: the LLM usage Store, Flush and Retrieve replies report is made of non-negative integers
  of a believable size (a negative count would refund token cost never spent).

Registered into :data:`conformance.backend.checks.CHECKS` on import (checks.py imports this).
"""

from __future__ import annotations

from datetime import datetime, timezone

from conformance.backend import checks as c
from conformance.backend.client import checked_usage
from conformance.provenance import BACKED_SHARE, backing_problems, content_terms, content_words, snapshot_backing
from drift_sdk.types import Message, Session

BUDGET_TOKENS = 1200
"""The runner's context budget (RunConfig.budget_tokens): a longer hit is never read whole."""
_DAY_S = 86_400


def _time(value: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def _snapshot_or_none(h: c.Harness, ns: str):
    """The Snapshot, or None when it fails (that is ``capabilities_truthful``'s finding, not ours)."""
    try:
        return h.snapshot(ns)
    except c.BackendCallError:
        return None


_NO_SNAPSHOT = "the claimed Snapshot failed (capabilities_truthful judges that)"


def _snapshot_words(items) -> tuple[dict[str, set[str]], dict[str, float], dict[str, set[int]]]:
    """Source id (message or its session) -> (content words, size, word pairs) of the items citing it,
    read as the runner's state audit reads a Snapshot (:func:`conformance.provenance.snapshot_backing`)."""
    return snapshot_backing(items, lambda item: content_words(item.text), _session_of)


def _session_of(source: str) -> str:
    """The session of a synthetic corpus id (``<tag>-s<i>-m<j>`` -> ``<tag>-s<i>``; a session id is its own)."""
    return source.rsplit("-m", 1)[0]


@c._check("snapshot_consistent")
def check_snapshot_consistent(h: c.Harness) -> c.CheckResult:
    """Every hit's source ids are among the Snapshot's, and the Snapshot items citing them hold
    at least :data:`BACKED_SHARE` (80%) of the hit's content words, of its size (content-word
    occurrences, :func:`conformance.provenance.text_size`; an item's size shared equally among
    the ids it cites) and of its neighbouring word pairs (:func:`conformance.provenance.word_pairs`)."""
    name = "snapshot_consistent"
    if not h.claims("snapshot"):
        return c._skip(name, "Describe does not claim snapshot: the runner measures storage by marker probes")
    if not h.claims("provenance"):
        return c._skip(name, "Describe does not claim provenance: hits cannot be matched to Snapshot items")
    ns = h.namespace(name)
    corpus = c.synthetic_corpus("snc")
    try:
        h.load(ns, corpus)
        items = _snapshot_or_none(h, ns)
        if items is None:
            return c._skip(name, _NO_SNAPSHOT)
        view = _snapshot_words(items)
        known = corpus.ids  # an id never stored is provenance_ids' finding
        unsupported, unbacked, short, scrambled, hits = [], [], [], [], 0
        for m in corpus.messages:
            for hit in h.retrieve(ns, m.query):
                hits += 1
                # The state audit's own judgement (a message id is backed by the items citing it or its session).
                missing, few_words, unordered, too_short = backing_problems(hit.source_ids, hit.text, view,
                                                                            _session_of)
                missing = [s for s in missing if s in known]
                if missing:
                    unsupported.append(missing[0])
                elif few_words:
                    unbacked.append(hit.text[:50])
                elif too_short:
                    # A Snapshot listing each word once (or padding a word with spaces) holds the words,
                    # not the text.
                    short.append(hit.text[:50])
                elif unordered:
                    # Nor does a bag of a session's words, each once, though it outsizes each message.
                    scrambled.append(hit.text[:50])
        if unsupported:
            return c._fail(name, f"Snapshot does not hold what Retrieve returns: {len(unsupported)} of {hits} hits "
                                 f"cite ids no Snapshot item cites ({c._ids(sorted(set(unsupported)))}); the runner "
                                 "would then not use the Snapshot (state_audit)")
        if unbacked:
            return c._fail(name, f"{len(unbacked)} of {hits} hits' text is not in the Snapshot items citing the same "
                                 f"messages (first: {unbacked[0]!r}); the runner would not use the Snapshot")
        if short:
            return c._fail(name, f"{len(short)} of {hits} hits are longer than the Snapshot items citing the same "
                                 f"messages (fewer than {BACKED_SHARE:.0%} of the hit's content words, repeats counted; first: "
                                 f"{short[0]!r}): the Snapshot understates storage, and the runner would not "
                                 "use it")
        if scrambled:
            return c._fail(name, f"{len(scrambled)} of {hits} hits' words are in the Snapshot items citing the same "
                                 f"messages but not in their order (fewer than {BACKED_SHARE:.0%} of the hit's "
                                 f"neighbouring word pairs; first: {scrambled[0]!r}): the Snapshot holds the words, "
                                 "not the text, and the runner would not use it")
        return c._pass(name, f"{hits} hits, every source id and its text held by the Snapshot")
    finally:
        h.cleanup(ns)


@c._check("provenance_carried")
def check_provenance_carried(h: c.Harness) -> c.CheckResult:
    """Each message a hit cites by id is carried by the hit's text (its made-up words are there);
    no hit exceeds the runner's 1,200-token budget; hit times are RFC 3339 and not later than
    the newest message the hit carries."""
    name = "provenance_carried"
    if not h.claims("provenance"):
        return c._skip(name, "Describe does not claim provenance: recall is n/a, nothing to carry")
    ns = h.namespace(name)
    corpus = c.synthetic_corpus("pvc")
    by_id = {m.message_id: m for m in corpus.messages}
    times = {msg.message_id: msg.timestamp for s in corpus.sessions for msg in s.messages}
    times.update((s.session_id, s.time) for s in corpus.sessions)
    from drift_sdk.tokens import count_tokens

    try:
        h.load(ns, corpus)
        cited = uncarried = 0
        first_uncarried, packed, bad_time, late = None, [], [], []
        for m in corpus.messages:
            for hit in h.retrieve(ns, m.query):
                carried = [s for s in hit.source_ids if s in by_id and c.mentions(hit, by_id[s])]
                carried += [s for s in hit.source_ids if s not in by_id
                            and any(c.mentions(hit, msg) for msg in corpus.messages if msg.session_id == s)]
                # Citing the other messages of a session the hit carries is coarse provenance, not a lie.
                carried_sessions = {by_id[x].session_id if x in by_id else x for x in carried}
                for source in hit.source_ids:
                    if source in by_id:
                        cited += 1
                        if source not in carried and by_id[source].session_id not in carried_sessions:
                            uncarried += 1
                            first_uncarried = first_uncarried or (hit.text[:40], source)
                tokens = count_tokens(hit.text)
                if tokens > BUDGET_TOKENS:
                    packed.append(tokens)
                if hit.timestamp:
                    said = _time(hit.timestamp)
                    own = [_time(times[s]) for s in carried if s in times]
                    if said is None:
                        bad_time.append(hit.timestamp)
                    elif not own or (said - max(own)).total_seconds() > _DAY_S:
                        late.append(hit.timestamp)
        problems = []
        if uncarried:
            text, source = first_uncarried
            problems.append(f"provenance not carried: {uncarried} of {cited} cited message ids are not in the hit's "
                            f"text (first: hit {text!r}... cites {source}); they earn no credit")
        if packed:
            problems.append(f"{len(packed)} hits are longer than the {BUDGET_TOKENS}-token budget (up to "
                            f"{max(packed)} tokens): only what lies before the cut earns credit")
        if bad_time:
            problems.append(f"hit timestamps not RFC 3339 (e.g. {bad_time[0]!r})")
        if late:
            problems.append(f"hit times not backed: {len(late)} hits are dated later than any message they carry "
                            f"(e.g. {late[0]}); the runner dates hits by its own record")
        if problems:
            return c._fail(name, "; ".join(problems))
        return c._pass(name, f"{cited} cited message ids, each carried by its hit; hits within the budget, "
                             "times backed")
    finally:
        h.cleanup(ns)


@c._check("stored_findable")
def check_stored_findable(h: c.Harness) -> c.CheckResult:
    """What Store claims is findable after Flush: every Snapshot item through a Retrieve of its own
    words; without a Snapshot, a Store that reports items stored returns hits."""
    name = "stored_findable"
    ns = h.namespace(name)
    corpus = c.synthetic_corpus("sfd")
    try:
        stored, ready = h.load(ns, corpus)
        if not h.claims("snapshot"):
            if stored > 0 and not any(h.retrieve(ns, m.query) for m in corpus.messages):
                return c._fail(name, f"Store reported {stored} items stored, but no Retrieve returns anything")
            return c._pass(name, f"Store reported {stored} items; Retrieve returns them (no Snapshot to compare)")
        items = _snapshot_or_none(h, ns)
        if items is None:
            return c._skip(name, _NO_SNAPSHOT)
        if stored > 0 and not items:
            return c._fail(name, f"Store reported {stored} items stored, but the Snapshot is empty")
        lost = []
        for item in items:
            query = " ".join(dict.fromkeys(content_terms(item.text)))
            hits = h.retrieve(ns, query) if query else []
            words = content_words(item.text)
            if not any(set(hit.source_ids) & set(item.source_ids) or content_words(hit.text) >= words
                       for hit in hits):
                lost.append(item.item_id)
        if lost:
            return c._fail(name, f"{len(lost)} of {len(items)} Snapshot items cannot be found through Retrieve of "
                                 f"their own words ({c._ids(lost)})" + ("" if ready else "; Flush said not ready"))
        return c._pass(name, f"{len(items)} Snapshot items, each found through Retrieve of its own words")
    finally:
        h.cleanup(ns)


@c._check("scopes_honoured")
def check_scopes_honoured(h: c.Harness) -> c.CheckResult:
    """With ``scopes`` claimed, bob never gets alice's private message back (DRIFT §5.3), while
    alice does."""
    name = "scopes_honoured"
    if not h.claims("scopes"):
        return c._skip(name, "Describe does not claim scopes: the privacy score measures what leaks")
    ns = h.namespace(name)
    secret, public = c.made_up_words("drift-check-scopes", 4)[:2], c.made_up_words("drift-check-scopes", 4)[2:]
    session = Session(session_id="sco-s0", index=0, time="2026-01-05T09:00:00Z", participants=("alice", "bob"),
                      messages=(Message("sco-s0-m0", "alice", "user", f"My private note: the {secret[0]} is under "
                                        f"the {secret[1]}.", "2026-01-05T09:00:00Z", "private"),
                                Message("sco-s0-m1", "bob", "assistant", f"Shared: the {public[0]} and the "
                                        f"{public[1]} are in the archive.", "2026-01-05T09:01:00Z", "shared")))
    try:
        h.reset(ns)
        h.store(ns, session)
        h.flush(ns)
        query = " ".join(secret)
        leaked = [hit for hit in h.retrieve(ns, query, querying_entity="bob")
                  if "sco-s0-m0" in hit.source_ids or any(w in hit.text.casefold() for w in secret)]
        if leaked:
            return c._fail(name, f"scopes claimed, but bob got alice's private message back ({leaked[0].text[:60]!r})")
        own = any("sco-s0-m0" in hit.source_ids or secret[0] in hit.text.casefold()
                  for hit in h.retrieve(ns, query, querying_entity="alice"))
        return c._pass(name, "bob never got alice's private message" + ("; alice did" if own else
                                                                          " (alice did not get it back either)"))
    finally:
        h.cleanup(ns)


@c._check("usage_valid")
def check_usage_valid(h: c.Harness) -> c.CheckResult:
    """Every Store, Flush and Retrieve reply's usage is valid as the runner counts it
    (:func:`conformance.backend.client.checked_usage`): each field a non-negative integer of at
    most a billion. The runner records any other value as a contract violation and counts it as 0."""
    name = "usage_valid"
    usages = getattr(h.target, "usages", None)
    if usages is None:
        return c._skip(name, "this target does not expose reply usage")
    ns = h.namespace(name)
    corpus = c.synthetic_corpus("usg")
    start = len(usages)
    try:
        h.load(ns, corpus)
        for m in corpus.messages[:4]:
            h.retrieve(ns, m.query)
        mine = usages[start:]
        problems = {}
        for call, usage in mine:
            for line in checked_usage(usage)[1]:
                problems.setdefault(f"{call} {line.split(' (')[0]}", line)
        if problems:
            return c._fail(name, f"invalid LLM usage in {len(mine)} replies: "
                                 f"{'; '.join(f'{k.split()[0]} {v}' for k, v in problems.items())}: the runner "
                                 "records it as a contract violation")
        spent = sum(u.get("input_tokens", 0) + u.get("output_tokens", 0) for _, u in mine)
        return c._pass(name, f"{len(mine)} Store/Flush/Retrieve replies, usage valid ({spent} LLM tokens reported)")
    finally:
        h.cleanup(ns)

"""The sealed-gold runner: stream sessions through the budget gate, probe at checkpoints.

One pass over each fixture: every session is read once, stored into every system,
and dropped as soon as the last ``Store`` returns (the hard budget gate, DRIFT
§5.1): the runner keeps no transcript text past that point. At each checkpoint
every system is flushed, then each probe goes through ``Retrieve`` only; the
hits are cut to the token budget and a deterministic reader answers from that
context alone. Gold is never read here (the oracle control reads its own).

The DRIFT §5.2 variants (:mod:`conformance.runner.budget_gate`) change one step each:
``soft:K`` keeps the last K transcripts as a harness-side buffer appended to every
probe's context (visible messages only, DRIFT §5.3), and ``summary:N`` stores a
per-scope summary instead of the transcript. Under every gate, each probe counts the
hits whose provenance names another entity's private message (scope breaches, §5.3).
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections import deque
from datetime import datetime
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from conformance.backend.client import checked_usage
from conformance.answer.reader import answer_probe, build_context, context_tokens
from conformance.answer.tokens import count_tokens
from conformance.contract.corpus import iter_fixture
from conformance.contract.fixture import CheckpointLine, HeaderLine, Probe, SessionLine
from conformance.runner.audit import MessageLedger, audit_checkpoint
from conformance.runner.budget_gate import HARD, BudgetGate, summary_session, visible_to
from conformance.runner.findable import findability_fault, flush_fault
from conformance.provenance import MESSAGE_SHARE, MIN_SHARED, carries
from conformance.contract.records import (
    FaultRecord,
    ProbeRecord,
    RestartRecord,
    RunHeader,
    RetryRecord,
    ScenarioDone,
    StateRecord,
    StoreRecord,
)
from conformance.runner.records import RecordWriter
from conformance.errors import DriftError


@dataclass(frozen=True)
class RunConfig:
    """What every system gets alike (the fairness contract)."""

    k: int = 10
    """Hits asked of Retrieve per probe."""
    budget_tokens: int = 1200
    """Context budget in tokens (tiktoken ``encoding``); hits past it are cut by rank."""
    encoding: str = "o200k_base"
    flush_timeout_s: float = 120.0
    answerer: object | None = field(default=None, compare=False)
    """``--answer-model``: a :class:`conformance.llm.answer.AnswerModel` answering every probe
    from the budgeted context in place of the hermetic reader (None: the hermetic reader)."""
    audit_salt: bytes | None = field(default=None, repr=False, compare=False)
    """The secret audit salt (``--audit-salt-file``) keying the state audit's seeded choices
    (:attr:`conformance.runner.audit.MessageLedger.salt`); harness-side only, never sent to a
    system nor recorded. None: public-id seeding."""


class RunError(DriftError, RuntimeError):
    """A backend call failed mid-run; the message names scenario, session or probe, and the call."""


@dataclass
class Progress:
    """Callbacks for a progress display; all optional."""

    scenario_started: Callable[[str, int], None] = lambda scenario, sessions: None
    session_done: Callable[[], None] = lambda: None


@dataclass
class _ScenarioState:
    """What the runner may keep about a scenario once its transcripts are gone: ids, never text.

    ``session_of`` maps the id of every message Store received -> its session id (to
    read session-level provenance; under ``summary:N`` the summary message ids);
    ``private_of`` maps the id of every private message Store received -> its author
    (to count scope breaches, DRIFT §5.3); ``covers`` (``summary:N`` only) maps a summary
    message id -> the ids of the messages it kept a sentence of; ``asker_of`` one
    participant per session (who asks the marker probe); the token cache maps (system,
    item id, text digest) -> tokens so a Snapshot at each checkpoint only tokenizes new
    items. ``buffer`` (``soft:K`` only) is the one exception to "never text": the last K
    session transcripts, oldest first; a deque of length K drops older ones.
    """

    markers: dict[str, str] = field(default_factory=dict)
    streamed: list[str] = field(default_factory=list)
    streamed_ids: set[str] = field(default_factory=set)
    """``streamed`` as a set: every Retrieve reply is checked against it (no rebuild per probe)."""
    session_of: dict[str, str] = field(default_factory=dict)
    asker_of: dict[str, str] = field(default_factory=dict)
    private_of: dict[str, str] = field(default_factory=dict)
    covers: dict[str, tuple[str, ...]] = field(default_factory=dict)
    buffer: deque | None = None
    last_time: str = ""
    last_write_ms: dict[str, float] = field(default_factory=dict)
    claimed: dict[str, int] = field(default_factory=dict)
    """Per system, the items its Store replies reported in this scenario (the findability check)."""
    token_cache: dict[tuple[str, str, bytes], int] = field(default_factory=dict)
    ledger: MessageLedger = field(default_factory=MessageLedger)
    """Ids, times and content words of what Store received (carried provenance, runner-owned
    time, the state audit: :mod:`conformance.runner.audit`)."""


class _RetrievedOneByOne:
    """``system`` whose every Retrieve goes through :meth:`_Scenario.retrying` on its own: the
    findability check makes several, and retrying the whole batch would meet a fresh transient
    failure on each pass (the state audit's probes are single calls among the real probes)."""

    def __init__(self, run: "_Scenario", system, where: str, call: str) -> None:
        self._run, self._system, self._where, self._call = run, system, where, call

    def __getattr__(self, name: str):
        return getattr(self._system, name)

    def retrieve(self, *args, **kwargs):
        return self._run.retrying(self._system, self._where, self._call,
                                  lambda: self._system.retrieve(*args, **kwargs))


class SystemFault(Exception):
    """One system failed one call: a crash, a missed deadline, or garbage in its reply."""

    def __init__(self, label: str, where: str, call: str, category: str, message: str):
        self.label, self.where, self.call, self.category, self.detail = label, where, call, category, message
        super().__init__(f"{label}: {where}: {call} failed: {message}")


#: A hit's text beyond this many characters is garbage: the whole context budget is
#: 1,200 tokens, so no honest memory returns a megabyte for one hit.
MAX_HIT_CHARS = 256 * 1024


#: Missed deadlines after which a system is given up for the run: until then each miss
#: restarts its adapter (process mode, one scenario stream at a time), since a hung
#: adapter would otherwise cost a deadline in every later scenario.
MAX_DEADLINE_MISSES = 3
#: Waits before each retry of a transient failure (UNAVAILABLE: a dropped connection, a
#: service briefly down), seconds; bounded, so a system that stays down costs < 2 s a call.
RETRY_BACKOFF_S = (0.1, 0.3, 0.9)


def _status(exc: Exception) -> str | None:
    code = getattr(exc, "code", None)
    return getattr(code, "name", None)


@dataclass
class FaultLog:
    """Faults of a run, shared by every scenario (and thread) of it.

    ``dead``: systems whose process exited; they are not called again in this run.
    ``given_up``: systems that missed :data:`MAX_DEADLINE_MISSES` deadlines (or could not be
    restarted after one), with the reason naming the first miss; not called again either.
    ``misses``: per system, the faults of its missed deadlines so far.
    ``restarts_allowed``: adapters are restarted after a miss (one stream at a time only:
    an adapter lives as long as the thread that started it, :mod:`drift_sdk.launch`).
    ``messages``: one line per fault, in the order they happened (the result's errors).
    """

    dead: dict[str, str] = field(default_factory=dict)
    given_up: dict[str, str] = field(default_factory=dict)
    misses: dict[str, list[str]] = field(default_factory=dict)
    restarts_allowed: bool = True
    messages: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def missed_deadline(self, label: str, fault: str, restartable: bool) -> bool:
        """Count a missed deadline; True when the adapter should be restarted, False when it
        is given up for the run (the reason names the first miss)."""
        with self.lock:
            misses = self.misses.setdefault(label, [])
            misses.append(fault)
            if len(misses) < MAX_DEADLINE_MISSES and restartable and self.restarts_allowed:
                return True
            self.given_up.setdefault(label, f"given up for the run after it missed {len(misses)} deadline"
                                            f"{'s' if len(misses) != 1 else ''} (first: {misses[0].splitlines()[0]})")
            return False

    def add(self, fault: "SystemFault", died: str | None) -> None:
        with self.lock:
            self.messages.append(str(fault))
            if died:
                self.dead.setdefault(fault.label, died)


class _Scenario:
    """One scenario's stream: which systems still answer, and how faults are recorded.

    A system that faults is not called again in this scenario (its remaining probes get
    error records, so every system keeps the same denominators); other systems and other
    scenarios go on. A system whose process died is not called again in the run.
    """

    def __init__(self, systems: list, writer: RecordWriter, faults: FaultLog, repeat: int):
        self.systems, self.writer, self.faults, self.repeat = systems, writer, faults, repeat
        self.scenario = ""
        self.failed: dict[str, str] = {}

    def live(self) -> list:
        return [s for s in self.systems if s.label not in self.failed]

    def mark(self, system, where: str, call: str, exc: Exception, category: str | None = None) -> None:
        if category is None:
            category = "contract" if isinstance(exc, SystemFault) else getattr(exc, "category", "infrastructure")
        died = system.died()
        for _ in range(20 if category == "infrastructure" and not died else 0):
            # A crash shows first as a broken connection; give the process a moment to be reaped.
            time.sleep(0.05)
            died = system.died()
            if died:
                break
        detail = exc.detail if isinstance(exc, SystemFault) else str(exc)
        fault = SystemFault(system.label, where, call, category, detail + (f"\n{died}" if died else ""))
        self.failed[system.label] = str(fault)
        self.faults.add(fault, died)
        self.writer.write(FaultRecord(system=system.label, scenario_id=self.scenario, repeat=self.repeat,
                                      where=where, call=call, category=category, error=str(fault)))
        if not died and _status(exc) == "DEADLINE_EXCEEDED":
            self._after_missed_deadline(system, str(fault))

    def _after_missed_deadline(self, system, fault: str) -> None:
        """A hung adapter still holds the call (and, in most, its one lock): restart it, so
        the next scenario finds it answering, or give it up after too many misses."""
        restart = getattr(system, "restart", None)
        restartable = restart is not None and system.restartable
        if not self.faults.missed_deadline(system.label, fault, restartable):
            if restartable:
                system.process.stop(grace_s=0)  # given up: a hung process holds memory for nothing
            return
        try:
            restart(grace_s=0)
        except Exception as exc:  # noqa: BLE001 - a restart that fails gives the system up
            with self.faults.lock:
                self.faults.given_up.setdefault(system.label, f"given up for the run: the restart after a missed "
                                                              f"deadline failed ({str(exc).splitlines()[0]}); first "
                                                              f"cause: {fault.splitlines()[0]}")
            return
        self.writer.write(RestartRecord(system=system.label, scenario_id=self.scenario, repeat=self.repeat,
                                        cause=fault))

    def _transient(self, system, call: str, exc: Exception) -> bool:
        if _status(exc) != "UNAVAILABLE" or system.died():
            return False
        # A retried Store may store twice: only adapters that say a repeated Store is harmless.
        return call != "Store" or bool(getattr(system, "idempotent_stores", False))

    def retrying(self, system, where: str, call: str, fn):
        """``fn()``, retried after each wait of :data:`RETRY_BACKOFF_S` while it fails
        transiently (gRPC UNAVAILABLE from a live adapter), each retry written as a ``retry``
        record; Store only for adapters declaring ``idempotent_stores`` (adapter.yaml).
        The last failure is raised."""
        for attempt in range(len(RETRY_BACKOFF_S) + 1):
            try:
                return fn()
            except SystemFault:
                raise
            except Exception as exc:  # noqa: BLE001 - the caller records what is left
                if attempt == len(RETRY_BACKOFF_S) or not self._transient(system, call, exc):
                    raise
                wait = RETRY_BACKOFF_S[attempt]
                self.writer.write(RetryRecord(system=system.label, scenario_id=self.scenario, repeat=self.repeat,
                                              where=where, call=call, attempt=attempt + 1, backoff_s=wait,
                                              error=str(exc)))
                time.sleep(wait)

    def call(self, system, where: str, call: str, fn, retry: bool = True):
        """``fn()`` (through :meth:`retrying` unless ``retry`` is False: ``fn`` retries its
        own calls), or None after recording a fault (the system is then skipped here)."""
        try:
            return self.retrying(system, where, call, fn) if retry else fn()
        except SystemFault as exc:
            self.mark(system, where, call, exc, "contract")
        except Exception as exc:  # noqa: BLE001 - any failure of one system is that system's fault
            self.mark(system, where, call, exc)
        return None


def run_scenario(path: Path, systems: list, writer: RecordWriter, config: RunConfig, namespace_prefix: str,
                 progress: Progress = Progress(), repeat: int = 1, faults: FaultLog | None = None,
                 gate: BudgetGate = HARD) -> str:
    """Stream one fixture through every system; returns its scenario id.

    Records written: one ``store`` per (system, session), one ``probe`` per (system,
    probe), and one ``state`` per (system, checkpoint): which sessions the memory holds
    (Snapshot provenance, else marker probing, DRIFT §7.2) and its size in tokens
    (Snapshot text, DRIFT §7.7); a ``fault`` record per failed call, and a closing
    ``scenario_done`` record once everything of the scenario is on disk (``--resume``
    skips scenarios that have one). ``repeat`` (1-based) is written into every record.

    A failing system (crash, missed deadline, garbage reply) gets a ``fault`` record
    naming scenario, session or probe and the call, and error records for the probes
    it is not asked; the others go on. ``faults`` collects them for the whole run.

    ``gate`` (DRIFT §5.2): ``hard`` as above; ``soft:K`` also keeps the last K
    transcripts for the reader (probe records then mark buffer hits ``from_buffer``);
    ``summary:N`` hands Store :func:`~conformance.runner.budget_gate.summary_session`
    instead of the transcript (hits citing a summary carry ``covers``: the message ids it
    kept a sentence of). Systems with a ``store_summary(namespace, session, covers)``
    method (the harness-side oracle) get the coverage map too.
    """
    faults = faults if faults is not None else FaultLog()
    run = _Scenario(systems, writer, faults, repeat)
    namespace = ""
    state = _ScenarioState(buffer=deque(maxlen=gate.size) if gate.kind == "soft" else None,
                           ledger=MessageLedger(salt=config.audit_salt))
    for line in iter_fixture(path):
        if isinstance(line, HeaderLine):
            namespace = f"{namespace_prefix}/{line.scenario_id}"
            _start_scenario(line, run, state, namespace, progress)
        elif isinstance(line, SessionLine):
            _store_session(line, run, state, namespace, gate)
            # The budget gate: the transcript goes now. Nothing below may refer to it.
            del line
            progress.session_done()
        elif isinstance(line, CheckpointLine):
            _checkpoint(line, run, config, namespace, state)
            writer.sync()
    writer.write(ScenarioDone(scenario_id=run.scenario, repeat=repeat, failed_systems=sorted(run.failed)))
    writer.sync()
    return run.scenario


def _start_scenario(line: HeaderLine, run: "_Scenario", state: _ScenarioState, namespace: str,
                    progress: Progress) -> None:
    """Reset every system's ``namespace``; a system given up or dead earlier in the run is
    marked failed for this scenario instead."""
    run.scenario = scenario = line.scenario_id
    state.markers = dict(getattr(line, "markers", None) or {})
    state.ledger.scenario_id = scenario
    progress.scenario_started(scenario, sum(p.sessions for p in line.horizons))
    faults = run.faults
    for system in run.systems:
        if system.label in faults.given_up:
            run.failed[system.label] = (f"{system.label}: not run in scenario {scenario}: "
                                        f"{faults.given_up[system.label]}")
            continue
        if system.label in faults.dead:
            run.failed[system.label] = (f"{system.label}: not run in scenario {scenario}: its process exited "
                                        f"earlier in the run ({faults.dead[system.label].splitlines()[0]})")
            continue
        run.call(system, f"scenario {scenario}", "Reset", lambda s=system: s.reset(namespace))


def _store_session(line: SessionLine, run: "_Scenario", state: _ScenarioState, namespace: str,
                   gate: BudgetGate) -> None:
    """Store one session in every live system (a ``store`` record each) and keep what the
    runner may know of it afterwards: ids, owners and times, never the text (``state``)."""
    where = f"scenario {run.scenario}, session {line.session_id}"
    stored, covers = (summary_session(line, gate.size) if gate.kind == "summary" else (line, None))
    for system in run.live():
        if covers is not None and hasattr(system, "store_summary"):
            call = (lambda s=system: s.store_summary(namespace, stored, covers))
        else:
            call = (lambda s=system: s.store(namespace, stored))
        outcome = run.call(system, where, "Store", call)
        if outcome is None:
            continue
        state.last_write_ms[system.label] = outcome.latency_ms
        state.claimed[system.label] = state.claimed.get(system.label, 0) + max(0, outcome.items_stored)
        usage, violations = checked_usage(outcome.usage)
        if outcome.items_stored < 0:
            violations.insert(0, f"negative items_stored ({outcome.items_stored})")
        run.writer.write(StoreRecord(system=system.label, scenario_id=run.scenario, repeat=run.repeat,
                                     session_id=line.session_id, write_latency_ms=round(outcome.latency_ms, 3),
                                     usage=usage, items_stored=outcome.items_stored,
                                     violations=violations, error=None))
    state.streamed.append(line.session_id)
    state.streamed_ids.add(line.session_id)
    state.session_of.update((m.message_id, line.session_id) for m in stored.messages)
    state.private_of.update((m.message_id, m.author) for m in stored.messages if m.scope == "private")
    if covers:
        state.covers.update(covers)
    if line.participants:
        state.asker_of[line.session_id] = line.participants[0]
    state.last_time = line.time
    state.ledger.add_session(stored, state.markers.get(line.session_id))
    if state.buffer is not None:
        # soft:K: the buffer keeps this transcript; appending pushes out the one K sessions back.
        state.buffer.append(line)


def _memory_state(system, namespace: str, state: _ScenarioState, config: RunConfig,
                  where: str) -> dict:
    """Sessions the memory holds and its size, by Snapshot provenance when it has one.

    A session is held when some item cites it (or one of its messages) and the item's text
    carries one of its messages (:mod:`conformance.provenance`); tokens count every item.
    """
    if not getattr(system, "supports_snapshot", False):
        return {"method": None, "storage_tokens": None, "items": None, "stored_sessions": None}
    items = system.snapshot(namespace)
    tokens = 0
    for item in items:
        key = (system.label, item.item_id, hashlib.blake2b(item.text.encode("utf-8"), digest_size=16).digest())
        if key not in state.token_cache:
            state.token_cache[key] = count_tokens(item.text, config.encoding)
        tokens += state.token_cache[key]
    # Carried provenance: an item's citation of a session counts when its text carries a message of it.
    carried = state.ledger.carried_messages(system.label, items)
    stored = {state.ledger.session_of[m] for m in carried}
    return {"method": "snapshot", "storage_tokens": tokens, "items": len(items),
            "stored_sessions": sorted(stored), "partial_sessions": state.ledger.partial_sessions(carried),
            "_items": items}


def _marker_probe(system, namespace: str, state: _ScenarioState, config: RunConfig, where: str,
                  run: "_Scenario | None" = None) -> list[str]:
    """Sessions whose marker comes back from Retrieve(marker): the no-Snapshot fallback (DRIFT §7.2).

    A session counts as stored when a hit's text contains its marker verbatim; provenance
    alone is not enough (a vector store returns its k nearest items for any query).
    """
    stored = []
    for session_id in state.streamed:
        marker = state.markers.get(session_id)
        if not marker:
            continue
        probe = Probe(probe_id=f"marker-{session_id}", asked_by=state.asker_of.get(session_id, "harness"),
                      query=marker, asked_at=state.last_time)
        ask = (lambda p=probe: system.retrieve(namespace, p, config.k))
        outcome = ask() if run is None else run.retrying(system, where, "Retrieve (marker probes)", ask)
        if any(marker in hit.text for hit in outcome.hits[: config.k]):
            stored.append(session_id)
    return sorted(stored)


#: Out-of-budget hits are kept in the records by their first characters only: the
#: reader never saw the rest, and an adapter returning huge hits must not bloat records.
OUT_OF_BUDGET_TEXT_CHARS = 200


def contract_violations(outcome, k: int) -> list[str]:
    """What a Retrieve reply did against the contract (the runner repairs, then reports)."""
    found = []
    if len(outcome.hits) > k:
        found.append(f"returned {len(outcome.hits)} hits for k={k} (cut to k)")
    if any(not math.isfinite(h.score) for h in outcome.hits):
        found.append("non-finite score (recorded as null)")
    if any(h.timestamp and not _is_time(h.timestamp) for h in outcome.hits):
        found.append("hit timestamp is not RFC 3339 (the reader treats it as oldest)")
    return found


def _is_time(value: str) -> bool:
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _hit_record(h, from_buffer: bool = False, covers: dict[str, tuple[str, ...]] | None = None,
                owned=None) -> dict:
    """One context hit as recorded. ``from_buffer`` and ``covers`` keys appear only when
    they apply (soft and summary gates), so hard-gate records keep their exact shape."""
    text = h.text if h.in_budget else h.text[:OUT_OF_BUDGET_TEXT_CHARS]
    record = {"rank": h.rank, "text": text, "text_chars": len(h.text),
              "score": h.score if math.isfinite(h.score) else None, "source_ids": list(h.source_ids),
              "timestamp": h.timestamp, "tokens": h.tokens, "in_budget": h.in_budget}
    if owned is not None:
        # Carried provenance and the adapter's own time (recorded, not used): runner.audit.
        record.update(carried=list(owned.carried), adapter_timestamp=owned.adapter_timestamp)
    if from_buffer:
        record["from_buffer"] = True
    if covers:
        covered = [mid for sid in h.source_ids for mid in covers.get(sid, ())]
        if covered:
            record["covers"] = list(dict.fromkeys(covered))
    return record


@dataclass(frozen=True)
class BufferHit:
    """One buffered message offered to the reader under ``soft:K`` (shaped like a retrieved hit).

    ``text`` is ``"<author>: <message text>"``; ``source_ids`` the message id alone; ``score`` 0.
    """

    text: str
    score: float
    source_ids: tuple[str, ...]
    timestamp: str


def buffer_hits(buffer, entity: str) -> list[BufferHit]:
    """The buffer's messages ``entity`` may see (shared, or private and its own), newest first.

    ``buffer``: sessions oldest first (the soft gate's deque). Newest first means the
    last message of the newest session first, then back through the stream. Messages
    are not deduplicated against retrieved hits: every system's context gets the same
    buffer (DRIFT §5.2: how much does a short-term buffer help?).
    """
    return [BufferHit(f"{m.author}: {m.text}", 0.0, (m.message_id,), m.timestamp)
            for session in reversed(buffer) for m in reversed(session.messages) if visible_to(m, entity)]


def scope_breaches(hits, entity: str, private_of: dict[str, str],
                   words_of: dict[str, frozenset[str]] | None = None) -> list[dict]:
    """Hits that name or carry a private message of an entity other than ``entity`` (DRIFT §5.3).

    ``hits``: retrieved hits in rank order (rank = 1-based position); with ``words_of``
    (message id -> content words, the runner's ledger) and hits carrying ``words``
    (:class:`conformance.runner.audit.OwnedHit`), citations are not taken on trust: a hit that
    cites a session breaches when its text carries another entity's private message of it, and
    a hit whose text carries nothing it cites (it cites nothing, or a message it does not hold)
    breaches when its text carries another entity's private message (:func:`conformance.provenance.carries`).
    A hit that carries what it cites breaches when the words its carried messages do not hold
    carry half of another entity's private message (:func:`_held_beside`): private text stored
    inside a shared message's item (``bench/attacks/scope_smuggle``); an honest shared message
    that shares words with a private one is not read so, its words being its own. Returns one ``{"rank": r, "private_ids": [...]}`` per breaching
    hit: cited private ids in provenance order, else carried ones. A session id alone is no breach.
    """
    found = []
    foreign = [m for m, owner in private_of.items() if owner != entity] if words_of else []
    for rank, hit in enumerate(hits, start=1):
        others = [sid for sid in dict.fromkeys(hit.source_ids) if private_of.get(sid, entity) != entity]
        carried = getattr(hit, "carried", ())
        if not others:  # a session citation whose text carries the private message
            others = [m for m in carried if private_of.get(m, entity) != entity]
        words = getattr(hit, "words", None)
        if words and not others and not carried:  # cites nothing its text carries: read the text
            others = [m for m in foreign if carries(words, words_of.get(m, frozenset()))]
        elif words and not others:  # carries what it cites: is another's private text stored beside it?
            rest = words.difference(*(words_of.get(m, frozenset()) for m in carried))
            others = [m for m in foreign if _held_beside(rest, words_of.get(m, frozenset()))]
        if others:
            found.append({"rank": rank, "private_ids": others})
    return found


def _held_beside(rest: frozenset[str], message_words: frozenset[str]) -> bool:
    """Whether ``rest`` (a hit's content words that its carried messages do not hold) holds half of a
    message's content words, at least two: the message's text sits in the hit beside what it cites
    (``bench/attacks/scope_smuggle``), where an honest hit's words are its cited message's own."""
    shared = len(rest & message_words)
    return bool(message_words) and shared >= min(MIN_SHARED, len(message_words)) \
        and shared >= MESSAGE_SHARE * len(message_words)


def check_reply(outcome, state: _ScenarioState) -> None:
    """Raise SystemFault("garbage ...") when a Retrieve reply cannot be scored honestly.

    Garbage: a hit whose provenance names no message or session streamed so far in this
    scenario (a memory cannot cite what it was never given: under ``summary:N`` only the
    summary message ids and session ids, never the transcript's), or a hit text over
    :data:`MAX_HIT_CHARS`. Lesser breaches (too many hits, odd scores) are repaired and
    reported as violations instead (:func:`contract_violations`).
    """
    streamed = state.streamed_ids
    for hit in outcome.hits:
        unknown = [sid for sid in hit.source_ids if sid not in state.session_of and sid not in streamed]
        if unknown:
            raise SystemFault("", "", "Retrieve", "contract",
                              f"garbage: provenance ids {unknown[:3]} name no message or session stored so far")
        if len(hit.text) > MAX_HIT_CHARS:
            raise SystemFault("", "", "Retrieve", "contract",
                              f"garbage: a hit of {len(hit.text):,} characters (limit {MAX_HIT_CHARS:,})")


def _failed_probe(system, run: _Scenario, line: CheckpointLine, probe: Probe) -> ProbeRecord:
    """The record of a probe a failed system was not asked (or whose call failed)."""
    return ProbeRecord(system=system.label, scenario_id=run.scenario, repeat=run.repeat,
                       checkpoint_id=line.checkpoint_id, horizon=line.horizon, probe_id=probe.probe_id,
                       query=probe.query, answer=None, closed=bool(probe.options or probe.choices),
                       provenance=system.provenance, hits=[], hits_returned=0, context_tokens=0,
                       read_latency_ms=None, reader_latency_ms=None, last_write_latency_ms=None,
                       usage=None, violations=[], error=run.failed[system.label])


def _answer_probe(system, probe: Probe, line: CheckpointLine, run: _Scenario, config: RunConfig, namespace: str,
                  state: _ScenarioState, seen_hits: dict[str, list], hits_seen: dict[str, int]) -> None:
    """Ask ``system`` one probe of the checkpoint, read its context and write the ``probe`` record
    (an error record when the system has failed); its hits go to ``seen_hits`` for the state audit."""
    writer = run.writer
    if system.label in run.failed:
        writer.write(_failed_probe(system, run, line, probe))
        return

    def ask(s=system):
        outcome = s.retrieve(namespace, probe, config.k)
        check_reply(outcome, state)
        return outcome

    outcome = run.call(system, f"scenario {run.scenario}, probe {probe.probe_id}", "Retrieve", ask)
    if outcome is None:
        writer.write(_failed_probe(system, run, line, probe))
        return
    # Carried provenance and runner-owned time: the reader dates a hit by what it carries.
    retrieved = state.ledger.own(outcome.hits[: config.k], config.budget_tokens, config.encoding)
    seen_hits.setdefault(system.label, []).extend(retrieved)
    hits_seen[system.label] = hits_seen.get(system.label, 0) + len(retrieved)
    started = time.perf_counter()
    # soft:K: the buffer comes after the retrieved hits, so it only fills budget they leave.
    offered = retrieved if state.buffer is None else [*retrieved, *buffer_hits(state.buffer, probe.asked_by)]
    context = build_context(offered, config.budget_tokens, config.encoding)
    answer_call = None
    if config.answerer is None:
        answer = answer_probe(probe, context)
        reader_ms = (time.perf_counter() - started) * 1000.0
    else:
        # An LLM error here (spent budget, rate limit) is no system's fault: it stops
        # the run (the scenario has no scenario_done record, so --resume redoes it).
        answer, answer_call = config.answerer.answer(probe, context, run.repeat)
        reader_ms = answer_call["ttft_ms"]  # DRIFT §7.8: TTFRT counts to the first token
    del offered
    usage, usage_violations = checked_usage(outcome.usage)
    violations = contract_violations(outcome, config.k) + usage_violations
    # Measured, never repaired: leaked hits stay in the context so the privacy score sees them.
    # A breach is a privacy failure (conformance.scoring.privacy), not a contract violation.
    breaches = scope_breaches(retrieved, probe.asked_by, state.private_of, state.ledger.words_of)
    record = ProbeRecord(
        system=system.label, scenario_id=run.scenario, repeat=run.repeat, checkpoint_id=line.checkpoint_id,
        horizon=line.horizon, probe_id=probe.probe_id, query=probe.query, answer=answer,
        provenance=system.provenance,
        # Buffer messages past the budget never reached the reader: not recorded (records stay small).
        hits=[_hit_record(h, h.rank > len(retrieved), state.covers,
                          retrieved[h.rank - 1] if h.rank <= len(retrieved) else None)
              for h in context if h.in_budget or h.rank <= len(retrieved)],
        hits_returned=len(outcome.hits), context_tokens=context_tokens(context),
        read_latency_ms=round(outcome.latency_ms, 3), reader_latency_ms=round(reader_ms, 3),
        last_write_latency_ms=_rounded(state.last_write_ms.get(system.label)),
        usage=usage, violations=violations, error=None,
        # Written only when they apply, so hard-gate hermetic records keep their shape.
        **({"scope_breaches": breaches} if breaches else {}),
        **({"closed": bool(probe.options or probe.choices), "answer_call": answer_call}
           if answer_call is not None else {}))
    writer.write(record)


def _auditable(system, held: dict | None, state: _ScenarioState) -> bool:
    """Whether the state audit probes ``system`` at this checkpoint: one with a Snapshot (not the
    harness-side oracle, which answers gold probes only), or one without, which is marker-probed."""
    if held is None:
        return False
    if held["method"] == "snapshot":
        return system.isolation.get("mode") != "harness"
    return held["method"] is None and bool(state.markers)


def _checkpoint(line: CheckpointLine, run: _Scenario, config: RunConfig, namespace: str,
                state: _ScenarioState) -> None:
    where = f"scenario {run.scenario}, checkpoint {line.checkpoint_id}"
    writer = run.writer
    flushed: dict[str, dict] = {}
    """system -> the state record's ``flush_usage`` (and ``flush_violations``), for a Flush that replied."""
    for system in run.live():
        reply = run.call(system, where, "Flush", lambda s=system: s.flush(namespace, config.flush_timeout_s))
        # A FlushOutcome (ready, usage); an in-harness system may answer a bare bool, spending nothing.
        ready = getattr(reply, "ready", reply)
        if reply is not None:
            usage, violations = checked_usage(getattr(reply, "usage", None))
            flushed[system.label] = {"flush_usage": usage, **({"flush_violations": violations} if violations else {})}
        late = flush_fault(system, ready, config.flush_timeout_s)
        if late:
            run.mark(system, where, "Flush", SystemFault(system.label, where, "Flush", "contract", late), "contract")
    memory, seen_hits = {}, {}
    hits_seen: dict[str, int] = {}
    for system in run.live():
        held = run.call(system, where, "Snapshot",
                        lambda s=system: _memory_state(s, namespace, state, config, where))
        if held is not None:
            memory[system.label] = held
    audited = state.ledger.to_audit(line.checkpoint_id)  # one list for every system
    # The state audit's probes are asked among the real ones, phrased like them, with their askers and
    # times, in a seeded order: an adapter that cannot tell them apart cannot answer them differently.
    schedule = state.ledger.schedule(line.checkpoint_id, line.probes, audited, state.last_time)
    auditable = {s.label for s in run.systems if _auditable(s, memory.get(s.label), state)}
    asked: dict[str, dict[str, list]] = {label: {} for label in auditable}
    for session, probe in schedule:
        if session is None:
            for system in run.systems:
                _answer_probe(system, probe, line, run, config, namespace, state, seen_hits, hits_seen)
            continue
        for system in run.live():
            if system.label in auditable:
                outcome = run.call(system, where, "Retrieve (state audit)",
                                   lambda s=system, p=probe: s.retrieve(namespace, p, config.k))
                if outcome is not None:
                    asked[system.label][session] = state.ledger.own(outcome.hits[: config.k], config.budget_tokens,
                                                                    config.encoding)
    for system in run.systems:
        base = {"system": system.label, "scenario_id": run.scenario, "repeat": run.repeat,
                "checkpoint_id": line.checkpoint_id, "horizon": line.horizon,
                "after_session": line.after_session, "sessions_streamed": len(state.streamed),
                **flushed.get(system.label, {})}
        held = memory.get(system.label)
        if held is not None and held["method"] is None and state.markers and system.label not in run.failed:
            stored = run.call(system, where, "Retrieve (marker probes)",
                              lambda s=system: _marker_probe(s, namespace, state, config, where, run), retry=False)
            held = None if stored is None else {**held, "method": "marker_probe", "stored_sessions": stored}
            memory[system.label] = held
        items = held.pop("_items", None) if held is not None else None
        if held is not None and system.label in auditable and system.label not in run.failed:
            marker_held = held["stored_sessions"] if held["method"] == "marker_probe" else None
            audit = audit_checkpoint(system.label, state.ledger, items or [], seen_hits.get(system.label, []),
                                     asked[system.label], marker_held)
            held = {**held, "audit": audit}
            if marker_held is not None:
                # No Snapshot: markers can be recognised, so they alone never decide. A session whose
                # disguised probe brings its content back is stored whatever its marker did (and, the
                # marker withheld, a finding: the system is then scored on the audit's probes alone).
                held["stored_sessions"] = sorted(set(marker_held) | set(audit["found"]))
        if held is None or system.label in run.failed:
            writer.write(StateRecord(**base, method=None, storage_tokens=None, items=None, stored_sessions=None,
                                     error=run.failed.get(system.label, "no memory state")))
            continue
        writer.write(StateRecord(**base, **held, error=None))
    # After the state records: a memory without Snapshot has been marker-probed by now.
    for system in run.live():
        held = memory.get(system.label) or {}
        checked = _RetrievedOneByOne(run, system, where, "Retrieve (findability check)")
        found = run.call(system, where, "Retrieve (findability check)", lambda c=checked, h=held: findability_fault(
            c, namespace, state.claimed.get(c.label, 0), h, hits_seen.get(c.label, 0), len(line.probes),
            state.markers, state.streamed, state.asker_of, state.last_time, config.k,
            f"{run.scenario}/{line.checkpoint_id}"), retry=False)
        if found:
            run.mark(system, where, "Store/Retrieve (findability check)",
                     SystemFault(system.label, where, "findability", "contract", found), "contract")


def _rounded(ms: float | None) -> float | None:
    return None if ms is None else round(ms, 3)


@dataclass
class RunSummary:
    scenarios: list[str] = field(default_factory=list)
    records_path: Path | None = None
    faults: FaultLog = field(default_factory=FaultLog)


def run_corpus(fixtures: list[Path], systems: list, records_path: Path, config: RunConfig, namespace_prefix: str,
               progress: Progress = Progress(), repeats: int = 1, concurrency: int = 1,
               done: frozenset[tuple[str, int]] = frozenset(), header: RunHeader | None = None,
               gate: BudgetGate = HARD, fresh_process: bool = False) -> RunSummary:
    """Run every fixture, ``repeats`` times; records go to ``records_path`` (appended).

    Each repeat streams the whole corpus again into fresh namespaces
    (``<prefix>/r<repeat>/<scenario>``) so a second pass measures the noise floor.
    ``concurrency`` scenarios stream at once against the same systems (separate
    namespaces; DRIFT §7.8's load). ``done``: (scenario id, repeat) pairs already on
    disk (``--resume``), skipped. ``header``: a ``run`` record written first.
    ``gate``: the budget gate variant (DRIFT §5.2), see :func:`run_scenario`.
    A failing system does not stop the run: faults are in ``summary.faults``.
    ``fresh_process``: every adapter the runner started gets a new process before each
    scenario pass but the first (:func:`restart_systems`); needs ``concurrency`` 1.
    """
    if fresh_process and concurrency > 1:
        raise RunError(f"--fresh-process starts a new adapter process per scenario, which {concurrency} concurrent "
                       "scenarios cannot share: use --concurrency 1 or --no-fresh-process")
    writer = RecordWriter(records_path)
    summary = RunSummary(records_path=records_path, scenarios=[p.stem for p in fixtures])
    # A restarted adapter lives as long as the thread that restarts it: the caller's, only when serial.
    summary.faults.restarts_allowed = concurrency <= 1
    todo = [(repeat, path) for repeat in range(1, repeats + 1) for path in fixtures if (path.stem, repeat) not in done]

    def one(unit: tuple[int, Path]) -> None:
        repeat, path = unit
        if fresh_process and unit is not todo[0]:
            restart_systems(systems, summary.faults, writer, path.stem, repeat)
        prefix = namespace_prefix if repeat == 1 else f"{namespace_prefix}/r{repeat}"
        run_scenario(path, systems, writer, config, prefix, progress, repeat, summary.faults, gate)

    try:
        if header is not None:
            writer.write(header)
            writer.sync()
        if concurrency <= 1:
            for unit in todo:
                one(unit)
        else:
            with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="scenario") as pool:
                for future in [pool.submit(one, unit) for unit in todo]:
                    future.result()
    finally:
        writer.close()
    return summary


def restart_systems(systems: list, faults: FaultLog, writer: RecordWriter, scenario: str, repeat: int) -> int:
    """Give every restartable system a new process before ``scenario`` (``--fresh-process``);
    returns how many were restarted. One that does not come back is recorded as dead (a
    ``fault`` record), and is not called again; the others go on."""
    restarted, where = 0, f"scenario {scenario}"
    for system in systems:
        restart = getattr(system, "restart", None)
        if restart is None or system.label in faults.dead:
            continue
        try:
            restarted += bool(restart())
        except Exception as exc:  # noqa: BLE001 - one adapter that does not come back is its own fault
            fault = SystemFault(system.label, where, "restart (--fresh-process)", "infrastructure", str(exc))
            faults.add(fault, died=str(fault))
            writer.write(FaultRecord(system=system.label, scenario_id=scenario, repeat=repeat, where=where,
                                     call=fault.call, category=fault.category, error=str(fault)))
    return restarted

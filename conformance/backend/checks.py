"""The contract checks an adapter must pass before its scores mean anything.

``drift-conformance check-adapter NAME`` runs them (conformance/cli/check_adapter.py).
Each check is a plain function over a :class:`Harness`, which wraps a *target*: anything
with the ``MemoryBackend`` calls (:class:`ClientTarget` for an adapter behind gRPC, as the
runner starts it; :class:`InProcessTarget` for a ``drift_sdk.Backend`` object in this very
process, which is how the checks are unit-tested and how an adapter author can try a
backend without a server). A failed call surfaces as
:class:`~conformance.backend.client.BackendCallError` with its gRPC status code.

Every check stores *synthetic* sessions: made-up words (``brakutel``, ``zoumivax``...), two
per message, that appear in no other message, so a query of a message's made-up words has
exactly one right answer and a leak is recognisable by text as well as by id. Each check
uses its own fresh namespaces (under one random run prefix) and resets them when done.

Results are ``PASS``, ``FAIL`` or ``SKIP``, each with a one-line detail. A check skips on its
own only when the capability it tests is not claimed; any other skip needs a written reason
in ``adapter.yaml`` (``check_skips``), and then the check is not run at all.
"""

from __future__ import annotations

import random
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Literal, Protocol

import grpc

from conformance.backend.client import USAGE_FIELDS, BackendCallError, BackendClient, Deadlines, usage_dict
from conformance.backend.manifest import CHECK_NAMES
from drift_sdk.types import Hit, MemoryItem, Message, RetrieveResult, Session
from drift_sdk.v1 import memory_backend_pb2 as pb

Result = Literal["PASS", "FAIL", "SKIP"]

#: Hits asked per probe, as the runner asks (RunConfig.k).
RUNNER_K = 10
#: The client deadline of the "very short deadline" Retrieve, seconds.
SHORT_DEADLINE_S = 0.001
#: How long that Retrieve may take before it counts as hanging, seconds.
HANG_AFTER_S = 5.0
#: gRPC codes that mean the adapter did not answer (a crash, a dead process, a hang).
_NOT_AN_ANSWER = ("UNAVAILABLE", "CANCELLED", "DEADLINE_EXCEEDED")


@dataclass(frozen=True)
class CheckResult:
    name: str
    result: Result
    detail: str

    def as_dict(self) -> dict[str, str]:
        return {"check": self.name, "result": self.result, "detail": self.detail}


# ---------------------------------------------------------------------------------------
# Targets: the calls, over gRPC or in process
# ---------------------------------------------------------------------------------------


class Target(Protocol):
    """The ``MemoryBackend`` calls a check makes. Failures raise ``BackendCallError``."""

    label: str
    deadlines: Deadlines

    def describe(self) -> dict: ...
    """``{"name", "version", "capabilities": {flag: bool} or None}``."""

    def reset(self, namespace: str) -> None: ...

    def store(self, namespace: str, session: Session) -> int: ...
    """Items stored."""

    def flush(self, namespace: str, timeout_s: float) -> bool: ...
    """Ready."""

    def retrieve(self, namespace: str, query: str, k: int, querying_entity: str, now: str,
                 timeout_s: float | None = None) -> list[Hit]: ...
    """``timeout_s`` overrides the Retrieve deadline for this one call."""

    def snapshot(self, namespace: str) -> list[MemoryItem]: ...

    def forget(self, namespace: str, source_ids: list[str]) -> int: ...

    def died(self) -> str | None: ...
    """When the adapter has died: how (exit code, last words); else None."""


class ClientTarget:
    """An adapter behind gRPC, through the runner's own :class:`BackendClient`."""

    def __init__(self, client: BackendClient, label: str | None = None,
                 died: Callable[[], str | None] | None = None):
        self.client, self.label, self._died = client, label or client.adapter, died
        self.deadlines = client.deadlines
        self.usages: list[tuple[str, dict]] = []
        """(call, its reply's usage) of every Store, Flush and Retrieve, in call order."""

    def describe(self) -> dict:
        reply = self.client.describe()
        caps = None
        if reply.HasField("capabilities"):
            c = reply.capabilities
            caps = {f.name: bool(getattr(c, f.name)) for f in pb.Capabilities.DESCRIPTOR.fields}
        return {"name": reply.name, "version": reply.version, "capabilities": caps,
                "internal_models": list(reply.internal_models), "settings": dict(reply.settings)}

    def reset(self, namespace: str) -> None:
        self.client.reset(namespace)

    def store(self, namespace: str, session: Session) -> int:
        reply, _ = self.client.store(namespace, session)
        self.usages.append(("Store", usage_dict(reply.usage)))
        return reply.items_stored

    def flush(self, namespace: str, timeout_s: float) -> bool:
        reply = self.client.flush(namespace, timeout_s)
        self.usages.append(("Flush", usage_dict(reply.usage)))
        return reply.ready

    def retrieve(self, namespace, query, k, querying_entity, now, timeout_s=None) -> list[Hit]:
        request = pb.RetrieveRequest(namespace=namespace, query=query, k=k, querying_entity=querying_entity, now=now)
        timeout = self.deadlines.retrieve if timeout_s is None else timeout_s
        try:
            reply = self.client.stub.Retrieve(request, timeout=timeout)
        except grpc.RpcError as exc:
            raise BackendCallError(self.label, "Retrieve", exc.code(), exc.details() or "") from None
        self.usages.append(("Retrieve", usage_dict(reply.usage)))
        return [Hit(h.text, h.score, tuple(h.source_ids), h.timestamp) for h in reply.hits]

    def snapshot(self, namespace: str) -> list[MemoryItem]:
        return [MemoryItem(i.item_id, i.text, tuple(i.source_ids), i.timestamp)
                for i in self.client.snapshot(namespace)]

    def forget(self, namespace: str, source_ids: list[str]) -> int:
        return self.client.forget(namespace, source_ids)

    def died(self) -> str | None:
        return self._died() if self._died else None


class InProcessTarget:
    """A ``drift_sdk.Backend`` object called directly, with the SDK server's error mapping.

    ``ValueError`` → INVALID_ARGUMENT, ``NotImplementedError`` → UNIMPLEMENTED,
    ``TimeoutError`` → DEADLINE_EXCEEDED, any other exception → INTERNAL; a ``BackendCallError``
    raised by the backend is passed on as it is (its own code and message). Each call runs
    in a daemon thread bounded by its deadline (DEADLINE_EXCEEDED when it runs over, as a
    gRPC client would say). ``SystemExit`` from the backend plays a crashed process: that
    call and every later one fail with UNAVAILABLE. Unlike the SDK server, Retrieve does not
    cut the hits to ``k``: an adapter written against the proto need not either.
    """

    def __init__(self, backend, deadlines: Deadlines = Deadlines(), label: str | None = None):
        self.backend, self.deadlines = backend, deadlines
        self.label = label or getattr(backend, "name", "in-process")
        self.exit_code: int | None = None
        self.usages: list[tuple[str, dict]] = []
        """(call, its result's usage fields as given) of every Store and Retrieve, in call order."""

    def _usage(self, call: str, result) -> None:
        usage = getattr(result, "usage", None)
        self.usages.append((call, {name: getattr(usage, name, 0) for name in USAGE_FIELDS}))

    def _call(self, name: str, timeout: float, fn, *args):
        if self.exit_code is not None:
            raise BackendCallError(self.label, name, grpc.StatusCode.UNAVAILABLE, "adapter process is gone")
        box: dict = {}

        def run():
            try:
                box["value"] = fn(*args)
            except BaseException as exc:  # noqa: BLE001 - mapped to a status code below
                box["error"] = exc

        worker = threading.Thread(target=run, name=f"check-{name}", daemon=True)
        worker.start()
        worker.join(timeout)
        if worker.is_alive():
            raise BackendCallError(self.label, name, grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded")
        exc = box.get("error")
        if exc is None:
            return box.get("value")
        if isinstance(exc, BackendCallError):  # the backend chose its own status (code and message)
            raise exc
        prefix = f"{self.label}: {name}"
        if isinstance(exc, SystemExit):
            self.exit_code = exc.code if isinstance(exc.code, int) else 1
            raise BackendCallError(self.label, name, grpc.StatusCode.UNAVAILABLE, "Socket closed")
        if isinstance(exc, NotImplementedError):
            raise BackendCallError(self.label, name, grpc.StatusCode.UNIMPLEMENTED,
                                   f"{prefix} is not implemented ({exc})")
        if isinstance(exc, ValueError):
            raise BackendCallError(self.label, name, grpc.StatusCode.INVALID_ARGUMENT, f"{prefix}: {exc}")
        if isinstance(exc, TimeoutError):
            raise BackendCallError(self.label, name, grpc.StatusCode.DEADLINE_EXCEEDED, f"{prefix} timed out: {exc}")
        if isinstance(exc, Exception):
            raise BackendCallError(self.label, name, grpc.StatusCode.INTERNAL,
                                   f"{prefix} failed: {type(exc).__name__}: {exc}")
        raise exc

    def describe(self) -> dict:
        b = self.backend

        def describe():
            caps = getattr(b, "capabilities", None)
            return {"name": b.name, "version": b.version, "capabilities": asdict(caps) if caps is not None else None,
                    "internal_models": list(getattr(b, "internal_models", ())), "settings": dict(b.settings())}

        return self._call("Describe", self.deadlines.describe, describe)

    def reset(self, namespace: str) -> None:
        self._call("Reset", self.deadlines.reset, self.backend.reset, namespace)

    def store(self, namespace: str, session: Session) -> int:
        result = self._call("Store", self.deadlines.store, self.backend.store, namespace, session)
        self._usage("Store", result)
        return int(getattr(result, "items_stored", 0) or 0)

    def flush(self, namespace: str, timeout_s: float) -> bool:
        result = self._call("Flush", timeout_s + self.deadlines.flush_extra, self.backend.flush, namespace, timeout_s)
        # A FlushResult is always truthy: its readiness is its ``ready``, as the server reads it.
        self._usage("Flush", result)
        return bool(getattr(result, "ready", result))

    def retrieve(self, namespace, query, k, querying_entity, now, timeout_s=None) -> list[Hit]:
        if k <= 0:
            raise BackendCallError(self.label, "Retrieve", grpc.StatusCode.INVALID_ARGUMENT,
                                   f"k must be positive, got {k}")
        timeout = self.deadlines.retrieve if timeout_s is None else timeout_s
        result = self._call("Retrieve", timeout, self.backend.retrieve, namespace, query, k, querying_entity, now)
        self._usage("Retrieve", result)
        hits = result.hits if isinstance(result, RetrieveResult) else list(result)
        return [Hit(h.text, float(h.score), tuple(h.source_ids), h.timestamp) for h in hits]

    def snapshot(self, namespace: str) -> list[MemoryItem]:
        return self._call("Snapshot", self.deadlines.snapshot, lambda: list(self.backend.snapshot(namespace)))

    def forget(self, namespace: str, source_ids: list[str]) -> int:
        return int(self._call("Forget", self.deadlines.forget, self.backend.forget, namespace, list(source_ids)) or 0)

    def died(self) -> str | None:
        return None if self.exit_code is None else f"adapter {self.label} exited with code {self.exit_code}"


# ---------------------------------------------------------------------------------------
# The synthetic corpus
# ---------------------------------------------------------------------------------------

_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "gl", "kr", "pl",
           "tr", "sk", "zh", "qu", "vl")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou", "ei")
_CODAS = ("n", "r", "x", "l", "sk", "m", "th", "v")
_TEMPLATES = (
    "I left the {a} next to the {b} in the archive room.",
    "Remember that the {a} needs the {b} before the archive audit on Friday.",
    "We moved the {a} and the {b} to the archive shelf yesterday.",
    "My note says the {a} was swapped for the {b} during the archive cleanup.",
)
_AUTHORS = (("alice", "user"), ("bob", "assistant"))
#: Simulated time of every Retrieve: after the last synthetic session.
NOW = "2026-02-01T12:00:00Z"
#: Queries that match many messages (for k, determinism and provenance).
GENERIC_QUERIES = ("archive", "what was left in the archive room", "archive shelf audit cleanup")


def made_up_words(seed: str, count: int) -> list[str]:
    """``count`` distinct pronounceable non-words of three syllables, the same for the same seed."""
    rng = random.Random(seed)
    words: list[str] = []
    while len(words) < count:
        word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(3)) + rng.choice(_CODAS)
        if word not in words:
            words.append(word)
    return words


@dataclass(frozen=True)
class SyntheticMessage:
    session_id: str
    message_id: str
    words: tuple[str, ...]
    """The made-up words said in this message and nowhere else."""

    @property
    def query(self) -> str:
        return " ".join(self.words)


@dataclass(frozen=True)
class Corpus:
    sessions: tuple[Session, ...]
    messages: tuple[SyntheticMessage, ...]

    @property
    def ids(self) -> frozenset[str]:
        """Every message id and session id (what provenance may cite)."""
        return frozenset({m.message_id for m in self.messages} | {m.session_id for m in self.messages})


def synthetic_corpus(tag: str, sessions: int = 4, per_session: int = 3) -> Corpus:
    """A few sessions of ``per_session`` messages, two made-up words per message.

    Ids are ``<tag>-s<i>`` and ``<tag>-s<i>-m<j>``; the same tag gives the same corpus.
    """
    words = made_up_words(f"drift-check-{tag}", 2 * sessions * per_session)
    out_sessions, out_messages = [], []
    for i in range(sessions):
        session_id = f"{tag}-s{i}"
        time_s = f"2026-01-{5 + i:02d}T09:00:00Z"
        messages = []
        for j in range(per_session):
            n = i * per_session + j
            a, b = words[2 * n], words[2 * n + 1]
            author, role = _AUTHORS[j % 2]
            text = _TEMPLATES[n % len(_TEMPLATES)].format(a=a, b=b)
            message_id = f"{session_id}-m{j}"
            messages.append(Message(message_id=message_id, author=author, role=role, text=text,
                                    timestamp=f"2026-01-{5 + i:02d}T09:{j:02d}:00Z", scope="shared"))
            out_messages.append(SyntheticMessage(session_id, message_id, (a, b)))
        out_sessions.append(Session(session_id=session_id, index=i, time=time_s,
                                    participants=tuple(a for a, _ in _AUTHORS), messages=tuple(messages)))
    return Corpus(tuple(out_sessions), tuple(out_messages))


def mentions(hit: Hit | MemoryItem, message: SyntheticMessage) -> bool:
    """The hit's text says one of the message's made-up words (as a whole word)."""
    text = hit.text.casefold()
    return any(re.search(rf"\b{re.escape(w)}\b", text) for w in message.words)


def cites(hit: Hit, message: SyntheticMessage) -> bool:
    """Provenance points at the message: its id, or its session's id on a hit that says its words."""
    return message.message_id in hit.source_ids or (message.session_id in hit.source_ids and mentions(hit, message))


def derived_from(hit: Hit, message: SyntheticMessage) -> bool:
    """Anything of the message in the hit: its id, its session's id, or its words."""
    return (message.message_id in hit.source_ids or message.session_id in hit.source_ids) or mentions(hit, message)


# ---------------------------------------------------------------------------------------
# The harness: timed calls and what Describe claimed
# ---------------------------------------------------------------------------------------


@dataclass
class CallRecord:
    kind: str
    seconds: float
    deadline_s: float
    code: str | None
    """gRPC status name when the call failed."""
    probe: bool = False
    """The deliberately short-deadline Retrieve (not judged against the runner's deadlines)."""


@dataclass
class Harness:
    """One target, timed call by call, with fresh namespaces per check."""

    target: Target
    flush_timeout_s: float = 120.0
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:10])
    calls: list[CallRecord] = field(default_factory=list)
    _description: dict | None = None

    # -- bookkeeping --

    @property
    def deadlines(self) -> Deadlines:
        return self.target.deadlines

    def namespace(self, check: str, part: str = "a") -> str:
        return f"drift-check-{self.run_id}/{check}/{part}"

    def _timed(self, kind: str, deadline_s: float, fn, *args, probe: bool = False):
        started = time.perf_counter()
        code = None
        try:
            return fn(*args)
        except BackendCallError as exc:
            code = exc.code.name if exc.code else "UNKNOWN"
            raise
        finally:
            self.calls.append(CallRecord(kind, time.perf_counter() - started, deadline_s, code, probe))

    @property
    def description(self) -> dict:
        if self._description is None:
            self._description = self.describe()
        return self._description

    @property
    def caps(self) -> dict[str, bool]:
        return dict(self.description.get("capabilities") or {})

    def claims(self, capability: str) -> bool:
        return bool(self.caps.get(capability, False))

    # -- calls --

    def describe(self) -> dict:
        return self._timed("Describe", self.deadlines.describe, self.target.describe)

    def reset(self, namespace: str) -> None:
        self._timed("Reset", self.deadlines.reset, self.target.reset, namespace)

    def store(self, namespace: str, session: Session) -> int:
        return self._timed("Store", self.deadlines.store, self.target.store, namespace, session)

    def flush(self, namespace: str) -> bool:
        return self._timed("Flush", self.flush_timeout_s + self.deadlines.flush_extra, self.target.flush, namespace,
                           self.flush_timeout_s)

    def retrieve(self, namespace: str, query: str, k: int = RUNNER_K, now: str = NOW,
                 querying_entity: str = "alice") -> list[Hit]:
        return self._timed("Retrieve", self.deadlines.retrieve, self.target.retrieve, namespace, query, k,
                           querying_entity, now)

    def retrieve_with_deadline(self, namespace: str, query: str, timeout_s: float) -> list[Hit]:
        return self._timed("Retrieve", timeout_s, self.target.retrieve, namespace, query, RUNNER_K, "alice", NOW,
                           timeout_s, probe=True)

    def snapshot(self, namespace: str) -> list[MemoryItem]:
        return self._timed("Snapshot", self.deadlines.snapshot, self.target.snapshot, namespace)

    def forget(self, namespace: str, source_ids: list[str]) -> int:
        return self._timed("Forget", self.deadlines.forget, self.target.forget, namespace, source_ids)

    def load(self, namespace: str, corpus: Corpus) -> tuple[int, bool]:
        """Reset, store every session, flush: ``(items stored, flush said ready)``."""
        self.reset(namespace)
        stored = sum(self.store(namespace, s) for s in corpus.sessions)
        return stored, self.flush(namespace)

    def died(self, wait_s: float = 0.0) -> str | None:
        """How the adapter died, waiting up to ``wait_s`` for a dying process to be gone."""
        deadline = time.monotonic() + wait_s
        while True:
            report = self.target.died()
            if report or time.monotonic() >= deadline:
                return report
            time.sleep(0.05)

    def cleanup(self, *namespaces: str) -> None:
        """Empty the namespaces a check used (best effort: a failure here is not the check's)."""
        for namespace in namespaces:
            try:
                self.target.reset(namespace)
            except BackendCallError:
                pass


# ---------------------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------------------


def _one_line(text: str, limit: int = 400) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _ids(items: Iterable[str], limit: int = 4) -> str:
    items = list(items)
    shown = ", ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


def _call_failed(h: Harness, exc: BackendCallError) -> str:
    code = exc.code.name if exc.code else "ERROR"
    detail = f"{exc.call} failed with {code}: {exc.details or '(no message)'}"
    died = h.died(2.0 if code == "UNAVAILABLE" else 0.0)
    return detail + (f" [{_death(died)}]" if died else "")


def _death(report: str) -> str:
    """The first clause of a launcher's exit report ("adapter X exited with code N")."""
    return report.splitlines()[0].split("; last lines", 1)[0]


def _pass(name: str, detail: str) -> CheckResult:
    return CheckResult(name, "PASS", _one_line(detail))


def _fail(name: str, detail: str) -> CheckResult:
    return CheckResult(name, "FAIL", _one_line(detail))


def _skip(name: str, detail: str) -> CheckResult:
    return CheckResult(name, "SKIP", _one_line(detail))


def _check(name: str):
    """Register a check; a call that fails unexpectedly fails the check with its status."""

    def wrap(fn: Callable[[Harness], CheckResult]):
        def run(h: Harness) -> CheckResult:
            try:
                return fn(h)
            except BackendCallError as exc:
                return _fail(name, _call_failed(h, exc))

        run.__name__, run.__doc__, run.check_name = fn.__name__, fn.__doc__, name
        CHECKS[name] = run
        return run

    return wrap


CHECKS: dict[str, Callable[[Harness], CheckResult]] = {}


def _found_by(h: Harness) -> tuple[Callable[[Hit, SyntheticMessage], bool], str]:
    if h.claims("provenance"):
        return cites, "by provenance id"
    return mentions, "by text (no provenance claimed)"


@_check("describe")
def check_describe(h: Harness) -> CheckResult:
    """Describe answers with a name, a version and capabilities."""
    d = h.describe()
    h._description = d
    missing = [what for what in ("name", "version") if not str(d.get(what) or "").strip()]
    if d.get("capabilities") is None:
        missing.append("capabilities")
    if missing:
        return _fail("describe", f"Describe answered without {', '.join(missing)}")
    claimed = [flag for flag, on in d["capabilities"].items() if on] or ["none"]
    return _pass("describe", f"{d['name']} {d['version']}; claims {', '.join(claimed)}")


@_check("reset_isolates")
def check_reset_isolates(h: Harness) -> CheckResult:
    """Data stored in namespace A is never returned from B (nor B's from A); Reset of A empties A
    and leaves B alone."""
    ns_a, ns_b = h.namespace("reset_isolates", "a"), h.namespace("reset_isolates", "b")
    first, second = synthetic_corpus("ria"), synthetic_corpus("rib")
    try:
        h.reset(ns_a)
        h.reset(ns_b)
        for s in first.sessions:
            h.store(ns_a, s)
        for s in second.sessions:
            h.store(ns_b, s)
        h.flush(ns_a)
        h.flush(ns_b)
        found, by = _found_by(h)
        leaks: list[str] = []
        for msg in first.messages:
            if any(derived_from(hit, msg) for hit in h.retrieve(ns_b, msg.query)):
                leaks.append(f"{msg.message_id} (A) from B")
        for msg in second.messages:
            if any(derived_from(hit, msg) for hit in h.retrieve(ns_a, msg.query)):
                leaks.append(f"{msg.message_id} (B) from A")
        for query in GENERIC_QUERIES:
            for hit in h.retrieve(ns_b, query):
                if any(derived_from(hit, msg) for msg in first.messages):
                    leaks.append(f"A's data from B for {query!r}")
                    break
        if leaks:
            return _fail("reset_isolates", f"namespaces leak: {_ids(leaks, 3)}")
        own_a = sum(any(found(hit, m) for hit in h.retrieve(ns_a, m.query)) for m in first.messages)
        own_b = sum(any(found(hit, m) for hit in h.retrieve(ns_b, m.query)) for m in second.messages)
        h.reset(ns_a)
        h.flush(ns_a)
        left = [m.message_id for m in first.messages if any(derived_from(hit, m) for hit in h.retrieve(ns_a, m.query))]
        for query in GENERIC_QUERIES:
            if h.retrieve(ns_a, query):
                left.append(f"a hit for {query!r}")
        if h.claims("snapshot"):
            try:
                items = h.snapshot(ns_a)
            except BackendCallError:
                items = []  # a failing Snapshot is capabilities_truthful's finding, not this one's
            if items:
                left.append(f"{len(items)} Snapshot items")
        if left:
            return _fail("reset_isolates", f"Reset of A left data in A: {_ids(left, 3)}")
        after_b = sum(any(found(hit, m) for hit in h.retrieve(ns_b, m.query)) for m in second.messages)
        if after_b < own_b:
            return _fail("reset_isolates", f"Reset of A also emptied B: B found {own_b} of its messages before, "
                                           f"{after_b} after")
        note = "" if own_a else " (A never returned its own data, so isolation was only seen empty)"
        return _pass("reset_isolates", f"no leak between A and B ({own_a}/{len(first.messages)} and "
                                       f"{own_b}/{len(second.messages)} found at home {by}); Reset of A emptied A "
                                       f"and kept B{note}")
    finally:
        h.cleanup(ns_a, ns_b)


@_check("flush_then_found")
def check_flush_then_found(h: Harness) -> CheckResult:
    """After Store and Flush, a Retrieve of each message's made-up words finds that message."""
    ns = h.namespace("flush_then_found")
    corpus = synthetic_corpus("ftf")
    try:
        stored, ready = h.load(ns, corpus)
        found, by = _found_by(h)
        missing = [m.message_id for m in corpus.messages if not any(found(hit, m) for hit in h.retrieve(ns, m.query))]
        n = len(corpus.messages)
        if missing:
            hint = "; Store reported 0 items stored" if stored == 0 else ""
            ready_note = "" if ready else "; Flush said not ready"
            return _fail("flush_then_found", f"{len(missing)}/{n} stored messages not found {by} at k={RUNNER_K}: "
                                             f"{_ids(missing)}{hint}{ready_note}")
        return _pass("flush_then_found", f"{n}/{n} messages of {len(corpus.sessions)} sessions found {by} "
                                         f"at k={RUNNER_K} after Flush")
    finally:
        h.cleanup(ns)


@_check("provenance_ids")
def check_provenance_ids(h: Harness) -> CheckResult:
    """Every source id on every hit is a message id or session id stored in that namespace."""
    if not h.claims("provenance"):
        return _skip("provenance_ids", "Describe does not claim provenance: hits are matched by text")
    ns = h.namespace("provenance_ids")
    corpus = synthetic_corpus("pid")
    known = corpus.ids
    try:
        h.load(ns, corpus)
        hits = checked = 0
        bogus: list[str] = []
        bare = 0
        for query in [m.query for m in corpus.messages] + list(GENERIC_QUERIES):
            for hit in h.retrieve(ns, query):
                hits += 1
                if not hit.source_ids:
                    bare += 1
                for sid in hit.source_ids:
                    checked += 1
                    if sid not in known and sid not in bogus:
                        bogus.append(sid)
        if bogus:
            return _fail("provenance_ids", f"hits cite ids never stored in the namespace: {_ids(bogus)}")
        if bare:
            return _fail("provenance_ids", f"{bare} of {hits} hits carry no source id although provenance is claimed")
        if not hits:
            return _pass("provenance_ids", "no hits to check (nothing was returned)")
        return _pass("provenance_ids", f"{checked} source ids on {hits} hits, all stored message or session ids")
    finally:
        h.cleanup(ns)


@_check("k_honoured")
def check_k_honoured(h: Harness) -> CheckResult:
    """Retrieve with k=1 and k=3 returns at most k hits."""
    ns = h.namespace("k_honoured")
    corpus = synthetic_corpus("kho")
    try:
        h.load(ns, corpus)
        over: list[str] = []
        seen: dict[int, int] = {1: 0, 3: 0}
        for k in (1, 3):
            for query in list(GENERIC_QUERIES) + [corpus.messages[0].query]:
                n = len(h.retrieve(ns, query, k=k))
                seen[k] = max(seen[k], n)
                if n > k:
                    over.append(f"k={k} gave {n} hits for {query!r}")
        if over:
            return _fail("k_honoured", "; ".join(over[:3]))
        return _pass("k_honoured", f"at most k hits (most seen: {seen[1]} at k=1, {seen[3]} at k=3)")
    finally:
        h.cleanup(ns)


@_check("deadlines")
def check_deadlines(h: Harness) -> CheckResult:
    """Every call so far answered within the runner's deadline for its kind; a Retrieve with a
    1 ms client deadline surfaces DEADLINE_EXCEEDED or succeeds, and never hangs."""
    ns = h.namespace("deadlines")
    corpus = synthetic_corpus("ddl")
    try:
        # A round of every call kind of its own, so the check stands alone too.
        h.describe()
        h.load(ns, corpus)
        for m in corpus.messages[:3]:
            h.retrieve(ns, m.query)
        for optional, call in (("snapshot", lambda: h.snapshot(ns)),
                               ("forget", lambda: h.forget(ns, [corpus.messages[0].message_id]))):
            if h.claims(optional):
                try:
                    call()
                except BackendCallError:
                    pass  # judged by capabilities_truthful; only its time counts here
        slowest: dict[str, CallRecord] = {}
        late: list[str] = []
        for rec in h.calls:
            if rec.probe:
                continue
            if rec.code == "DEADLINE_EXCEEDED" or rec.seconds > rec.deadline_s:
                late.append(f"{rec.kind} took {rec.seconds:.2f} s (deadline {rec.deadline_s:g} s)")
            if rec.kind not in slowest or rec.seconds > slowest[rec.kind].seconds:
                slowest[rec.kind] = rec
        started = time.perf_counter()
        try:
            h.retrieve_with_deadline(ns, corpus.messages[0].query, SHORT_DEADLINE_S)
            outcome = "succeeded"
        except BackendCallError as exc:
            code = exc.code.name if exc.code else "ERROR"
            outcome = code
            if code != "DEADLINE_EXCEEDED":
                late.append(f"a Retrieve with a {SHORT_DEADLINE_S * 1000:g} ms deadline failed with {code} "
                            f"instead of DEADLINE_EXCEEDED: {exc.details}")
        waited = time.perf_counter() - started
        if waited > HANG_AFTER_S:
            late.append(f"a Retrieve with a {SHORT_DEADLINE_S * 1000:g} ms deadline hung for {waited:.1f} s")
        if late:
            return _fail("deadlines", f"{len(late)} over: {'; '.join(late[:3])}")
        worst = ", ".join(f"{k} {r.seconds * 1000:.0f} ms/{r.deadline_s:g} s" for k, r in slowest.items())
        return _pass("deadlines", f"slowest per call (of its deadline): {worst}; {SHORT_DEADLINE_S * 1000:g} ms "
                                  f"Retrieve: {outcome} in {waited * 1000:.0f} ms")
    finally:
        h.cleanup(ns)


def _expect_unimplemented(h: Harness, what: str, call) -> str | None:
    try:
        call()
    except BackendCallError as exc:
        if exc.code is grpc.StatusCode.UNIMPLEMENTED:
            return None
        return f"{what} is not claimed and failed with {exc.code.name if exc.code else 'ERROR'}, not UNIMPLEMENTED"
    return f"{what} is not claimed but answered: claim it, or return UNIMPLEMENTED"


@_check("capabilities_truthful")
def check_capabilities_truthful(h: Harness) -> CheckResult:
    """A claimed Snapshot works and cites stored ids; a claimed Forget removes what it says; a
    claimed flush_signal makes Flush say ready; unclaimed Snapshot and Forget are UNIMPLEMENTED."""
    ns = h.namespace("capabilities_truthful")
    corpus = synthetic_corpus("cap")
    known = corpus.ids
    problems: list[str] = []
    done: list[str] = []
    found, _ = _found_by(h)
    try:
        stored, ready = h.load(ns, corpus)
        if h.claims("flush_signal"):
            if not ready:
                problems.append("flush_signal is claimed but Flush said not ready")
            else:
                done.append("Flush ready")
        items = None
        if h.claims("snapshot"):
            try:
                items = h.snapshot(ns)
            except BackendCallError as exc:
                problems.append(f"snapshot is claimed but {_call_failed(h, exc)}")
            if items is not None:
                bogus = sorted({sid for i in items for sid in i.source_ids if sid not in known})
                bare = sum(1 for i in items if not i.source_ids)
                if bogus:
                    problems.append(f"Snapshot items cite ids never stored: {_ids(bogus)}")
                elif bare and h.claims("provenance"):
                    problems.append(f"{bare} of {len(items)} Snapshot items cite no source id")
                elif stored > 0 and not items:
                    problems.append(f"Store reported {stored} items but Snapshot is empty")
                else:
                    done.append(f"Snapshot {len(items)} items citing stored ids")
        else:
            problem = _expect_unimplemented(h, "Snapshot", lambda: h.snapshot(ns))
            problems.append(problem) if problem else done.append("Snapshot UNIMPLEMENTED")
        if h.claims("forget"):
            target, other = corpus.messages[0], corpus.messages[1]
            before_t = any(found(hit, target) for hit in h.retrieve(ns, target.query))
            before_o = any(found(hit, other) for hit in h.retrieve(ns, other.query))
            try:
                removed = h.forget(ns, [target.message_id])
            except BackendCallError as exc:
                problems.append(f"forget is claimed but {_call_failed(h, exc)}")
            else:
                h.flush(ns)
                still = any(target.message_id in hit.source_ids or mentions(hit, target)
                            for hit in h.retrieve(ns, target.query))
                after_o = any(found(hit, other) for hit in h.retrieve(ns, other.query))
                if still:
                    problems.append(f"Forget([{target.message_id}]) said {removed} removed, but it is still retrieved")
                elif before_t and removed <= 0:
                    problems.append(f"Forget([{target.message_id}]) removed it but said {removed} items removed")
                elif before_o and not after_o:
                    problems.append(f"Forget([{target.message_id}]) also removed {other.message_id}")
                else:
                    if items is not None:  # Snapshot claimed and working
                        cited = [i.item_id for i in h.snapshot(ns) if target.message_id in i.source_ids]
                        if cited:
                            problems.append(f"after Forget, Snapshot items still cite {target.message_id}: "
                                            f"{_ids(cited)}")
                    if not problems and before_t:
                        done.append(f"Forget removed {removed} item(s), the forgotten message and only it")
                    elif not problems:
                        done.append(f"Forget answered {removed} (the message was not retrievable before)")
        else:
            problem = _expect_unimplemented(h, "Forget", lambda: h.forget(ns, [corpus.messages[0].message_id]))
            problems.append(problem) if problem else done.append("Forget UNIMPLEMENTED")
        if problems:
            return _fail("capabilities_truthful", "; ".join(problems[:3]))
        return _pass("capabilities_truthful", "; ".join(done) + " (scopes and time_aware are not checked)")
    finally:
        h.cleanup(ns)


def _answer(hits: list[Hit]) -> list[tuple[str, float, tuple[str, ...]]]:
    return [(hit.text, hit.score, tuple(hit.source_ids)) for hit in hits]


@_check("deterministic")
def check_deterministic(h: Harness) -> CheckResult:
    """A claimed-deterministic backend answers the same queries identically from a fresh namespace
    fed the same sessions (same texts, scores, ids, order), and when asked twice."""
    if not h.claims("deterministic"):
        return _skip("deterministic", "Describe does not claim deterministic")
    ns_a, ns_b = h.namespace("deterministic", "a"), h.namespace("deterministic", "b")
    corpus = synthetic_corpus("det")
    queries = [m.query for m in corpus.messages] + list(GENERIC_QUERIES)
    try:
        h.reset(ns_a)
        h.reset(ns_b)
        for ns in (ns_a, ns_b):
            for s in corpus.sessions:
                h.store(ns, s)
            h.flush(ns)
        first = {q: _answer(h.retrieve(ns_a, q)) for q in queries}
        fresh = {q: _answer(h.retrieve(ns_b, q)) for q in queries}
        again = {q: _answer(h.retrieve(ns_a, q)) for q in queries}
        for label, other in (("a fresh namespace", fresh), ("the same namespace asked again", again)):
            for q in queries:
                if first[q] != other[q]:
                    return _fail("deterministic", f"{label} answered {q!r} differently: "
                                                  f"{_difference(first[q], other[q])}")
        hits = sum(len(a) for a in first.values())
        empty = " (every answer was empty)" if hits == 0 else ""
        return _pass("deterministic", f"{len(queries)} queries answered identically ({hits} hits) from a fresh "
                                      f"namespace and when asked again{empty}")
    finally:
        h.cleanup(ns_a, ns_b)


def _difference(a: list, b: list) -> str:
    if len(a) != len(b):
        return f"{len(a)} hits vs {len(b)}"
    for rank, (x, y) in enumerate(zip(a, b), 1):
        if x != y:
            what = "text" if x[0] != y[0] else "score" if x[1] != y[1] else "source ids"
            shown = f"{x[1]!r} vs {y[1]!r}" if what == "score" else f"{x[2]} vs {y[2]}" if what == "source ids" else ""
            return f"rank {rank} differs in {what} {shown}".rstrip()
    return "differs"


@_check("errors_are_status_codes")
def check_errors_are_status_codes(h: Harness) -> CheckResult:
    """A Retrieve on a namespace never Reset and a Store with an empty namespace come back as gRPC
    status errors with a message, and the adapter still answers Describe afterwards."""
    never = h.namespace("errors_are_status_codes", "never-reset")
    corpus = synthetic_corpus("err", sessions=1, per_session=2)
    problems: list[str] = []
    seen: list[str] = []
    for what, call in (("Retrieve on a namespace never Reset", lambda: h.retrieve(never, corpus.messages[0].query)),
                       ("Store with an empty namespace", lambda: h.store("", corpus.sessions[0]))):
        try:
            call()
        except BackendCallError as exc:
            code = exc.code.name if exc.code else "ERROR"
            if code in _NOT_AN_ANSWER:
                died = h.died(2.0)
                problems.append(f"{what}: {code} (no answer: crashed or hung)" + (f" [{_death(died)}]" if died else ""))
            elif not (exc.details or "").strip():
                problems.append(f"{what}: {code} with an empty message")
            else:
                seen.append(f"{what}: {code}")
        else:
            problems.append(f"{what} succeeded (expected a status error, e.g. INVALID_ARGUMENT)")
    try:
        h.describe()
        alive = "Describe still answers"
    except BackendCallError as exc:
        problems.append(f"Describe no longer answers afterwards ({exc.code.name if exc.code else 'ERROR'})")
        alive = ""
    if problems:
        return _fail("errors_are_status_codes", "; ".join(problems + seen))
    return _pass("errors_are_status_codes", "; ".join(seen + [alive]))


# The audit checks (what the runner audits at every checkpoint) register themselves here.
from conformance.backend import audit_checks  # noqa: E402,F401

assert tuple(CHECKS) == CHECK_NAMES, "checks.py and manifest.CHECK_NAMES list different checks"

#: The order the checks run in: errors_are_status_codes last (it may crash the adapter), and
#: deadlines just before it (it judges the time of every call made until then).
RUN_ORDER = ("describe", "reset_isolates", "flush_then_found", "provenance_ids", "k_honoured",
             "capabilities_truthful", "deterministic", "snapshot_consistent", "provenance_carried", "stored_findable",
             "scopes_honoured", "usage_valid", "deadlines", "errors_are_status_codes")


def run_checks(target: Target, skips: dict[str, str] | None = None, only: Iterable[str] | None = None,
               flush_timeout_s: float = 120.0, progress: Callable[[str], None] | None = None) -> list[CheckResult]:
    """Run the checks against ``target``; results in the checks' canonical order.

    ``skips``: check name -> the written reason (adapter.yaml ``check_skips``); such a check
    is not run and reports SKIP with its reason. ``only``: run just these checks.
    """
    skips = dict(skips or {})
    wanted = set(CHECK_NAMES if only is None else only)
    unknown = wanted - set(CHECK_NAMES)
    if unknown:
        raise ValueError(f"unknown checks: {', '.join(sorted(unknown))}")
    h = Harness(target, flush_timeout_s=flush_timeout_s)
    results: dict[str, CheckResult] = {}
    for name in RUN_ORDER:
        if name not in wanted:
            continue
        if name in skips:
            results[name] = _skip(name, f"adapter.yaml check_skips: {skips[name]}")
            continue
        if progress:
            progress(name)
        results[name] = CHECKS[name](h)
    return [results[n] for n in CHECK_NAMES if n in results]


def passed(results: Iterable[CheckResult]) -> bool:
    """True when no check failed (every other one passed or was skipped with its reason)."""
    return all(r.result != "FAIL" for r in results)

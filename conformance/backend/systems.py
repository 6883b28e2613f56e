"""The systems a run drives: remote adapters behind gRPC, and the harness-side oracle.

``RemoteSystem`` talks to an adapter (started here in its own process or its own
container, or already running at ``grpc://HOST:PORT``; :func:`plan_adapter` decides). ``OracleSystem`` reads gold, so it lives in the
harness and never crosses the wire: it returns exactly each probe's evidence.
"""

from __future__ import annotations


import contextlib
import difflib
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from google.protobuf.json_format import MessageToDict

from conformance.backend.client import BackendCallError, BackendClient, Deadlines, usage_dict
from conformance.backend.manifest import load_manifest
from conformance.backend.process import AdapterStartError, ProcessAdapter
from conformance.backend.venvs import requirement_count
from conformance.contract.fixture import Probe, Session
from conformance.contract.gold import GoldFile
from conformance.paths import adapters_dir
from conformance.errors import DriftError

if TYPE_CHECKING:  # the Docker adapter (and the docker SDK) load only in docker mode
    from conformance.backend.docker_adapter import DockerAdapter

_ZERO_USAGE = {"input_tokens": 0, "output_tokens": 0, "llm_calls": 0}


class AdapterSpecError(DriftError, ValueError):
    """``--adapter`` names nothing that can be run; the message lists what can."""


class NotServing(AdapterSpecError):
    """A ``grpc://`` backend did not answer health SERVING in time."""


#: What an adapter that fails to come up raises (after its spec and manifest were fine):
#: a run with ``tolerate`` scores it as failed rather than stopping (:func:`open_systems`).
START_FAULTS = (AdapterStartError, BackendCallError, NotServing)


@dataclass(frozen=True)
class RetrievedHit:
    text: str
    score: float
    source_ids: tuple[str, ...]
    timestamp: str


@dataclass(frozen=True)
class SnapshotItem:
    """One item of a memory's state (the MemoryState of DRIFT §7.7), text and provenance."""

    item_id: str
    text: str
    source_ids: tuple[str, ...]


@dataclass
class StoreOutcome:
    latency_ms: float
    usage: dict[str, int]
    items_stored: int


@dataclass
class FlushOutcome:
    """A Flush reply: readiness, and the LLM usage the flush spent (write-side, W in DRIFT §7.7)."""

    ready: bool
    usage: dict[str, int]


@dataclass
class RetrieveOutcome:
    hits: list[RetrievedHit]
    latency_ms: float
    usage: dict[str, int]


@dataclass
class RemoteSystem:
    """An adapter behind the gRPC contract."""

    label: str
    spec: str
    client: BackendClient
    kind: str = "system"
    process: "ProcessAdapter | DockerAdapter | None" = None
    """What started the adapter (its ``stop()`` ends it); None for ``grpc://``."""
    describe: dict = field(default_factory=dict)
    isolation: dict = field(default_factory=dict)

    @property
    def provenance(self) -> bool:
        return bool(self.describe.get("capabilities", {}).get("provenance", False))

    @property
    def supports_snapshot(self) -> bool:
        return bool(self.describe.get("capabilities", {}).get("snapshot", False))

    def snapshot(self, namespace: str) -> list[SnapshotItem]:
        """Every stored item; raises BackendCallError when the call fails."""
        return [SnapshotItem(i.item_id, i.text, tuple(i.source_ids)) for i in self.client.snapshot(namespace)]

    def load_description(self) -> None:
        reply = self.client.describe()
        self.describe = MessageToDict(reply, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)

    def reset(self, namespace: str) -> None:
        self.client.reset(namespace)

    def store(self, namespace: str, session: Session) -> StoreOutcome:
        reply, ms = self.client.store(namespace, session)
        return StoreOutcome(ms, usage_dict(reply.usage), reply.items_stored)

    def flush(self, namespace: str, timeout_s: float) -> FlushOutcome:
        reply = self.client.flush(namespace, timeout_s)
        return FlushOutcome(reply.ready, usage_dict(reply.usage))

    def retrieve(self, namespace: str, probe: Probe, k: int) -> RetrieveOutcome:
        reply, ms = self.client.retrieve(namespace, probe.query, k, probe.asked_by, probe.asked_at)
        hits = [RetrievedHit(h.text, h.score, tuple(h.source_ids), h.timestamp) for h in reply.hits]
        return RetrieveOutcome(hits, ms, usage_dict(reply.usage))

    def died(self) -> str | None:
        return self.process.exit_report() if self.process else None

    @property
    def idempotent_stores(self) -> bool:
        """adapter.yaml's ``idempotent_stores`` (False for ``grpc://``: nothing declares it)."""
        manifest = getattr(self.process, "manifest", None)
        return bool(manifest is not None and manifest.idempotent_stores)

    @property
    def restartable(self) -> bool:
        """True for an adapter this runner started in its own process (:meth:`restart`)."""
        return isinstance(self.process, ProcessAdapter)

    def restart(self, grace_s: float = 5.0) -> bool:
        """A fresh adapter process (or container) in place of this one: after a missed deadline
        (``grace_s=0``: the hung process is killed at once, a graceful stop would wait for the
        call it is stuck in) and before each scenario under ``--fresh-process`` (nothing it
        learnt in one scenario reaches the next). Its memory is gone, so the caller resets
        before using it. Returns False for a ``grpc://`` backend, which the runner did not
        start and cannot restart.

        Raises:
            AdapterStartError, VenvError, BackendCallError: the new process did not serve.
        """
        old = self.process
        if old is None:
            return False
        if isinstance(old, ProcessAdapter):
            old.stop(grace_s=grace_s)
            fresh = ProcessAdapter(old.folder, old.manifest, old.deadlines, log=old.log)
            fresh.venv = old.venv
            fresh.start()
            self.process, started = fresh, {"pid": fresh.proc.pid}
        else:  # a container: the same image again
            old.stop()
            old.start()
            started = {}
        self.client = self.process.client
        self.load_description()
        self.isolation = {**self.isolation, **started, "restarts": int(self.isolation.get("restarts", 0)) + 1}
        return True

    def close(self) -> None:
        if self.process is not None:
            self.process.stop()
        else:
            self.client.close()


class OracleSystem:
    """The ceiling control: a perfect memory of what gold marks memorable.

    It keeps, from each stored session, exactly the messages gold marks memorable: the
    evidence of every signal and soft session (the messages of its events), nothing of a
    noise session, so its selectivity is 1.0 (a departure from the guide's "exactly the
    probed evidence", §5.4, which left unprobed signal sessions out and let a filter beat
    it). On imported data without events, the probes' evidence. It answers a probe with
    exactly its evidence. Gold stays on the harness side.
    """

    label = "oracle"
    kind = "control"
    provenance = True
    supports_snapshot = True

    def __init__(self, gold_by_scenario: dict[str, GoldFile]):
        self._gold = gold_by_scenario
        self._evidence: dict[str, list[str]] = {}
        self._kept: dict[str, dict[str, RetrievedHit]] = {}
        self._wanted: dict[str, set[str]] = {}
        self._via: dict[str, dict[str, str]] = {}
        """Summary gate only: namespace -> evidence message id -> the summary id that carries it."""
        self.describe = {"name": "oracle", "version": "1",
                         "capabilities": {"provenance": True, "snapshot": True, "deterministic": True},
                         "settings": {"reads": "gold evidence (harness side, never over the wire)"}}
        self.isolation = {"mode": "harness"}

    def reset(self, namespace: str) -> None:
        self._kept[namespace] = {}
        self._via.pop(namespace, None)
        self._wanted.pop(namespace, None)

    def _scenario(self, namespace: str) -> GoldFile:
        scenario = namespace.rsplit("/", 1)[-1]
        return self._gold[scenario]

    def _memorable(self, namespace: str) -> set[str]:
        """Message ids gold marks memorable in this scenario (see the class docstring)."""
        if namespace not in self._wanted:
            gold = self._scenario(namespace)
            self._wanted[namespace] = ({m for e in gold.events if gold.session_tiers.get(e.session_id, e.tier) != "noise"
                                        for m in e.message_ids} if gold.events else
                                       {e for p in gold.probes for e in p.evidence})
        return self._wanted[namespace]

    def store(self, namespace: str, session: Session) -> StoreOutcome:
        started = time.perf_counter()
        wanted = self._memorable(namespace)
        kept = self._kept[namespace]
        for m in session.messages:
            if m.message_id in wanted:
                kept[m.message_id] = RetrievedHit(f"{m.author}: {m.text}", 1.0, (m.message_id,), m.timestamp)
        return StoreOutcome((time.perf_counter() - started) * 1000.0, dict(_ZERO_USAGE), len(kept))

    def store_summary(self, namespace: str, session: Session, covers: dict[str, tuple[str, ...]]) -> StoreOutcome:
        """Store under ``summary:N`` (DRIFT §5.2): keep each summary message that kept a
        sentence of some evidence message (``covers``: summary id -> message ids).

        The oracle stays the ceiling of what the gate lets through: evidence whose
        sentences no summary kept is lost to it as to every system.
        """
        started = time.perf_counter()
        wanted = self._memorable(namespace)
        kept, via = self._kept[namespace], self._via.setdefault(namespace, {})
        for m in session.messages:
            carried = [e for e in covers.get(m.message_id, ()) if e in wanted]
            if carried:
                kept[m.message_id] = RetrievedHit(f"{m.author}: {m.text}", 1.0, (m.message_id,), m.timestamp)
                via.update((e, m.message_id) for e in carried)
        return StoreOutcome((time.perf_counter() - started) * 1000.0, dict(_ZERO_USAGE), len(kept))

    def flush(self, namespace: str, timeout_s: float) -> FlushOutcome:
        return FlushOutcome(True, dict(_ZERO_USAGE))

    def retrieve(self, namespace: str, probe: Probe, k: int) -> RetrieveOutcome:
        started = time.perf_counter()
        gold = self._scenario(namespace)
        truth = next(p for p in gold.probes if p.probe_id == probe.probe_id)
        kept = self._kept[namespace]
        via = self._via.get(namespace)
        if via is None:
            hits = [kept[e] for e in truth.evidence if e in kept][:k]
        else:
            # Summary gate: each summary carrying some evidence, once, in evidence order.
            hits = [kept[i] for i in dict.fromkeys(via[e] for e in truth.evidence if e in via)][:k]
        return RetrieveOutcome(hits, (time.perf_counter() - started) * 1000.0, dict(_ZERO_USAGE))

    def snapshot(self, namespace: str) -> list[SnapshotItem]:
        """The memorable messages kept so far: every signal and soft session's evidence."""
        return [SnapshotItem(mid, hit.text, hit.source_ids) for mid, hit in self._kept[namespace].items()]

    def died(self) -> str | None:
        return None

    def close(self) -> None:
        self._kept.clear()
        self._via.clear()
        self._wanted.clear()


class NeverStarted(DriftError, RuntimeError):
    """The call of a system that did not start: it is never sent anywhere."""


@dataclass
class FailedSystem:
    """A system whose adapter never became ready at the start of the run (it exited, never
    bound its port, never said SERVING, or its Describe failed).

    It takes part like any other so the others are scored alike: its first call in the run
    fails (a ``fault`` record carrying ``error``), :meth:`died` then keeps it out of every
    later scenario, and all its probes count as failed (the same denominators for every
    system). ``isolation`` records the start error under ``start_error``.
    """

    label: str
    spec: str
    error: str
    kind: str = "system"
    describe: dict = field(default_factory=dict)
    isolation: dict = field(default_factory=dict)
    provenance: bool = False
    supports_snapshot: bool = False

    def _refuse(self, *args, **kwargs):
        raise NeverStarted("the adapter never became ready at the start of the run")

    reset = store = flush = retrieve = snapshot = _refuse

    def died(self) -> str | None:
        return self.error

    def close(self) -> None:
        pass


_GRPC = re.compile(r"^grpc://(?P<host>\[[0-9A-Fa-f:.]+\]|[^:/\[\]]+):(?P<port>\d{1,5})$")


def available_adapters() -> list[str]:
    return sorted(p.name for p in adapters_dir().iterdir() if (p / "adapter.yaml").exists())


Isolation = Literal["docker", "process"]
_NAME_TAG = re.compile(r"^(?P<name>.+):(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})$")


@dataclass(frozen=True)
class AdapterPlan:
    """How ``--adapter SPEC`` runs: the one place that decides (see :func:`plan_adapter`)."""

    mode: Literal["external", "process", "docker"]
    spec: str
    folder: Path | None = None
    """The adapter folder (None: ``grpc://``, or an image whose folder is not here)."""
    name: str | None = None
    """``NAME`` of ``NAME:TAG`` when no folder holds it (the image must exist)."""
    tag: str = "latest"
    address: str | None = None


def _folder(spec: str) -> Path | None:
    try:
        path = Path(spec).expanduser()
        if ("/" in spec or spec.startswith(".")) and path.is_dir():
            return path.resolve()
        # A built-in is a plain name: "../x" or "a/b" never reaches outside adapters/.
        builtin = adapters_dir() / spec
        if "/" not in spec and ".." not in spec and (builtin / "adapter.yaml").exists():
            return builtin
        if path.is_dir():
            return path.resolve()
    except (OSError, ValueError) as exc:  # a name too long for the file system, a NUL byte
        raise AdapterSpecError(f"--adapter {spec[:80]!r}{'...' if len(spec) > 80 else ''}: not a usable adapter "
                               f"name or folder ({exc.__class__.__name__})") from None
    return None


def plan_adapter(spec: str, isolation: Isolation | None = None) -> AdapterPlan:
    """Decide how ``spec`` runs.

    - ``grpc://HOST:PORT``: a backend someone already runs (``isolation`` does not apply);
    - ``NAME`` or ``PATH``: process mode (``isolation="docker"``: image ``drift-adapter-NAME:latest``);
    - ``NAME:TAG`` or ``PATH:TAG``: docker mode, image ``drift-adapter-NAME:TAG`` (``isolation="process"``:
      process mode from the folder, tag ignored). A ``NAME`` no folder holds is an image that
      must exist already.

    Raises:
        AdapterSpecError: a malformed ``grpc://`` address, or nothing by that name or path
            (lists the built-in adapters).
    """
    match = _GRPC.match(spec)
    if spec.startswith("grpc://"):
        if not match or not 0 < int(match["port"]) < 65536:
            raise AdapterSpecError(f"--adapter {spec}: expected grpc://HOST:PORT (port 1-65535; IPv6 as [::1])")
        return AdapterPlan("external", spec, address=f"{match['host']}:{match['port']}")
    folder = _folder(spec)
    if folder is not None:
        return AdapterPlan("docker" if isolation == "docker" else "process", spec, folder=folder)
    tagged = _NAME_TAG.match(spec)
    if tagged:
        folder = _folder(tagged["name"])
        if isolation == "process":
            if folder is None:
                raise AdapterSpecError(f"--adapter {spec} --isolation process: no adapter folder "
                                       f"{tagged['name']} to run in process mode{_did_you_mean(spec)}; built-in adapters: "
                                       f"{', '.join(available_adapters())}")
            return AdapterPlan("process", spec, folder=folder)
        name = None if folder is not None else tagged["name"]
        if name is not None and not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", name):
            raise AdapterSpecError(f"--adapter {spec}: {name!r} is neither an adapter folder nor an adapter name")
        return AdapterPlan("docker", spec, folder=folder, name=name, tag=tagged["tag"])
    raise AdapterSpecError(f"--adapter {spec}: no built-in adapter or folder by that name{_did_you_mean(spec)}; "
                           f"built-in adapters: {', '.join(available_adapters())}")


def _did_you_mean(spec: str) -> str:
    close = difflib.get_close_matches(spec.split(":", 1)[0], available_adapters(), n=3, cutoff=0.6)
    return f" (did you mean {' or '.join(close)}?)" if close else ""


def resolve_adapter_folder(spec: str) -> Path:
    """Map ``NAME``, ``PATH`` (or ``NAME:TAG``, ``PATH:TAG``) to an adapter folder.

    Raises:
        AdapterSpecError: nothing by that name or path (lists the built-in adapters).
    """
    plan = plan_adapter(spec)
    if plan.folder is None:
        raise AdapterSpecError(f"--adapter {spec}: no built-in adapter or folder by that name; "
                               f"built-in adapters: {', '.join(available_adapters())}")
    return plan.folder


def _start_container(plan: AdapterPlan, deadlines: Deadlines, log):
    """Build (or reuse) the image of ``plan`` and start its container; returns the DockerAdapter.

    Raises:
        DockerUnavailable, ImageBuildError, ManifestError, AdapterStartError.
    """
    from conformance.backend.docker_adapter import DockerAdapter
    from conformance.backend.images import connect, ensure_image, existing_image, image_name

    docker_client = connect()
    try:
        if plan.folder is not None:
            manifest = load_manifest(plan.folder)
            if (plan.folder / "Dockerfile").is_file():
                image = ensure_image(docker_client, plan.folder, manifest, plan.tag, log=log)
            else:
                image = existing_image(docker_client, image_name(manifest.name, plan.tag))
        else:
            image = existing_image(docker_client, image_name(plan.name, plan.tag))
        return DockerAdapter(image, deadlines, log=log, docker_client=docker_client).start()
    except BaseException:
        docker_client.close()
        raise


def open_system(spec: str, deadlines: Deadlines = Deadlines(), log=None, kind: str | None = None,
                connect_timeout_s: float = 10.0, isolation: Isolation | None = None) -> RemoteSystem:
    """Start (or connect to) the adapter named by ``spec`` and describe it.

    ``isolation`` overrides the mode ``spec`` implies (:func:`plan_adapter`).

    Raises:
        AdapterSpecError, ManifestError, VenvError, AdapterStartError, BackendCallError;
        in docker mode also DockerUnavailable (no engine answers) and ImageBuildError.
    """
    return open_systems([(spec, kind)], deadlines, log=log, isolation=isolation,
                        connect_timeout_s=connect_timeout_s)[0]


def open_systems(specs: list[tuple[str, str | None]], deadlines: Deadlines = Deadlines(), log=None,
                 isolation: Isolation | None = None, connect_timeout_s: float = 10.0,
                 tolerate: bool = False) -> list[RemoteSystem]:
    """Start (or connect to) the adapters of ``specs``, ``(spec, kind)`` pairs; returns them
    described, in the order given (``kind`` as :func:`open_system` takes it).

    Every spec is planned before anything starts (a misspelt one costs nothing); the
    virtualenvs of process-mode adapters are then built at once, one per core at most, each
    under its own file lock (:func:`conformance.backend.venvs.cached_venv`); the processes are
    started from this thread, which outlives them (:mod:`drift_sdk.launch` ties an adapter's
    life to the thread that started it), and boot side by side before each is waited for.

    ``tolerate``: an adapter that fails to come up (:data:`START_FAULTS`: it exits, never
    serves, its Describe fails) becomes a :class:`FailedSystem` in its place and the others
    start as usual; a bad spec or manifest still raises.

    Raises:
        The first error met, in the order of ``specs``, after stopping every adapter already
        started: see :func:`open_system`.
    """
    plans = [(plan_adapter(spec, isolation), kind) for spec, kind in specs]
    processes = {i: ProcessAdapter(plan.folder, load_manifest(plan.folder), deadlines, log=log)
                 for i, (plan, _) in enumerate(plans) if plan.mode == "process"}
    if len(processes) > 1:
        # The longest builds first (most requirements), so the short ones fill the other slots.
        order = sorted(processes.values(), key=lambda p: -requirement_count(p.folder / "requirements.txt"))
        with ThreadPoolExecutor(max_workers=min(len(processes), os.cpu_count() or 1),
                                thread_name_prefix="venv") as pool:
            for future in [pool.submit(p.prepare) for p in order]:
                future.result()
    started: list = []  # what each spec started, to stop on failure
    try:
        for i, (plan, _) in enumerate(plans):
            try:
                if plan.mode == "process":
                    started.append(processes[i].launch())
                elif plan.mode == "docker":
                    started.append(_start_container(plan, deadlines, log))
                else:
                    started.append(BackendClient(plan.address, plan.spec, deadlines))
            except START_FAULTS as exc:
                if not tolerate:
                    raise
                started.append(exc)
        systems = []
        for i, ((plan, kind), handle) in enumerate(zip(plans, started)):
            if isinstance(handle, Exception):
                systems.append(_failed_system(plan, kind, handle, processes.get(i), log))
                continue
            try:
                systems.append(_ready_system(plan, kind, handle, connect_timeout_s))
            except START_FAULTS as exc:
                if not tolerate:
                    raise
                with contextlib.suppress(Exception):
                    handle.close() if isinstance(handle, BackendClient) else handle.stop()
                systems.append(_failed_system(plan, kind, exc, handle, log))
    except BaseException:
        for handle in started:
            if isinstance(handle, Exception):
                continue
            with contextlib.suppress(Exception):  # the error that stopped the start is the one to show
                if isinstance(handle, BackendClient):
                    handle.close()
                else:
                    handle.stop()
        raise
    return systems


def _failed_system(plan: AdapterPlan, kind: str | None, exc: Exception, handle, log) -> FailedSystem:
    manifest = getattr(handle, "manifest", None)
    label = manifest.name if manifest is not None else plan.spec
    if kind is None:
        kind = "control" if manifest is not None and manifest.kind == "control" else "system"
    if log:
        log(f"adapter {label} did not start; it is scored as failed, the others run: {exc}")
    return FailedSystem(label=label, spec=plan.spec, error=str(exc), kind=kind,
                        isolation={"mode": plan.mode, "start_error": str(exc)})


def close_systems(systems: list) -> None:
    """Stop every system of a run. Adapter processes are all signalled first, so they shut
    down side by side rather than one after another; then each is waited for and cleaned up."""
    for system in systems:
        process = getattr(system, "process", None)
        if isinstance(process, ProcessAdapter):
            process.terminate()
    for system in systems:
        system.close()


def _ready_system(plan: AdapterPlan, kind: str | None, handle, connect_timeout_s: float) -> RemoteSystem:
    """Wait until a started adapter serves, then describe it (``handle``: a ProcessAdapter
    after its launch, a started DockerAdapter, or the BackendClient of a ``grpc://`` spec)."""
    if plan.mode == "external":
        client = handle
        deadline = time.monotonic() + connect_timeout_s
        while not client.serving():
            if time.monotonic() > deadline:
                raise NotServing(f"--adapter {plan.spec}: no MemoryBackend answered health SERVING at "
                                       f"{plan.address} within {connect_timeout_s:g} s")
            time.sleep(0.2)
        system = RemoteSystem(label=plan.spec, spec=plan.spec, client=client, kind=kind or "system",
                              isolation={"mode": "external", "address": plan.address})
    else:
        if plan.mode == "process":
            handle.wait_until_serving()
        manifest = handle.manifest
        system = RemoteSystem(label=manifest.name, spec=plan.spec, client=handle.client,
                              kind=kind or ("control" if manifest.kind == "control" else "system"),
                              process=handle, isolation={**handle.isolation, "verified": manifest.verified})
    system.load_description()
    return system

"""``--executor ray``: a run's shards as Ray tasks, merged on the driver.

The driver splits the selection into N shards (:mod:`conformance.contract.shards`), submits
one Ray task per shard and merges what they return (:func:`conformance.runner.merge.merge_shards`),
so the result is the unsharded run's in every metric not derived from measured time.

- **Resources.** Each task asks Ray for the largest ``resources`` (``cpus``, ``memory_gb``) of
  the run's adapters' ``adapter.yaml`` (a shard streams to its systems one call at a time, so
  they share a host the way they share the unsharded run's); an adapter that declares none,
  or has no folder here (``grpc://``, an image), asks for DRIFT's reference host, 8 CPUs and
  32 GB. The request is clamped to the largest alive node, so it can always be placed; the
  memory becomes Ray's ``memory`` resource (an admission figure, not a limit).
- **Where adapters run.** A task runs :func:`conformance.runner.job.run` for its shard on the
  node Ray placed it on: the adapters start there, in process mode or, with ``--isolation
  docker`` or ``NAME:TAG`` specs, in that node's Docker engine. Every node needs the same
  drift-conformance installed (built-in adapters, their virtualenvs under its own cache) and
  the corpus: the folder the driver names, or for the committed corpus the node's own copy;
  a node without it fails its shard naming the path and hash. An adapter folder
  (``--adapter /path/to/adapter``) must be at the same absolute path on every node.
- **Records.** The task returns its result and its records (gzip); the driver writes them to
  ``<records-dir>/<run id>/shards/<I>-of-<N>/`` (records first, then ``result.json``, renamed
  into place), so a shard whose ``result.json`` is there is finished.
- **Resume.** ``--resume RUN_ID --executor ray`` reuses every finished shard of that folder
  and runs the others (the unit of resume is the shard: a shard cut off mid-way reruns whole).
- **Retries.** Tasks are submitted with ``max_retries=0`` (Ray would rerun a task whose worker
  died on another node and say nothing): the driver reruns a shard whose attempt died by a
  system failure (a killed worker, a lost node; not the shard's own error), up to
  :data:`MAX_ATTEMPTS` attempts. Each attempt reports its node and temporary folder when it
  starts (:class:`Attempts`, an actor); a failed one is logged and recorded in the shard's
  receipt (``config.executor.ray.retries``: attempt, node, host, cause, temp folder, whether it
  was removed), and its folder is removed by a task pinned to that node when it is still alive.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import socket
import tempfile
from collections.abc import Callable
from pathlib import Path

from conformance import paths
from conformance.backend.manifest import ManifestError, load_manifest
from conformance.backend.systems import AdapterSpecError, plan_adapter
from conformance.contract.corpus import fixtures_hash, select_fixtures
from conformance.contract.result import ResultDocument
from conformance.contract.shards import Shard
from conformance.runner.job import JobError, JobInterrupted, new_run_id, run
from conformance.runner.merge import merge_shards
from conformance.runner.records import RunLock
from conformance.runner.request import RunRequest
from conformance.scoring.drift import REFERENCE

__all__ = ["DRIFT_HOST", "run_on_ray", "shard_resources"]

DRIFT_HOST = {"cpus": 8.0, "memory_gb": 32.0}
"""DRIFT's reference host per system (DRIFT §7.8): what an adapter without ``resources`` asks for."""

SHARDS_FOLDER = "shards"

MAX_ATTEMPTS = 4
"""Attempts per shard whose worker dies (Ray's own default for tasks is 3 retries)."""

TEMP_PREFIX = "drift-shard-"


class Attempts:
    """A Ray actor (zero CPUs) where each shard attempt says, as it starts, where it runs: the
    driver cannot learn a silently killed task's node or folder otherwise."""

    def __init__(self):
        self.where: dict[tuple[str, int], dict] = {}

    def began(self, shard: str, attempt: int, place: dict) -> None:
        self.where[(shard, attempt)] = place

    def place(self, shard: str, attempt: int) -> dict | None:
        return self.where.get((shard, attempt))


class RayUnavailable(JobError):
    """Ray is not installed, or no cluster could be reached or started; the message says which."""


def shard_resources(request: RunRequest) -> dict:
    """What one shard asks for: ``{"cpus", "memory_gb", "from": {spec: its figures and source}}``,
    the largest of the run's adapters (controls and the reference compressor included)."""
    per_spec = {}
    for spec in ["none", REFERENCE, *request.adapters]:
        try:
            plan = plan_adapter(spec, request.isolation)
            manifest = load_manifest(plan.folder) if plan.folder is not None else None
        except (AdapterSpecError, ManifestError):
            manifest = None
        if manifest is not None and "resources" in manifest.model_fields_set:
            per_spec[spec] = {"cpus": manifest.resources.cpus, "memory_gb": manifest.resources.memory_gb,
                              "source": "adapter.yaml"}
        else:
            per_spec[spec] = {**DRIFT_HOST, "source": "DRIFT reference host (no adapter.yaml resources)"}
    return {"cpus": max(v["cpus"] for v in per_spec.values()),
            "memory_gb": max(v["memory_gb"] for v in per_spec.values()), "from": per_spec}


def clamp(wanted: dict, nodes: list[dict]) -> dict:
    """``wanted`` (cpus, memory_gb) cut to the largest alive node's CPU and memory (Ray's
    ``ray.nodes()`` entries), so every shard can be placed: ``{"num_cpus", "memory"}`` (bytes)."""
    alive = [n.get("Resources", {}) for n in nodes if n.get("Alive")]
    if not alive:
        raise RayUnavailable("the Ray cluster has no alive node")
    cpus = max(float(r.get("CPU", 0)) for r in alive)
    memory = max(float(r.get("memory", 0)) for r in alive)
    return {"num_cpus": min(wanted["cpus"], cpus) if cpus > 0 else 0,
            "memory": int(min(wanted["memory_gb"] * 2**30, memory)) if memory > 0 else None}


def _node_corpus(request: RunRequest, want: str) -> tuple[Path, Path]:
    """The corpus folders on this node: the driver's paths, else this install's committed
    corpus, whichever has the driver's fixtures hash (a shard must score the same corpus)."""
    for fixtures, gold in ((request.fixtures_dir, request.gold_dir), (paths.fixtures_dir(), paths.gold_dir())):
        if Path(fixtures).is_dir() and Path(gold).is_dir() and fixtures_hash(fixtures, gold) == want:
            return Path(fixtures), Path(gold)
    raise JobError(f"node {socket.gethostname()}: no corpus with fixtures_hash {want[:16]}... at "
                   f"{request.fixtures_dir} (nor this install's committed corpus); put the same corpus at that path "
                   "on every node")


def shard_task(request: RunRequest, want_hash: str, attempts=None, attempt: int = 1) -> dict:
    """One shard on a Ray worker: ``{"result": result.json text, "records": gzip of
    records.jsonl, "node": {"node_id", "host"}}``. Runs in the worker's process; adapters
    start on this node. ``attempts``: the :class:`Attempts` actor told where this attempt runs."""
    import ray

    work = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX))
    if attempts is not None:
        place = {"node_id": ray.get_runtime_context().get_node_id(), "host": socket.gethostname(),
                 "temp_folder": str(work)}
        ray.get(attempts.began.remote(str(request.shard), attempt, place))
    try:
        fixtures_dir, gold_dir = _node_corpus(request, want_hash)
        mine = request.model_copy(update={"fixtures_dir": fixtures_dir, "gold_dir": gold_dir,
                                          "records_dir": work / "runs"})
        doc, _ = run(mine)
        records = (work / "runs" / mine.run_id / "records.jsonl").read_bytes()
        return {"result": doc.model_dump_json(indent=2), "records": gzip.compress(records, compresslevel=3),
                "node": {"node_id": ray.get_runtime_context().get_node_id(), "host": socket.gethostname()}}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _shard_dir(out: Path, shard: Shard) -> Path:
    return out / f"{shard.index}-of-{shard.count}"


def _finished(out: Path, shard: Shard) -> Path | None:
    """The shard's ``result.json`` in ``out`` when it finished there, else None."""
    path = _shard_dir(out, shard) / "result.json"
    try:
        block = json.loads(path.read_text(encoding="utf-8"))["receipt"]["config"]["shard"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return path if (block.get("index"), block.get("count")) == (shard.index, shard.count) else None


def _keep(out: Path, shard: Shard, returned: dict, retries: list[dict]) -> Path:
    """Write what a shard task returned (``retries``: its failed attempts); ``result.json``
    last, renamed into place."""
    folder = _shard_dir(out, shard)
    doc = json.loads(returned["result"])
    doc["receipt"]["config"]["executor"] = {"ray": {**returned["node"], **({"retries": retries} if retries else {})}}
    run_id = doc["receipt"]["config"]["run_id"]
    records = folder / run_id / "records.jsonl"
    records.parent.mkdir(parents=True, exist_ok=True)
    records.write_bytes(gzip.decompress(returned["records"]))
    doc["receipt"]["config"]["records"] = str(records.resolve())
    tmp = folder / "result.json.tmp"
    tmp.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, folder / "result.json")
    return folder / "result.json"


def _connect(address: str | None):
    """``ray.init`` to ``address`` (``RAY_ADDRESS`` when None; a local Ray when neither)."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable("--executor ray needs Ray: pip install 'drift-conformance[ray]'") from None
    if ray.is_initialized():
        return ray
    _reachable(address or os.environ.get("RAY_ADDRESS"))
    try:
        if address or os.environ.get("RAY_ADDRESS"):
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(include_dashboard=False, log_to_driver=False)
    except Exception as exc:  # noqa: BLE001 - Ray raises ConnectionError, RuntimeError, ValueError...
        where = address or os.environ.get("RAY_ADDRESS") or "a new local Ray"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise RayUnavailable(f"could not reach a Ray cluster at {where}: {exc.__class__.__name__}: {first}") from None
    return ray


def _reachable(address: str | None, timeout_s: float = 10.0) -> None:
    """Refuse a ``HOST:PORT`` nothing listens on: ``ray.init`` would retry it for minutes."""
    if not address or "://" in address or address == "auto" or ":" not in address:
        return
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s):
            pass
    except (OSError, ValueError) as exc:
        raise RayUnavailable(f"could not reach a Ray cluster at {address}: {exc.__class__.__name__}: {exc} (start "
                             "one with `ray start --head`, or give its address with --ray-address)") from None


def _shard_count(request: RunRequest, ray, shards: int | None) -> int:
    scenarios = len(select_fixtures(request.fixtures_dir, request.selection)[0])
    if scenarios == 0:
        raise JobError("the filters match no fixture: nothing to shard")
    count = shards or sum(1 for n in ray.nodes() if n.get("Alive"))
    return max(1, min(count, scenarios))


def _refuse(request: RunRequest) -> None:
    if request.shard is not None:
        raise JobError("--executor ray makes its own shards (--shards N): drop --shard")
    if request.llm is not None:
        raise JobError("--executor ray merges re-scored hermetic shards: an answer-model run cannot be sharded")
    if request.sealed_holdout is not None:
        raise JobError("--executor ray: a sealed holdout's corpus exists only on the driver; run it unsharded")


def run_on_ray(request: RunRequest, *, shards: int | None = None, address: str | None = None,
               log: Callable[[str], None] = lambda m: None) -> ResultDocument:
    """Run ``request`` as Ray tasks, one per shard, and merge them (module docstring).

    ``shards``: how many (default: one per alive node, at most one per scenario).
    ``request.resume`` with ``request.run_id``: reuse that run's finished shards.

    Raises:
        RayUnavailable: Ray missing, or no cluster reachable.
        JobError: a shard failed on its node (its message; finished shards are kept, resume
            the run), the options cannot be sharded, or what the merge refuses.
        JobInterrupted: Ctrl-C (unfinished tasks cancelled, finished shards kept).
    """
    _refuse(request)
    if request.resume and not request.run_id:
        raise JobError("--resume needs the id of the run to continue")
    run_id = request.run_id or new_run_id()
    # A worker's working directory is not the driver's: tasks get absolute corpus paths.
    request = request.model_copy(update={"fixtures_dir": Path(request.fixtures_dir).resolve(),
                                         "gold_dir": Path(request.gold_dir).resolve()})
    ray = _connect(address)
    count = _shard_count(request, ray, shards)
    out = Path(request.records_dir) / run_id / SHARDS_FOLDER
    with RunLock(out):
        results = _run_shards(request, ray, run_id, count, out, log)
    log(f"merging {count} shards")
    return merge_shards(results, records_dir=request.records_dir, folders=(request.fixtures_dir, request.gold_dir),
                        run_id=run_id, log=log)


def _run_shards(request: RunRequest, ray, run_id: str, count: int, out: Path, log) -> list[Path]:
    """Every shard's ``result.json`` in ``out``: finished ones kept (``--resume``), the others
    run as Ray tasks, written as each returns; an attempt killed by a system failure is rerun
    (module docstring, Retries)."""
    every = [Shard(i, count) for i in range(1, count + 1)]
    kept = {s: _finished(out, s) for s in every} if request.resume else {}
    kept = {s: p for s, p in kept.items() if p is not None}
    if kept:
        log(f"resuming run {run_id}: shards {', '.join(str(s) for s in kept)} already finished")
    resources = clamp(shard_resources(request), ray.nodes())
    log(f"{count - len(kept)} shards as Ray tasks, each asking {resources['num_cpus']:g} CPUs and "
        f"{(resources['memory'] or 0) / 2**30:.1f} GB")
    task = ray.remote(shard_task)
    attempts = ray.remote(Attempts).options(num_cpus=0).remote()
    options = {**{k: v for k, v in resources.items() if v is not None}, "max_retries": 0}
    corpus = fixtures_hash(request.fixtures_dir, request.gold_dir)
    jobs = {s: request.model_copy(update={"shard": s, "run_id": f"{run_id}-{s.index}of{count}", "resume": False})
            for s in every if s not in kept}

    def submit(shard: Shard, attempt: int):
        return task.options(**options).remote(jobs[shard], corpus, attempts, attempt)

    pending = {submit(s, 1): (s, 1) for s in jobs}
    retries: dict[Shard, list[dict]] = {s: [] for s in jobs}
    try:
        while pending:
            (ref,), _ = ray.wait(list(pending), num_returns=1)
            shard, attempt = pending.pop(ref)
            try:
                returned = ray.get(ref)
            except Exception as exc:  # noqa: BLE001 - a RayTaskError wraps the shard's own error
                if not _system_failure(ray, exc):
                    raise JobError(_shard_failed(shard, attempt, exc, out, run_id)) from None
                retries[shard].append(_failed_attempt(ray, attempts, shard, attempt, exc, log))
                if attempt >= MAX_ATTEMPTS:
                    raise JobError(_shard_failed(shard, attempt, exc, out, run_id)) from None
                pending[submit(shard, attempt + 1)] = (shard, attempt + 1)
                continue
            kept[shard] = _keep(out, shard, returned, retries[shard])
            log(f"shard {shard} done on {returned['node']['host']} (node {returned['node']['node_id'][:12]})")
    except KeyboardInterrupt:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise JobInterrupted(f"interrupted; finished shards are kept in {out}: continue with --resume {run_id} "
                             "--executor ray (and the same options)") from None
    return [kept[s] for s in every]


def _system_failure(ray, exc: Exception) -> bool:
    """A worker or node lost (Ray's ``WorkerCrashedError``, ``NodeDiedError``, ...), not the shard's own error."""
    return not isinstance(exc, ray.exceptions.RayTaskError)


def _shard_failed(shard: Shard, attempt: int, exc: Exception, out: Path, run_id: str) -> str:
    after = f" (after {attempt} attempts, each killed)" if attempt > 1 else ""
    return (f"shard {shard} failed on its node{after}: {_cause(exc)}; finished shards are kept in {out}: "
            f"continue with --resume {run_id} --executor ray (and the same options)")


def _failed_attempt(ray, attempts, shard: Shard, attempt: int, exc: Exception, log) -> dict:
    """The record of one attempt lost to a system failure (where it ran, why, its temp folder
    removed or not), logged."""
    try:
        place = ray.get(attempts.place.remote(str(shard), attempt), timeout=60) or {}
    except Exception:  # noqa: BLE001 - the actor lost with its node: where it ran is unknown
        place = {}
    removed = _remove_on(ray, place.get("node_id"), place.get("temp_folder"))
    record = {"attempt": attempt, "node_id": place.get("node_id"), "host": place.get("host"), "cause": _cause(exc),
              "temp_folder": place.get("temp_folder"), "temp_folder_removed": removed}
    again = "; running it again" if attempt < MAX_ATTEMPTS else ""
    log(f"shard {shard}: attempt {attempt} on {place.get('host') or 'an unknown node'} "
        f"(node {str(place.get('node_id'))[:12]}) died: {record['cause']}{again}"
        + ("" if removed else f"; its temp folder {place.get('temp_folder')} was not removed (node gone)"))
    return record


def _remove(folder: str) -> bool:
    """Remove a shard attempt's temporary folder (only one this executor made)."""
    path = Path(folder)
    if not path.name.startswith(TEMP_PREFIX) or Path(tempfile.gettempdir()).resolve() != path.parent.resolve():
        return False
    shutil.rmtree(path, ignore_errors=True)
    return not path.exists()


def _remove_on(ray, node_id: str | None, folder: str | None) -> bool:
    """Remove ``folder`` on node ``node_id`` by a task pinned there; False when the node is gone or unknown."""
    if not node_id or not folder or not any(n.get("Alive") and n.get("NodeID") == node_id for n in ray.nodes()):
        return False
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    pinned = NodeAffinitySchedulingStrategy(node_id=node_id, soft=False)
    try:
        return bool(ray.get(ray.remote(_remove).options(scheduling_strategy=pinned, num_cpus=0).remote(folder),
                            timeout=120))
    except Exception:  # noqa: BLE001 - the node went while it ran
        return False


def _cause(exc: Exception) -> str:
    cause = getattr(exc, "cause", None) or exc
    return f"{cause.__class__.__name__}: {str(cause).strip().splitlines()[-1] if str(cause).strip() else ''}"

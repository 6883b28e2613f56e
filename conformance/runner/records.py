"""Run records: append-only JSONL, one line per Store, probe, checkpoint state and fault.

The one place records are written (:class:`RecordWriter`) and read (:func:`iter_records`
as dicts, the form scoring keeps; :func:`typed_records` as the models of
:mod:`conformance.contract.records`, whose JSON Schema is ``schema/run-record.schema.json``).

Every line is written whole and flushed at once; each scenario ends with an fsync, so a
kill leaves at most one torn last line, which readers skip and ``--resume`` cuts off.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import threading
from datetime import datetime, timezone
from pathlib import Path

from pydantic import ValidationError

from conformance.contract.records import RUN_RECORD, RecordModel
from conformance.errors import DriftError
from conformance.paths import output_error, write_atomic
from conformance.secrets import redact

LOCK_FILE = "run.lock"
"""The lock of a run folder; holds the holder's ``{"pid", "host", "started_at"}`` as JSON."""


class RecordsError(DriftError, ValueError):
    """A records file is damaged past its last line; the message names the file and the line."""


class RunLocked(DriftError, RuntimeError):
    """Another runner holds the run folder; the message names it (pid, host, start time)."""


class RunLock:
    """An exclusive lock on one run folder for the whole of a run (``flock`` on ``run.lock``).

    Two runners writing one records file (a CI retry resuming a run that is still going)
    would interleave their records for good; the second one is refused instead. The kernel
    drops the lock when its holder dies, however it dies, so a killed run never leaves a
    stale lock. Use as a context manager. A folder that holds nothing but the lock when
    it is released (a run refused before it wrote a record) is removed.

    Raises (from :meth:`acquire`):
        RunLocked: another process holds it.
    """

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.path = self.folder / LOCK_FILE
        self._handle = None
        self._created = False

    def acquire(self) -> "RunLock":
        self._created = not self.folder.exists()
        self.folder.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip()
            handle.close()
            raise RunLocked(f"run folder {self.folder} is already in use by another runner "
                            f"({_describe_holder(holder)}); wait for it to end, or stop it, then resume") from None
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                 "started_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}) + "\n")
        handle.flush()
        self._handle = handle
        return self

    def release(self) -> None:
        if self._handle is None:
            return
        try:
            if self._created and {p.name for p in self.folder.iterdir()} == {LOCK_FILE}:
                self.path.unlink()
                self.folder.rmdir()
        except OSError:
            pass
        finally:
            self._handle.close()  # closing drops the flock
            self._handle = None

    def __enter__(self) -> "RunLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def _describe_holder(text: str) -> str:
    try:
        holder = json.loads(text)
        return f"pid {holder['pid']} on host {holder['host']}, started {holder['started_at']}"
    except (ValueError, KeyError, TypeError):
        return "a runner that has not yet written its pid"


class RecordWriter:
    """Append records to ``path``; each line is flushed at once, fsynced on :meth:`sync`.
    A write the disk refuses (full, read-only) raises :class:`conformance.paths.OutputError`
    naming the file and the errno.

    A record is one of the models of :mod:`conformance.contract.records` (validated when it is
    built), or a mapping already in record form (copied from another records file), written
    as it is. Records are strict JSON (no NaN): a non-finite number raises ``ValueError``.
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = open(self.path, "a", encoding="utf-8")
        except OSError as exc:
            raise output_error("records", self.path, exc) from None
        self._lock = threading.Lock()  # scenarios stream concurrently with --concurrency

    def write(self, record: RecordModel | dict) -> None:
        text = (record.to_json() if isinstance(record, RecordModel)
                else json.dumps(record, sort_keys=True, ensure_ascii=False, allow_nan=False))
        # An adapter can echo a key it was given; records never hold one (conformance.secrets).
        line = redact(text) + "\n"
        with self._lock:
            try:
                self._handle.write(line)
                self._handle.flush()
            except OSError as exc:  # a full disk: the line is torn at worst, which readers skip
                raise output_error("records", self.path, exc) from None

    def sync(self) -> None:
        with self._lock:
            try:
                self._handle.flush()
                os.fsync(self._handle.fileno())
            except OSError as exc:
                raise output_error("records", self.path, exc) from None

    def close(self) -> None:
        if not self._handle.closed:
            self.sync()
            self._handle.close()


def iter_records(path: Path):
    """Yield the complete records of a run one at a time (a torn last line from a kill is
    skipped), so a caller can keep a compact form without holding every raw record."""
    with open(path, encoding="utf-8") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.endswith("\n"):
                break
            try:
                record = json.loads(raw)
            except ValueError as exc:
                raise RecordsError(f"{path}: line {number}: not a JSON record ({exc.__class__.__name__}: "
                                   f"{getattr(exc, 'msg', exc)}); only a torn last line is skipped. Restore the "
                                   "file or start a new run") from None
            if not isinstance(record, dict):
                raise RecordsError(f"{path}: line {number}: a record is a JSON object, got "
                                   f"{type(record).__name__}")
            yield record


def typed_records(path: Path, kinds: frozenset[str] | None = None):
    """Yield the complete records of a run (of ``kinds`` only, when given) as
    :data:`conformance.contract.records.RunRecord` models, records of earlier versions
    included (fields added since have defaults).

    Raises:
        RecordsError: a record is not of its kind's shape (file, line and field named).
    """
    for number, record in enumerate(iter_records(path), start=1):
        if kinds is not None and record.get("kind") not in kinds:
            continue
        try:
            yield RUN_RECORD.validate_python(record)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise RecordsError(f"{path}: line {number} (kind {record.get('kind')!r}): {where}: {first['msg']} "
                               f"({exc.error_count()} problem(s)); not a run record of this format") from None


def read_records(path: Path) -> list[dict]:
    """All complete records of a run (see :func:`iter_records`)."""
    return list(iter_records(path))


def keep_completed(path: Path) -> tuple[dict | None, set[tuple[str, int]]]:
    """Cut a run's records back to its finished scenarios, for ``--resume``.

    Returns (the ``run`` header record or None, the set of (scenario id, repeat) that have
    a ``scenario_done`` record). Rewrites ``path`` atomically (temporary file, fsync,
    rename) with the header and the records of finished scenarios only, so the records
    of a scenario the kill interrupted, and a torn last line, are dropped and rerun (and
    ``verdict`` records, which scoring the resumed run writes again).
    """
    records = read_records(path)
    header = next((r for r in records if r.get("kind") == "run"), None)
    done = {(r["scenario_id"], r.get("repeat", 1)) for r in records if r.get("kind") == "scenario_done"}
    # Verdicts are written when the run is scored, so a resumed run writes them anew.
    kept = [r for r in records if r.get("kind") == "run"
            or (r.get("kind") != "verdict" and (r.get("scenario_id"), r.get("repeat", 1)) in done)]
    write_atomic(path, "".join(json.dumps(record, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
                               for record in kept), what="records")
    return header, done


_STORE_KEYS = ("kind", "system", "scenario_id", "session_id", "repeat", "write_latency_ms", "usage", "error",
               "violations")
def compact(record: dict, shared: dict) -> dict:
    """A record as scoring keeps it in memory for the whole job, made small.

    Store records (one per system and session, the bulk of a long run) keep only what
    scoring reads, with interned keys and ids and shared usage/violation values; the
    session-id lists of state records share their strings. Other records are returned as
    they are. ``shared``: a dict the caller keeps for one job (one object per distinct
    usage dict or violation list). Peak memory then grows little with the number of
    sessions (``bench/runner_rss.py``).
    """
    kind = record.get("kind")
    if kind == "store":
        out = {}
        for key in _STORE_KEYS:
            if key in record:
                value = record[key]
                if isinstance(value, str):
                    value = sys.intern(value)
                elif isinstance(value, (dict, list)):
                    value = shared.setdefault(json.dumps(value, sort_keys=True), value)
                out[sys.intern(key)] = value
        return out
    if kind == "state" and record.get("stored_sessions"):
        record["stored_sessions"] = [sys.intern(s) for s in record["stored_sessions"]]
    return record

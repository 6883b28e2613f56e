"""Run records: append-only JSONL, one line per Store, probe, checkpoint state and fault.

Every line is written whole and flushed at once; each scenario ends with an fsync, so a
kill leaves at most one torn last line, which readers skip and ``--resume`` cuts off.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

from conformance.secrets import redact


class RecordWriter:
    """Append records to ``path``; each line is flushed at once, fsynced on :meth:`sync`.

    Records are strict JSON (no NaN): a non-finite number raises ``ValueError``.
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(self.path, "a", encoding="utf-8")
        self._lock = threading.Lock()  # scenarios stream concurrently with --concurrency

    def write(self, record: dict) -> None:
        # An adapter can echo a key it was given; records never hold one (conformance.secrets).
        line = redact(json.dumps(record, sort_keys=True, ensure_ascii=False, allow_nan=False)) + "\n"
        with self._lock:
            self._handle.write(line)
            self._handle.flush()

    def sync(self) -> None:
        with self._lock:
            self._handle.flush()
            os.fsync(self._handle.fileno())

    def close(self) -> None:
        if not self._handle.closed:
            self.sync()
            self._handle.close()


def iter_records(path: Path):
    """Yield the complete records of a run one at a time (a torn last line from a kill is
    skipped), so a caller can keep a compact form without holding every raw record."""
    with open(path, encoding="utf-8") as handle:
        for raw in handle:
            if not raw.endswith("\n"):
                break
            yield json.loads(raw)


def read_records(path: Path) -> list[dict]:
    """All complete records of a run (see :func:`iter_records`)."""
    return list(iter_records(path))


def keep_completed(path: Path) -> tuple[dict | None, set[tuple[str, int]]]:
    """Cut a run's records back to its finished scenarios, for ``--resume``.

    Returns (the ``run`` header record or None, the set of (scenario id, repeat) that have
    a ``scenario_done`` record). Rewrites ``path`` atomically (temporary file, fsync,
    rename) with the header and the records of finished scenarios only, so the records
    of a scenario the kill interrupted, and a torn last line, are dropped and rerun.
    """
    records = read_records(path)
    header = next((r for r in records if r.get("kind") == "run"), None)
    done = {(r["scenario_id"], r.get("repeat", 1)) for r in records if r.get("kind") == "scenario_done"}
    kept = [r for r in records if r.get("kind") == "run"
            or (r.get("scenario_id"), r.get("repeat", 1)) in done]
    tmp = Path(path).with_name(Path(path).name + ".resume-tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        for record in kept:
            handle.write(json.dumps(record, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
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

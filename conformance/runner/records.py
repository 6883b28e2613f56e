"""Run records: append-only JSONL, one line per Store and per probe."""

from __future__ import annotations

import json
import os
from pathlib import Path


class RecordWriter:
    """Append records to ``path``; each line is flushed at once, fsynced on :meth:`sync`.

    Records are strict JSON (no NaN): a non-finite number raises ``ValueError``.
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(self.path, "a", encoding="utf-8")

    def write(self, record: dict) -> None:
        self._handle.write(json.dumps(record, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n")
        self._handle.flush()

    def sync(self) -> None:
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        if not self._handle.closed:
            self.sync()
            self._handle.close()


def read_records(path: Path) -> list[dict]:
    """All complete records of a run (a torn last line from a kill is skipped)."""
    out = []
    with open(path, encoding="utf-8") as handle:
        for raw in handle:
            if not raw.endswith("\n"):
                break
            out.append(json.loads(raw))
    return out

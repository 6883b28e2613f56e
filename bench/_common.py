"""Small helpers shared by the bench scripts: the host line, percentiles, corpus counts."""

from __future__ import annotations

import math
import os
import platform
from pathlib import Path


def host_line() -> str:
    """One line naming the machine the figures were taken on (they mean nothing without it)."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        memory = float("nan")
    try:
        load = "load %.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        load = "load n/a"
    return (f"host: {os.cpu_count()} CPUs, {memory:.1f} GiB, {platform.machine()}, "
            f"Python {platform.python_version()}, {platform.system()} {platform.release()}; {load}")


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of an already sorted list."""
    if not sorted_values:
        return float("nan")
    rank = max(1, min(len(sorted_values), math.ceil(q / 100.0 * len(sorted_values))))
    return sorted_values[rank - 1]


def corpus_counts(fixtures: list[Path]) -> tuple[int, int]:
    """(sessions, probes) over ``fixtures``, read line by line without validating."""
    import json

    sessions = probes = 0
    for path in fixtures:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                # Cheap kind test before parsing: only checkpoints need their probes counted.
                obj = json.loads(line)
                kind = obj.get("kind") or obj.get("type")
                if kind == "session":
                    sessions += 1
                elif kind == "checkpoint":
                    probes += len(obj.get("probes", ()))
    return sessions, probes

"""Shards: one run split over machines by scenario (``--shard I/N``), merged back exactly.

The split is a pure function of the selection: the selected scenario ids are sorted and
scenario ``j`` (0-based position) goes to shard ``j mod N + 1``. Shards are numbered from 1
(``1/2`` and ``2/2``); a Kubernetes Indexed Job's 0-based ``JOB_COMPLETION_INDEX`` is passed as
``$((JOB_COMPLETION_INDEX + 1))/N`` (docs/scale-out.md).

The unit is the scenario, with all its ``--repeat`` passes: shards never share a scenario,
and each shard's result is a whole run over its scenarios (its noise floor pairs each
scenario's passes, as the unsharded run does). Round-robin over sorted ids keeps shards
within one scenario of each other in count, and, since ids sort by paradigm and horizon,
close in length too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from conformance.errors import DriftError

__all__ = ["Shard", "ShardSpecError", "shard_scenarios", "split"]

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
MAX_SHARDS = 10_000


class ShardSpecError(DriftError, ValueError):
    """A ``--shard`` value that is not ``I/N`` with 1 <= I <= N; the message shows the form."""


@dataclass(frozen=True, order=True)
class Shard:
    """Shard ``index`` of ``count`` (both 1-based: ``Shard(1, 2)`` is the first of two)."""

    index: int
    count: int

    def __post_init__(self):
        if not 1 <= self.count <= MAX_SHARDS:
            raise ShardSpecError(f"shard count {self.count}: must be between 1 and {MAX_SHARDS}")
        if not 1 <= self.index <= self.count:
            raise ShardSpecError(f"shard {self.index}/{self.count}: the index counts from 1 to the shard count "
                                 f"({self.count}); shards are numbered 1/{self.count} to {self.count}/{self.count}")

    @classmethod
    def parse(cls, text: str) -> "Shard":
        """``"2/3"`` -> ``Shard(2, 3)``.

        Raises:
            ShardSpecError: not of the form I/N, or I outside 1..N (``0/2``: shards count from 1).
        """
        match = _SPEC.match(str(text))
        if match is None:
            raise ShardSpecError(f"{str(text)[:40]!r}: expected I/N, the shard's number (from 1) and the "
                                 "number of shards, e.g. 1/2 and 2/2")
        return cls(int(match.group(1)), int(match.group(2)))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def shard_scenarios(scenario_ids: Sequence[str], shard: Shard) -> list[str]:
    """The ids of ``shard``'s scenarios, sorted: every ``count``-th of the sorted ids, from the
    ``index``-th (module docstring). Duplicated ids count once."""
    ordered = sorted(set(scenario_ids))
    return ordered[shard.index - 1::shard.count]


def split(fixtures: Sequence[Path], shard: Shard) -> list[Path]:
    """The fixture files (named ``<scenario id>.jsonl``) of ``shard``, in the order given."""
    mine = set(shard_scenarios([p.stem for p in fixtures], shard))
    return [p for p in fixtures if p.stem in mine]

"""The sealed-gold runner: stream sessions through the budget gate, probe at checkpoints.

One pass over each fixture: every session is read once, stored into every system,
and dropped as soon as the last ``Store`` returns (the hard budget gate, DRIFT
§5.1): the runner keeps no transcript text past that point. At each checkpoint
every system is flushed, then each probe goes through ``Retrieve`` only; the
hits are cut to the token budget and a deterministic reader answers from that
context alone. Gold is never read here (the oracle control reads its own).
"""

from __future__ import annotations

import fnmatch
import math
from datetime import datetime
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from conformance.answer.reader import answer_probe, build_context, context_tokens
from conformance.contract.corpus import fixture_files, iter_fixture, read_header
from conformance.contract.fixture import CheckpointLine, HeaderLine, SessionLine
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


class RunError(DriftError, RuntimeError):
    """A backend call failed mid-run; the message names scenario, session or probe, and the call."""


@dataclass
class Progress:
    """Callbacks for a progress display; all optional."""

    scenario_started: Callable[[str, int], None] = lambda scenario, sessions: None
    session_done: Callable[[], None] = lambda: None


@dataclass(frozen=True)
class Selection:
    """Which scenarios a run covers. Empty tuples mean "no filter"."""

    patterns: tuple[str, ...] = ()
    """Globs over scenario ids."""
    paradigms: tuple[str, ...] = ()
    horizons: tuple[str, ...] = ()
    """A scenario's horizon is the phase its trajectory ends in (short, medium, long)."""
    splits: tuple[str, ...] = ()
    include_holdout: bool = False
    """Holdout scenarios are left out unless asked for (published runs only)."""

    def describe(self) -> dict:
        return {"scenario_patterns": list(self.patterns), "paradigms": list(self.paradigms),
                "horizons": list(self.horizons), "splits": list(self.splits),
                "include_holdout": self.include_holdout}


def scenario_horizon(header: HeaderLine) -> str:
    return header.horizons[-1].name


def select_fixtures(fixtures_dir: Path, selection: Selection = Selection()) -> tuple[list[Path], list[str]]:
    """Fixture files the selection keeps, and the ids of holdout scenarios it left out."""
    kept, held_out = [], []
    for path in fixture_files(fixtures_dir):
        if selection.patterns and not any(fnmatch.fnmatchcase(path.stem, p) for p in selection.patterns):
            continue
        header = read_header(path)
        if selection.paradigms and header.paradigm not in selection.paradigms:
            continue
        if selection.horizons and scenario_horizon(header) not in selection.horizons:
            continue
        if selection.splits and not set(selection.splits) & set(header.splits):
            continue
        if header.holdout and not selection.include_holdout:
            held_out.append(header.scenario_id)
            continue
        kept.append(path)
    return kept, held_out


def run_scenario(path: Path, systems: list, writer: RecordWriter, config: RunConfig, namespace_prefix: str,
                 progress: Progress = Progress()) -> str:
    """Stream one fixture through every system; returns its scenario id.

    Raises:
        RunError: a backend call failed (the record file keeps everything before it).
    """
    header: HeaderLine | None = None
    namespace = scenario = ""
    for line in iter_fixture(path):
        if isinstance(line, HeaderLine):
            header, scenario = line, line.scenario_id
            namespace = f"{namespace_prefix}/{scenario}"
            progress.scenario_started(scenario, sum(p.sessions for p in line.horizons))
            for system in systems:
                _guard(system, f"scenario {scenario}: Reset", lambda s=system: s.reset(namespace))
        elif isinstance(line, SessionLine):
            for system in systems:
                outcome = _guard(system, f"scenario {scenario}, session {line.session_id}: Store",
                                 lambda s=system: s.store(namespace, line))
                writer.write({"kind": "store", "system": system.label, "scenario_id": scenario,
                              "session_id": line.session_id, "write_latency_ms": round(outcome.latency_ms, 3),
                              "usage": outcome.usage, "items_stored": outcome.items_stored,
                              "violations": [] if outcome.items_stored >= 0 else
                              [f"negative items_stored {outcome.items_stored}"], "error": None})
            # The budget gate: the transcript goes now. Nothing below may refer to it.
            del line
            progress.session_done()
        elif isinstance(line, CheckpointLine):
            _checkpoint(line, systems, writer, config, namespace, scenario, header)
            writer.sync()
    return scenario


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


def _hit_record(h) -> dict:
    text = h.text if h.in_budget else h.text[:OUT_OF_BUDGET_TEXT_CHARS]
    return {"rank": h.rank, "text": text, "text_chars": len(h.text),
            "score": h.score if math.isfinite(h.score) else None, "source_ids": list(h.source_ids),
            "timestamp": h.timestamp, "tokens": h.tokens, "in_budget": h.in_budget}


def _checkpoint(line: CheckpointLine, systems: list, writer: RecordWriter, config: RunConfig, namespace: str,
                scenario: str, header: HeaderLine | None) -> None:
    for system in systems:
        _guard(system, f"scenario {scenario}, checkpoint {line.checkpoint_id}: Flush",
               lambda s=system: s.flush(namespace, config.flush_timeout_s))
    for probe in line.probes:
        for system in systems:
            outcome = _guard(system, f"scenario {scenario}, probe {probe.probe_id}: Retrieve",
                             lambda s=system: s.retrieve(namespace, probe, config.k))
            context = build_context(outcome.hits[: config.k], config.budget_tokens, config.encoding)
            answer = answer_probe(probe, context)
            writer.write({
                "kind": "probe", "system": system.label, "scenario_id": scenario,
                "checkpoint_id": line.checkpoint_id, "horizon": line.horizon, "probe_id": probe.probe_id,
                "query": probe.query, "answer": answer, "provenance": system.provenance,
                "hits": [_hit_record(h) for h in context], "hits_returned": len(outcome.hits),
                "context_tokens": context_tokens(context), "read_latency_ms": round(outcome.latency_ms, 3),
                "usage": outcome.usage, "violations": contract_violations(outcome, config.k), "error": None,
            })


def _guard(system, what: str, call):
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 - re-raised with where it happened
        died = system.died()
        detail = f"{exc}" + (f"\n{died}" if died else "")
        raise RunError(f"{system.label}: {what} failed: {detail}") from exc


@dataclass
class RunSummary:
    scenarios: list[str] = field(default_factory=list)
    records_path: Path | None = None


def run_corpus(fixtures: list[Path], systems: list, records_path: Path, config: RunConfig, namespace_prefix: str,
               progress: Progress = Progress()) -> RunSummary:
    """Run every fixture in order; records go to ``records_path`` (appended)."""
    writer = RecordWriter(records_path)
    summary = RunSummary(records_path=records_path)
    try:
        for path in fixtures:
            summary.scenarios.append(run_scenario(path, systems, writer, config, namespace_prefix, progress))
    finally:
        writer.close()
    return summary

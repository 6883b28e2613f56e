"""The runner's audit ledger fed a committed fixture as a run feeds it: what the state audit
samples and schedules, without an adapter (for the audit tests)."""

from __future__ import annotations

from pathlib import Path

from conformance.contract.corpus import iter_fixture
from conformance.contract.fixture import CheckpointLine, HeaderLine, SessionLine
from conformance.runner.audit import MessageLedger

REPO = Path(__file__).resolve().parents[2]
#: The ``fallback_time`` of a checkpoint without probes (none of the committed ones).
FALLBACK = "2000-01-01T00:00:00Z"


def replay_ledger(scenario: str, **ledger_args) -> tuple[MessageLedger, list[tuple[list, list]]]:
    """``(the ledger after the whole fixture, [(checkpoint's real probes, its schedule)] in order)``;
    ``ledger_args`` go to :class:`MessageLedger` (``salt=...``)."""
    ledger, markers, out = MessageLedger(scenario_id=scenario, **ledger_args), {}, []
    for line in iter_fixture(REPO / "fixtures" / f"{scenario}.jsonl"):
        if isinstance(line, HeaderLine):
            markers = dict(line.markers or {})
        elif isinstance(line, SessionLine):
            ledger.add_session(line, markers.get(line.session_id))
        elif isinstance(line, CheckpointLine):
            audited = ledger.to_audit(line.checkpoint_id)
            out.append((line.probes, ledger.schedule(line.checkpoint_id, line.probes, audited, FALLBACK)))
    return ledger, out

"""Fail loud, not low: after Flush, what Store claimed must be findable (issue 16).

A memory that reports stored items of which nothing can be retrieved, or whose Flush stays
not ready past its timeout, would otherwise finish with a plausible low score and exit 0
(the quiet failure memorybench #66/#68 and mem0#5141 describe). Both become a ``contract``
fault naming system, scenario, checkpoint and check, so the run is incomplete (exit 2); the
other systems are still scored.

The findability check at a checkpoint: the system claims items (its Store replies'
``items_stored`` summed over the scenario, or its Snapshot's items, are above 0), and yet
every Retrieve of the checkpoint's probes returned no hit; then up to
:data:`MARKER_SAMPLE` stored sessions' markers (generated corpora) are retrieved as well.
Nothing back from any of them is the fault; without a marker to ask (imported data) the
check does not run, since a probe that shares no word with an honest keyword memory's
contents returns nothing too. The sessions sampled are ones the Snapshot
cites when the system has one (a selective memory need not keep the others). A memory that
keeps nothing and says so (``none``) claims no item; the controls are the instrument, not
systems under test, and are not checked (the oracle keeps no marker by design).
"""

from __future__ import annotations

import hashlib

from conformance.contract.fixture import Probe

MARKER_SAMPLE = 3
"""Stored sessions whose marker is retrieved when no probe of a checkpoint found anything."""


def flush_fault(system, ready: bool | None, timeout_s: float) -> str | None:
    """Why a Flush reply is a fault, or None. ``ready`` False is a fault only for a system that
    claims a readiness signal (Describe ``flush_signal``): without one, False is how it says so."""
    if ready is False and (getattr(system, "describe", None) or {}).get("capabilities", {}).get("flush_signal"):
        return (f"findability check: Flush stayed not ready past its {timeout_s:g} s timeout, though the system "
                "claims a readiness signal (flush_signal): what it stored cannot be probed")
    return None


def sampled_sessions(session_ids: list[str], seed: str, n: int = MARKER_SAMPLE) -> list[str]:
    """``n`` of ``session_ids``, chosen by a hash of (seed, id): deterministic, spread over the stream."""
    ranked = sorted(session_ids, key=lambda s: hashlib.blake2b(f"{seed}/{s}".encode(), digest_size=8).digest())
    return sorted(ranked[:n], key=session_ids.index)


def findability_fault(system, namespace: str, claimed: int, held: dict, hits_seen: int,
                      probes_asked: int, markers: dict[str, str], streamed: list[str], asker_of: dict[str, str],
                      asked_at: str, k: int, seed: str) -> str | None:
    """The fault message when ``system`` claims items but nothing comes back, else None.

    ``claimed``: items its Store replies reported in this scenario so far; ``held``: its memory
    state at this checkpoint (``items``, ``stored_sessions``: None without Snapshot); ``hits_seen``: hits returned to the
    checkpoint's ``probes_asked`` probes. Raises what ``system.retrieve`` raises (the caller
    records it as that system's fault).
    """
    snapshot_items = held.get("items")
    if getattr(system, "kind", None) == "control" or max(claimed, snapshot_items or 0) <= 0 or hits_seen > 0:
        return None
    if held.get("method") == "marker_probe" and held.get("stored_sessions"):
        return None  # the state's marker probes found stored sessions already
    cited = set(held.get("stored_sessions") or streamed)
    with_marker = [s for s in streamed if markers.get(s) and s in cited]
    sample = sampled_sessions(with_marker, seed)
    if not sample:
        return None  # no marker to ask (imported data): a probe a keyword memory cannot match proves nothing
    for session_id in sample:
        probe = Probe(probe_id=f"findable-{session_id}", asked_by=asker_of.get(session_id, "harness"),
                      query=markers[session_id], asked_at=asked_at)
        if system.retrieve(namespace, probe, k).hits:
            return None
    claims = f"Store claimed {claimed} items" + (f", Snapshot lists {snapshot_items}" if snapshot_items else "")
    tried = f"{probes_asked} probes and the markers of {len(sample)} stored sessions"
    return (f"findability check: {claims}, yet Retrieve returned no hit for any of {tried} after Flush: "
            "a memory that keeps nothing it reports (not a low score)")

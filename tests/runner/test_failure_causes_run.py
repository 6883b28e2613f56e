"""Failure causes from real runs: crafted in-process memories, each failing in one known way,
get that cause in result.json (``systems.<s>.failure_causes``) and no cause of another stage.

The hand-computed goldens of every cause, precedence included, are in
tests/scoring/test_failure_causes.py; this file checks the runner records what they need.
"""

from __future__ import annotations

import sys
from pathlib import Path

from conformance.backend.systems import RetrievedHit
from conformance.contract.corpus import Selection
from conformance.runner import job

sys.path.insert(0, str(Path(__file__).parent))
import dishonest  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = ("cod-short-001", "ua-short-001")


class MissesEvidence(dishonest.Overlap):
    """Stores everything (honest Snapshot) and retrieves the honest hits minus every gold evidence
    message (the test reads gold): the read path misses exactly what matters."""

    def __init__(self, label):
        super().__init__(label)
        self.evidence = {e for g in dishonest._gold(SCENARIOS).values() for p in g.probes for e in p.evidence}

    def hits(self, namespace, probe, k):
        return [h for h in super().hits(namespace, probe, 3 * k) if h.source_ids[0] not in self.evidence][:k]


class ForgetsAtFirstCheckpoint(dishonest.Overlap):
    """Drops everything stored before the first checkpoint once the next session arrives."""

    def __init__(self, label):
        super().__init__(label)
        self.snapshots: dict[str, int] = {}

    def snapshot(self, namespace):
        self.snapshots[namespace] = self.snapshots.get(namespace, 0) + 1
        return super().snapshot(namespace)

    def store(self, namespace, session):
        if self.snapshots.get(namespace) == 1:
            self.docs[namespace] = []
            self.snapshots[namespace] = 2
        return super().store(namespace, session)


class PadsTheBudget(dishonest.Overlap):
    """Ranks first one hit holding the oldest stored messages, far past the budget: the honest hits
    behind it are retrieved but cut by the budget."""

    def hits(self, namespace, probe, k):
        docs = self.docs[namespace][:200]
        pad = RetrievedHit("\n".join(text for _, _, text, _ in docs), 2.0, tuple(mid for mid, *_ in docs), docs[-1][3])
        return [pad, *super().hits(namespace, probe, k)[: k - 1]]


class CitesNothing(dishonest.Overlap):
    """Honest hits with their provenance stripped."""

    def hits(self, namespace, probe, k):
        return [RetrievedHit(h.text, h.score, (), h.timestamp) for h in super().hits(namespace, probe, k)]


class CrashesOnRetrieve(dishonest.Overlap):
    """Every Retrieve fails."""

    def retrieve(self, namespace, probe, k):
        raise RuntimeError("crafted crash")


def test_each_crafted_memory_gets_its_cause(tmp_path, monkeypatch):
    crafted = [dishonest.Amnesiac("amnesiac"), MissesEvidence("misses"), ForgetsAtFirstCheckpoint("forgets"),
               PadsTheBudget("pads"), CitesNothing("cites-nothing"), CrashesOnRetrieve("crashes")]
    monkeypatch.setattr(job, "open_systems", lambda *a, **k: dishonest.systems(*crafted))
    doc = job.run_job([s.label for s in crafted], REPO / "fixtures", REPO / "gold", records_dir=tmp_path / "runs",
                      selection=Selection(patterns=SCENARIOS), n_boot=20)

    def causes(system):
        found = doc.systems[system].failure_causes
        assert found is not None and found.basis == (None if system == "crashes" else "snapshot")
        return {c for c, n in found.counts.items() if n}

    assert causes("amnesiac") == {"correct", "not_stored"}
    assert causes("misses") <= {"correct", "not_retrieved", "reader"} and "not_retrieved" in causes("misses")
    forgets = doc.systems["forgets"].failure_causes.counts
    assert forgets["lost"] > 0 and forgets["not_stored"] == 0
    assert "out_of_budget" in causes("pads") and not causes("pads") & {"not_stored", "lost"}
    assert causes("cites-nothing") <= {"correct", "no_provenance", "reader"} and "no_provenance" in causes("cites-nothing")
    assert causes("crashes") == {"fault"}
    # The honest memory's causes sum to its scored probes, one each.
    honest = doc.systems["reference-compressor"].failure_causes
    assert sum(honest.counts.values()) == sum(sum(t.values()) for t in honest.by_probe_type.values())

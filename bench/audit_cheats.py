"""What each dishonest adapter of tests/runner/dishonest.py earned before the audits, and earns now.

    python bench/audit_cheats.py            # the ci split (8 short scenarios), in process

Per cheat: the figure it inflated under the old rule (the Snapshot taken on trust, every cited
id credited, the adapter's hit times read) and under the audits, beside the honest memory whose
answers it copies. Prints the host line first; figures are never asserted here (the tests are
tests/runner/test_audits.py).
"""

from __future__ import annotations

import copy
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "runner"))

import dishonest  # noqa: E402
from _common import host_line  # noqa: E402

from conformance.runner import job  # noqa: E402
from conformance.contract.corpus import Selection, select_fixtures  # noqa: E402

REPO = HERE.parent
AUDIT = job.apply_state_audit


def run(*systems, audit=True):
    job.open_systems = lambda *a, **k: dishonest.systems(*systems)
    job.apply_state_audit = AUDIT if audit else (lambda records: None)
    with tempfile.TemporaryDirectory() as records:
        doc = job.run_job([s.label for s in systems], REPO / "fixtures", REPO / "gold", records_dir=Path(records),
                          selection=Selection(splits=("ci",)), n_boot=200)
        extra = {s.label: (dishonest.naive_recall(doc, s.label, SCENARIOS),
                           dishonest.naive_accuracy(doc, s.label, SCENARIOS)) for s in systems}
    return doc, extra


def fig(doc, label, metric):
    value = doc.systems[label].metrics[metric].value
    return "n/a" if value is None else f"{value:.3f}"


def main() -> None:
    print(host_line())
    metrics = ("accuracy", "recall_at_k", "selectivity", "storage_tokens_per_session", "tes", "drift_c")
    print(f"{'system':24} {'rule':7} " + " ".join(f"{m[:14]:>14}" for m in metrics))
    cases = [("understated Snapshot", dishonest.Overlap("honest"), dishonest.UnderstatedSnapshot("understated", dishonest.signal_sessions(SCENARIOS))),
             ("cites every message", dishonest.Overlap("honest"), dishonest.CitesEverything("cites-all")),
             ("packed hit", dishonest.PacksWithinBudget("packed-honest"), dishonest.PacksEverything("packed")),
             ("dated now, stores nothing", None, dishonest.DatesNothingNow("dated-now"))]
    for title, honest, cheat in cases:
        print(f"-- {title}")
        systems = [s for s in (honest, cheat) if s is not None]
        before, naive = run(*systems, audit=False)
        after, _ = run(*[copy.deepcopy(s) for s in systems])
        for label in [s.label for s in systems] + ([] if honest is not None else ["none"]):
            for rule, doc in (("before", before), ("after", after)):
                cells = [fig(doc, label, m) for m in metrics]
                if rule == "before" and label in naive:
                    # The old rules: every cited id credited; the adapter's hit times read.
                    cells[1] = f"{naive[label][0]:.3f}"
                    cells[0] = f"{naive[label][1]:.3f}"
                print(f"{label:24} {rule:7} " + " ".join(f"{c:>14}" for c in cells))


SCENARIOS = tuple(p.stem for p in select_fixtures(REPO / "fixtures", Selection(splits=("ci",)))[0])

if __name__ == "__main__":
    main()

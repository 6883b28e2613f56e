"""The shortcut audit (``drift-conformance audit-shortcuts``): cheap strategies must not score.

A conformance number means something only if no cheap strategy can earn it. This audit runs
the ``kind: shortcut`` adapters (``adapters/shortcut-*``: recency only, a no-storage prior,
store-everything with a read-time dump, frequency-based forgetting learned across scenarios)
beside the reference compressor through the ordinary runner, and a tier classifier:
TF-IDF over word 1-2-grams and logistic regression (scikit-learn, the ``[audit]`` extra),
trained to tell noise sessions from signal and soft ones on a corpus generated with another
seed, scored (ROC AUC) on the audited corpus, pooled and per paradigm.

The corpus fails (:func:`verdict`) when a shortcut's DRIFT-C point estimate exceeds the
reference compressor's, when the upper bound of the paired difference (shortcut minus
reference, cluster bootstrap) exceeds :data:`MARGIN`, or when the classifier's pooled AUC
exceeds :data:`AUC_LIMIT`. The audit holds no timings, so the same corpus gives the same file.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from conformance.contract.corpus import fixture_files, iter_fixture, read_gold
from conformance.contract.fixture import HeaderLine, SessionLine

SHORTCUTS = ("shortcut-recency", "shortcut-prior", "shortcut-dump", "shortcut-frequency")
REFERENCE = "reference-compressor"
AUC_LIMIT = 0.75
"""Highest pooled held-out ROC AUC the noise-vs-signal classifier may reach (DESIGN, validity)."""
MARGIN = 0.02
"""Highest upper bound of a shortcut's paired DRIFT-C difference to the reference compressor."""
TRAIN_SEED = 7
"""Seed of the corpus the classifier is trained on (the audited corpus is seed 42)."""


def sessions(fixtures_dir: Path, gold_dir: Path, scenarios: set[str] | None = None):
    """``(text, is_event, paradigm)`` per session of the corpus (``scenarios``: only those ids).

    ``is_event``: gold says signal or soft. Text: the messages' texts joined by new lines.
    """
    out = []
    for path in fixture_files(fixtures_dir):
        if scenarios is not None and path.stem not in scenarios:
            continue
        tiers = read_gold(Path(gold_dir) / f"{path.stem}.json").session_tiers
        paradigm = None
        for line in iter_fixture(path):
            if isinstance(line, HeaderLine):
                paradigm = line.paradigm
            elif isinstance(line, SessionLine):
                out.append(("\n".join(m.text for m in line.messages), tiers[line.session_id] != "noise", paradigm))
    return out


def classifier_audit(train: list, test: list) -> dict:
    """ROC AUC of a TF-IDF (1-2-gram) logistic regression trained on ``train``, scored on ``test``.

    Both are :func:`sessions` lists. Returns ``{"auc": float, "by_paradigm": {p: float}, "n_train",
    "n_test", "model"}``; an AUC is None where the test side has one class only.

    Raises:
        ImportError: scikit-learn is missing (``pip install 'drift-conformance[audit]'``).
    """
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True, max_features=200_000)
    x_train = vectorizer.fit_transform([t for t, _, _ in train])
    model = LogisticRegression(max_iter=2000, C=4.0).fit(x_train, [y for _, y, _ in train])
    scores = model.predict_proba(vectorizer.transform([t for t, _, _ in test]))[:, 1]
    labels = [y for _, y, _ in test]

    def auc(idx: list[int]) -> float | None:
        ys = [labels[i] for i in idx]
        return round(float(roc_auc_score(ys, [scores[i] for i in idx])), 4) if len(set(ys)) == 2 else None
    by: dict[str, list[int]] = defaultdict(list)
    for i, (_, _, paradigm) in enumerate(test):
        by[paradigm].append(i)
    return {"auc": auc(list(range(len(test)))), "by_paradigm": {p: auc(ix) for p, ix in sorted(by.items())},
            "n_train": len(train), "n_test": len(test),
            "model": "TF-IDF word 1-2-grams (min_df 2, sublinear tf) + logistic regression (C 4), "
                     "noise vs signal+soft"}


def _metric(system, name: str):
    metric = system.metrics.get(name) if system is not None else None
    return (metric.value, list(metric.ci95) if metric is not None and metric.ci95 else None) if metric else (None, None)


def shortcut_table(doc, shortcuts=SHORTCUTS, reference: str = REFERENCE) -> dict:
    """Per system of ``doc`` (a result run with ``baseline_system=reference``): DRIFT-C with its
    interval and the paired difference to the reference. Shapes:
    ``{system: {"drift_c", "drift_c_ci95", "vs_reference", "vs_reference_ci95"}}``."""
    table = {}
    for label in (reference, "oracle", "none", *shortcuts):
        system = doc.systems.get(label)
        if system is None:
            continue
        value, ci = _metric(system, "drift_c")
        row = {"drift_c": value, "drift_c_ci95": ci}
        if label != reference:
            diff = system.paired_vs_baseline.get("drift_c")
            row["vs_reference"] = diff.value if diff is not None else None
            row["vs_reference_ci95"] = list(diff.ci95) if diff is not None and diff.ci95 else None
        table[label] = row
    return table


def summary_lines(table: dict, classifier: dict) -> list[str]:
    """What ``audit-shortcuts`` prints: one line per system of :func:`shortcut_table` (DRIFT-C,
    its interval, the paired difference to the reference) and the classifier's AUC, every
    figure to 3 decimals and ``n/a`` where undefined."""
    def num(value, sign=""):
        return "n/a" if value is None else f"{value:{sign}.3f}"

    def interval(ci, sign=""):
        return "" if not ci else f" [{num(ci[0], sign)}, {num(ci[1], sign)}]"

    out = []
    for name, row in table.items():
        diff = "" if row.get("vs_reference") is None else \
            f"  vs reference {num(row['vs_reference'], '+')}{interval(row.get('vs_reference_ci95'), '+')}"
        out.append(f"{name:20} DRIFT-C {num(row['drift_c'])}{interval(row.get('drift_c_ci95'))}{diff}")
    parts = ", ".join(f"{k} {num(v)}" for k, v in (classifier.get("by_paradigm") or {}).items())
    out.append(f"tier classifier AUC {num(classifier.get('auc'))}" + (f" (by paradigm {parts})" if parts else ""))
    return out


def verdict(table: dict, classifier: dict, shortcuts=SHORTCUTS, reference: str = REFERENCE) -> list[str]:
    """The rules the corpus breaks (empty: it passes); see the module docstring."""
    problems = []
    ref = table.get(reference, {}).get("drift_c")
    if ref is None:
        problems.append(f"{reference} has no DRIFT-C: the shortcuts cannot be judged")
    for name in shortcuts:
        row = table.get(name)
        if row is None or row.get("drift_c") is None:
            problems.append(f"{name} has no DRIFT-C")
            continue
        if ref is not None and row["drift_c"] > ref:
            problems.append(f"{name} DRIFT-C {row['drift_c']:.3f} exceeds the reference compressor's {ref:.3f}")
        ci = row.get("vs_reference_ci95")
        if ci is not None and ci[1] > MARGIN:
            problems.append(f"{name}: the upper bound of its paired DRIFT-C difference to the reference "
                            f"compressor is {ci[1]:+.3f} (> {MARGIN:+.2f})")
    auc = classifier.get("auc")
    if auc is None or auc > AUC_LIMIT:
        problems.append(f"the tier classifier tells noise from signal with AUC {auc} (> {AUC_LIMIT})"
                        if auc is not None else "the tier classifier has no AUC (one class only)")
    return problems


def ledger_entry(result: dict) -> dict:
    """What the ledger records of a library run: the verdict, DRIFT-C per system, the AUCs."""
    return {"fixtures_hash": result["fixtures_hash"], "passed": result["passed"], "problems": result["problems"],
            "drift_c": {name: row["drift_c"] for name, row in result["systems"].items()},
            "vs_reference_ci95": {name: row.get("vs_reference_ci95") for name, row in result["systems"].items()
                                  if name != REFERENCE},
            "classifier_auc": result["classifier"]["auc"],
            "classifier_auc_by_paradigm": result["classifier"]["by_paradigm"],
            "command": "drift-conformance audit-shortcuts"}


def write(path: Path, doc: dict) -> None:
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")

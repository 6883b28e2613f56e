"""The CI gate's comparison of a run with a committed baseline: plain data, no exit codes.

Two modes, chosen by the baseline's ``fixtures_hash`` against the result's
``selection_hash``:

- **regression** (same corpus): for a deterministic system any gold item that passed in
  the baseline and fails now is a regression (so a swap, one item failing while another
  recovers, is caught though every mean is unchanged). For a stochastic system (Describe
  says not deterministic, or answers differed across ``--repeat``) the gated metric is the
  item pass rate over the baseline's cells: a regression when the cluster-bootstrap 95%
  interval of the paired difference (run minus baseline, item by item, scenarios
  resampled) lies wholly below zero. Any change of a cell's ``gold_total``, a vanished
  cell or system, and a canary leak are *breaches*.
- **bless** (the gated scenarios changed): the candidate baseline the change commits
  must equal this run exactly, and against the old baseline a vanished system or cell or
  a shrinking ``gold_total`` is a breach (dropping or hiding scenarios that fail); the
  scenarios whose files did not change (``scenario_hashes``) are still compared item by
  item, as in regression mode, so one edited fixture cannot hide regressions elsewhere.

A breach or regression passes only when a justification in the baseline names its key.
A config mismatch, an incomplete or vacuous run, holdout in the run, or a corpus change
with no re-blessed baseline is *inconclusive*; its reason names the command that re-blesses.
With no baseline at all yet (a repository's first pull request with the gate,
:func:`first_run`) the verdict is *no-baseline*: exit 0, and the reason says how to make one.
:func:`exit_code` is the one place that maps a verdict to an exit code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from conformance.contract.result import ResultDocument
from conformance.gate.baseline import (
    DEFAULT_BASELINE, Baseline, BaselineError, adapter_specs, baseline_from_result, dumps, gate_config,
    rebless_command, result_corpus_version,
)
from conformance.scoring.bootstrap import DEFAULT_N_BOOT, paired_diff_ci

PASS, REGRESSION, INCONCLUSIVE, NO_BASELINE = "pass", "regression", "inconclusive", "no-baseline"
#: No baseline yet passes: a repository's first pull request with the gate cannot be red for it.
EXIT_CODES = {PASS: 0, REGRESSION: 1, INCONCLUSIVE: 2, NO_BASELINE: 0}


@dataclass(frozen=True)
class Finding:
    """One difference. ``key`` is what a justification must name to let it pass."""

    kind: str
    """``newly_failed``, ``pass_rate_drop`` (regressions); ``gold_total``, ``vanished_cell``,
    ``vanished_system``, ``canary_leak``, ``baseline_mismatch``, ``determinism`` (breaches); ``recovered``
    (an improvement, never gating)."""
    key: str
    detail: str
    justification: str | None = None
    """The baseline's written reason when one names ``key`` (the finding then passes)."""


@dataclass
class Comparison:
    verdict: str
    """``pass``, ``regression``, ``inconclusive`` or ``no-baseline``."""
    mode: str
    """``regression`` (same corpus), ``bless`` (the gated scenarios changed) or ``none``."""
    breaches: list[Finding] = field(default_factory=list)
    regressions: list[Finding] = field(default_factory=list)
    improvements: list[Finding] = field(default_factory=list)
    reason: str | None = None
    """Why the verdict is inconclusive, or a one-line summary otherwise."""
    cells: list[dict] = field(default_factory=list)
    """Per system and cell: baseline and run failed counts and accuracy, for the table."""

    def to_dict(self) -> dict:
        def findings(items: list[Finding]) -> list[dict]:
            return [f.__dict__ for f in items]

        return {"verdict": self.verdict, "mode": self.mode, "reason": self.reason, "exit_code": exit_code(self),
                "breaches": findings(self.breaches), "regressions": findings(self.regressions),
                "improvements": findings(self.improvements), "cells": self.cells}


def exit_code(comparison: Comparison) -> int:
    """0 pass or no baseline yet, 1 regression (an unjustified breach included), 2 inconclusive or error."""
    return EXIT_CODES[comparison.verdict]


def inconclusive(reason: str, mode: str = "none") -> Comparison:
    return Comparison(verdict=INCONCLUSIVE, mode=mode, reason=reason)


def _vacuity(result: ResultDocument) -> str | None:
    """Why a result cannot be gated at all, or None."""
    if not result.complete:
        return "the run is incomplete (" + ("; ".join(result.errors[:3]) or "stopped early") + ")"
    config = gate_config(result)
    if config.include_holdout:
        return "the run scored holdout scenarios; the CI gate never uses them (drop --include-holdout)"
    if result.receipt.selection_hash is None:
        return "the result has no selection_hash (written before the CI gate existed); rerun it"
    if not config.adapters:
        return "the run gates no system (only controls ran)"
    for label in config.adapters:
        view = result.systems[label].gate
        if view is None:
            return f"system {label!r} has no gate view (a result older than the CI gate); rerun it"
        if not any(cell.gold_total for cell in view.cells.values()):
            return f"system {label!r} was asked no gold item: nothing to gate"
    return None


def _config_mismatch(baseline: Baseline, result: ResultDocument) -> str | None:
    mine, theirs = baseline.config.model_dump(), gate_config(result).model_dump()
    differing = [f"{k}: baseline {mine[k]!r}, run {theirs[k]!r}" for k in sorted(mine) if mine[k] != theirs[k]]
    if differing:
        return ("the run's settings differ from the baseline's, so the two are not comparable: "
                + "; ".join(differing))
    return None


def _justify(findings: list[Finding], baseline: Baseline, *more: Baseline | None) -> list[Finding]:
    reasons = {j.breach: j.reason for b in (baseline, *more) if b is not None for j in b.justifications}
    return [Finding(f.kind, f.key, f.detail, reasons.get(f.key)) for f in findings]


def _pass_rate(cell) -> float | None:
    """Share of the cell's gold items that passed (any probe type, abstention included)."""
    if cell is None or not cell.gold_total:
        return None
    return round((cell.gold_total - cell.gold_failed) / cell.gold_total, 4)


def _cell_rows(baseline: Baseline, result: ResultDocument | None) -> list[dict]:
    rows = []
    for label, system in sorted(baseline.systems.items()):
        view = result.systems[label].gate if result is not None and label in result.systems else None
        keys = sorted(set(system.cells) | set(view.cells if view else {}))
        for key in keys:
            old, new = system.cells.get(key), view.cells.get(key) if view else None
            rows.append({"system": label, "cell": key,
                         "baseline_failed": None if old is None else old.gold_failed,
                         "baseline_total": None if old is None else old.gold_total,
                         "run_failed": None if new is None else new.gold_failed,
                         "run_total": None if new is None else new.gold_total,
                         "baseline_pass_rate": _pass_rate(old), "run_pass_rate": _pass_rate(new)})
    return rows


def _leaks(result: ResultDocument, labels: list[str]) -> list[Finding]:
    out = []
    for label in labels:
        for key, cell in sorted(result.systems[label].gate.cells.items()):
            for item in cell.leaks:
                out.append(Finding("canary_leak", f"canary_leak:{label}:{item}",
                                   f"{label} revealed the private value of canary {item} ({key})"))
    return out


def _scenario(item: str) -> str:
    return item.rsplit("/", 1)[0]


def _stochastic(label: str, baseline: Baseline, result: ResultDocument, n_boot: int, seed: int,
                keep=lambda item: True) -> list[Finding]:
    """Paired item pass-rate difference (run minus baseline) over the baseline's cells
    (items for which ``keep(item)`` holds)."""
    old = baseline.systems[label].cells
    view = result.systems[label].gate
    items, before, after = [], [], []
    for key, cell in sorted(view.cells.items()):
        if key not in old:
            continue
        was_failed, now_failed = set(old[key].failed), set(cell.failed)
        for item in cell.items:
            if not keep(item):
                continue
            items.append(item)
            before.append(0.0 if item in was_failed else 1.0)
            after.append(0.0 if item in now_failed else 1.0)
    if not items:
        return []
    value, lo, hi = paired_diff_ci([_scenario(i) for i in items], np.array(after), np.array(before),
                                   n_boot=n_boot, seed=seed)
    if hi is not None and hi < 0:
        return [Finding("pass_rate_drop", f"pass_rate_drop:{label}",
                        f"{label} (stochastic) passes fewer gold items: paired difference {value:+.4f} "
                        f"[{lo:+.4f}, {hi:+.4f}] over {len(items)} items, wholly below zero")]
    return []


def _item_changes(label: str, baseline: Baseline, result: ResultDocument, n_boot: int, seed: int,
                  keep=lambda item: True) -> tuple[list[Finding], list[Finding]]:
    """(regressions, improvements) item by item over the cells both sides have."""
    system, view = baseline.systems[label], result.systems[label].gate
    deterministic = system.deterministic and view.deterministic
    regressions, improvements = [], []
    for key, old in sorted(system.cells.items()):
        new = view.cells.get(key)
        if new is None:
            continue
        asked = {i for i in new.items if keep(i)}
        was, now = set(old.failed) & asked, set(new.failed) & asked
        for item in sorted(now - was):
            finding = Finding("newly_failed", f"newly_failed:{label}:{item}",
                              f"{label} {key}: {item} passed in the baseline and fails now")
            # A stochastic system's single flips are noise; its gate is the paired interval.
            (regressions if deterministic else improvements).append(finding)
        for item in sorted(was - now):
            improvements.append(Finding("recovered", f"recovered:{label}:{item}",
                                        f"{label} {key}: {item} failed in the baseline and passes now"))
    if not deterministic:
        regressions.extend(_stochastic(label, baseline, result, n_boot, seed, keep))
    return regressions, improvements


def _determinism(label: str, baseline: Baseline, result: ResultDocument) -> list[Finding]:
    """A breach when the baseline gated ``label`` as deterministic and this run does not.

    A deterministic system is gated item by item, a stochastic one by the paired pass-rate
    interval, which a loss confined to one or two of the gated scenarios never pushes wholly below
    zero: turning Describe's ``deterministic`` off in the same change as a regression would
    otherwise pass it (``bench/attacks/determinism_dodge``). The change of rule is reviewed on the
    base branch like any other: a justification naming ``determinism:<label>`` there."""
    view = result.systems[label].gate
    if not baseline.systems[label].deterministic or view.deterministic:
        return []
    return [Finding("determinism", f"determinism:{label}",
                    f"{label} was gated as deterministic by the baseline and is not now ({view.determinism}): "
                    "its gold items would be judged by the paired interval instead of one by one")]


def _same_corpus(baseline: Baseline, result: ResultDocument, n_boot: int, seed: int) -> Comparison:
    breaches, regressions, improvements = [], [], []
    for label, system in sorted(baseline.systems.items()):
        view = result.systems[label].gate
        for key, old in sorted(system.cells.items()):
            new = view.cells.get(key)
            if new is None:
                breaches.append(Finding("vanished_cell", f"vanished_cell:{label}:{key}",
                                        f"{label} {key}: {old.gold_total} gold items in the baseline, none in the run"))
            elif new.gold_total != old.gold_total:
                breaches.append(Finding("gold_total", f"gold_total:{label}:{key}:{old.gold_total}->{new.gold_total}",
                                        f"{label} {key}: gold_total {old.gold_total} -> {new.gold_total}"))
        for key in sorted(set(view.cells) - set(system.cells)):
            breaches.append(Finding("gold_total", f"gold_total:{label}:{key}:0->{view.cells[key].gold_total}",
                                    f"{label} {key}: a cell the baseline does not have "
                                    f"({view.cells[key].gold_total} gold items)"))
        breaches.extend(_determinism(label, baseline, result))
        worse, better = _item_changes(label, baseline, result, n_boot, seed)
        regressions += worse
        improvements += better
    breaches.extend(_leaks(result, sorted(baseline.systems)))
    return Comparison(verdict=PASS, mode="regression", breaches=breaches, regressions=regressions,
                      improvements=improvements)


def _major(version: str | None) -> str | None:
    return version.split(".", 1)[0] if version else None


def _differing_cells(a: Baseline, b: Baseline) -> list[str]:
    def cell(doc: Baseline, label: str, key: str):
        system = doc.systems.get(label)
        return system.cells.get(key) if system else None

    keys = {(label, key) for doc in (a, b) for label, system in doc.systems.items() for key in system.cells}
    return sorted(f"{label}/{key}" for label, key in keys if cell(a, label, key) != cell(b, label, key))


def _suite(result: ResultDocument) -> str:
    version = (result.receipt.versions or {}).get("drift-conformance")
    return f"drift-conformance {version}" if version else "drift-conformance"


def _mismatch(result: ResultDocument, candidate: Baseline) -> list[Finding]:
    """A ``baseline_mismatch`` breach when the baseline a change commits is not this run's."""
    expected = baseline_from_result(result, candidate.justifications)
    if dumps(expected) == dumps(candidate):
        return []
    differing = _differing_cells(expected, candidate)
    shown = ", ".join(differing[:8]) + (f" and {len(differing) - 8} more" if len(differing) > 8 else "")
    return [Finding("baseline_mismatch", "baseline_mismatch",
                    "the committed baseline does not equal this run ("
                    + (f"cells differ: {shown}" if differing else "settings or determinism differ")
                    + "); rerun with --update-baseline and commit the file it writes")]


def _changed_corpus(baseline: Baseline, result: ResultDocument, candidate: Baseline | None,
                    n_boot: int, seed: int, path: str = DEFAULT_BASELINE) -> Comparison:
    old_hash, new_hash = baseline.fixtures_hash[:12], result.receipt.selection_hash[:12]
    unblessed = candidate is None or candidate.fixtures_hash != result.receipt.selection_hash
    old_version, new_version = baseline.corpus_version, result_corpus_version(result)
    command = rebless_command(baseline.config, adapter_specs(result), path)
    how = (f"re-bless with `{command}` ({_suite(result)}, this run's version) and commit {path} in this change; "
           "the gate then checks it against this run")
    if unblessed and new_version and _major(old_version) != _major(new_version):
        return inconclusive(
            f"corpus changed from {old_version or 'an unversioned corpus (1.x)'} to {new_version}: every score moves, "
            f"so the baseline must be re-blessed: {how} (README, upgrading the corpus)", mode="bless")
    if unblessed:
        return inconclusive(
            f"the gated scenarios changed (fixtures_hash {old_hash}... -> {new_hash}...; corpus "
            f"{old_version or 'unversioned'} -> {new_version or 'unversioned'}) but the baseline was not "
            f"re-blessed: {how}", mode="bless")
    breaches = _mismatch(result, candidate)
    for label, system in sorted(baseline.systems.items()):
        if label not in candidate.systems:
            breaches.append(Finding("vanished_system", f"vanished_system:{label}",
                                    f"{label} is gated by the old baseline and absent from the new one"))
            continue
        cells = candidate.systems[label].cells
        for key, old in sorted(system.cells.items()):
            new = cells.get(key)
            if new is None:
                breaches.append(Finding("vanished_cell", f"vanished_cell:{label}:{key}",
                                        f"{label} {key}: {old.gold_total} gold items before, the cell is gone"))
            elif new.gold_total < old.gold_total:
                breaches.append(Finding("gold_total", f"gold_total:{label}:{key}:{old.gold_total}->{new.gold_total}",
                                        f"{label} {key}: gold_total shrinks {old.gold_total} -> {new.gold_total}"))
    breaches.extend(_leaks(result, sorted(candidate.systems)))
    # Scenarios the change did not touch are still compared item by item: editing one
    # fixture must not open the gate for regressions everywhere else.
    unchanged = {sid for sid, digest in baseline.scenario_hashes.items()
                 if result.receipt.scenario_hashes.get(sid) == digest}
    regressions, improvements = [], []
    for label in sorted(set(baseline.systems) & set(candidate.systems)):
        breaches.extend(_determinism(label, baseline, result))
        worse, better = _item_changes(label, baseline, result, n_boot, seed,
                                      keep=lambda item: _scenario(item) in unchanged)
        regressions += worse
        improvements += better
    if not baseline.scenario_hashes:
        breaches.append(Finding("unverifiable_bless", "unverifiable_bless",
                                "the base branch's baseline has no scenario_hashes (written before they existed), "
                                "so unchanged scenarios cannot be compared item by item; re-bless main first"))
    return Comparison(verdict=PASS, mode="bless", breaches=breaches, regressions=regressions,
                      improvements=improvements)


def compare(baseline: Baseline, result: ResultDocument, *, candidate: Baseline | None = None,
            n_boot: int = DEFAULT_N_BOOT, seed: int = 0, path: str = DEFAULT_BASELINE) -> Comparison:
    """Compare a run with the baseline it is gated against (pure: reads nothing, runs nothing).

    ``baseline``: the base branch's committed baseline. ``candidate``: the baseline the
    change commits (its working tree's ``baselines/main.json``); used only when the gated
    scenarios changed (bless mode), where it must equal this run. Justifications are read
    from ``baseline`` and, in bless mode, from ``candidate`` (a reviewed part of the change).
    ``n_boot``/``seed``: the paired bootstrap for stochastic systems. ``path``: where the
    repository keeps the baseline, named in the re-bless command of a corpus change.
    """
    vacuous = _vacuity(result)
    if vacuous:
        return inconclusive(vacuous)
    if not any(cell.gold_total for system in baseline.systems.values() for cell in system.cells.values()):
        return inconclusive("the baseline holds no gold item: a gate against it would pass vacuously")
    mismatch = _config_mismatch(baseline, result)
    if mismatch:
        return inconclusive(mismatch)
    try:
        if baseline.fixtures_hash == result.receipt.selection_hash:
            comparison = _same_corpus(baseline, result, n_boot, seed)
            comparison.breaches = _justify(comparison.breaches, baseline)
            comparison.regressions = _justify(comparison.regressions, baseline)
        else:
            comparison = _changed_corpus(baseline, result, candidate, n_boot, seed, path)
            if comparison.verdict == INCONCLUSIVE:
                return comparison
            comparison.breaches = _justify(comparison.breaches, baseline, candidate)
            # Regressions in untouched scenarios: only the base branch may excuse them.
            comparison.regressions = _justify(comparison.regressions, baseline)
    except BaselineError as exc:
        return inconclusive(str(exc))
    comparison.cells = _cell_rows(baseline, result)
    open_findings = [f for f in comparison.breaches + comparison.regressions if f.justification is None]
    justified = len(comparison.breaches) + len(comparison.regressions) - len(open_findings)
    if open_findings:
        comparison.verdict = REGRESSION
        kinds = sorted({f.kind for f in open_findings})
        comparison.reason = f"{len(open_findings)} unjustified findings ({', '.join(kinds)})"
    else:
        comparison.reason = ("no regression or breach" + (f" ({justified} justified in the baseline)" if justified
                                                          else ""))
    found = {f.key for f in comparison.breaches + comparison.regressions}
    stale = sorted({j.breach for b in (baseline, candidate) if b is not None for j in b.justifications} - found)
    if stale:
        comparison.reason += (f"; {len(stale)} justifications name no finding of this run (stale? "
                              f"{', '.join(stale[:3])})")
    return comparison


def first_run(result: ResultDocument, where: str, *, candidate: Baseline | None = None,
              path: str = DEFAULT_BASELINE) -> Comparison:
    """The verdict when there is no baseline yet (``where``: the ref and path looked at).

    Nothing can regress, so a complete run passes as ``no-baseline`` (exit 0) with the command
    that makes the baseline and where to commit it; a broken or vacuous run is still
    inconclusive. A ``candidate`` the change commits must equal this run (``baseline_mismatch``),
    as in bless mode: once merged it is what every later change is compared with.
    """
    vacuous = _vacuity(result)
    if vacuous:
        return inconclusive(vacuous)
    try:
        breaches = _mismatch(result, candidate) if candidate is not None else []
    except BaselineError as exc:
        return inconclusive(str(exc))
    command = rebless_command(gate_config(result), adapter_specs(result), path)
    if breaches:
        return Comparison(verdict=REGRESSION, mode="bless", breaches=breaches,
                          reason=f"no baseline at {where} yet, and the {path} this change commits is not this run's: "
                                 f"rerun `{command}` and commit the file it writes")
    if candidate is not None:
        reason = (f"no baseline at {where} yet; the {path} this change commits equals this run, and once merged "
                  "every later pull request is compared with it")
    else:
        reason = (f"no baseline at {where} yet, so nothing is gated (exit 0). Make one: `{command}` "
                  f"({_suite(result)}, this run's version), then commit {path} to the base branch (this pull "
                  "request may add it); every later pull request is compared with it")
    return Comparison(verdict=NO_BASELINE, mode="none", reason=reason)

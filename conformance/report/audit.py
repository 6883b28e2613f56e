"""Human audit of the grading (guide §6.1): a blinded sample to label, and judge–human agreement.

``drift-conformance audit sample RESULT --n 80`` draws ``n`` graded free-form answers of the
run's first replicate (seeded, uniformly over every system's answers) and writes two files:

* ``audit.jsonl`` (the labeler's): one line per item, ``{"audit_id", "question",
  "reference", "candidate", "human_verdict": null}``, in a shuffled order. No system, no
  probe id, no pipeline verdict. The labeler sets ``human_verdict`` to ``"correct"`` or
  ``"incorrect"`` (``null`` = skipped).
* ``audit-key.json`` (kept from the labeler): ``audit_id`` -> system, scenario, probe, how
  the pipeline graded it (``exact``, ``declined``, ``judge``, ``judge_unparseable``) and its
  verdict; plus the result's run id and records path.

``drift-conformance audit score AUDIT --key KEY`` joins them back and reports the share of
labelled items where pipeline and human agree, overall, per system and per grading method,
each with a 95% Wilson score interval, and Cohen's kappa overall. A system whose agreement
sits well below the others' means the judge is not neutral on this data (guide §6.1).
``drift-conformance report RESULT --audit audit-score.json`` shows the figures.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
from collections import defaultdict
from pathlib import Path

from conformance.contract.corpus import file_sha256
from conformance.errors import DriftError
from conformance.llm.judge import GRADES_FILE, ABSTENTION_REFERENCE
from conformance.paths import write_atomic
from conformance.runner.records import iter_records

__all__ = ["AuditError", "sample_audit", "score_audit", "wilson", "cohen_kappa"]

AUDIT_SCHEMA_VERSION = "1"
VERDICTS = {"correct": True, "incorrect": False}


class AuditError(DriftError, ValueError):
    """An audit input is missing or malformed; the message names the file, line or field."""


def wilson(agree: int, n: int, z: float = 1.959963984540054) -> list[float] | None:
    """95% Wilson score interval [low, high] of ``agree / n`` (Wilson 1927); None when n = 0."""
    if n == 0:
        return None
    p = agree / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [round(max(0.0, centre - half), 6), round(min(1.0, centre + half), 6)]


def cohen_kappa(pairs: list[tuple[bool, bool]]) -> float | None:
    """Cohen's kappa of two binary raters: (p_o - p_e) / (1 - p_e) (Cohen 1960).

    ``pairs``: (pipeline, human) verdicts. None when there are no pairs or p_e = 1 (both raters
    gave one single verdict throughout, so agreement beyond chance is undefined).
    """
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(a == b for a, b in pairs) / n
    pa, ph = sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n
    expected = pa * ph + (1 - pa) * (1 - ph)
    if expected >= 1.0:
        return None
    return round((observed - expected) / (1 - expected), 6)


def _read_jsonl(path: Path) -> list[dict]:
    out = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise AuditError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise AuditError(f"{path}: cannot read: {exc}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise AuditError(f"{path}: line {number}: not JSON ({exc.msg})") from None
        if not isinstance(item, dict):
            raise AuditError(f"{path}: line {number}: expected a JSON object")
        out.append({**item, "_line": number})
    return out


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file: equal once resolved (symlinks followed), or, when both
    exist, the same file on disk (hard links)."""
    a, b = Path(a), Path(b)
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def refuse_overwrite(out_path: Path, out_option: str, inputs: dict[str, Path]) -> None:
    """Raise AuditError when ``out_path`` is one of ``inputs`` (``{"what it is": path}``): writing
    it would destroy that input."""
    for what, path in inputs.items():
        if same_file(out_path, path):
            raise AuditError(f"{out_option} {out_path} is the same file as {what} {path}: writing it would "
                             f"overwrite {what}; give another path")


def _resolve_records(result_path: Path, records: str) -> Path:
    """The run's records file: as recorded when absolute; a relative path (older results) is
    looked for next to the result file first, then in the current directory."""
    recorded = Path(records)
    if recorded.is_absolute():
        return recorded
    for candidate in (Path(result_path).parent / recorded, recorded):
        if candidate.is_file():
            return candidate
    return recorded


def item_sha256(question: str, reference: str, candidate: str) -> str:
    """Hex SHA-256 binding a labelled line to its key entry (a labelled file from another
    sample is refused instead of being scored against the wrong items)."""
    return hashlib.sha256(json.dumps([question, reference, candidate], ensure_ascii=False).encode()).hexdigest()


def sample_audit(result_path: Path, n: int, out_path: Path, key_path: Path, seed: int = 0) -> int:
    """Write the blinded sample and its key; returns the number of items written.

    Raises:
        AuditError: --out or --key would overwrite each other, the result, or the run's records
            or grades; the result has no answer model; its run records or grades are gone; the
            grades file was rewritten since the result was written (``grades_sha256`` in the
            receipt differs); or nothing free-form was graded.
    """
    from conformance.report.command import load_result

    if same_file(out_path, key_path):
        raise AuditError(f"--out and --key are both {out_path}: the key would overwrite the file to label (and the "
                         "labeler would see the pipeline's verdicts); give two paths")
    refuse_overwrite(out_path, "--out", {"the result": result_path})
    refuse_overwrite(key_path, "--key", {"the result": result_path})
    doc = load_result(result_path)
    config = doc.receipt.config
    if not config.get("answer_model"):
        raise AuditError(f"{result_path}: the run had no --answer-model: there is no graded answer to audit")
    records_path = _resolve_records(result_path, config["records"])
    grades_path = records_path.parent / GRADES_FILE
    if not records_path.is_file() or not grades_path.is_file():
        raise AuditError(f"{result_path}: the run's records or grades are gone ({records_path}, {grades_path}); "
                         "the audit samples from them")
    expected = config.get("grades_sha256")
    if expected is not None and file_sha256(grades_path)[0] != expected:
        raise AuditError(f"{grades_path} changed since {result_path} was written (a later invocation of run "
                         f"{config.get('run_id')} rewrote it): sample from that invocation's result.json")
    refuse_overwrite(out_path, "--out", {"the run's records": records_path, "the run's grades": grades_path})
    refuse_overwrite(key_path, "--key", {"the run's records": records_path, "the run's grades": grades_path})
    answers = {}
    for r in iter_records(records_path):  # streamed: a run's records can be large
        if r.get("kind") == "probe" and r.get("repeat", 1) == 1 and r.get("error") is None \
                and r.get("answer") is not None and not r.get("closed"):
            answers[(r["system"], r["scenario_id"], r["probe_id"])] = r
    graded = []
    for g in _read_jsonl(grades_path):
        where = (g["system"], g["scenario_id"], g["probe_id"])
        if g.get("repeat", 1) == 1 and g.get("correct") is not None and where in answers:
            graded.append((where, g))
    if not graded:
        raise AuditError(f"{result_path}: no graded free-form answer to sample (closed probes need no judge)")
    graded.sort(key=lambda item: item[0])
    rng = random.Random(seed)
    chosen = rng.sample(graded, min(n, len(graded)))
    items, key = [], {}
    for i, (where, grade) in enumerate(chosen, start=1):
        audit_id = f"a{i:04d}"
        record = answers[where]
        reference = ABSTENTION_REFERENCE if grade.get("abstention") else grade["reference"]
        items.append({"audit_id": audit_id, "question": record["query"], "reference": reference,
                      "candidate": record["answer"], "human_verdict": None})
        key[audit_id] = {"system": where[0], "scenario_id": where[1], "probe_id": where[2],
                         "item_sha256": item_sha256(record["query"], reference, record["answer"]),
                         "method": grade["method"], "pipeline_verdict": "correct" if grade["correct"] else "incorrect"}
    write_atomic(out_path, "".join(json.dumps(item, ensure_ascii=False, sort_keys=True) + "\n" for item in items),
                 what="the audit sheet")
    write_atomic(key_path, json.dumps({"schema_version": AUDIT_SCHEMA_VERSION, "result": str(result_path),
                                       "run_id": config.get("run_id"), "seed": seed, "items": key},
                                      indent=1, sort_keys=True) + "\n", what="the audit key")
    return len(items)


def _rate(pairs: list[tuple[bool, bool]]) -> dict:
    agree = sum(a == b for a, b in pairs)
    return {"n": len(pairs), "agree": agree, "agreement": round(agree / len(pairs), 6) if pairs else None,
            "ci95": wilson(agree, len(pairs))}


def score_audit(audit_path: Path, key_path: Path) -> dict:
    """Agreement of the pipeline's verdicts with the human labels (see the module docstring).

    Returns ``{"overall": {n, agree, agreement, ci95, kappa}, "by_system": {...},
    "by_method": {...}, "labelled", "unlabelled", "run_id"}``.

    Raises:
        AuditError: a line is not JSON, an ``audit_id`` is not in the key, a verdict is not
            "correct"/"incorrect"/null (the file and line are named), or nothing is labelled.
    """
    try:
        key = json.loads(Path(key_path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AuditError(f"{key_path}: no such key file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AuditError(f"{key_path}: not a readable audit key: {exc}") from None
    if not isinstance(key, dict) or not isinstance(key.get("items"), dict):
        raise AuditError(f"{key_path}: not an audit key (no 'items' object)")
    pairs, by_system, by_method = [], defaultdict(list), defaultdict(list)
    unlabelled, seen = 0, set()
    for item in _read_jsonl(audit_path):
        where = f"{audit_path}: line {item['_line']}"
        audit_id = item.get("audit_id")
        if audit_id not in key["items"]:
            raise AuditError(f"{where}: audit_id {audit_id!r} is not in {key_path}")
        if audit_id in seen:
            raise AuditError(f"{where}: audit_id {audit_id!r} appears twice")
        seen.add(audit_id)
        truth = key["items"][audit_id]
        if "item_sha256" in truth and truth["item_sha256"] != item_sha256(
                str(item.get("question")), str(item.get("reference")), str(item.get("candidate"))):
            raise AuditError(f"{where}: {audit_id}'s question, reference or candidate differs from the item {key_path} "
                             "keeps under that id: this file belongs to another sample (or was edited beyond "
                             "human_verdict)")
        label = item.get("human_verdict")
        if label is None:
            unlabelled += 1
            continue
        if not isinstance(label, str) or label.strip().lower() not in VERDICTS:
            raise AuditError(f"{where}: human_verdict must be \"correct\", \"incorrect\" or null, got {label!r}")
        pair = (truth["pipeline_verdict"] == "correct", VERDICTS[label.strip().lower()])
        pairs.append(pair)
        by_system[truth["system"]].append(pair)
        by_method[truth["method"]].append(pair)
    if not pairs:
        raise AuditError(f"{audit_path}: no item is labelled yet (set human_verdict to \"correct\" or \"incorrect\")")
    return {"schema_version": AUDIT_SCHEMA_VERSION, "run_id": key.get("run_id"), "labelled": len(pairs),
            "unlabelled": unlabelled, "overall": {**_rate(pairs), "kappa": cohen_kappa(pairs)},
            "by_system": {s: _rate(p) for s, p in sorted(by_system.items())},
            "by_method": {m: _rate(p) for m, p in sorted(by_method.items())}}


def format_audit(score: dict) -> str:
    """Terminal lines: overall agreement with its interval and kappa, then per system and method."""
    def line(name: str, r: dict) -> str:
        ci = r["ci95"]
        return (f"{name}: {r['agreement']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}] ({r['agree']}/{r['n']})"
                if r["n"] else f"{name}: n/a")

    o = score["overall"]
    kappa = "n/a" if o["kappa"] is None else f"{o['kappa']:.3f}"
    out = [line("judge-human agreement", o) + f", Cohen's kappa {kappa}"
           + (f"; {score['unlabelled']} unlabelled" if score["unlabelled"] else "")]
    out += ["  " + line(f"system {s}", r) for s, r in score["by_system"].items()]
    out += ["  " + line(f"graded by {m}", r) for m, r in score["by_method"].items()]
    return "\n".join(out)

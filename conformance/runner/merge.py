"""``drift-conformance merge``: one run's result rebuilt from its shards (``--shard I/N``).

Averaging shard results cannot give the run's intervals: the cluster bootstrap resamples
scenarios of the whole selection jointly. So the merge re-scores. It checks that the
shards belong to one run (same options, audit-salt commitment, corpus, seed, code), that
every shard of 1..N is there once and holds exactly the scenarios the split gives it, that
each shard's records hash to its receipt's ``records_sha256``, and that the shards' code
(``receipt.config.code``: content hashes, :mod:`conformance.runner.code_identity`) is the code
that merges (else refused unless ``allow_other_code``, and then the merged receipt names both), writes
the shards' records into one run folder in the order the unsharded run writes them (pass by
pass, scenario by scenario in selection order; each scenario's records as its shard wrote
them), and scores that folder with the job's own stages (:func:`conformance.runner.job.grade`, ``score``,
``result_document``). Every metric not derived from measured time is then the unsharded
run's, bit for bit (tests/runner/test_shards.py); measured times are each shard host's.

Hermetic runs only: a run with an answer model grades through the judge, and a sealed
holdout's corpus no longer exists after its run; both are refused with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from conformance import paths
from conformance.contract.corpus import Selection, file_sha256, fixtures_hash, gold_hash
from conformance.contract.result import ResultDocument
from conformance.contract.shards import Shard, ShardSpecError, shard_scenarios
from conformance.errors import DriftError
from conformance.runner.budget_gate import BudgetGate
from conformance.runner.code_identity import suite_sha256
from conformance.runner.job import (Plan, Streamed, grade, load_known_bad, new_run_id, prepare, result_document,
                                    score, write_verdicts)
from conformance.runner.records import RecordWriter, RunLock, iter_records
from conformance.runner.request import RunRequest
from conformance.runner.run import RunConfig
from conformance.runner.salt import AuditSalt
from conformance.scoring.drift import REFERENCE

__all__ = ["MergeError", "ShardResult", "load_shard", "merge_shards"]

PER_SHARD_CONFIG = frozenset({"run_id", "records", "records_sha256", "host", "fixtures_dir", "gold_dir", "shard",
                              "resumed", "executor", "code"})
"""``receipt.config`` keys that may differ between the shards of one run (they name each
shard's run, paths and host; ``code`` is compared by its hashes, not its tree state); every
other key must be equal."""


class MergeError(DriftError, ValueError):
    """Shards that do not make one run (the message names the field and the files), a missing
    or repeated shard, or a shard whose records cannot be found or did not finish."""


@dataclass
class ShardResult:
    """One shard as the merge reads it: its ``result.json`` and where its records are."""

    path: Path
    doc: dict
    shard: Shard
    block: dict
    """The result's ``receipt.config.shard``."""
    records: Path
    units: dict = field(default_factory=dict)
    """(scenario id, repeat) -> byte offsets of its records' lines in ``records``, in file order."""
    finished: set = field(default_factory=set)
    """(scenario id, repeat) passes with a ``scenario_done`` record."""


def load_shard(path: Path, records_dirs: tuple[Path, ...] = ()) -> ShardResult:
    """Read a shard's ``result.json`` and find its records: the path its receipt names, else
    ``<run id>/records.jsonl`` beside the result, in a folder beside it (``runs/<run id>/``) or
    under one of ``records_dirs``, else ``records.jsonl`` beside it (a CI artifact holding the
    result and its run folder).

    Raises:
        MergeError: not JSON, not a result, not a shard's result, or its records are nowhere.
    """
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        config = doc["receipt"]["config"]
        block = config.get("shard")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise MergeError(f"{path}: not a result.json ({exc.__class__.__name__}: {exc})") from None
    if not isinstance(block, dict):
        raise MergeError(f"{path}: not a shard's result (its receipt has no config.shard): only the results of "
                         "`drift-conformance --shard I/N` runs are merged")
    try:
        shard = Shard(int(block["index"]), int(block["count"]))
    except (KeyError, TypeError, ValueError, ShardSpecError) as exc:
        raise MergeError(f"{path}: config.shard is damaged ({exc})") from None
    run_id = str(config.get("run_id"))
    candidates = [Path(str(config.get("records"))), path.parent / run_id / "records.jsonl",
                  *sorted(path.parent.glob(f"*/{run_id}/records.jsonl")),
                  *(Path(d) / run_id / "records.jsonl" for d in records_dirs), path.parent / "records.jsonl"]
    found = next((c for c in candidates if c.is_file()), None)
    if found is None:
        raise MergeError(f"{path}: the records of shard {shard} (run {run_id}) are in none of: "
                         + ", ".join(str(c) for c in candidates) + "; copy its run folder beside the result or "
                         "pass --records-dir")
    return _index(ShardResult(path=path, doc=doc, shard=shard, block=block, records=found))


def _index(shard: ShardResult) -> ShardResult:
    """Fill ``units`` and ``finished`` from one pass over the shard's records file."""
    offset = 0
    with open(shard.records, "rb") as handle:
        for raw in handle:
            start, offset = offset, offset + len(raw)
            if not raw.endswith(b"\n"):
                break  # a torn last line, as every reader skips it
            record = json.loads(raw)
            if "scenario_id" not in record or record.get("kind") == "verdict":
                continue  # verdicts: scoring the merged run writes its own
            unit = (record["scenario_id"], record.get("repeat", 1))
            shard.units.setdefault(unit, []).append(start)
            if record.get("kind") == "scenario_done":
                shard.finished.add(unit)
    return shard


def _facts(shard: ShardResult) -> dict:
    """What must be equal across the shards of one run, by the name an error shows."""
    receipt = shard.doc["receipt"]
    versions = receipt.get("versions", {})
    out = {"fixtures_hash": receipt.get("fixtures_hash"), "gold_hash": receipt.get("gold_hash"),
           "seed": receipt.get("seed"), "versions.corpus": versions.get("corpus"),
           "versions.drift-conformance": versions.get("drift-conformance"), "git_commit": receipt.get("git_commit"),
           "shard count": shard.shard.count, "shard.selection_hash": shard.block.get("selection_hash"),
           "shard.selection_scenarios": shard.block.get("selection_scenarios"),
           # One salt for the whole run: shards drawn with different salts audited on different draws.
           "audit_salt": receipt.get("audit_salt"), "code.suite_sha256": _code(shard).get("suite_sha256"),
           "code.adapters": _code(shard).get("adapters")}
    config = receipt.get("config", {})
    out.update({f"config.{k}": v for k, v in config.items() if k not in PER_SHARD_CONFIG})
    return out


def check_one_run(shards: list[ShardResult]) -> None:
    """Refuse shards of different runs, repeated shards, overlapping or missing ones.

    Raises:
        MergeError: naming the field that differs and the two files, the shard given twice,
            the scenario two shards hold, or each missing shard and its scenarios.
    """
    if not shards:
        raise MergeError("no shard results to merge")
    first, facts = shards[0], _facts(shards[0])
    for other in shards[1:]:
        theirs = _facts(other)
        for key in sorted(set(facts) | set(theirs)):
            if facts.get(key) != theirs.get(key):
                raise MergeError(f"the shards differ in {key}: {first.path} has {_short(facts.get(key))}, "
                                 f"{other.path} has {_short(theirs.get(key))}; merge only the shards of one run "
                                 "(same options, corpus, seed and code)")
    seen: dict[int, ShardResult] = {}
    owner: dict[str, ShardResult] = {}
    for s in shards:
        if s.shard.index in seen:
            raise MergeError(f"shard {s.shard} given twice: {seen[s.shard.index].path} and {s.path}")
        seen[s.shard.index] = s
        for scenario in s.block.get("scenarios", []):
            if scenario in owner:
                raise MergeError(f"scenario {scenario} is in two shards: {owner[scenario].path} (shard "
                                 f"{owner[scenario].shard}) and {s.path} (shard {s.shard})")
            owner[scenario] = s
    count, everything = first.shard.count, facts["shard.selection_scenarios"] or []
    missing = [Shard(i, count) for i in range(1, count + 1) if i not in seen]
    if missing:
        shown = "; ".join(f"shard {m} missing (scenarios {', '.join(shard_scenarios(everything, m))})"
                          for m in missing)
        raise MergeError(f"{shown}: merge needs the results of all {count} shards")
    for s in shards:
        want = shard_scenarios(everything, s.shard)
        if sorted(s.block.get("scenarios", [])) != want:
            raise MergeError(f"{s.path}: shard {s.shard} holds {s.block.get('scenarios')}, where the split of the "
                             f"selection gives it {want}")


def check_finished(shards: list[ShardResult]) -> None:
    """Refuse a shard with a scenario pass that has no ``scenario_done`` record.

    Raises:
        MergeError: naming the shard's file, the scenario and pass, and the resume command.
    """
    repeats = int(shards[0].doc["receipt"]["config"].get("repeats", 1))
    for s in shards:
        for repeat in range(1, repeats + 1):
            for scenario in s.block["scenarios"]:
                if (scenario, repeat) not in s.finished:
                    raise MergeError(f"{s.path}: shard {s.shard} did not finish scenario {scenario} (pass {repeat}); "
                                     f"continue it with --resume {s.doc['receipt']['config'].get('run_id')} and "
                                     f"--shard {s.shard}, then merge")


def _code(shard: ShardResult) -> dict:
    """The shard's ``receipt.config.code`` ({} from a suite that did not record it)."""
    code = shard.doc["receipt"]["config"].get("code")
    return code if isinstance(code, dict) else {}


def check_records(shards: list[ShardResult]) -> None:
    """Refuse a shard whose records file is not the one its result was scored from.

    Raises:
        MergeError: naming the result, the records file and both hashes.
    """
    for s in shards:
        want = s.doc["receipt"]["config"].get("records_sha256")
        got = file_sha256(s.records)[0]
        if got != want:
            raise MergeError(f"{s.path}: its records {s.records} hash to {got[:16]}..., where its receipt's "
                             f"records_sha256 is {str(want)[:16]}...: the records changed after the shard ran; "
                             "merge only the records each shard wrote")


def check_code(shards: list[ShardResult], allow_other_code: bool) -> str | None:
    """None when the shards ran the code that merges (same suite hash); else the note the merged
    receipt carries, when ``allow_other_code``.

    Raises:
        MergeError: other code and not ``allow_other_code`` (both hashes named).
    """
    theirs, mine = _code(shards[0]).get("suite_sha256"), suite_sha256()
    if theirs == mine:
        return None
    shown = f"{theirs[:16]}..." if isinstance(theirs, str) else "none recorded"
    if not allow_other_code:
        raise MergeError(f"the shards ran other code (suite code SHA-256 {shown}) than this merge "
                         f"({mine[:16]}...), which re-scores their records with its own: merge with the shards' code, "
                         "or pass --allow-other-code to re-score with this code (the receipt then names both)")
    return (f"merged by other code than its shards (suite code SHA-256 {mine[:16]}..., the shards' {shown}): "
            "their records were re-scored with this code (--allow-other-code)")


def _short(value) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 200 else text[:200] + "..."


def _request(first: ShardResult, folders: tuple[Path, Path] | None, records_dir: Path) -> RunRequest:
    """The request of the whole run the shards split (no shard), from the first shard's
    receipt and run header.

    Raises:
        MergeError: an answer-model or sealed-holdout run, a ``--known-bad`` file that is gone
            or changed, or corpus folders whose hashes are not the shards'.
    """
    receipt = first.doc["receipt"]
    c = receipt["config"]
    if c.get("answer_model") is not None:
        raise MergeError(f"{first.path}: a run with an answer model is graded through its judge; merge re-scores "
                         "hermetic runs only (run it unsharded)")
    if c.get("sealed_holdout"):
        raise MergeError(f"{first.path}: a sealed-holdout run's corpus was deleted after each shard; it cannot be "
                         "re-scored (run it unsharded)")
    header = next((r for r in iter_records(first.records) if r.get("kind") == "run"), None)
    if header is None:
        raise MergeError(f"{first.records}: no run header; not the records of a shard run")
    fixtures_dir, gold_dir = _corpus(first, folders)
    known_bad = None
    if c.get("known_bad"):
        known_bad = load_known_bad(Path(c["known_bad"]["path"]))
        if known_bad["sha256"] != c["known_bad"]["sha256"]:
            raise MergeError(f"{c['known_bad']['path']}: --known-bad changed since the shards ran")
    systems = first.doc["systems"]
    tested_reference = REFERENCE in systems and systems[REFERENCE].get("kind") != "reference"
    return RunRequest(
        adapters=[a for a in c["adapters"] if a not in ("none", REFERENCE)] + ([REFERENCE] if tested_reference else []),
        reference=c.get("reference", REFERENCE) is not None, fixtures_dir=fixtures_dir,
        gold_dir=gold_dir, records_dir=records_dir,
        selection=Selection(patterns=tuple(c["scenario_patterns"]), paradigms=tuple(c["paradigms"]),
                            horizons=tuple(c["horizons"]), splits=tuple(c["splits"]),
                            include_holdout=bool(c["include_holdout"])),
        config=RunConfig(k=c["k"], budget_tokens=c["budget_tokens"], encoding=c["encoding"],
                         flush_timeout_s=c["flush_timeout_s"]),
        seed=receipt["seed"], n_boot=c["bootstrap_resamples"], run_id=new_run_id(), repeats=c["repeats"],
        baseline_system=c.get("baseline_system"), isolation=header["binding"].get("isolation"),
        concurrency=c.get("concurrency", 1), gate=BudgetGate.parse(c.get("gate", "hard")), known_bad=known_bad,
        fresh_process=bool(c.get("fresh_process")), audit_salt=_salt(receipt))


def _salt(receipt: dict) -> AuditSalt | None:
    """The shards' audit salt, as a commitment only: their audits are recorded, the merge draws nothing."""
    block = receipt.get("audit_salt")
    return AuditSalt(commitment=block["commitment"]) if block else None


def _corpus(first: ShardResult, folders: tuple[Path, Path] | None) -> tuple[Path, Path]:
    """(fixtures, gold) folders holding the shards' corpus: ``folders`` when given, else the
    ones the receipt names, else the committed corpus; the first whose hashes are the shards'.

    Raises:
        MergeError: none of them is the corpus the shards ran (its hashes named).
    """
    receipt = first.doc["receipt"]
    c = receipt["config"]
    tried = [folders] if folders is not None else [(Path(c["fixtures_dir"]), Path(c["gold_dir"])),
                                                   (paths.fixtures_dir(), paths.gold_dir())]
    for fixtures_dir, gold_dir in tried:
        if (fixtures_dir.is_dir() and gold_dir.is_dir() and gold_hash(gold_dir) == receipt["gold_hash"]
                and fixtures_hash(fixtures_dir, gold_dir) == receipt["fixtures_hash"]):
            return fixtures_dir, gold_dir
    raise MergeError(f"no corpus with the shards' fixtures_hash {receipt['fixtures_hash'][:16]}... and gold_hash "
                     f"{receipt['gold_hash'][:16]}... in " + ", ".join(f"{f} + {g}" for f, g in tried)
                     + "; give the shards' corpus with --fixtures and --gold")


@dataclass
class RecordedSystem:
    """A system as its shards' results describe it: what scoring reads of a live one."""

    label: str
    kind: str
    spec: str
    describe: dict
    isolation: dict

    @property
    def provenance(self) -> bool:
        return bool((self.describe or {}).get("capabilities", {}).get("provenance", False))


def _systems(shards: list[ShardResult]) -> list[RecordedSystem]:
    """The run's systems in the first shard's order; a Describe that differs between shards is refused."""
    out = []
    for label, first in shards[0].doc["systems"].items():
        per_shard = {}
        for s in shards:
            theirs = s.doc["systems"].get(label)
            if theirs is None or theirs.get("describe") != first.get("describe"):
                raise MergeError(f"system {label}: {'absent from' if theirs is None else 'its Describe differs in'} "
                                 f"{s.path} (shard {s.shard}) against {shards[0].path}; a system must be the same "
                                 "in every shard")
            per_shard[str(s.shard)] = theirs.get("isolation", {})
        out.append(RecordedSystem(label=label, kind=first["kind"], spec=first["adapter"],
                                  describe=first.get("describe") or {},
                                  isolation={**first.get("isolation", {}), "shards": per_shard}))
    return out


def _write_records(plan: Plan, shards: list[ShardResult]) -> None:
    """The merged run's records: its header, then every pass of every scenario from its shard,
    in the unsharded run's order (repeat, then the selection's order)."""
    owner = {scenario: s for s in shards for scenario in s.block["scenarios"]}
    handles = {id(s): open(s.records, "rb") for s in shards}
    writer = RecordWriter(plan.records_path)
    try:
        writer.write(plan.header)
        for repeat in range(1, plan.request.repeats + 1):
            for path in plan.fixtures:
                s = owner[path.stem]
                handle = handles[id(s)]
                for offset in s.units[(path.stem, repeat)]:
                    handle.seek(offset)
                    writer.write(json.loads(handle.readline()))
    finally:
        writer.close()
        for handle in handles.values():
            handle.close()


def merge_shards(paths: list[Path], *, records_dir: Path, folders: tuple[Path, Path] | None = None,
                 records_dirs: tuple[Path, ...] = (), run_id: str | None = None, allow_other_code: bool = False,
                 log: Callable[[str], None] = lambda m: None) -> ResultDocument:
    """The result of the run that ``paths`` (its shards' ``result.json``) split, re-scored from
    their records (module docstring). The merged records go to ``<records_dir>/<new run id>/``.

    ``folders``: (fixtures, gold) of the shards' corpus; None: the folders their receipt names.
    ``run_id``: the merged run's id (default: a new one). ``allow_other_code``: re-score shards
    that ran other suite code than this (:func:`check_code`).
    ``receipt.config.merged_from`` lists each shard (result, run id, records, host, times, code);
    ``started_at`` / ``finished_at`` span the shards.

    Raises:
        MergeError: see :func:`load_shard`, :func:`check_one_run`, :func:`check_finished`,
            :func:`check_records`, :func:`check_code`, :func:`_request`.
        And what :func:`conformance.runner.job.prepare` raises for the corpus.
    """
    shards = sorted((load_shard(p, records_dirs) for p in paths), key=lambda s: s.shard)
    check_one_run(shards)
    check_finished(shards)
    check_records(shards)
    other_code = check_code(shards, allow_other_code)
    request = _request(shards[0], folders, records_dir)
    if run_id is not None:
        request = request.model_copy(update={"run_id": run_id})
    with RunLock(Path(records_dir) / request.run_id):
        plan = prepare(request, log)
        if sorted(p.stem for p in plan.fixtures) != shards[0].block["selection_scenarios"]:
            raise MergeError(f"the selection now holds {[p.stem for p in plan.fixtures]}, the shards' "
                             f"{shards[0].block['selection_scenarios']}: merge against the shards' corpus")
        _write_records(plan, shards)
        log(f"merged records of {len(shards)} shards: {plan.records_path}")
        streamed = Streamed(systems=_systems(shards), scenarios=[p.stem for p in plan.fixtures],
                            fixtures=plan.fixtures, gold=plan.gold)
        graded = grade(plan, streamed, log)
        results, scoring = score(plan, streamed, graded)
        write_verdicts(plan.records_path, scoring, graded.gold)
        receipts = [s.doc["receipt"] for s in shards]
        doc = result_document(plan, streamed, graded, results, scoring, min(r["started_at"] for r in receipts))
    return _shards_receipt(doc, shards, other_code)


def _shards_receipt(doc: ResultDocument, shards: list[ShardResult], other_code: str | None) -> ResultDocument:
    """The merged receipt: the shards' versions, hosts and time span, each shard named with its
    code; the git commit and ``config.code`` are the merging code's (it re-scored)."""
    receipts = [s.doc["receipt"] for s in shards]
    config = dict(doc.receipt.config)
    hosts = [r["config"].get("host") for r in receipts]
    config["host"] = hosts[0] if all(h == hosts[0] for h in hosts) else {str(s.shard): h for s, h in zip(shards, hosts)}
    config["merged_from"] = [{"shard": str(s.shard), "result": str(s.path), "run_id": r["config"].get("run_id"),
                              "records": str(s.records), "host": r["config"].get("host"),
                              "started_at": r["started_at"], "finished_at": r["finished_at"], "code": _code(s),
                              **({"executor": r["config"]["executor"]} if "executor" in r["config"] else {})}
                             for s, r in zip(shards, receipts)]
    receipt = doc.receipt.model_copy(update={
        "config": config, "versions": receipts[0].get("versions", {}),
        "finished_at": max(r["finished_at"] for r in receipts),
        "notes": [*doc.receipt.notes, *([other_code] if other_code else [])]})
    return doc.model_copy(update={"receipt": receipt})

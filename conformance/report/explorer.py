"""The run explorer's data: every scored probe of every system, joined at report time.

A run's records (named by ``result.json``: ``receipt.config.records`` and ``records_sha256``)
hold what each system retrieved and answered and, once the run was scored, one ``verdict``
record per probe (correct, failure cause). The fixtures add each probe's question and options;
gold adds its answer, evidence and stale values, and marks the hits that carry evidence or still
assert a stale value. Gold is joined only for scenarios that are neither holdout nor sealed and
whose gold and fixture files still hash as the run recorded (``receipt.scenario_hashes``): a
published run's page and exports show scores, never the answers of its held-out scenarios.

Records older than verdicts are scored here from gold (non-holdout scenarios only); their
holdout probes show as ``unscored``. :func:`probe_lines` gives the lines of ``probes.jsonl``
(:class:`conformance.contract.probes.ProbeLine`); :func:`page_payload` packs them for the HTML
page (each hit text stored once, gzip then base64); :func:`diff_runs` compares two runs probe
by probe.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.contract.corpus import file_sha256, read_gold, scenario_hashes, session_index
from conformance.contract.gold import GoldFile, GoldProbe
from conformance.contract.probes import ProbeGold, ProbeHit, ProbeLine
from conformance.contract.result import ResultDocument
from conformance.paths import write_atomic
from conformance.errors import DriftError
from conformance.runner.records import iter_records
from conformance.secrets import redact
from conformance.scoring.causes import probe_causes
from conformance.scoring.rows import build_probe_rows, cited_ids, stale_hit

__all__ = ["RunProbes", "diff_runs", "find_records", "load_run_probes", "page_payload", "probe_lines"]

Key = tuple[str, str, str]
"""(system, scenario id, probe id)."""

FAILED = ("wrong", "unanswered")
"""Verdicts that count as failed (a fault's unanswered probe counts as failed in every metric)."""


def find_records(doc: ResultDocument, result_path: Path, override: Path | None = None) -> Path:
    """The records file of a result: ``override`` (``--records``) or the path the result names
    (a relative one looked for beside the result first), checked against the SHA-256 it names
    (results older than the hash are not checked).

    Raises:
        DriftError: the result names no records and none was given, the file is missing, or its
            SHA-256 differs from the one the result names.
    """
    from conformance.report.audit import _resolve_records

    cfg = doc.receipt.config
    named = cfg.get("records")
    path = (Path(override) if override is not None
            else _resolve_records(result_path, named) if isinstance(named, str) else None)
    if path is None:
        raise DriftError(f"{result_path}: the result names no run records (written before they were named); "
                         "pass --records PATH (<records-dir>/<run id>/records.jsonl)")
    if not path.is_file():
        how = "--records" if override is not None else f"{result_path} (receipt.config.records)"
        raise DriftError(f"{path}: no such records file, named by {how}; pass --records PATH when the run's "
                         "folder moved")
    want = cfg.get("records_sha256")
    if isinstance(want, str):
        got = file_sha256(path)[0]
        if got != want:
            raise DriftError(f"{path}: SHA-256 {got[:16]}... differs from the {want[:16]}... {result_path} names: "
                             "these are not the records of that run (or they changed since)")
    return path


@dataclass
class _Scenario:
    """What the report knows of one scenario of the run."""

    paradigm: str | None = None
    holdout: bool = True
    """Holdout or sealed; also taken for a scenario whose fixture is not found (never gold there)."""
    probes: dict[str, dict] = field(default_factory=dict)
    """probe id -> the fixture's probe (query, options or choices)."""
    gold: GoldFile | None = None
    sessions: dict[str, str] = field(default_factory=dict)
    """Evidence message id -> session id (gold scenarios only)."""
    note: str | None = None


@dataclass
class RunProbes:
    """One run's probe records, verdict records and scenarios, read for the explorer."""

    systems: list[str]
    probes: dict[Key, dict]
    verdicts: dict[Key, dict]
    scenarios: dict[str, _Scenario]
    notes: list[str] = field(default_factory=list)


def _read_fixture(path: Path) -> tuple[dict | None, dict[str, dict]]:
    """(header, probe id -> probe) of a fixture, reading only its header and checkpoint lines."""
    header, probes = None, {}
    with open(path, encoding="utf-8") as handle:
        for raw in handle:
            if '"checkpoint"' not in raw and header is not None:
                continue  # a session line: its text is not needed here
            line = json.loads(raw)
            if line.get("kind") == "header":
                header = line
            elif line.get("kind") == "checkpoint":
                probes.update({p["probe_id"]: p for p in line.get("probes", [])})
    return header, probes


def _scenarios(doc: ResultDocument, corpus: tuple[Path | None, Path | None]) -> tuple[dict[str, _Scenario], list[str]]:
    """Every scenario of the run with its fixture probes and, where allowed and unchanged, its gold.
    ``corpus``: (fixtures, gold) folders in place of those the receipt names, or None each."""
    cfg = doc.receipt.config
    fixtures_dir = corpus[0] or Path(str(cfg.get("fixtures_dir", "fixtures")))
    gold_dir = corpus[1] or Path(str(cfg.get("gold_dir", "gold")))
    sealed = set((cfg.get("sealed_holdout") or {}).get("scenarios") or [])
    out, notes = {}, []
    for sid in doc.receipt.scenarios:
        scenario, path = _Scenario(), fixtures_dir / f"{sid}.jsonl"
        out[sid] = scenario
        if sid in sealed or not path.is_file():
            scenario.note = "sealed scenario" if sid in sealed else f"fixture not found at {path}"
            if sid not in sealed:
                notes.append(f"{sid}: question options and gold not shown: {scenario.note}")
            continue
        header, scenario.probes = _read_fixture(path)
        scenario.paradigm = (header or {}).get("paradigm")
        scenario.holdout = bool((header or {}).get("holdout"))
        gold_path = gold_dir / f"{sid}.json"
        if scenario.holdout or not gold_path.is_file():
            scenario.note = "holdout scenario" if scenario.holdout else f"gold not found at {gold_path}"
            if not scenario.holdout:
                notes.append(f"{sid}: gold not shown: {scenario.note}")
            continue
        recorded = doc.receipt.scenario_hashes.get(sid)
        if recorded is not None and scenario_hashes([path], gold_dir)[sid] != recorded:
            scenario.note = "its fixture or gold changed since the run"
            notes.append(f"{sid}: gold not shown: {scenario.note}")
            continue
        scenario.gold = read_gold(gold_path)
        evidence = {e for p in scenario.gold.probes for e in p.evidence}
        scenario.sessions = {m: s for m, s in session_index(path).items() if m in evidence}
    return out, notes


def load_run_probes(doc: ResultDocument, records_path: Path, fixtures_dir: Path | None = None,
                    gold_dir: Path | None = None) -> RunProbes:
    """Read a run's first-pass probe records and verdicts (the last verdict of a probe wins), its
    scenarios, and score from gold the systems whose records carry no verdict (older records).
    ``fixtures_dir``/``gold_dir`` replace the folders the receipt names (a corpus that moved; gold
    is still joined only where the files hash as the run recorded).

    Raises:
        conformance.runner.records.RecordsError: a line is not a JSON object (file and line named).
    """
    probes, verdicts, states = {}, {}, defaultdict(list)
    for record in iter_records(records_path):
        if record.get("repeat", 1) != 1:
            continue
        kind = record.get("kind")
        if kind in ("probe", "verdict"):
            key = (record["system"], record["scenario_id"], record["probe_id"])
            (probes if kind == "probe" else verdicts)[key] = record
        elif kind == "state":
            states[(record["system"], record["scenario_id"])].append(record)
    scenarios, notes = _scenarios(doc, (fixtures_dir, gold_dir))
    run = RunProbes(systems=list(doc.systems), probes=probes, verdicts=verdicts, scenarios=scenarios, notes=notes)
    _score_from_gold(run, states)
    return run


def _score_from_gold(run: RunProbes, states: dict) -> None:
    """Verdicts for (system, scenario) pairs whose records have none, from gold (never holdout)."""
    have = {(s, sid) for s, sid, _ in run.verdicts}
    missing: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for (system, sid, _), record in run.probes.items():
        if (system, sid) not in have and run.scenarios.get(sid) and run.scenarios[sid].gold is not None:
            missing[(system, sid)].append(record)
    for (system, sid), records in missing.items():
        scenario, asked = run.scenarios[sid], {r["probe_id"] for r in records}
        # Only the probes the records hold (a run stopped early holds fewer than gold lists).
        gold = {sid: scenario.gold.model_copy(update={"probes": [p for p in scenario.gold.probes
                                                                  if p.probe_id in asked]})}
        rows = build_probe_rows(records, gold, {sid: scenario.sessions})
        causes = probe_causes(rows, records + states.get((system, sid), []), gold, {sid: scenario.sessions})
        for row in rows:
            run.verdicts[(system, sid, row.probe_id)] = {
                "probe_type": row.probe_type, "correct": row.correct, "recall_at_k": row.recall_at_k,
                "cause": causes.get((system, sid, row.probe_id))}


def _verdict(record: dict, verdict: dict | None) -> str:
    if record.get("error") is not None:
        return "unanswered"
    if verdict is None:
        return "unscored"
    if verdict.get("correct") is None:
        return "ungraded"
    return "correct" if verdict["correct"] else "wrong"


def _options(fixture_probe: dict | None) -> list[str]:
    if not fixture_probe:
        return []
    if fixture_probe.get("options"):
        return list(fixture_probe["options"])
    return [c["text"] for c in fixture_probe.get("choices") or []]


def _hits(record: dict, probe: GoldProbe | None, sessions: dict[str, str]) -> list[ProbeHit]:
    evidence = set(probe.evidence) | {sessions[m] for m in probe.evidence if m in sessions} if probe else set()
    out = []
    for hit in record.get("hits") or []:
        ids = cited_ids(hit) if (hit.get("source_ids") or hit.get("carried")) else []
        out.append(ProbeHit(rank=hit["rank"], text=hit.get("text") or "", source_ids=list(hit.get("source_ids") or []),
                            in_budget=bool(hit.get("in_budget")), from_buffer=bool(hit.get("from_buffer")),
                            evidence=None if probe is None else bool(evidence & set(ids)),
                            stale=None if probe is None else stale_hit(hit, probe)))
    return out


def probe_lines(run: RunProbes) -> list[ProbeLine]:
    """One :class:`ProbeLine` per probe record of the first pass, ordered by system (the result's
    order), scenario and probe as recorded."""
    order = {s: i for i, s in enumerate(run.systems)}
    gold_probes = {(sid, p.probe_id): p for sid, sc in run.scenarios.items() if sc.gold for p in sc.gold.probes}
    out = []
    for key in sorted(run.probes, key=lambda k: (order.get(k[0], len(order)), k[0])):
        system, sid, pid = key
        record, verdict = run.probes[key], run.verdicts.get(key)
        scenario = run.scenarios.get(sid) or _Scenario()
        gold = gold_probes.get((sid, pid)) if scenario.gold is not None else None
        probe_type = (verdict or {}).get("probe_type") or (gold.probe_type if gold else None)
        out.append(ProbeLine(
            system=system, scenario_id=sid, paradigm=scenario.paradigm, probe_id=pid, probe_type=probe_type,
            checkpoint_id=record["checkpoint_id"], horizon=record.get("horizon", ""), holdout=scenario.holdout,
            question=record.get("query") or (scenario.probes.get(pid) or {}).get("query", ""),
            options=_options(scenario.probes.get(pid)),
            gold=None if gold is None else ProbeGold(answer=gold.answer, accepted=gold.accepted, stale=gold.stale,
                                                     evidence=gold.evidence),
            answer=record.get("answer"), verdict=_verdict(record, verdict), cause=(verdict or {}).get("cause"),
            recall_at_k=(verdict or {}).get("recall_at_k"), hits=_hits(record, gold, scenario.sessions),
            hits_returned=record.get("hits_returned", len(record.get("hits") or [])), error=record.get("error")))
    return out


def write_probes_jsonl(lines: list[ProbeLine], path: Path) -> None:
    """``probes.jsonl``: one :class:`ProbeLine` per line, keys sorted, written whole. Raises
    OutputError (a DriftError) naming the file and the errno when it cannot be written."""
    write_atomic(path, "".join(redact(json.dumps(line.model_dump(mode="json"), sort_keys=True, ensure_ascii=False))
                               + "\n" for line in lines), what="probes")


# --------------------------------------------------------------------------- comparison


@dataclass(frozen=True)
class SystemDiff:
    """One system's probe-by-probe change from a baseline run to this one."""

    system: str
    both: int
    """Probes of this system scored in both runs."""
    newly_failed: list[str]
    """``scenario/probe`` ids correct in the baseline run and failed in this one."""
    newly_fixed: list[str]
    """Failed in the baseline run, correct in this one."""


def diff_runs(mine: list[ProbeLine], baseline: list[ProbeLine]) -> list[SystemDiff]:
    """Per system present in both runs, the probes whose verdict changed between correct and
    failed (wrong or unanswered); ungraded and unscored probes are left out."""
    before = {(p.system, p.scenario_id, p.probe_id): p.verdict for p in baseline}
    out: dict[str, SystemDiff] = {}
    for p in mine:
        old = before.get((p.system, p.scenario_id, p.probe_id))
        if old is None or old not in ("correct", *FAILED) or p.verdict not in ("correct", *FAILED):
            continue
        diff = out.setdefault(p.system, SystemDiff(p.system, 0, [], []))
        out[p.system] = diff = SystemDiff(diff.system, diff.both + 1, diff.newly_failed, diff.newly_fixed)
        if old == "correct" and p.verdict in FAILED:
            diff.newly_failed.append(f"{p.scenario_id}/{p.probe_id}")
        elif old in FAILED and p.verdict == "correct":
            diff.newly_fixed.append(f"{p.scenario_id}/{p.probe_id}")
    return list(out.values())


# --------------------------------------------------------------------------- the page's data


HIT_IN_BUDGET, HIT_FROM_BUFFER, HIT_EVIDENCE, HIT_STALE = 1, 2, 4, 8
"""Bits of a hit's flags in the page's data."""


def _pack(lines: list[ProbeLine], baseline: list[ProbeLine] | None, default: str | None) -> dict[str, Any]:
    """The page's data: probes once, each system's view of them, hit texts and id lists in tables."""
    texts: dict[str, int] = {}
    idlists: dict[tuple[str, ...], int] = {}
    probes: dict[tuple[str, str], int] = {}
    probe_rows: list[list] = []
    runs: dict[str, list] = {}
    for p in lines:
        pkey = (p.scenario_id, p.probe_id)
        if pkey not in probes:
            probes[pkey] = len(probe_rows)
            probe_rows.append([p.scenario_id, p.probe_id, p.probe_type, p.paradigm, p.horizon, p.checkpoint_id,
                               p.question, p.options, None if p.gold is None else p.gold.model_dump(), p.holdout])
        hits = []
        for h in p.hits:
            flags = (HIT_IN_BUDGET * h.in_budget | HIT_FROM_BUFFER * h.from_buffer | HIT_EVIDENCE * bool(h.evidence)
                     | HIT_STALE * bool(h.stale))
            text = texts.setdefault(h.text, len(texts))
            ids = idlists.setdefault(tuple(h.source_ids), len(idlists))
            hits.append([text, ids, flags])
        runs.setdefault(p.system, []).append([probes[pkey], p.answer, p.verdict, p.cause, hits, p.error])
    data: dict[str, Any] = {"systems": list(runs), "probes": probe_rows, "texts": list(texts),
                            "idlists": [list(i) for i in idlists], "runs": runs, "default": default}
    if baseline is not None:
        before = {(p.system, p.scenario_id, p.probe_id): p.verdict for p in baseline}
        data["baseline"] = {s: [before.get((s, probe_rows[r[0]][0], probe_rows[r[0]][1])) for r in rows]
                            for s, rows in runs.items()}
    return data


def page_payload(lines: list[ProbeLine], baseline: list[ProbeLine] | None = None, default: str | None = None) -> str:
    """The explorer's data as base64 of gzip of its JSON (the page inflates it with the browser's
    DecompressionStream). ``default``: the system shown first. Deterministic: gzip's timestamp is
    fixed at 0."""
    # Records are redacted when written; the page is redacted again as every report is (its
    # compressed data would hide a key from a scan of the file).
    text = redact(json.dumps(_pack(lines, baseline, default), ensure_ascii=False, separators=(",", ":")))
    raw = text.encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


def decode_payload(payload: str) -> dict[str, Any]:
    """The inverse of :func:`page_payload` (tests and benches read the page's data with it)."""
    return json.loads(gzip.decompress(base64.b64decode(payload)).decode("utf-8"))

"""The runner's peak RSS at 50 versus 5,000 sessions: streaming must keep it flat.

Prints figures, asserts nothing (the done-when target, RSS at 5,000 within 20% of RSS at
50, is printed as met or not).

    python bench/runner_rss.py                      # both modes, 50 and 5,000 sessions
    python bench/runner_rss.py --mode stream        # the streaming loop alone
    python bench/runner_rss.py --trace              # also: which lines allocate what grows
    python bench/runner_rss.py --sessions 50 --sessions 20000

Fixtures: one synthetic scenario per size, written with gold to a temporary folder and
checked by ``validate_corpus``: the same four messages per session (about 70 characters
each, a marker code in one), the same four checkpoints (at 1/4, 1/2, 3/4 and the end)
with the same three probes each (a fact, a revision after a move half-way, an
abstention), so only the session count differs.

Each (mode, size) runs in a fresh ``python`` subprocess, which reports its own
``resource.getrusage(RUSAGE_SELF).ru_maxrss`` (the runner process only; adapters are
other processes and not counted):

- ``job``: ``conformance.runner.job.run_job(["none"], ...)`` as ``drift-conformance``
  calls it: the none adapter in its own process, the oracle control in process, the
  reference compressor in its own process; streaming, then scoring (records read back,
  rows, bootstrap with ``--bootstrap`` resamples) and the result document.
- ``stream``: ``conformance.runner.run.run_corpus`` with one null system in process
  (stores nothing, returns no hits, Snapshot empty): the runner's streaming loop alone.

``--trace`` reruns each child under ``tracemalloc`` (slower; RSS is not read then) and
prints (a) the transient peak of single calls of the runner and scoring functions in
``PEAK_TARGETS`` (traced peak during the call minus traced memory at entry) at both
sizes, and (b) heap snapshots at four phases (the scenario's last checkpoint with the
streaming state alive, records read back, scoring started, job end) with the traced
peak since the previous phase and the project source lines whose live allocations grew
most from the small to the large run (allocations inside the standard library or
libraries are charged to the innermost project line that called them).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import host_line  # noqa: E402

CITIES = ["Lisbon", "Austin", "Toronto", "Denver", "Nairobi", "Edinburgh"]
PETS = ["goldfish", "ferret", "parrot", "beagle", "rabbit", "tortoise"]
DRINKS = ["espresso", "green tea", "flat white", "cold brew", "yerba mate", "hot chocolate"]
FILLER = [
    "Could you look over the notes from the last meeting before lunch?",
    "Here is a short summary of the open items and who owns each one.",
    "Thanks, that helps. Let us pick this up again tomorrow morning.",
]


# --------------------------------------------------------------------------- fixtures

def _phases(n: int) -> list[tuple[str, int, float]]:
    """(horizon, sessions, gap hours) like the generator's: 30 short, 170 medium, rest long."""
    out, left = [], n
    for name, size, gap in (("short", 30, 8.0), ("medium", 170, 48.0), ("long", None, 168.0)):
        take = left if size is None else min(size, left)
        if take > 0:
            out.append((name, take, gap))
        left -= take
    return out


def write_scenario(fixtures_dir: Path, gold_dir: Path, scenario: str, n: int) -> None:
    """One scenario of ``n`` sessions (fixture and gold), written with the corpus writers."""
    from datetime import datetime, timedelta, timezone

    from conformance.contract.corpus import write_fixture, write_gold
    from conformance.contract.fixture import CheckpointLine, EntityRef, HeaderLine, HorizonPhase, Message, Probe, \
        SessionLine
    from conformance.contract.gold import GoldEvent, GoldFile, GoldProbe

    phases = _phases(n)
    horizon_of = [name for name, size, _ in phases for _ in range(size)]
    gap_of = [gap for _, size, gap in phases for _ in range(size)]
    start = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
    markers = {f"{scenario}-s{i:05d}": f"MK{i:05d}" for i in range(n)}
    moved_at = n // 2
    old_city, new_city, pet = CITIES[0], CITIES[3], PETS[2]
    checkpoints = sorted({max(1, n * q // 4) for q in (1, 2, 3, 4)})

    def iso(t: datetime) -> str:
        return t.strftime("%Y-%m-%dT%H:%M:%SZ")

    header = HeaderLine(scenario_id=scenario, paradigm="user_assistant", source="bench/runner_rss",
                        horizons=[HorizonPhase(name=h, sessions=s, session_gap_hours=g) for h, s, g in phases],
                        entities=[EntityRef(entity_id="principal", type="human"),
                                  EntityRef(entity_id="assistant", type="assistant_agent")],
                        markers=markers)
    gold_probes: list[GoldProbe] = []
    events: list[GoldEvent] = []
    tiers: dict[str, str] = {}

    def lines():
        yield header
        t = start
        for i in range(n):
            sid = f"{scenario}-s{i:05d}"
            texts = list(FILLER)
            if i == 0:
                texts[0] = f"I live in {old_city} and my {pet} keeps me company at home."
                tiers[sid] = "signal"
                events.append(GoldEvent(session_id=sid, tier="signal", kind="disclose", entity="principal",
                                        attribute="city", new=old_city, message_ids=[f"{sid}-m1"]))
            elif i == moved_at:
                texts[0] = f"Big news: I moved to {new_city} last week, the boxes are still packed."
                tiers[sid] = "signal"
                events.append(GoldEvent(session_id=sid, tier="signal", kind="change", entity="principal",
                                        attribute="city", old=old_city, new=new_city, message_ids=[f"{sid}-m1"]))
            else:
                tiers[sid] = "noise"
            texts.append(f"Noted for later, reference {markers[sid]} in the tracker.")
            roles = ["user", "assistant", "user", "assistant"]
            authors = ["principal", "assistant", "principal", "assistant"]
            msgs = [Message(message_id=f"{sid}-m{j + 1}", author=authors[j], role=roles[j], text=text,
                            timestamp=iso(t + timedelta(minutes=j))) for j, text in enumerate(texts)]
            yield SessionLine(session_id=sid, index=i, time=iso(t), participants=["principal", "assistant"],
                              messages=msgs)
            if i + 1 in checkpoints:
                c = checkpoints.index(i + 1) + 1
                cid, horizon = f"{scenario}-c{c}", horizon_of[i]
                asked = iso(t + timedelta(minutes=45))
                moved = i >= moved_at
                city_evidence = f"{scenario}-s{moved_at:05d}-m1" if moved else f"{scenario}-s00000-m1"
                probes = [
                    (Probe(probe_id=f"{cid}-p1", asked_by="assistant", asked_at=asked,
                           query="Which city does the user live in now?", options=CITIES + ["unknown"]),
                     dict(probe_type="revision" if moved else "fact_recall", answer=new_city if moved else old_city,
                          stale=[old_city] if moved else [], evidence=[city_evidence], attribute="city")),
                    (Probe(probe_id=f"{cid}-p2", asked_by="assistant", asked_at=asked,
                           query="Which animal lives with the user?", options=PETS + ["unknown"]),
                     dict(probe_type="fact_recall", answer=pet, evidence=[f"{scenario}-s00000-m1"],
                          attribute="pet")),
                    (Probe(probe_id=f"{cid}-p3", asked_by="assistant", asked_at=asked,
                           query="Which drink does the user order every morning?", options=DRINKS + ["unknown"]),
                     dict(probe_type="negative_recall", answer="unknown", abstention=True, attribute="drink")),
                ]
                for probe, truth in probes:
                    gold_probes.append(GoldProbe(probe_id=probe.probe_id, checkpoint_id=cid, entity="principal",
                                                 horizon=horizon, **truth))
                yield CheckpointLine(checkpoint_id=cid, after_session=i + 1, horizon=horizon,
                                     probes=[p for p, _ in probes])
            t += timedelta(hours=gap_of[i])

    write_fixture(fixtures_dir / f"{scenario}.jsonl", lines())
    write_gold(gold_dir / f"{scenario}.json",
               GoldFile(scenario_id=scenario, source="bench/runner_rss", seed=0, session_tiers=tiers,
                        events=events, probes=gold_probes))


# --------------------------------------------------------------------------- child


class NullSystem:
    """An in-process system that keeps nothing: the runner's own cost alone."""

    label = "null"
    spec = "null"
    kind = "control"
    provenance = True
    supports_snapshot = True

    def __init__(self):
        from conformance.backend.systems import RetrieveOutcome, StoreOutcome

        self._store, self._retrieve = StoreOutcome, RetrieveOutcome
        self.describe = {"name": "null", "capabilities": {"provenance": True, "snapshot": True}}
        self.isolation = {"mode": "harness"}

    def reset(self, namespace):
        pass

    def store(self, namespace, session):
        return self._store(0.001, {"input_tokens": 0, "output_tokens": 0, "llm_calls": 0}, 0)

    def flush(self, namespace, timeout_s):
        return True

    def retrieve(self, namespace, probe, k):
        return self._retrieve([], 0.001, {"input_tokens": 0, "output_tokens": 0, "llm_calls": 0})

    def snapshot(self, namespace):
        return []

    def died(self):
        return None

    def close(self):
        pass


#: Largest traced peak seen since the last phase snapshot (the per-call hooks reset
#: tracemalloc's peak, so they fold it in here first).
_RUNNING_PEAK = [0]

#: Phases the heap is snapshotted at, in the order a job passes them.
PHASES = ("stream_end", "records_read", "scoring", "job_end")


def _install_trace_hooks(sessions: int, snaps: dict, out_prefix: str) -> None:
    """Snapshot the heap at each phase of :data:`PHASES` (wrapping ``run._checkpoint`` for
    the last checkpoint, ``job.read_records``, ``job.score_system``; ``job_end`` is taken
    by the caller) and note the traced peak of the interval before it; dumps go to
    ``out_prefix.<phase>``."""
    import tracemalloc

    import conformance.runner.job as job
    import conformance.runner.run as run

    def take(phase: str) -> None:
        if phase in snaps:
            return
        current, peak = tracemalloc.get_traced_memory()
        peak = max(peak, _RUNNING_PEAK[0])
        path = f"{out_prefix}.{phase}"
        tracemalloc.take_snapshot().dump(path)
        snaps[phase] = {"path": path, "current": current, "peak_before": peak}
        tracemalloc.reset_peak()
        _RUNNING_PEAK[0] = 0

    original_checkpoint = run._checkpoint

    def checkpoint(line, *args, **kwargs):
        result = original_checkpoint(line, *args, **kwargs)
        if getattr(line, "after_session", None) == sessions:
            take("stream_end")
        return result

    run._checkpoint = checkpoint
    for name, phase, before in (("read_records", "records_read", False), ("score_system", "scoring", True)):
        original = getattr(job, name, None)
        if original is None:
            continue

        def wrapper(*args, _original=original, _phase=phase, _before=before, **kwargs):
            if _before:
                take(_phase)
            result = _original(*args, **kwargs)
            if not _before:
                take(_phase)
            return result

        setattr(job, name, wrapper)
    return take


#: Functions whose own transient peak is measured under ``--trace`` (module, name); those
#: missing in this version of the code are skipped.
PEAK_TARGETS = (
    ("conformance.runner.job", "run_corpus"), ("conformance.runner.job", "read_records"),
    ("conformance.runner.job", "read_gold"), ("conformance.runner.job", "session_index"),
    ("conformance.runner.job", "build_probe_rows"), ("conformance.runner.job", "drift_suite"),
    ("conformance.runner.job", "score_system"), ("conformance.runner.job", "paired_vs"),
    ("conformance.runner.job", "paired_suite"), ("conformance.runner.job", "gate_view"),
    ("conformance.runner.run", "_memory_state"), ("conformance.scoring.metrics", "_latency"),
    ("conformance.scoring.bootstrap", "percentiles_ci"), ("conformance.scoring.bootstrap", "ratio_ci"),
    ("conformance.scoring.bootstrap", "resample_counts"),
)


def _install_peak_hooks(peaks: dict) -> None:
    """Wrap :data:`PEAK_TARGETS` (every module-level reference to them in ``conformance``)
    so each call records its transient peak: traced peak during the call minus traced
    memory at entry; ``peaks[name]`` keeps the largest. Nested calls keep the outer peak."""
    import importlib
    import tracemalloc

    stack: list[list[int]] = []

    def wrap(name, fn):
        def wrapper(*args, **kwargs):
            current, peak = tracemalloc.get_traced_memory()
            _RUNNING_PEAK[0] = max(_RUNNING_PEAK[0], peak)
            if stack:
                stack[-1][1] = max(stack[-1][1], peak)
            tracemalloc.reset_peak()
            stack.append([current, current])
            try:
                return fn(*args, **kwargs)
            finally:
                _, peak = tracemalloc.get_traced_memory()
                _RUNNING_PEAK[0] = max(_RUNNING_PEAK[0], peak)
                entry = stack.pop()
                top = max(entry[1], peak)
                peaks[name] = max(peaks.get(name, 0), top - entry[0])
                if stack:
                    stack[-1][1] = max(stack[-1][1], top)
                tracemalloc.reset_peak()
        return wrapper

    for module_name, attr in PEAK_TARGETS:
        original = getattr(importlib.import_module(module_name), attr, None)
        if original is None:
            continue
        wrapped = wrap(f"{module_name.rsplit('.', 1)[-1]}.{attr}", original)
        for mod_name, module in list(sys.modules.items()):
            if mod_name.startswith("conformance") and module is not None:
                for key, value in list(vars(module).items()):
                    if value is original:
                        setattr(module, key, wrapped)


def child(args) -> None:
    trace = bool(args.trace_out)
    if trace:
        import tracemalloc

        tracemalloc.start(args.trace_depth)
    from conformance.runner.run import RunConfig, run_corpus
    from conformance.contract.corpus import select_fixtures

    fixtures_dir, gold_dir, records = Path(args.fixtures), Path(args.gold), Path(args.records)
    snaps: dict[str, str] = {}
    peaks: dict[str, int] = {}
    take = None
    if trace:
        import conformance.runner.job  # noqa: F401 - loaded before wrapping
        import conformance.scoring.metrics  # noqa: F401

        take = _install_trace_hooks(args.n, snaps, args.trace_out)
        _install_peak_hooks(peaks)
    started = time.perf_counter()
    if args.mode == "job":
        from conformance.runner.job import run_job

        doc = run_job(["none"], fixtures_dir, gold_dir, records_dir=records, n_boot=args.bootstrap)
        systems = sorted(doc.systems)
        if take is not None:
            take("job_end")
    else:
        fixtures, _ = select_fixtures(fixtures_dir)
        system = NullSystem()
        run_corpus(fixtures, [system], records / "records.jsonl", RunConfig(), namespace_prefix="bench")
        systems = [system.label]
    wall = time.perf_counter() - started
    report = {"maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "wall_s": wall,
              "systems": systems, "snapshots": snaps, "peaks": peaks}
    print("RESULT " + json.dumps(report))


# --------------------------------------------------------------------------- parent

def _spawn(mode: str, n: int, fixtures: Path, gold: Path, work: Path, bootstrap: int, trace: bool,
           trace_depth: int = 10) -> dict:
    records = work / f"records-{mode}-{n}{'-trace' if trace else ''}"
    cmd = [sys.executable, __file__, "--child", "--mode", mode, "--n", str(n), "--fixtures", str(fixtures),
           "--gold", str(gold), "--records", str(records), "--bootstrap", str(bootstrap),
           "--trace-depth", str(trace_depth)]
    if trace:
        cmd += ["--trace-out", str(work / f"trace-{mode}-{n}")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[1]),
                                                                      os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    result = next((json.loads(line[7:]) for line in proc.stdout.splitlines() if line.startswith("RESULT ")), None)
    if proc.returncode != 0 or result is None:
        raise SystemExit(f"child {mode} n={n} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    shutil.rmtree(records, ignore_errors=True)
    return result


def _project_frame(traceback, root: str):
    """The innermost frame of the traceback that is project code (not bench/), else the innermost."""
    for frame in reversed(traceback):  # tracemalloc lists the innermost frame last when limit > 1
        name = frame.filename
        if name.startswith(root) and not name.startswith(root + "bench" + os.sep):
            return frame
    return traceback[-1]


def _growth(small: str, large: str, top: int) -> list[str]:
    """Lines of project code whose live allocations (own and in callees) grew most."""
    import tracemalloc

    root = str(Path(__file__).resolve().parents[1]) + os.sep
    ignore = [tracemalloc.Filter(False, tracemalloc.__file__)]
    by_line: dict[tuple[str, int], list[int]] = {}
    for sign, path in ((-1, small), (1, large)):
        for stat in tracemalloc.Snapshot.load(path).filter_traces(ignore).statistics("traceback"):
            frame = _project_frame(stat.traceback, root)
            key = (frame.filename.replace(root, ""), frame.lineno)
            entry = by_line.setdefault(key, [0, 0])
            entry[0] += sign * stat.size
            entry[1] += sign * stat.count
    out = []
    for (where, lineno), (size, count) in sorted(by_line.items(), key=lambda kv: -abs(kv[1][0]))[:top]:
        out.append(f"  {size / 2**20:+8.2f} MiB  {count:+9,d} blocks  {where}:{lineno}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", action="append", choices=("job", "stream"),
                        help="what the child runs (repeatable; default both)")
    parser.add_argument("--sessions", action="append", type=int, help="sizes (default 50 and 5000)")
    parser.add_argument("--bootstrap", type=int, default=2000, help="resamples in job mode (the CLI default)")
    parser.add_argument("--trace", action="store_true", help="also list the lines whose allocations grow")
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--trace-depth", type=int, default=10, help="frames tracemalloc keeps per allocation")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    # Child side (internal).
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--fixtures", help=argparse.SUPPRESS)
    parser.add_argument("--gold", help=argparse.SUPPRESS)
    parser.add_argument("--records", help=argparse.SUPPRESS)
    parser.add_argument("--trace-out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        args.mode = args.mode[0]
        child(args)
        return

    from conformance.contract.corpus import validate_corpus

    modes = args.mode or ["job", "stream"]
    sizes = sorted(set(args.sessions or [50, 5000]))
    work = Path(tempfile.mkdtemp(prefix="drift-bench-rss-"))
    try:
        corpora = {}
        for n in sizes:
            fixtures, gold = work / f"n{n}" / "fixtures", work / f"n{n}" / "gold"
            fixtures.mkdir(parents=True), gold.mkdir(parents=True)
            write_scenario(fixtures, gold, f"bench-rss-{n}", n)
            validate_corpus(fixtures, gold)  # raises CorpusError if the generator is wrong
            corpora[n] = (fixtures, gold, (fixtures / f"bench-rss-{n}.jsonl").stat().st_size)
        print(host_line())
        print("fixtures (validated): " + ", ".join(f"{n:,} sessions {size / 2**20:.2f} MiB"
                                                   for n, (_, _, size) in corpora.items()))
        print()
        print(f"{'mode':<7} {'sessions':>9} {'peak RSS MiB':>13} {'wall s':>8} {'sessions/s':>11}  systems")
        results = {}
        for mode in modes:
            for n in sizes:
                fixtures, gold, _ = corpora[n]
                r = _spawn(mode, n, fixtures, gold, work, args.bootstrap, trace=False)
                results[(mode, n)] = r
                print(f"{mode:<7} {n:>9,} {r['maxrss_kib'] / 1024:>13.1f} {r['wall_s']:>8.2f} "
                      f"{n / r['wall_s']:>11.0f}  {', '.join(r['systems'])}", flush=True)
        print()
        small, large = sizes[0], sizes[-1]
        for mode in modes:
            a, b = results[(mode, small)]["maxrss_kib"], results[(mode, large)]["maxrss_kib"]
            verdict = "met" if b <= 1.2 * a else "NOT met"
            print(f"{mode:<7} RSS at {large:,} / RSS at {small:,} = {b / a:.3f} "
                  f"({(b - a) / 1024:+.1f} MiB); target <= 1.20: {verdict}")
        if args.trace:
            for mode in modes:
                traced = {n: _spawn(mode, n, *corpora[n][:2], work, args.bootstrap, trace=True,
                                    trace_depth=args.trace_depth) for n in (small, large)}
                print()
                print()
                names = sorted(set(traced[small]["peaks"]) | set(traced[large]["peaks"]),
                               key=lambda k: -traced[large]["peaks"].get(k, 0))
                print(f"{mode}: transient peak of one call (traced peak during it minus traced memory at entry), "
                      f"largest call, MiB")
                print(f"  {'function':<34} {small:>10,} {large:>10,}")
                for name in names:
                    print(f"  {name:<34} {traced[small]['peaks'].get(name, 0) / 2**20:>10.2f} "
                          f"{traced[large]['peaks'].get(name, 0) / 2**20:>10.2f}")
                for phase in PHASES:
                    info = [traced[n]["snapshots"].get(phase) for n in (small, large)]
                    if None in info:
                        continue
                    print(f"{mode}, {phase}: traced now {info[0]['current'] / 2**20:.1f} -> "
                          f"{info[1]['current'] / 2**20:.1f} MiB, peak since the previous phase "
                          f"{info[0]['peak_before'] / 2**20:.1f} -> {info[1]['peak_before'] / 2**20:.1f} MiB; "
                          f"growth by project line (allocations in callees counted at the calling line):")
                    print("\n".join(_growth(info[0]["path"], info[1]["path"], args.top)))
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

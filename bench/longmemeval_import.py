"""The LongMemEval importer on a synthetic ``longmemeval_s``-sized file and on one 10x smaller:
wall time and peak RSS, to show that memory does not grow with the file.

Prints figures, asserts nothing (the target, peak RSS of the full file within 20% of the
10x smaller one, is printed as met or not).

    python bench/longmemeval_import.py                    # 500 and 50 instances (~270 MB and ~27 MB)
    python bench/longmemeval_import.py --instances 500 --instances 5000
    python bench/longmemeval_import.py --trace            # also the traced Python heap peak

Source files: the ``_s`` shape (one JSON array of instances; each ~50 sessions of ~10
alternating user/assistant turns of ~1.1 KB text, dated ``2023/05/20 (Sat) 10:00`` in time
order, one answer session with a ``has_answer`` turn, every 16th instance an ``_abs``
abstention, every 10th a numeric answer), written instance by instance with a fixed seed
into a temporary folder. Instance i is the same in every size, so only the count differs.

Each size is imported in a fresh ``python`` subprocess that reports its own
``resource.getrusage(RUSAGE_SELF).ru_maxrss`` twice: after importing the modules (the
baseline: interpreter, pydantic, ijson) and after ``import_longmemeval`` returns. With
``--trace`` a second child per size runs under ``tracemalloc`` (slower; its wall time is
not comparable) and reports the traced peak of the import call alone.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import host_line  # noqa: E402

SEED = 20250530
WORDS = ("memory session assistant recipe travel garden budget python dinner weekend museum flight guitar "
         "marathon coffee project deadline library concert bicycle painting kitchen mountain river tickets "
         "schedule language lesson doctor vacation apartment rent salary meeting friend sister brother cousin "
         "birthday gift camera laptop phone charger battery weather forecast umbrella jacket shoes store").split()
TYPES = ("single-session-user", "single-session-assistant", "single-session-preference", "multi-session",
         "temporal-reasoning", "knowledge-update")
POOL_SIZE = 4000


def _pool(rng: random.Random, size: int) -> list[str]:
    """Paragraphs of ~``size`` characters, built once and reused (content does not matter here)."""
    out = []
    for _ in range(POOL_SIZE):
        words, n = [], 0
        while n < size:
            word = rng.choice(WORDS)
            words.append(word)
            n += len(word) + 1
        out.append(" ".join(words).capitalize() + ".")
    return out


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y/%m/%d (%a) %H:%M")


def instance(i: int, pool: list[str], sessions: int, turns: int) -> dict:
    """Instance ``i`` of the synthetic file (depends on ``i`` only)."""
    rng = random.Random(SEED * 1_000_003 + i)
    n = sessions + rng.randint(-5, 5)
    answer_at = rng.randrange(n)
    start = datetime(2023, 1, 1, 9, 0) + timedelta(days=rng.randrange(200))
    ids, dates, haystack = [], [], []
    for s in range(n):
        ids.append(f"answer_{i:05x}_{s}" if s == answer_at else f"sharegpt_{i:05x}_{s}")
        dates.append(_stamp(start + timedelta(hours=11 * s, minutes=rng.randrange(60))))
        session = []
        for t in range(turns + rng.randint(-1, 1)):
            turn = {"role": "user" if t % 2 == 0 else "assistant", "content": pool[rng.randrange(len(pool))]}
            if s == answer_at and t == 0:
                turn = {**turn, "content": f"My locker code is {1000 + i}. " + turn["content"], "has_answer": True}
            session.append(turn)
        haystack.append(session)
    abstention = i % 16 == 15
    return {
        "question_id": f"{i:08x}" + ("_abs" if abstention else ""),
        "question_type": TYPES[i % len(TYPES)],
        "question": "What is my locker code?",
        "answer": "You did not mention this." if abstention else (1000 + i if i % 10 == 0 else f"{1000 + i}"),
        "question_date": _stamp(start + timedelta(hours=11 * n + 24)),
        "haystack_session_ids": ids,
        "haystack_dates": dates,
        "haystack_sessions": haystack,
        "answer_session_ids": [ids[answer_at]],
    }


def write_source(path: Path, instances: int, sessions: int, turns: int, turn_chars: int) -> int:
    """Write the synthetic file instance by instance; returns its size in bytes."""
    pool = _pool(random.Random(SEED), turn_chars)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("[")
        for i in range(instances):
            if i:
                handle.write(", ")
            handle.write(json.dumps(instance(i, pool, sessions, turns)))
        handle.write("]")
    return path.stat().st_size


# --------------------------------------------------------------------------- child

def child(args) -> None:
    from conformance.importers.longmemeval import import_longmemeval

    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    traced = None
    if args.trace:
        import tracemalloc

        tracemalloc.start()
    started = time.perf_counter()
    report = import_longmemeval(Path(args.source), Path(args.out))
    wall = time.perf_counter() - started
    if args.trace:
        traced = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    print("RESULT " + json.dumps({"baseline_kib": baseline, "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF)
                                  .ru_maxrss, "wall_s": wall, "traced_peak": traced, "counts": report.counts,
                                  "issues": report.issue_count()}))


def _spawn(source: Path, out: Path, trace: bool) -> dict:
    cmd = [sys.executable, __file__, "--child", "--source", str(source), "--out", str(out)] + (["--trace"] * trace)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[1]),
                                                                      os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    result = next((json.loads(line[7:]) for line in proc.stdout.splitlines() if line.startswith("RESULT ")), None)
    if proc.returncode != 0 or result is None:
        raise SystemExit(f"child for {source.name} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    shutil.rmtree(out, ignore_errors=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", action="append", type=int, help="sizes (default 50 and 500)")
    parser.add_argument("--sessions", type=int, default=50, help="mean sessions per instance")
    parser.add_argument("--turns", type=int, default=10, help="mean turns per session")
    parser.add_argument("--turn-chars", type=int, default=1050, help="characters per turn")
    parser.add_argument("--trace", action="store_true", help="also the tracemalloc peak (separate, slower runs)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--source", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    sizes = sorted(set(args.instances or [50, 500]))
    work = Path(tempfile.mkdtemp(prefix="drift-bench-lme-"))
    try:
        sources = {}
        for n in sizes:
            started = time.perf_counter()
            sources[n] = work / f"longmemeval_{'m' if args.sessions >= 200 else 's'}-{n}.json"
            size = write_source(sources[n], n, args.sessions, args.turns, args.turn_chars)
            print(f"wrote {sources[n].name}: {size / 1e6:,.1f} MB in {time.perf_counter() - started:.1f} s",
                  flush=True)
        print(host_line())
        print()
        print(f"{'instances':>9} {'source MB':>10} {'sessions':>9} {'messages':>10} {'wall s':>8} {'MB/s':>7} "
              f"{'baseline RSS MiB':>17} {'peak RSS MiB':>13}" + (f" {'traced peak MiB':>16}" if args.trace else ""))
        results = {}
        for n in sizes:
            r = _spawn(sources[n], work / f"out-{n}", trace=False)
            if args.trace:
                r["traced_peak"] = _spawn(sources[n], work / f"out-{n}-trace", trace=True)["traced_peak"]
            results[n] = r
            mb = sources[n].stat().st_size / 1e6
            c = r["counts"]
            print(f"{n:>9,} {mb:>10.1f} {c['sessions']:>9,} {c['messages']:>10,} {r['wall_s']:>8.2f} "
                  f"{mb / r['wall_s']:>7.1f} {r['baseline_kib'] / 1024:>17.1f} {r['maxrss_kib'] / 1024:>13.1f}"
                  + (f" {r['traced_peak'] / 2**20:>16.1f}" if args.trace else ""), flush=True)
        small, large = sizes[0], sizes[-1]
        a, b = results[small]["maxrss_kib"], results[large]["maxrss_kib"]
        print()
        print(f"peak RSS at {large:,} / at {small:,} instances = {b / a:.3f} ({(b - a) / 1024:+.1f} MiB) for "
              f"{sources[large].stat().st_size / sources[small].stat().st_size:.1f}x the bytes; "
              f"target <= 1.20: {'met' if b <= 1.2 * a else 'NOT met'}")
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Wall time of a warm ``ci`` job, split by stage.

Prints figures, asserts nothing (machines here are shared and noisy: the host's load is
printed beside them; compare rows of one run).

    python bench/ci_job.py                              # 3 timed runs of --adapter keyword --split ci
    python bench/ci_job.py --runs 5 --adapter keyword --adapter mem0
    python bench/ci_job.py --no-warmup                  # the first run may build virtualenvs

Each run is ``drift-conformance ARGS --split ci --quiet`` in a fresh interpreter (this script
with ``--child``, which calls the CLI's ``main`` as the console script does), after one
untimed warm-up run so adapter virtualenvs and tiktoken's cache exist. The child wraps a few
functions of the job with timers; the stages, in the order a run meets them:

- **start-up**: interpreter start, imports and option parsing, until ``run_job`` is entered
  (measured by this process from the spawn);
- **validation**: ``select_fixtures`` and ``validate_selection`` (the selected fixtures and
  their gold only);
- **adapter start**: ``open_systems`` (virtualenvs, processes, health, Describe) and the wait
  for tiktoken's encoding, until streaming begins;
- **streaming**: ``run_corpus`` minus its checkpoints: reading each fixture, Store into every
  system, the run records;
- **checkpoints**: every ``_checkpoint``: Flush, Snapshot, Retrieve per probe, the reader;
- **adapter stop**: ``close_systems`` (older code: every ``RemoteSystem.close``);
- **scoring**: the rest of ``run_job`` (records read back, metrics, bootstrap, receipt);
- **writing**: ``_publish`` (redaction, result.json, the table);
- **exit**: from ``_publish`` returning to the process having exited.

Target (issue 15, printed, never asserted): a warm keyword ``ci`` job in at most 10 s on a
quiet 2-core machine.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import host_line  # noqa: E402

STAGES = ("start-up", "validation", "adapter start", "streaming", "checkpoints", "adapter stop", "scoring",
          "writing", "exit")
TARGET_S = 10.0


def _child(out_path: Path, cli_args: list[str]) -> None:
    """Run the CLI in this process with timers around the job's stages; write them to ``out_path``."""
    import conformance.cli as cli
    import conformance.runner.job as job
    import conformance.runner.run as run
    from conformance.backend.systems import RemoteSystem

    spans: dict[str, list[tuple[float, float]]] = defaultdict(list)

    def timed(owner, name: str, key: str) -> None:
        original = getattr(owner, name, None)
        if original is None:  # a name older code lacks (the bench also times checkouts before issue 15)
            return

        @functools.wraps(original)
        def wrapper(*args, **kwargs):
            started = time.monotonic()
            try:
                return original(*args, **kwargs)
            finally:
                spans[key].append((started, time.monotonic()))
        setattr(owner, name, wrapper)

    for owner, name in ((job, "run_job"), (job, "select_fixtures"), (job, "validate_selection"),
                        (job, "validate_corpus"), (job, "read_gold"), (job, "open_systems"), (job, "open_system"),
                        (job, "run_corpus"), (run, "_checkpoint"), (job, "close_systems"), (RemoteSystem, "close"),
                        (cli, "_publish")):
        timed(owner, name, name)
    try:
        cli.main(cli_args, standalone_mode=False)
    finally:
        out_path.write_text(json.dumps(spans), encoding="utf-8")


def _stages(spans: dict, spawned: float, exited: float) -> dict[str, float]:
    """Seconds per stage from the child's spans (monotonic clock, shared by both processes on Linux)."""
    def total(key):
        return sum(end - start for start, end in spans.get(key, []))

    (job_start, job_end), = spans["run_job"]
    (stream_start, stream_end), = spans["run_corpus"]
    adapters_start = min(start for start, _ in spans.get("open_systems", []) + spans.get("open_system", []))
    (_, publish_end), = spans["_publish"]
    checkpoints, stop = total("_checkpoint"), total("close_systems") if "close_systems" in spans else total("close")
    return {"start-up": job_start - spawned,
            "validation": sum(total(k) for k in ("select_fixtures", "validate_selection", "validate_corpus",
                                                 "read_gold")),
            "adapter start": stream_start - adapters_start,
            "streaming": stream_end - stream_start - checkpoints,
            "checkpoints": checkpoints,
            "adapter stop": stop,
            "scoring": job_end - stream_end - stop,
            "writing": total("_publish"),
            "exit": exited - publish_end}


def _one_run(cli_args: list[str], work: Path, n: int) -> tuple[float, dict[str, float]]:
    timings = work / f"timings-{n}.json"
    args = [*cli_args, "--split", "ci", "--quiet", "--out", str(work / f"result-{n}.json"),
            "--records-dir", str(work / "runs")]
    spawned = time.monotonic()
    proc = subprocess.run([sys.executable, __file__, "--child", str(timings), "--", *args],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    exited = time.monotonic()
    if proc.returncode != 0:
        sys.exit(f"the job failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return exited - spawned, _stages(json.loads(timings.read_text()), spawned, exited)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs")
    parser.add_argument("--adapter", action="append", help="as the CLI's --adapter (default: keyword)")
    parser.add_argument("--no-warmup", action="store_true", help="time the first run too")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.child is not None:
        _child(args.child, [a for a in rest if a != "--"])
        return
    cli_args = [part for name in (args.adapter or ["keyword"]) for part in ("--adapter", name)]
    print(host_line())
    print(f"job: drift-conformance {' '.join(cli_args)} --split ci --quiet (warm: "
          f"{'no warm-up run' if args.no_warmup else 'after one untimed run'})")
    walls, per_stage = [], defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="drift-bench-ci-") as tmp:
        if not args.no_warmup:
            _one_run(cli_args, Path(tmp), 0)
        for n in range(1, args.runs + 1):
            wall, stages = _one_run(cli_args, Path(tmp), n)
            walls.append(wall)
            for name, seconds in stages.items():
                per_stage[name].append(seconds)
    print()
    print(f"{'stage':<14} {'median s':>9} {'min s':>7} {'share':>6}")
    for name in STAGES:
        values = per_stage[name]
        print(f"{name:<14} {statistics.median(values):>9.2f} {min(values):>7.2f} "
              f"{statistics.median(values) / statistics.median(walls):>6.0%}")
    print(f"{'wall':<14} {statistics.median(walls):>9.2f} {min(walls):>7.2f}   runs: "
          + ", ".join(f"{w:.2f}" for w in walls))
    print()
    if (args.adapter or ["keyword"]) == ["keyword"]:
        verdict = "met" if statistics.median(walls) <= TARGET_S else "NOT met"
        print(f"target: warm keyword ci job <= {TARGET_S:g} s on a quiet 2-core machine: median "
              f"{statistics.median(walls):.2f} s, {verdict} (load above shows how quiet the machine was)")
    else:
        print(f"(the {TARGET_S:g} s target is for --adapter keyword alone)")
    print(host_line())


if __name__ == "__main__":
    main()

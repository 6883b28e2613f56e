"""Wall time of N shards run in parallel (plus their merge) against the unsharded run.

Prints figures, asserts nothing (machines here are shared and noisy: the host's load is
printed before and after each step; compare rows of one invocation).

    python bench/shards_wall.py                                  # keyword, --split ci, 2 shards
    python bench/shards_wall.py --shards 4 --adapter keyword --adapter mem0
    python bench/shards_wall.py --ray-address 127.0.0.1:6379     # also --executor ray on that cluster

Each step is the CLI in fresh interpreters, after one untimed warm-up run so adapter
virtualenvs exist: the unsharded run, then the N ``--shard I/N`` runs started at once (each
its own process and adapters, as N machines would run them; on one host they share its
cores), then ``merge``. Ideal: about 1/N of the unsharded time plus the merge, where the
host has N times the cores one run uses. With ``--ray-address``, the same run through
``--executor ray --shards N``, the driver's whole wall time (tasks, transfer, merge). Every
merged result is checked against the unsharded one without timings (tests/timing_fields.py).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO / "tests"))
from _common import host_line  # noqa: E402
from timing_fields import comparable  # noqa: E402


def load() -> str:
    return "load %.2f %.2f %.2f" % os.getloadavg()


def cli(*args: str, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "conformance.cli", *args], cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def timed(procs: list[subprocess.Popen]) -> float:
    started = time.monotonic()
    for proc in procs:
        _, stderr = proc.communicate()
        if proc.returncode != 0:
            sys.exit(f"a step failed (exit {proc.returncode}):\n{stderr[-2000:]}")
    return time.monotonic() - started


def step(name: str, run, notes: list[str]) -> float:
    before = load()
    seconds = run()
    print(f"{name:<34} {seconds:7.1f} s   ({before} before, {load()} after)", flush=True)
    notes.append(name)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adapter", action="append", default=None)
    parser.add_argument("--split", default="ci")
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--ray-address", default=None)
    args = parser.parse_args()
    adapters = [a for name in (args.adapter or ["keyword"]) for a in ("--adapter", name)]
    base = (*adapters, "--split", args.split, "--quiet", "--records-dir", "runs")
    print(host_line())
    print(f"drift-conformance {' '.join(base[:-3])}: unsharded vs {args.shards} shards in parallel + merge")
    with tempfile.TemporaryDirectory() as tmp:
        work, notes = Path(tmp), []
        step("warm-up (untimed, venvs)", lambda: timed([cli(*base, "--out", "warm.json", cwd=work)]), notes)
        whole = step("unsharded", lambda: timed([cli(*base, "--out", "whole.json", cwd=work)]), notes)
        shards = step(f"{args.shards} shards at once", lambda: timed(
            [cli(*base, "--shard", f"{i}/{args.shards}", "--out", f"s{i}.json", cwd=work)
             for i in range(1, args.shards + 1)]), notes)
        merge = step("merge", lambda: timed([cli("merge", *[f"s{i}.json" for i in range(1, args.shards + 1)],
                                                 "--out", "merged.json", "--records-dir", "runs", "-q", cwd=work)]),
                     notes)
        want = comparable(json.loads((work / "whole.json").read_text()))
        same = comparable(json.loads((work / "merged.json").read_text())) == want
        print(f"shards + merge = {shards + merge:.1f} s = {(shards + merge) / whole:.2f} x the unsharded run "
              f"(ideal {1 / args.shards:.2f} + merge); merged equals unsharded without timings: {same}")
        if args.ray_address:
            ray = step(f"--executor ray --shards {args.shards}", lambda: timed(
                [cli(*base, "--executor", "ray", "--ray-address", args.ray_address, "--shards", str(args.shards),
                     "--out", "ray.json", cwd=work)]), notes)
            same = comparable(json.loads((work / "ray.json").read_text())) == want
            print(f"ray = {ray / whole:.2f} x the unsharded run; equals unsharded without timings: {same}")
    print(host_line())


if __name__ == "__main__":
    main()

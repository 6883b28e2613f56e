"""Wall time of the whole canonical library (no holdout) through ``drift-conformance``.

Prints figures, asserts nothing (machines here are shared and noisy).

    python bench/library_wall.py                          # keyword
    python bench/library_wall.py --adapter mem0           # 20 to 40 min on 2 cores
    python bench/library_wall.py --adapter keyword --adapter mem0

Each adapter is one ``drift-conformance --adapter NAME --quiet --records-dir TMP`` in a
subprocess, timed from spawn to exit: the whole job as a user runs it (adapter start-up,
the none and oracle controls and the reference compressor the runner always adds,
streaming, probes, Snapshots, scoring, the table). sessions/s is the library's
non-holdout session count over that wall time, so it is a per-job rate, not the
adapter's own Store rate (every session goes through four systems). The subprocess gets
the environment without ``ANTHROPIC_API_KEY``/``ANTHROPIC_BASE_URL`` unless
``--keep-llm-env``: mem0 then runs offline (``infer=False``), the mode the README's
"Measured" figures are for. The records folder is deleted afterwards unless ``--keep``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import corpus_counts, host_line  # noqa: E402

from conformance import paths  # noqa: E402
from conformance.contract.corpus import Selection, select_fixtures  # noqa: E402


def _command(adapter: str, records: Path) -> list[str]:
    exe = shutil.which("drift-conformance")
    head = [exe] if exe else [sys.executable, "-m", "conformance.cli"]
    return head + ["--adapter", adapter, "--quiet", "--records-dir", str(records)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adapter", action="append", help="adapter to time (repeatable; default keyword)")
    parser.add_argument("--keep", action="store_true", help="keep the records folder and print its path")
    parser.add_argument("--keep-llm-env", action="store_true",
                        help="pass ANTHROPIC_* through (mem0 would then run in infer mode)")
    parser.add_argument("--log", type=Path, help="also append the output table of each run here")
    args = parser.parse_args()
    adapters = args.adapter or ["keyword"]

    fixtures, held_out = select_fixtures(paths.fixtures_dir(), Selection())
    sessions, probes = corpus_counts(fixtures)
    print(host_line())
    print(f"library: {len(fixtures)} scenarios ({len(held_out)} holdout left out), {sessions:,} sessions, "
          f"{probes:,} probes")
    env = dict(os.environ)
    if not args.keep_llm_env:
        for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
            env.pop(name, None)

    rows = []
    for adapter in adapters:
        records = Path(tempfile.mkdtemp(prefix=f"drift-bench-{adapter}-"))
        cmd = _command(adapter, records)
        print(f"running: {' '.join(cmd)}", flush=True)
        started = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        if args.log:
            with open(args.log, "a", encoding="utf-8") as log:
                log.write(f"== {adapter}: exit {proc.returncode}, {wall:.1f} s\n{proc.stdout}\n{proc.stderr}\n")
        if proc.returncode != 0:
            print(f"  {adapter}: exit {proc.returncode} after {wall:.1f} s\n{proc.stderr[-2000:]}", flush=True)
        rows.append((adapter, proc.returncode, wall))
        if args.keep:
            print(f"  records kept in {records}")
        else:
            shutil.rmtree(records, ignore_errors=True)
        print(f"  {adapter}: {wall / 60:.2f} min", flush=True)

    print()
    print(f"{'adapter':<14} {'exit':>4} {'wall':>12} {'minutes':>8} {'sessions/s':>11}")
    for adapter, code, wall in rows:
        print(f"{adapter:<14} {code:>4} {wall:>10.1f} s {wall / 60:>8.2f} {sessions / wall:>11.1f}")


if __name__ == "__main__":
    main()

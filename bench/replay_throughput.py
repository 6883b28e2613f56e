"""Replay throughput through the keyword adapter, in sessions per second.

Prints figures, asserts nothing (machines here are shared and noisy; compare rows of
one run).

    python bench/replay_throughput.py                    # the first 10 scenarios of the library
    python bench/replay_throughput.py --scenarios 52     # the whole library (no holdout)
    python bench/replay_throughput.py --scenario 'ua-*' --no-job

Rows (each over the same N committed scenarios, non-holdout, sorted by id):

- **store only**: ``conformance.runner.run.run_corpus`` with the keyword adapter alone
  (``open_system("keyword")``, its own process, loopback gRPC) over copies of the
  fixtures with their checkpoint lines removed (written to a temporary folder): the
  streaming path alone, i.e. fixture parsing and validation, one Store RPC per session
  and one record line per Store.
- **with probes**: the same call over the unmodified fixtures: adds, at every checkpoint,
  Flush (keyword rebuilds its BM25 index there), Snapshot (tokenised), one Retrieve per
  probe and the reader.
- **whole job**: ``conformance.runner.job.run_job(["keyword"])``, what
  ``drift-conformance --adapter keyword`` runs: adds the none and oracle controls and the
  reference compressor (every session is stored into four systems), adapter start-up
  and scoring (``--bootstrap`` resamples). Left out with ``--no-job``.

sessions/s is sessions of the selected scenarios over the wall time of the call
(adapter start-up excluded for the first two rows: the adapter is started before).
"""

from __future__ import annotations

import argparse
import fnmatch
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import corpus_counts, host_line  # noqa: E402

from conformance import paths  # noqa: E402
from conformance.contract.corpus import Selection, iter_fixture, select_fixtures, write_fixture  # noqa: E402
from conformance.contract.fixture import CheckpointLine  # noqa: E402
from conformance.runner.run import RunConfig, run_corpus  # noqa: E402
from conformance.backend.systems import open_system  # noqa: E402


def _store_only_copy(fixture: Path, folder: Path) -> Path:
    out = folder / fixture.name
    write_fixture(out, (line for line in iter_fixture(fixture) if not isinstance(line, CheckpointLine)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=10, help="how many scenarios (first N by id)")
    parser.add_argument("--scenario", action="append", metavar="GLOB", help="only scenarios matching GLOB")
    parser.add_argument("--adapter", default="keyword")
    parser.add_argument("--no-job", action="store_true", help="skip the whole-job row")
    parser.add_argument("--bootstrap", type=int, default=2000, help="resamples in the whole-job row")
    args = parser.parse_args()

    fixtures, _ = select_fixtures(paths.fixtures_dir(), Selection())
    if args.scenario:
        fixtures = [p for p in fixtures if any(fnmatch.fnmatchcase(p.stem, g) for g in args.scenario)]
    fixtures = fixtures[: args.scenarios]
    if not fixtures:
        raise SystemExit("no scenario selected")
    sessions, probes = corpus_counts(fixtures)
    work = Path(tempfile.mkdtemp(prefix="drift-bench-replay-"))
    rows = []
    try:
        stripped_dir = work / "store-only"
        stripped = [_store_only_copy(p, stripped_dir) for p in fixtures]
        system = open_system(args.adapter, isolation="process")
        try:
            for label, corpus in (("store only", stripped), ("with probes", fixtures)):
                records = work / f"{label.replace(' ', '-')}.jsonl"
                started = time.perf_counter()
                run_corpus(corpus, [system], records, RunConfig(), namespace_prefix=f"bench-{label.split()[0]}")
                rows.append((label, f"run_corpus, {args.adapter} only", time.perf_counter() - started))
        finally:
            system.close()
        if not args.no_job:
            from conformance.runner.job import run_job

            patterns = Selection(patterns=tuple(p.stem for p in fixtures))
            started = time.perf_counter()
            run_job([args.adapter], paths.fixtures_dir(), paths.gold_dir(), selection=patterns,
                    records_dir=work / "job", n_boot=args.bootstrap)
            rows.append(("whole job", f"run_job, {args.adapter} + none, oracle, reference", time.perf_counter() - started))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(host_line())
    print(f"{len(fixtures)} scenarios ({fixtures[0].stem} .. {fixtures[-1].stem}), {sessions:,} sessions, "
          f"{probes:,} probes")
    print()
    print(f"{'row':<12} {'what':<45} {'wall s':>8} {'sessions/s':>11}")
    for label, what, wall in rows:
        print(f"{label:<12} {what:<45} {wall:>8.2f} {sessions / wall:>11.1f}")


if __name__ == "__main__":
    main()

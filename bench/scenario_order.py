"""Does a scenario's read latency depend on what ran before it? (issue 16: fair latency)

Streams one scenario first, then a fill of other scenarios into the same adapter processes
(as a library run does: one process, one namespace per scenario), then the same scenario
again in a fresh namespace, and prints per system the p50 and p99 Retrieve latency of the
first and the last pass and the ratio last/first at p50 (target: at most 1.5x). Controls
are not added: only the adapters named run. Prints the host and its load beside the figures.

    python bench/scenario_order.py                                  # keyword, vector, mem0; fill = the library
    python bench/scenario_order.py --fill 'cod-long-*' --fill 'ua-long-*'   # a smaller fill
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import host_line, percentile  # noqa: E402

from conformance.contract.corpus import fixture_files, read_header  # noqa: E402
from conformance.paths import data_root  # noqa: E402
from conformance.runner.records import RecordWriter, iter_records  # noqa: E402
from conformance.runner.run import RunConfig, run_scenario  # noqa: E402
from conformance.backend.systems import close_systems, open_systems  # noqa: E402

TARGET = 1.5


def _reads(path: Path) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for r in iter_records(path):
        if r.get("kind") == "probe" and r.get("read_latency_ms") is not None:
            out.setdefault(r["system"], []).append(r["read_latency_ms"])
    return {k: sorted(v) for k, v in out.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adapter", action="append", help="default: keyword, vector, mem0")
    parser.add_argument("--scenario", default="ua-medium-001", help="the scenario run first and last")
    parser.add_argument("--fill", action="append", help="globs of the scenarios streamed in between "
                                                        "(default: every non-holdout scenario of the library)")
    parser.add_argument("--fixtures", type=Path, default=None)
    args = parser.parse_args()
    adapters = args.adapter or ["keyword", "vector", "mem0"]
    fixtures_dir = args.fixtures or data_root() / "fixtures"
    files = fixture_files(fixtures_dir)
    probe = next((p for p in files if p.stem == args.scenario), None)
    if probe is None:
        parser.error(f"--scenario {args.scenario}: no such fixture in {fixtures_dir}")
    fill = [p for p in files if p != probe and not read_header(p).holdout
            and (not args.fill or any(fnmatch.fnmatchcase(p.stem, g) for g in args.fill))]
    print(host_line())
    print(f"scenario {args.scenario} first and last; fill: {len(fill)} scenarios; adapters: {', '.join(adapters)}")
    config = RunConfig()
    systems = open_systems([(a, None) for a in adapters])
    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="scenario-order-") as tmp:
            tmp = Path(tmp)
            passes = {}
            for name, paths in (("first", [probe]), ("fill", fill), ("last", [probe])):
                out = tmp / f"{name}.jsonl"
                writer = RecordWriter(out)
                try:
                    for path in paths:
                        run_scenario(path, systems, writer, config, namespace_prefix=f"order-{name}")
                finally:
                    writer.close()
                passes[name] = _reads(out)
                print(f"  {name}: done after {time.perf_counter() - started:.0f} s", flush=True)
    finally:
        close_systems(systems)
    print(f"{'system':<12} {'first p50':>10} {'first p99':>10} {'last p50':>10} {'last p99':>10} {'p50 ratio':>10}")
    rows = {}
    for label in (s.label for s in systems):
        first, last = passes["first"].get(label, []), passes["last"].get(label, [])
        if not first or not last:
            print(f"{label:<12} no reads recorded")
            continue
        ratio = percentile(last, 50) / percentile(first, 50)
        rows[label] = ratio
        print(f"{label:<12} {percentile(first, 50):>10.1f} {percentile(first, 99):>10.1f} "
              f"{percentile(last, 50):>10.1f} {percentile(last, 99):>10.1f} {ratio:>9.2f}x"
              + ("" if ratio <= TARGET else f"  (above the {TARGET}x target)"))
    print(host_line())
    print(json.dumps({"p50_ratio_last_over_first": {k: round(v, 3) for k, v in rows.items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

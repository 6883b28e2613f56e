"""Benchmark: time to generate the canonical library, and its size on disk.

Run from a checkout: ``python bench/generate_library.py [--repeat 3]``. Prints one line
per repetition and a summary; nothing is asserted (machines are shared and noisy).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from conformance.world.generator import generate_corpus


def _size(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {value}")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=_positive, default=3)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    times = []
    for i in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            ids = generate_corpus(Path(tmp) / "fixtures", Path(tmp) / "gold", seed=args.seed)
            elapsed = time.perf_counter() - started
            times.append(elapsed)
            f_count, f_bytes = _size(Path(tmp) / "fixtures")
            g_count, g_bytes = _size(Path(tmp) / "gold")
        print(f"run {i + 1}: {len(ids)} scenarios in {elapsed:.2f} s; fixtures {f_count} files "
              f"{f_bytes / 1e6:.2f} MB, gold {g_count} files {g_bytes / 1e6:.2f} MB")
    times.sort()
    print(f"median {times[len(times) // 2]:.2f} s, best {times[0]:.2f} s over {args.repeat} runs")


if __name__ == "__main__":
    main()

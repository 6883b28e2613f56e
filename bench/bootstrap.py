"""Cluster-bootstrap speed: the vectorised engine against a per-case Python loop.

Prints figures, asserts nothing (machines here are shared and noisy; compare the ratio
of two timings taken in one run).

    python bench/bootstrap.py                 # 10,000 resamples, 10,000 probes, 200 scenarios
    python bench/bootstrap.py --resamples 1000  # quicker

The loop is the straightforward version (guide §7): for each resample draw scenarios with
replacement and average the drawn scenarios' per-probe scores one by one. The engine is
``conformance.scoring.bootstrap.ratio_ci`` (count matrix x per-scenario sums) and, for
latency, ``percentile_ci`` (vectorised weighted percentiles).
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np

from conformance.scoring.bootstrap import percentile_ci, ratio_ci, resample_counts


def python_loop(by_case: dict[str, list[float]], n: int, seed: int) -> tuple[float, float]:
    rng = random.Random(seed)
    cases = list(by_case)
    stats = []
    for _ in range(n):
        total = count = 0.0
        for _ in cases:
            scores = by_case[rng.choice(cases)]
            for x in scores:
                total += x
                count += 1
        stats.append(total / count)
    stats.sort()
    return stats[int(0.025 * n)], stats[int(0.975 * n) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--probes", type=int, default=10_000)
    parser.add_argument("--scenarios", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    gen = np.random.default_rng(args.seed)
    owner = np.sort(gen.integers(0, args.scenarios, size=args.probes))
    correct = (gen.random(args.probes) < 0.6).astype(float)
    latency = gen.lognormal(mean=2.0, sigma=0.7, size=args.probes)
    by_case: dict[str, list[float]] = {}
    for case, x in zip(owner, correct):
        by_case.setdefault(f"s{case:04d}", []).append(float(x))
    num = np.bincount(owner, weights=correct, minlength=args.scenarios)
    den = np.bincount(owner, minlength=args.scenarios).astype(float)
    print(f"{args.resamples:,} resamples over {args.probes:,} probes in {args.scenarios} scenarios")

    started = time.perf_counter()
    value, lo, hi = ratio_ci(num, den, n_boot=args.resamples, seed=args.seed)
    engine = time.perf_counter() - started
    print(f"vectorised ratio_ci     {engine * 1000:10.1f} ms   value {value:.4f}  ci [{lo:.4f}, {hi:.4f}]")

    started = time.perf_counter()
    loop_lo, loop_hi = python_loop(by_case, args.resamples, args.seed)
    loop = time.perf_counter() - started
    print(f"per-case Python loop    {loop * 1000:10.1f} ms   ci [{loop_lo:.4f}, {loop_hi:.4f}]")
    print(f"speed-up                {loop / engine:10.1f} x")

    for workers in (1, 2):
        started = time.perf_counter()
        resample_counts(args.scenarios, args.resamples, args.seed, workers=workers)
        print(f"count matrix, {workers} worker(s) {(time.perf_counter() - started) * 1000:8.1f} ms")
    assert np.array_equal(resample_counts(args.scenarios, args.resamples, args.seed, workers=1),
                          resample_counts(args.scenarios, args.resamples, args.seed, workers=2))
    print("parallel and serial count matrices identical: yes")

    clusters = [latency[owner == c] for c in range(args.scenarios)]
    started = time.perf_counter()
    p99 = percentile_ci(clusters, 99, n_boot=args.resamples, seed=args.seed)
    print(f"latency p99 interval    {(time.perf_counter() - started) * 1000:10.1f} ms   "
          f"p99 {p99[0]:.2f} ms  ci [{p99[1]:.2f}, {p99[2]:.2f}]")


if __name__ == "__main__":
    main()

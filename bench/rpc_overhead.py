"""Harness overhead per RPC: the runner's gRPC client against a null adapter, versus a direct call.

Prints figures, asserts nothing (machines here are shared and noisy; compare figures
taken in one run).

    python bench/rpc_overhead.py                     # 5,000 calls each, none adapter in its own process
    python bench/rpc_overhead.py --calls 20000
    python bench/rpc_overhead.py --server thread     # gRPC server in this process (no second process)

What is timed, per call, with ``time.perf_counter_ns`` around it:

- **gRPC**: ``RemoteSystem.store`` / ``RemoteSystem.retrieve``, the very calls the runner
  makes (``conformance.runner.systems``). With ``--server process`` (default) the system is
  the ``none`` adapter started by ``open_system("none", isolation="process")``: its own
  virtualenv, process and cgroup, loopback gRPC. With ``--server thread`` it is the same
  ``NoneBackend`` class served by ``drift_sdk.server.build_server`` in this process,
  behind a plain ``BackendClient``. Included: pydantic Session -> protobuf, serialisation,
  loopback, the SDK servicer (protobuf -> SDK dataclasses, its lock), the reply back and
  its conversion to the runner's outcome types.
- **direct**: the same Backend class (``adapters/none/adapter.py``'s ``NoneBackend``)
  called in this process with the SDK's own types (``Session`` built once beforehand):
  the floor any adapter pays whatever the harness does.

The payload is a real session (the first of the first committed fixture) and a real probe.
After a warm-up, calls run in alternating blocks (direct, gRPC, direct, ...) so slow
phases of a noisy host fall on both sides. "added" is gRPC minus direct at the same
percentile (p50, p99), in microseconds.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import host_line, percentile  # noqa: E402

from conformance import paths  # noqa: E402
from conformance.backend.client import BackendClient, session_to_proto  # noqa: E402
from conformance.contract.corpus import fixture_files, iter_fixture  # noqa: E402
from conformance.contract.fixture import CheckpointLine, SessionLine  # noqa: E402
from conformance.runner.systems import RemoteSystem, open_system  # noqa: E402
from drift_sdk.server import build_server, session_from_proto  # noqa: E402


def _none_backend_class():
    path = paths.adapters_dir() / "none" / "adapter.py"
    spec = importlib.util.spec_from_file_location("bench_none_adapter", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.NoneBackend


def _payload():
    """The first session and the first probe of the first committed fixture."""
    session = probe = None
    for line in iter_fixture(fixture_files(paths.fixtures_dir())[0]):
        if session is None and isinstance(line, SessionLine):
            session = line
        elif isinstance(line, CheckpointLine) and line.probes:
            probe = line.probes[0]
            break
    return session, probe


def _timed(call, n: int, out: list[float]) -> None:
    clock = time.perf_counter_ns
    for _ in range(n):
        started = clock()
        call()
        out.append((clock() - started) / 1000.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000, help="timed calls per method and path")
    parser.add_argument("--warmup", type=int, default=500, help="untimed calls per method and path first")
    parser.add_argument("--block", type=int, default=250, help="calls per alternating block")
    parser.add_argument("--server", choices=("process", "thread"), default="process")
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()

    session, probe = _payload()
    sdk_session = session_from_proto(session_to_proto(session))
    namespace = "bench/rpc-overhead"
    direct_backend = _none_backend_class()()
    direct_backend.reset(namespace)

    server = None
    if args.server == "process":
        system = open_system("none", isolation="process")
        where = f"none adapter in its own process (pid {system.isolation.get('pid')}), loopback gRPC"
    else:
        server, port = build_server(_none_backend_class()())
        server.start()
        system = RemoteSystem(label="none", spec="none", client=BackendClient(f"127.0.0.1:{port}", "none"))
        system.load_description()
        where = "NoneBackend served by drift_sdk.server.build_server in this process, loopback gRPC"
    try:
        system.reset(namespace)
        calls = {
            "Store": (lambda: direct_backend.store(namespace, sdk_session),
                      lambda: system.store(namespace, session)),
            "Retrieve": (lambda: direct_backend.retrieve(namespace, probe.query, args.k, probe.asked_by,
                                                         probe.asked_at),
                         lambda: system.retrieve(namespace, probe, args.k)),
        }
        samples: dict[tuple[str, str], list[float]] = {}
        for method, (direct, remote) in calls.items():
            _timed(direct, args.warmup, [])
            _timed(remote, args.warmup, [])
            d, g = samples.setdefault((method, "direct"), []), samples.setdefault((method, "gRPC"), [])
            done = 0
            while done < args.calls:
                n = min(args.block, args.calls - done)
                _timed(direct, n, d)
                _timed(remote, n, g)
                done += n
    finally:
        system.close()
        if server is not None:
            server.stop(grace=None)

    print(host_line())
    print(f"server: {where}")
    print(f"payload: session of {len(session.messages)} messages "
          f"({sum(len(m.text) for m in session.messages)} chars), probe query of {len(probe.query)} chars, "
          f"k={args.k}; {args.calls:,} timed calls per row after {args.warmup:,} warm-up")
    print()
    print(f"{'call':<9} {'path':<7} {'p50 us':>9} {'p99 us':>9} {'mean us':>9}")
    added = {}
    for method in calls:
        for path in ("direct", "gRPC"):
            values = sorted(samples[(method, path)])
            p50, p99 = percentile(values, 50), percentile(values, 99)
            print(f"{method:<9} {path:<7} {p50:>9.1f} {p99:>9.1f} {sum(values) / len(values):>9.1f}")
            added.setdefault(method, []).append((p50, p99))
    print()
    print(f"{'call':<9} {'added p50 us':>13} {'added p99 us':>13}")
    for method, ((d50, d99), (g50, g99)) in added.items():
        print(f"{method:<9} {g50 - d50:>13.1f} {g99 - d99:>13.1f}")


if __name__ == "__main__":
    main()

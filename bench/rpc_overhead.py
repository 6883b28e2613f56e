"""Harness overhead per RPC: the runner's gRPC client against a null adapter, versus a bare
grpcio echo between two processes and a direct call.

Prints figures, asserts nothing (machines here are shared and noisy; compare figures
taken in one run).

    python bench/rpc_overhead.py                     # 5,000 calls each, none adapter in its own process
    python bench/rpc_overhead.py --calls 20000
    python bench/rpc_overhead.py --server thread     # gRPC server in this process (no second process)

What is timed, per call, with ``time.perf_counter_ns`` around it:

- **harness**: ``RemoteSystem.store`` / ``RemoteSystem.retrieve``, the very calls the runner
  makes (``conformance.backend.systems``). With ``--server process`` (default) the system is
  the ``none`` adapter started by ``open_system("none", isolation="process")``: its own
  virtualenv, process and cgroup, loopback gRPC. With ``--server thread`` it is the same
  ``NoneBackend`` class served by ``drift_sdk.server.build_server`` in this process,
  behind a plain ``BackendClient``. Included: pydantic Session -> protobuf, serialisation,
  loopback, the SDK servicer (protobuf -> SDK dataclasses, its lock), the reply back and
  its conversion to the runner's outcome types.
- **echo**: the floor gRPC itself sets. A second process (this script with ``--echo-server``,
  this interpreter, no cgroup; with ``--server thread`` a server in this process) serves one
  generic unary method per call that returns fixed bytes; the client sends the very bytes the
  harness's request serialises to and gets back the bytes of the adapter's real reply. Same
  channel and server options, same deadline, same thread pool size as the SDK; no protobuf
  message, no SDK code on either side.
- **direct**: the same Backend class (``adapters/none/adapter.py``'s ``NoneBackend``)
  called in this process with the SDK's own types (``Session`` built once beforehand):
  what any adapter pays whatever the harness does.

Beside the wall times: **client CPU us**, this thread's CPU time per call
(``time.thread_time_ns``), and **server CPU us**, the serving process's CPU time per call over
every thread (``/proc/PID/task/*/schedstat``, process mode only): counts of work, which a
loaded host inflates far less than it inflates latency.

The payload is a real session (the first of the first committed fixture) and a real probe.
After a warm-up, calls run in alternating blocks (direct, harness, echo, ...) so slow phases
of a noisy host fall on every path. "added" is harness minus echo at the same percentile (p50,
p99), in microseconds, and "ratio" harness over echo. Target (issue 15, printed, never
asserted): the harness at most 1.2x the bare echo at p50.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from concurrent import futures
from pathlib import Path

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import host_line, percentile  # noqa: E402

from conformance import paths  # noqa: E402
from conformance.backend.client import BackendClient, Deadlines, session_to_proto, store_request  # noqa: E402
from conformance.contract.corpus import fixture_files, iter_fixture  # noqa: E402
from conformance.contract.fixture import CheckpointLine, SessionLine  # noqa: E402
from conformance.backend.systems import RemoteSystem, open_system  # noqa: E402
from drift_sdk.server import MAX_MESSAGE_BYTES, build_server, session_from_proto  # noqa: E402
from drift_sdk.v1 import memory_backend_pb2 as pb  # noqa: E402

TARGET_RATIO = 1.2
_OPTIONS = [("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES)]


PATHS = ("direct", "harness", "echo")


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


def _echo_server(replies: dict[str, bytes]) -> tuple[grpc.Server, int]:
    """A bare grpcio server: one generic unary method per name, returning its fixed bytes."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), options=_OPTIONS)
    handlers = {name: grpc.unary_unary_rpc_method_handler(lambda request, context, reply=reply: reply)
                for name, reply in replies.items()}
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("bench.Echo", handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, port


def _serve_echo(folder: Path) -> None:
    """``--echo-server FOLDER``: serve the replies in FOLDER/<name>.bin until stdin closes; the
    port goes to FOLDER/port."""
    replies = {p.stem: p.read_bytes() for p in folder.glob("*.bin")}
    server, port = _echo_server(replies)
    (folder / "port.tmp").write_text(str(port))
    (folder / "port.tmp").rename(folder / "port")
    sys.stdin.read()  # the parent closes it (or dies): then stop
    server.stop(grace=None)


def _start_echo(replies: dict[str, bytes], folder: Path):
    """The echo server in its own process; returns (process, port)."""
    for name, reply in replies.items():
        (folder / f"{name}.bin").write_bytes(reply)
    proc = subprocess.Popen([sys.executable, __file__, "--echo-server", str(folder)], stdin=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not (folder / "port").exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the echo server did not start")
        time.sleep(0.02)
    return proc, int((folder / "port").read_text())


def _cpu_ns(pid: int | None) -> int | None:
    """CPU time a process has run so far, every thread, in ns (Linux schedstat), or None."""
    if pid is None:
        return None
    try:
        return sum(int((task / "schedstat").read_text().split()[0])
                   for task in Path(f"/proc/{pid}/task").iterdir())
    except (OSError, ValueError, IndexError):
        return None


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
    parser.add_argument("--echo-server", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo_server is not None:
        _serve_echo(args.echo_server)
        return

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
    echo_proc = echo_server = channel = None
    scratch = tempfile.TemporaryDirectory(prefix="drift-bench-echo-")
    try:
        system.reset(namespace)
        # The echo's bytes: what the harness sends for these calls, and what the adapter answers.
        store_bytes = store_request(namespace, session).SerializeToString()
        retrieve_request = pb.RetrieveRequest(namespace=namespace, query=probe.query, k=args.k,
                                              querying_entity=probe.asked_by, now=probe.asked_at)
        replies = {"Store": system.client.store(namespace, session)[0].SerializeToString(),
                   "Retrieve": system.client.retrieve(namespace, probe.query, args.k, probe.asked_by,
                                                      probe.asked_at)[0].SerializeToString()}
        if args.server == "process":
            echo_proc, echo_port = _start_echo(replies, Path(scratch.name))
        else:
            echo_server, echo_port = _echo_server(replies)
        channel = grpc.insecure_channel(f"127.0.0.1:{echo_port}", options=_OPTIONS)
        deadlines = Deadlines()
        echo_store = channel.unary_unary("/bench.Echo/Store")
        echo_retrieve = channel.unary_unary("/bench.Echo/Retrieve")
        retrieve_bytes = retrieve_request.SerializeToString()
        calls = {
            "Store": (lambda: direct_backend.store(namespace, sdk_session),
                      lambda: system.store(namespace, session),
                      lambda: echo_store(store_bytes, timeout=deadlines.store)),
            "Retrieve": (lambda: direct_backend.retrieve(namespace, probe.query, args.k, probe.asked_by,
                                                         probe.asked_at),
                         lambda: system.retrieve(namespace, probe, args.k),
                         lambda: echo_retrieve(retrieve_bytes, timeout=deadlines.retrieve)),
        }
        samples: dict[tuple[str, str], list[float]] = {}
        # Per (call, path): client thread CPU ns, server process CPU ns, calls (load cannot inflate a count of work).
        cpu: dict[tuple[str, str], list[int]] = {}
        server_pids = ({"harness": system.isolation.get("pid"), "echo": echo_proc.pid} if args.server == "process"
                       else {})
        for method, paths_of in calls.items():
            for call in paths_of:
                _timed(call, args.warmup, [])
            outs = [samples.setdefault((method, path), []) for path in PATHS]
            done = 0
            while done < args.calls:
                n = min(args.block, args.calls - done)
                for path, call, out in zip(PATHS, paths_of, outs):
                    server_before, client_before = _cpu_ns(server_pids.get(path)), time.thread_time_ns()
                    _timed(call, n, out)
                    server_after, client_after = _cpu_ns(server_pids.get(path)), time.thread_time_ns()
                    spent = cpu.setdefault((method, path), [0, 0, 0])
                    spent[0] += client_after - client_before
                    if server_before is not None and server_after is not None:
                        spent[1] += server_after - server_before
                    spent[2] += n
                done += n
    finally:
        system.close()
        if server is not None:
            server.stop(grace=None)
        if channel is not None:
            channel.close()
        if echo_server is not None:
            echo_server.stop(grace=None)
        if echo_proc is not None:
            echo_proc.stdin.close()
            echo_proc.wait(timeout=10)
        scratch.cleanup()

    print(host_line())
    print(f"server: {where}; echo: {'a second process' if args.server == 'process' else 'this process'}")
    print(f"payload: session of {len(session.messages)} messages "
          f"({sum(len(m.text) for m in session.messages)} chars, {len(store_bytes)} bytes on the wire), probe "
          f"query of {len(probe.query)} chars, k={args.k}; {args.calls:,} timed calls per row after "
          f"{args.warmup:,} warm-up")
    print()
    print(f"{'call':<9} {'path':<8} {'p50 us':>9} {'p99 us':>9} {'mean us':>9} {'client CPU us':>14} "
          f"{'server CPU us':>14}")
    figures = {}
    for method in calls:
        for path in PATHS:
            values = sorted(samples[(method, path)])
            p50, p99 = percentile(values, 50), percentile(values, 99)
            client_ns, server_ns, n = cpu[(method, path)]
            server = f"{server_ns / n / 1000:>14.1f}" if path in server_pids else f"{'-':>14}"
            print(f"{method:<9} {path:<8} {p50:>9.1f} {p99:>9.1f} {sum(values) / len(values):>9.1f} "
                  f"{client_ns / n / 1000:>14.1f} {server}")
            figures[(method, path)] = (p50, p99)
    print()
    print(f"{'call':<9} {'added p50 us':>13} {'added p99 us':>13} {'ratio p50':>10} {'ratio p99':>10}")
    worst = 0.0
    for method in calls:
        (h50, h99), (e50, e99) = figures[(method, "harness")], figures[(method, "echo")]
        worst = max(worst, h50 / e50)
        print(f"{method:<9} {h50 - e50:>13.1f} {h99 - e99:>13.1f} {h50 / e50:>9.2f}x {h99 / e99:>9.2f}x")
    print()
    print(f"target: harness at most {TARGET_RATIO:g}x the bare echo at p50: worst {worst:.2f}x, "
          f"{'met' if worst <= TARGET_RATIO else 'NOT met'}")
    print(host_line())


if __name__ == "__main__":
    main()

"""``python -m drift_sdk.launch ADAPTER.py``: run an adapter script as the launcher wants it.

Before the script runs, the process asks Linux to send it SIGTERM when its parent
(the runner) dies, however it dies, so no adapter outlives its run. The kernel
ties this to the thread that started the process: the runner launches adapters
from its main thread. ``DRIFT_RUNNER_PID`` (set by the launcher) lets a runner that
died before the request took effect be noticed. The script then
runs as ``__main__`` with its own folder first on ``sys.path``, as ``python ADAPTER.py``
would.

Processes the adapter starts do not get that signal from the kernel, so a watchdog
thread notices the runner's death (its parent changes) and kills the adapter's whole
process group (the launcher starts each adapter as the leader of its own session), the
adapter included: no helper outlives a runner killed by SIGKILL.
"""

from __future__ import annotations

import os
import runpy
import signal
import sys

PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int | None) -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        return  # not Linux: the runner's own cleanup still stops us
    if parent is not None and os.getppid() != parent:  # the runner died before prctl took effect
        sys.exit("drift_sdk.launch: the runner is gone; not starting")


def _kill_group_members() -> None:
    """SIGKILL every other process of this process group (the helpers the adapter started)."""
    me, group = os.getpid(), os.getpgrp()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            if int(fields[2]) == group:  # pgrp, the 5th field of proc(5)'s stat
                os.kill(int(entry), signal.SIGKILL)
        except (OSError, IndexError, ValueError):
            continue


def _end_group(parent: int) -> None:
    """On SIGTERM: kill the whole group when the runner is gone, else die as SIGTERM does."""
    if os.getppid() != parent:
        os.killpg(os.getpgrp(), signal.SIGKILL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def _watch_parent(parent: int, every_s: float = 0.2) -> None:
    """Kill this process group once ``parent`` is no longer our parent (it died)."""
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every_s)
        os.killpg(os.getpgrp(), signal.SIGKILL)

    threading.Thread(target=watch, name="drift-runner-watchdog", daemon=True).start()


def main(argv: list[str]) -> None:
    if len(argv) != 1:
        sys.exit("usage: python -m drift_sdk.launch ADAPTER.py")
    runner = os.environ.get("DRIFT_RUNNER_PID")
    parent = int(runner) if runner and runner.isdigit() else None
    if parent is not None and os.getpgrp() == os.getpid():  # only a group of our own is ours to kill
        # Until serve() installs its own handler, a SIGTERM (the runner's death) takes the group along.
        signal.signal(signal.SIGTERM, lambda signum, frame: _end_group(parent))
        _watch_parent(parent)
    _die_with_parent(parent)
    script = os.path.abspath(argv[0])
    sys.path.insert(0, os.path.dirname(script))
    sys.argv = [script]
    try:
        runpy.run_path(script, run_name="__main__")
    finally:
        if parent is not None and os.getpgrp() == os.getpid():
            # serve() returned (on the SIGTERM of a stop, or of the runner's death: while the
            # runner's threads die one by one our parent still looks alive) or the script
            # failed: the adapter ends here, and its helpers with it.
            _kill_group_members()


if __name__ == "__main__":
    main(sys.argv[1:])

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
    _die_with_parent(parent)
    if parent is not None and os.getpgrp() == os.getpid():  # only a group of our own is ours to kill
        _watch_parent(parent)
    script = os.path.abspath(argv[0])
    sys.path.insert(0, os.path.dirname(script))
    sys.argv = [script]
    try:
        runpy.run_path(script, run_name="__main__")
    finally:
        if parent is not None and os.getppid() != parent and os.getpgrp() == os.getpid():
            # The runner died and serve() returned on the SIGTERM: take the helpers along.
            os.killpg(os.getpgrp(), signal.SIGKILL)


if __name__ == "__main__":
    main(sys.argv[1:])

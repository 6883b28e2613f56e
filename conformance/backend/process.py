"""Process isolation: an adapter as its own OS process in its own virtualenv.

The process binds loopback on a port it picks itself and writes the port to a
file (no guessing, no race); the launcher waits for health SERVING within the
adapter's startup timeout, stops it on exit or error, and shows the tail of its
stderr when it dies.

The process runs inside its own cgroup(s) holding the CPU and memory limits of
adapter.yaml's ``resources`` where the host allows it (:mod:`conformance.backend.limits`);
``isolation["limits"]`` records what was enforced, and a kill by the kernel for
exceeding the memory limit is reported as such.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import re
import tempfile
import threading
import time
from pathlib import Path

from conformance.backend.client import BackendClient, Deadlines
from conformance.backend.limits import CgroupLimits
from conformance.backend.manifest import AdapterManifest, entry_path
from conformance.backend.privilege import (adapter_user, drop_to, grant_traverse, make_undumpable,
                                           unreachable_folders)
from conformance.backend.venvs import ensure_venv, sdk_path
from conformance.errors import DriftError
from conformance.secrets import harness_variable, redact

#: Environment passed to every adapter; everything else is withheld (keys included,
#: unless adapter.yaml names them under ``env``).
_BASE_ENV = ("LANG", "LC_ALL", "TZ", "TMPDIR", "SSL_CERT_FILE", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
#: PATH of an adapter: its own virtualenv first, then the system's, never the runner's.
_SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


class AdapterStartError(DriftError, RuntimeError):
    """The adapter did not come up (or died); the message ends with its stderr tail."""


_MAX_LOG_LINE = 1 << 20


def _pump_redacted(pipe, path: Path) -> None:
    """Copy an adapter's output to ``path`` line by line, secrets redacted (conformance.secrets)."""
    with pipe, open(path, "w", encoding="utf-8", errors="replace") as out:
        for raw in iter(lambda: pipe.readline(_MAX_LOG_LINE), b""):
            out.write(redact(raw.decode("utf-8", errors="replace")))
            out.flush()


_WORKDIR = re.compile(r"^drift-adapter-.+-(?P<pid>\d+)-[^-]+$")
_swept = False


def sweep_stale_workdirs(parent: Path | None = None, log=None) -> int:
    """Remove adapter working folders left in the temp folder by runners that are gone.

    A runner killed by SIGKILL never removes its adapters' working folders (``adapter.log``
    included). Only names of the form ``drift-adapter-<name>-<runner pid>-<random>`` are
    touched, only when that pid no longer exists (a reused pid keeps its folder: the safe
    side). Runs once per process unless ``parent`` is given. Returns how many were removed.
    """
    global _swept
    if parent is None:
        if _swept:
            return 0
        _swept = True
    parent = Path(parent or tempfile.gettempdir())
    removed = 0
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return 0
    for entry in entries:
        match = _WORKDIR.match(entry.name)
        if not match or not entry.is_dir(follow_symlinks=False) or int(match["pid"]) == os.getpid():
            continue
        try:
            os.kill(int(match["pid"]), 0)
            continue
        except ProcessLookupError:
            pass
        except PermissionError:
            continue  # another user's live runner
        shutil.rmtree(entry.path, ignore_errors=True)
        removed += 1
    if removed and log:
        log(f"removed {removed} adapter working folder(s) left by runners that were killed")
    return removed


def adapter_environment(manifest: AdapterManifest) -> dict[str, str]:
    """The variables of the runner's environment that ``manifest.env`` names, less the harness's
    own (:func:`conformance.secrets.harness_variable`; adapter.yaml validation refuses those, and
    this holds for a manifest that skipped it)."""
    return {k: os.environ[k] for k in manifest.env if k in os.environ and not harness_variable(k)}


def log_tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    tail = text.strip().splitlines()[-lines:]
    return "\n".join("    " + line for line in tail) or "    (empty)"


class ProcessAdapter:
    """Start, watch and stop one adapter process. Use as a context manager.

    ``address``, ``client`` and ``isolation`` are set once :meth:`start` returns.
    """

    def __init__(self, folder: Path, manifest: AdapterManifest, deadlines: Deadlines = Deadlines(), log=None):
        self.folder, self.manifest, self.deadlines, self.log = Path(folder), manifest, deadlines, log
        self.proc: subprocess.Popen | None = None
        self.workdir: Path | None = None
        self.client: BackendClient | None = None
        self.limits: CgroupLimits | None = None
        self.isolation: dict = {}
        self.venv: tuple[Path, bool] | None = None
        """``(python, built_now)`` once :meth:`prepare` has run."""
        self.port_file: Path | None = None
        self._pump: threading.Thread | None = None

    @property
    def stderr_path(self) -> Path:
        assert self.workdir is not None
        return self.workdir / "adapter.log"

    def start(self) -> "ProcessAdapter":
        """Build (or reuse) the virtualenv, start the process, wait for SERVING.

        The three steps are also :meth:`prepare`, :meth:`launch` and :meth:`wait_until_serving`,
        so a runner can build several virtualenvs at once and let adapters boot side by side.

        Raises:
            ManifestError: the entry now resolves outside the adapter folder (or is gone).
            VenvError: the virtualenv could not be built.
            AdapterStartError: the process exited or did not serve in time.
        """
        self.launch()
        try:
            self.wait_until_serving()
        except BaseException:
            self.stop()
            raise
        return self

    def prepare(self) -> "ProcessAdapter":
        """Build (or reuse) the adapter's virtualenv; safe to call from any thread.

        Raises:
            VenvError: the virtualenv could not be built.
        """
        if self.venv is None:
            self.venv = ensure_venv(self.manifest.name, self.folder / "requirements.txt", log=self.log)
        return self

    def launch(self) -> "ProcessAdapter":
        """Start the process (its virtualenv first, if :meth:`prepare` has not run) without
        waiting for it to serve. Call it from the thread that outlives the adapter (the main
        thread): Linux stops the adapter when the thread that started it ends
        (:mod:`drift_sdk.launch`).

        Raises:
            VenvError: the virtualenv could not be built.
            AdapterStartError: the cgroups or the process could not be set up.
        """
        name = self.manifest.name
        entry = entry_path(self.folder, self.manifest)  # checked again here: adapter.yaml was read earlier
        python, built = self.prepare().venv
        sweep_stale_workdirs(log=self.log)
        # A fresh, empty working folder: neither fixtures nor gold are reachable from here.
        # Its name carries the runner's pid, so a later run can tell a killed runner's folder.
        self.workdir = Path(tempfile.mkdtemp(prefix=f"drift-adapter-{name}-{os.getpid()}-"))
        port_file = self.port_file = self.workdir / "port"
        env = {k: os.environ[k] for k in _BASE_ENV if k in os.environ}
        env.update(adapter_environment(self.manifest))
        env.update(PATH=f"{python.parent}:{_SYSTEM_PATH}", DRIFT_RUNNER_PID=str(os.getpid()),
                   HOME=str(self.workdir), PYTHONPATH=str(sdk_path()), PYTHONUNBUFFERED="1",
                   PYTHONDONTWRITEBYTECODE="1", DRIFT_BACKEND_ADDRESS="127.0.0.1:0",
                   DRIFT_BACKEND_PORT_FILE=str(port_file))
        # drift_sdk.launch runs the entry script after asking the kernel to stop the adapter
        # when the runner dies, even by SIGKILL (no orphaned adapters).
        argv = [str(python), "-m", "drift_sdk.launch", str(entry)]
        # Out of the runner's /proc (its environment holds keys this adapter was not given).
        undumpable = make_undumpable()
        user = adapter_user()
        run_as = {"user": None if user is None else user.name, "undumpable": undumpable}
        if user is not None:
            dropped = drop_to(user, argv)
            if dropped is None:
                run_as.update(user="root", why="no setpriv on this host to drop to an unprivileged user")
            else:
                argv = dropped
                os.chown(self.workdir, user.uid, user.gid)
                blocked = unreachable_folders(env, self.manifest.env, user)
                if blocked and self.log:
                    self.log(f"adapter {name} runs as {user.name}, who cannot write {', '.join(blocked)}: hand the "
                             f"folder to that user (chown) or set DRIFT_ADAPTER_USER")
                # Not in the receipt: only the first run on a host changes anything.
                granted = grant_traverse([python.resolve(), python.parent.parent, sdk_path(), entry,
                                          self.workdir.parent])
                if granted:
                    if self.log:
                        self.log(f"adapter {name} runs as {user.name}: granted search permission (o+x, not "
                                 f"read) on {', '.join(granted)} so it can reach its interpreter and files")
        try:
            # The cgroup(s) exist, with their limits written, before the process does; the
            # wrapper puts the process in them before exec (see CgroupLimits.wrap), so the
            # adapter never runs a single instruction unlimited.
            res = self.manifest.resources
            self.limits = CgroupLimits.detect(res.cpus, res.memory_gb, label=name)
            if self.limits.clamped and self.log:
                self.log(f"adapter {name} asks for {res.cpus:g} cpus and {res.memory_gb:g} GB; this host has "
                         f"{self.limits.host['cpus']} cpus and {self.limits.host['memory_gb']} GB: limited to "
                         f"{self.limits.cpus:g} cpus and {self.limits.memory_gb:g} GB")
            # Output goes through a pipe and is redacted before it reaches adapter.log: an
            # adapter may print the key it was given, and a killed run leaves the log behind.
            self.proc = subprocess.Popen(self.limits.wrap(argv), cwd=self.workdir, env=env,
                                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                         start_new_session=True)
            self._pump = threading.Thread(target=_pump_redacted, args=(self.proc.stdout, self.stderr_path),
                                          name=f"adapter-log-{name}", daemon=True)
            self._pump.start()
            self.isolation = {"mode": "process", "venv": str(python.parent.parent), "venv_built_now": built,
                              "pid": self.proc.pid, "bind": "127.0.0.1", "limits": self.limits.describe(),
                              "run_as": run_as}
        except BaseException:
            self.stop()  # never leave a half-started adapter behind
            raise
        return self

    def wait_until_serving(self) -> "ProcessAdapter":
        """Wait (after :meth:`launch`) for the bound port, then for health SERVING, within
        the manifest's ``startup_timeout_s`` counted from now. Sets ``address`` and ``client``.

        Raises:
            AdapterStartError: the process exited or did not serve in time (it is not stopped
                here: the caller stops it).
        """
        name = self.manifest.name
        port_file = self.port_file
        assert port_file is not None, "launch() first"
        deadline = time.monotonic() + self.manifest.startup_timeout_s
        while not port_file.exists():
            self._check_alive("while starting")
            if time.monotonic() > deadline:
                raise AdapterStartError(self._died(f"did not bind a port within {self.manifest.startup_timeout_s:g} s"))
            time.sleep(0.05)
        self.address = f"127.0.0.1:{int(port_file.read_text())}"
        self.client = BackendClient(self.address, name, self.deadlines)
        while not self.client.serving():
            self._check_alive("before health said SERVING")
            if time.monotonic() > deadline:
                raise AdapterStartError(self._died(f"health not SERVING within {self.manifest.startup_timeout_s:g} s"))
            time.sleep(0.1)
        return self

    def _died(self, what: str) -> str:
        if self._pump is not None and self.proc is not None and self.proc.poll() is not None:
            # Its last lines are still in the pipe when it has just died (a loaded host lost this
            # race): the pump ends at the pipe's end, unless a helper of its holds the pipe open.
            self._pump.join(timeout=2)
        return f"adapter {self.manifest.name} {what}; last lines of its stderr:\n" + log_tail(self.stderr_path)

    def _check_alive(self, when: str) -> None:
        if self.proc is not None and self.proc.poll() is not None:
            raise AdapterStartError(self._died(f"{self._how_it_ended(self.proc.returncode)} {when}"))

    def _memory_limit_text(self) -> str:
        limits = self.limits
        assert limits is not None
        asked = limits.requested["memory_gb"]
        clamp = f"asked {asked:g} GB, clamped to the host; " if limits.memory_gb < asked else ""
        return f"{limits.memory_gb:g} GB ({clamp}{limits.enforced_by})"

    def _how_it_ended(self, code: int) -> str:
        """Why the process ended: out of memory when its cgroup counted an OOM kill (or,
        on kernels without that counter, a SIGKILL after hitting the limit), else the
        signal or the exit code."""
        limits = self.limits
        oom = limits.oom_kills() if limits is not None else None
        if oom:
            return (f"ran out of memory: killed by the kernel for exceeding its memory limit of "
                    f"{self._memory_limit_text()}; {oom} OOM kill(s) counted in its cgroup, exit status {code}")
        if code == -signal.SIGKILL and limits is not None and oom is None and (limits.limit_hits() or 0) > 0:
            return (f"probably ran out of memory: killed by SIGKILL after reaching its memory limit of "
                    f"{self._memory_limit_text()} (this kernel has no OOM-kill counter to confirm it was the "
                    f"kernel's out-of-memory killer)")
        if code < 0:
            try:
                return f"was killed by signal {signal.Signals(-code).name} (exit status {code})"
            except ValueError:
                return f"was killed by signal {-code} (exit status {code})"
        return f"exited with code {code}"

    def exit_report(self) -> str | None:
        """If the process has died, why (out of memory, a signal, an exit code) and its stderr tail.

        Also reports a still-running adapter whose cgroup saw an OOM kill (one of its
        child processes was killed). Called after a failed call: an OOM kill in flight
        (counted, process not yet reaped) is waited for up to 5 s.
        """
        if self.proc is None:
            return None
        code = self.proc.poll()
        oom = self.limits.oom_kills() if self.limits is not None else None
        if code is None and oom:
            try:
                code = self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                return self._died(f"is still running, but ran out of memory: the kernel killed {oom} process(es) "
                                  f"in its cgroup for exceeding its memory limit of {self._memory_limit_text()}")
        if code is None:
            return None
        return self._died(self._how_it_ended(code))

    def terminate(self) -> None:
        """Ask the process to stop (SIGTERM to its process group) without waiting for it; a
        runner signals every adapter first, so they shut down side by side, then :meth:`stop`s each."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def stop(self, grace_s: float = 5.0) -> None:
        """Stop the process (SIGTERM, then SIGKILL after ``grace_s`` seconds; 0: SIGKILL at
        once, for a hung adapter), remove its cgroup(s) and its working folder."""
        if self.client is not None:
            self.client.close()
            self.client = None
        if self.proc is not None and self.proc.poll() is None:
            try:
                if grace_s <= 0:
                    raise subprocess.TimeoutExpired(self.proc.args, 0)
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=grace_s)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(timeout=5)
        if self.proc is not None:
            try:  # helpers it started, still in its process group after it ended
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self._pump is not None:
            self._pump.join(timeout=5)  # the log is complete before it is read or removed
        if self.limits is not None:
            # After the process is reaped; strays left in the cgroup are killed there.
            left = self.limits.cleanup()
            if left and self.log:
                self.log(f"adapter {self.manifest.name}: could not remove cgroup(s) {', '.join(map(str, left))}")
        if self.workdir is not None and not os.environ.get("DRIFT_KEEP_ADAPTER_WORKDIR"):
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> "ProcessAdapter":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

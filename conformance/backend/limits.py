"""CPU and memory limits for an adapter process, enforced with Linux cgroups.

``adapter.yaml`` asks for ``resources: {cpus, memory_gb}``. :class:`CgroupLimits`
turns that request into a child cgroup per adapter and records what was enforced,
for the receipt::

    limits = CgroupLimits.detect(cpus=2, memory_gb=2, label="mem0")  # creates the cgroup(s)
    proc = subprocess.Popen(limits.wrap(argv), ...)                   # joins them before exec
    ...
    limits.describe()      # -> the ``limits`` entry of ProcessAdapter.isolation
    limits.oom_kills()     # -> how many processes the kernel killed for the memory limit
    limits.cleanup()       # after the process is gone: rmdir the cgroup(s)

What is tried, in order (the first that enforces something wins):

1. **cgroup v2** (unified hierarchy): a child of the runner's own cgroup, with ``cpu``
   and ``memory`` enabled in its ``cgroup.subtree_control``; when the kernel refuses
   that (a non-root v2 cgroup that holds processes cannot delegate controllers, the
   "no internal processes" rule), a sibling beside the runner's cgroup, where the
   parent already delegates them (the usual systemd ``Delegate=yes`` layout). Limits:
   ``cpu.max`` = ``"QUOTA PERIOD"``, ``cpu.weight`` (see below), ``memory.max``,
   ``memory.swap.max`` = 0.
2. **cgroup v1** (one hierarchy per controller): a child of the runner's own cgroup
   in the ``cpu`` hierarchy (``cpu.cfs_period_us``, ``cpu.cfs_quota_us``, ``cpu.shares``) and in the
   ``memory`` hierarchy (``memory.limit_in_bytes``, and ``memory.memsw.limit_in_bytes``
   set to the same value when the kernel has swap accounting, so swap cannot extend
   the limit; otherwise the record says swap is not limited).
3. **none**: nothing writable; the record says why for each of the above.

CPU weight: a quota caps an adapter, but under contention the kernel shares CPU by weight,
and a new cgroup gets the default weight of a single task (v2 ``cpu.weight`` 100, v1
``cpu.shares`` 1024), so an adapter that asked for several CPUs got one task's share
beside the runner and every other process (mem0's read p50 82.5 ms with cgroups, 20.6 ms
without, with zero quota throttling). The weight is therefore the default times the
requested CPUs (clamped to the host): :func:`cpu_weight_v2`, :func:`cpu_shares_v1`. A
weight the kernel refuses is noted, not fatal (the quota still holds).

Each resource is enforced independently (a host with a writable v1 memory hierarchy
and no cpu hierarchy still gets its memory limit); the ones not enforced are ``None``
in :meth:`CgroupLimits.describe` and the reason says why. The request is first
clamped to what the host has (``os.cpu_count()``, physical memory) and the clamp is
recorded. ``memory_gb`` is in GiB (2**30 bytes). ``DRIFT_NO_CGROUPS=1`` turns
enforcement off (recorded as ``none`` with that reason).

This is resource control, not a security boundary: an adapter running as root could
move itself out of its cgroup.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

#: Setting this to anything but "" or "0" disables enforcement.
DISABLE_ENV = "DRIFT_NO_CGROUPS"
#: The CFS period written with every CPU quota (the kernel's default), microseconds.
CPU_PERIOD_US = 100_000
#: Smallest quota the kernel accepts, microseconds.
_MIN_QUOTA_US = 1_000
GIB = 1 << 30

# Where the kernel tells a process about its cgroups (module attributes so tests can
# point them at a fake tree).
PROC_SELF_CGROUP = Path("/proc/self/cgroup")
PROC_SELF_MOUNTINFO = Path("/proc/self/mountinfo")
PROC_MEMINFO = Path("/proc/meminfo")

V2, V1, NONE = "cgroup v2", "cgroup v1", "none"

#: ``sh -c`` script of the wrapper :meth:`CgroupLimits.wrap` puts before the adapter's
#: command. Arguments: N, then N ``cgroup.procs`` files, then the command. The shell
#: writes its own pid (``$$``) into each file, then ``exec``s the command, which keeps
#: that pid: the adapter's first instruction already runs inside the cgroup(s).
_JOIN_SCRIPT = (
    'n=$1; shift; '
    'while [ "$n" -gt 0 ]; do '
    'echo $$ > "$1" || { echo "drift: could not join cgroup $1" >&2; exit 125; }; '
    'shift; n=$((n - 1)); '
    'done; '
    'exec "$@"'
)
_SHELL = "/bin/sh"


#: Default weight of one cgroup (= one task's share) and the kernel's bounds, v2 and v1.
V2_WEIGHT_DEFAULT, V2_WEIGHT_RANGE = 100, (1, 10_000)
V1_SHARES_DEFAULT, V1_SHARES_RANGE = 1024, (2, 262_144)


def cpu_weight_v2(cpus: float) -> int:
    """``cpu.weight`` for an adapter of ``cpus`` CPUs: 100 per CPU, within [1, 10000]."""
    return min(V2_WEIGHT_RANGE[1], max(V2_WEIGHT_RANGE[0], int(round(V2_WEIGHT_DEFAULT * cpus))))


def cpu_shares_v1(cpus: float) -> int:
    """``cpu.shares`` for an adapter of ``cpus`` CPUs: 1024 per CPU, within [2, 262144]."""
    return min(V1_SHARES_RANGE[1], max(V1_SHARES_RANGE[0], int(round(V1_SHARES_DEFAULT * cpus))))


def host_cpus() -> int:
    return os.cpu_count() or 1


def host_memory_bytes() -> int | None:
    """Physical memory (``MemTotal``), bytes; ``None`` when unknown."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        pass
    try:
        for line in PROC_MEMINFO.read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def host_has_swap() -> bool | None:
    try:
        for line in PROC_MEMINFO.read_text().splitlines():
            if line.startswith("SwapTotal:"):
                return int(line.split()[1]) > 0
    except (OSError, ValueError, IndexError):
        pass
    return None


# ----------------------------------------------------------------------------- discovery

@dataclass(frozen=True)
class _Mount:
    root: str
    """The cgroup path the mount shows at its mount point (``/`` unless bind-mounted)."""
    point: Path
    fstype: str
    options: frozenset[str]


def _unescape(text: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as \ooo
    out, i = [], 0
    while i < len(text):
        octal = text[i + 1:i + 4]
        if text[i] == "\\" and len(octal) == 3 and all(c in "01234567" for c in octal):
            out.append(chr(int(octal, 8)))
            i += 4
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _cgroup_mounts() -> list[_Mount]:
    mounts = []
    try:
        lines = PROC_SELF_MOUNTINFO.read_text().splitlines()
    except OSError:
        return mounts
    for line in lines:
        fields = line.split(" ")
        if "-" not in fields:
            continue
        sep = fields.index("-")
        pre, post = fields[:sep], fields[sep + 1:]
        if len(pre) < 5 or len(post) < 3 or post[0] not in ("cgroup", "cgroup2"):
            continue
        mounts.append(_Mount(_unescape(pre[3]), Path(_unescape(pre[4])), post[0], frozenset(post[2].split(","))))
    return mounts


def _own_cgroups() -> dict[str, str]:
    """``/proc/self/cgroup`` as {controller: path}; the v2 entry under the key ``""``."""
    own: dict[str, str] = {}
    try:
        lines = PROC_SELF_CGROUP.read_text().splitlines()
    except OSError:
        return own
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if parts[0] == "0" and controllers == "":
            own[""] = path
        for name in controllers.split(","):
            if name:
                own[name] = path
    return own


def _directory(mount: _Mount, own_path: str) -> Path | None:
    """The directory of cgroup ``own_path`` under ``mount``, or None when it is not visible there."""
    root = mount.root.rstrip("/")
    if root and own_path != root and not own_path.startswith(root + "/"):
        return None
    rel = own_path[len(root):].lstrip("/")
    return mount.point / rel if rel else mount.point


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def _write(path: Path, value: str) -> None:
    # No O_CREAT: a control file the kernel does not offer is an error, not a new file.
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def _err(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _counter(text: str | None, key: str) -> int | None:
    """``key N`` from a flat keyed control file (``memory.events``, ``memory.oom_control``)."""
    for line in (text or "").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == key and parts[1].isdigit():
            return int(parts[1])
    return None


def _unique_name(label: str) -> str:
    safe = "".join(c if c.isalnum() or c in "._-" else "-" for c in label)[:40] or "adapter"
    return f"drift-{safe}-{os.getpid()}-{secrets.token_hex(3)}"


_OURS = re.compile(r"^drift-.+-(?P<pid>\d+)-[0-9a-f]{6}$")


def _sweep_stale(parent: Path) -> None:
    """Remove empty adapter cgroups left in ``parent`` by runners that are gone.

    A runner killed by SIGKILL never runs :meth:`CgroupLimits.cleanup`; its adapter
    dies with it (drift_sdk.launch), leaving an empty cgroup named after the runner's
    pid. Only such names are touched, only when that pid no longer exists, and rmdir
    refuses a cgroup that still holds a process.
    """
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    for entry in entries:
        match = _OURS.match(entry.name)
        if not match or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            os.kill(int(match["pid"]), 0)
            continue  # its runner is alive (or the pid was reused): leave it
        except ProcessLookupError:
            pass
        except OSError:
            continue
        try:
            os.rmdir(entry.path)
        except OSError:
            pass


# ----------------------------------------------------------------------------- the limits

@dataclass
class CgroupLimits:
    """The cgroup(s) of one adapter and what they enforce. Build with :meth:`detect`."""

    requested: dict
    """``{"cpus", "memory_gb"}`` as adapter.yaml asked."""
    host: dict
    """``{"cpus", "memory_gb"}`` this host has."""
    cpus: float
    """The request clamped to the host (what is enforced when ``cpu_enforced``)."""
    memory_gb: float
    clamped: bool
    enforced_by: str = NONE
    reason: str = ""
    cpu_enforced: bool = False
    memory_enforced: bool = False
    swap_limited: bool | None = None
    cpu_weight: dict | None = None
    """``{"file": "cpu.weight" | "cpu.shares", "value": N}`` when written (None: not)."""
    cpu_dir: Path | None = None
    """The adapter's cgroup directory holding the cpu limit (v2: the same as ``memory_dir``)."""
    memory_dir: Path | None = None
    created: list[Path] = field(default_factory=list)
    """Directories made by :meth:`detect` (one per hierarchy), removed by :meth:`cleanup`."""
    _oom_kills: int | None = None
    _peak_bytes: int | None = None
    _cleaned: bool = False

    # ------------------------------------------------------------------ building

    @classmethod
    def detect(cls, cpus: float, memory_gb: float, label: str = "adapter") -> "CgroupLimits":
        """Clamp the request, create the adapter's cgroup(s) and write the limits.

        Never raises for a host that cannot enforce: the result then says
        ``enforced_by == "none"`` and why. ``label`` goes into the cgroup names.
        """
        n_cpus = host_cpus()
        mem_bytes = host_memory_bytes()
        eff_cpus = min(float(cpus), float(n_cpus))
        eff_mem = float(memory_gb) if mem_bytes is None else min(float(memory_gb), mem_bytes / GIB)
        limits = cls(requested={"cpus": cpus, "memory_gb": memory_gb},
                     host={"cpus": n_cpus, "memory_gb": None if mem_bytes is None else round(mem_bytes / GIB, 3)},
                     cpus=eff_cpus, memory_gb=round(eff_mem, 3), clamped=(eff_cpus < cpus or eff_mem < memory_gb))
        if os.environ.get(DISABLE_ENV, "") not in ("", "0"):
            limits.reason = f"disabled by {DISABLE_ENV}={os.environ[DISABLE_ENV]}"
            return limits
        if not PROC_SELF_CGROUP.exists():
            limits.reason = f"no cgroups on this platform ({PROC_SELF_CGROUP} missing)"
            return limits
        if not os.path.exists(_SHELL):
            limits.reason = f"{_SHELL} missing (needed to join the cgroup before the adapter starts)"
            return limits
        mounts, own = _cgroup_mounts(), _own_cgroups()
        name = _unique_name(label)
        notes = []
        for attempt in (limits._try_v2, limits._try_v1):
            note = attempt(mounts, own, name)
            if limits.cpu_enforced or limits.memory_enforced:
                limits.reason = "; ".join([note, *(f"not {n}" for n in notes)])
                return limits
            notes.append(note)
        limits.reason = "; ".join(notes)
        return limits

    @property
    def _quota_us(self) -> int:
        return max(_MIN_QUOTA_US, int(round(self.cpus * CPU_PERIOD_US)))

    @property
    def _memory_bytes(self) -> int:
        return int(self.memory_gb * GIB)

    def _mkdir(self, parent: Path, name: str) -> Path:
        _sweep_stale(parent)
        path = parent / name
        os.mkdir(path)
        self.created.append(path)
        return path

    def _try_v2(self, mounts: list[_Mount], own: dict[str, str], name: str) -> str:
        mount = next((m for m in mounts if m.fstype == "cgroup2"), None)
        if mount is None or "" not in own:
            return f"{V2}: not mounted"
        base = _directory(mount, own[""])
        if base is None:
            return f"{V2}: the runner's cgroup {own['']} is not visible under {mount.point}"
        available = set((_read(base / "cgroup.controllers") or "").split())
        wanted = {"cpu", "memory"} & available
        if not wanted:
            return (f"{V2}: no cpu or memory controller in {base}/cgroup.controllers "
                    f"(bound to cgroup v1, or not delegated)")
        # Where to create the adapter's cgroup: under the runner's own cgroup when the kernel
        # lets it delegate the controllers there, else beside it, under a parent that
        # already delegates them (cgroup.controllers of a cgroup = subtree_control of its parent).
        problems = []
        candidates = [base] + ([base.parent] if base != mount.point else [])
        for parent in candidates:
            enabled = set((_read(parent / "cgroup.subtree_control") or "").split())
            for ctl in sorted(wanted - enabled):
                try:
                    _write(parent / "cgroup.subtree_control", f"+{ctl}")
                except OSError as exc:
                    problems.append(f"cannot enable {ctl} in {parent}/cgroup.subtree_control ({_err(exc)})")
            enabled = set((_read(parent / "cgroup.subtree_control") or "").split()) & wanted
            if not enabled:
                continue
            try:
                child = self._mkdir(parent, name)
            except OSError as exc:
                problems.append(f"cannot create a cgroup in {parent} ({_err(exc)})")
                continue
            notes = []
            if "cpu" in enabled:
                try:
                    _write(child / "cpu.max", f"{self._quota_us} {CPU_PERIOD_US}")
                    self.cpu_enforced, self.cpu_dir = True, child
                except OSError as exc:
                    notes.append(f"cpu.max not written ({_err(exc)})")
                else:
                    self._weigh(child, "cpu.weight", cpu_weight_v2(self.cpus), notes)
            if "memory" in enabled:
                try:
                    _write(child / "memory.max", str(self._memory_bytes))
                    self.memory_enforced, self.memory_dir = True, child
                except OSError as exc:
                    notes.append(f"memory.max not written ({_err(exc)})")
            if self.memory_enforced:
                try:
                    _write(child / "memory.swap.max", "0")
                    self.swap_limited = True
                except OSError as exc:
                    self.swap_limited = False
                    notes.append(f"swap not limited (memory.swap.max: {_err(exc)})")
                try:  # an OOM kill takes the adapter's whole cgroup, not one of its processes
                    _write(child / "memory.oom.group", "1")
                except OSError:
                    pass
            if self.cpu_enforced or self.memory_enforced:
                self.enforced_by = V2
                where = "child of the runner's cgroup" if parent == base else "sibling of the runner's cgroup"
                return self._summary(where, notes)
            problems += notes
            self._remove(child)
        return f"{V2}: " + ("; ".join(problems) or "controllers not delegated")

    def _try_v1(self, mounts: list[_Mount], own: dict[str, str], name: str) -> str:
        notes = []
        for ctl in ("cpu", "memory"):
            mount = next((m for m in mounts if m.fstype == "cgroup" and ctl in m.options), None)
            if mount is None or ctl not in own:
                notes.append(f"no {ctl} hierarchy mounted")
                continue
            base = _directory(mount, own[ctl])
            if base is None:
                notes.append(f"the runner's {ctl} cgroup {own[ctl]} is not visible under {mount.point}")
                continue
            try:
                child = self._mkdir(base, name)
            except OSError as exc:
                notes.append(f"cannot create a {ctl} cgroup in {base} ({_err(exc)})")
                continue
            try:
                if ctl == "cpu":
                    _write(child / "cpu.cfs_period_us", str(CPU_PERIOD_US))
                    _write(child / "cpu.cfs_quota_us", str(self._quota_us))
                    self.cpu_enforced, self.cpu_dir = True, child
                    self._weigh(child, "cpu.shares", cpu_shares_v1(self.cpus), notes)
                else:
                    _write(child / "memory.limit_in_bytes", str(self._memory_bytes))
                    self.memory_enforced, self.memory_dir = True, child
            except OSError as exc:
                notes.append(f"cannot set the {ctl} limit in {child} ({_err(exc)})")
                self._remove(child)
                continue
            if ctl == "memory":
                memsw = child / "memory.memsw.limit_in_bytes"
                try:
                    _write(memsw, str(self._memory_bytes))
                    self.swap_limited = True
                except OSError as exc:
                    self.swap_limited = False
                    why = ("no swap accounting in this kernel" if exc.errno == errno.ENOENT else _err(exc))
                    if host_has_swap() is False:
                        why += "; the host has no swap anyway"
                    notes.append(f"swap not limited (memory.memsw.limit_in_bytes: {why})")
        if self.cpu_enforced or self.memory_enforced:
            self.enforced_by = V1
            return self._summary("child of the runner's own cgroup in each hierarchy", notes)
        return f"{V1}: " + "; ".join(notes)

    def _weigh(self, child: Path, name: str, value: int, notes: list[str]) -> None:
        """Write the CPU weight (``cpu.weight`` or ``cpu.shares``); a refusal is a note."""
        try:
            _write(child / name, str(value))
            self.cpu_weight = {"file": name, "value": value}
        except OSError as exc:
            notes.append(f"{name} not written ({_err(exc)}): the adapter competes with one task's weight")

    def _summary(self, where: str, notes: list[str]) -> str:
        parts = []
        if self.cpu_enforced:
            parts.append(f"cpu quota {self._quota_us}/{CPU_PERIOD_US} us "
                         f"({'cpu.max' if self.enforced_by == V2 else 'cpu.cfs_quota_us'})"
                         + (f", weight {self.cpu_weight['value']} ({self.cpu_weight['file']})"
                            if self.cpu_weight else ""))
        else:
            parts.append("cpu not limited")
        if self.memory_enforced:
            parts.append(f"memory limit {self._memory_bytes} bytes "
                         f"({'memory.max' if self.enforced_by == V2 else 'memory.limit_in_bytes'})")
        else:
            parts.append("memory not limited")
        return f"{self.enforced_by} ({where}): " + ", ".join(parts) + "".join(f"; {n}" for n in notes)

    # ------------------------------------------------------------------ joining

    @property
    def procs_files(self) -> list[Path]:
        """The ``cgroup.procs`` files the adapter's pid goes into (empty when nothing is enforced)."""
        dirs = []
        for d in (self.cpu_dir if self.cpu_enforced else None, self.memory_dir if self.memory_enforced else None):
            if d is not None and d not in dirs:
                dirs.append(d)
        return [d / "cgroup.procs" for d in dirs]

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` run so that the process is in the cgroup(s) before its first instruction.

        Race-free by construction: ``/bin/sh`` writes its own pid into each
        ``cgroup.procs`` and then ``exec``s ``argv``; ``exec`` keeps the pid (and the
        cgroup membership, the session, the parent), so nothing of ``argv`` ever runs
        outside the limits, and nothing needs to happen in the runner between fork and
        exec. (A ``preexec_fn`` would do the same but runs Python in the forked child of a
        runner that has gRPC threads, which CPython documents as unsafe; writing the pid
        after ``Popen`` returns would let the adapter start unlimited.) When a write fails
        the wrapper prints why to the adapter's stderr and exits 125 without starting it.
        """
        files = self.procs_files
        if not files:
            return list(argv)
        return [_SHELL, "-c", _JOIN_SCRIPT, "drift-cgroup-join", str(len(files)), *map(str, files), *argv]

    def apply(self, pid: int) -> None:
        """Move a running process (and its threads) into the cgroup(s).

        Not race-free (the process ran unlimited until now): prefer :meth:`wrap`.

        Raises:
            OSError: the kernel refused the move.
        """
        for path in self.procs_files:
            _write(path, str(pid))

    # ------------------------------------------------------------------ reporting

    def describe(self) -> dict:
        """The ``limits`` record of the receipt: the limits in force (``None`` = not
        enforced), the request, the host, whether the request was clamped, by what."""
        return {"cpus": self.cpus if self.cpu_enforced else None,
                "memory_gb": self.memory_gb if self.memory_enforced else None,
                "requested": dict(self.requested), "host": dict(self.host), "clamped": self.clamped,
                "enforced_by": self.enforced_by, "swap_limited": self.swap_limited, "reason": self.reason,
                "cpu_weight": dict(self.cpu_weight) if self.cpu_weight else None}

    def oom_kills(self) -> int | None:
        """Processes the kernel killed in the adapter's memory cgroup for exceeding its
        limit (``memory.events`` ``oom_kill`` in v2, ``memory.oom_control`` ``oom_kill``
        in v1); ``None`` when no memory limit is enforced or the kernel has no counter.
        After :meth:`cleanup`, the last value read before the cgroup was removed."""
        if not self.memory_enforced or self.memory_dir is None:
            return None
        if self._cleaned:
            return self._oom_kills
        if self.enforced_by == V2:
            count = _counter(_read(self.memory_dir / "memory.events"), "oom_kill")
        else:
            count = _counter(_read(self.memory_dir / "memory.oom_control"), "oom_kill")
        if count is not None:
            self._oom_kills = count
        return self._oom_kills

    def limit_hits(self) -> int | None:
        """How often memory use hit the limit (v1 ``memory.failcnt``, v2 ``memory.events``
        ``max``): a fallback sign of an OOM kill on kernels without an ``oom_kill`` counter."""
        if not self.memory_enforced or self.memory_dir is None or self._cleaned:
            return None
        if self.enforced_by == V2:
            return _counter(_read(self.memory_dir / "memory.events"), "max")
        text = _read(self.memory_dir / "memory.failcnt")
        return int(text) if text and text.strip().isdigit() else None

    def peak_memory_bytes(self) -> int | None:
        """Highest memory use of the adapter's cgroup so far (v1 ``memory.max_usage_in_bytes``,
        v2 ``memory.peak``); kept from the last read after :meth:`cleanup`."""
        if not self.memory_enforced or self.memory_dir is None:
            return None
        if not self._cleaned:
            name = "memory.peak" if self.enforced_by == V2 else "memory.max_usage_in_bytes"
            text = _read(self.memory_dir / name)
            if text and text.strip().isdigit():
                self._peak_bytes = int(text)
        return self._peak_bytes

    # ------------------------------------------------------------------ cleanup

    def _remove(self, path: Path, wait_s: float = 0.0) -> bool:
        """rmdir ``path``; on EBUSY retry for ``wait_s`` (exiting processes leave it a
        moment late), then SIGKILL what is still in it (strays of the adapter) and retry."""
        deadline = time.monotonic() + wait_s
        killed = False
        while True:
            try:
                os.rmdir(path)
            except FileNotFoundError:
                pass
            except OSError as exc:
                if exc.errno != errno.EBUSY:
                    return False
                if time.monotonic() < deadline:
                    time.sleep(0.02)
                    continue
                if killed:
                    return False
                killed = True
                for pid in (_read(path / "cgroup.procs") or "").split():
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except (OSError, ValueError):
                        pass
                deadline = time.monotonic() + max(wait_s, 1.0)
                continue
            if path in self.created:
                self.created.remove(path)
            return True

    def cleanup(self, wait_s: float = 2.0) -> list[Path]:
        """Remove the adapter's cgroup(s); call once its process is gone (reaped).

        Reads the OOM counter and peak memory first (kept for :meth:`oom_kills` and
        :meth:`peak_memory_bytes`). Tolerates EBUSY for ``wait_s`` seconds, then kills
        any process left in the cgroup. Returns the directories it could not remove.
        Safe to call more than once.
        """
        if not self._cleaned:
            self.oom_kills()
            self.peak_memory_bytes()
            self._cleaned = True
        left = []
        for path in reversed(list(self.created)):
            if not self._remove(path, wait_s):
                left.append(path)
        return left

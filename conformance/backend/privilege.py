"""What keeps a process-mode adapter out of the runner's secrets beyond its environment.

An adapter gets only the variables its adapter.yaml names, but on Linux any process of
the same user may read ``/proc/<runner pid>/environ`` (every variable the runner has,
keys included), and root may read any process's. Two measures close that where the OS
allows it:

- :func:`make_undumpable`: the runner marks itself non-dumpable (``prctl(PR_SET_DUMPABLE,
  0)``), so its ``/proc`` files belong to root and processes of its own user can neither
  read its environment nor ptrace it;
- :func:`adapter_user`: a runner running as root starts adapters as an unprivileged user
  (``DRIFT_ADAPTER_USER``, default ``nobody``), which non-dumpability then keeps out, and
  which cannot write the runner's files. That user must reach the adapter's interpreter,
  virtualenv, SDK copy and folder: :func:`grant_traverse` adds search permission (``o+x``,
  never read) to the folders on the way that lack it (``/root``, for example).
"""

from __future__ import annotations

import ctypes
import os
import pwd
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

PR_SET_DUMPABLE = 4


def make_undumpable() -> bool:
    """Mark this process non-dumpable; True when the kernel accepted it (False off Linux).

    Effects (Linux, ``proc(5)``, ``ptrace(2)``): ``/proc/<pid>/environ``, ``mem`` and
    ``maps`` are then refused to every process without ``CAP_SYS_PTRACE``, and no core
    dump is written. Kept for the life of the process (reset only by ``execve``)."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


@dataclass(frozen=True)
class AdapterUser:
    name: str
    uid: int
    gid: int


def adapter_user() -> AdapterUser | None:
    """The user adapters run as: None when the runner is not root (they run as the runner's
    user) or ``DRIFT_ADAPTER_USER=root`` (opted out); else that user (default ``nobody``).

    Raises:
        KeyError: ``DRIFT_ADAPTER_USER`` names no user of this host.
    """
    if os.geteuid() != 0:
        return None
    name = os.environ.get("DRIFT_ADAPTER_USER", "nobody").strip() or "nobody"
    if name == "root":
        return None
    entry = pwd.getpwnam(name)
    if entry.pw_uid == 0:
        return None
    return AdapterUser(name, entry.pw_uid, entry.pw_gid)


def drop_to(user: AdapterUser, argv: list[str]) -> list[str] | None:
    """``argv`` run as ``user`` by ``setpriv`` (util-linux): no supplementary groups, no way
    back to root (``--no-new-privs``: set-user-ID programs do not raise it). None when this
    host has no ``setpriv``."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    return [setpriv, f"--reuid={user.uid}", f"--regid={user.gid}", "--clear-groups", "--no-new-privs", "--",
            *argv]


def grant_traverse(paths: list[Path]) -> list[str]:
    """Add ``o+x`` to every folder above each of ``paths`` (and to ``paths`` that are folders)
    that lacks it, so another user can reach them by name; nothing becomes listable or
    readable that was not. Returns the folders changed."""
    changed = []
    for path in paths:
        path = Path(path).absolute()
        chain = [path] if path.is_dir() else []
        chain += list(path.parents)
        for folder in chain:
            try:
                mode = folder.stat().st_mode
                if not mode & stat.S_IXOTH:
                    os.chmod(folder, stat.S_IMODE(mode) | stat.S_IXOTH)
                    changed.append(str(folder))
            except OSError:
                continue
    return sorted(set(changed))


def share_with_adapters(folder: Path) -> Path:
    """Make ``folder`` (created if absent) usable by adapters: when they run as an unprivileged
    user (:func:`adapter_user`), hand it to that user and let it reach it (:func:`grant_traverse`).
    For folders given to an adapter through its environment (a response cache, a data folder),
    which it could not otherwise write. Returns ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    user = adapter_user()
    if user is not None:
        os.chown(folder, user.uid, user.gid)
        grant_traverse([folder])
    return folder


def unreachable_folders(env: dict[str, str], names: list[str], user: AdapterUser | None) -> list[str]:
    """``NAME=folder`` for each variable of ``names`` whose value is an absolute path the
    adapter user cannot write (a warning for the log: the adapter will fail to use it)."""
    if user is None:
        return []
    found = []
    for name in names:
        value = env.get(name) or ""
        if not value.startswith("/"):
            continue
        path = Path(value)
        target = path if path.exists() else path.parent
        try:
            info = target.stat()
        except OSError:
            continue
        if info.st_uid != user.uid and not info.st_mode & stat.S_IWOTH:
            found.append(f"{name}={value}")
    return found

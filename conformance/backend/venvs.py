"""One virtualenv per adapter, built from its ``requirements.txt`` and cached by hash.

Adapters' dependencies never enter the runner's environment (mem0ai pins
``protobuf<7``, for one). Each virtualenv gets the adapter's requirements plus the
SDK's three dependencies; the SDK code itself (``drift_sdk``) is put on the
adapter's ``PYTHONPATH`` from a clean copy, so nothing else of the runner is
importable there.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import threading
import time
import venv
from importlib import metadata
from pathlib import Path

import drift_sdk
from conformance.paths import cache_dir, cache_lock
from conformance.errors import DriftError

#: What the SDK needs at run time; resolved together with the adapter's own pins.
SDK_REQUIREMENTS = ("grpcio>=1.66.2", "grpcio-health-checking>=1.66.2", "protobuf>=5.27.2,<8")


#: Builds at once in this process (adapters start concurrently): pip is CPU-bound, so one per core.
_BUILDS = threading.BoundedSemaphore(max(1, os.cpu_count() or 1))


class VenvError(DriftError, RuntimeError):
    """A virtualenv could not be built; the message carries pip's last output."""


_OFFLINE = re.compile(
    r"NewConnectionError|Failed to establish a new connection|Temporary failure in name resolution|"
    r"Name or service not known|Network is unreachable|ConnectTimeout|ReadTimeout|ProxyError|"
    r"\(from versions: none\)")


def looks_offline(pip_output: str) -> bool:
    """True when pip failed because no package index could be reached (tests then skip)."""
    return bool(_OFFLINE.search(pip_output))


def _requirement_lines(requirements: bytes) -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in requirements.decode("utf-8").splitlines())
    return [line for line in lines if line]


def requirement_count(requirements_file: Path) -> int:
    """How many requirement lines ``requirements_file`` holds (0 when absent): a cheap guess of
    how long its virtualenv takes to build, so that the longest builds start first."""
    return len(_requirement_lines(requirements_file.read_bytes())) if requirements_file.exists() else 0


#: Folders of a local package tree that are not its source (byte code, build output, VCS,
#: virtualenvs and the suite's own run records, which a repository gating itself may hold).
_NOT_SOURCE = {"__pycache__", ".git", ".hg", ".svn", "build", "dist", ".eggs", ".tox", ".venv", ".mypy_cache",
               ".pytest_cache", "node_modules", "drift-runs"}


def local_paths(requirements: bytes, folder: Path) -> list[tuple[str, Path]]:
    """The local paths a requirements file installs, as ``(line, path)`` with each path resolved
    against ``folder`` (the requirements file's folder, as :func:`ensure_venv` runs pip there).

    A line counts when, after an ``-e``/``--editable`` option, it is a path (``./x``, ``../x``,
    ``/x``, ``x/``), a ``file:`` URL, or ``name @ file:...``, with or without extras (``..[drift]``);
    only paths that exist are returned.
    """
    found = []
    for line in _requirement_lines(requirements):
        target = re.sub(r"^(-e|--editable)(\s+|=)", "", line).strip()
        if " @ " in target:
            target = target.split(" @ ", 1)[1].strip()
        target = target.split(";", 1)[0].strip()
        target = re.sub(r"\[[^\]]*\]$", "", target).strip()  # extras: ..[drift] installs the folder ..
        if target.startswith("file:"):
            target = re.sub(r"^file:(//)?", "", target)
        elif not target.startswith((".", "/", "~")) and "/" not in target:
            continue
        path = (Path(folder) / Path(target).expanduser()).resolve()
        if path.exists():
            found.append((line, path))
    return found


def tree_digest(path: Path) -> str:
    """SHA-256 over every file of a local package (relative name and bytes; byte code, build
    output, VCS folders and this suite's cache left out, since a run writes there), or over the
    file itself (a wheel, an sdist)."""
    digest = hashlib.sha256()
    if path.is_file():
        digest.update(path.read_bytes())
        return digest.hexdigest()
    cache = cache_dir().resolve()

    def source(file: Path) -> bool:
        parts = file.relative_to(path).parts
        return (file.is_file() and not _NOT_SOURCE & set(parts) and not any(p.endswith(".egg-info") for p in parts)
                and not file.resolve().is_relative_to(cache))

    for file in sorted(p for p in path.rglob("*") if source(p)):
        digest.update(str(file.relative_to(path)).encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()


def venv_key(requirements: bytes, folder: Path | None = None) -> str:
    """12 hex digits over what the virtualenv holds: the requirement lines (comments and blanks
    ignored), the content of every local package they install (:func:`local_paths`, resolved
    against ``folder``; an editable one by its path too, since the venv links to it), the SDK
    pins, the Python version and platform. Adapters with the same needs share one virtualenv;
    two checkouts whose local packages differ do not."""
    digest = hashlib.sha256()
    digest.update("\n".join(_requirement_lines(requirements)).encode())
    for line, path in local_paths(requirements, folder) if folder is not None else ():
        editable = line.startswith(("-e", "--editable"))
        digest.update(f"\0{line}\0{path if editable else ''}\0{tree_digest(path)}".encode())
    digest.update("\n".join(SDK_REQUIREMENTS).encode())
    digest.update(f"{sys.version_info.major}.{sys.version_info.minor} {platform.machine()}".encode())
    return digest.hexdigest()[:12]


def cached_venv(env_dir: Path, pip_args: list[str], what: str, log=None, cwd: Path | None = None
                ) -> tuple[Path, bool]:
    """The python of a virtualenv at ``env_dir`` holding ``pip install *pip_args``.

    Built once (under a file lock, so concurrent runs and threads wait for each other) and
    marked complete; a half-built folder is removed. At most one build per core runs at once
    in this process. Returns ``(python_path, built_now)``.

    Raises:
        VenvError: ``pip install`` failed (no package index, a conflict...); the
            message names ``what`` and carries pip's last lines.
    """
    python = env_dir / "bin" / "python"
    done = env_dir / ".complete"
    if done.exists():
        return python, False
    # The file lock first, then a build slot: a thread waiting for a lock holds no slot.
    with cache_lock(env_dir.with_suffix(".lock")), _BUILDS:
        if done.exists():
            return python, False
        shutil.rmtree(env_dir, ignore_errors=True)
        if log:
            log(f"building the virtualenv of {what} in {env_dir} (once; cached by hash)")
        started = time.monotonic()
        pip = _runner_pip(python)
        venv.EnvBuilder(with_pip=pip is None, clear=True).create(env_dir)
        proc = subprocess.run([*(pip or [str(python), "-m", "pip"]), "install", "--disable-pip-version-check", "-q",
                               *pip_args], capture_output=True, text=True, cwd=cwd)
        if proc.returncode != 0:
            shutil.rmtree(env_dir, ignore_errors=True)
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
            raise VenvError(f"{what}: pip install {' '.join(pip_args)} failed:\n{tail}")
        done.write_text(f"built in {time.monotonic() - started:.1f} s\n")
    return python, True


def _runner_pip(python: Path) -> list[str] | None:
    """This interpreter's pip, pointed at the virtualenv of ``python`` (``--python``, pip 22.3+),
    so the virtualenv needs no pip of its own: seeding one with ensurepip costs several seconds
    per virtualenv. None when this interpreter has no such pip (the virtualenv then gets its own)."""
    try:
        version = metadata.version("pip")
    except metadata.PackageNotFoundError:
        return None
    major_minor = tuple(int(part) for part in re.findall(r"\d+", version)[:2])
    return [sys.executable, "-m", "pip", "--python", str(python)] if major_minor >= (22, 3) else None


def venv_dir(name: str, requirements_file: Path) -> Path:
    """Where the virtualenv of adapter ``name`` with ``requirements_file`` lives in the cache:
    ``<cache>/venvs/<name>-<venv_key>`` (``sdk-only-<key>`` without requirements). The folder
    name is the cache key: :func:`ensure_venv` builds here, and ``drift-conformance cache-key``
    prints these names, so a CI cache keyed on them holds exactly what a run needs."""
    requirements_file = Path(requirements_file).absolute()
    requirements = requirements_file.read_bytes() if requirements_file.exists() else b""
    if not _requirement_lines(requirements):
        return cache_dir() / "venvs" / f"sdk-only-{venv_key(b'')}"
    return cache_dir() / "venvs" / f"{name}-{venv_key(requirements, requirements_file.parent)}"


def ensure_venv(name: str, requirements_file: Path, log=None) -> tuple[Path, bool]:
    """The python of the adapter's cached virtualenv (:func:`venv_dir`), building it if needed.

    Returns ``(python_path, built_now)``.

    Raises:
        VenvError: ``pip install`` failed (no package index, a conflict...).
    """
    requirements_file = Path(requirements_file).absolute()
    folder = requirements_file.parent
    needs = requirements_file.exists() and _requirement_lines(requirements_file.read_bytes())
    pip_args = [*SDK_REQUIREMENTS] + (["-r", str(requirements_file)] if needs else [])
    # pip resolves a relative path in a requirements file against its working directory:
    # run it in the adapter folder, so ./pkg is this checkout's package.
    return cached_venv(venv_dir(name, requirements_file), pip_args, f"adapter {name}", log, cwd=folder)


def sdk_path() -> Path:
    """A folder holding only a copy of ``drift_sdk`` (for the adapter's PYTHONPATH)."""
    source = Path(drift_sdk.__file__).resolve().parent
    files = sorted(p for p in source.rglob("*.py*") if "__pycache__" not in p.parts)
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(source)).encode() + b"\0" + path.read_bytes())
    target = cache_dir() / "sdk" / digest.hexdigest()[:12]
    if not (target / ".complete").exists():
        with cache_lock(target.with_suffix(".lock")):
            if not (target / ".complete").exists():
                shutil.rmtree(target, ignore_errors=True)
                for path in files:
                    dest = target / "drift_sdk" / path.relative_to(source)
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(path, dest)
                (target / ".complete").write_text(os.environ.get("USER", ""))
    return target

"""Where the built-in adapters, the canonical corpus and the schemas live.

In a source checkout they are the repository's top-level folders; in an installed
wheel they are packaged under ``conformance/_data`` (see pyproject.toml), so the
CLI finds them from any working directory.
"""

from __future__ import annotations

import errno
import fcntl
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from drift_sdk.errors import DriftError

_PACKAGE = Path(__file__).resolve().parent


def checkout_root() -> Path | None:
    """The source checkout this package runs from, or None for an installed copy."""
    checkout = _PACKAGE.parent
    if (checkout / "pyproject.toml").exists() and (checkout / "adapters").is_dir():
        return checkout
    return None


def data_root() -> Path:
    """The folder holding ``adapters/``, ``fixtures/``, ``gold/``, ``schema/``, ``baselines/``."""
    return checkout_root() or _PACKAGE / "_data"


def adapters_dir() -> Path:
    return data_root() / "adapters"


def fixtures_dir() -> Path:
    return data_root() / "fixtures"


def gold_dir() -> Path:
    return data_root() / "gold"


def schema_dir() -> Path:
    return data_root() / "schema"


def cache_dir() -> Path:
    """Per-user cache (adapter virtualenvs, token files): ``$DRIFT_CACHE_DIR`` or ``~/.cache/drift-conformance``."""
    return Path(os.environ.get("DRIFT_CACHE_DIR", Path.home() / ".cache" / "drift-conformance"))


@contextmanager
def cache_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on the file ``path`` (created, with its folders) for the ``with``
    block: two runs building the same cache entry (an adapter virtualenv, an image) wait for
    each other instead of building it twice."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class OutputError(DriftError):
    """An output (result, records, report) could not be written: ``str()`` names what, the
    path and the errno (``ENOSPC``, ``EROFS``, ``EACCES``...), not a bug of the suite.
    ``errno``: the number (0 when the OS gave none)."""

    def __init__(self, errno_: int, message: str):
        super().__init__(message)
        self.errno = errno_


def output_error(what: str, path: Path | str, exc: OSError, verb: str = "write") -> OutputError:
    """``exc`` as an :class:`OutputError` naming ``what`` (e.g. ``"result"``, ``"--out"``), ``path``
    and the errno: ``cannot write result /out/result.json: ENOSPC (No space left on device); free ...``."""
    code = errno.errorcode.get(exc.errno, str(exc.errno)) if exc.errno is not None else "no errno"
    reason = exc.strerror or str(exc)
    hint = {errno.ENOSPC: "free space on that file system or write elsewhere",
            errno.EDQUOT: "the disk quota is spent: free some or write elsewhere",
            errno.EROFS: "the file system is read-only: write elsewhere",
            errno.EACCES: "no permission to write there: write elsewhere",
            errno.EPERM: "no permission to write there: write elsewhere"}.get(exc.errno, "")
    message = f"cannot {verb} {what + ' ' if what else ''}{path}: {code} ({reason})"
    return OutputError(exc.errno or 0, message + (f"; {hint}" if hint else ""))


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: Mode of a new output file: what ``open(path, "w")`` would give under the process's umask
#: (``mkstemp`` makes its file 0600). Read once, at import, while nothing else runs.
_NEW_FILE_MODE = 0o666 & ~_umask()


def write_atomic(path: Path | str, data: str | bytes, what: str = "output", parents: bool = True) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` whole or not at all: a temporary file beside it,
    fsynced, then renamed over it; on failure the temporary file is removed and ``path`` keeps
    what it held (a full disk never leaves a truncated file). Creates the parent folders unless
    ``parents`` is False (then a missing folder is an ENOENT error).

    Raises:
        OutputError: the folder cannot be created or written, or the disk is full (path and errno named).
    """
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        if parents:
            path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise output_error(what, path, exc) from None
    try:
        os.fchmod(fd, _NEW_FILE_MODE)
        with memoryview(payload) as view:
            written = 0
            while written < len(view):
                written += os.write(fd, view[written:])
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
    except OSError as exc:
        if fd >= 0:
            os.close(fd)
        with suppress(OSError):
            os.unlink(tmp)
        raise output_error(what, path, exc) from None


def check_writable(folder: Path | str, what: str) -> None:
    """Create a file in ``folder`` (or, while it does not exist yet, in its nearest existing
    ancestor, where the run will create it) and remove it again: the check a run makes of
    ``--out``'s folder and of the records folder before any adapter starts. Nothing is left
    behind, not even the folder.

    Raises:
        OutputError: naming ``what`` (the option), ``folder`` and the errno.
    """
    folder = Path(folder)
    here = folder.absolute()
    while not here.exists() and here != here.parent:
        here = here.parent
    try:
        if not here.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(here))
        fd, probe = tempfile.mkstemp(dir=here, prefix=".drift-writable.")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise output_error(what, folder, exc) from None

"""Where the built-in adapters, the canonical corpus and the schemas live.

In a source checkout they are the repository's top-level folders; in an installed
wheel they are packaged under ``conformance/_data`` (see pyproject.toml), so the
CLI finds them from any working directory.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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

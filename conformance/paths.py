"""Where the built-in adapters, the canonical corpus and the schemas live.

In a source checkout they are the repository's top-level folders; in an installed
wheel they are packaged under ``conformance/_data`` (see pyproject.toml), so the
CLI finds them from any working directory.
"""

from __future__ import annotations

import os
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

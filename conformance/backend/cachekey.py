"""The key of a CI cache of adapter virtualenvs, from the same hashes the suite builds them by.

``drift-conformance cache-key --adapter X`` prints it; the action (``action.yml``) restores and
saves ``$DRIFT_CACHE_DIR`` under it, so what CI caches is exactly the set of folders a run of
those adapters looks up (:func:`conformance.backend.venvs.venv_dir`: requirement lines, the
content of every local package they install, the SDK pins, Python and platform). A change to
any of these, the pull request's own code installed from a local path included, changes the key.
"""

from __future__ import annotations

import hashlib
import platform
from dataclasses import dataclass

from conformance.backend.manifest import load_manifest
from conformance.backend.systems import plan_adapter
from conformance.backend.venvs import venv_dir


@dataclass(frozen=True)
class CacheKey:
    key: str
    """``drift-venvs-<os>-<machine>-py<X.Y.Z>-<16 hex>``: the prefix, then SHA-256 over the entries."""
    prefix: str
    """The key up to the hash: a restore key, so a new adapter reuses the others' virtualenvs."""
    venvs: list[str]
    """The virtualenv folder names under ``<cache>/venvs/`` the adapters use, sorted."""
    entries: list[str]
    """What the hash covers, one line per adapter spec: ``SPEC venv NAME`` or ``SPEC image``/``SPEC external``."""


def _entry(spec: str) -> tuple[str, str | None]:
    plan = plan_adapter(spec)
    if plan.mode != "process" or plan.folder is None:
        # Images live in the engine's store and external backends elsewhere: nothing to cache here.
        return f"{spec} {plan.mode}", None
    name = venv_dir(load_manifest(plan.folder).name, plan.folder / "requirements.txt").name
    return f"{spec} venv {name}", name


def cache_key(specs: list[str]) -> CacheKey:
    """The cache key of the virtualenvs of ``specs`` (``--adapter`` values), plus the two
    controls every run starts (``none`` and the reference compressor).

    The full interpreter version is in the key, though the virtualenv names carry only
    ``X.Y``: a cached virtualenv links to its interpreter, which a runner image update moves.

    Raises:
        AdapterSpecError: a spec names no adapter; ManifestError: its adapter.yaml is invalid.
    """
    entries, venvs = [], set()
    for spec in sorted(set(specs) | {"none", "reference-compressor"}):
        entry, name = _entry(spec)
        entries.append(entry)
        if name:
            venvs.add(name)
    prefix = f"drift-venvs-{platform.system().lower()}-{platform.machine()}-py{platform.python_version()}-"
    digest = hashlib.sha256("\n".join(entries).encode()).hexdigest()[:16]
    return CacheKey(key=prefix + digest, prefix=prefix, venvs=sorted(venvs), entries=entries)

"""Which code made a run: content hashes of the suite and of each adapter folder, and the tree's state.

A git commit names a checkout, not the code that ran: it is null in an installed wheel, and a
tree with uncommitted edits runs other code under the same commit. So the receipt
(``receipt.config.code``) also holds a SHA-256 over the files of the suite's packages
(``conformance`` and ``drift_sdk``, wherever they are installed) and one over each adapter
folder, and whether the checkout had uncommitted changes. ``drift-conformance merge`` re-scores
with its own code, so it compares these hashes with the shards' (:mod:`conformance.runner.merge`).
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

import drift_sdk

import conformance
from conformance.backend.systems import AdapterSpecError, plan_adapter
from conformance.paths import checkout_root

__all__ = ["CODE_PATHS", "adapter_folders", "code_identity", "folder_sha256", "suite_sha256", "tree_dirty"]

_SKIPPED = frozenset({"__pycache__", ".venv", ".git", ".mypy_cache", ".pytest_cache", "_data"})
"""Folder names no hash reads: caches, virtualenvs, and an installed wheel's ``_data`` (the corpus
has its own hashes, each adapter folder its own)."""

CODE_PATHS = ("conformance", "drift_sdk", "adapters", "proto", "pyproject.toml")
"""What :func:`tree_dirty` looks at in a checkout: the code a run executes (the corpus has its hashes)."""


def folder_sha256(folder: Path) -> str:
    """Hex SHA-256 over every file under ``folder`` (sorted relative POSIX paths, each path then
    its bytes, length-prefixed), skipping :data:`_SKIPPED` folders and ``*.pyc``: the same files give
    the same hash on any host and at any path. Symlinks are hashed as their target text, not followed.

    Raises:
        OSError: a file that cannot be read.
    """
    digest = hashlib.sha256()
    for path in sorted(_files(folder), key=lambda p: p.relative_to(folder).as_posix()):
        name = path.relative_to(folder).as_posix().encode("utf-8", "surrogateescape")
        data = str(path.readlink()).encode("utf-8", "surrogateescape") if path.is_symlink() else path.read_bytes()
        for part in (name, data):
            digest.update(len(part).to_bytes(8, "big"))
            digest.update(part)
    return digest.hexdigest()


def _files(folder: Path) -> Iterable[Path]:
    for path in folder.iterdir():
        if path.is_symlink() or path.is_file():
            if path.suffix != ".pyc":
                yield path
        elif path.is_dir() and path.name not in _SKIPPED:
            yield from _files(path)


@lru_cache(maxsize=1)
def suite_sha256() -> str:
    """SHA-256 over the ``conformance`` and ``drift_sdk`` packages' files (:func:`folder_sha256` of each,
    hashed by name), as this process imported them."""
    digest = hashlib.sha256()
    for module in (conformance, drift_sdk):
        folder = Path(module.__file__).resolve().parent
        digest.update(f"{module.__name__}:{folder_sha256(folder)}\n".encode())
    return digest.hexdigest()


def tree_dirty() -> bool | None:
    """Whether the source checkout has uncommitted changes (tracked or untracked, not ignored) in
    :data:`CODE_PATHS`; None when the suite is not run from a git checkout (an installed wheel) or
    git cannot tell."""
    root = checkout_root()
    if root is None:
        return None
    try:
        proc = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", *CODE_PATHS],
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return bool(proc.stdout.strip()) if proc.returncode == 0 else None


def code_identity(folders: dict[str, Path | None], git_commit: str | None) -> dict:
    """``receipt.config.code``: ``{"suite_sha256", "adapters": {spec: folder SHA-256 or None},
    "git_commit", "dirty"}``. ``folders``: each adapter spec's folder (None: no folder here, an
    external endpoint or a prebuilt image)."""
    return {"suite_sha256": suite_sha256(),
            "adapters": {spec: folder_sha256(folder) if folder is not None else None
                         for spec, folder in folders.items()},
            "git_commit": git_commit, "dirty": tree_dirty()}


def adapter_folders(specs: Iterable[str]) -> dict[str, Path | None]:
    """Each adapter spec's folder as the run resolves it (None: none here, e.g. ``oracle``, which
    runs in the harness, an external ``grpc://`` endpoint or a prebuilt image)."""
    out: dict[str, Path | None] = {}
    for spec in specs:
        try:
            out[spec] = plan_adapter(spec).folder
        except AdapterSpecError:
            out[spec] = None
    return out

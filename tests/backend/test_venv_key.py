"""An adapter's cached virtualenv holds what its checkout holds (issue 19, item 9).

A local path in requirements.txt is resolved against the adapter folder (not the current
directory), and the cache key covers the local package's files, so two checkouts whose
local package differs get two virtualenvs, each with its own code.
"""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest

from conformance.backend.venvs import VenvError, ensure_venv, looks_offline, venv_key


def checkout(root: Path, value: str) -> Path:
    """An adapter folder whose requirements.txt installs ./localpkg (``localpkg.VALUE = value``)."""
    adapter = root / "adapter"
    package = adapter / "localpkg"
    (package / "localpkg").mkdir(parents=True)
    (package / "pyproject.toml").write_text(textwrap.dedent('''
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "localpkg"
        version = "0.1"
    '''))
    (package / "localpkg" / "__init__.py").write_text(f"VALUE = {value!r}\n")
    (adapter / "requirements.txt").write_text("./localpkg\n")
    return adapter


def test_the_key_covers_local_package_content(tmp_path):
    a, b, c = checkout(tmp_path / "a", "one"), checkout(tmp_path / "b", "two"), checkout(tmp_path / "c", "one")
    text = b"./localpkg\n"
    assert venv_key(text, a) != venv_key(text, b)  # same text, different code
    assert venv_key(text, a) == venv_key(text, c)  # same code in another place: one venv
    (a / "localpkg" / "localpkg" / "__pycache__").mkdir()
    (a / "localpkg" / "localpkg" / "__pycache__" / "x.pyc").write_bytes(b"noise")
    assert venv_key(text, a) == venv_key(text, c)  # byte-code caches are not the package


def test_two_checkouts_get_their_own_code(tmp_path, monkeypatch):
    monkeypatch.setenv("DRIFT_CACHE_DIR", str(tmp_path / "cache"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # a relative path must not resolve against the current directory
    pythons = []
    for name, value in (("a", "one"), ("b", "two")):
        folder = checkout(tmp_path / name, value)
        try:
            python, built = ensure_venv("localpkg-adapter", folder / "requirements.txt")
        except VenvError as exc:
            if looks_offline(str(exc)):
                pytest.skip("no package index reachable to build the local package")
            raise
        assert built
        got = subprocess.run([str(python), "-c", "import localpkg; print(localpkg.VALUE)"], capture_output=True,
                             text=True, cwd=elsewhere)
        assert got.stdout.strip() == value, got.stderr
        pythons.append(python)
    assert pythons[0] != pythons[1]

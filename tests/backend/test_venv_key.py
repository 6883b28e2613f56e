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

REPO = Path(__file__).resolve().parents[2]


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


def own_repository(root: Path, requirement: str) -> Path:
    """A memory system's repository gating its own code: ``drift-adapter/`` installs the
    checkout it sits in (``requirement``, e.g. ``-e ..[drift]``)."""
    (root / "src" / "mymemory").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "mymemory"\nversion = "0.1"\n')
    (root / "src" / "mymemory" / "__init__.py").write_text("VALUE = 1\n")
    (root / "drift-adapter").mkdir()
    (root / "drift-adapter" / "requirements.txt").write_text(requirement + "\n")
    return root / "drift-adapter"


@pytest.mark.parametrize("requirement", ["..", "-e ..", "-e ..[drift]", "..[drift,extra]", "mymemory @ file:.."])
def test_a_repository_gating_its_own_checkout_keys_on_its_code(tmp_path, monkeypatch, requirement):
    """The pull request's checkout, installed from a local path (extras included), is in the key:
    a change to its code is a new virtualenv; the suite's run records and cache inside it are not."""
    monkeypatch.setenv("DRIFT_CACHE_DIR", str(tmp_path / "repo" / ".drift-cache"))
    adapter = own_repository(tmp_path / "repo", requirement)
    text = (adapter / "requirements.txt").read_bytes()
    before = venv_key(text, adapter)
    (tmp_path / "repo" / "drift-runs" / "run1").mkdir(parents=True)
    (tmp_path / "repo" / "drift-runs" / "run1" / "records.jsonl").write_text("{}\n")
    (tmp_path / "repo" / ".drift-cache" / "venvs").mkdir(parents=True)
    (tmp_path / "repo" / ".drift-cache" / "venvs" / "x").write_text("built\n")
    assert venv_key(text, adapter) == before
    (tmp_path / "repo" / "src" / "mymemory" / "__init__.py").write_text("VALUE = 2\n")
    assert venv_key(text, adapter) != before


def test_the_cache_key_names_the_folder_the_run_builds(tmp_path, monkeypatch):
    """``drift-conformance cache-key`` lists the folder :func:`ensure_venv` builds in, and its key
    moves with the adapter's own code (so a CI cache under it never serves stale code)."""
    from conformance.backend import venvs
    from conformance.backend.cachekey import cache_key

    monkeypatch.setenv("DRIFT_CACHE_DIR", str(tmp_path / "cache"))
    adapter = own_repository(tmp_path / "repo", "-e ..")
    (adapter / "adapter.yaml").write_text((REPO / "adapters" / "keyword" / "adapter.yaml").read_text()
                                          .replace("name: keyword", "name: mymemory"))
    (adapter / "adapter.py").write_text("")
    built = []

    def cached_venv(env_dir, *args, **kwargs):  # record where the run would build, build nothing
        built.append(env_dir.name)
        return env_dir / "bin" / "python", False

    monkeypatch.setattr(venvs, "cached_venv", cached_venv)
    venvs.ensure_venv("mymemory", adapter / "requirements.txt")
    first = cache_key([str(adapter)])
    assert built[0] in first.venvs and built[0].startswith("mymemory-")
    (tmp_path / "repo" / "src" / "mymemory" / "__init__.py").write_text("VALUE = 2\n")
    assert cache_key([str(adapter)]).key != first.key and first.key.startswith(first.prefix)

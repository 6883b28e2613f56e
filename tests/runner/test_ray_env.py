"""The Ray tests' cached virtualenv (tests/ray_env.py): keyed like the adapters' by what it holds,
built once, and a clear reason instead of a failure where it cannot be built."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
import ray_env  # noqa: E402
from conformance.backend.venvs import VenvError  # noqa: E402


def test_the_requirements_are_the_suites_dependencies_and_its_ray_extra_not_the_test_extra():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    lines = ray_env.requirements()
    assert set(lines) == set(project["dependencies"]) | set(project["optional-dependencies"]["ray"])
    assert any(line.startswith("ray") for line in lines)
    # The test venv no longer installs Ray: that is the point of the cache.
    assert not any(line.startswith("ray") for line in project["optional-dependencies"]["test"])


def test_the_key_covers_each_requirement_the_python_and_the_machine_but_not_their_order():
    lines = ["click>=8.1", "ray>=2.40"]
    key = ray_env.ray_env_key(lines, "3.11.7", "x86_64")
    assert len(key) == 16 and int(key, 16) >= 0
    assert ray_env.ray_env_key(list(reversed(lines)), "3.11.7", "x86_64") == key
    others = {ray_env.ray_env_key(["click>=8.1", "ray>=2.41"], "3.11.7", "x86_64"),
              ray_env.ray_env_key(lines, "3.11.8", "x86_64"), ray_env.ray_env_key(lines, "3.11.7", "aarch64"),
              ray_env.ray_env_key(lines[:1], "3.11.7", "x86_64")}
    assert key not in others and len(others) == 4


def test_the_folder_is_under_the_cache_beside_the_adapters_venvs(tmp_path, monkeypatch):
    monkeypatch.setenv("DRIFT_CACHE_DIR", str(tmp_path))
    folder = ray_env.ray_env_dir(["ray>=2.40"])
    assert folder.parent == tmp_path / "venvs"
    assert folder.name == "ray-tests-" + ray_env.ray_env_key(["ray>=2.40"])


def test_an_interpreter_that_imports_ray_is_used_and_nothing_is_built(monkeypatch):
    monkeypatch.setattr(ray_env.importlib.util, "find_spec", lambda name: object() if name == "ray" else None)
    monkeypatch.setattr(ray_env, "cached_venv", lambda *a, **k: (_ for _ in ()).throw(AssertionError("built")))
    renv, why = ray_env.ray_env()
    assert why is None and renv.python == sys.executable and not renv.built_now
    assert renv.env["PYTHONPATH"].split(":")[0] == str(REPO)


def test_otherwise_the_cached_venv_is_used_with_this_checkout_first_on_the_path(tmp_path, monkeypatch):
    monkeypatch.setenv("DRIFT_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    monkeypatch.setattr(ray_env.importlib.util, "find_spec", lambda name: None)
    calls = []

    def fake(env_dir, pip_args, what, log=None, cwd=None):
        calls.append((env_dir, pip_args))
        return env_dir / "bin" / "python", True

    monkeypatch.setattr(ray_env, "cached_venv", fake)
    renv, why = ray_env.ray_env()
    assert why is None and renv.built_now
    assert calls == [(ray_env.ray_env_dir(), ray_env.requirements())]
    assert renv.python == str(ray_env.ray_env_dir() / "bin" / "python")
    assert renv.env["PYTHONPATH"] == f"{REPO}:/elsewhere"
    assert renv.ray_command()[0] == renv.python


def test_an_index_out_of_reach_gives_the_reason_to_skip_with(monkeypatch):
    monkeypatch.setattr(ray_env.importlib.util, "find_spec", lambda name: None)

    def offline(*a, **k):
        raise VenvError("Ray for the tests: pip install failed:\nERROR: Could not find a version that satisfies "
                        "the requirement ray>=2.40 (from versions: none)")

    monkeypatch.setattr(ray_env, "cached_venv", offline)
    renv, why = ray_env.ray_env()
    assert renv is None and why == "Ray's virtualenv could not be built (no package index is reachable)"

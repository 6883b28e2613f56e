"""Ray for the tests, from a virtualenv cached by hash like the adapters' (not from the test extra).

Ray is a 79 MB wheel (about 244 MB installed): installing it into every fresh test venv cost
``.ci/run`` about 37 s each time. The Ray tests instead run the CLI and ``ray start`` with the
Python of ``<cache>/venvs/ray-tests-<key>`` (:func:`conformance.backend.venvs.cached_venv`),
which holds the suite's dependencies plus its ``[ray]`` extra, both read from pyproject.toml,
and imports ``conformance`` and ``drift_sdk`` from this checkout through ``PYTHONPATH``. The key
covers those requirement lines, the full Python version and the platform, so a warm machine
(``.ci/run`` keeps ``$DRIFT_CACHE_DIR``) builds it once; a change to either list builds anew.

Where the interpreter running the tests already imports Ray (``pip install -e '.[ray]'``), that
interpreter is used and nothing is built.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import platform
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from conformance.backend.venvs import VenvError, cached_venv, looks_offline
from conformance.paths import cache_dir

REPO = Path(__file__).resolve().parents[1]


def requirements(pyproject: Path = REPO / "pyproject.toml") -> list[str]:
    """The suite's dependencies and its ``[ray]`` extra, as pip requirement strings, sorted.

    Raises:
        KeyError: pyproject.toml has no ``[project.optional-dependencies] ray``.
    """
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    return sorted({*project["dependencies"], *project["optional-dependencies"]["ray"]})


def ray_env_key(lines: list[str], python_version: str | None = None, machine: str | None = None) -> str:
    """16 hex digits of SHA-256 over the requirement lines, the full Python version (a cached
    virtualenv links to its interpreter) and the machine type."""
    digest = hashlib.sha256("\n".join(sorted(lines)).encode())
    digest.update(f"\0{python_version or platform.python_version()}\0{machine or platform.machine()}".encode())
    return digest.hexdigest()[:16]


def ray_env_dir(lines: list[str] | None = None) -> Path:
    """``<cache>/venvs/ray-tests-<key>``: where the tests' Ray virtualenv lives."""
    return cache_dir() / "venvs" / f"ray-tests-{ray_env_key(requirements() if lines is None else lines)}"


@dataclass(frozen=True)
class RayEnv:
    python: str
    """The interpreter to run ``-m conformance.cli`` and Ray's scripts with."""
    env: dict[str, str]
    """The environment for those subprocesses: this checkout first on ``PYTHONPATH``."""
    built_now: bool
    """True when this call built the virtualenv (a cold cache)."""

    def ray_command(self) -> list[str]:
        """The ``ray`` command line of this interpreter (``ray start ...`` follows)."""
        return [self.python, "-c", "import sys; from ray.scripts.scripts import main; sys.exit(main())"]


def ray_env() -> tuple[RayEnv | None, str | None]:
    """``(RayEnv, None)``, or ``(None, why Ray is not available)`` when its virtualenv cannot be
    built here (no package index, a platform without a Ray wheel); built at most once per key."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    if importlib.util.find_spec("ray") is not None:
        return RayEnv(sys.executable, env, False), None
    try:
        python, built = cached_venv(ray_env_dir(), requirements(), "Ray for the tests")
    except VenvError as exc:
        why = "no package index is reachable" if looks_offline(str(exc)) else str(exc).splitlines()[0]
        return None, f"Ray's virtualenv could not be built ({why})"
    return RayEnv(str(python), env, built), None

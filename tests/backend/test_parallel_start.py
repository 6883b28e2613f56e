"""Adapters start side by side: virtualenvs build at once (one per core at most, each under its
own file lock), processes are launched from the runner's main thread so they outlive the start."""

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

import conformance.backend.process as process
import conformance.backend.venvs as venvs
from conformance.backend.systems import AdapterSpecError, open_systems


class _Overlap:
    """Counts how many calls run at once (the most seen, and who made them)."""

    def __init__(self):
        self.lock, self.now, self.most, self.threads = threading.Lock(), 0, 0, set()

    def __enter__(self):
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
            self.threads.add(threading.current_thread().name)

    def __exit__(self, *exc):
        with self.lock:
            self.now -= 1


def test_venv_builds_in_one_process_are_bounded_by_the_cores_and_one_per_folder(tmp_path, monkeypatch):
    overlap, builds = _Overlap(), []

    class SlowBuilder:
        def __init__(self, **kwargs):
            pass

        def create(self, env_dir):
            with overlap:
                builds.append(Path(env_dir).name)
                time.sleep(0.3)
                (Path(env_dir) / "bin").mkdir(parents=True)

    monkeypatch.setattr(venvs.venv, "EnvBuilder", SlowBuilder)
    monkeypatch.setattr(venvs.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, "", ""))
    cores = os.cpu_count() or 1
    folders = [tmp_path / f"env{i % (cores + 1)}" for i in range(2 * (cores + 1))]  # each folder asked twice
    threads = [threading.Thread(target=venvs.cached_venv, args=(f, ["x"], f.name)) for f in folders]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(builds) == sorted({f.name for f in folders})  # once per folder, the second asker waited
    assert overlap.most == cores  # at once, but never more builds than cores


@pytest.mark.slow
def test_adapters_boot_side_by_side_and_outlive_the_start(monkeypatch):
    overlap, real = _Overlap(), process.ensure_venv

    def slow_ensure_venv(name, requirements, log=None):
        with overlap:
            time.sleep(0.5)
            return real(name, requirements, log=log)

    monkeypatch.setattr(process, "ensure_venv", slow_ensure_venv)
    systems = open_systems([("none", "control"), ("recent", None)])
    try:
        assert overlap.most == min(2, os.cpu_count() or 1)
        assert [s.label for s in systems] == ["none", "recent"] and systems[0].kind == "control"
        # Started from this thread, so the kernel keeps them alive after the start threads ended.
        time.sleep(0.5)
        for system in systems:
            assert system.died() is None
            system.reset("ns")
    finally:
        for system in systems:
            system.close()


def test_a_misspelt_adapter_fails_before_anything_starts(monkeypatch):
    monkeypatch.setattr(process.ProcessAdapter, "prepare", lambda self: pytest.fail("started something"))
    with pytest.raises(AdapterSpecError, match="no-such-adapter"):
        open_systems([("none", "control"), ("no-such-adapter", None)])


def _tiny_wheel(folder: Path) -> Path:
    """A one-module wheel built by hand (no build backend, no index needed)."""
    import base64
    import hashlib
    import zipfile

    files = {"drift_probe_pkg.py": b"VALUE = 42\n",
             "drift_probe_pkg-0.1.dist-info/METADATA": b"Metadata-Version: 2.1\nName: drift-probe-pkg\nVersion: 0.1\n",
             "drift_probe_pkg-0.1.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                                    b"Tag: py3-none-any\n"}
    record = "".join(f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
                     f"{len(data)}\n" for name, data in files.items())
    files["drift_probe_pkg-0.1.dist-info/RECORD"] = (record + "drift_probe_pkg-0.1.dist-info/RECORD,,\n").encode()
    wheel = folder / "drift_probe_pkg-0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as out:
        for name, data in files.items():
            out.writestr(name, data)
    return wheel


def test_a_venv_is_filled_by_the_runners_pip_without_one_of_its_own(tmp_path):
    python, built = venvs.cached_venv(tmp_path / "env", ["--no-index", "--no-deps", str(_tiny_wheel(tmp_path))],
                                      "a test venv")
    assert built
    probe = subprocess.run([str(python), "-c", "import drift_probe_pkg, importlib.util; "
                                               "print(drift_probe_pkg.VALUE, importlib.util.find_spec('pip') is None)"],
                           capture_output=True, text=True, check=True)
    assert probe.stdout.split() == ["42", "True"]  # installed, and no ensurepip seeding cost paid

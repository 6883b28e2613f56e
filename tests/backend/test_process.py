"""Process isolation: own process, own virtualenv, loopback, health wait, loud failures."""

import os
import textwrap
from pathlib import Path

import pytest

from conformance.backend.manifest import ManifestError, load_manifest
from conformance.backend.process import AdapterStartError, ProcessAdapter
from conformance.backend.systems import AdapterSpecError, open_system, resolve_adapter_folder

pytestmark = pytest.mark.slow

PROBE_ADAPTER = '''
import json, os, sys
from drift_sdk import Backend, serve

def importable(name):
    try:
        __import__(name)
        return True
    except ImportError:
        return False

class Probe(Backend):
    name, version = "probe", "0"
    def settings(self):
        return {"facts": json.dumps({
            "executable": sys.executable, "cwd": os.getcwd(), "cwd_entries": sorted(os.listdir(".")),
            "conformance": importable("conformance"), "pydantic": importable("pydantic"),
            "numpy": importable("numpy"), "secret": os.environ.get("DRIFT_TEST_SECRET"),
            "path": os.environ.get("PATH", ""),
        })}
    def reset(self, namespace): pass

serve(Probe())
'''


def make_adapter(root: Path, body: str, name="probe", timeout=60) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "adapter.py").write_text(textwrap.dedent(body))
    (folder / "requirements.txt").write_text("")
    (folder / "adapter.yaml").write_text(f"name: {name}\ndescription: test adapter\nstartup_timeout_s: {timeout}\n")
    return folder


def test_adapter_runs_in_its_own_process_and_venv_without_runner_packages(tmp_path, monkeypatch):
    import json
    import sys

    monkeypatch.setenv("DRIFT_TEST_SECRET", "sk-canary-123")
    system = open_system(str(make_adapter(tmp_path, PROBE_ADAPTER)))
    try:
        facts = json.loads(system.describe["settings"]["facts"])
        assert system.process.proc.pid != os.getpid()
        assert Path(facts["executable"]).resolve() != Path(sys.executable).resolve()
        assert "/venvs/" in facts["executable"]
        assert facts["conformance"] is False and facts["pydantic"] is False and facts["numpy"] is False
        assert facts["secret"] is None, "runner environment leaked into the adapter"
        assert str(Path(sys.executable).parent) not in facts["path"].split(":"), "runner venv on the adapter's PATH"
        assert facts["cwd_entries"] == ["adapter.log", "port"], "adapter working folder is not fresh"
        assert system.isolation["bind"] == "127.0.0.1"
    finally:
        system.close()
    assert system.process.proc.poll() is not None, "adapter process outlived close()"


def test_crash_at_startup_shows_the_stderr_tail(tmp_path):
    folder = make_adapter(tmp_path, "import sys\nprint('CANARY-STARTUP-FAILURE', file=sys.stderr)\nraise SystemExit(3)\n")
    with pytest.raises(AdapterStartError) as err:
        open_system(str(folder))
    assert "exited with code 3" in str(err.value) and "CANARY-STARTUP-FAILURE" in str(err.value)


def test_the_stderr_tail_waits_for_the_last_line_still_in_the_pipe(tmp_path, monkeypatch):
    """The runner read adapter.log as soon as the adapter was dead, while its last line was still
    in the pipe (tests/security's hostile adapter lost it on a loaded CI host): a slow log pump
    stands in for the load."""
    import time

    import conformance.backend.process as process

    real = process._pump_redacted

    def slow(pipe, path):
        time.sleep(1.0)
        real(pipe, path)

    monkeypatch.setattr(process, "_pump_redacted", slow)
    folder = make_adapter(tmp_path, "import sys\nprint('CANARY-LAST-WORDS', file=sys.stderr)\nraise SystemExit(4)\n")
    with pytest.raises(AdapterStartError) as err:
        open_system(str(folder))
    assert "exited with code 4" in str(err.value) and "CANARY-LAST-WORDS" in str(err.value)


def test_never_serving_times_out(tmp_path):
    folder = make_adapter(tmp_path, "import time\ntime.sleep(60)\n", timeout=2)
    with pytest.raises(AdapterStartError, match="did not bind a port within 2 s"):
        open_system(str(folder))


def test_bad_manifest_names_file_and_field(tmp_path):
    folder = make_adapter(tmp_path, PROBE_ADAPTER)
    (folder / "adapter.yaml").write_text("name: Bad Name\ndescription: x\n")
    with pytest.raises(ManifestError, match=r"adapter.yaml: name"):
        load_manifest(folder)


def test_unknown_adapter_lists_the_built_in_ones():
    with pytest.raises(AdapterSpecError, match="built-in adapters: .*keyword"):
        resolve_adapter_folder("no-such-memory")


def test_adapter_dies_with_a_killed_runner(tmp_path):
    # A runner killed with SIGKILL runs no cleanup; the kernel must still stop its adapter.
    import signal
    import subprocess
    import sys
    import time

    folder = make_adapter(tmp_path, PROBE_ADAPTER)
    script = (f"from conformance.backend.systems import open_system\n"
              f"s = open_system({str(folder)!r})\nprint(s.process.proc.pid, flush=True)\n"
              f"import time\ntime.sleep(120)\n")
    runner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    adapter_pid = int(runner.stdout.readline())
    runner.send_signal(signal.SIGKILL)
    runner.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(adapter_pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(adapter_pid, signal.SIGKILL)
    raise AssertionError(f"adapter {adapter_pid} outlived its SIGKILLed runner")

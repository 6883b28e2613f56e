"""Exit codes are a contract: 1 means a gate regression and nothing else.

A crash under ``--compare`` must not read as a regression (exit 2, a one-line message, the
traceback only under ``-v``); Ctrl-C exits 130; a DriftError exits 2 with its message and
no traceback. Each fault is injected into a real ``drift-conformance`` subprocess by
replacing one function before the CLI starts.
"""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: Runs the CLI after ``patch`` (Python source) has replaced a function.
LAUNCH = """
import os, signal, sys, time
{patch}
from conformance.cli import main
sys.exit(main())
"""

#: The gate's renderer runs after every comparison, also for an unreadable baseline.
CRASH_IN_GATE = """
import conformance.gate.render as render
def markdown(comparison):
    raise RuntimeError("the renderer fell over")
render.markdown = markdown
"""

#: Ctrl-C while the corpus streams: SIGINT to this very process.
# A shell without job control (a CI script's `cmd &`) starts children with SIGINT ignored;
# restore Python's handler so the injected Ctrl-C is delivered as it is at a terminal.
CTRL_C_IN_RUN = """
import conformance.runner.job as job
signal.signal(signal.SIGINT, signal.default_int_handler)
def run_corpus(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(30)
job.run_corpus = run_corpus
"""

DRIFT_ERROR_IN_RUN = """
import conformance.runner.job as job
from conformance.errors import DriftError
def run_corpus(*args, **kwargs):
    raise DriftError("adapter keyword: the thing a person can fix")
job.run_corpus = run_corpus
"""


def cli(patch: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", LAUNCH.format(patch=patch), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def run_args(tmp_path: Path) -> list[str]:
    return ["--adapter", "keyword", "--scenario", "ua-short-003", "--quiet", "--bootstrap", "100",
            "--records-dir", str(tmp_path / "runs")]


def test_a_crash_under_compare_exits_2_not_1_with_a_one_line_message(tmp_path):
    proc = cli(CRASH_IN_GATE, *run_args(tmp_path), "--compare", "absent.json", cwd=tmp_path)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    message = [line for line in proc.stderr.splitlines() if "the renderer fell over" in line]
    assert len(message) == 1 and "RuntimeError" in message[0], proc.stderr
    assert "-v" in proc.stderr  # how to see the traceback


def test_verbose_shows_the_traceback_of_a_crash(tmp_path):
    proc = cli(CRASH_IN_GATE, "-v", *run_args(tmp_path), "--compare", "absent.json", cwd=tmp_path)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" in proc.stderr and "the renderer fell over" in proc.stderr, proc.stderr


def test_ctrl_c_exits_130(tmp_path):
    proc = cli(CTRL_C_IN_RUN, *run_args(tmp_path), "--compare", "absent.json", cwd=tmp_path)
    assert proc.returncode == 130, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and "interrupted" in proc.stderr, proc.stderr


def test_a_drift_error_exits_2_with_its_message_and_no_traceback(tmp_path):
    proc = cli(DRIFT_ERROR_IN_RUN, *run_args(tmp_path), "--compare", "absent.json", cwd=tmp_path)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "the thing a person can fix" in proc.stderr


def test_a_crash_in_a_subcommand_exits_2(tmp_path):
    patch = ("import conformance.report.command as command\n"
             "def load_result(path):\n    raise ValueError('a bug in the loader')\n"
             "command.load_result = load_result\n")
    proc = cli(patch, "report", "r.json", "--html", "r.html", cwd=tmp_path)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and "a bug in the loader" in proc.stderr, proc.stderr


def test_sigterm_during_an_import_exits_130_like_ctrl_c(tmp_path):
    # Every command shares the hook: an importer, too, unwinds on SIGTERM instead of dying.
    patch = ("import conformance.importers.report as report\n"
             "def run_import(*args, **kwargs):\n    os.kill(os.getpid(), signal.SIGTERM)\n    time.sleep(30)\n"
             "report.run_import = run_import\n")
    (tmp_path / "lme.json").write_text("[]")
    proc = cli(patch, "import", "longmemeval", "lme.json", "--out", "out", cwd=tmp_path)
    assert proc.returncode == 130, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and "interrupted" in proc.stderr, proc.stderr

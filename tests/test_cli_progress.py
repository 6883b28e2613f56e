"""Progress without a TTY (a CI log): one line per finished scenario with elapsed time and ETA."""

import re
import subprocess
import sys


def test_a_log_gets_one_line_per_finished_scenario(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "--adapter", "keyword", "--scenario",
                           "ua-short-00[12]", "--records-dir", str(tmp_path / "runs")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("scenario ")]
    assert len(lines) == 2, proc.stderr
    assert re.fullmatch(r"scenario 1/2 ua-short-00[12] done: \d+ sessions, elapsed \d+:\d\d:\d\d, ETA \d+:\d\d:\d\d",
                        lines[0]), lines[0]
    assert re.fullmatch(r"scenario 2/2 ua-short-00[12] done: \d+ sessions, elapsed \d+:\d\d:\d\d", lines[1]), lines[1]
    # The table fits a log's 100 columns.
    assert max(len(line) for line in proc.stdout.split("\nnote:")[0].splitlines()) <= 100

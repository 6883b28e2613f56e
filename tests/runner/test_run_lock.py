"""One run folder, one runner: a second runner on the same run is refused, and a damaged
records file is an error naming file and line (issue 19, item 1)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.runner.records import RecordsError, RunLock, RunLocked, iter_records, keep_completed

REPO = Path(__file__).resolve().parents[2]


def test_a_second_holder_is_refused_and_told_who_holds_it(tmp_path):
    folder = tmp_path / "runs" / "20261201T000000Z-abcdef"
    with RunLock(folder):
        with pytest.raises(RunLocked) as caught:
            RunLock(folder).acquire()
    message = str(caught.value)
    assert f"pid {os.getpid()}" in message and socket.gethostname() in message
    assert "started " in message and str(folder) in message
    with RunLock(folder):  # released: the next runner gets it
        pass


def test_an_empty_run_folder_is_removed_with_its_lock(tmp_path):
    folder = tmp_path / "runs" / "20261201T000000Z-abcdef"
    with RunLock(folder):
        assert folder.is_dir()
    assert not folder.exists()  # a run that wrote nothing leaves nothing behind
    folder.mkdir(parents=True)
    (folder / "records.jsonl").write_text("")
    with RunLock(folder):
        pass
    assert (folder / "records.jsonl").exists()


HOLDER = textwrap.dedent('''
    import sys, time
    from pathlib import Path
    from conformance.runner.records import RunLock
    with RunLock(Path(sys.argv[1])):
        print("held", flush=True)
        time.sleep(60)
''')


def test_cli_resume_of_a_run_someone_holds_exits_2_naming_the_holder(tmp_path):
    run_id = "20261201T000000Z-abcdef"
    folder = tmp_path / "runs" / run_id
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        proc = subprocess.run([sys.executable, "-m", "conformance.cli", "--adapter", "keyword", "--scenario",
                               "cod-short-001", "--quiet", "--records-dir", "runs", "--resume", run_id],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120)
    finally:
        holder.kill()
        holder.wait()
    assert proc.returncode == 2, proc.stderr
    text = " ".join(proc.stderr.split())
    assert f"pid {holder.pid}" in text and "Traceback" not in proc.stderr
    assert "already" in text


def test_a_corrupt_line_in_the_middle_names_file_and_line(tmp_path):
    path = tmp_path / "records.jsonl"
    good = json.dumps({"kind": "run", "run_id": "x", "binding": {}})
    path.write_text(good + "\n" + '{"kind": "store", "sys\n' + good + "\n")
    with pytest.raises(RecordsError, match=rf"{path}: line 2: "):
        list(iter_records(path))
    with pytest.raises(RecordsError, match="line 2"):
        keep_completed(path)


def test_a_torn_last_line_is_still_skipped(tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps({"kind": "run"}) + "\n" + '{"kind": "sto')
    assert [r["kind"] for r in iter_records(path)] == ["run"]

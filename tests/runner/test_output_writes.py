"""Outputs are written whole or not at all, and a folder that cannot take them is named
(issue 31, item 9).

A full disk left a truncated 64 KiB result.json; full-disk and read-only errors read
"unexpected OSError ... a bug" without naming the folder; a read-only ``--out`` was found
only after the whole run. Real small or read-only file systems are tmpfs mounts (root
only; skipped otherwise), the rest simulates the errno.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.paths import OutputError, check_writable, write_atomic
from conformance.runner.records import RecordWriter

REPO = Path(__file__).resolve().parents[2]
SCENARIO = "crw-short-002"


@pytest.fixture
def mount(tmp_path):
    """``mount(name, size_kib, read_only)``: a tmpfs under ``tmp_path``, unmounted afterwards."""
    mounted = []

    def make(name: str, size_kib: int = 64, read_only: bool = False) -> Path:
        point = tmp_path / name
        point.mkdir()
        options = f"size={size_kib}k" + (",ro" if read_only else "")
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(point)], capture_output=True,
                              text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()[:200]}")
        mounted.append(point)
        return point

    yield make
    for point in mounted:
        subprocess.run(["umount", "-l", str(point)], capture_output=True)


def _fill(folder: Path, leave_kib: int) -> None:
    """Fill ``folder``'s file system up to ``leave_kib`` KiB free."""
    stat = os.statvfs(folder)
    free = stat.f_bavail * stat.f_frsize
    (folder / "filler").write_bytes(b"\0" * max(0, free - leave_kib * 1024))


def _corpus(tmp_path: Path) -> list[str]:
    fixtures, gold = tmp_path / "fixtures", tmp_path / "gold"
    fixtures.mkdir()
    gold.mkdir()
    shutil.copy(REPO / "fixtures" / f"{SCENARIO}.jsonl", fixtures)
    shutil.copy(REPO / "gold" / f"{SCENARIO}.json", gold)
    return ["--fixtures", str(fixtures), "--gold", str(gold)]


def _run(tmp_path: Path, out: Path, records: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli", "--adapter", "keyword", *_corpus(tmp_path),
                           "--quiet", "--bootstrap", "100", "--records-dir", str(records), "--out", str(out)],
                          capture_output=True, text=True, timeout=600, cwd=REPO)


def _records_written(records: Path) -> list[Path]:
    return list(records.rglob("records.jsonl")) if records.exists() else []


# ------------------------------------------------------------------ the write itself


def test_a_failed_write_keeps_the_old_file_and_names_path_and_errno(tmp_path, monkeypatch):
    target = tmp_path / "result.json"
    target.write_text("the earlier result\n")
    real_write = os.write

    def full(fd, data):
        real_write(fd, bytes(data)[:100])  # part of it lands, then the disk is full
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(OutputError) as err:
        write_atomic(target, "x" * 100_000, what="result")
    monkeypatch.undo()
    message = str(err.value)
    assert str(target) in message and "ENOSPC" in message and "No space left" in message, message
    assert target.read_text() == "the earlier result\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.json"]  # no temporary file left


def test_a_write_lands_whole(tmp_path):
    target = tmp_path / "deep" / "result.json"
    write_atomic(target, "é" * 10, what="result")
    assert target.read_text(encoding="utf-8") == "é" * 10
    assert sorted(p.name for p in target.parent.iterdir()) == ["result.json"]


def test_an_unwritable_folder_is_named_with_its_errno(tmp_path, monkeypatch):
    import tempfile

    def refused(*args, **kwargs):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(tmp_path / "x"))

    monkeypatch.setattr(tempfile, "mkstemp", refused)
    with pytest.raises(OutputError) as err:
        check_writable(tmp_path / "out", "--out")
    assert "--out" in str(err.value) and str(tmp_path / "out") in str(err.value) and "EACCES" in str(err.value)


def test_a_full_disk_under_the_records_is_named(mount):
    folder = mount("records", size_kib=64)
    writer = RecordWriter(folder / "run" / "records.jsonl")
    with pytest.raises(OutputError) as err:
        for _ in range(200):
            writer.write({"kind": "probe", "pad": "x" * 4096})
        writer.sync()
    assert "records.jsonl" in str(err.value) and "ENOSPC" in str(err.value), str(err.value)


# ------------------------------------------------------------------ the run


def test_a_full_disk_leaves_no_truncated_result_json(tmp_path, mount):
    out_dir = mount("out", size_kib=64)
    (out_dir / "result.json").write_text('{"earlier": true}\n')
    _fill(out_dir, leave_kib=8)
    run = _run(tmp_path, out_dir / "result.json", tmp_path / "runs")
    assert run.returncode == 2, (run.returncode, run.stderr[-2000:])
    assert "a bug" not in run.stderr and "ENOSPC" in run.stderr and str(out_dir) in run.stderr, run.stderr
    assert json.loads((out_dir / "result.json").read_text()) == {"earlier": True}
    assert sorted(p.name for p in out_dir.iterdir()) == ["filler", "result.json"]


def test_a_read_only_out_is_refused_before_the_run(tmp_path, mount):
    out_dir = mount("out", read_only=True)
    run = _run(tmp_path, out_dir / "result.json", tmp_path / "runs")
    assert run.returncode == 2, (run.returncode, run.stderr[-2000:])
    assert "--out" in run.stderr and str(out_dir) in run.stderr and "EROFS" in run.stderr, run.stderr
    assert "a bug" not in run.stderr
    assert not _records_written(tmp_path / "runs")  # nothing ran


def test_a_read_only_records_folder_is_refused_before_the_run(tmp_path, mount):
    records = mount("runs", read_only=True)
    run = _run(tmp_path, tmp_path / "result.json", records)
    assert run.returncode == 2, (run.returncode, run.stderr[-2000:])
    assert "--records-dir" in run.stderr and str(records) in run.stderr and "EROFS" in run.stderr, run.stderr
    assert "a bug" not in run.stderr and not (tmp_path / "result.json").exists()

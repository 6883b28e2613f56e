"""A run's fixed costs: it validates only the scenarios it selects, and tiktoken's encoding
loads while the adapters start (never after)."""

import shutil
import threading
from pathlib import Path

import pytest

import conformance.runner.job as job
from conformance.contract.corpus import CorpusError, Selection, validate_corpus

REPO = Path(__file__).resolve().parents[2]


class _Started(Exception):
    """Raised by the stand-in for the adapters' start: the run got past validation."""


def corpus(tmp_path: Path) -> tuple[Path, Path]:
    fixtures, gold = tmp_path / "fixtures", tmp_path / "gold"
    fixtures.mkdir()
    gold.mkdir()
    for sid in ("ua-short-001", "cod-short-001"):
        shutil.copy(REPO / "fixtures" / f"{sid}.jsonl", fixtures)
        shutil.copy(REPO / "gold" / f"{sid}.json", gold)
    return fixtures, gold


def start_until_adapters(fixtures, gold, tmp_path, monkeypatch, selection):
    def adapters_start(specs, *args, **kwargs):
        raise _Started([spec for spec, _ in specs])

    monkeypatch.setattr(job, "open_systems", adapters_start)
    with pytest.raises(_Started):
        job.run_job(["keyword"], fixtures, gold, records_dir=tmp_path / "runs", selection=selection)


def test_a_run_validates_what_it_selects_and_nothing_else(tmp_path, monkeypatch):
    fixtures, gold = corpus(tmp_path)
    (gold / "cod-short-001.json").write_text("{ not json")  # broken, but not selected
    start_until_adapters(fixtures, gold, tmp_path, monkeypatch, Selection(patterns=("ua-*",)))
    # The whole corpus is still checked where it is asked for (`drift-conformance validate`).
    with pytest.raises(CorpusError, match="cod-short-001.json"):
        validate_corpus(fixtures, gold)


def test_a_broken_or_orphaned_selected_fixture_stops_the_run_before_any_adapter_starts(tmp_path, monkeypatch):
    fixtures, gold = corpus(tmp_path)
    lines = (fixtures / "ua-short-001.jsonl").read_text().splitlines(keepends=True)
    (fixtures / "ua-short-001.jsonl").write_text("".join(lines[:2]) + '{"kind": "session", "gold": 1}\n')
    monkeypatch.setattr(job, "open_systems", lambda *a, **k: pytest.fail("an adapter was started"))
    with pytest.raises(CorpusError, match=r"ua-short-001.jsonl:3: gold"):
        job.run_job(["keyword"], fixtures, gold, records_dir=tmp_path / "runs", selection=Selection())
    (gold / "cod-short-001.json").unlink()
    with pytest.raises(CorpusError, match="cod-short-001.jsonl: no gold file"):
        job.run_job(["keyword"], fixtures, gold, records_dir=tmp_path / "runs",
                    selection=Selection(patterns=("cod-*",)))


def test_the_encoding_loads_in_another_thread_while_the_adapters_start(tmp_path, monkeypatch):
    fixtures, gold = corpus(tmp_path)
    loading, seen = threading.Event(), {}

    def encoding(name):
        seen["thread"], seen["name"] = threading.current_thread().name, name
        loading.set()

    def adapters_start(specs, *args, **kwargs):
        # The load began without waiting for the adapters (it would deadlock here otherwise).
        assert loading.wait(10), "the encoding did not start loading while the adapters started"
        raise _Started()

    monkeypatch.setattr(job, "encoding", encoding)
    monkeypatch.setattr(job, "open_systems", adapters_start)
    with pytest.raises(_Started):
        job.run_job(["keyword"], fixtures, gold, records_dir=tmp_path / "runs", selection=Selection())
    assert seen == {"thread": "tiktoken-load", "name": "o200k_base"}

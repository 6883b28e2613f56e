"""Adapter-provided text reaches the terminal literally (issue 31, item 11).

Rich reads ``[word]`` as a style tag: an adapter whose name, fault, note or stderr held
``hostile[crash_store]`` printed as ``hostile``, and ``[/]`` or ``[link=...]`` could restyle
or hide what followed. Every path that prints such text is exercised here.
"""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from conformance.contract.result import MetricValue, Receipt, ResultDocument, SystemResult

BRACKETED = "hostile[crash_store] [bold]loud[/bold] [/] [link=http://x]y[/link]"
"""Adapter text with markup in it: unknown tag, known tags, a bare closer, a link."""


def _console() -> Console:
    return Console(file=io.StringIO(), width=400, record=True, force_terminal=False)


def test_an_error_message_prints_literally(monkeypatch):
    from conformance.cli import common

    console = _console()
    monkeypatch.setattr(common, "err", console)
    common.Failure(f"adapter {BRACKETED}: Store failed").show()
    assert BRACKETED in console.export_text()


def test_a_run_log_line_prints_literally():
    from conformance.cli.main import _log_line

    console = _console()
    _log_line(console, f"fault: {BRACKETED}")
    assert BRACKETED in console.export_text()


def _doc() -> ResultDocument:
    result = SystemResult(adapter="hostile", kind="system", metrics={"accuracy": MetricValue(value=0.5, n=2)},
                          notes=[f"start error: {BRACKETED}"])
    receipt = Receipt(fixtures_hash="a" * 64, gold_hash="b" * 64, scenarios=["s"], config={"k": 10, "budget_tokens": 1200, "encoding": "o200k_base"},
                      git_commit=None,
                      versions={}, isolation={}, seed=0, started_at="2026-01-01T00:00:00Z",
                      finished_at="2026-01-01T00:00:01Z", notes=[f"receipt note {BRACKETED}"])
    return ResultDocument(receipt=receipt, systems={"hostile[crash_store]": result})


@pytest.mark.parametrize("wide", [False, True])
def test_the_result_table_prints_names_and_notes_literally(wide):
    from conformance.report.table import render

    console = _console()
    render(_doc(), console, wide=wide)
    shown = console.export_text()
    assert f"start error: {BRACKETED}" in shown
    assert f"receipt note {BRACKETED}" in shown
    assert "hostile[crash_store]:" in shown  # the label before its note

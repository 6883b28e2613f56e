"""The bounded readers every importer (and the fixture reader, tests/fuzz/test_size_bounds.py)
shares: an over-long line is never held and is named by its line number, every byte still
reaches the digest, and a source that is not JSON is an error naming the file and the line."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest

from conformance.contract.limits import BOM, bounded_lines
from conformance.importers.report import SourceFormatError
from conformance.importers.toolkit import ReportBuilder, json_lines, load_json, sanitise_id, unique_id


class CountingReader(io.BytesIO):
    """A file that records the largest single read it was asked for."""

    def __init__(self, data: bytes):
        super().__init__(data)
        self.largest = 0

    def readline(self, size: int = -1) -> bytes:
        line = super().readline(size)
        self.largest = max(self.largest, len(line))
        return line


def test_an_over_long_line_is_named_never_held_and_skipped_to_the_next():
    long_line = b"x" * 5000
    data = b'{"a": 1}\n' + long_line + b"\n\n" + b'{"b": 2}\r\n'
    handle = CountingReader(data)
    seen: list[bytes] = []
    lines = list(bounded_lines(handle, 100, on_read=seen.append))
    assert [(line.number, line.data) for line in lines] == [(1, b'{"a": 1}'), (2, None), (3, b""), (4, b'{"b": 2}')]
    assert handle.largest <= 101
    assert b"".join(seen) == data  # the digest sees the skipped bytes too
    assert lines[0].size == 9 and lines[3].size == 10


def test_a_line_of_exactly_the_bound_passes_and_one_byte_more_does_not():
    lines = list(bounded_lines(io.BytesIO(b"a" * 9 + b"\n" + b"b" * 10 + b"\n"), 10))
    assert [line.data for line in lines] == [b"a" * 9, None]


def test_a_caller_that_stops_at_the_over_long_line_reads_no_further():
    handle = io.BytesIO(b"y" * 10_000 + b"\nnext\n")
    first = next(iter(bounded_lines(handle, 100)))
    assert first.data is None and handle.tell() == 101


def test_a_byte_order_mark_is_dropped_only_when_asked_and_only_on_line_one():
    data = BOM + b'{"a": 1}\n' + BOM + b"2\n"
    assert [line.data for line in bounded_lines(io.BytesIO(data), 100, bom=True)] == [b'{"a": 1}', BOM + b"2"]
    assert next(iter(bounded_lines(io.BytesIO(data), 100))).data == BOM + b'{"a": 1}'


def test_json_lines_gives_each_bad_line_its_number_and_reason():
    data = b'{"ok": 1}\n' + b"[" * 300 + b"\n{nope\n\xff\xfe\n" + b'"' + b"z" * 200 + b'"\n\n[2]\n'
    digest = hashlib.sha256()
    lines = list(json_lines(io.BytesIO(data), 150, digest.update))
    assert [(line.number, line.value) for line in lines if line.problem is None] == [(1, {"ok": 1}), (7, [2])]
    problems = {line.number: line.problem for line in lines if line.problem is not None}
    assert problems[2] == "line longer than 150 bytes (the input limit; see docs/input-limits.md)"
    assert problems[3].startswith("invalid JSON: Expecting property name")
    assert problems[4].startswith("not UTF-8")
    assert problems[5] == "line longer than 150 bytes (the input limit; see docs/input-limits.md)"
    assert [line.text for line in lines if line.number == 3] == [b"{nope"]
    assert [line.text for line in lines if line.number == 2] == [None]  # never held, so never quoted
    assert digest.hexdigest() == hashlib.sha256(data).hexdigest()


def test_json_lines_names_the_field_of_input_nested_too_deep():
    deep = ("[" * 70 + "]" * 70).encode()
    (line,) = json_lines(io.BytesIO(b'{"a": ' + deep + b"}\n"), 10_000)
    assert line.problem.startswith("nested more than 64 levels deep") and "(at a" in line.problem


def test_load_json_names_the_file_and_the_line(tmp_path: Path):
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'[\n  {"a": 1},\n  {"b": NaN}\n]\n')
    with pytest.raises(SourceFormatError, match=r"bad\.json: line 3: not a JSON file \(invalid JSON"):
        load_json(bad, 1000)
    with pytest.raises(SourceFormatError, match=r"bad\.json: \(file\): source larger than 10 bytes"):
        load_json(bad, 10)
    good = tmp_path / "good.json"
    good.write_bytes(BOM + b'{"a": [1, 2]}')
    assert load_json(good, 1000) == ({"a": [1, 2]}, BOM + b'{"a": [1, 2]}')


def test_ids_are_file_safe_and_unique():
    assert sanitise_id("../../etc/passwd", colons=False) == "etc-passwd"
    assert sanitise_id("a:b") == "a:b" and sanitise_id("a:b", colons=False) == "a-b"
    used: set[str] = set()
    assert [unique_id("Case", used, fold=True), unique_id("case", used, fold=True)] == ["Case", "case-2"]
    assert unique_id("x" * 20, set(), limit=8) == "x" * 8
    assert unique_id("abcdefgh", {"abcdefgh"}, limit=8) == "abcdef-2"


def test_the_report_builder_keeps_every_list_and_counts_what_was_written(tmp_path: Path):
    from conformance.contract.gold import GoldProbe

    report = ReportBuilder("test", ("dangling_evidence", "missing_answers"), ("evidence_ids",))
    report.issue("missing_answers", "s1", "qa[0].answer", "no answer", "kept empty", "s1-q0")
    gold = [GoldProbe(probe_id="p1", checkpoint_id="c1", probe_type="b", answer="x", evidence=["m1", "m2"]),
            GoldProbe(probe_id="p2", checkpoint_id="c1", probe_type="a", answer="y", evidence=[])]
    report.scenario("s1", [], gold)
    source = tmp_path / "src.json"
    source.write_text("[]")
    written = report.write(tmp_path / "out", source, "ab" * 32, 2, ["a note"])
    assert written.issues["dangling_evidence"] == [] and len(written.issues["missing_answers"]) == 1
    assert written.counts == {"scenarios": 1, "sessions": 0, "messages": 0, "probes": 2, "evidence_ids": 2}
    assert list(written.probes_by_type) == ["a", "b"]
    assert (tmp_path / "out" / "import-report.json").is_file()

"""Input limits (conformance/contract/limits.py): each is refused with the file and line
or field named. Cheap limits are tested at their real value; the large file limits are
lowered with monkeypatch so the test does not write gigabytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from conformance.contract import corpus, limits
from conformance.contract.corpus import CorpusError, iter_fixture, read_gold
from conformance.errors import DriftError
from fuzzkit import FIXTURE_LINES, GOLD, dump_json, fixture_bytes

REPO = Path(__file__).resolve().parents[2]


def _session_with_text(text: str) -> dict:
    line = json.loads(json.dumps(FIXTURE_LINES[1]))
    line["messages"][0]["text"] = text
    return line


def test_message_text_bound(tmp_path):
    path = tmp_path / "f.jsonl"
    path.write_bytes(fixture_bytes([FIXTURE_LINES[0], _session_with_text("x" * limits.MAX_MESSAGE_TEXT_CHARS)]))
    list(iter_fixture(path))
    path.write_bytes(fixture_bytes([FIXTURE_LINES[0], _session_with_text("x" * (limits.MAX_MESSAGE_TEXT_CHARS + 1))]))
    with pytest.raises(CorpusError) as err:
        list(iter_fixture(path))
    assert err.value.line == 2 and err.value.field == "messages.0.text"


def test_jsonl_line_bound_refuses_before_holding_the_line(tmp_path, monkeypatch):
    path = tmp_path / "f.jsonl"
    with open(path, "wb") as out:  # a 17 MiB line without a line end, after a valid header
        out.write(fixture_bytes(FIXTURE_LINES[:1]))
        out.write(b'{"kind": "session", "x": "' + b"a" * (17 << 20))
    reads: list[int] = []
    real_open = open

    class Spy:
        def __init__(self, handle):
            self.handle = handle

        def readline(self, size=-1):
            line = self.handle.readline(size)
            reads.append(len(line))
            return line

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

    monkeypatch.setattr("builtins.open", lambda *a, **k: Spy(real_open(*a, **k)))
    with pytest.raises(CorpusError, match=r"f\.jsonl:2: line longer than 16 MiB") as err:
        list(iter_fixture(path))
    monkeypatch.undo()
    assert err.value.line == 2 and max(reads) == limits.MAX_JSONL_LINE_BYTES + 1


def test_fixture_file_bound(tmp_path, monkeypatch):
    path = tmp_path / "f.jsonl"
    path.write_bytes(fixture_bytes(FIXTURE_LINES))
    monkeypatch.setattr(corpus, "MAX_FIXTURE_BYTES", len(fixture_bytes(FIXTURE_LINES[:2])) + 10)
    with pytest.raises(CorpusError, match=r"f\.jsonl:3: fixture larger than"):
        list(iter_fixture(path))


def test_gold_file_bound(tmp_path, monkeypatch):
    path = tmp_path / "g.json"
    path.write_bytes(dump_json(GOLD, indent=1))
    monkeypatch.setattr(corpus, "MAX_GOLD_BYTES", 100)
    with pytest.raises(CorpusError, match=r"g\.json: gold file larger than 100 bytes"):
        read_gold(path)
    monkeypatch.undo()
    read_gold(path)


@pytest.mark.parametrize("which", ["scenario", "adapter"])
def test_yaml_file_bound(tmp_path, which):
    from conformance.backend.manifest import load_manifest
    from conformance.world.scenario import load_scenario

    blob = b"# " + b"x" * limits.MAX_YAML_BYTES + b"\nid: a\n"
    if which == "scenario":
        path = tmp_path / "a.yaml"
        path.write_bytes(blob)
        call = lambda: load_scenario(path)  # noqa: E731
    else:
        path = tmp_path / "adapter.yaml"
        path.write_bytes(blob)
        (tmp_path / "adapter.py").write_text("")
        call = lambda: load_manifest(tmp_path)  # noqa: E731
    with pytest.raises(DriftError, match=r"\.yaml: \(file\): file larger than 1 MiB"):
        call()


def test_yaml_alias_bomb_is_cheap(tmp_path):
    """Aliases make a small file a huge tree; nothing walks it element by element."""
    from conformance.world.scenario import load_scenario

    levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i, name in enumerate("bcdefghi"):
        prev = "abcdefghi"[i]
        levels.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]")
    doc = yaml.safe_load("\n".join(levels))
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(levels) + "\nid: bomb\nentities: *i\ntopology: *i\ncheckpoints: *i\n")
    with pytest.raises(DriftError, match=r"bomb\.yaml: "):
        load_scenario(path)
    assert doc  # 10**9 leaves by reference


def test_result_and_baseline_bounds(tmp_path, monkeypatch):
    from conformance.gate import baseline
    from conformance.report import command

    result = REPO / "tests" / "contract" / "data" / "results" / "result-v1.json"
    monkeypatch.setattr(command, "MAX_RESULT_BYTES", 1000)
    with pytest.raises(DriftError, match=r"result-v1\.json: result file larger than"):
        command.load_result(result)
    monkeypatch.setattr(baseline, "MAX_BASELINE_BYTES", 1000)
    with pytest.raises(baseline.BaselineError, match=r"b\.json: baseline larger than"):
        baseline.parse_baseline((REPO / "baselines" / "main.json").read_text(), "b.json")


def test_import_source_bound(tmp_path, monkeypatch):
    from conformance.importers import locomo
    from test_fuzz_locomo import LOCOMO

    source = tmp_path / "locomo.json"
    source.write_bytes(dump_json(LOCOMO))
    monkeypatch.setattr(locomo, "MAX_IMPORT_SOURCE_BYTES", 100)
    with pytest.raises(DriftError, match=r"locomo\.json: \(file\): source larger than 100 bytes"):
        locomo.import_locomo(source, tmp_path / "out")


def test_limits_are_documented():
    text = (REPO / "docs" / "input-limits.md").read_text(encoding="utf-8")
    for name in ("MAX_MESSAGE_TEXT_CHARS", "MAX_QUERY_CHARS", "MAX_JSONL_LINE_BYTES", "MAX_FIXTURE_BYTES",
                 "MAX_GOLD_BYTES", "MAX_YAML_BYTES", "MAX_RESULT_BYTES", "MAX_BASELINE_BYTES",
                 "MAX_IMPORT_SOURCE_BYTES", "MAX_NESTING_DEPTH"):
        assert name in text, name

"""The LoCoMo importer on mutated versions of a small LoCoMo-shaped file.

Whatever the input, the importer either raises a located SourceFormatError (the file as a
whole is unusable) or writes a corpus that validates, with every file inside the output
folder (ids taken from the data never escape it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.contract.corpus import validate_corpus
from conformance.importers.locomo import import_locomo
from fuzzkit import BAD_IDS, assert_parses_or_located, dump_json, fuzz, mutated_bytes, mutated_tree

pytestmark = pytest.mark.timeout(300)

LOCOMO = [{
    "sample_id": "conv-1",
    "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bob",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat."},
                      {"speaker": "Bob", "dia_id": "D1:2", "text": "Look!", "blip_caption": "a cat"}],
        "session_2_date_time": "10:00 am on 10 May, 2023",
        "session_2": [{"speaker": "Bob", "dia_id": "D2:1", "text": "How is Lisbon?"}],
    },
    "qa": [{"question": "When did Ann adopt a cat?", "answer": "7 May 2023", "evidence": ["D1:1"], "category": 2},
           {"question": "Dog?", "adversarial_answer": "Rex", "evidence": ["D2:1; D1:02"], "category": 5}],
}]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("locomo")


def _import(root: Path, blob: bytes) -> None:
    source, out = root / "locomo.json", root / "out"
    shutil.rmtree(out, ignore_errors=True)
    source.write_bytes(blob)
    report = assert_parses_or_located(lambda: import_locomo(source, out), source)
    if report is None:
        return
    for written in out.rglob("*"):
        assert written.resolve().is_relative_to(out.resolve()), written
    if report.scenarios:
        assert validate_corpus(out / "fixtures", out / "gold") == sorted(report.scenarios)


def test_the_sample_imports(root):
    _import(root, dump_json(LOCOMO))


@fuzz(150)
@given(doc=mutated_tree(LOCOMO, rounds=4))
def test_mutated_locomo_tree(root, doc):
    _import(root, dump_json(doc))


@fuzz(60)
@given(blob=mutated_bytes(dump_json(LOCOMO, indent=1)))
def test_mutated_locomo_bytes(root, blob):
    _import(root, blob)


DATES = ["31 December, 9999", "1:00 pm on 31 December, 9999", "1 January, 0001", "1 January, 1", "0 May, 2023",
         "29 February, 2023", "1:56 pm on 8 May, 2023 +14:00", "8 May 2023 99:99", "x" * 5000, "9" * 30,
         "8 May, 2023 EST", "\x00"]


@pytest.mark.parametrize("date", DATES)
def test_extreme_session_dates(root, date):
    doc = dump_json([{**LOCOMO[0], "conversation": {**LOCOMO[0]["conversation"], "session_1_date_time": date,
                                                    "session_2_date_time": date}}])
    _import(root, doc)


@pytest.mark.parametrize("value", [*BAD_IDS, "x" * 5000, 10 ** 40])
def test_ids_from_the_data_stay_inside_the_output(root, value):
    """sample_id, speaker names, dia_ids and session numbers all feed ids and file names."""
    record = LOCOMO[0]
    conversation = {**record["conversation"], "speaker_a": value if isinstance(value, str) else "Ann",
                    "session_1": [{**t, "dia_id": str(value)} for t in record["conversation"]["session_1"]],
                    f"session_{str(value)[:40]}": [{"speaker": "Ann", "dia_id": "D9:1", "text": "hi"}]}
    _import(root, dump_json([{**record, "sample_id": value, "conversation": conversation},
                             {**record, "sample_id": value}]))


@pytest.mark.parametrize("field, size", [("text", 100_001), ("text", 400_000), ("question", 10_001),
                                         ("caption", 99_990)])
def test_oversized_items_are_reported_not_fatal(root, field, size):
    record = {**LOCOMO[0], "conversation": dict(LOCOMO[0]["conversation"]), "qa": list(LOCOMO[0]["qa"])}
    if field == "question":
        record["qa"][0] = {**record["qa"][0], "question": "q" * size}
    else:
        turn = {"speaker": "Ann", "dia_id": "D1:1", "text": "t" * size if field == "text" else "hi " * 3,
                **({"blip_caption": "c" * size} if field == "caption" else {})}
        record["conversation"]["session_1"] = [turn]
    _import(root, dump_json([record]))

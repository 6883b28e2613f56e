"""Fixtures (JSONL lines and whole files), gold files and ``validate_corpus`` on malformed input."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.contract.corpus import iter_fixture, read_gold, validate_corpus
from fuzzkit import FIXTURE_LINES, GOLD, dump_json, fixture_bytes, fuzz, mutated_bytes, mutated_tree, \
    assert_parses_or_located, write_corpus

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("corpus")


def test_the_sample_corpus_is_valid(root):
    fixtures, gold = write_corpus(root / "valid")
    assert validate_corpus(fixtures, gold) == ["fz-1"]


def _validate(root, fixture: bytes | None = None, gold: bytes | None = None):
    fixtures, golds = write_corpus(root, fixture, gold)
    assert_parses_or_located(lambda: validate_corpus(fixtures, golds), fixtures / "fz-1.jsonl", golds / "fz-1.json")


@fuzz(200)
@given(data=st.data(), which=st.integers(0, len(FIXTURE_LINES) - 1))
def test_one_mutated_fixture_line(root, data, which):
    lines = list(FIXTURE_LINES)
    lines[which] = data.draw(mutated_tree(lines[which]))
    path = root / "line.jsonl"
    path.write_bytes(fixture_bytes(lines))
    assert_parses_or_located(lambda: list(iter_fixture(path)), path)
    # The whole-corpus check (markers, evidence, gold) sees the same line.
    _validate(root / "line", fixture=fixture_bytes(lines))


@fuzz(150)
@given(blob=mutated_bytes(fixture_bytes(FIXTURE_LINES)))
def test_mutated_fixture_bytes(root, blob):
    path = root / "bytes.jsonl"
    path.write_bytes(blob)
    assert_parses_or_located(lambda: list(iter_fixture(path)), path)
    _validate(root / "bytes", fixture=blob)


@fuzz(60)
@given(blob=st.binary(max_size=300))
def test_random_bytes_as_fixture(root, blob):
    path = root / "random.jsonl"
    path.write_bytes(blob)
    assert_parses_or_located(lambda: list(iter_fixture(path)), path)


@fuzz(150)
@given(doc=mutated_tree(GOLD))
def test_mutated_gold_tree(root, doc):
    path = root / "gold.json"
    path.write_bytes(dump_json(doc, indent=1))
    assert_parses_or_located(lambda: read_gold(path), path)
    _validate(root / "goldtree", gold=dump_json(doc, indent=1))


@fuzz(100)
@given(blob=mutated_bytes(dump_json(GOLD, indent=1)))
def test_mutated_gold_bytes(root, blob):
    path = root / "goldbytes.json"
    path.write_bytes(blob)
    assert_parses_or_located(lambda: read_gold(path), path)


"""Ids that become parts of paths never leave their folder.

Where ids turn into paths: scenario ids (``scenarios/<id>.yaml`` -> ``fixtures/<id>.jsonl``,
``gold/<id>.json``), fixture and gold ``scenario_id`` (must equal the file's stem),
imported dataset ids (LoCoMo ``sample_id`` -> ``locomo-<id>``; also
``test_fuzz_locomo.py``), an adapter's ``name`` and ``entry`` (adapter.yaml), and
``--adapter NAME`` looked up under ``adapters/``. Run ids (records folders) are made by
the runner itself, never taken from input.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from conformance.backend.manifest import load_manifest
from conformance.contract.corpus import CorpusError, iter_fixture, read_gold
from conformance.contract.fixture import ID_PATTERN
from conformance.importers.locomo import import_locomo, sanitise_id
from conformance.world.scenario import ScenarioError, load_scenario, parse_scenario
from fuzzkit import BAD_IDS, FIXTURE_LINES, GOLD, dump_json, fixture_bytes
from test_fuzz_locomo import LOCOMO

REPO = Path(__file__).resolve().parents[2]
SCENARIO = yaml.safe_load((REPO / "scenarios" / "mp-medium-004.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("bad", BAD_IDS)
def test_scenario_id_cannot_escape(tmp_path, bad):
    with pytest.raises(ScenarioError, match=r": id: "):
        parse_scenario({**SCENARIO, "id": bad}, "x.yaml")
    path = tmp_path / "mp-medium-004.yaml"
    path.write_text(yaml.safe_dump({**SCENARIO, "id": bad}), encoding="utf-8")
    with pytest.raises(ScenarioError, match=r": id: "):
        load_scenario(path)


@pytest.mark.parametrize("bad", BAD_IDS)
def test_fixture_and_gold_scenario_id_cannot_escape(tmp_path, bad):
    path = tmp_path / "fz-1.jsonl"
    path.write_bytes(fixture_bytes([{**FIXTURE_LINES[0], "scenario_id": bad}, *FIXTURE_LINES[1:]]))
    with pytest.raises(CorpusError) as err:
        list(iter_fixture(path))
    assert err.value.line == 1 and err.value.field == "scenario_id"
    gold = tmp_path / "fz-1.json"
    gold.write_bytes(dump_json({**GOLD, "scenario_id": bad}))
    with pytest.raises(CorpusError) as err:
        read_gold(gold)
    assert err.value.field == "scenario_id"


@pytest.mark.parametrize("bad", BAD_IDS + ["ok" * 200, "C:evil"])
def test_sanitised_ids_are_single_safe_file_names(bad):
    for colons in (True, False):
        out = sanitise_id(bad, colons=colons)
        assert re.fullmatch(ID_PATTERN, out) and "/" not in out and "\\" not in out and ".." not in out
        assert out not in (".", "..") and (colons or ":" not in out)


@pytest.mark.parametrize("bad", [*BAD_IDS, "../" * 100 + "etc/passwd", "C:\\Windows\\x", "C:evil"])
def test_locomo_sample_id_stays_in_the_output(tmp_path, bad):
    source = tmp_path / "locomo.json"
    source.write_text(json.dumps([{**LOCOMO[0], "sample_id": bad}]), encoding="utf-8")
    out = tmp_path / "out" / "deeper"
    report = import_locomo(source, out)
    for sid in report.scenarios:
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._\-]{0,95}", sid) and ".." not in sid
    written = {p.resolve() for p in tmp_path.rglob("*") if p.is_file()} - {source.resolve()}
    assert written and all(p.is_relative_to(out.resolve()) for p in written)


def _adapter(tmp_path: Path, **fields) -> Path:
    folder = tmp_path / "adapter"
    folder.mkdir(exist_ok=True)
    (folder / "adapter.py").write_text("")
    (tmp_path / "outside.py").write_text("")
    (folder / "adapter.yaml").write_text(yaml.safe_dump({"name": "fz", "description": "d", **fields}))
    return folder


@pytest.mark.parametrize("entry", ["../outside.py", "/etc/passwd", str(Path(__file__).resolve()), "a\x00b", "",
                                   "sub/../../outside.py", "."])
def test_manifest_entry_stays_in_the_adapter_folder(tmp_path, entry):
    folder = _adapter(tmp_path, entry=entry)
    with pytest.raises(Exception) as err:
        load_manifest(folder)
    assert type(err.value).__name__ == "ManifestError" and "adapter.yaml: entry: " in str(err.value)


@pytest.mark.parametrize("name", ["../x", "/abs", "a/b", "..", ".", "a\x00b", "x" * 65, "", "UP"])
def test_manifest_name_is_a_plain_short_name(tmp_path, name):
    with pytest.raises(Exception) as err:
        load_manifest(_adapter(tmp_path, name=name))
    assert type(err.value).__name__ == "ManifestError" and "adapter.yaml: name: " in str(err.value)


@pytest.mark.parametrize("spec", ["a\x00b", "no-such-adapter.."])
def test_adapter_name_lookup_refuses_odd_names(spec):
    from conformance.backend.systems import AdapterSpecError, plan_adapter

    with pytest.raises(AdapterSpecError):
        plan_adapter(spec)


def test_adapter_name_lookup_refuses_a_very_long_name():
    from conformance.backend.systems import AdapterSpecError, plan_adapter

    with pytest.raises(AdapterSpecError):
        plan_adapter("x" * 5000)


def test_generate_refuses_a_ledger_that_names_files_outside_the_corpus(tmp_path):
    import json
    import subprocess
    import sys

    fixtures, gold = tmp_path / "fixtures", tmp_path / "gold"
    fixtures.mkdir()
    gold.mkdir()
    victim = tmp_path / "victim.json"
    victim.write_text("{}")
    (fixtures / "_ledger.json").write_text(json.dumps({"scenario_list": [{"scenario_id": "../victim"}]}))
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "generate", "--fixtures", str(fixtures),
                           "--gold", str(gold)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "not scenario ids" in proc.stderr and "Traceback" not in proc.stderr
    assert victim.exists()
    (fixtures / "_ledger.json").write_text("{not json")
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "generate", "--fixtures", str(fixtures),
                           "--gold", str(gold)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "not a ledger from `generate`" in proc.stderr

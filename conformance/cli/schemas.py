"""The published JSON Schemas, generated from the pydantic models (never written by hand).

``drift-conformance schema`` writes them into ``schema/``; a test fails when the
committed files differ from what the models generate. Generation sits beside the CLI, the
one layer that may import the models of every other (contract, world, backend, gate); the
receipt's list of versions is :func:`conformance.runner.formats.schema_versions`.

Every schema carries its format's version in ``"x-schema-version"`` (the model's
``*_SCHEMA_VERSION`` constant). A breaking change bumps that constant and adds a
snapshot ``schema/history/<name>.v<version>.json``; ``drift-conformance schema
--check-compat`` compares each schema with its newest snapshot
(:mod:`conformance.contract.compat`).
"""

from __future__ import annotations

import json

from pydantic import TypeAdapter

from conformance.backend.manifest import ADAPTER_SCHEMA_VERSION, AdapterManifest
from conformance.contract.fixture import FIXTURE_SCHEMA_VERSION, FixtureLine
from conformance.contract.gold import GOLD_SCHEMA_VERSION, GoldFile
from conformance.contract.probes import PROBES_SCHEMA_VERSION, ProbeLine
from conformance.contract.records import RECORD_SCHEMA_VERSION, RUN_RECORD
from conformance.contract.result import RESULT_SCHEMA_VERSION, ResultDocument
from conformance.gate.baseline import BASELINE_SCHEMA_VERSION, Baseline
from conformance.world.scenario import SCENARIO_SCHEMA_VERSION, ScenarioSpec

_BASE = "https://drift-conformance.invalid/schema/"
VERSION_KEY = "x-schema-version"


def _finish(schema: dict, name: str, title: str, version: str) -> str:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": _BASE + name, "title": title,
              VERSION_KEY: version, **{k: v for k, v in schema.items() if k != "title"}}
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render_schemas() -> dict[str, str]:
    """File name -> schema text, for every published format."""
    return {
        "fixture-line.schema.json": _finish(TypeAdapter(FixtureLine).json_schema(), "fixture-line.schema.json",
                                            "One line of a fixture file (fixtures/<scenario>.jsonl)",
                                            FIXTURE_SCHEMA_VERSION),
        "gold.schema.json": _finish(GoldFile.model_json_schema(), "gold.schema.json",
                                    "A gold file (gold/<scenario>.json)", GOLD_SCHEMA_VERSION),
        "result.schema.json": _finish(ResultDocument.model_json_schema(), "result.schema.json",
                                      "result.json written by drift-conformance --out", RESULT_SCHEMA_VERSION),
        "scenario.schema.json": _finish(ScenarioSpec.model_json_schema(), "scenario.schema.json",
                                        "A scenario file (scenarios/<id>.yaml), DRIFT §3.1", SCENARIO_SCHEMA_VERSION),
        "adapter.schema.json": _finish(AdapterManifest.model_json_schema(), "adapter.schema.json",
                                       "adapters/<name>/adapter.yaml", ADAPTER_SCHEMA_VERSION),
        "baseline.schema.json": _finish(Baseline.model_json_schema(), "baseline.schema.json",
                                        "baselines/main.json, the CI gate's committed baseline", BASELINE_SCHEMA_VERSION),
        "run-record.schema.json": _finish(RUN_RECORD.json_schema(), "run-record.schema.json",
                                          "One line of a run's records (<records-dir>/<run id>/records.jsonl)",
                                          RECORD_SCHEMA_VERSION),
        "probes.schema.json": _finish(ProbeLine.model_json_schema(), "probes.schema.json",
                                      "One line of probes.jsonl (drift-conformance report RESULT --probes PATH)",
                                      PROBES_SCHEMA_VERSION),
    }


def history_name(schema_file: str, version: str) -> str:
    """``result.schema.json``, ``"1"`` -> ``result.v1.json``: the file name of a history snapshot."""
    return f"{schema_file.removesuffix('.schema.json')}.v{version}.json"

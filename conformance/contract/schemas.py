"""The published JSON Schemas, generated from the pydantic models (never written by hand).

``drift-conformance schema`` writes them into ``schema/``; a test fails when the
committed files differ from what the models generate.
"""

from __future__ import annotations

import json

from pydantic import TypeAdapter

from conformance.backend.manifest import AdapterManifest
from conformance.contract.fixture import FixtureLine
from conformance.contract.gold import GoldFile
from conformance.contract.result import ResultDocument
from conformance.world.scenario import ScenarioSpec

_BASE = "https://drift-conformance.invalid/schema/"


def _finish(schema: dict, name: str, title: str) -> str:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": _BASE + name, "title": title,
              **{k: v for k, v in schema.items() if k != "title"}}
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render_schemas() -> dict[str, str]:
    """File name -> schema text, for every published format."""
    return {
        "fixture-line.schema.json": _finish(TypeAdapter(FixtureLine).json_schema(), "fixture-line.schema.json",
                                            "One line of a fixture file (fixtures/<scenario>.jsonl)"),
        "gold.schema.json": _finish(GoldFile.model_json_schema(), "gold.schema.json",
                                    "A gold file (gold/<scenario>.json)"),
        "result.schema.json": _finish(ResultDocument.model_json_schema(), "result.schema.json",
                                      "result.json written by drift-conformance --out"),
        "scenario.schema.json": _finish(ScenarioSpec.model_json_schema(), "scenario.schema.json",
                                        "A scenario file (scenarios/<id>.yaml), DRIFT §3.1"),
        "adapter.schema.json": _finish(AdapterManifest.model_json_schema(), "adapter.schema.json",
                                       "adapters/<name>/adapter.yaml"),
    }

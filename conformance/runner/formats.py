"""The version of every published format, as a run's receipt records it (``schema:<format>``).

Each version is its model's ``*_SCHEMA_VERSION`` constant; the JSON Schemas themselves are
generated beside the CLI (:mod:`conformance.cli.schemas`), which names the same formats (a
test holds the two lists equal).
"""

from __future__ import annotations

from conformance.backend.manifest import ADAPTER_SCHEMA_VERSION
from conformance.contract.fixture import FIXTURE_SCHEMA_VERSION
from conformance.contract.gold import GOLD_SCHEMA_VERSION
from conformance.contract.probes import PROBES_SCHEMA_VERSION
from conformance.contract.records import RECORD_SCHEMA_VERSION
from conformance.contract.result import RESULT_SCHEMA_VERSION
from conformance.gate.baseline import BASELINE_SCHEMA_VERSION
from conformance.world.scenario import SCENARIO_SCHEMA_VERSION

__all__ = ["schema_versions"]


def schema_versions() -> dict[str, str]:
    """Format name (``result``, ``baseline``, ...) -> its schema_version, for the receipt."""
    return {"fixture-line": FIXTURE_SCHEMA_VERSION, "gold": GOLD_SCHEMA_VERSION, "result": RESULT_SCHEMA_VERSION,
            "scenario": SCENARIO_SCHEMA_VERSION, "adapter": ADAPTER_SCHEMA_VERSION, "baseline": BASELINE_SCHEMA_VERSION,
            "run-record": RECORD_SCHEMA_VERSION, "probes": PROBES_SCHEMA_VERSION}

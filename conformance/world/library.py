"""The deterministic builder of the canonical scenario library (``scenarios/*.yaml``).

``python -m conformance.world.library [DIR]`` (default: the repository's ``scenarios/``)
rewrites every generated YAML; ``ua-baseline-001.yaml`` (the DRIFT §3.1 example) is
written by hand and left alone. The builder uses no randomness beyond a seeded PRNG
per scenario id, so rerunning it gives the same files.

Layout: four paradigms x three horizons (short only; short+medium; short+medium+long),
ids ``<ua|cod|crw|mp>-<horizon>-NNN``. About 15% are ``holdout: true``, chosen by a
SHA-256 of the id (never one of the first three short scenarios of a paradigm: the ``ci``
split and ``ua-short-003``, which the CLI tests run by name); the ``ci`` split is the first two short
scenarios of each paradigm.
"""

from __future__ import annotations

import hashlib
import random
import sys
from pathlib import Path

import yaml

from conformance import paths

COUNTS = {  # paradigm -> horizon -> number of scenarios
    "user_assistant": {"short": 8, "medium": 7, "long": 2},
    "coding_agent": {"short": 6, "medium": 6, "long": 2},
    "crawler_agent": {"short": 6, "medium": 5, "long": 2},
    "multi_peer": {"short": 8, "medium": 6, "long": 2},
}
PREFIX = {"user_assistant": "ua", "coding_agent": "cod", "crawler_agent": "crw", "multi_peer": "mp"}
FAMILIES = {
    "user_assistant": ["recall", "action", "revision"],
    "coding_agent": ["recall", "action", "revision", "frontier", "attribution"],
    "crawler_agent": ["recall", "action", "revision", "frontier"],
    "multi_peer": ["recall", "action", "revision", "multi_peer"],
}
HOLDOUT_PERCENT = 15
CI_PER_PARADIGM = 2


def holdout_ids(ids: list[str], total: int) -> set[str]:
    """The ``HOLDOUT_PERCENT`` share of ``total`` scenarios: the ``ids`` with the smallest SHA-256."""
    want = round(total * HOLDOUT_PERCENT / 100)
    return set(sorted(ids, key=lambda i: hashlib.sha256(i.encode()).hexdigest())[:want])


def _horizon(rng: random.Random, horizon: str) -> tuple[dict, list[int]]:
    if horizon == "short":
        n = rng.choice([24, 30, 36, 45])
        phases = {"short": {"sessions": n, "session_gap_hours": rng.choice([4, 8, 12])}}
        return phases, [n // 3, 2 * n // 3, n]
    short = rng.choice([20, 30])
    if horizon == "medium":
        n = rng.choice([150, 200, 250, 300])
        phases = {"short": {"sessions": short, "session_gap_hours": 8},
                  "medium": {"sessions": n, "session_gap_days": rng.choice([1, 2, 3])}}
        return phases, [short, (short + n) // 2, n]
    medium = rng.choice([150, 200])
    n = 1000
    phases = {"short": {"sessions": short, "session_gap_hours": 8},
              "medium": {"sessions": medium, "session_gap_days": 2},
              "long": {"sessions": n, "session_gap_days": rng.choice([3, 5, 7])}}
    return phases, [short, medium, (medium + n) // 2, n]


def _human(rng: random.Random, entity_id: str) -> dict:
    kinds = ["job_change", "relocation", "relationship_change", "opinion_shift", "habit_form", "diet_change"]
    return {"id": entity_id, "type": "human", "profile": {
        "big_five": {k: round(rng.random(), 2) for k in "OCEAN"},
        "communication_style": {"verbosity": rng.choice(["terse", "chatty"]),
                                "formality": rng.choice(["casual", "formal"])},
        "event_distribution": {k: round(rng.uniform(0.02, 0.2), 2) for k in sorted(rng.sample(kinds, 4))}}}


def _entities_and_topology(rng: random.Random, paradigm: str, n: int, number: int) -> tuple[list, list, str | None]:
    """(entities, topology, principal or None)."""
    if paradigm == "user_assistant":
        return ([_human(rng, "principal"),
                 {"id": "assistant", "type": "assistant_agent",
                  "capability_profile": {"context_window": rng.choice([32000, 128000, 200000]),
                                         "tool_access": sorted(rng.sample(["search", "calendar", "email",
                                                                           "code_interpreter"], 2))}}],
                [{"session_range": [0, -1], "active": ["principal", "assistant"], "pattern": "linear"}], None)
    if paradigm == "coding_agent":
        entities = [_human(rng, "principal"), {"id": "coder", "type": "coding_agent",
                                               "profile": {"language": "python"}}]
        topology = [{"session_range": [0, -1], "active": ["principal", "coder"], "pattern": "linear"}]
        if number % 2 == 0:  # a CI runner joins every session from a third of the way in
            entities.append({"id": "ci-runner", "type": "tool_agent", "profile": {"suite": "unit"}})
            topology.append({"session_range": [n // 3, -1], "active": ["principal", "coder", "ci-runner"],
                             "pattern": "broadcast"})
        return entities, topology, None
    if paradigm == "crawler_agent":
        sites = {"profile": {"objective": "keep an index of public pages"}}
        if number % 2 == 1:  # autonomous pipeline: a scheduler issued the objective
            entities = [{"id": "scheduler", "type": "tool_agent"}, {"id": "crawler", "type": "crawler_agent", **sites}]
            return entities, [{"session_range": [0, -1], "active": ["scheduler", "crawler"], "pattern": "linear"}], \
                "scheduler"
        entities = [_human(rng, "principal"), {"id": "crawler", "type": "crawler_agent", **sites}]
        return entities, [{"session_range": [0, -1], "active": ["principal", "crawler"], "pattern": "linear"}], None
    variant = number % 4
    block = max(3, n // 40)
    if variant == 0:  # two humans share one assistant; joint sessions every third block
        entities = [_human(rng, "dana"), _human(rng, "omar"), {"id": "helper", "type": "assistant_agent"}]
        topology = []
        for k, lo in enumerate(range(0, n, block)):
            active = [["dana", "helper"], ["omar", "helper"], ["dana", "omar", "helper"]][k % 3]
            topology.append({"session_range": [lo, min(n, lo + block) - 1], "active": active,
                             "pattern": "mesh" if len(active) == 3 else "linear"})
        return entities, topology, "dana"
    if variant == 1:  # hierarchical coding team; the third worker joins halfway
        entities = [_human(rng, "lead"), {"id": "orchestrator", "type": "assistant_agent"},
                    {"id": "worker-1", "type": "coding_agent"}, {"id": "worker-2", "type": "coding_agent"},
                    {"id": "worker-3", "type": "coding_agent"}]
        return entities, [
            {"session_range": [0, n // 2 - 1], "active": ["lead", "orchestrator", "worker-1", "worker-2"],
             "pattern": "hierarchical"},
            {"session_range": [n // 2, -1], "active": ["lead", "orchestrator", "worker-1", "worker-2", "worker-3"],
             "pattern": "hierarchical"}], "lead"
    if variant == 2:  # research workflow: human, assistant and crawler in async joint sessions
        entities = [_human(rng, "rosa"), {"id": "helper", "type": "assistant_agent"},
                    {"id": "crawler", "type": "crawler_agent"}]
        return entities, [{"session_range": [0, -1], "active": ["rosa", "helper", "crawler"], "pattern": "async"}], \
            "rosa"
    # fully autonomous pipeline: an orchestrator issued the objective; a tester joins at a third
    entities = [{"id": "orchestrator", "type": "assistant_agent"}, {"id": "builder", "type": "coding_agent"},
                {"id": "tester", "type": "tool_agent"}]
    return entities, [
        {"session_range": [0, n // 3 - 1], "active": ["orchestrator", "builder"], "pattern": "linear"},
        {"session_range": [n // 3, -1], "active": ["orchestrator", "builder", "tester"], "pattern": "mesh"}], \
        "orchestrator"


def scenario_documents() -> list[dict]:
    """Every generated scenario as a plain dict, in id order."""
    docs = []
    for paradigm, horizons in COUNTS.items():
        for horizon, count in horizons.items():
            for number in range(1, count + 1):
                sid = f"{PREFIX[paradigm]}-{horizon}-{number:03d}"
                rng = random.Random(f"drift-library/1:{sid}")
                phases, cps = _horizon(rng, horizon)
                n = max(p["sessions"] for p in phases.values())
                entities, topology, principal = _entities_and_topology(rng, paradigm, n, number)
                families = FAMILIES[paradigm]
                checkpoints = [{"after_session": a, "probe_types": list(families) if k else families[:2]}
                               for k, a in enumerate(cps)]
                ci = horizon == "short" and number <= CI_PER_PARADIGM
                doc = {"id": sid, "paradigm": paradigm,
                       "description": f"{paradigm.replace('_', ' ')} trajectory, {horizon} horizon, variant {number}",
                       "seed": number, "holdout": False, "splits": ["ci"] if ci else [],
                       "noise_ratio": rng.choice([0.6, 0.7, 0.7, 0.75]), "horizon": phases, "entities": entities}
                if principal:
                    doc["principal"] = principal
                doc.update({"topology": topology, "checkpoints": checkpoints})
                docs.append(doc)
    # Never the first three short scenarios of a paradigm: the ci split plus ids the test-suite runs by name.
    eligible = [d["id"] for d in docs if not d["splits"] and not (d["id"].split("-")[1] == "short"
                                                                  and int(d["id"].split("-")[2]) <= 3)]
    chosen = holdout_ids(eligible, len(docs) + 1)  # + 1: the hand-written ua-baseline-001 counts too
    for doc in docs:
        doc["holdout"] = doc["id"] in chosen
    return docs


def write_library(folder: Path) -> list[Path]:
    """Write every generated scenario YAML into ``folder``; returns the paths."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for doc in scenario_documents():
        path = folder / f"{doc['id']}.yaml"
        text = "# Generated by conformance/world/library.py; edit the builder, not this file.\n"
        text += yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=120)
        path.write_text(text, encoding="utf-8", newline="\n")
        out.append(path)
    return out


if __name__ == "__main__":  # pragma: no cover
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else paths.data_root() / "scenarios"
    print(f"wrote {len(write_library(target))} scenarios to {target}")

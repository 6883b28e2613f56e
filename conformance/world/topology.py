"""Session topologies (DRIFT §4.1): who takes part in a session and in which order they speak."""

from __future__ import annotations

import random

from conformance.world.scenario import ScenarioSpec


def session_slot(spec: ScenarioSpec, index: int) -> tuple[list[str], str]:
    """(active entity ids, pattern) for a 0-based session index: the last entry covering it wins."""
    total = spec.sessions
    chosen = None
    for entry in spec.topology:
        start, end = entry.session_range
        end = total - 1 if end == -1 else end
        if start <= index <= end:
            chosen = entry
    assert chosen is not None, "ScenarioSpec validation guarantees coverage"
    return list(chosen.active), chosen.pattern


def participants(rng: random.Random, active: list[str], pattern: str) -> list[str]:
    """Who is present: everyone active, except ``async`` sessions, which gather a subset of at least two."""
    if pattern != "async" or len(active) <= 2:
        return list(active)
    size = rng.randint(2, len(active))
    chosen = set(rng.sample(active, size))
    return [a for a in active if a in chosen]


def speaking_order(rng: random.Random, present: list[str], pattern: str, turns: int) -> list[str]:
    """The author of each turn; every participant speaks at least once.

    linear: A -> B -> A -> ...; broadcast: A, then each other once, A again;
    mesh: rounds in a shuffled order; hierarchical: principal -> orchestrator ->
    workers -> orchestrator -> principal; async: random interleaving.
    """
    if len(present) == 1:
        return present * max(1, turns)
    if pattern == "linear":
        a, b = present[0], present[1]
        order = [a if i % 2 == 0 else b for i in range(max(2, turns))]
        return order + present[2:]
    if pattern == "broadcast":
        return [present[0]] + present[1:] + ([present[0]] if turns > len(present) else [])
    if pattern == "mesh":
        order: list[str] = []
        while len(order) < max(turns, len(present)):
            block = list(present)
            rng.shuffle(block)
            order += block
        return order
    if pattern == "hierarchical":
        head, orchestrator, workers = present[0], present[1], present[2:]
        return [head, orchestrator] + workers + [orchestrator] + ([head] if turns > 3 else [])
    # async
    order = list(present)
    order += [rng.choice(present) for _ in range(max(0, turns - len(present)))]
    rng.shuffle(order)
    return order

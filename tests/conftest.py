"""Test-run scheduling only: no fixtures live here.

With ``--dist loadfile --no-loadscope-reorder`` xdist hands whole files to its workers in
collection order. The files below take a minute or more each (``pytest --durations=0`` on a clean
clone, two workers); collected first, longest first, they start while the many short files fill
the other worker, so the run does not end with one worker alone on a long file.
"""

from __future__ import annotations

SLOW_FIRST = (
    "tests/test_library.py",
    "tests/backend/test_docker.py",
    "tests/adapters/test_mem0_adapter.py",
    "tests/adapters/test_graphiti_adapter.py",
    "tests/runner/test_privacy.py",
    "tests/test_end_to_end.py",
    "tests/runner/test_shards_ci.py",
    "tests/gate/test_gate.py",
    "tests/runner/test_faults_resume.py",
    "tests/gate/test_workflow.py",
    "tests/runner/test_ray.py",
)


def pytest_collection_modifyitems(session, config, items) -> None:
    rank = {path: i for i, path in enumerate(SLOW_FIRST)}
    # Stable: every other file keeps its place, and the tests of a file their order.
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))

"""Test-run scheduling only: no fixtures live here.

With ``--dist loadfile --no-loadscope-reorder`` xdist hands whole files to its workers in
collection order. The files below take half a minute or more each (``pytest --durations=0`` on a clean
clone, two workers); collected first, longest first, they start while the many short files fill
the other worker, so the run does not end with one worker alone on a long file.
"""

from __future__ import annotations

SLOW_FIRST = (  # seconds per file, 2026-12-04 (warm image and venv caches)
    "tests/backend/test_docker.py",  # 160 (an image build when cold: 230 more)
    "tests/adapters/test_mem0_adapter.py",  # 67
    "tests/test_end_to_end.py",  # 63
    "tests/adapters/test_graphiti_adapter.py",  # 53
    "tests/gate/test_gate.py",  # 50
    "tests/runner/test_faults_resume.py",  # 45
    "tests/runner/test_shards_ci.py",  # 43
    "tests/test_library.py",  # 40
    "tests/runner/test_privacy.py",  # 40
    "tests/llm/test_answer_judge.py",  # 36
    "tests/runner/test_audits.py",  # 35
    "tests/gate/test_workflow.py",  # 32
)


def pytest_collection_modifyitems(session, config, items) -> None:
    rank = {path: i for i, path in enumerate(SLOW_FIRST)}
    # Stable: every other file keeps its place, and the tests of a file their order.
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))

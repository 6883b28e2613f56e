"""The committed reference of the ``ci`` split through keyword and the controls, without
what measured time moves (:mod:`timing_fields`).

``tests/test_end_to_end.py`` compares every run of that job with it, so a speed-up cannot
change a score unnoticed. When a change is meant to move scores (a new corpus, a scoring
fix), rebuild the reference from a run of the changed code and commit it with the change:

    drift-conformance --adapter keyword --split ci --out /tmp/ci.json --quiet
    python tests/ci_reference.py /tmp/ci.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing_fields import comparable  # noqa: E402

REFERENCE = Path(__file__).resolve().parent / "data" / "ci_reference_keyword.json"
"""A result of ``drift-conformance --adapter keyword --split ci`` (default bootstrap and seed)."""


def render(result: dict) -> str:
    """The reference text of a result document: :func:`comparable`, sorted keys, one space indents."""
    return json.dumps(comparable(result), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    REFERENCE.write_text(render(json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))), encoding="utf-8")
    print(f"wrote {REFERENCE}")

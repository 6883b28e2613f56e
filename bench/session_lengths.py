"""Print session lengths of a corpus (o200k_base tokens of the messages' texts): median, p90 and mean,
pooled, per paradigm and per tier (issue 17: median >= 400, p90 >= 1,200, alike in every tier).

Run: ``python bench/session_lengths.py [FIXTURES_DIR GOLD_DIR]`` (default: the committed corpus).
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from pathlib import Path

from conformance import paths
from conformance.contract.corpus import fixture_files, iter_fixture, read_gold
from conformance.contract.fixture import HeaderLine, SessionLine
from drift_sdk.tokens import count_tokens


def main() -> None:
    fixtures = Path(sys.argv[1]) if len(sys.argv) > 2 else paths.fixtures_dir()
    gold = Path(sys.argv[2]) if len(sys.argv) > 2 else paths.gold_dir()
    groups: dict[str, list[int]] = defaultdict(list)
    for path in fixture_files(fixtures):
        tiers = read_gold(gold / f"{path.stem}.json").session_tiers
        paradigm = ""
        for line in iter_fixture(path):
            if isinstance(line, HeaderLine):
                paradigm = line.paradigm
            elif isinstance(line, SessionLine):
                n = count_tokens("\n".join(m.text for m in line.messages))
                for key in ("all", f"paradigm {paradigm}", f"tier {tiers[line.session_id]}"):
                    groups[key].append(n)
    for key, values in sorted(groups.items()):
        values.sort()
        print(f"{key:28} sessions {len(values):6}  median {statistics.median(values):6.0f}  "
              f"p90 {values[int(0.9 * len(values))]:6}  mean {sum(values) / len(values):6.0f}")


if __name__ == "__main__":
    main()

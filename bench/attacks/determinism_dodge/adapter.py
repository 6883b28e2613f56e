"""Attack on the CI gate: keyword with a regression (in one scenario, cod-short-002, the top 5
hits are dropped), shipped in the same change as Describe's ``deterministic`` turned to False.
The gate judges a deterministic system item by item (any newly failed gold item fails the
pull request) and a stochastic one by the paired pass-rate interval, which a loss confined to
one of the ci split's 8 scenarios does not push wholly below zero; the gate took the weaker
rule whenever the run's Describe said "not deterministic", whatever the baseline recorded.
Named ``keyword`` so it is gated against baselines/main.json as keyword's own pull request."""

import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _base import KeywordBackend  # noqa: E402

from drift_sdk import serve  # noqa: E402

BROKEN = "cod-short-002"
DROPPED = 5


class DeterminismDodge(KeywordBackend):
    capabilities = replace(KeywordBackend.capabilities, deterministic=False)

    def retrieve(self, namespace, query, k, querying_entity, now):
        hits = super().retrieve(namespace, query, k + DROPPED, querying_entity, now)
        # The regression: in one scenario the best hits are lost (nothing empty: Retrieve still finds things).
        return hits[DROPPED:] if namespace.endswith("/" + BROKEN) else hits[:k]


if __name__ == "__main__":
    serve(DeterminismDodge())

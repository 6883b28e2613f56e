"""Attack: ``seed_replay``, whose uncited messages (items and hits alike) lose every fourth content
word (the longest ones stay), so no hit or item holds 80% of any one message's words while the
reader still gets three quarters of them. Targets selectivity past a quote threshold of 80%."""

import importlib.util
import re
from pathlib import Path

from drift_sdk import Hit, MemoryItem, serve

_spec = importlib.util.spec_from_file_location("seed_replay", Path(__file__).resolve().parents[1] / "seed_replay" / "adapter.py")
_seed = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_seed)
_TOKEN = re.compile(r"\S+")


def trimmed(text: str) -> str:
    """``text`` without every fourth distinct content word (all its occurrences)."""
    terms = list(dict.fromkeys(_seed.content_terms(text)))
    gone = set(terms[1::4])
    return " ".join(t for t in _TOKEN.findall(text)
                    if not (set(_seed.content_terms(t)) & gone))


class SeedTrim(_seed.SeedReplay):
    name = "seed-trim"

    def snapshot(self, namespace):
        return [item if item.source_ids else MemoryItem(item_id=item.item_id, text=trimmed(item.text), source_ids=(),
                                                         timestamp=item.timestamp)
                for item in super().snapshot(namespace)]

    def retrieve(self, namespace, query, k, querying_entity, now):
        return [h if h.source_ids else Hit(text=trimmed(h.text), score=h.score, source_ids=(), timestamp="")
                for h in super().retrieve(namespace, query, k, querying_entity, now)]


if __name__ == "__main__":
    serve(SeedTrim())

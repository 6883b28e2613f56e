"""Attack: drop the public generator's phrasing, dump what is left into one hit.

Knows ``patterns.json`` (every static phrase of the public generator's content parts, slots as
wildcards; ``bench/attacks/make_template_filter.py`` writes it). Store keeps every sentence
(and every line of code or output) that matches none of them; Retrieve returns ONE hit: the
kept sentences the querying entity may see, newest last, cut to about 1,100 o200k_base tokens
from the newest end. No memory skill at all: if it beats the reference compressor, the public
surface, not memory, decides the score.
"""

import json
import re
from pathlib import Path

from drift_sdk import Backend, Capabilities, Hit, MemoryItem, StoreResult, serve
from drift_sdk.tokens import count_tokens

ROOM_TOKENS = 1100
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
PATTERNS = [re.compile(p) for p in json.loads((Path(__file__).with_name("patterns.json")).read_text())["patterns"]]


def public(sentence: str) -> bool:
    return any(p.search(sentence) for p in PATTERNS)


class TemplateFilterBackend(Backend):
    name = "template-filter"
    version = "2"
    capabilities = Capabilities(provenance=True, snapshot=True, scopes=True, flush_signal=True, deterministic=True)

    def __init__(self) -> None:
        self._spaces: dict[str, list] = {}

    def _space(self, namespace):
        if namespace not in self._spaces:
            raise ValueError(f"unknown namespace {namespace!r}: call Reset first")
        return self._spaces[namespace]

    def reset(self, namespace):
        self._spaces[namespace] = []

    def store(self, namespace, session):
        space = self._space(namespace)
        kept = 0
        for m in session.messages:
            left = [s for s in (x.strip() for x in _SPLIT.split(m.text)) if s and not public(s)]
            if left:
                space.append((m.message_id, m.author, m.scope, frozenset(session.participants),
                              m.timestamp or session.time, " ".join(left)))
                kept += 1
        return StoreResult(items_stored=kept)

    def flush(self, namespace, timeout_s):
        self._space(namespace)
        return True

    def retrieve(self, namespace, query, k, querying_entity, now):
        items = [x for x in self._space(namespace) if not querying_entity or x[1] == querying_entity
                 or (x[2] == "shared" and querying_entity in x[3])]
        chosen, used = [], 0
        for item in reversed(items):  # newest first until the room is full
            cost = count_tokens(f"{item[1]}: {item[5]}") + 1
            if used + cost > ROOM_TOKENS:
                break
            chosen.append(item)
            used += cost
        if not chosen or k <= 0:
            return []
        chosen.reverse()  # oldest first inside the hit: the reader takes the option named last
        return [Hit(text="\n".join(f"{x[1]}: {x[5]}" for x in chosen), score=1.0,
                    source_ids=tuple(x[0] for x in chosen), timestamp=chosen[-1][4])]

    def snapshot(self, namespace):
        return [MemoryItem(x[0], f"{x[1]}: {x[5]}", (x[0],), x[4]) for x in self._space(namespace)]


if __name__ == "__main__":
    serve(TemplateFilterBackend())

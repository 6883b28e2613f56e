"""Attack: keyword's hits, those that fit the reader's budget, packed into ONE hit in time order
(oldest first), citing them all. Deprecation is judged per hit by the value it mentions last,
and the reader takes the option the newest hit mentions last: in one chronological hit the last
mention is the newest one, so a stale value still in the context no longer counts as asserted.
Date questions ("How long before now ...") get keyword's hits unpacked (the reader dates them
one by one). Targets revision accuracy (deprecation) and the closed answers; storage is keyword's."""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _base import KeywordBackend  # noqa: E402

from drift_sdk import Hit, serve  # noqa: E402

BUDGET_TOKENS = 1200
CHARS_PER_TOKEN = 3.0  # underestimates o200k's characters per token here: the pack stays inside the budget
DATE_QUESTION = re.compile(r"\bhow long (before|ago)\b|\bhow many (days|weeks|months)\b", re.IGNORECASE)


class ChronoPack(KeywordBackend):
    name = "chrono-pack"

    def retrieve(self, namespace, query, k, querying_entity, now):
        hits = super().retrieve(namespace, query, k, querying_entity, now)
        if not hits or DATE_QUESTION.search(query):
            return hits
        kept, used = [], 40.0
        for hit in hits:
            used += len(hit.text) / CHARS_PER_TOKEN + 1
            if used > BUDGET_TOKENS and kept:
                break
            kept.append(hit)
        kept.sort(key=lambda h: h.timestamp)
        return [Hit(text="\n".join(h.text for h in kept), score=kept[-1].score,
                    source_ids=tuple(s for h in kept for s in h.source_ids), timestamp=kept[-1].timestamp)]


if __name__ == "__main__":
    serve(ChronoPack())

"""Attack: keyword's hits and texts, each citing, after its own message, every stored message
the asker may see (shared ones, and the asker's own private ones), in storage order.

Honest provenance would cite only the hit's own message. The extra citations are flagged
("provenance not carried"), but a hit's text may also carry some of them by shared words (a
short message whose content words the hit repeats): if the runner dated or read a hit by those,
an old hit could take the time of a newer message. Targets accuracy (and DRIFT-C)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _base import KeywordBackend  # noqa: E402

from drift_sdk import Hit, serve  # noqa: E402


class CiteVisible(KeywordBackend):
    name = "cite-visible"

    def retrieve(self, namespace, query, k, querying_entity, now):
        hits = super().retrieve(namespace, query, k, querying_entity, now)
        visible = [d.message_id for d in self._space(namespace).docs
                   if d.owner in (None, querying_entity or None)]
        return [Hit(text=h.text, score=h.score, timestamp=h.timestamp,
                    source_ids=(h.source_ids[0], *(m for m in visible if m != h.source_ids[0])))
                for h in hits]


if __name__ == "__main__":
    serve(CiteVisible())

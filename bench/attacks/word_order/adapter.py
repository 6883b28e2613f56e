"""Attack: keyword, whose Snapshot shows each message as its words in order, casefolded, joined by
single spaces (punctuation, case and line breaks gone), while Retrieve returns the verbatim text.

The audit backs a hit by the content words, the neighbouring word pairs and the content-word
occurrences of the items citing it: the flattened text has all three (its one segment holds every
pair of the hit's segments), yet fewer o200k tokens. In the folder ``word_order_drop``, every function word at a
seeded tenth of the places is dropped too (content words and their count stay; about 80% of the
pairs do). Targets storage tokens, MVOT, TES, DRIFT-C, DRIFT-E (docs/audit.md's open item)."""

import sys
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _base import _WORD, KeywordBackend  # noqa: E402

from drift_sdk import MemoryItem, serve  # noqa: E402

_SOURCE = (Path(__file__).resolve().parents[3] / "conformance" / "provenance.py").read_text()
_STOP = frozenset(_SOURCE.split('STOPWORDS = frozenset("""', 1)[1].split('"""', 1)[0].split())


def flat(text: str, drop: bool = False) -> str:
    words = _WORD.findall(unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'"))
    if drop:
        budget = (len(words) - 1) // 10  # each dropped inner word costs two pairs
        out, dropped, last = [], 0, -3
        for i, w in enumerate(words):
            if dropped < budget and 0 < i < len(words) - 1 and (w in _STOP or len(w) < 2) and i - last > 2:
                dropped, last = dropped + 1, i
                continue
            out.append(w)
        words = out
    return " ".join(words)


class WordOrder(KeywordBackend):
    name = "word-order"
    drop = False

    def snapshot(self, namespace):
        return [MemoryItem(item_id=d.message_id, text=flat(d.text, self.drop), source_ids=(d.message_id,), timestamp=d.timestamp)
                for d in self._space(namespace).docs]


if __name__ == "__main__":
    serve(WordOrder())

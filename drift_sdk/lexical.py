"""A small lexical index for shortcut adapters: IDF-weighted term overlap, no dependency.

``score(doc, query) = sum over distinct query terms t in doc of log(1 + N / df(t))``, terms
being lower-cased words of two or more characters minus English function words
(:data:`drift_sdk.summary.FUNCTION_WORDS`). Ties go to the newer timestamp, then to the later
added document. Built for the shortcut controls (``adapters/shortcut-*``), which must be
cheap and transparent, not good.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field

from drift_sdk.summary import FUNCTION_WORDS

_WORD = re.compile(r"[^\W_]{2,}")


def terms(text: str) -> set[str]:
    """The distinct index terms of ``text``."""
    return {w for w in (m.group(0).casefold() for m in _WORD.finditer(text)) if w not in FUNCTION_WORDS}


@dataclass
class LexicalIndex:
    """Documents ``(key, text, timestamp)`` and their postings; :meth:`search` ranks them."""

    docs: list[tuple[str, str, str]] = field(default_factory=list)
    _postings: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    _alive: list[bool] = field(default_factory=list)

    def add(self, key: str, text: str, timestamp: str) -> int:
        at = len(self.docs)
        self.docs.append((key, text, timestamp))
        self._alive.append(True)
        for t in terms(text):
            self._postings[t].append(at)
        return at

    def remove(self, at: int) -> None:
        self._alive[at] = False

    def search(self, query: str, k: int, allowed=None) -> list[tuple[int, float]]:
        """``(doc position, score)``, best first, at most ``k``; ``allowed(position)`` filters."""
        n = max(1, sum(self._alive))
        scores: dict[int, float] = defaultdict(float)
        for t in terms(query):
            posting = [i for i in self._postings.get(t, ()) if self._alive[i]]
            if not posting:
                continue
            weight = math.log(1 + n / len(posting))
            for i in posting:
                scores[i] += weight
        ranked = sorted((i for i in scores if allowed is None or allowed(i)),
                        key=lambda i: (-scores[i], _neg(self.docs[i][2]), -i))
        return [(i, round(scores[i], 6)) for i in ranked[:max(0, k)]]


def _neg(timestamp: str) -> tuple[int, ...]:
    # Orders newer ISO timestamps first (same-format strings compare lexically).
    return tuple(-ord(c) for c in timestamp)

"""Shared pieces of the attack adapters: the built-in keyword memory, and the harness's word rule.

Each attack subclasses the honest keyword adapter so its answers can be compared with
keyword's; ``terms`` mirrors conformance.provenance.content_terms (unstemmed) so an attack
can build texts the audit will read the way it reads hits.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "adapters" / "keyword"))

from adapter import KeywordBackend  # noqa: E402  (the honest adapter every attack copies)

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_FUNCTION = frozenset("""a an and are as at be but by for from has have he her his i in is it its me my
of on or our she so that the their them they this to was we were what when where which who will with
you your do does did not no yes""".split())


def terms(text: str) -> list[str]:
    """Distinct content-looking words of ``text`` in order (casefolded, possessive dropped)."""
    folded = unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")
    words = (w[:-2] if w.endswith("'s") else w for w in _WORD.findall(folded))
    return list(dict.fromkeys(w for w in words if len(w) >= 2 and w not in _FUNCTION))


def looks_like_audit(query: str) -> bool:
    """The runner's audit and marker probes: no function word, no question mark."""
    words = _WORD.findall(query.casefold())
    return "?" not in query and not any(w in _FUNCTION for w in words)


class RemembersTopHits(KeywordBackend):
    """Keyword, plus the ids (:meth:`hot_key` of each source) of the top 3 hits of every query that
    does not look like the audit's: what an attack guesses is signal."""

    def __init__(self):
        super().__init__()
        self._hot: dict[str, set[str]] = {}

    def reset(self, namespace):
        super().reset(namespace)
        self._hot[namespace] = set()

    @staticmethod
    def hot_key(source_id: str) -> str:
        return source_id

    def remember(self, namespace, query, hits) -> None:
        if not looks_like_audit(query):
            self._hot[namespace].update(self.hot_key(h.source_ids[0]) for h in hits[:3])

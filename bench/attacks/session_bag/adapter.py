"""Attack: keyword's retrieval and hits (citing message ids); the Snapshot is one item per
session, citing only the session id, whose text is the session's content words, each stem once in its shortest surface
form, less the longest words each message can spare (82% of every message's stems kept). A hit's message id is backed by the items citing it,
else by those citing its session, and that session's item holds the message's words and more
than its size in content-word occurrences (a session's vocabulary outsizes any one message of
it). Every message of the session is carried by the bag (it holds all their words), so
selectivity and the failure causes see every session stored. Targets storage tokens, MVOT's
efficiency term, TES, DRIFT-C, DRIFT-E; answers are keyword's."""

import sys
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _base import _WORD, KeywordBackend  # noqa: E402

from drift_sdk import MemoryItem, serve  # noqa: E402
import Stemmer  # noqa: E402  (PyStemmer's english is the Snowball english stemmer the harness uses)

_STEM = Stemmer.Stemmer("english")
# The harness's function-word list (public source), so the bag counts the words the audit counts.
_SOURCE = (Path(__file__).resolve().parents[3] / "conformance" / "provenance.py").read_text()
_STOP = frozenset(_SOURCE.split('STOPWORDS = frozenset("""', 1)[1].split('"""', 1)[0].split())


def terms(text: str) -> list[str]:
    """conformance.provenance.content_terms, unstemmed."""
    folded = unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")
    words = (w[:-2] if w.endswith("'s") else w for w in _WORD.findall(folded))
    return [w for w in words if len(w) >= 2 and w not in _STOP]


KEEP = 0.82
"""Share of each message's distinct stems the bag keeps (the audit asks 80% of a hit's)."""


def bag(texts: list[str]) -> str:
    """The cheapest text whose stems cover KEEP of every message's and whose size outruns each."""
    per = [[_STEM.stemWord(w) for w in terms(t)] for t in texts]
    surface: dict[str, str] = {}
    for t in texts:
        for w in terms(t):
            s = _STEM.stemWord(w)
            if s not in surface or len(w) < len(surface[s]):
                surface[s] = w
    need = [KEEP * len(set(p)) for p in per]
    floor = 0.8 * max((len(p) for p in per), default=0) + 1
    kept = set(surface)
    # Drop the longest words first (a long word is more tokens) while every message keeps KEEP.
    for s in sorted(surface, key=lambda s: -len(surface[s])):
        if len(kept) - 1 < floor:
            break
        if all(len((kept - {s}) & set(p)) >= n for p, n in zip(per, need)):
            kept.discard(s)
    return " ".join(surface[s] for s in surface if s in kept)


class SessionBag(KeywordBackend):
    name = "session-bag"

    def __init__(self):
        super().__init__()
        self._sessions: dict[str, list[tuple[str, str, str]]] = {}

    def reset(self, namespace):
        super().reset(namespace)
        self._sessions[namespace] = []

    def store(self, namespace, session):
        out = super().store(namespace, session)
        text = bag([f"{m.author}: {m.text}" for m in session.messages])
        self._sessions[namespace].append((session.session_id, text, session.time))
        return out

    def snapshot(self, namespace):
        return [MemoryItem(item_id=f"bag-{sid}", text=text, source_ids=(sid,), timestamp=time)
                for sid, text, time in self._sessions[namespace]]


if __name__ == "__main__":
    serve(SessionBag())

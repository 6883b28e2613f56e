"""Answer-text rules: how an answer or passage is normalised, and how it names a phrase or an option.

One module for the rules the generator (:mod:`conformance.world`), the importers, the
hermetic reader (:mod:`conformance.answer.reader`), the judge and scoring share, so that an
answer the generator checks is named by a message is named by it for the reader and the
scorer too.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["normalize_answer", "contains_phrase", "option_pattern", "last_option_in"]

_SPACE = re.compile(r"\s+")


def _strip_punctuation(token: str) -> str:
    # Unicode category P* only: symbols such as "+" in "C++" or "$" stay meaningful.
    start, end = 0, len(token)
    while start < end and unicodedata.category(token[start]).startswith("P"):
        start += 1
    while end > start and unicodedata.category(token[end - 1]).startswith("P"):
        end -= 1
    return token[start:end]


def normalize_answer(text: str) -> str:
    """Canonical form of an answer or passage for exact comparison.

    NFKC, casefold, then per whitespace-separated token drop leading and trailing
    punctuation (Unicode category P*), so punctuation *inside* a word survives
    ("don't", "e-mail", "3.5"), and join the non-empty tokens with single spaces.
    ``normalize_answer("  Lisbon. ") == "lisbon"``.
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    tokens = (_strip_punctuation(tok) for tok in _SPACE.split(folded))
    return " ".join(tok for tok in tokens if tok)


def contains_phrase(text: str, phrase: str) -> bool:
    """True when ``phrase`` occurs in ``text`` as a whole word or word sequence.

    Both sides go through :func:`normalize_answer`, then the phrase's tokens must be a
    contiguous run of the text's tokens: "Lisbon" matches "I moved to Lisbon." but not
    "Lisbonite" nor "Lisbon's" (punctuation inside a word keeps it one word). An empty
    phrase matches nothing.
    """
    needle = normalize_answer(phrase)
    if not needle:
        return False
    return f" {needle} " in f" {normalize_answer(text)} "


def option_pattern(option: str) -> re.Pattern[str]:
    """``option`` as a whole word or phrase, case-insensitive: "Rome" never matches inside "Romeo"."""
    return re.compile(r"(?<!\w)" + re.escape(option) + r"(?!\w)", re.IGNORECASE)


def last_option_in(text: str, options: list[str]) -> str | None:
    """The option whose last mention ends latest in ``text``; None if none is named."""
    best, best_pos = None, -1
    for option in options:
        for match in option_pattern(option).finditer(text):
            if match.end() > best_pos:
                best, best_pos = option, match.end()
    return best

"""Template helpers of the synthesizer: filling a line, articles, prefixes and tails.

Corpus 2.x keeps no filler-string bank: the parts every session is made of live in
:mod:`conformance.world.content` (composed, faker-filled); entity-specific lines live with
their entity type (:mod:`conformance.world.entities`).
"""

from __future__ import annotations

import re

_ARTICLE = re.compile(r"(?<![\w'])([Aa]) \{(\w+)\}")
_VOWEL_SOUND = re.compile(r"^(?:[aeiou](?!ni[ct]|ser|su|ro|k|ne\b)|hour|honest)", re.IGNORECASE)


def fill(template: str, **values: str) -> str:
    """``template.format(**values)`` with "a {x}" turned into "an {x}" before a vowel sound."""

    def article(match: re.Match) -> str:
        value = str(values.get(match.group(2), ""))
        word = match.group(1) + ("n" if _VOWEL_SOUND.match(value) else "")
        return f"{word} {{{match.group(2)}}}"
    return _ARTICLE.sub(article, template).format(**values)


_CAPITAL_KEEP = re.compile(r"^(?:I\b|I'|[A-Z][\w'-]*[A-Z0-9])")


def join_prefix(prefix: str, text: str, keep: frozenset[str] = frozenset()) -> str:
    """A greeting prefix before ``text``: after "hey, " or "quick one: " the first letter is lower-cased
    unless it starts "I", an acronym, or a word of ``keep`` (names and values)."""
    if not prefix or not text or prefix.rstrip()[-1:] not in ",:" or not text[0].isupper():
        return prefix + text
    first = re.match(r"[\w'-]+", text)
    if _CAPITAL_KEEP.match(text) or (first and any(text.startswith(k) for k in keep if k[:1].isupper())):
        return prefix + text
    return prefix + text[0].lower() + text[1:]


def add_tail(text: str, tail: str) -> str:
    """``text`` followed by a chatty tail, with a full stop in between when ``text`` has none."""
    text = text.rstrip()
    if text and text[-1] not in ".!?)\"'":
        text += "."
    return f"{text} {tail}"

"""A crude fake "answer model and judge" for the local fake Messages API (shared by the
importer end-to-end tests and ``bench/answer_judge_fake.py``).

:func:`excerpt_responder` answers a question with the first words of the top excerpt it is
shown ("unknown" without one), and judges a candidate CORRECT when it holds every word of a
reference (articles aside). It exercises the plumbing, not a model's quality.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from conformance.llm.judge import JUDGE_SYSTEM_PROMPT


def excerpt_responder(words: int) -> Callable[[dict], str]:
    """A FakeAnthropic responder answering with at most ``words`` words of the top excerpt."""
    def responder(request: dict) -> str:
        text = request["messages"][0]["content"]
        if request.get("system") == JUDGE_SYSTEM_PROMPT:
            reference = re.search(r"Reference answer: (.*)", text)[1].lower()
            candidate = re.search(r"Candidate answer: (.*)", text)[1].lower()
            needed = [w for w in re.findall(r"\w+", reference) if w not in ("a", "an", "the")]
            return "CORRECT" if needed and all(w in candidate for w in needed) else "INCORRECT"
        first = re.search(r"^\[1\] \([^)]*\) (.*)$", text, flags=re.MULTILINE)
        return " ".join(first[1].split()[:words]) if first else "unknown"
    return responder

"""Attack: keyword, whose Store replies report a negative LLM token count (Usage is int64 and
nothing checks its sign): about 85% of the session's own stored tokens (estimated at 4.13
characters a token, this corpus's o200k ratio). Token cost TC = W + S + R per session then
comes to about 15% of the stored tokens, so TES and DRIFT-E rise; storage, MVOT and answers
are keyword's. Targets token_cost_per_session, TES, DRIFT-E."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _base import KeywordBackend  # noqa: E402

from drift_sdk import StoreResult, Usage, serve  # noqa: E402

CHARS_PER_TOKEN = 4.13
REFUND = 0.85


class NegativeUsage(KeywordBackend):
    name = "negative-usage"

    def store(self, namespace, session):
        result = super().store(namespace, session)
        chars = sum(len(f"{m.author}: {m.text}") for m in session.messages)
        return StoreResult(items_stored=result.items_stored,
                           usage=Usage(input_tokens=-round(REFUND * chars / CHARS_PER_TOKEN)))


if __name__ == "__main__":
    serve(NegativeUsage())

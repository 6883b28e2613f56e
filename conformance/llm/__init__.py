"""The opt-in LLM path (issue 8): an Anthropic client with pinned model ids, streaming and time
to first token, bounded retries, a response cache and a spend budget.

The client's code lives in :mod:`drift_sdk.llm` (adapters can import only the SDK, and the
reference compressor's LLM form uses the same client); ``conformance.llm.<name>`` for budget,
cache, client, errors, models and prices is that very module. Importing this package makes
every LLM error a :class:`conformance.errors.DriftError` (see :mod:`conformance.llm.errors`).

Importing this package does not import ``anthropic`` (an optional extra: ``pip install
'drift-conformance[llm]'``); :class:`AnthropicClient` imports it when constructed.
"""

from conformance.llm.errors import (BudgetSpent, LLMCacheWarning, LLMConfigError, LLMError, LLMRateLimited,
                                    LLMRequestError, LLMUnavailable)
from conformance.llm.budget import Budget, Charge
from conformance.llm.cache import ResponseCache, cache_key
from conformance.llm.client import AnthropicClient, LLMResponse, client_from_env
from conformance.llm.models import is_dated, model_family, pinned_model
from conformance.llm.prices import PRICES, PRICES_CHECKED, Price, price_for

__all__ = ["AnthropicClient", "Budget", "BudgetSpent", "Charge", "LLMCacheWarning", "LLMConfigError", "LLMError",
           "LLMRateLimited", "LLMRequestError", "LLMResponse", "LLMUnavailable", "PRICES", "PRICES_CHECKED", "Price",
           "ResponseCache", "cache_key", "client_from_env", "is_dated", "model_family", "pinned_model", "price_for"]

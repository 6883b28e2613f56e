"""The opt-in LLM path (issue 8): an Anthropic client with pinned model ids, streaming and time
to first token, bounded retries, a response cache and a spend budget.

Importing this package does not import ``anthropic`` (an optional extra: ``pip install
'drift-conformance[llm]'``); :class:`AnthropicClient` imports it when constructed.
"""

from conformance.llm.budget import Budget, Charge
from conformance.llm.cache import ResponseCache, cache_key
from conformance.llm.client import AnthropicClient, LLMResponse, client_from_env
from conformance.llm.errors import (BudgetSpent, LLMCacheWarning, LLMConfigError, LLMError, LLMRateLimited,
                                    LLMRequestError, LLMUnavailable)
from conformance.llm.models import is_dated, model_family, pinned_model
from conformance.llm.prices import PRICES, PRICES_CHECKED, Price, price_for

__all__ = ["AnthropicClient", "Budget", "BudgetSpent", "Charge", "LLMCacheWarning", "LLMConfigError", "LLMError",
           "LLMRateLimited", "LLMRequestError", "LLMResponse", "LLMUnavailable", "PRICES", "PRICES_CHECKED", "Price",
           "ResponseCache", "cache_key", "client_from_env", "is_dated", "model_family", "pinned_model", "price_for"]

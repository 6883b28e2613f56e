"""An Anthropic Messages API client with pinned model ids, streaming and time to first token,
bounded retries, a response cache and a spend budget: the one LLM client of drift-conformance.

It lives in the SDK so that an adapter runtime (which can import only ``drift_sdk``; the
reference compressor's LLM form uses it) and the runner (answer model, judge, transcript
synthesizer: they import it from here) share the same code. Standard library only;
``anthropic`` is imported when an :class:`AnthropicClient` is constructed.
"""

from drift_sdk.llm.budget import Budget, Charge
from drift_sdk.llm.cache import ResponseCache, cache_key
from drift_sdk.llm.client import AnthropicClient, LLMResponse, client_from_env
from drift_sdk.llm.errors import (BudgetSpent, LLMCacheWarning, LLMConfigError, LLMError, LLMRateLimited,
                                  LLMRequestError, LLMUnavailable)
from drift_sdk.llm.models import is_dated, model_family, pinned_model
from drift_sdk.llm.prices import PRICES, PRICES_CHECKED, Price, price_for

__all__ = ["AnthropicClient", "Budget", "BudgetSpent", "Charge", "LLMCacheWarning", "LLMConfigError", "LLMError",
           "LLMRateLimited", "LLMRequestError", "LLMResponse", "LLMUnavailable", "PRICES", "PRICES_CHECKED", "Price",
           "ResponseCache", "cache_key", "client_from_env", "is_dated", "model_family", "pinned_model", "price_for"]

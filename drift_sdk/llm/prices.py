"""List prices per model family, and the cost of one call in USD (exact, :class:`~decimal.Decimal`).

Prices are USD per million tokens (MTok), base input and output, standard (not batch, not
prompt-caching) rates. Long-context surcharges (Sonnet 4 / 4.5 above 200K input tokens) are not
modelled: the answer model sees a budgeted context of about a thousand tokens.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from drift_sdk.llm.errors import LLMConfigError
from drift_sdk.llm.models import model_family

MTOK = Decimal(1_000_000)


def _usd(value, what: str) -> Decimal:
    try:
        usd = Decimal(str(value))
    except Exception:  # noqa: BLE001 - decimal raises several types
        raise LLMConfigError(f"{what} must be a number of USD, got {value!r}") from None
    if not usd.is_finite() or usd < 0:
        raise LLMConfigError(f"{what} must be a finite, non-negative number of USD, got {value!r}")
    return usd


@dataclass(frozen=True)
class Price:
    """USD per million input tokens and per million output tokens (any number; kept as Decimal)."""

    input_usd_per_mtok: Decimal
    output_usd_per_mtok: Decimal

    def __post_init__(self):
        object.__setattr__(self, "input_usd_per_mtok", _usd(self.input_usd_per_mtok, "input price per MTok"))
        object.__setattr__(self, "output_usd_per_mtok", _usd(self.output_usd_per_mtok, "output price per MTok"))

    def cost_usd(self, input_tokens: int, output_tokens: int) -> Decimal:
        """Exact USD of ``input_tokens`` and ``output_tokens`` at this price."""
        if input_tokens < 0 or output_tokens < 0:
            raise ValueError(f"token counts must be non-negative, got {input_tokens}, {output_tokens}")
        return (Decimal(input_tokens) * self.input_usd_per_mtok
                + Decimal(output_tokens) * self.output_usd_per_mtok) / MTOK


#: When the table below was last checked against its sources.
PRICES_CHECKED = "2026-11-29"

#: List prices per model family (the model id without its ``-YYYYMMDD`` date), USD per MTok
#: (input, output). Checked on 2026-11-29 against Anthropic's published prices:
#: https://docs.anthropic.com/en/docs/about-claude/pricing (Claude 3 to Claude 4.1 rows) and the
#: model pages https://platform.claude.com/docs/en/models/<model>/overview (Claude Haiku 4.5,
#: Sonnet 4.5, Opus 4.5, Sonnet 5, Opus 5, Opus 5.5). Prices change: check before a paid run,
#: and pass ``price=`` for a model that is missing or whose price moved.
PRICES: dict[str, Price] = {
    "claude-opus-5-5": Price("4", "20"),
    "claude-opus-5": Price("5", "25"),
    "claude-sonnet-5": Price("2", "10"),
    "claude-opus-4-5": Price("5", "25"),
    "claude-sonnet-4-5": Price("3", "15"),
    "claude-haiku-4-5": Price("1", "5"),
    "claude-opus-4-1": Price("15", "75"),
    "claude-opus-4": Price("15", "75"),
    "claude-sonnet-4": Price("3", "15"),
    "claude-3-7-sonnet": Price("3", "15"),
    "claude-3-5-sonnet": Price("3", "15"),
    "claude-3-5-haiku": Price("0.80", "4"),
    "claude-3-opus": Price("15", "75"),
    "claude-3-haiku": Price("0.25", "1.25"),
}


def price_for(model_id: str, price: Price | None = None, table: Mapping[str, Price] = PRICES) -> Price:
    """The price of ``model_id``: ``price`` when given, else its family's row in ``table``.

    Raises:
        LLMConfigError: the model's family is not in the table and no price was given.
    """
    if price is not None:
        return price
    family = model_family(model_id)
    if family in table:
        return table[family]
    raise LLMConfigError(
        f"no list price is known for model {model_id!r}: its family {family!r} has no entry in the dated price "
        f"table (PRICES in drift_sdk/llm/prices.py, checked {PRICES_CHECKED}; listed families: "
        f"{', '.join(sorted(table))}), so its spend cannot be counted against the budget. Use a pinned (dated) "
        "id of a listed family, e.g. 'claude-haiku-4-5-20251001', or extend the table with the model's list price "
        "in USD per million input and output tokens")

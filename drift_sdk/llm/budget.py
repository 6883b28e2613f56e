"""Spend control: a USD budget and the ledger of every call charged to it."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from decimal import Decimal

from drift_sdk.llm.errors import BudgetSpent
from drift_sdk.llm.prices import _usd


@dataclass(frozen=True)
class Charge:
    """One call on the ledger: the model asked for, tokens, exact cost in USD (0 for a cache hit)."""

    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: Decimal
    cached: bool
    role: str = ""
    """Who made the call (``answer``, ``judge``, ...; the client's :attr:`role`)."""

    def to_record(self) -> dict:
        """JSON-safe: cost as a float of USD."""
        return {"model": self.model, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cost_usd": float(self.cost_usd), "cached": self.cached, "role": self.role}


class Budget:
    """A spend limit in USD (``None``: unlimited, still counted) and the ledger of charges.

    A call may start while ``spent_usd < limit_usd``; :meth:`ensure_available` raises
    :class:`BudgetSpent` once it is not. The check is made before a call and the cost is known
    only after it, so the last call may overshoot the limit by its own cost (times the number
    of calls in flight, when calls run in threads). Cache hits cost 0 and are never refused.
    Thread-safe.

    Raises:
        LLMConfigError: ``usd`` is negative or not a number.
    """

    def __init__(self, usd: float | int | str | Decimal | None):
        self.limit_usd: Decimal | None = None if usd is None else _usd(usd, "the budget")
        self.spent_usd = Decimal(0)
        self.prior_usd = Decimal(0)
        """USD spent by earlier invocations of the same run (:meth:`carry`), part of ``spent_usd``."""
        self.charges: list[Charge] = []
        self.on_charge = None
        """Called with each :class:`Charge` of a call really made (not a cache hit), under the
        budget's lock, as soon as it is charged: a run's spend ledger appends it to disk, so a
        killed run loses no record of what it paid for."""
        self._lock = threading.Lock()

    def carry(self, usd: float | int | str | Decimal) -> None:
        """Count ``usd`` already spent by earlier invocations of the same run (``--resume``)
        against the limit, so a resumed run cannot spend the budget again."""
        amount = _usd(usd, "the spend carried over")
        with self._lock:
            self.prior_usd += amount
            self.spent_usd += amount

    @property
    def remaining_usd(self) -> Decimal | None:
        """USD left (never negative), or None when unlimited."""
        if self.limit_usd is None:
            return None
        return max(Decimal(0), self.limit_usd - self.spent_usd)

    @property
    def spent(self) -> bool:
        """True once no new uncached call may start."""
        return self.limit_usd is not None and self.spent_usd >= self.limit_usd

    def ensure_available(self, model: str = "") -> None:
        """Return when a new (uncached) call may start.

        Raises:
            BudgetSpent: the spend so far has reached the limit.
        """
        with self._lock:
            if self.spent:
                what = f" before a call to {model}" if model else ""
                made = sum(1 for c in self.charges if not c.cached)
                earlier = f", ${self.prior_usd:.6f} of it by earlier invocations of this run" if self.prior_usd else ""
                raise BudgetSpent(f"the spend budget of ${self.limit_usd} USD is used up (${self.spent_usd:.6f} spent{earlier}; "
                                  f"{made} calls made here){what}; the run stops here and is incomplete. "
                                  "Raise --budget-usd, or rerun: cached answers cost nothing.",
                                  spent_usd=self.spent_usd, limit_usd=self.limit_usd)

    def charge(self, model: str, input_tokens: int, output_tokens: int, cost_usd: Decimal,
               cached: bool = False, role: str = "") -> Charge:
        """Record one call (a cache hit with cost 0) and add its cost to the spend."""
        item = Charge(model, int(input_tokens), int(output_tokens), Decimal(0) if cached else Decimal(cost_usd), cached,
                      role)
        with self._lock:
            self.charges.append(item)
            self.spent_usd += item.cost_usd
            if not cached and self.on_charge is not None:
                self.on_charge(item)
        return item

    def summary(self) -> dict:
        """JSON-safe totals: limit, spent (earlier invocations carried over included) and remaining
        USD (floats; None when unlimited), ``prior_usd``, calls made and served from cache, input
        and output tokens of the calls made."""
        with self._lock:
            made = [c for c in self.charges if not c.cached]
            remaining = self.remaining_usd
            return {"limit_usd": None if self.limit_usd is None else float(self.limit_usd),
                    "spent_usd": float(self.spent_usd), "prior_usd": float(self.prior_usd),
                    "remaining_usd": None if remaining is None else float(remaining),
                    "calls": len(made), "cached_calls": len(self.charges) - len(made),
                    "input_tokens": sum(c.input_tokens for c in made),
                    "output_tokens": sum(c.output_tokens for c in made),
                    "exhausted": self.spent}

    def __repr__(self) -> str:
        return f"Budget(limit_usd={self.limit_usd}, spent_usd={self.spent_usd}, calls={len(self.charges)})"

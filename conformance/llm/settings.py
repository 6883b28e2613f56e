"""The opt-in LLM path of a run: answer model, judge, one spend budget, one response cache.

Built once from the command line (:func:`llm_settings`) and handed to
:func:`conformance.runner.job.run_job`. Everything is checked before a memory system
starts: pinned model ids (an alias needs ``allow_alias``), a price for each model, the
``anthropic`` package and ``ANTHROPIC_API_KEY``. Clients are made per replicate so each
replicate keeps its own response cache (:func:`conformance.llm.answer.replicate_cache`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from drift_sdk.llm.budget import Budget
from drift_sdk.llm.client import AnthropicClient
from drift_sdk.llm.errors import LLMConfigError

from conformance.llm.answer import DEFAULT_ANSWER_MAX_TOKENS, AnswerModel, replicate_cache
from conformance.llm.judge import JudgeModel

__all__ = ["LLMSettings", "llm_settings"]


@dataclass
class LLMSettings:
    """``answer``/``judge``: None when not asked for; ``budget``: shared by both (USD)."""

    answer: AnswerModel | None
    judge: JudgeModel | None
    budget: Budget
    cache_root: Path
    base_url: str = ""
    notes: list[str] = field(default_factory=list)
    """Receipt notes."""
    warnings: list[str] = field(default_factory=list)
    """Shown to the user before the run starts (e.g. no key: cached answers only)."""

    def binding(self) -> dict:
        """What a resumed run must share (the judge runs after streaming, so it may change)."""
        if self.answer is None:
            return {}
        info = self.answer.describe()
        return {"answer_model": info["model"], "answer_prompt_sha256": info["prompt_sha256"],
                "answer_max_tokens": info["max_tokens"]}

    def describe(self) -> dict:
        """Receipt config entries: ``answer_model``, ``judge_model`` (prompt text and hash
        included), ``llm_cache``, ``llm_endpoint``, ``budget_usd``."""
        return {"answer_model": None if self.answer is None else self.answer.describe(),
                "judge_model": None if self.judge is None else self.judge.describe(),
                "llm_cache": str(self.cache_root), "llm_endpoint": self.base_url,
                "budget_usd": None if self.budget.limit_usd is None else float(self.budget.limit_usd)}


def llm_settings(answer_model: str | None, judge_model: str | None, *, allow_alias: bool = False,
                 budget_usd: float | None = None, cache_dir: str | os.PathLike, answer_max_tokens: int =
                 DEFAULT_ANSWER_MAX_TOKENS, environ: Mapping[str, str] | None = None,
                 max_retries: int = 4) -> LLMSettings | None:
    """The run's LLM settings, or None when neither model is asked for.

    Without ``ANTHROPIC_API_KEY`` the run serves answers from the response cache only (a
    published run repeated from its cache needs no key): :attr:`LLMSettings.warnings` says so,
    and the first cache miss stops the run cleanly.

    Raises:
        LLMConfigError: a judge without an answer model, an alias model id, a model without
            a price, a negative budget, ``anthropic`` not installed.
    """
    if answer_model is None and judge_model is None:
        if budget_usd is not None:
            raise LLMConfigError("--budget-usd limits the answer model and judge; give --answer-model too")
        return None
    if answer_model is None:
        raise LLMConfigError("--judge-model grades the answer model's free-form answers; give --answer-model "
                             "too (the hermetic reader answers closed probes only, graded by exact match)")
    budget = Budget(budget_usd)
    root = Path(cache_dir)

    def maker(model: str, role: str):
        # The judge's own wording for its errors (the answer model's default names --answer-model).
        purpose = None if role == "answer" else "the judge model (--judge-model; leave it off to grade by exact match)"

        def client_for(replicate: int) -> AnthropicClient:
            client = AnthropicClient(model, allow_alias=allow_alias, cache=replicate_cache(root, replicate),
                                     budget=budget, environ=environ, max_retries=max_retries,
                                     cache_only_without_key=True, purpose=purpose)
            client.role = role
            return client
        return client_for

    answer = AnswerModel(model=answer_model, client_for=maker(answer_model, "answer"), max_tokens=answer_max_tokens)
    first = answer.client(1)  # checks id, price, package and key now, before any system starts
    answer.model = first.model
    judge = None
    if judge_model is not None:
        judge = JudgeModel(model=judge_model, client_for=maker(judge_model, "judge"))
        judge.model = judge.client(1).model
    notes = []
    warnings = []
    if first.keyless:
        warnings.append(f"ANTHROPIC_API_KEY is not set: only answers already in the response cache {root} can be "
                        "used; the first call not found there stops the run (incomplete, exit 2; --resume continues "
                        "once a key is set)")
        notes.append("run without an API key: every answer and verdict came from the response cache")
    if judge is not None and judge.model == answer.model:
        notes.append("the judge model is the answer model: a model grading its own answers may share their blind "
                     "spots (guide §6); prefer another model")
    return LLMSettings(answer=answer, judge=judge, budget=budget, cache_root=root, base_url=first.endpoint,
                       notes=notes, warnings=warnings)

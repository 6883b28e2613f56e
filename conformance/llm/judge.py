"""Grading answers: normalised exact match first, then a blinded LLM judge (guide §6).

:func:`grade_records` decides every probe record's correctness, in this order:

1. No answer (a failed probe, or the hermetic reader's free-form null): not graded here.
2. The normalised answer equals the gold answer or an accepted variant
   (:func:`conformance.contract.answer_text.normalize_answer`): correct, method ``exact``.
3. A closed probe (options or choices) that does not match: wrong, ``exact`` (the
   answer domain is closed; no judge needed).
4. The answer declines (:func:`declines`: "unknown", "I don't know", "not mentioned", ...):
   correct exactly when the gold is an abstention, method ``declined``.
5. Otherwise the judge model grades it (``judge``); without a judge model the answer
   counts as wrong by exact match (``exact``; the receipt says exact match only).

The judge sees only the question, the gold answer (or, for abstention gold, that the
conversation never says) and the candidate, never the system name, the context or other
answers. Items are deduplicated by content and replicate, and the items of all systems are
shuffled together with the run's seed before any call, so the judge's drift over a run
favours no system. A verdict that is not CORRECT or INCORRECT counts as wrong and is counted
(``judge_unparseable``). Judgments are appended to ``judgments.jsonl`` beside the records as
they come back (nothing is lost when the budget runs out); the audit samples from there.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from drift_sdk.llm.errors import LLMError

from conformance.contract.answer_text import normalize_answer
from conformance.llm.answer import PerReplicate, prompt_sha256
from conformance.paths import write_atomic

__all__ = ["JUDGE_SYSTEM_PROMPT", "JudgeModel", "JudgeItem", "declines", "parse_verdict", "judge_key",
           "grade_records", "JUDGMENTS_FILE", "GRADES_FILE", "ABSTENTION_REFERENCE"]

JUDGMENTS_FILE = "judgments.jsonl"
GRADES_FILE = "grades.jsonl"
"""One line per graded probe record (system, scenario, probe, replicate, method, verdict): the
audit's mapping back from a blinded item to the system that answered."""
JUDGE_MAX_TOKENS = 8

JUDGE_SYSTEM_PROMPT = """\
You grade one candidate answer to a question against the reference answer. Be strict.
CORRECT: the candidate states the same fact as the reference. Paraphrase, another date or \
number format, or extra words that do not change or contradict the fact are fine.
INCORRECT: the candidate states a different or contradicting fact, is vaguer so that the \
fact is lost, lists several alternatives, hedges, or declines to answer.
If the reference is a rubric, the candidate is CORRECT only if it meets every point of it.
If the reference says the conversation never gives the answer, the candidate is CORRECT only \
if it declines to answer or says the information is not available; any concrete answer is \
INCORRECT.
Reply with one word: CORRECT or INCORRECT."""

ABSTENTION_REFERENCE = "(the conversation never says; the right answer is to decline)"

_DECLINE = re.compile(
    r"^(unknown|i don'?t know|i do not know|not known|not mentioned|never mentioned|not stated|not specified|"
    r"no information|not available|unanswerable|cannot be determined|can'?t be determined|"
    r"the (excerpts|context|memory) do(es)? not (say|mention|contain|specify))\b")


def declines(answer: str) -> bool:
    """True when ``answer`` declines to answer (normalised; the phrase must open the answer)."""
    return bool(_DECLINE.match(normalize_answer(answer).replace("’", "'")))


def parse_verdict(text: str) -> bool | None:
    """True for CORRECT, False for INCORRECT, None for anything else.

    The whole reply must be that one word (any case; surrounding whitespace, markdown emphasis,
    quotes and end punctuation aside): "CORRECT or INCORRECT", "The answer is CORRECT" or
    "INCORRECT because ..." are unparseable, never read as a verdict.
    """
    word = (text or "").strip().strip("*_`\"'.!:;, \n\t")
    return {"CORRECT": True, "INCORRECT": False}.get(word.upper())


@dataclass(frozen=True)
class JudgeItem:
    """One blinded grading task: no system, scenario or probe id."""

    key: str
    replicate: int
    question: str
    reference: str
    candidate: str
    abstention: bool

    def message(self) -> str:
        return f"Question: {self.question}\nReference answer: {self.reference}\nCandidate answer: {self.candidate}"


RUBRIC_PREFIX = "(a rubric: CORRECT only if the candidate meets every point) "


def _reference(probe) -> str:
    if probe.abstention:
        return ABSTENTION_REFERENCE
    if probe.subtype == "rubric":  # BEAM's rubric-graded items: the gold is a list of criteria
        return RUBRIC_PREFIX + " / ".join(line.strip() for line in probe.answer.splitlines() if line.strip())
    also = [a for a in probe.accepted if a != probe.answer]
    return probe.answer + (f" (also acceptable: {'; '.join(also)})" if also else "")


def judge_key(replicate: int, question: str, reference: str, candidate: str, abstention: bool) -> str:
    """Hex SHA-256 of a grading task's content (replicate included, so replicate 2 is judged afresh)."""
    blob = json.dumps([int(replicate), question, reference, candidate, bool(abstention)], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass
class JudgeModel(PerReplicate):
    """The judge: one pinned model, one client (and cache) per replicate, a fixed rubric."""

    model: str
    client_for: Callable[[int], object]
    system_prompt: str = JUDGE_SYSTEM_PROMPT

    def describe(self) -> dict:
        return {"model": self.model, "prompt": self.system_prompt, "prompt_sha256": prompt_sha256(self.system_prompt),
                "temperature": 0, "max_tokens": JUDGE_MAX_TOKENS}

    def judge(self, item: JudgeItem) -> dict:
        """One verdict as a record: ``correct`` (bool; False when unparseable), ``parsed``,
        ``raw``, the served model, tokens, ``cost_usd`` and ``cached``."""
        reply = self.client(item.replicate).complete(self.system_prompt, item.message(),
                                                     max_tokens=JUDGE_MAX_TOKENS, temperature=0)
        verdict = parse_verdict(reply.text)
        return {"correct": bool(verdict), "parsed": verdict is not None, "raw": reply.text[:200],
                "served_model": reply.model, "input_tokens": reply.input_tokens,
                "output_tokens": reply.output_tokens, "cost_usd": reply.cost_usd, "cached": reply.cached}


@dataclass
class Grading:
    """What :func:`grade_records` decided: ``grades[(system, scenario, probe, repeat)] =
    {"method", "correct", "key"?}``; ``error``: why judging stopped early (None when done)."""

    grades: dict
    items: int = 0
    calls: int = 0
    """Verdicts obtained (cache hits included)."""
    cached_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    """Tokens of the calls really made (cache hits cost nothing)."""
    cost_usd: float = 0.0
    error: str | None = None
    written: tuple | None = None

    def spend(self) -> dict:
        """JSON-safe spend of the judge: calls made and cached, tokens, USD."""
        return {"calls": self.calls - self.cached_calls, "cached_calls": self.cached_calls,
                "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cost_usd": round(self.cost_usd, 6)}


def _grade_without_judge(records: Iterable[Mapping], probes: Mapping, judge: JudgeModel | None
                         ) -> tuple[dict, dict[str, "JudgeItem"], dict[str, list]]:
    """(grades by (system, scenario, probe, repeat), the distinct answers left for the judge
    by judge key, the grade keys waiting on each): exact match, closed answers and declines
    are graded here; answers left for the judge get ``correct`` None until it answers."""
    grades: dict = {}
    pending: dict[str, JudgeItem] = {}
    waiting: dict[str, list] = {}
    for r in records:
        if r.get("kind") != "probe" or r.get("error") is not None or r.get("answer") is None:
            continue
        probe = probes.get((r["scenario_id"], r["probe_id"]))
        if probe is None:
            continue
        where = (r["system"], r["scenario_id"], r["probe_id"], r.get("repeat", 1))
        answer = r["answer"]
        given = normalize_answer(answer)
        if any(given == normalize_answer(ok) for ok in (probe.answer, *probe.accepted)):
            grades[where] = {"method": "exact", "correct": True}
        elif r.get("closed"):
            grades[where] = {"method": "exact", "correct": False}
        elif declines(answer):
            grades[where] = {"method": "declined", "correct": probe.abstention}
        elif judge is None:
            grades[where] = {"method": "exact", "correct": False}
        else:
            reference = _reference(probe)
            key = judge_key(r.get("repeat", 1), r["query"], reference, answer, probe.abstention)
            pending.setdefault(key, JudgeItem(key, int(r.get("repeat", 1)), r["query"], reference, answer,
                                              probe.abstention))
            waiting.setdefault(key, []).append(where)
            grades[where] = {"method": "judge", "correct": None, "key": key}
    return grades, pending, waiting


def _judge_pending(grading: "Grading", order: list[str], pending: Mapping[str, "JudgeItem"],
                   waiting: Mapping[str, list], judge: JudgeModel, path: Path | None) -> None:
    """Ask the judge for each answer in ``order``, updating ``grading`` (and appending each
    verdict to ``path``); an LLMError stops judging and is kept in :attr:`Grading.error`."""
    for key in order:
        item = pending[key]
        try:
            verdict = judge.judge(item)
        except LLMError as exc:
            grading.error = f"judging stopped after {grading.calls} of {len(order)} answers: {exc}"
            break
        grading.calls += 1
        if verdict["cached"]:
            grading.cached_calls += 1
        else:
            grading.input_tokens += verdict["input_tokens"]
            grading.output_tokens += verdict["output_tokens"]
            grading.cost_usd += verdict["cost_usd"]
        method = "judge" if verdict["parsed"] else "judge_unparseable"
        for where in waiting[key]:
            grading.grades[where] = {"method": method, "correct": verdict["correct"], "key": key}
        if path is not None:
            with open(path, "a", encoding="utf-8") as out:
                out.write(json.dumps({"key": key, "replicate": item.replicate, "question": item.question,
                                      "reference": item.reference, "candidate": item.candidate,
                                      "abstention": item.abstention, **verdict},
                                     ensure_ascii=False, sort_keys=True) + "\n")


def grade_records(records: Iterable[Mapping], gold: Mapping, judge: JudgeModel | None, *, seed: int = 0,
                  out_dir: Path | None = None, log: Callable[[str], None] = lambda m: None) -> Grading:
    """Grade every answered probe record (see the module docstring for the order of rules).

    ``records``: run records (only successful ``probe`` records with an answer are used);
    ``gold``: scenario id -> :class:`~conformance.contract.gold.GoldFile`. ``out_dir``: where
    ``judgments.jsonl`` (the judge's verdicts, blinded) and ``grades.jsonl`` (every grade with
    its system and probe) are written, from scratch each time (cached verdicts cost 0).
    An :class:`~drift_sdk.llm.errors.LLMError` (a spent budget, a rate limit) stops judging:
    what is judged so far is kept and written, the rest stays ungraded (``correct`` None),
    and :attr:`Grading.error` says why.
    """
    probes = {(sid, p.probe_id): p for sid, g in gold.items() for p in g.probes}
    grades, pending, waiting = _grade_without_judge(records, probes, judge)
    grading = Grading(grades=grades, items=len(pending))
    if out_dir is not None:
        context = {(sid, p.probe_id): {"abstention": p.abstention, "reference": _reference(p)} for (sid, _), p in
                   probes.items()}
        grading.written = (Path(out_dir) / GRADES_FILE, context)
    if not pending:
        _write_grades(grading)
        return grading
    order = sorted(pending)
    random.Random(seed).shuffle(order)  # blinded and interleaved across systems
    path = None
    if out_dir is not None:
        path = Path(out_dir) / JUDGMENTS_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("", encoding="utf-8")
    log(f"judging {len(order)} answers with {judge.model} (shuffled across systems, seed {seed})")
    _judge_pending(grading, order, pending, waiting, judge, path)
    _write_grades(grading)
    return grading


def _write_grades(grading: "Grading") -> None:
    if grading.written is None:
        return
    path, context = grading.written
    write_atomic(path, "".join(json.dumps({"system": system, "scenario_id": scenario, "probe_id": probe,
                                           "repeat": repeat, "method": grade["method"], "correct": grade["correct"],
                                           **context[(scenario, probe)]}, ensure_ascii=False, sort_keys=True) + "\n"
                               for (system, scenario, probe, repeat), grade in sorted(grading.grades.items())),
                 what="the grades")


def judging_counts(grades: Mapping, system: str, repeat: int = 1) -> dict[str, int]:
    """Per-method counts of one system's grades (first replicate): ``exact``, ``declined``,
    ``judge``, ``judge_unparseable``, ``not_judged`` (judging stopped before the item), and
    ``judge_correct``."""
    out = dict.fromkeys(("exact", "declined", "judge", "judge_unparseable", "not_judged", "judge_correct"), 0)
    for (sys_, _s, _p, rep), grade in grades.items():
        if sys_ != system or rep != repeat:
            continue
        if grade["correct"] is None:
            out["not_judged"] += 1
            continue
        out[grade["method"]] += 1
        if grade["method"] == "judge" and grade["correct"]:
            out["judge_correct"] += 1
    return out

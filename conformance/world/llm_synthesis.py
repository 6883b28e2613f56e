"""Transcript synthesis by an LLM (DRIFT §3.5), off by default: ``generate --synthesizer llm``.

:class:`LLMSynthesizer` implements the :class:`~conformance.world.synthesis.Synthesizer`
protocol with one Messages API call per session (fixed prompt, temperature 0, a token cap)
through the suite's one client (:class:`drift_sdk.llm.client.AnthropicClient`: pinned
model, response cache, spend budget). The model gets the session's participants (voice,
formality, verbosity), the interaction pattern, the event the session must carry (value, old
value, whether it is a private note), the values it must not write, and the template
synthesizer's version of the same session as an outline, and answers with JSON turns.

Every answer is checked against the synthesis contract (see :mod:`conformance.world.synthesis`)
before it is used; an answer that breaks it is replaced, for that session only, by the
template synthesizer's turns, and the fallback is counted with its reason (:attr:`stats`).
Which turns are evidence is decided here, never taken from the model: a turn is evidence
when it names a value of the event's attribute (an episode: its target). The checks, with
the reader's whole-word rule (:func:`conformance.contract.answer_text.last_option_in`):

* the answer is one JSON object ``{"turns": [{"author", "text", "private"?}]}`` (a code
  fence around it is tolerated), 1 to :data:`MAX_TURNS` turns of at most
  :data:`MAX_TEXT_CHARS` characters; every author is a participant of the session and
  every participant speaks; at least one turn is shared (the session marker needs one);
  nothing has the shape of a session marker (``KX4821``);
* a session without an event names no value the generator hands out as a distractor,
  except those the template's outline names in passing (its decoys and quoted lines);
* with an event: one or two evidence turns, the first by the event's speaker, a second
  (an acknowledgement) by someone else; each names the event's value last, and no other
  value of the attribute's domain, except in a change the old value, every mention of it
  before the new one; an evidence turn names no other distractor value, another turn only
  those the outline names outside its evidence (its decoys); no other turn names the
  value, the old value or any value of the domain;
* a private event: exactly one private turn, the speaker's, and it is the only evidence;
  otherwise no private turn at all;
* an episode: the evidence names the episode's target;
* a team decision being proposed (disclose or change of a decision): the proposal (the first
  evidence turn) names its proposer's id and no other entity id of the scenario.

Determinism: the template synthesizer always runs first, on the generator's ``rng``, and its
turns are both the outline in the prompt and the fallback. So this synthesizer consumes the
generator's random stream exactly as :class:`TemplateSynthesizer` does, whether the model's
answer is used or not: the world, event schedule, tiers and probe choices of an LLM corpus
are those of the template corpus with the same seed, and nothing the model writes moves the
random stream (what it writes can only change what the generator derives from the turns
themselves: message ids, which of them are evidence, an episode's minute within its session).
The prompt is a pure function of the session plan and the outline, so with the response
cache a regeneration makes no call and writes the same bytes; answers are also kept in
memory by request, so a second pass in the same process (the CLI generates into a scratch
folder first, then into the target) makes no call even if the cache could not be written.
"""

from __future__ import annotations

import functools
import json
import re
import shlex
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from drift_sdk.llm.client import AnthropicClient

from conformance.contract.answer_text import last_option_in
from conformance.world.markers import CODE_PATTERN
from conformance.world.synthesis import EventPlan, SessionContext, TemplateSynthesizer, Turn

#: Recorded in the corpus ledger; bump it when the prompt or the checks change.
PROMPT_VERSION = "drift-llm-synthesis/1"
MAX_TOKENS = 1500
MAX_TURNS = 48
MAX_TEXT_CHARS = 8000

SYSTEM = """You write one session of a synthetic conversation for a benchmark of AI-agent memory.
You are given who takes part, how they talk, an outline of the session, and at most one event the
session must carry. Rewrite the outline into a natural exchange: each participant in their own voice
(humans by their formality and verbosity, agents precise and businesslike), varied wording, no
headings, no narration, no stage directions. An event should come up naturally in the talk, not as
an announcement.

Hard rules (an answer that breaks one is thrown away):
1. Authors are exactly the participant ids given, and every participant speaks at least once.
2. Write the event's value exactly as given, verbatim, as a whole phrase. Only the event's speaker
   states it; at most one other participant may acknowledge it in one turn, repeating the value.
   No other turn writes the value.
3. In a change, the old value may appear only in the turns that state the new value, and only before
   the new value.
4. Never write any phrase from the "never write" list, not even in another sense.
5. A private note is written only where the outline has one, by its author, with "private": true;
   no other turn refers to it. Without a private note in the outline, no turn is private.
6. A proposal must name its proposer by id, as the outline does, and no other participant or entity id.
7. No codes of two capital letters and four digits.
8. Between 2 and 10 turns (1 or more when only one participant is present), each under 600 characters.

Answer with one JSON object and nothing else:
{"turns": [{"author": "<participant id>", "text": "<what they say>", "private": false}]}"""

_PATTERNS = {
    "linear": "two main speakers alternate, anyone else speaks at the end",
    "broadcast": "the first participant speaks, then each other participant answers once, then the first may close",
    "mesh": "everyone talks with everyone, in any order",
    "hierarchical": "the principal instructs the orchestrator, who delegates to the workers and reports back",
    "async": "messages arrive out of step, in any order",
}


@dataclass
class SynthesisStats:
    """What the synthesizer did. ``sessions``: sessions synthesized; ``calls``: API calls made;
    ``cached``: answers served from the response cache; ``replayed``: sessions whose request was
    already answered in this process (the same turns again, no call); ``fallbacks``: sessions
    given the template's turns, by reason (``reasons``; a few ``examples``); ``cost_usd``: USD
    spent on the calls made."""

    sessions: int = 0
    calls: int = 0
    cached: int = 0
    replayed: int = 0
    fallbacks: int = 0
    reasons: Counter = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)
    cost_usd: Decimal = Decimal(0)
    served_models: set[str] = field(default_factory=set)
    input_tokens: int = 0
    output_tokens: int = 0

    def fallback(self, reason: str, detail: str) -> None:
        self.fallbacks += 1
        self.reasons[reason] += 1
        if len(self.examples) < 20:
            self.examples.append(f"{reason}: {detail}")

    def to_record(self) -> dict:
        """Everything, JSON-safe (for logs; ``calls``/``cached``/``cost_usd`` differ between a first
        generation and a cached one)."""
        return {"sessions": self.sessions, "calls": self.calls, "cached": self.cached, "replayed": self.replayed,
                "fallbacks": self.fallbacks, "fallback_reasons": dict(sorted(self.reasons.items())),
                "examples": list(self.examples), "cost_usd": float(self.cost_usd),
                "served_models": sorted(self.served_models), "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens}

    @property
    def used(self) -> int:
        """Sessions written with the model's turns (the others fell back to the template)."""
        return self.sessions - self.fallbacks

    def reasons_text(self) -> str:
        """The fallback reasons with their counts (see :func:`reasons_text`)."""
        return reasons_text(self.reasons)

    def ledger_record(self) -> dict:
        """The deterministic part (the same for a first and a cached generation): for the ledger."""
        return {"sessions": self.sessions, "fallbacks": self.fallbacks,
                "fallback_reasons": dict(sorted(self.reasons.items())), "served_models": sorted(self.served_models)}


def reasons_text(reasons) -> str:
    """Fallback reasons (a mapping reason -> count) with their counts, most frequent first:
    ``not JSON 3, author 1``."""
    return ", ".join(f"{reason} {n}" for reason, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))


class Rejected(ValueError):
    """An answer that breaks the contract: ``reason`` (a short category) and the detail."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


class LLMSynthesizer:
    """One LLM call per session, checked against the synthesis contract, template fallback.

    Args:
        client: the :class:`AnthropicClient` (its cache makes regeneration free, its budget caps
            the spend: :class:`~drift_sdk.llm.errors.BudgetSpent` and the client's other errors
            propagate and stop the generation).
        fallback: the template synthesizer whose turns are the outline and the fallback
            (default: a :class:`TemplateSynthesizer`).
        max_tokens: the answer's token cap.
    """

    def __init__(self, client: AnthropicClient, fallback: TemplateSynthesizer | None = None,
                 max_tokens: int = MAX_TOKENS):
        self.client = client
        self.fallback = fallback if fallback is not None else TemplateSynthesizer()
        self.max_tokens = int(max_tokens)
        self.stats = SynthesisStats()
        self._memo: dict[str, tuple[list[Turn], Rejected | None]] = {}

    @property
    def model(self) -> str:
        return self.client.model

    def session(self, rng, ctx: SessionContext) -> list[Turn]:
        # The template runs first, always, on the generator's rng: see the module docstring.
        draft = self.fallback.session(rng, ctx)
        user = prompt(ctx, draft)
        key = json.dumps([self.client.model, SYSTEM, user, self.max_tokens])
        stats = self.stats
        stats.sessions += 1
        if key in self._memo:  # the same request again (in this pass or a second one): the same turns
            turns, rejected = self._memo[key]
            stats.replayed += 1
            if rejected is not None:
                stats.fallback(rejected.reason, rejected.detail)
            return list(turns)
        reply = self.client.complete(SYSTEM, [{"role": "user", "content": user}], max_tokens=self.max_tokens,
                                     temperature=0)
        if reply.cached:
            stats.cached += 1
        else:
            stats.calls += 1
            stats.cost_usd += Decimal(str(reply.cost_usd))
            stats.input_tokens += reply.input_tokens
            stats.output_tokens += reply.output_tokens
        stats.served_models.add(reply.model)
        rejected = None
        try:
            if reply.stop_reason == "max_tokens":
                raise Rejected("truncated", f"the answer hit the {self.max_tokens}-token cap")
            turns = check(parse(reply.text), ctx, draft)
        except Rejected as exc:
            rejected = exc
            stats.fallback(exc.reason, exc.detail)
            turns = list(draft)
        self._memo[key] = (list(turns), rejected)
        return turns


# -- the prompt ------------------------------------------------------------------------------

def _who(ctx: SessionContext, eid: str) -> str:
    voice = ctx.voices[eid]
    formality, verbosity = ctx.styles[eid]
    return f"- {eid}: {voice}, {formality}, {verbosity}"


def _event_text(ctx: SessionContext, event: EventPlan) -> str:
    if event.kind == "episode":
        return (f"{event.speaker} mentions the {event.target!r}, which happened today (the phrase "
                f"{event.target!r} verbatim).")
    attr = event.attr
    decision = attr.defn.kind == "decision"
    subject = "the team's" if decision else "their own" if attr.entity == event.speaker else f"{attr.entity}'s"
    what = f"{subject} {attr.defn.label}" + (f" for {attr.slot!r}" if attr.slot else "")
    where = " in a private note" if event.private else ""
    if event.kind == "change":
        line = (f"{event.speaker} says{where} that {what} changes from {event.old!r} to {event.value!r} "
                f"(the new value {event.value!r} verbatim; the old one {event.old!r} only before it, or not at all).")
    else:
        verb = "states for the first time" if event.kind == "disclose" else "mentions again (still true)"
        line = f"{event.speaker} {verb}{where} {what}: {event.value!r} (verbatim)."
    if decision and event.kind in ("disclose", "change"):
        line += f" This is a proposal: it names its proposer {event.speaker!r} and no other id."
    return line


def forbidden_values(ctx: SessionContext, draft: list[Turn]) -> list[str]:
    """Values the answer must not write: every distractor value except the event's value and
    old value, and (in a session without an event) except those the outline names."""
    return _forbidden(ctx, draft, _allowed_in_outline(ctx, draft))


def _forbidden(ctx: SessionContext, draft: list[Turn], kept: list[str]) -> list[str]:
    allowed = set(kept)
    event = ctx.event
    if event is not None and event.attr is not None:
        allowed |= {event.value} | ({event.old} if event.kind == "change" and event.old else set())
    return sorted({v for v in ctx.distractor_values if v not in allowed}, key=str.casefold)


def one_line(text: str) -> str:
    """A turn's text on one prompt line: a line break becomes the two characters ``\\n``."""
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def from_one_line(text: str) -> str:
    """The inverse of :func:`one_line` (an answer may keep the outline's ``\\n`` marks)."""
    return re.sub(r"\\(\\|n)", lambda m: "\n" if m.group(1) == "n" else "\\", text)


def _allowed_in_outline(ctx: SessionContext, draft: list[Turn]) -> list[str]:
    """Distractor values the outline names outside its evidence (its decoys and quoted lines),
    other than the event's own domain."""
    event = ctx.event
    domain = set(event.attr.pool) if event is not None and event.attr is not None else set()
    named: set[str] = set()
    for turn in draft:
        if not turn.evidence:
            named.update(_named(turn.text, ctx.distractor_values))
    return [v for v in dict.fromkeys(ctx.distractor_values) if v in named and v not in domain]


def _allowed_in_noise(ctx: SessionContext, draft: list[Turn]) -> list[str]:
    """Distractor values the outline of a session without an event names (its decoys and quoted lines)."""
    named: set[str] = set()
    for turn in draft:
        named.update(_named(turn.text, ctx.distractor_values))
    return [v for v in dict.fromkeys(ctx.distractor_values) if v in named]


def prompt(ctx: SessionContext, draft: list[Turn]) -> str:
    """The user message for one session (a pure function of the plan and the outline)."""
    lines = ["Participants of this session:"]
    lines += [_who(ctx, eid) for eid in ctx.present]
    lines.append(f"Interaction pattern: {ctx.pattern} ({_PATTERNS.get(ctx.pattern, 'any order')}).")
    kept = _allowed_in_outline(ctx, draft)
    if ctx.event is None:
        lines.append("Event: none. This is routine talk: nothing durable changes about anyone present.")
    else:
        lines.append("Event: " + _event_text(ctx, ctx.event))
    if kept:
        lines.append("Keep the outline's passing mentions of " + ", ".join(repr(v) for v in kept)
                     + " as they are meant (someone else's words, a hypothetical, an aside: never a fact about "
                       "anyone present), and never in the turn that states the event.")
    lines.append("Outline (rewrite it; the order and number of turns may change; \\n marks a line break):")
    for i, turn in enumerate(draft, start=1):
        note = " [private note]" if turn.scope == "private" else ""
        lines.append(f"{i}. {turn.author}{note}: {one_line(turn.text)}")
    never = _forbidden(ctx, draft, kept)
    if never:
        lines.append("Never write: " + "; ".join(never) + ".")
    if ctx.event is not None and ctx.event.attr is not None and ctx.event.attr.defn.kind == "decision":
        lines.append("Entity ids (only the proposer's may appear in a proposal): " + ", ".join(ctx.voices) + ".")
    lines.append('Answer with the JSON object {"turns": [...]} only.')
    return "\n".join(lines)


# -- reading and checking an answer -----------------------------------------------------------

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def parse(text: str) -> list[dict]:
    """The ``turns`` list of an answer.

    Raises:
        Rejected: not one JSON object with a non-empty ``turns`` list of objects.
    """
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        doc = json.loads(body)
    except ValueError:
        start, end = body.find("{"), body.rfind("}")
        try:
            doc = json.loads(body[start:end + 1]) if 0 <= start < end else None
        except ValueError:
            doc = None
        if doc is None:
            raise Rejected("not JSON", f"the answer is not a JSON object: {text[:80]!r}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("turns"), list) or not doc["turns"]:
        raise Rejected("no turns", "the answer has no non-empty 'turns' list")
    for i, turn in enumerate(doc["turns"]):
        if not isinstance(turn, dict) or not isinstance(turn.get("author"), str) \
                or not isinstance(turn.get("text"), str) or not isinstance(turn.get("private", False), bool):
            raise Rejected("bad turn", f"turn {i + 1} is not {{'author': str, 'text': str, 'private'?: bool}}")
    return doc["turns"]


def _spans(text: str, values) -> dict[str, list[tuple[int, int]]]:
    """Whole-word mentions of each value (the reader's rule: case-insensitive, no word character on
    either side); a mention inside a longer named value's mention does not count."""
    found: dict[str, list[tuple[int, int]]] = {}
    folded = text.casefold()
    for value in dict.fromkeys(values):
        if not value or value.casefold() not in folded:  # cheap pre-filter; the regex decides
            continue
        hits = [(m.start(), m.end()) for m in _whole_word(value).finditer(text)]
        if hits:
            found[value] = hits
    every = [(s, e, v) for v, hits in found.items() for s, e in hits]
    out: dict[str, list[tuple[int, int]]] = {}
    for s, e, v in every:
        inside = any(s2 <= s and e <= e2 and (e2 - s2) > (e - s) for s2, e2, v2 in every if v2 != v)
        if not inside:
            out.setdefault(v, []).append((s, e))
    return out


@functools.lru_cache(maxsize=4096)
def _whole_word(value: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)" + re.escape(value) + r"(?!\w)", re.IGNORECASE)


def _named(text: str, values) -> list[str]:
    return list(_spans(text, values))


def check(raw: list[dict], ctx: SessionContext, draft: list[Turn]) -> list[Turn]:
    """The answer's turns when they keep the contract (module docstring), evidence marked.

    Raises:
        Rejected: the first rule broken.
    """
    present = list(ctx.present)
    if not 1 <= len(raw) <= MAX_TURNS or (len(present) > 1 and len(raw) < 2):
        raise Rejected("turn count", f"{len(raw)} turns (2 to {MAX_TURNS}; 1 alone)")
    turns = []
    for i, item in enumerate(raw, start=1):
        text = from_one_line(item["text"]).strip()
        if not text or len(text) > MAX_TEXT_CHARS:
            raise Rejected("turn length", f"turn {i} has {len(text)} characters (1 to {MAX_TEXT_CHARS})")
        if item["author"] not in present:
            raise Rejected("author", f"turn {i} is by {item['author']!r}, who is not in the session {present}")
        if CODE_PATTERN.search(text):
            raise Rejected("marker-like code", f"turn {i} holds {CODE_PATTERN.search(text).group(0)!r}")
        turns.append(Turn(item["author"], text, scope="private" if item.get("private") else "shared"))
    silent = [p for p in present if all(t.author != p for t in turns)]
    if silent:
        raise Rejected("silent participant", f"{silent} never speak")
    if not any(t.scope == "shared" for t in turns):
        raise Rejected("no shared turn", "every turn is private")
    event = ctx.event
    if event is None:
        allowed = set(_allowed_in_noise(ctx, draft))
        for i, t in enumerate(turns, start=1):
            stray = [v for v in _named(t.text, ctx.distractor_values) if v not in allowed]
            if stray:
                raise Rejected("distractor value", f"turn {i} of a session without an event names {stray}")
        if any(t.scope == "private" for t in turns):
            raise Rejected("private turn", "a private turn in a session without a private note")
        return turns
    return _check_event(turns, ctx, event, set(_allowed_in_outline(ctx, draft)))


def _check_event(turns: list[Turn], ctx: SessionContext, event: EventPlan, passing: set[str]) -> list[Turn]:
    if event.kind == "episode":
        domain = [event.target]
        others = list(ctx.distractor_values)
    else:
        domain = list(event.attr.pool)
        for v in (event.value, event.old):
            if v and v not in domain:
                domain.append(v)
        others = [v for v in ctx.distractor_values if v not in domain]
    evidence = [i for i, t in enumerate(turns) if _named(t.text, domain)]
    for i, t in enumerate(turns, start=1):
        # The outline's decoys may stay where they are; a turn stating the event names nothing else.
        stray = [v for v in _named(t.text, others) if i - 1 in evidence or v not in passing]
        if stray:
            raise Rejected("distractor value", f"turn {i} names {stray}, a value of another attribute")
    private = [i for i, t in enumerate(turns) if t.scope == "private"]
    if not evidence:
        raise Rejected("value missing", f"no turn states {event.value or event.target!r}")
    first = turns[evidence[0]]
    if event.private:
        if len(private) != 1 or evidence != private or first.author != event.speaker:
            raise Rejected("private note", f"needs exactly one private turn, by {event.speaker}, and it alone "
                                           "naming the value (private turns at "
                                           f"{[i + 1 for i in private]}, value named at {[i + 1 for i in evidence]})")
    else:
        if private:
            raise Rejected("private turn", f"turn {private[0] + 1} is private in a shared event")
        if len(evidence) > 2:
            raise Rejected("value repeated", f"turns {[i + 1 for i in evidence]} name the value (at most the "
                                             "statement and one acknowledgement)")
        if first.author != event.speaker:
            raise Rejected("wrong speaker", f"the value is first named by {first.author}, not by {event.speaker}")
        if len(evidence) == 2 and turns[evidence[1]].author == event.speaker:
            raise Rejected("value repeated", f"{event.speaker} names the value twice")
    target = event.target if event.kind == "episode" else event.value
    for i in evidence:
        text = turns[i].text
        spans = _spans(text, domain)
        if last_option_in(text, domain) != target:
            raise Rejected("value not last", f"turn {i + 1} names {list(spans)} and not {target!r} last")
        extra = [v for v in spans if v not in (target, event.old if event.kind == "change" else None)]
        if extra:
            raise Rejected("other value", f"turn {i + 1} names {extra} beside {target!r}")
        if event.kind == "change" and event.old in spans and \
                max(e for _, e in spans[event.old]) > min(s for s, _ in spans[target]):
            raise Rejected("old after new", f"turn {i + 1} names the old value {event.old!r} after the new one")
    if event.attr is not None and event.attr.defn.kind == "decision" and event.kind in ("disclose", "change"):
        ids = list(ctx.voices)
        named = _named(first.text, ids)
        if event.speaker not in named or len(named) > 1:
            raise Rejected("proposal ids", f"the proposal names {named}, not its proposer {event.speaker!r} alone")
    return [Turn(t.author, t.text, t.scope, evidence=i in evidence) for i, t in enumerate(turns)]


# -- what the corpus records ----------------------------------------------------------------

def ledger_fields(synth: LLMSynthesizer, seed: int, allow_alias: bool = False, llm_cache=None) -> dict:
    """Ledger keys for a corpus written with ``synth`` (deterministic: a cached regeneration
    gives the same): ``synthesizer`` (name, model asked for and served, prompt version,
    sessions, fallbacks by reason), ``corpus_version`` with the synthesizer and model as build
    metadata (``1.0.0+llm.claude-haiku-4-5-20251001``; the run receipt records the ledger's
    corpus_version) and the ``rebuild`` command (with ``--budget-usd 0`` it replays the response
    cache and refuses any new call, and needs no ``ANTHROPIC_API_KEY`` while every answer is
    cached; ``llm_cache``, a cache folder other than the default, is part of it as an absolute
    path, or the rebuild would not find the cached answers)."""
    from conformance.world.generator import CORPUS_VERSION

    model = synth.client.model
    build = re.sub(r"[^0-9A-Za-z-]+", "-", model).strip("-")
    alias = " --allow-alias" if allow_alias else ""
    # Absolute: the rebuild command finds the cache from any working directory.
    cache = f" --llm-cache {shlex.quote(str(Path(llm_cache).resolve()))}" if llm_cache is not None else ""
    return {
        "corpus_version": f"{CORPUS_VERSION}+llm.{build}",
        "rebuild": f"drift-conformance generate --seed {seed} --fixtures DIR --gold DIR --synthesizer llm "
                   f"--synth-model {model}{alias}{cache} --budget-usd 0",
        "synthesizer": {"name": "llm", "model": model, "prompt": PROMPT_VERSION, "max_tokens": synth.max_tokens,
                        "fallback": "template", **synth.stats.ledger_record()},
    }

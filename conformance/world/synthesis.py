"""Transcript synthesis (DRIFT §3.5) behind one interface.

:class:`Synthesizer` turns a planned session (participants, pattern, styles, the
one event it carries or none) into turns. :class:`TemplateSynthesizer` does it
from the composable parts of :mod:`conformance.world.content`; the LLM synthesizer
(:mod:`conformance.world.llm_synthesis`) implements the same protocol.

Contract (the reader rule depends on it): a turn marked ``evidence`` states the
event's value and names no other value of any attribute except, in a change,
the old value *before* the new one; no other turn names a value of the event's
attribute (or the episode's target); a decision proposal names its proposer's id
and no other entity id.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Protocol

from conformance.world import content as C
from conformance.world import templates as T
from conformance.world.entities.base import Attr
from conformance.world.topology import speaking_order


@dataclass(frozen=True)
class Turn:
    author: str
    text: str
    scope: str = "shared"
    evidence: bool = False


@dataclass
class EventPlan:
    """What a signal/soft session carries. ``kind``: disclose | mention | change | episode."""

    kind: str
    speaker: str
    attr: Attr | None = None
    value: str = ""
    old: str | None = None
    target: str | None = None
    line_pool: tuple[str, ...] = ()
    private: bool = False


@dataclass
class SessionContext:
    present: list[str]
    pattern: str
    voices: dict[str, str]
    styles: dict[str, tuple[str, str]]
    event: EventPlan | None
    distractor_values: list[str] = field(default_factory=list)
    attrs: list[Attr] = field(default_factory=list)
    """Every attribute of the scenario (decoys name their values; hidden ones included)."""
    episodes: list[str] = field(default_factory=list)
    """Every episode target of the scenario."""
    twin: EventPlan | None = None
    """Noise only: an event the generator could have planned here (its line is quoted as someone
    else's words, with some value of its pool; nothing is applied)."""
    paradigm: str = "user_assistant"


class Synthesizer(Protocol):
    def session(self, rng: random.Random, ctx: SessionContext) -> list[Turn]: ...


class TemplateSynthesizer:
    """Sessions from composable parts (corpus 2.x): every tier from the same machinery.

    Per session, before the tier matters: a size drawn from a long-tailed (log-normal)
    distribution sets the number of turns and of parts per turn; each turn is filled with
    parts by its author's voice (:class:`conformance.world.content.Content`); a number of
    decoys (values named without any change) is drawn and spread over non-evidence turns.
    Then the tier's one difference: an event session weaves its event line into one of the
    speaker's turns, between that turn's parts; a noise session carries instead one more
    decoy, some attribute's own line quoted as someone else's words. ``surface`` selects
    the locale and phrasing (a sealed holdout passes its own, :func:`content.surface_for`).
    """

    #: Weights of 0, 1, 2, 3 decoys per session (every tier).
    decoy_weights = (3, 4, 2, 1)
    #: Log-normal size: median turns and parts per substantive turn scale with exp(N(0, sigma)).
    size_sigma = {"user_assistant": 0.42, "multi_peer": 0.55, "coding_agent": 0.42, "crawler_agent": 0.45}

    #: Parts per substantive (assistant, agent, tool) turn, relative (tool output is long already).
    substance = {"user_assistant": 1.4, "multi_peer": 1.0, "coding_agent": 1.6, "crawler_agent": 0.85}

    def __init__(self, surface: C.Surface = C.PUBLIC):
        self.surface = surface

    def session(self, rng: random.Random, ctx: SessionContext) -> list[Turn]:
        content = C.Content(rng, self.surface, C.forbidden_pattern(tuple(ctx.voices)))
        scale = min(6.0, rng.lognormvariate(0.0, self.size_sigma.get(ctx.paradigm, 0.4)))
        lead = ctx.present[0]
        chatty = ctx.styles[lead][1] == "chatty"
        length = max(2, round((5.5 if chatty else 4.5) * scale))
        order = speaking_order(rng, ctx.present, ctx.pattern, length)
        parts = [self._parts(rng, content, ctx, author, i, scale) for i, author in enumerate(order)]
        event = ctx.event
        # How many decoys, where, about what: drawn the same way in every tier.
        count = rng.choices(range(len(self.decoy_weights)), weights=self.decoy_weights)[0]
        exclude = set()
        if event is not None and event.attr is not None:
            exclude = {v.casefold() for v in event.attr.pool}
        elif event is not None and event.target:
            exclude = {event.target.casefold()}
        evidence_at = -1
        if event is not None and not event.private:
            slots = [i for i, a in enumerate(order) if a == event.speaker]
            if not slots:
                order[0] = event.speaker
                slots = [0]
            evidence_at = rng.choice([i for i in slots if i < len(order) - 1] or slots)
            if evidence_at == len(order) - 1:
                # The event is never the last turn: someone answers it (so the session marker, which goes on
                # the last shared turn that is not evidence, sits where it sits in every tier).
                order.append(next((p for p in ctx.present if p != event.speaker), event.speaker))
                parts.append([self._part(rng, content, ctx, order[-1])])
        free = [i for i in range(len(order)) if i != evidence_at]
        for _ in range(count):
            at = rng.choice(free)
            text = self._decoy(rng, content, ctx, order[at], exclude)
            if text:
                parts[at].insert(rng.randint(0, len(parts[at])), text)
        # Quoted news (someone else's or the speaker's own words) at the same rate in every tier; a noise
        # session adds one quote of some attribute's own line: the twin of an event session's event line.
        quotes = [content.quoted_news() for _ in range(rng.choices((0, 1, 2, 3), weights=(3, 4, 2, 1))[0])]
        # Frames balance: a noise session's twin goes in someone else's frame, and half the time the
        # session quotes one more piece of news in the speaker's own; an event session quotes one more
        # piece of news in someone else's frame, and half the time its event line goes in the speaker's.
        self_quote = rng.random() < 0.5
        if event is None:
            quotes.append(self._quoted_line(rng, content, ctx))
            if self_quote:
                quotes.append(content.quoted_news(own=True))
        else:
            quotes.append(content.quoted_news(own=False))
        for text in quotes:
            at = rng.choice(free)
            if text:
                parts[at].insert(rng.randint(0, len(parts[at])), text)
        line = self._event_line(rng, event) if event is not None else ""
        if event is not None and not event.private and self_quote:
            # The speaker quotes what they wrote elsewhere: still their own durable statement.
            said = content.clean_except(lambda: content.self_quoted(line), allowed=self._said_values(event))
            line = said or line
        if event is not None and not event.private:
            parts[evidence_at].insert(rng.randint(0, len(parts[evidence_at])), line)
        turns = [Turn(a, self._join(p) or content.ack(ctx.voices[a] == "human"), evidence=i == evidence_at)
                 for i, (a, p) in enumerate(zip(order, parts))]
        if event is not None and event.private:
            # A private note: only its author may know it; nobody acknowledges it.
            note = [line]
            if rng.random() < 0.5:
                note.insert(rng.randint(0, 1), self._part(rng, content, ctx, event.speaker))
            turns.append(Turn(event.speaker, self._join(note), scope="private", evidence=True))
        return turns

    # -- pieces ---------------------------------------------------------------
    @staticmethod
    def _join(parts: list[str]) -> str:
        return "\n\n".join(p for p in parts if p)

    def _parts(self, rng, content: C.Content, ctx: SessionContext, author: str, index: int,
               scale: float) -> list[str]:
        voice = ctx.voices[author]
        if voice == "human":
            chatty = ctx.styles[author][1] == "chatty"
            count = max(1, round(rng.uniform(0.8, 2.0 if chatty else 1.5) * min(scale, 3.0)))
        else:
            count = max(1, round(rng.uniform(1.0, 2.2) * scale * self.substance.get(ctx.paradigm, 1.0)))
        if index > 0 and rng.random() < 0.3:
            first = content.ack(voice == "human") if voice == "human" else content.agent_reply()
            return [first] + [self._part(rng, content, ctx, author) for _ in range(count - 1)]
        return [self._part(rng, content, ctx, author) for _ in range(count)]

    @staticmethod
    def _part(rng, content: C.Content, ctx: SessionContext, author: str) -> str:
        voice = ctx.voices[author]
        if voice == "human":
            return content.human_part()
        if ctx.paradigm == "user_assistant" or (ctx.voices.get(ctx.present[0]) == "human" and rng.random() < 0.5):
            return content.assistant_part()
        return content.agent_part()

    @staticmethod
    def _candidates(ctx: SessionContext, exclude: set[str]) -> list[Attr]:
        return [a for a in ctx.attrs if not any(v.casefold() in exclude for v in a.pool)]

    def _decoy(self, rng, content: C.Content, ctx: SessionContext, author: str, exclude: set[str]) -> str:
        agent = ctx.voices[author] != "human"
        episodes = [t for t in ctx.episodes if t.casefold() not in exclude]
        if episodes and rng.random() < 0.12:
            target = rng.choice(episodes)
            return content.clean_except(lambda: content.episode_decoy(target), allowed=(target,))
        attrs = self._candidates(ctx, exclude)
        if not attrs:
            return ""
        attr = rng.choice(attrs)
        stale = [v for v in attr.held if v != attr.value]
        if stale and rng.random() < 0.25:
            value = rng.choice(stale)
            return content.clean_except(lambda: content.decoy(value, attr.defn.label, agent, stale=True),
                                        allowed=(value,))
        value = rng.choice(attr.pool)
        return content.clean_except(lambda: content.decoy(value, attr.defn.label, agent), allowed=(value,))

    @staticmethod
    def _said_values(event: EventPlan) -> tuple[str, ...]:
        if event.kind == "episode":
            return (event.target,)
        named = (event.value,) + ((event.old,) if event.old else ()) + ((event.attr.slot,) if event.attr.slot else ())
        return named + ((event.speaker,) if event.attr.defn.kind == "decision" else ())

    def _quoted_line(self, rng, content: C.Content, ctx: SessionContext) -> str:
        """Noise's twin of an event line: the line of an event the generator could have planned here
        (``ctx.twin``), with some value of its pool, as someone else's words."""
        twin = ctx.twin
        if twin is None:
            return ""
        if twin.kind == "episode":
            line = T.fill(rng.choice(twin.line_pool), target=twin.target)
            return content.clean_except(lambda: content.quoted(line), allowed=(twin.target,))
        attr = twin.attr
        template = rng.choice(twin.line_pool)
        value = rng.choice(attr.pool)
        old = rng.choice([v for v in attr.pool if v != value] or [value])
        allowed = (value, old) + ((attr.slot,) if attr.slot else ())

        def make() -> str:
            who = content.fake.first_name()
            line = T.fill(template, value=value, new=value, old=old, slot=attr.slot or "", me=who)
            return content.quoted(line)
        return content.clean_except(make, allowed=allowed)

    @staticmethod
    def _event_line(rng: random.Random, event: EventPlan) -> str:
        template = rng.choice(event.line_pool)
        if event.kind == "episode":
            return T.fill(template, target=event.target)
        attr = event.attr
        return T.fill(template, value=event.value, new=event.value, old=event.old or "", slot=attr.slot or "",
                      me=event.speaker)

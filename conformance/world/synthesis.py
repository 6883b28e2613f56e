"""Transcript synthesis (DRIFT §3.5) behind one interface.

:class:`Synthesizer` turns a planned session (participants, pattern, styles, the
one event it carries or none) into turns. :class:`TemplateSynthesizer` does it
with seeded template choices; an LLM synthesizer can implement the same protocol
later, as long as it keeps the contract below.

Contract (the reader rule depends on it): a turn marked ``evidence`` states the
event's value and names no other value of that attribute except, in a change,
the old value *before* the new one; no other turn names a value of the event's
attribute; a decision proposal names its proposer's id and no other entity id.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Protocol

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


class Synthesizer(Protocol):
    def session(self, rng: random.Random, ctx: SessionContext) -> list[Turn]: ...


class TemplateSynthesizer:
    """Seeded template synthesis: variants by the PRNG, style by formality and verbosity."""

    distractor_rate = 0.6

    def session(self, rng: random.Random, ctx: SessionContext) -> list[Turn]:
        lead = ctx.present[0]
        chatty = ctx.styles[lead][1] == "chatty"
        length = rng.randint(3, 6) if chatty else rng.randint(2, 3)
        order = speaking_order(rng, ctx.present, ctx.pattern, length)
        texts = self._filler(rng, ctx, order)
        turns = [Turn(a, t) for a, t in zip(order, texts)]
        event = ctx.event
        if event is None:
            if ctx.distractor_values and rng.random() < self.distractor_rate:
                where = rng.randrange(len(turns))
                aside = T.fill(rng.choice(T.DISTRACTORS), value=rng.choice(ctx.distractor_values))
                turns[where] = Turn(turns[where].author, T.add_tail(turns[where].text, aside))
            return turns
        line = self._style(rng, ctx, event.speaker, self._event_line(rng, event))
        if event.private:
            # A private note: only its author may know it; nobody acknowledges it.
            return turns + [Turn(event.speaker, line, scope="private", evidence=True)]
        slots = [i for i, a in enumerate(order) if a == event.speaker]
        at = slots[0] if slots else 0
        turns[at] = Turn(event.speaker, line, evidence=True)
        others = [p for p in ctx.present if p != event.speaker]
        ack = self._ack(rng, event)
        if others:
            responder = order[at + 1] if at + 1 < len(order) and order[at + 1] != event.speaker else others[0]
            text = ack if ack is not None else self._generic_ack(rng, ctx, responder, event.speaker)
            turn = Turn(responder, text, evidence=ack is not None)
            if at + 1 < len(turns):
                turns[at + 1] = turn
            else:
                turns.append(turn)
        return turns

    # -- pieces ---------------------------------------------------------------
    @staticmethod
    def _event_line(rng: random.Random, event: EventPlan) -> str:
        template = rng.choice(event.line_pool)
        if event.kind == "episode":
            return T.fill(template, target=event.target)
        attr = event.attr
        return T.fill(template, value=event.value, new=event.value, old=event.old or "", slot=attr.slot or "",
                      me=event.speaker)

    @staticmethod
    def _ack(rng: random.Random, event: EventPlan) -> str | None:
        if event.kind == "episode" or event.attr is None or rng.random() < 0.5:
            return None
        acks = event.attr.defn.acks.get("change" if event.kind == "change" else "value")
        if not acks:
            return None
        return T.fill(rng.choice(acks), value=event.value, new=event.value)

    @staticmethod
    def _generic_ack(rng: random.Random, ctx: SessionContext, who: str, speaker: str) -> str:
        if ctx.voices[who] == "human":
            return rng.choice(["Got it, thanks.", "Okay, noted.", "Sounds good."])
        return rng.choice(T.GENERIC_ACKS if ctx.voices[speaker] == "human" else T.AGENT_FILLER)

    def _filler(self, rng: random.Random, ctx: SessionContext, order: list[str]) -> list[str]:
        texts: list[str] = []
        first_voice = ctx.voices[order[0]]
        if first_voice == "human":
            topic = rng.choice(T.NOISE_TOPICS)
            opening, reply = topic.ask(ctx.styles[order[0]][0]), topic.reply
        else:
            opening, reply = rng.choice(T.AGENT_NOISE)
        for i, author in enumerate(order):
            voice = ctx.voices[author]
            if i == 0:
                text = opening
            elif i == 1 and voice != "human":
                text = reply
            elif voice == "human":
                text = rng.choice(T.FOLLOW_UPS).ask(ctx.styles[author][0])
            else:
                text = rng.choice(T.AGENT_FILLER if first_voice != "human" else [e.reply for e in T.FOLLOW_UPS])
            texts.append(self._style(rng, ctx, author, text))
        return texts

    @staticmethod
    def _style(rng: random.Random, ctx: SessionContext, author: str, text: str) -> str:
        if ctx.voices[author] != "human":
            return text
        formality, verbosity = ctx.styles[author]
        if rng.random() < 0.35:
            keep = frozenset(ctx.distractor_values) | frozenset(ctx.voices)
            text = T.join_prefix(rng.choice(T.PREFIX[formality]), text, keep)
        if verbosity == "chatty" and rng.random() < 0.3:
            text = T.add_tail(text, rng.choice(T.CHATTER[formality]))
        return text

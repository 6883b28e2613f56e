"""Shared filler text for the template synthesizer (no latent values in here).

Rules the data obeys (tests check them): static text names no value of any
attribute pool, no episode target and never says ``unknown``; entity-specific
lines live with their entity type (:mod:`conformance.world.entities`).
"""

from __future__ import annotations

import re
from typing import NamedTuple

CASUAL, FORMAL = "casual", "formal"


class Exchange(NamedTuple):
    """A principal line in two registers and the assistant's reply."""

    casual: str
    formal: str
    reply: str

    def ask(self, formality: str) -> str:
        return self.casual if formality == CASUAL else self.formal


#: Acknowledgements that name no value (the fact then rests on the principal's line).
GENERIC_ACKS = [
    "Of course. Here's a first draft; tell me what to adjust.",
    "Sure thing. I've kept it short and friendly.",
    "Here are a few options to choose from.",
    "Good question. Here's how I'd approach it.",
    "Happy to help. Let's break it into small steps.",
]

#: Warm-up exchanges before the principal gets to the point (no values).
OPENERS = [
    Exchange("hey, got a sec?", "Good morning. Do you have a moment?", "Of course. What do you need?"),
    Exchange("ok, random question", "I have a question, if I may.", "Sure, go ahead."),
    Exchange("morning!", "Hello again.", "Hi! How can I help today?"),
    Exchange("quick favour?", "May I ask for some help with something?", "Absolutely. What's up?"),
]

#: Follow-up exchanges after the main request, in any session (no values).
FOLLOW_UPS = [
    Exchange("can you make it shorter?", "Could you make it a little shorter?", "Sure, here's a tighter version."),
    Exchange("hmm, explain that bit again?", "Could you explain that part once more?",
             "Of course. Put simply, that step does the heavy lifting."),
    Exchange("ok trying it now", "I will try that now.", "Great, let me know how it goes."),
    Exchange("any other option?", "Is there an alternative?", "Yes: a simpler option is to do it in two steps."),
    Exchange("can you give me an example?", "Could you give me an example?", "Sure, here's a worked example."),
    Exchange("bit less stiff maybe?", "Could you make the tone a little warmer?", "Here's a friendlier take."),
]

#: Exchanges that close a session; at most one, always last (no values).
CLOSERS = [
    Exchange("nice, thanks!", "Thank you, that is helpful.", "Anytime, happy to help."),
    Exchange("that worked!", "That worked, thank you.", "Glad to hear it."),
    Exchange("perfect, that's all for now", "That is everything for today, thank you.", "Have a good one!"),
]

# --- noise sessions --------------------------------------------------------

#: Routine requests and small talk that carry no fact about the principal.
NOISE_TOPICS = [
    Exchange("can you fix my regex? it's meant to match dates but eats everything",
             "Could you help me correct a regular expression? It should match dates but matches too much.",
             "The greedy .* is the culprit. Try a lazy quantifier and anchor the pattern."),
    Exchange("how do i sum a column only where the next column says paid?",
             "How would I sum a column only where the adjacent column says 'paid'?",
             "SUMIF does exactly that: =SUMIF(B:B, \"paid\", A:A)."),
    Exchange("make this email sound less grumpy pls",
             "Could you make this email sound more courteous?",
             "Here's a softer version that keeps your point."),
    Exchange("how many grams is a cup of flour roughly?",
             "Approximately how many grams are in a cup of flour?",
             "About 120 to 125 grams, depending on how it's packed."),
    Exchange("grey and cold again, what a week",
             "It has been rather a grey week.",
             "Weeks like that are hard. A short walk at lunchtime can help."),
    Exchange("need a funny line for my dad's birthday card",
             "Could you suggest a line for my father's birthday card?",
             "How about: 'Another year wiser, and still not asking for directions.'"),
    Exchange("explain compound interest like i'm five",
             "Could you explain compound interest simply?",
             "It's interest that earns its own interest, so savings grow a little faster each year."),
    Exchange("turn these meeting notes into 3 bullets?",
             "Could you condense these meeting notes into three short lines?",
             "Here are three bullets covering the decisions, owners and deadlines."),
    Exchange("what's a good way to make passwords i can remember",
             "What is a sensible approach to memorable passwords?",
             "A passphrase of four unrelated words is long and easy to recall; a password manager helps too."),
    Exchange("give me a riddle to stump my friends",
             "Could you share a good riddle?",
             "What has keys but can't open locks? A keyboard."),
    Exchange("packing for a short trip, what am i forgetting?",
             "Could you check my packing list for a short trip?",
             "Chargers, a spare shirt and any documents to print are the usual misses."),
    Exchange("my basil keeps dying, help",
             "My basil plant keeps wilting. What am I doing wrong?",
             "Usually too much water or too little light; let the soil dry a little between waterings."),
    Exchange("recommend a short novel for a flight?",
             "Could you recommend a short novel for a flight?",
             "Try something under two hundred pages with a strong plot; a classic mystery works well."),
    Exchange("how do i get a wine stain out of a shirt",
             "What is the best way to remove a wine stain from a shirt?",
             "Blot it, rinse with cold water from the back, then treat it with a little dish soap."),
]


#: Routine agent-to-agent or agent log exchanges (coding, crawler, pipelines): no facts.
AGENT_NOISE = [
    ("Routine pass: lint is clean and the formatter changed nothing.", "Acknowledged, nothing to do there."),
    ("Bumped the patch version in the changelog draft.", "Noted."),
    ("Fetched another batch; every page matched its previous checksum.", "Fine, no new content then."),
    ("Queue drained, sleeping until the next window.", "Understood."),
    ("Renamed a local variable in a helper for readability.", "Looks fine."),
    ("Re-ran the nightly job; identical output to yesterday.", "Good, moving on."),
    ("Cleared the temp folder and rotated the logs.", "Thanks."),
    ("Spot-checked a dozen links; all still resolve.", "Great."),
]

#: Follow-up lines for agents in multi-party sessions (no values).
AGENT_FILLER = [
    "Picking that up now.", "Acknowledged.", "I'll report back when it's done.", "Sounds reasonable to me.",
    "No blockers on my side.", "Confirmed, proceeding.", "Makes sense; I'll adjust my part.",
]

#: Style: openers and chatter the synthesizer adds according to formality and verbosity.
PREFIX = {CASUAL: ["", "hey, ", "ok so, ", "quick one: "], FORMAL: ["", "Good morning. ", "Hello again. "]}
CHATTER = {CASUAL: ["Sorry, long week.", "Anyway.", "Haha, you know me."],
           FORMAL: ["I appreciate the help.", "Thank you in advance.", "I hope that is clear."]}

#: Distractor asides: they name a pool value without saying anything about an entity. The value is
#: quoted as a word or title, so any value (a city, "married", "vegetarian") reads naturally.
DISTRACTORS = [
    "Unrelated, but a headline in today's newsletter had \"{value}\" in it.",
    "Side note: the answer to this morning's crossword clue was \"{value}\".",
    "Trivia from the feed: \"{value}\" is a trending search term this week, apparently.",
    "Funny coincidence, a podcast I heard had an episode titled \"{value}\".",
]

_ARTICLE = re.compile(r"(?<![\w'])([Aa]) \{(\w+)\}")
_VOWEL_SOUND = re.compile(r"^(?:[aeiou](?!ni[ct]|ser|su|ro|k|ne\b)|hour|honest)", re.IGNORECASE)


def fill(template: str, **values: str) -> str:
    """``template.format(**values)`` with "a {x}" turned into "an {x}" before a vowel sound."""

    def article(match: re.Match) -> str:
        value = str(values.get(match.group(2), ""))
        word = match.group(1) + ("n" if _VOWEL_SOUND.match(value) else "")
        return f"{word} {{{match.group(2)}}}"
    return _ARTICLE.sub(article, template).format(**values)


_CAPITAL_KEEP = re.compile(r"^(?:I\b|I'|[A-Z][\w'-]*[A-Z0-9])")


def join_prefix(prefix: str, text: str, keep: frozenset[str] = frozenset()) -> str:
    """A greeting prefix before ``text``: after "hey, " or "quick one: " the first letter is lower-cased
    unless it starts "I", an acronym, or a word of ``keep`` (names and values)."""
    if not prefix or not text or prefix.rstrip()[-1:] not in ",:" or not text[0].isupper():
        return prefix + text
    first = re.match(r"[\w'-]+", text)
    if _CAPITAL_KEEP.match(text) or (first and any(text.startswith(k) for k in keep if k[:1].isupper())):
        return prefix + text
    return prefix + text[0].lower() + text[1:]


def add_tail(text: str, tail: str) -> str:
    """``text`` followed by a chatty tail, with a full stop in between when ``text`` has none."""
    text = text.rstrip()
    if text and text[-1] not in ".!?)\"'":
        text += "."
    return f"{text} {tail}"

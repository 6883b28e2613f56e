"""Composable session content for the template synthesizer (corpus 2.x), built on faker.

Every session of every tier is made of the same parts: requests, questions, plans, other
people's news, hypotheticals, one-off episodes, pasted text, numbered steps, drafts, tables,
code, tool output and page extracts. Each part is a small grammar whose slots are filled
from :mod:`faker` (names, companies, places, jobs, domains, paths, catch phrases) and from
numbers drawn on the spot, so almost no sentence recurs verbatim; what does recur (a frame
such as "told me:", a step verb) recurs in every tier alike.

**Decoys** (:meth:`Content.decoy`) name a value of some attribute's pool without changing
any latent state: someone else's news, a quoted line of someone else, a hypothetical, a
question, a superseded state, an aside. They occur in every tier at the same rate (the
synthesizer draws how many before it knows the tier); a noise session carries one more,
a quoted attribute line, in place of the event line an event session carries. This is a
written departure from DRIFT §3.5, where noise carries "no novel information": real noise
carries plenty of it, just nothing durable about the entity.

Byte identity: faker is pinned exactly (``faker==`` in the package dependencies; its version
is written into the ledger). Each session seeds one faker instance from the generator's own
PRNG, and no provider that reads the clock is used (dates are built from numbers here).

Rules the parts obey (the synthesizer checks them, tests check the synthesizer): a part
never names a value of any attribute pool, an episode target, a relationship slot, an
entity id of the scenario, "unknown", or anything shaped like a session marker code; a part
that would is drawn again (:meth:`Content.clean`).
"""

from __future__ import annotations

import functools
import random
import re
from dataclasses import dataclass

import faker as _faker_pkg
from faker import Faker


# The session marker's shape (conformance.world.markers.CODE_PATTERN; markers imports this package).
_CODE = re.compile(r"(?<!\w)[A-Z]{2}[0-9]{4}(?!\w)")

FAKER_VERSION = _faker_pkg.VERSION
"""The faker release the corpus was generated with (pinned with ``==``; recorded in the ledger)."""

def content_libraries() -> dict:
    """What the ledger records of the content libraries the generator draws on."""
    return {"faker": {"version": FAKER_VERSION, "licence": "MIT", "source": "https://pypi.org/project/Faker/",
                      "use": "names, companies, places, jobs, domains, paths, catch phrases and its English word "
                             "list, drawn into per-locale pools (seed 0) at generation time; nothing is fetched"}}


PUBLIC_LOCALE = "en_US"
#: Locales a sealed holdout may draw its surface from (English, so the reader and values still read).
SEALED_LOCALES = ("en_GB", "en_IE", "en_NZ", "en_IN", "en_US")


@dataclass(frozen=True)
class Surface:
    """What selects the wording: a faker locale and a variant that keeps a subset of each frame list.

    The public corpus uses :data:`PUBLIC` (en_US, every frame). A sealed holdout derives
    its surface from the secret (:func:`surface_for`), so its names, places and phrasing
    are not the public corpus's: a filter tuned on the public frames or faker's en_US data
    loses its grip there.
    """

    locale: str = PUBLIC_LOCALE
    variant: int = 0

    def pick(self, items: tuple, salt: str) -> tuple:
        """``items`` for the public surface; a deterministic ~2/3 subset (at least 2) for a variant."""
        if self.variant == 0 or len(items) <= 2:
            return items
        rng = random.Random(f"surface:{self.variant}:{salt}")
        keep = [x for x in items if rng.random() < 0.67]
        return tuple(keep) if len(keep) >= 2 else tuple(items[:2])


PUBLIC = Surface()


def surface_for(seed: int) -> Surface:
    """A sealed holdout's surface from its (secret-derived) generator seed."""
    rng = random.Random(f"drift-surface:{seed}")
    return Surface(locale=rng.choice(SEALED_LOCALES), variant=rng.randrange(1, 2**31))


#: How many of each kind of faker value a locale's pool holds (drawn once per process, seed 0).
POOL_SIZE = 400
_KINDS = ("first_name", "last_name", "name", "company", "city", "street_name", "job", "bs", "catch_phrase",
          "domain_name", "uri_path", "hostname")


@functools.lru_cache(maxsize=8)
def pools(locale: str) -> dict[str, tuple[str, ...]]:
    """Faker values per kind for ``locale``: :data:`POOL_SIZE` draws each with faker seeded 0 (so the
    same faker release gives the same pools everywhere), plus faker's English word list (``word``)."""
    fake = Faker(locale)
    fake.seed_instance(0)
    out = {kind: tuple(str(getattr(fake, kind)()) for _ in range(POOL_SIZE)) for kind in _KINDS}
    # Pronouns of the first and second person left out: pasted filler text speaks of nobody.
    out["word"] = tuple(w for w in Faker("en_US").get_words_list() if w.casefold() not in _PERSONAL)
    return out


_PERSONAL = frozenset("i me my mine myself we us our ours ourselves you your yours yourself".split())


class PoolFaker:
    """The faker methods the parts use, drawing from :func:`pools` with the session's own PRNG
    (faker's weighted draws are slow; the values are faker's, the choice is ours)."""

    def __init__(self, locale: str, rng: random.Random):
        self._pools = pools(locale)
        self._rng = rng

    def __getattr__(self, kind: str):
        pool = self._pools.get(kind)
        if pool is None:
            raise AttributeError(kind)
        return lambda: self._rng.choice(pool)

    def sentence(self, nb_words: int = 8) -> str:
        words = self._rng.choices(self._pools["word"], k=max(1, nb_words))
        return " ".join(words).capitalize() + "."


# --- word lists (no pool value, entity id or episode target in here; tests check) -------------

DOCS = ("quarterly summary", "invitation", "cover letter", "budget sheet", "meeting agenda", "newsletter",
        "grant summary", "onboarding guide", "incident write-up", "product description", "reference letter",
        "volunteer rota", "trip itinerary", "landlord email", "complaint letter", "speech outline", "price list",
        "course syllabus", "fundraising page", "press note", "handover doc", "insurance claim", "job ad")
VERBS = ("draft", "tidy up", "shorten", "check", "summarise", "restructure", "proofread", "outline", "rework",
         "translate into plain English", "tighten", "fact-check", "reformat")
CONSTRAINTS = ("it has to stay under {n} words", "it goes out by {day}", "{name} wants it within {n} days",
               "keep the figures from the {n} sheet", "it must fit on one page", "there are {n} people on the list",
               "the budget line is {money}", "it's due {day} at {hour}", "{company} will read it first")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "tomorrow", "the weekend",
        "end of the month", "next week")
HOWTOS = ("split a bill fairly between {n} people", "read a gas meter", "write a polite reminder email",
          "get a refund from {company}", "plan {n} hours of revision", "calculate {n} percent of {money}",
          "fix a squeaky door hinge", "keep {n} browser tabs under control", "back up a phone",
          "convert {n} miles to kilometres", "ask for a deadline extension", "negotiate a lower rent",
          "organise {n} years of photos", "write a short bio", "prepare for a {n}-minute presentation")
NEWS = ("just got promoted to {job} at {company}", "is starting as {job} at {company} next month",
        "bought a flat on {street}", "ran {n} kilometres for charity", "is organising a reunion for {n} people",
        "finally finished the {doc}", "won a raffle at {company}", "left {company} after {n} years",
        "moved to {place}", "opened a small shop on {street}", "is retraining as {job}",
        "lost a bet and owes everyone {money}", "is getting a dog, apparently", "had {n} interviews in one week",
        "started a podcast about {phrase}", "is taking {n} weeks off to travel")
FRAMES_SAID = ("told me", "wrote in the group chat", "posted this morning", "said on the call",
               "mentioned over lunch", "texted", "put it in the newsletter", "said, word for word")
EPISODES = ("the printer jammed {n} times and I gave up", "I waited {n} minutes on hold with {company}",
            "my train was {n} minutes late, again", "I locked myself out and had to call {name}",
            "the neighbour's alarm went off at {hour}", "I spilled coffee over {n} pages of notes",
            "I found {money} in an old coat", "a parcel for {name} arrived at my door",
            "the heating broke for {n} hours", "I sat through a {n}-hour workshop on {phrase}")
PLANS = ("On {day} I'm meeting {name} at {place} around {hour}.", "I have {n} calls lined up before {day}.",
         "{name} and I are going to look at {street} on {day}.", "Thinking of booking {n} nights away after {day}.",
         "I'm due at {company} on {day} for a {n}-minute chat.",
         "Planning to clear {n} items off my list by {day}.")
HYPOS = ("If {company} offered me a {job} role, would {n} hours of commute a week be worth it?",
         "Say I had {money} spare: would you pay off a card or save it?",
         "Suppose {name} asks me to cover {n} shifts, how do I say no nicely?",
         "What if I took {n} weeks off in one go, how would you plan the handover?",
         "If I moved the meeting with {name} to {day}, who would I need to tell?")
QUESTIONS = ("How do I {howto}?", "Quick question: how would you {howto}?", "Is there a good way to {howto}?",
             "What's the simplest way to {howto}?", "Can you walk me through how to {howto}?")
ASKS = ("Can you help me {verb} the {doc} for {company}?", "Could you {verb} this {doc}? {constraint}.",
        "I need to {verb} the {doc} before {day}.", "Would you {verb} my {doc}? {constraint}.",
        "Help me {verb} a {doc} for {name}, please.", "Please {verb} the {doc} again; {constraint}.")
STEP_VERBS = ("Collect", "List", "Check", "Group", "Sort", "Draft", "Send", "Compare", "Mark", "Count", "Review",
              "Move", "Archive", "Confirm", "Split")
STEP_OBJECTS = ("the open items", "the receipts from {company}", "the {n} names on the list", "the figures for {day}",
                "every reply from {name}", "the old drafts", "the costs above {money}", "the notes from {place}",
                "the {n} longest paragraphs", "the dates that clash", "the questions for {name}")
STEP_TAILS = ("so nothing gets lost", "and note who owns each", "before {day}", "in one column",
              "by how urgent they are", "and drop the duplicates", "so {name} can sign off",
              "in under {n} minutes", "with the totals at the bottom", "")
EXPLAIN = ("The main cost is usually {phrase}, so start there.", "Most people underestimate it by about {n} percent.",
           "{company} publishes a template for this, which saves {n} minutes or so.",
           "A common trick is to batch it: {n} at a time, then a short break.",
           "If {name} needs a copy, send it as a PDF so the layout holds.",
           "Keep one master copy and date every version.", "The tricky part is {phrase}; the rest is routine.",
           "Around {n} items is where a list stops being readable.")
CODE_NOUNS = ("record", "row", "item", "payload", "chunk", "ticket", "invoice", "reading", "event", "order")
CODE_VERBS = ("parse", "load", "merge", "filter", "normalise", "group", "dedupe", "score", "render", "export")
PAST = {"parse": "parsed", "load": "loaded", "merge": "merged", "filter": "filtered", "normalise": "normalised",
        "group": "grouped", "dedupe": "deduped", "score": "scored", "render": "rendered", "export": "exported"}
LOG_LEVELS = ("INFO", "INFO", "INFO", "DEBUG", "WARN")
HTTP = ("GET", "GET", "GET", "HEAD", "POST")
STATUS = ("200", "200", "200", "301", "304", "404")
TOOL_INTROS = ("Output of the last run:", "Here's what the tool printed:", "Log excerpt:", "Tail of the job log:",
               "Run finished; summary below.", "Raw output, trimmed:")
PAGE_INTROS = ("Extract from {url}:", "Text on {url}, first paragraph:", "Pulled this from {url}:",
               "Cached copy of {url} reads:")
AGENT_NOTES = ("Picked up ticket {ticket}: {phrase}.", "Ticket {ticket} closed; it was {phrase}.",
               "Benchmarked {fn}: {n} ms median over {m} runs.", "Reviewed {n} files touching {fn}; no change needed.",
               "Queued {n} jobs for {host}; {m} finished.", "Synced {n} rows from the {company} feed.",
               "Retried {fn} {n} times before it went through.", "Split {fn} into {m} smaller helpers.",
               "Bumped the timeout on {host} to {n} seconds.", "Wrote {n} lines of notes on {phrase}.")
AGENT_REPLIES = ("Makes sense, I'll fold that into {fn}.", "Seen; {n} of mine depend on it.",
                 "Fine by me, I'll check {host} after.", "I can take {ticket} if nobody has it.",
                 "No conflict with my branch, {n} files apart.", "Got it; rerunning {fn} now.")
ACKS_HUMAN = ("That helps, thanks.", "Okay, makes sense.", "Got it.", "Right, I'll try that.", "Perfect.",
              "Hm, fair enough.", "Nice, that's clearer.", "Okay, noted.")
ACKS_AGENT = ("Done; the notes are updated.", "Understood.", "Will do.", "Noted, continuing.", "Sounds right to me.",
              "On it.")

#: Decoy frames around an attribute value ``{v}`` with its label ``{label}``: none says anything about
#: an entity of the scenario (someone else, a hypothetical, a question, an aside).
VALUE_DECOYS = (
    "{name}'s {label} is {v}, apparently.", "For {name} it's {v}, not for me.",
    "Just curious: do many people end up with {v} as their {label}?",
    "Hypothetically, what would change if the {label} were {v}?",
    "The {company} newsletter had a whole piece on {v} this week.",
    "{name} keeps going on about {v}; I just nod along.",
    "Someone in the queue was talking about {v} for ages.",
    "A poster on {street} said \"{v}\" in huge letters.",
    "{name} asked me what I thought of {v}. No idea, honestly.",
    "At {company} they picked {v} as their {label}, for what it's worth.",
    "Saw a thread comparing {v} with the alternatives; {n} replies and no conclusion.",
    "Not my thing, but {name} swears by {v}.",
)
AGENT_DECOYS = (
    "FYI, the {company} fork uses {v} for its {label}; not relevant to us.",
    "Ticket {ticket} from another team asks about {v}; I left it for them.",
    "A blog post on {url} argues for {v} as the {label}; skimmed it, nothing actionable.",
    "Hypothetically, switching the {label} to {v} would touch about {n} files. Not proposing it.",
    "The sample project in the docs shows {v}; ignore that, it's just a demo.",
    "Someone on the {company} forum asked whether {v} is a sensible {label}.",
)
EPISODE_DECOYS = ("{name} has a <target> coming up on {day}.", "{name}'s <target> got moved to {day}.",
                  "No <target> for me, thankfully; {name} is dreading theirs.",
                  "Read a piece on {url} about how to prepare for a <target>.",
                  "If I ever have a <target>, remind me to block {n} days for it.")
SUPERSEDED = ("Back before all that, it used to be {v}.", "Funny to think it was {v} not that long ago.",
              "Old notes still say {v}, which is out of date.")
#: Frames a quoted line of someone else goes in (the line keeps its first person: it is theirs).
QUOTE_FRAMES = ("{name} {said}: \"{line}\"", "{name} {said}, and I quote: \"{line}\"",
                "{name}, earlier: \"{line}\"", "Overheard at {company}: \"{line}\"",
                "{name} {said} \"{line}\" and then changed the subject.")
#: Frames the speaker quotes their own words in (an event line may go in one, as quoted news does).
SELF_FRAMES = ("I {said_to} {name}: \"{line}\"", "What I sent {name} earlier: \"{line}\"",
               "Copying what I wrote to {name}: \"{line}\"", "I put it like this to {name}: \"{line}\"",
               "My note to {name} said: \"{line}\"")
SAID_TO = ("told", "wrote to", "texted", "messaged", "emailed", "said to")


@functools.lru_cache(maxsize=64)
def forbidden_pattern(entity_ids: tuple[str, ...]) -> re.Pattern:
    """Whole-word, case-insensitive pattern of what no content part may name: every value of every
    attribute pool and team decision, every relationship slot and episode target of every entity
    type, "unknown", and the scenario's entity ids (longest first, so a longer value wins)."""
    from conformance.world.entities import REGISTRY
    from conformance.world.entities.team import DECISIONS

    words: set[str] = {"unknown", *entity_ids}
    for cls in REGISTRY.values():
        words.update(cls.episodes)
        for defn in cls.attributes:
            words.update(defn.pool)
            words.update(defn.slots)
    for defn in DECISIONS:
        words.update(defn.pool)
    return re.compile(r"(?<!\w)" + _trie_regex(sorted({w.casefold() for w in words})) + r"(?!\w)", re.IGNORECASE)


def _trie_regex(words: list[str]) -> str:
    """One alternation of ``words`` as a prefix trie (the regex engine then tries one branch per
    character, not every word at every position); a longer word wins over its prefix, as the
    reader's whole-word matching needs (the caller adds the word boundaries)."""
    trie: dict = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def walk(node: dict) -> str:
        ends = "" in node
        branches = [re.escape(ch) + walk(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if ends else body
    return walk(trie)


def _fmt(template: str, values: dict) -> str:
    return template.format_map(values)


class Content:
    """The parts of one session: ``Content(rng, surface, forbid)`` draws faker values with ``rng``.

    ``forbid``: a compiled pattern of what no part may name (see the module docstring).
    """

    def __init__(self, rng: random.Random, surface: Surface, forbid: re.Pattern):
        self.rng = rng
        self.surface = surface
        self.forbid = forbid
        self.fake = PoolFaker(surface.locale, rng)

    # -- slot values -----------------------------------------------------------------
    def pick(self, items: tuple, salt: str):
        return self.rng.choice(self.surface.pick(items, salt))

    def slots(self) -> dict:
        f, r = self.fake, self.rng
        n = r.choice((r.randint(2, 9), r.randint(10, 60), r.randint(61, 500)))
        return _Slots(self, n=n, m=r.randint(2, 40))

    def fill(self, template: str) -> str:
        return _fmt(template, self.slots())

    def clean(self, make, tries: int = 6) -> str:
        """``make()`` until its text names nothing forbidden; "" when every try did."""
        return self.clean_except(make, (), tries)

    def clean_except(self, make, allowed: tuple[str, ...], tries: int = 6) -> str:
        """``make()`` until its text names nothing forbidden but the ``allowed`` strings; "" when every
        try did."""
        ok = {a.casefold() for a in allowed}
        for _ in range(tries):
            text = make()
            if _CODE.search(text):
                continue
            if all(m.group(0).casefold() in ok for m in self.forbid.finditer(text)):
                return text
        return ""

    def episode_decoy(self, target: str) -> str:
        """Someone else's (or a hypothetical) ``target``: names it, dates nothing of the scenario's."""
        return self.fill(self.pick(EPISODE_DECOYS, "epd")).replace("<target>", target)

    # -- human parts ---------------------------------------------------------------------
    def human_part(self) -> str:
        kind = self.rng.choices(("ask", "question", "news", "plan", "episode", "hypo", "paste"),
                                weights=(5, 3, 3, 2, 2, 1, 2))[0]
        return self.clean(lambda: getattr(self, f"_h_{kind}")())

    def _h_ask(self) -> str:
        return self.fill(self.pick(ASKS, "ask"))

    def _h_question(self) -> str:
        return self.fill(self.pick(QUESTIONS, "q"))

    def _h_news(self) -> str:
        s = self.slots()
        line = s["name"] + " " + _fmt(self.pick(NEWS, "news"), s) + "."
        if self.rng.random() < 0.4:
            return self.quoted(line)
        return line

    def _h_plan(self) -> str:
        return self.fill(self.pick(PLANS, "plan"))

    def _h_episode(self) -> str:
        when = self.rng.choice(("Yesterday", "This morning", "Last night", "On the way in", "Earlier"))
        return f"{when} {self.fill(self.pick(EPISODES, 'ep'))}."

    def _h_hypo(self) -> str:
        return self.fill(self.pick(HYPOS, "hypo"))

    def _h_paste(self) -> str:
        f = self.fake
        body = " ".join(f.sentence(nb_words=self.rng.randint(6, 16)) for _ in range(self.rng.randint(2, 6)))
        return self.rng.choice(("Here's the text so far:", "Pasting what I have:", "This is the current version:",
                                "The original reads:")) + f" \"{body}\""

    # -- assistant parts ------------------------------------------------------------------
    def assistant_part(self) -> str:
        kind = self.rng.choices(("steps", "explain", "draft", "table", "code"), weights=(4, 4, 2, 2, 1))[0]
        return self.clean(lambda: getattr(self, f"_a_{kind}")())

    def _step(self) -> str:
        s = self.slots()
        tail = _fmt(self.rng.choice(STEP_TAILS), s)
        return f"{self.rng.choice(STEP_VERBS)} {_fmt(self.rng.choice(STEP_OBJECTS), s)}" + (f" {tail}" if tail else "")

    def _a_steps(self) -> str:
        count = self.rng.randint(3, 7)
        head = self.rng.choice(("Here's a plan:", "I'd do it in this order:", "Steps:", "Try this:",
                                "A workable sequence:"))
        return head + "\n" + "\n".join(f"{i}. {self._step()}." for i in range(1, count + 1))

    def _a_explain(self) -> str:
        return " ".join(self.fill(self.pick(EXPLAIN, "ex")) for _ in range(self.rng.randint(2, 4)))

    def _a_draft(self) -> str:
        f, s = self.fake, self.slots()
        body = " ".join(f.sentence(nb_words=self.rng.randint(8, 18)) for _ in range(self.rng.randint(3, 7)))
        return (f"Draft:\n\nDear {s['name']},\n\n{body}\n\n{self.rng.choice(('Best', 'Kind regards', 'Thanks'))},\n"
                f"{s['other']}")

    def _a_table(self) -> str:
        f = self.fake
        rows = [f"| {f.last_name()} | {f.company()} | {self.rng.randint(1, 999)} | {self.rng.randint(1, 28)}/"
                f"{self.rng.randint(1, 12)} |" for _ in range(self.rng.randint(3, 8))]
        return "| Name | Company | Amount | Due |\n|---|---|---|---|\n" + "\n".join(rows)

    def _a_code(self) -> str:
        return self._code()

    # -- agent and tool parts ------------------------------------------------------------
    def agent_part(self) -> str:
        kind = self.rng.choices(("note", "code", "log", "page", "tests"), weights=(4, 3, 3, 2, 2))[0]
        return self.clean(lambda: getattr(self, f"_g_{kind}")())

    def agent_reply(self) -> str:
        return self.clean(lambda: self.fill(self.pick(AGENT_REPLIES, "ar")))

    def _g_note(self) -> str:
        return " ".join(self.fill(self.pick(AGENT_NOTES, "an")) for _ in range(self.rng.randint(1, 3)))

    def _g_code(self) -> str:
        return self._code()

    def _g_log(self) -> str:
        f, r = self.fake, self.rng
        lines = []
        hh, mm = r.randint(0, 23), r.randint(0, 59)
        for _ in range(r.randint(4, 14)):
            mm = (mm + r.randint(0, 3)) % 60
            if r.random() < 0.5:
                lines.append(f"{hh:02d}:{mm:02d}:{r.randint(0, 59):02d} {r.choice(HTTP)} https://{f.domain_name()}/"
                             f"{f.uri_path()} {r.choice(STATUS)} {r.randint(200, 90000)}B {r.randint(3, 1500)}ms")
            else:
                lines.append(f"{hh:02d}:{mm:02d}:{r.randint(0, 59):02d} {r.choice(LOG_LEVELS)} "
                             f"{f.word()}.{self._ident()}: {PAST[r.choice(CODE_VERBS)]} {r.randint(1, 5000)} "
                             f"{r.choice(CODE_NOUNS)}s in {r.randint(1, 999)} ms")
        return r.choice(TOOL_INTROS) + "\n" + "\n".join(lines)

    def _g_page(self) -> str:
        f = self.fake
        body = " ".join(f.sentence(nb_words=self.rng.randint(8, 20)) for _ in range(self.rng.randint(2, 6)))
        intro = _fmt(self.rng.choice(PAGE_INTROS), {"url": f"https://{f.domain_name()}/{f.uri_path()}"})
        return f"{intro} \"{f.catch_phrase()}. {body}\""

    def _g_tests(self) -> str:
        r = self.rng
        failed = r.choice((0, 0, 0, 1, 2))
        names = [f"test_{self._ident()}" for _ in range(r.randint(2, 6))]
        body = "\n".join(f"{n} {'PASSED' if i >= failed else 'FAILED'} ({r.randint(1, 900)} ms)"
                         for i, n in enumerate(names))
        return (f"{r.choice(TOOL_INTROS)}\n{body}\n{r.randint(20, 900)} passed, {failed} failed, "
                f"{r.randint(0, 12)} skipped in {r.randint(2, 300)}.{r.randint(0, 9)}s")

    # -- shared -----------------------------------------------------------------------------
    def _ident(self) -> str:
        return f"{self.rng.choice(CODE_VERBS)}_{self.fake.word()}"

    def _code(self) -> str:
        r, f = self.rng, self.fake
        noun = r.choice(CODE_NOUNS)
        fn = self._ident()
        field_a, field_b = f.word(), f.word()
        limit = r.randint(2, 500)
        lines = [f"def {fn}({noun}s, limit={limit}):",
                 f"    \"\"\"{f.sentence(nb_words=r.randint(5, 10))}\"\"\"",
                 "    out = []",
                 f"    for {noun} in {noun}s:",
                 f"        if {noun}.get(\"{field_a}\") is None:",
                 "            continue",
                 f"        out.append(({noun}[\"{field_a}\"], {noun}.get(\"{field_b}\", {r.randint(0, 99)})))",
                 "        if len(out) >= limit:",
                 "            break",
                 "    return out"]
        intro = r.choice(("Something like this:", "Here's a version:", "Sketch:", "Patch below:", "Current code:"))
        return f"{intro}\n```python\n" + "\n".join(lines) + "\n```"

    def ack(self, human: bool) -> str:
        return self.rng.choice(ACKS_HUMAN if human else ACKS_AGENT)

    # -- decoys ----------------------------------------------------------------------------
    def decoy(self, value: str, label: str, agent: bool, stale: bool = False) -> str:
        """One sentence naming ``value`` that changes nothing (``stale``: a superseded-state frame)."""
        s = self.slots()
        s.update(v=value, label=label)
        if stale:
            template = self.pick(SUPERSEDED, "sup")
        else:
            pool = AGENT_DECOYS + VALUE_DECOYS[:4] if agent else VALUE_DECOYS
            template = self.pick(pool, "dec")
        return _fmt(template, s)

    def quoted_news(self, own: bool | None = None) -> str:
        """Someone's news (no value) quoted in someone else's frame or, ``own``, the speaker's (None:
        either, evenly): the frames every tier carries."""
        own = self.rng.random() < 0.5 if own is None else own

        def make() -> str:
            s = self.slots()
            line = s["other"] + " " + _fmt(self.pick(NEWS, "news"), s) + "."
            return self.self_quoted(line) if own else self.quoted(line)
        return self.clean(make)

    def self_quoted(self, line: str) -> str:
        """``line`` as the speaker's own words, sent to someone else."""
        s = self.slots()
        s["line"] = line
        return _fmt(self.pick(SELF_FRAMES, "sf"), s)

    def quoted(self, line: str) -> str:
        """Someone else's line, in their words: it names a value but changes nothing here."""
        s = self.slots()
        s["line"] = line
        return _fmt(self.pick(QUOTE_FRAMES, "qf"), s)


class _Slots(dict):
    """Slot values drawn lazily (only the slots a template names consume randomness)."""

    def __init__(self, content: Content, **given):
        super().__init__(**given)
        self.content = content

    def __missing__(self, key: str):
        c, f, r = self.content, self.content.fake, self.content.rng
        if key == "name" or key == "other":
            value = f.first_name() if r.random() < 0.5 else f.name()
        elif key == "company":
            value = f.company()
        elif key == "place":
            value = f.city()
        elif key == "street":
            value = f.street_name()
        elif key == "job":
            value = f.job().split(",")[0]
        elif key == "day":
            value = r.choice(DAYS)
        elif key == "hour":
            value = f"{r.randint(7, 21)}:{r.choice(('00', '15', '30', '45'))}"
        elif key == "money":
            value = f"{r.choice(('$', '£', '€'))}{r.randint(5, 4000)}"
        elif key == "doc":
            value = r.choice(DOCS)
        elif key == "verb":
            value = r.choice(VERBS)
        elif key == "constraint":
            value = _fmt(r.choice(CONSTRAINTS), self)
            value = value[:1].upper() + value[1:]
        elif key == "howto":
            value = _fmt(r.choice(HOWTOS), self)
        elif key == "phrase":
            value = f.bs()
        elif key == "said":
            value = r.choice(FRAMES_SAID)
        elif key == "said_to":
            value = r.choice(SAID_TO)
        elif key == "ticket":
            value = f"{r.choice(('OPS', 'DEV', 'WEB', 'DATA', 'INFRA'))}-{r.randint(10, 9999)}"
        elif key == "fn":
            value = c._ident()
        elif key == "host":
            value = f.hostname()
        elif key == "url":
            value = f"https://{f.domain_name()}/{f.uri_path()}"
        else:
            raise KeyError(key)
        self[key] = value
        return value

"""The human principal (DRIFT §3.2.1): stable attributes, mutable state, events, style."""

from __future__ import annotations

import random
from typing import Literal

from pydantic import Field, field_validator

from conformance.contract.fixture import Id
from conformance.world.entities.base import ActionDef, AttributeDef, EntityType, SpecModel, register

EVENT_KINDS: dict[str, tuple[str, ...]] = {
    "job_change": ("employer",),
    "relocation": ("city",),
    "relationship_change": ("relationship",),
    "opinion_shift": ("cuisine", "drink", "reply_style"),
    "habit_form": ("hobby",),
    "diet_change": ("diet",),
    "health_event": (),
}


def check_event_kinds(value: dict[str, float], allowed: dict[str, tuple[str, ...]]) -> dict[str, float]:
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        raise ValueError(f"unknown event kind {unknown[0]!r}; expected one of {sorted(allowed)}")
    if any(w < 0 for w in value.values()):
        raise ValueError("event weights must be >= 0")
    return value


class BigFive(SpecModel):
    O: float = Field(ge=0, le=1)
    C: float = Field(ge=0, le=1)
    E: float = Field(ge=0, le=1)
    A: float = Field(ge=0, le=1)
    N: float = Field(ge=0, le=1)


class CommunicationStyle(SpecModel):
    verbosity: Literal["terse", "chatty"] | None = None
    formality: Literal["casual", "formal"] | None = None


class HumanProfile(SpecModel):
    big_five: BigFive | None = None
    cultural_background: str | None = None
    core_values: list[str] = []
    long_term_goals: list[str] = []
    communication_style: CommunicationStyle | None = None
    event_distribution: dict[str, float] = {}

    @field_validator("event_distribution")
    @classmethod
    def _kinds(cls, value: dict[str, float]) -> dict[str, float]:
        return check_event_kinds(value, EVENT_KINDS)


class HumanSpec(SpecModel):
    id: Id
    type: Literal["human"]
    profile: HumanProfile = HumanProfile()


def _fact(name, label, pool, kind, disclose, mention, queries, change=(), **kw) -> AttributeDef:
    lines = {"disclose": tuple(disclose), "mention": tuple(mention)}
    if change:
        lines["change"] = tuple(change)
    return AttributeDef(name=name, label=label, pool=tuple(pool), kind=kind, lines=lines, queries=tuple(queries),
                        changeable=bool(change), **kw)


ATTRIBUTES = (
    _fact("employer", "employer",
          ["Globex", "Initech", "Hooli", "Vandelay", "Northwind", "Tyrell", "Cyberdyne", "Wonka"], "fact",
          ["Can you help me word a message to my team lead? Everyone at {value} replies super fast and I don't "
           "want to look slow.",
           "My department at {value} wants a more consistent weekly report. Could you draft a template?",
           "Another all-hands at {value} today. Give me three questions so I look involved?"],
          ["Payroll at {value} messed up my expenses again. How do I ask for a fix politely?",
           "My colleagues at {value} asked me to run the retrospective. Any agenda ideas?"],
          ["Who does {subject} currently work for?", "Which company has {subject} on its payroll these days?"],
          change=["So I finally left {old}! I signed with {new} and start Monday. Help me write a goodbye note?",
                  "Goodbye {old}, hello {new}: my first week in the new job is a lot. How do people learn forty "
                  "new names?"],
          acks={"value": ("Here's a version that should suit how things run at {value}.",),
                "change": ("Congratulations on joining {new}! Here's a plan for your first weeks.",)}),
    _fact("city", "home city",
          ["Lisbon", "Denver", "Osaka", "Toronto", "Edinburgh", "Melbourne", "Austin", "Nairobi"], "fact",
          ["The trams in {value} are on strike again. What's the quickest way to reschedule my morning?",
           "Could you suggest weekend day trips? I live in {value} and want to get out more."],
          ["Rain all week in {value}. Indoor ideas for the weekend?",
           "Walked along the river in {value} after work. Any good podcasts for long walks?"],
          ["In which city is {subject}'s home right now?", "Where does {subject} reside at present?"],
          change=["Boxes everywhere: we moved from {old} to {new} last week. What should I sort out first?",
                  "Leaving {old} was hard, but I signed a lease in {new} yesterday. Checklist for changing my "
                  "address?"],
          acks={"value": ("Noted. I'll keep {value} in mind for local suggestions.",),
                "change": ("Welcome to {new}! Here's a checklist to get settled.",)}),
    _fact("cuisine", "favourite food",
          ["Thai", "Italian", "Mexican", "Ethiopian", "Lebanese", "Peruvian", "Vietnamese", "Georgian"],
          "preference",
          ["I could eat {value} food every night. Can you plan a dinner for six?",
           "My favourite is {value}, hands down. Suggest a birthday dinner menu?"],
          ["Tried another {value} place last night and loved it. How do I find more like it?",
           "Cooking {value} again tonight. Can you scale this recipe for four?"],
          ["What food does {subject} enjoy most?", "Which kind of cooking does {subject} like best?"],
          change=["Honestly I've gone off {old} food; lately I only crave {new}. Suggest a few dishes?",
                  "Funny, I used to swear by {old}, but {new} is my favourite food by far now. Weeknight recipes?"],
          action="preference_driven", choice="a {value} restaurant"),
    _fact("drink", "usual drink",
          ["espresso", "green tea", "flat white", "kombucha", "hot chocolate", "yerba mate", "cold brew"],
          "preference",
          ["I can't start the day without a {value}. Can you plan a morning routine around it?",
           "Whenever I sit down to work I grab a {value}. How do I keep my desk tidy?"],
          ["Third {value} of the day, whoops. How do I cut back a little?",
           "Made a {value} and burnt my tongue again. Why am I like this?"],
          ["What does {subject} usually like to drink?", "What is {subject}'s go-to beverage?"],
          change=["I quit {old} and switched to {new}. Any tips for the first week?",
                  "No more {old} for me; it's {new} every morning now. Where do I buy the good stuff?"],
          action="preference_driven", choice="{value} served on arrival"),
    _fact("hobby", "pastime",
          ["bouldering", "pottery", "chess", "birdwatching", "sailing", "woodworking", "knitting", "fencing"],
          "fact",
          ["Could you find me a weekend class? I've been into {value} for years.",
           "Spent all Sunday on {value} again. How do I stop losing track of time?"],
          ["My {value} group meets on Thursdays and I keep missing it. Reminder ideas?",
           "Could you help me budget for {value} gear this year?"],
          ["What does {subject} do in free time at the moment?", "Which pastime occupies {subject} lately?"],
          change=["I kind of fell out of love with {old}. These days it's all {new}. Beginner tips?",
                  "Gave up {old} last month and signed up for {new} instead. How do I practise between classes?"]),
    _fact("diet", "dietary rule",
          ["vegetarian", "vegan", "pescatarian", "halal", "kosher", "gluten-free"], "constraint",
          ["Can you find a lunch spot near work? It has to be {value} for me.",
           "Planning a picnic; remember I eat {value} only. What should I pack?"],
          ["Another work dinner with nothing {value} on the menu. How do I raise it nicely?",
           "Found a great {value} bakery today. Can you help me plan a brunch?"],
          ["What dietary restriction does {subject} follow?", "Which eating rule does {subject} keep?"],
          change=["My doctor talked me out of eating {old}; I'm {new} now. Can you adjust my meal plan?"],
          action="constraint_aware", choice="a fully {value} menu", negative_ok=True),
    _fact("reply_style", "preferred answer format",
          ["bullet points", "numbered steps", "one short paragraph", "comparison tables", "plain prose",
           "Q&A format"], "style",
          ["Small request: please give me answers as {value} from now on, it's easier on my phone.",
           "Could you always answer me in {value}? I skim a lot."],
          ["Again, {value} please; that's what works for me.",
           "Reminder: {value}, not walls of text."],
          ["How does {subject} like answers laid out?"],
          change=["Forget the {old}; I'd rather have {new} these days."],
          action="style_adaptive", choice="a draft written as {value}"),
    _fact("relationship", "relationship",
          ["dating", "engaged", "married", "separated", "divorced"], "relationship",
          ["{slot} and I have been {value} for a while now. Gift ideas for our anniversary?",
           "Family dinner with {slot} on Sunday, and yes, we're {value}. How do I survive the questions?"],
          ["Quick update on {slot}: still {value}. How do I keep weekends calm?"],
          ["How do things stand between {subject} and {slot}?", "What is the status of {subject}'s bond with {slot}?"],
          change=["Big news about {slot}: we were {old}, and now we're {new}. How do I tell my parents?"],
          slots=("Priya", "Mateo", "Ingrid", "Kwame", "Sofia", "Hiro")),
    _fact("sport", "sport",
          ["basketball", "cricket", "tennis", "rugby", "baseball", "ice hockey", "volleyball"], "fact",
          ["I watch every {value} match I can. Help me plan my week around the big games?"],
          ["Stayed up way too late for the {value} again. Tips for surviving the day?"],
          ["Which sport does {subject} follow?", "What sport does {subject} like to watch?"], negative_ok=True),
    _fact("pet", "pet",
          ["beagle", "parrot", "corgi", "tortoise", "rabbit", "goldfish", "ferret"], "fact",
          ["Going away for a weekend and need someone to mind my {value}. Help me write a note for the sitter?"],
          ["The {value} woke me up at five again. How do I get better sleep?"],
          ["What kind of pet does {subject} have?", "Which animal lives with {subject}?"], negative_ok=True),
    _fact("instrument", "instrument",
          ["cello", "ukulele", "drums", "violin", "trumpet", "banjo", "harmonica"], "fact",
          ["My neighbours hate it when I practise the {value}. How do I soundproof a room cheaply?"],
          ["Practised the {value} for two hours and my hands are done. Recovery tips?"],
          ["Which instrument does {subject} play?", "What musical instrument does {subject} practise?"],
          negative_ok=True),
    _fact("language", "language studied",
          ["Japanese", "Portuguese", "Swahili", "German", "Icelandic", "Dutch", "Turkish"], "fact",
          ["Learning {value} is kicking my butt. Can you help me with a study plan?"],
          ["Had my {value} class today and totally blanked. How do I revise smarter?"],
          ["Which language is {subject} learning?", "What language is {subject} studying?"], negative_ok=True),
)


@register
class Human(EntityType):
    name = "human"
    spec_model = HumanSpec
    voice = "human"
    role = "user"
    attributes = ATTRIBUTES
    event_kinds = EVENT_KINDS
    hidden_count = 2
    slot_count = 1
    episodes = ("half marathon", "root canal", "wedding toast", "passport renewal", "charity gala",
                "driving test", "job interview", "house viewing")
    episode_lines = ("Survived the {target} today! What's a good way to unwind tonight?",
                     "The {target} is done and dusted as of this afternoon. Can you help me write a thank-you "
                     "message?")
    actions = (
        ActionDef("preference_driven", ("Plan a welcome evening that {subject} will enjoy. Which plan fits best?",
                                        "Pick the team outing {subject} would like most.")),
        ActionDef("constraint_aware", ("Book a team dinner that {subject} can fully take part in. Which booking "
                                       "works?",)),
        ActionDef("style_adaptive", ("Prepare the reply to {subject}'s request for a weekly plan. Which draft "
                                     "should go out?",)),
    )

    def style(self, rng: random.Random) -> tuple[str, str]:
        given = self.spec.profile.communication_style
        formality = (given.formality if given and given.formality else rng.choice(["casual", "formal"]))
        verbosity = (given.verbosity if given and given.verbosity else rng.choice(["terse", "chatty"]))
        return formality, verbosity

"""Text templates for the DRIFT generator (user_assistant paradigm).

Everything here is static data; :mod:`conformance.world.generator` picks from it
with a seeded PRNG. Rules the data obeys (tests check them):

* Value pools: no value contains another as a whole word or phrase, across all
  pools, and none is ``unknown`` (the reader treats any option in a hit as an
  answer, so overlaps would make answers ambiguous).
* Static text (everything outside ``{placeholders}``) names no pool value and
  never says ``unknown``.
* In a change line, ``{old}`` (when present) comes before ``{new}``: the reader
  takes the option mentioned last in a message, so the new value must win.

Placeholders: ``{value}`` in disclosures, mentions, acknowledgements and
distractors; ``{old}``/``{new}`` in change lines and their acknowledgements.
"""

from __future__ import annotations

from typing import NamedTuple

CASUAL, FORMAL = "casual", "formal"

#: Attributes of the principal's latent profile, in a fixed order (never a set:
#: iteration order feeds the PRNG).
ATTRIBUTES = ["employer", "city", "cuisine", "drink", "hobby", "sport", "pet", "instrument", "language"]

#: Attributes a signal event may change (job change, move, preference reversal).
CHANGEABLE = ["employer", "city", "cuisine", "drink", "hobby"]

#: Master value pools; each scenario draws a smaller option pool from these.
POOLS: dict[str, list[str]] = {
    "employer": ["Globex", "Initech", "Hooli", "Vandelay", "Northwind", "Tyrell", "Cyberdyne", "Wonka"],
    "city": ["Lisbon", "Denver", "Osaka", "Toronto", "Edinburgh", "Melbourne", "Austin", "Nairobi"],
    "cuisine": ["Thai", "Italian", "Mexican", "Ethiopian", "Lebanese", "Peruvian", "Vietnamese", "Georgian"],
    "drink": ["espresso", "green tea", "flat white", "kombucha", "hot chocolate", "yerba mate", "cold brew"],
    "hobby": ["bouldering", "pottery", "chess", "birdwatching", "sailing", "woodworking", "knitting", "fencing"],
    "sport": ["basketball", "cricket", "tennis", "rugby", "baseball", "ice hockey", "volleyball"],
    "pet": ["beagle", "parrot", "corgi", "tortoise", "rabbit", "goldfish", "ferret"],
    "instrument": ["cello", "ukulele", "drums", "violin", "trumpet", "banjo", "harmonica"],
    "language": ["Japanese", "Portuguese", "Swahili", "German", "Icelandic", "Dutch", "Turkish"],
}


class Exchange(NamedTuple):
    """A principal line in two registers and the assistant's reply."""

    casual: str
    formal: str
    reply: str

    def ask(self, formality: str) -> str:
        return self.casual if formality == CASUAL else self.formal


# --- fact sessions ---------------------------------------------------------
# FACT_LINES[attribute][kind][formality] -> principal lines carrying the fact
# inside an ordinary request, so the event emerges in dialogue (DRIFT §3.5).

FACT_LINES: dict[str, dict[str, dict[str, list[str]]]] = {
    "employer": {
        "disclose": {
            CASUAL: ["Can you help me word a message to my team lead? Everyone at {value} replies super fast "
                     "and I don't want to look slow.",
                     "Ugh, another all-hands at {value} today. Give me three quick questions so I look engaged?"],
            FORMAL: ["Could you help me draft a short note to my manager? At {value} we are expected to submit "
                     "quarterly goals by Friday.",
                     "I would appreciate a template for my weekly report; my department at {value} wants a more "
                     "consistent format."],
        },
        "mention": {
            CASUAL: ["Payroll at {value} messed up my expenses again. How do I ask for a fix without sounding annoyed?",
                     "The office printer at {value} died, so I'm working from home today. Any focus tips?"],
            FORMAL: ["My colleagues at {value} have asked me to lead the retrospective. Could you suggest an agenda?",
                     "There is a training budget at {value} that I have not used yet. Which courses would suit "
                     "a mid-career analyst?"],
        },
        "change": {
            CASUAL: ["Long day. My first week at {new} is a lot, honestly. How do people learn forty new names?",
                     "So I finally left {old}! Signed with {new} and I start Monday. Help me write a goodbye note?"],
            FORMAL: ["After four years with {old}, I have accepted an offer from {new}. Could you help me plan "
                     "my first ninety days?",
                     "My onboarding at {new} begins next week. How should I prepare for it?"],
        },
    },
    "city": {
        "disclose": {
            CASUAL: ["It's pouring again here in {value}. Got any indoor ideas for a Saturday?",
                     "Trying to find a decent dentist near me in {value}. What should I look for in reviews?"],
            FORMAL: ["I live in {value} and would like to plan a weekend walking route. How should I structure it?",
                     "Could you help me compare two gym memberships? Both are in central {value}, near my flat."],
        },
        "mention": {
            CASUAL: ["The trams in {value} were a mess this morning. Can you help me rethink my commute?",
                     "Heatwave in {value} this week, ugh. Tips for sleeping when it's this warm?"],
            FORMAL: ["Rents in {value} have gone up again. Could you help me draft a monthly budget?",
                     "My neighbours here in {value} are organising a street party. Could you write a short "
                     "invitation?"],
        },
        "change": {
            CASUAL: ["Still unpacking boxes after the move to {new}. What's a sane order to unpack a kitchen?",
                     "Bye {old}, hello {new}! The new flat is tiny. Storage hacks?"],
            FORMAL: ["Having relocated from {old} to {new} last week, I need to register with a local doctor. "
                     "What should I prepare?",
                     "I have just moved to {new}. Could you help me make a checklist for changing my address?"],
        },
    },
    "cuisine": {
        "disclose": {
            CASUAL: ["What should I cook tonight? Honestly I could eat {value} food every single day.",
                     "Friend's birthday dinner is my call. Thinking {value} since it's my favourite. "
                     "How do I pick a good place?"],
            FORMAL: ["I am planning meals for the week. {value} cuisine is my favourite; could you suggest "
                     "a few dishes in that style?",
                     "Could you suggest a menu for a small dinner party? I would like it to be {value}, my "
                     "favourite cuisine."],
        },
        "mention": {
            CASUAL: ["Made {value} again last night, obviously. Ideas for using up the leftovers?",
                     "Found a new {value} place round the corner. How do I stop ordering takeaway every night?"],
            FORMAL: ["As usual I would like to cook something {value} this weekend. Could you plan a shopping list?",
                     "I am hosting colleagues and will serve {value} dishes again. Which dessert would go with them?"],
        },
        "change": {
            CASUAL: ["Weird thing: I've totally gone off {old} food. {new} is my new favourite by a mile. "
                     "Recipe ideas?",
                     "Lately it's all {new} for me, I can't get enough. Weekend recipe ideas?"],
            FORMAL: ["My tastes have shifted: I used to favour {old} food, but {new} cuisine is now my clear "
                     "favourite. Could you suggest some dishes?",
                     "These days I much prefer {new} cooking. Could you put together a weekly meal plan around it?"],
        },
    },
    "drink": {
        "disclose": {
            CASUAL: ["Need a morning routine that actually sticks. It has to start with my {value}, non-negotiable.",
                     "What's a good flask for work? I carry my {value} with me basically everywhere."],
            FORMAL: ["Could you suggest a calmer afternoon routine? My preferred drink is {value}, which I "
                     "usually have around three.",
                     "I am setting up a small office kitchen, and {value} is what I drink most days. Which "
                     "equipment would I need?"],
        },
        "mention": {
            CASUAL: ["Spilled my {value} all over my notes, classic. How do I get stains off paper?",
                     "Third {value} of the day and it's only noon. Give me some focus tips?"],
            FORMAL: ["I would like to cut down on sugar but keep my daily {value}. Could you suggest breakfasts?",
                     "Could you recommend a travel mug? I take my {value} to work every morning."],
        },
        "change": {
            CASUAL: ["Funny, I've stopped drinking {old} completely and switched to {new}. Good mug recommendations?",
                     "New me: it's {new} every morning now. Help me plan a calmer start to the day?"],
            FORMAL: ["I no longer drink {old}; I have switched to {new}. How should I adapt my morning routine?",
                     "My usual drink is now {new}. Could you recommend a suitable flask for the office?"],
        },
    },
    "hobby": {
        "disclose": {
            CASUAL: ["I spend most weekends on {value} and want to track my progress. Spreadsheet ideas?",
                     "Need a birthday gift for my sister. She doesn't share my love of {value}, sadly. Ideas?"],
            FORMAL: ["My main hobby is {value}. Could you suggest a way to fit more of it into a busy week?",
                     "I would like to join a club for {value}, which I have enjoyed for years. What should I ask them?"],
        },
        "mention": {
            CASUAL: ["Spent all Sunday on {value} again. How do I stop losing track of time?",
                     "My {value} group meets on Thursdays and I keep missing it. Reminder ideas?"],
            FORMAL: ["I have been making steady progress with {value}. Could you help me set goals for next month?",
                     "Could you help me budget for {value} equipment this year?"],
        },
        "change": {
            CASUAL: ["I kind of fell out of love with {old}. These days it's all {new}. Beginner tips?",
                     "Signed up for a {new} class and I'm hooked. How do I practise between sessions?"],
            FORMAL: ["I have given up {old} and taken up {new} instead. Could you suggest a weekly practice plan?",
                     "My new pastime is {new}. Could you recommend some resources for a beginner?"],
        },
    },
    "sport": {
        "disclose": {
            CASUAL: ["I watch every {value} match I can. Help me plan my week around the big games?",
                     "Big {value} game tonight and I'm hosting. Snack ideas?"],
            FORMAL: ["I follow {value} closely. Could you help me organise a viewing evening with friends?",
                     "Could you suggest a way to keep track of fixtures? The sport I follow is {value}."],
        },
        "mention": {
            CASUAL: ["Stayed up way too late for the {value} again. Tips for surviving the day?",
                     "The {value} season starts soon and I'm way too excited. Help me plan some watch parties?"],
            FORMAL: ["There is an important {value} fixture this weekend. Could you help me move my errands?",
                     "I would like to read more about {value} tactics. Where should I start?"],
        },
    },
    "pet": {
        "disclose": {
            CASUAL: ["Going away for a weekend and need someone to mind my {value}. Help me write a note for the sitter?",
                     "Need a vet reminder system for my {value}. Ideas?"],
            FORMAL: ["I have a {value} and would like to plan a feeding schedule. Could you help?",
                     "Could you help me budget for my {value}'s annual check-up?"],
        },
        "mention": {
            CASUAL: ["The {value} woke me up at five again. How do I get better sleep?",
                     "Bought my {value} a new toy. Help me write a silly caption for a photo?"],
            FORMAL: ["My {value} needs a check-up next month. What should I ask the vet?",
                     "How can I keep my {value} comfortable during a heatwave?"],
        },
    },
    "instrument": {
        "disclose": {
            CASUAL: ["My neighbours hate it when I practise the {value}. How do I soundproof a room cheaply?",
                     "I play the {value}. Can you make me a practice schedule that isn't boring?"],
            FORMAL: ["I play the {value} and would like a structured practice plan. Could you draft one?",
                     "Could you help me find a teacher? I have played the {value} for some years."],
        },
        "mention": {
            CASUAL: ["Practised the {value} for two hours and my hands are done. Recovery tips?",
                     "Got a recital on the {value} next month and I'm nervous. Calming tips?"],
            FORMAL: ["I have a small recital on the {value} next month. Could you help me prepare?",
                     "Could you suggest a warm-up for my {value} practice?"],
        },
    },
    "language": {
        "disclose": {
            CASUAL: ["Learning {value} is kicking my butt. Can you help me with a study plan?",
                     "Doing my {value} flashcards on the bus every day. How do I stop forgetting words?"],
            FORMAL: ["I am learning {value} and would like a weekly study plan. Could you help?",
                     "Could you suggest a podcast routine? I am studying {value} in the evenings."],
        },
        "mention": {
            CASUAL: ["Had my {value} class today and totally blanked. How do I revise smarter?",
                     "My {value} streak is at forty days! How do I keep it going?"],
            FORMAL: ["My {value} exam is in a month. Could you help me plan my revision?",
                     "Could you suggest ways to practise {value} conversation?"],
        },
    },
}

#: Assistant acknowledgements that repeat the value (they become evidence too).
#: ``value``: after a disclosure or mention; ``change``: after a change.
ACKS: dict[str, dict[str, list[str]]] = {
    "employer": {"value": ["Sure. Here's a version that should suit how things run at {value}.",
                           "Here you go. If {value} has a style guide, check it against that."],
                 "change": ["Congratulations on joining {new}! Here's a plan to get you started.",
                            "That's a big step. {new} sounds like a good fit; let's get you ready."]},
    "city": {"value": ["Noted. I'll keep {value} in mind for local suggestions.",
                       "Good to know you're based in {value}. Here are some ideas."],
             "change": ["Welcome to {new}! Here's a checklist to get settled.",
                        "Moving is a lot. Here's a plan for your first weeks in {new}."]},
    "cuisine": {"value": ["Great choice; {value} food works well for that. Here are a few ideas.",
                          "{value} dishes it is. Here are some options."],
                "change": ["{new} it is, then! Here are some dishes to try.",
                           "Good to know your favourite is {new} now. Here are a few recipes."]},
    "drink": {"value": ["Understood, I'll plan around your {value}.",
                        "Noted: {value} first. Here's a routine that works with it."],
              "change": ["Switching to {new}, noted! Here are some suggestions.",
                         "Nice change. With {new} in mind, here's an idea."]},
    "hobby": {"value": ["That sounds fun; {value} is a great way to unwind. Here's a plan.",
                        "Nice! Here's a schedule that leaves room for {value}."],
              "change": ["Good for you, {new} is a great pick. Here's a starter plan.",
                         "Taking up {new} sounds exciting. Here are some resources."]},
    "sport": {"value": ["Sounds like a fun evening. Here's a plan that works around the {value} schedule.",
                        "Got it, {value} first. Here are some ideas."]},
    "pet": {"value": ["Your {value} sounds like great company. Here's a checklist.",
                      "Good idea. Here's a plan for your {value}."]},
    "instrument": {"value": ["Here's a schedule that keeps the {value} practice varied.",
                             "Nice, the {value} rewards steady practice. Here's a plan."]},
    "language": {"value": ["Learning {value} takes patience. Here's a plan.",
                           "Here's a study routine for your {value}."]},
}

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
             "Could you condense these meeting notes into three bullet points?",
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

#: Distractors: the assistant names a pool value in a news, TV or trivia aside,
#: never as a fact about the principal. They share vocabulary with the probes.
DISTRACTORS: dict[str, list[str]] = {
    "employer": ["Unrelated, but today's business news says {value} is cutting prices this quarter.",
                 "Side note from the headlines: {value} just announced a new headquarters."],
    "city": ["In travel news, {value} has opened a new night train route.",
             "By the way, the news says {value} is hosting a design festival this week."],
    "cuisine": ["Fun fact: a food magazine just named {value} street food the trend of the year."],
    "drink": ["Odd bit of trivia from the news: cafés report record sales of {value} this winter."],
    "hobby": ["There's a new documentary about competitive {value} streaming this week."],
    "sport": ["Also, the {value} final is on TV tonight, in case anyone at home is watching.",
              "The evening news led with a surprise result in {value}."],
    "pet": ["Saw a headline about a {value} that learned to open a fridge, which made me smile."],
    "instrument": ["The radio concert tonight features a solo for {value}."],
    "language": ["The news mentions that {value} courses are booming this year."],
}

# --- probes ----------------------------------------------------------------

#: Questions per attribute. The same wording serves every probe type, so the
#: question never reveals whether the answer changed or was never given.
QUERIES: dict[str, list[str]] = {
    "employer": ["Which company does the user work for now?", "Who is the user's current employer?"],
    "city": ["Which city does the user live in these days?", "Where is the user based at the moment?"],
    "cuisine": ["What is the user's favourite cuisine?", "Which kind of food does the user like best?"],
    "drink": ["What does the user usually like to drink?", "What is the user's go-to drink?"],
    "hobby": ["What hobby is the user into at the moment?", "How does the user like to spend free time?"],
    "sport": ["Which sport does the user follow?", "What sport does the user like to watch?"],
    "pet": ["What kind of pet does the user have?", "Which animal does the user keep as a pet?"],
    "instrument": ["Which instrument does the user play?", "What musical instrument does the user practise?"],
    "language": ["Which language is the user learning?", "What language is the user studying?"],
}

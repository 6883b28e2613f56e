"""Agent entity types (DRIFT §3.2.2–§3.2.4): assistant, coding agent, tool agent, crawler."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import field_validator

from conformance.contract.fixture import Id
from conformance.world.entities.base import ActionDef, AttributeDef, EntityType, SpecModel, register
from conformance.world.entities.human import check_event_kinds


def _attr(name, label, pool, kind, disclose, mention, queries, change=(), **kw) -> AttributeDef:
    lines = {"disclose": tuple(disclose), "mention": tuple(mention)}
    if change:
        lines["change"] = tuple(change)
    return AttributeDef(name=name, label=label, pool=tuple(pool), kind=kind, lines=lines, queries=tuple(queries),
                        changeable=bool(change), **kw)


# --- assistant agent ----------------------------------------------------------

ASSISTANT_EVENTS: dict[str, tuple[str, ...]] = {
    "task_completion": ("active_task",), "instruction_revision": ("active_task",),
    "preference_revelation": (), "explicit_correction": (),
}


class CapabilityProfile(SpecModel):
    context_window: int | None = None
    tool_access: list[str] = []
    response_style: str | None = None


class AssistantSpec(SpecModel):
    id: Id
    type: Literal["assistant_agent"]
    capability_profile: CapabilityProfile = CapabilityProfile()
    event_distribution: dict[str, float] = {}

    @field_validator("event_distribution")
    @classmethod
    def _kinds(cls, value):
        return check_event_kinds(value, ASSISTANT_EVENTS)


@register
class AssistantAgent(EntityType):
    """Capability profile, task state; its ground truth is its model of the principal."""

    name = "assistant_agent"
    spec_model = AssistantSpec
    role = "assistant"
    event_kinds = ASSISTANT_EVENTS
    attributes = (
        _attr("active_task", "current task",
              ["the grant application", "the tax return", "the seating plan", "the conference talk",
               "the renovation budget", "the photo book"], "fact",
              ["Can we keep working on {value} today? I want a draft by Friday."],
              ["Back to {value}: where did we leave off?"],
              ["Which job is {subject} helping with at the moment?", "What has {subject} been asked to focus on?"],
              change=["Let's shelve {old} for now and put {new} first."], speaker="principal"),
    )

    def event_distribution(self) -> dict[str, float]:
        return dict(self.spec.event_distribution) or {kind: 1.0 for kind in self.event_kinds}

    def snapshot(self, attrs, world: Any) -> dict[str, str]:
        """Its own task state plus ``principal_model.*``: what it has been told about the principal."""
        out = super().snapshot(attrs, world)
        out.update({f"principal_model.{k}": v for k, v in world.known_to(self_id(attrs, world), world.principal).items()})
        return out


def self_id(attrs, world) -> str:
    return attrs[0].entity if attrs else world.principal


# --- coding agent -------------------------------------------------------------

CODING_EVENTS: dict[str, tuple[str, ...]] = {
    "commit": ("coverage",), "refactor_request": ("coverage",), "test_failure": (),
    "architectural_override": ("framework", "database"), "dependency_change": ("runtime",),
    "objective_revision": ("objective",), "style_correction": ("naming", "test_style"),
}


class CodingProfile(SpecModel):
    language: str | None = None
    repository: str | None = None
    event_distribution: dict[str, float] = {}

    @field_validator("event_distribution")
    @classmethod
    def _kinds(cls, value):
        return check_event_kinds(value, CODING_EVENTS)


class CodingSpec(SpecModel):
    id: Id
    type: Literal["coding_agent"]
    profile: CodingProfile = CodingProfile()


MODULES = ("billing", "auth", "search", "checkout", "notifications", "reporting")
FEATURES = ("rate limiting", "CSV export", "retry logic", "cache invalidation", "webhook delivery")

CODING_ATTRIBUTES = (
    _attr("framework", "web framework", ["FastAPI", "Django", "Flask", "Starlette", "Litestar"], "preference",
          ["Decision for the record: the service is built on {value}. Scaffold the routes that way.",
           "We're a {value} shop for this repo; please generate handlers in that style."],
          ["The {value} upgrade notes look harmless; carry on with the handlers."],
          ["Which web framework is the service built on?", "What framework does the project use for its HTTP layer?"],
          change=["I'm overriding the earlier call: we move off {old} and onto {new} for the service layer."],
          speaker="principal", action="preference_driven", choice="a {value} scaffold"),
    _attr("database", "datastore", ["PostgreSQL", "SQLite", "MySQL", "DynamoDB", "Cassandra"], "preference",
          ["Persistence goes into {value}; write the migrations for it.",
           "The records live in {value}, so keep the queries portable to it."],
          ["Ran the {value} migrations again on staging, all green."],
          ["Which datastore holds the project's records?", "Where does the service persist its data?"],
          change=["Architecture change: we drop {old} and store everything in {new} from now on."],
          speaker="principal", action="preference_driven", choice="storage on {value}"),
    _attr("naming", "naming convention", ["snake_case", "camelCase", "PascalCase", "kebab-case"], "style",
          ["Convention check: identifiers here use {value}, please stick to it.",
           "Rename those helpers to {value}; that's how this codebase spells things."],
          ["Flagged two more names that aren't {value} yet; fixing them."],
          ["How are identifiers spelled in this codebase?"],
          change=["New rule from the style review: {old} is out, {new} is in for all new code."],
          speaker="principal", action="style_adaptive", choice="a patch naming things in {value}"),
    _attr("test_style", "testing approach",
          ["pytest fixtures", "table-driven tests", "property-based tests", "snapshot tests", "doctests"], "style",
          ["For coverage we write {value}; please follow that for the new module.",
           "I'd like the tests as {value}, same as the rest of the suite."],
          ["Added two more {value} for the parser, they pass."],
          ["How does the team like its tests written?"],
          change=["We're moving away from {old}; write {new} going forward."],
          speaker="principal", action="style_adaptive", choice="tests written as {value}"),
    _attr("runtime", "runtime floor", ["Python 3.9", "Python 3.11", "Python 3.12", "PyPy 3.10"], "constraint",
          ["Hard constraint: production still runs {value}, so nothing newer than that syntax.",
           "Keep in mind the deploy target is {value}; the vendored libs must support it."],
          ["CI image confirmed {value} again this morning."],
          ["Which interpreter does production run?", "What runtime must the code stay compatible with?"],
          change=["Ops finished the upgrade: we went from {old} to {new} in production."],
          speaker="principal", action="constraint_aware", choice="code that targets {value}", negative_ok=True),
    _attr("coverage", "error-handling migration", ["not started", "partially migrated", "fully migrated"],
          "coverage",
          ["Progress on the {slot} rewrite to Result types: {value}."],
          ["Looked at {slot} again; its Result-type rewrite is still {value}."],
          ["How far along is the {slot} module in adopting the new error-handling pattern?",
           "Has {slot} been moved to the new error-handling pattern yet?"],
          change=["Update on {slot}: its Result-type rewrite went from {old} to {new}."],
          slots=MODULES, progression=True),
    _attr("failure", "failed approach",
          ["global locks", "polling loops", "monkey patching", "regex parsing", "shared mutable state",
           "busy waiting"], "anti_pattern",
          ["Heads up: I tried {value} for {slot} and it fell over under load, so I reverted it.",
           "Post-mortem note: {value} broke the {slot} work in staging; not doing that again."],
          ["Reminder to self: {value} is what sank {slot} last time."],
          ["Propose an implementation for {slot}: which approach already failed here and must be avoided?",
           "For {slot}, which technique has a known bad track record in this repo?"],
          slots=FEATURES),
    _attr("objective", "current objective",
          ["the public API", "the mobile backend", "the admin dashboard", "the data export tool",
           "the plugin system"], "objective",
          ["Goal for this stretch: ship {value}. Everything else waits.",
           "Please prioritise {value}; that's the milestone I care about."],
          ["Still heads-down on {value}, making progress."],
          ["What is the agent's current sub-objective?", "Which deliverable is the work focused on now?"],
          change=["Change of plan: pause {old}; the priority is {new} now."], speaker="principal"),
)


@register
class CodingAgent(EntityType):
    """Project graph (framework, datastore, modules), decision log, failure surface, style conventions."""

    name = "coding_agent"
    spec_model = CodingSpec
    role = "agent"
    event_kinds = CODING_EVENTS
    attributes = CODING_ATTRIBUTES
    hidden_count = 1
    episodes = ("staging outage", "security audit", "load test", "code freeze", "beta launch", "data migration")
    episode_lines = ("We got through the {target} today; logging the follow-ups now.",
                     "Wrapped the {target} this afternoon, notes are in the tracker.")
    actions = (
        ActionDef("preference_driven", ("Generate the skeleton for a new service in this project. Which skeleton "
                                        "matches the architecture?",)),
        ActionDef("constraint_aware", ("Write the new helper so it deploys without trouble. Which version is "
                                       "safe?",)),
        ActionDef("style_adaptive", ("Complete this snippet the way the principal wants code written. Which "
                                     "completion fits?",)),
    )


# --- tool agent (test runner) and crawler -------------------------------------

TOOL_EVENTS: dict[str, tuple[str, ...]] = {
    "objective_completion": (), "environment_change": ("flaky_test",), "coverage_milestone": ("coverage_level",),
    "traversal_dead_end": (),
}


class ToolProfile(SpecModel):
    suite: str | None = None
    event_distribution: dict[str, float] = {}

    @field_validator("event_distribution")
    @classmethod
    def _kinds(cls, value):
        return check_event_kinds(value, TOOL_EVENTS)


class ToolSpec(SpecModel):
    id: Id
    type: Literal["tool_agent"]
    profile: ToolProfile = ToolProfile()


@register
class ToolAgent(EntityType):
    """A test-runner tool agent: suite state (flaky tests) and coverage map."""

    name = "tool_agent"
    spec_model = ToolSpec
    role = "tool"
    event_kinds = TOOL_EVENTS
    attributes = (
        _attr("flaky_test", "flaky test",
              ["test_login_redirect", "test_export_csv", "test_retry_backoff", "test_cache_ttl", "test_webhook_sign"],
              "fact",
              ["Suite report: {value} fails intermittently; quarantining it."],
              ["{value} flaked again on the nightly run."],
              ["Which test is currently known to be unreliable?", "What check keeps failing at random in the suite?"],
              change=["Good news, {old} is stable now; the new troublemaker is {new}."]),
        _attr("coverage_level", "line coverage", ["40 percent", "60 percent", "75 percent", "90 percent"],
              "coverage",
              ["Coverage report for the suite: {value} of lines exercised."],
              ["Coverage holding at {value} after tonight's run."],
              ["How much of the codebase do the tests currently exercise?"],
              change=["Coverage milestone: up from {old} to {new}."], progression=True),
    )
    episodes = ("nightly rebuild", "runner upgrade", "cache purge")
    episode_lines = ("Completed the {target} without errors; queue is empty.",)


CRAWLER_EVENTS: dict[str, tuple[str, ...]] = {
    "objective_completion": ("objective",), "objective_revision": ("objective",),
    "environment_change": ("site_status",), "traversal_dead_end": (), "coverage_milestone": ("frontier",),
}


class CrawlerProfile(SpecModel):
    objective: str | None = None
    sites: list[str] = []
    event_distribution: dict[str, float] = {}

    @field_validator("event_distribution")
    @classmethod
    def _kinds(cls, value):
        return check_event_kinds(value, CRAWLER_EVENTS)


class CrawlerSpec(SpecModel):
    id: Id
    type: Literal["crawler_agent"]
    profile: CrawlerProfile = CrawlerProfile()


SITES = ("docs.acme.test", "shop.example.test", "news.sample.test", "forum.widget.test")


@register
class CrawlerAgent(EntityType):
    """A crawler: frontier (sections reached per site), objective state, environmental delta."""

    name = "crawler_agent"
    spec_model = CrawlerSpec
    role = "agent"
    event_kinds = CRAWLER_EVENTS
    hidden_count = 1
    attributes = (
        _attr("frontier", "crawl frontier", ["/blog", "/docs", "/pricing", "/careers", "/forum", "/press"],
              "traversal",
              ["Crawl log for {slot}: now working through the {value} section."],
              ["Still inside the {value} section on {slot}; pages keep coming."],
              ["Which part of {slot} is the crawl covering right now?",
               "On {slot}, what section is the agent currently traversing?"],
              change=["Finished the {old} section on {slot}; moving on to {new}."], slots=SITES, progression=True),
        _attr("objective", "objective",
              ["collect product prices", "map the API reference", "index job postings", "track press releases",
               "archive forum threads"], "objective",
              ["Your objective: {value}. Report progress every session.",
               "The brief for this crawl is simple: {value}."],
              ["Reminder, the job is still to {value}."],
              ["What is the crawler supposed to achieve at the moment?", "What is the current sub-objective?"],
              change=["Revising the brief: stop trying to {old}; instead {new}."], speaker="principal"),
        _attr("site_status", "site condition",
              ["rate limited", "behind a login wall", "serving stale pages", "fully reachable", "blocking crawlers"],
              "fact",
              ["Environment note: {slot} is {value} today."],
              ["{slot} still looks {value}."],
              ["What condition is {slot} in, as last observed?", "How did {slot} behave on the latest visit?"],
              change=["Environment changed on {slot}: it was {old}, now it is {new}."], slots=SITES),
        _attr("dead_end", "crawl trap",
              ["infinite calendar pages", "session-id URLs", "faceted search loops", "print-view duplicates",
               "tag cloud pages"], "anti_pattern",
              ["Dead end on {slot}: {value} produce endless near-identical URLs; skipping them."],
              ["Hit {value} on {slot} once more and backed out."],
              ["On {slot}, which URL family is a known trap to stay out of?"], slots=SITES),
        _attr("strategy", "traversal strategy", ["breadth-first", "depth-first", "sitemap-first", "priority-queue"],
              "style",
              ["Traverse {value}, please; that's how I want the frontier handled."],
              ["Keep it {value} like before."],
              ["Which way should the frontier be expanded?"],
              change=["Switching strategy: drop {old}, go {new}."], speaker="principal",
              action="style_adaptive", choice="a plan that expands the frontier {value}"),
        _attr("politeness", "request budget",
              ["one request per second", "two requests per second", "five requests per second"], "constraint",
              ["Constraint from the site owners: at most {value}.",
               "Throttle yourself to {value}; that was the agreement."],
              ["Holding at {value} as agreed."],
              ["How fast may the crawler hit the sites?"], speaker="principal",
              action="constraint_aware", choice="a schedule at {value}", negative_ok=True),
    )
    episodes = ("site redesign", "captcha wall", "sitemap refresh", "IP ban", "robots rule change")
    episode_lines = ("Noting the {target} that hit us during this run; adjusted and continued.",
                     "Logged a {target} today; the queue recovered afterwards.")
    actions = (
        ActionDef("constraint_aware", ("Schedule tomorrow's fetches for the crawler. Which schedule is "
                                       "acceptable?",)),
        ActionDef("style_adaptive", ("Plan the next crawl batch the way the principal asked. Which plan fits?",)),
    )

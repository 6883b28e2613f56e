"""The DRIFT world generator v2: scenario YAML -> fixture (public) + gold (sealed).

For each scenario (:mod:`conformance.world.scenario`) one ``random.Random``, seeded
from the corpus seed, the scenario's own seed and its id (SHA-512 of a string: stable
across runs and platforms), drives everything:

1. **World**: every entity's type (:mod:`conformance.world.entities`) draws its
   attributes (scenario value pools, starting values, the hidden ones that negative
   recall asks about) and its episodes; multi-peer and coding worlds add team
   decisions; multi-peer worlds choose canary facts (disclosed only in private
   messages of their owner, in sessions the later asker misses; one such session is
   reserved per canary) and reserve a session before each late arrival for a shared
   fact that a handoff probe can ask about.
2. **Tiers** (DRIFT §3.3): ~10% signal sessions (a change: job change, move,
   architectural override, objective revision, ...), ``1 - 0.10 - noise_ratio`` soft
   sessions (a first disclosure, a re-mention that accumulates evidence, an episode)
   and ``noise_ratio`` noise sessions (routine talk, distractors, nothing new), spread
   evenly over the trajectory. A session whose participants cannot carry the planned
   event degrades (signal -> soft -> noise); gold records the tier that happened.
3. **Sessions** in time order: topology (:mod:`conformance.world.topology`) gives
   participants and turn order, the synthesizer (:mod:`conformance.world.synthesis`)
   the text; the latent state and each value's evidence are tracked as events apply.
   Every session, whatever its tier, gets one marker (:mod:`conformance.world.markers`):
   a reference code in a sentence appended to a shared message, listed in the header.
4. **Checkpoints**: probes of the requested types (DRIFT §6) built from the latent
   state at that moment; gold keeps answers, stale values, evidence (the newest
   ``EVIDENCE_PER_ATTRIBUTE`` statements per attribute) and owners. Askers have joined
   by then and never are the subject of a query that names them. Option structure
   leaks nothing: temporal options are shuffled and the answer's rank among the amounts
   is uniform; action choices overlap symmetrically and the default is a uniform draw
   among them (right with chance 1/len, as any position).

The reader contract holds for every probe: the deterministic reader applied to
exactly the gold evidence gives the gold answer (closed options: newest hit naming an
option, last mention within it; choices: the choice whose tags agree with the
per-attribute last-mention values, else the default; temporal: the earliest hit
naming the target, ``asked_at`` minus its timestamp, closest amount).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from conformance import paths
from conformance.contract.answer_text import last_option_in
from conformance.contract.corpus import write_fixture, write_gold
from conformance.contract.fixture import (
    CheckpointLine, Choice, EntityRef, HeaderLine, HorizonPhase, Message, Probe, SessionLine, Temporal,
)
from conformance.contract.gold import GoldEvent, GoldFile, GoldProbe
from conformance.world import markers
from conformance.world import templates as T
from conformance.world.entities import REGISTRY, Attr, EntityType
from conformance.world.entities.team import ATTRIBUTION_QUERIES, DECISIONS
from conformance.world.scenario import ScenarioSpec, load_scenarios
from conformance.world.synthesis import EventPlan, SessionContext, Synthesizer, TemplateSynthesizer
from conformance.world.topology import participants as pick_participants
from conformance.world.topology import session_slot

SOURCE = "drift-generator/2"
UNKNOWN = "unknown"
START_TIME = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
SIGNAL_FRACTION = 0.10
MAX_PER_TYPE = 3
MAX_PROBES_PER_CHECKPOINT = 18
EVIDENCE_PER_ATTRIBUTE = 3
"""A probe cites at most the newest this-many statements of each attribute it involves."""
UNITS = {"days": 1, "weeks": 7, "months": 30}
"""Days per temporal unit; a month counts 30 days (options are spaced so 30.44 gives the same answer)."""

RECALL_KINDS = ("fact", "preference", "constraint", "decision")
REVISION_KINDS = ("fact", "preference", "constraint")
FRONTIER = {"coverage": "coverage", "anti_pattern": "anti_pattern", "traversal": "traversal",
            "objective": "objective_coherence"}


# --- public API ----------------------------------------------------------------

#: Version of what the generator makes (semantic: a major bump when gold or fixtures of an
#: existing scenario change, minor for added scenarios). Written into the ledger; receipts record it.
CORPUS_VERSION = "2.0.0"


def generate_corpus(fixtures_dir: Path, gold_dir: Path, scenarios_dir: Path | None = None, seed: int = 42,
                    synthesizer: Synthesizer | None = None, specs: list[ScenarioSpec] | None = None) -> list[str]:
    """Generate every scenario of ``scenarios_dir`` (default: the repository's ``scenarios/``),
    or the already loaded ``specs`` (``generate --scenario-file``) when given.

    Writes ``fixtures_dir/<id>.jsonl`` and ``gold_dir/<id>.json`` (holdout scenarios
    included; excluding them is the runner's business) and returns the ids in file
    order. Same inputs and seed: byte-identical files.

    Raises:
        ScenarioError: an invalid scenario file (names the file and field).
    """
    if specs is None:
        specs = load_scenarios(Path(scenarios_dir) if scenarios_dir is not None else paths.data_root() / "scenarios")
    ids = []
    for spec in specs:
        lines, gold = build_scenario(spec, seed, synthesizer)
        write_fixture(Path(fixtures_dir) / f"{spec.id}.jsonl", lines)
        write_gold(Path(gold_dir) / f"{spec.id}.json", gold)
        ids.append(spec.id)
    return ids


def build_scenario(spec: ScenarioSpec, seed: int = 42,
                   synthesizer: Synthesizer | None = None) -> tuple[list, GoldFile]:
    """One scenario in memory: (fixture lines, header first; gold)."""
    return _Generator(spec, seed, synthesizer or TemplateSynthesizer()).run()


def tier_plan(rng: random.Random, sessions: int, noise_ratio: float) -> list[str]:
    """One tier per session: counts from the ratios, positions spread evenly with jitter.

    Session 0 is always soft (the first session introduces someone); no signal at 0.
    """
    n_signal = round(sessions * SIGNAL_FRACTION)
    n_noise = round(sessions * noise_ratio)
    n_soft = max(1, sessions - n_signal - n_noise)
    n_noise = sessions - n_signal - n_soft
    tiers = ["noise"] * sessions
    tiers[0] = "soft"
    for tier, count in (("signal", n_signal), ("soft", n_soft - 1)):
        free = [i for i in range(1, sessions) if tiers[i] == "noise"]
        for k in range(min(count, len(free))):
            lo, hi = k * len(free) // count, (k + 1) * len(free) // count
            tiers[free[rng.randrange(lo, max(lo + 1, hi))]] = tier
    return tiers


# --- the generator ---------------------------------------------------------------

@dataclass
class _Episode:
    entity: str
    target: str
    lines: tuple[str, ...]
    message_id: str | None = None
    timestamp: datetime | None = None


@dataclass
class _Msg:
    session: int
    present: frozenset
    scope: str
    author: str


def _stamp(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _display(entity_id: str) -> str:
    return {"principal": "the user", "assistant": "the assistant"}.get(entity_id, entity_id)


@dataclass
class _Generator:
    spec: ScenarioSpec
    seed: int
    synth: Synthesizer
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        spec = self.spec
        self.rng = random.Random(f"{SOURCE}:{self.seed}:{spec.seed}:{spec.id}")
        # Markers draw from their own stream, per session index and before any tier exists:
        # they neither depend on nor shift anything else the generator draws.
        self.markers = markers.draw_markers(random.Random(f"{SOURCE}:markers:{self.seed}:{spec.seed}:{spec.id}"),
                                            spec.sessions)
        self.principal = spec.principal_id
        self.types: dict[str, EntityType] = {e.id: REGISTRY[e.type](e) for e in spec.entities}
        self.order = [e.id for e in spec.entities]
        self.styles = {eid: t.style(self.rng) for eid, t in self.types.items()}
        self.voices = {eid: t.voice for eid, t in self.types.items()}
        self.attrs: dict[str, list[Attr]] = {eid: t.make_attributes(self.rng, eid) for eid, t in self.types.items()}
        if spec.paradigm in ("multi_peer", "coding_agent"):
            for defn in self.rng.sample(list(DECISIONS), 2):
                pool = self.rng.sample(list(defn.pool), min(5, len(defn.pool)))
                value = self.rng.choice(pool)
                self.attrs[self.principal].append(Attr(key=defn.name, defn=defn, entity=self.principal, pool=pool,
                                                       value=value, held=[value]))
        self.latent = {eid: {a.key: a.value for a in attrs} for eid, attrs in self.attrs.items()}
        self.episodes: list[_Episode] = []
        for eid, t in self.types.items():
            count = min(len(t.episodes), max(2, spec.sessions // 80))
            self.episodes += [_Episode(eid, target, t.episode_lines) for target in self.rng.sample(list(t.episodes), count)]
        self.messages: dict[str, _Msg] = {}
        self.texts: dict[str, str] = {}
        self.first_seen: dict[str, int] = {}
        self._plan_presence()
        self._choose_canaries()

    # -- world set-up ---------------------------------------------------------------
    def _plan_presence(self) -> None:
        """Participants of every session, drawn before any text (async picks subsets)."""
        self.present: list[list[str]] = []
        self.patterns: list[str] = []
        for i in range(self.spec.sessions):
            active, pattern = session_slot(self.spec, i)
            who = pick_participants(self.rng, active, pattern)
            self.present.append(who)
            self.patterns.append(pattern)
            for eid in who:
                self.first_seen.setdefault(eid, i)

    def _choose_canaries(self) -> None:
        """Multi-peer: one personal fact per human (or the principal) becomes a canary for another entity.

        The asker must miss some session the owner attends before a checkpoint that asks
        canary probes (and have joined by then): the fact is disclosed only there, in a
        private note of its owner (:meth:`_schedule_canaries` reserves that session).
        """
        self.canary_windows: dict[str, list[int]] = {}
        if self.spec.paradigm != "multi_peer":
            return
        cps = [cp.after_session for cp in self.spec.checkpoints if "canary" in cp.expanded()]
        owners = [eid for eid in self.order if self.types[eid].name == "human"] or [self.principal]
        for owner in owners:
            windows = {}
            for eid in (e for e in self.order if e != owner):
                asked = [n for n in cps if self.first_seen.get(eid, n) < n]
                if asked:
                    windows[eid] = [i for i, p in enumerate(self.present[:max(asked)])
                                    if owner in p and eid not in p]
            windows = {e: w for e, w in windows.items() if w}
            facts = [a for a in self.attrs[owner] if a.defn.kind in ("fact", "preference") and not a.hidden
                     and not a.defn.slots]
            if not windows or not facts:
                continue
            asker = max(windows, key=lambda e: (len(windows[e]), -self.order.index(e)))
            secret = self.rng.choice(facts)
            secret.secret = asker
            self.canary_windows[secret.key] = windows[asker]

    def _schedule_canaries(self, tiers: list[str]) -> None:
        """Reserve one session per canary (owner present, asker absent) for its private disclosure.

        The earliest such soft session after the first wins; without one, the latest noise
        session in the window becomes soft.
        """
        self.canary_at: dict[int, Attr] = {}
        for owner in self.order:
            for attr in (a for a in self.attrs[owner] if a.secret is not None):
                window = [i for i in self.canary_windows[attr.key] if i not in self.canary_at]
                if not window:
                    continue
                soft = [i for i in window if tiers[i] == "soft"]
                at = next((i for i in soft if i > 0), soft[0] if soft else window[-1])
                tiers[at] = "soft"
                self.canary_at[at] = attr

    def _schedule_handoffs(self, tiers: list[str]) -> None:
        """Multi-peer: per entity that joins late (before a checkpoint asking handoff probes), reserve one
        session before its arrival for a shared disclosure it can later be asked about.

        The latest free soft session before the arrival wins; without one, the latest noise session.
        """
        self.handoff_at: set[int] = set()
        if self.spec.paradigm != "multi_peer":
            return
        cps = [cp.after_session for cp in self.spec.checkpoints if "handoff" in cp.expanded()]
        for joiner in self.order:
            joined = self.first_seen.get(joiner, 0)
            if joined == 0 or not any(joined < n for n in cps):
                continue
            free = [i for i in range(joined) if i not in self.canary_at and i not in self.handoff_at
                    and len(self.present[i]) >= 2]
            if not free:
                continue
            soft = [i for i in free if tiers[i] == "soft"]
            at = soft[-1] if soft else free[-1]
            tiers[at] = "soft"
            self.handoff_at.add(at)

    # -- running ----------------------------------------------------------------------
    def run(self) -> tuple[list, GoldFile]:
        spec = self.spec
        tiers = tier_plan(self.rng, spec.sessions, spec.noise_ratio)
        self._schedule_canaries(tiers)
        self._schedule_handoffs(tiers)
        start = START_TIME + timedelta(minutes=15 * self.rng.randrange(7 * 24 * 4))
        width = max(2, len(str(spec.sessions)))
        session_ids = [f"{spec.id}-s{number:0{width}d}" for number in range(1, spec.sessions + 1)]
        header = HeaderLine(
            scenario_id=spec.id, paradigm=spec.paradigm, source=SOURCE,
            horizons=[HorizonPhase(name=name, sessions=last - first + 1, session_gap_hours=gap)
                      for name, first, last, gap in spec.horizon.phases()],
            entities=[EntityRef(entity_id=e.id, type=e.type) for e in spec.entities], holdout=spec.holdout,
            splits=sorted(spec.splits), markers={sid: m.code for sid, m in zip(session_ids, self.markers)})
        lines: list = [header]
        checkpoints = {cp.after_session: (n, cp) for n, cp in enumerate(spec.checkpoints, start=1)}
        self.events: list[GoldEvent] = []
        self.tiers: dict[str, str] = {}
        self.snapshots: dict[str, dict[str, dict[str, str]]] = {}
        self.probes: list[GoldProbe] = []
        self.previous_cp = -1
        begins = start
        for i in range(spec.sessions):
            number = i + 1
            if i > 0:
                gap = next(g for _, first, last, g in spec.horizon.phases() if first <= number <= last)
                begins = begins + timedelta(hours=gap)
            session_id = session_ids[i]
            present = self.present[i]
            event, tier = self._choose_event(tiers[i], present, i)
            ctx = SessionContext(present=present, pattern=self.patterns[i], voices=self.voices, styles=self.styles,
                                 event=event, distractor_values=self._distractor_values(),
                                 attrs=[a for eid in self.order for a in self.attrs[eid] if a.secret is None],
                                 episodes=[e.target for e in self.episodes],
                                 twin=self._twin(present, i) if event is None else None, paradigm=spec.paradigm)
            turns = markers.place(self.synth.session(self.rng, ctx), self.markers[i])
            messages = []
            for k, turn in enumerate(turns):
                mid = f"{session_id}-m{k + 1}"
                messages.append(Message(message_id=mid, author=turn.author, role=self.types[turn.author].role,
                                        text=turn.text, timestamp=_stamp(begins + timedelta(minutes=k)),
                                        scope=turn.scope))
                self.messages[mid] = _Msg(i, frozenset(present), turn.scope, turn.author)
                self.texts[mid] = turn.text
            if event is not None:
                ids = [m.message_id for m, t in zip(messages, turns) if t.evidence]
                self._apply(event, i, session_id, tier, ids, begins)
            self.tiers[session_id] = tier
            lines.append(SessionLine(session_id=session_id, index=i, time=_stamp(begins), participants=present,
                                     messages=messages))
            if number in checkpoints:
                n, cp = checkpoints[number]
                gap = next(g for _, first, last, g in spec.horizon.phases() if first <= number <= last)
                asked_at = begins + timedelta(hours=min(1.0, gap / 2))
                lines.append(self._checkpoint(f"{spec.id}-c{n}", number, cp, asked_at))
                self.previous_cp = i
        profiles = {}
        for eid, t in self.types.items():
            formality, verbosity = self.styles[eid]
            profiles[eid] = {
                "type": t.name, "principal": eid == self.principal, "spec": t.latent_profile(),
                "style": {"formality": formality, "verbosity": verbosity},
                "latent": dict(self.latent[eid]),
                "pools": {a.key: list(a.pool) for a in self.attrs[eid]},
                "hidden": [a.key for a in self.attrs[eid] if a.hidden],
                "canaries": {a.key: a.secret for a in self.attrs[eid] if a.secret},
                "episodes": [e.target for e in self.episodes if e.entity == eid],
            }
        gold = GoldFile(scenario_id=spec.id, source=SOURCE, seed=self.seed, profiles=profiles,
                        session_tiers=self.tiers, events=self.events, snapshots=self.snapshots, probes=self.probes)
        return lines, gold

    def _twin(self, present: list[str], index: int) -> EventPlan | None:
        """What a noise session quotes as someone else's words: an event that could have happened here
        (a change a quarter of the time, as signal is to soft), chosen as events are; nothing applies."""
        plan, _ = self._choose_event("signal" if self.rng.random() < 0.25 else "soft", present, index)
        # A canary's pool is never quoted in the open: a value that happens to be the private one
        # would read as a leak of it.
        return None if plan is None or (plan.attr is not None and plan.attr.secret is not None) else plan

    def _distractor_values(self) -> list[str]:
        return [v for eid in self.order for a in self.attrs[eid] for v in a.pool]

    # -- events ------------------------------------------------------------------------
    def _speaker(self, attr: Attr, present: list[str]) -> str | None:
        """Who states ``attr`` in a session with ``present``, or None when it cannot be said there."""
        speaker = attr.defn.speaker
        if attr.entity not in present:
            return None
        if speaker == "self":
            return attr.entity
        if speaker == "principal":
            return self.principal if self.principal in present and self.principal != attr.entity else None
        others = list(present)
        return self.rng.choice(others) if len(present) >= 2 else None

    def _next_value(self, attr: Attr) -> str | None:
        if attr.defn.progression:
            at = attr.pool.index(attr.value)
            return attr.pool[at + 1] if at + 1 < len(attr.pool) else None
        fresh = [v for v in attr.pool if v not in attr.held]
        return self.rng.choice(fresh or [v for v in attr.pool if v != attr.value])

    def _choose_event(self, tier: str, present: list[str], index: int) -> tuple[EventPlan | None, str]:
        if tier == "noise":
            return None, "noise"
        reserved = self.canary_at.get(index)
        if reserved is not None and not reserved.disclosed:
            return EventPlan("disclose", reserved.entity, reserved, value=reserved.value,
                             line_pool=reserved.defn.lines["disclose"], private=True), "soft"
        # Canary facts are only ever said in a session their later asker misses.
        attrs = [a for eid in self.order if eid in present for a in self.attrs[eid] if not a.hidden
                 and not (a.secret is not None and a.secret in present)]
        if index in self.handoff_at:  # a shared fact for a later arrival to ask about: decisions first
            fresh = [a for a in attrs if not a.disclosed and a.secret is None and self._speaker(a, present)
                     and a.defn.kind in ("decision", "objective", "fact", "preference")]
            fresh = [a for a in fresh if a.defn.kind == "decision"] or fresh
            if fresh:
                attr = self.rng.choice(fresh)
                return EventPlan("disclose", self._speaker(attr, present), attr, value=attr.value,
                                 line_pool=attr.defn.lines["disclose"]), "soft"
        if tier == "signal":
            weights = []
            candidates = []
            for a in attrs:
                if not (a.disclosed and a.defn.changeable and a.secret is None and "change" in a.defn.lines):
                    continue
                if a.defn.progression and a.pool.index(a.value) + 1 >= len(a.pool):
                    continue
                if self._speaker(a, present) is None:
                    continue
                dist = self.types[a.entity].change_weights()
                base = dist.get(a.defn.name, 0.0)
                top = max(dist.values(), default=1.0) or 1.0
                candidates.append(a)
                weights.append(max(base, 0.15 * top) if a.defn.kind != "decision" else top)
            if candidates:
                attr = self.rng.choices(candidates, weights=weights)[0]
                speaker = self._speaker(attr, present)
                return EventPlan("change", speaker, attr, value=self._next_value(attr), old=attr.value,
                                 line_pool=attr.defn.lines["change"]), "signal"
            tier = "soft"
        undisclosed = [a for a in attrs if not a.disclosed and self._speaker(a, present) is not None]
        disclosed = [a for a in attrs if a.disclosed and self._speaker(a, present) is not None]
        episodes = [e for e in self.episodes if e.message_id is None and e.entity in present]
        moves = []
        if undisclosed:
            moves += ["disclose"] * 6
        if episodes:
            moves += ["episode"] * 2
        if disclosed:
            moves += ["mention"] * 3
        if not moves:
            return None, "noise"
        move = self.rng.choice(moves)
        if move == "episode":
            ep = self.rng.choice(episodes)
            return EventPlan("episode", ep.entity, target=ep.target, line_pool=ep.lines), "soft"
        attr = self.rng.choice(undisclosed if move == "disclose" else disclosed)
        private = attr.secret is not None  # canary facts are only ever private notes of their owner
        speaker = attr.entity if private else self._speaker(attr, present)
        return EventPlan(move, speaker, attr, value=attr.value, line_pool=attr.defn.lines[move],
                         private=private), "soft"

    def _apply(self, event: EventPlan, i: int, session_id: str, tier: str, ids: list[str],
               begins: datetime) -> None:
        if event.kind == "episode":
            ep = next(e for e in self.episodes if e.entity == event.speaker and e.target == event.target)
            ep.message_id = ids[0]
            ep.timestamp = begins + timedelta(minutes=int(ids[0].rsplit("-m", 1)[1]) - 1)
            self.events.append(GoldEvent(session_id=session_id, tier=tier, kind="disclose", entity=event.speaker,
                                         attribute=f"episode:{event.target}", new=event.target, message_ids=ids))
            return
        attr = event.attr
        if event.kind == "change":
            attr.value = event.value
            if event.value not in attr.held:
                attr.held.append(event.value)
            attr.statements, attr.statement_sessions, attr.changed_at = list(ids), [i], i
        elif event.kind == "disclose":
            attr.disclosed, attr.first_session = True, i
            attr.statements, attr.statement_sessions = list(ids), [i]
        else:
            attr.statements += ids
            attr.statement_sessions.append(i)
        if attr.defn.kind == "decision" and event.kind in ("disclose", "change"):
            attr.proposer, attr.proposal_ids = event.speaker, ids[:1]
        self.events.append(GoldEvent(session_id=session_id, tier=tier, kind=event.kind, entity=attr.entity,
                                     attribute=attr.key, old=event.old, new=event.value, message_ids=ids))

    # -- visibility -------------------------------------------------------------------
    def visible(self, mid: str, who: str) -> bool:
        msg = self.messages[mid]
        return msg.author == who or (msg.scope == "shared" and who in msg.present)

    def evidence(self, attr: Attr) -> list[str]:
        """What a probe on ``attr`` cites: its newest ``EVIDENCE_PER_ATTRIBUTE`` statements (the newest wins)."""
        return list(attr.statements[-EVIDENCE_PER_ATTRIBUTE:])

    def observers(self, attr: Attr) -> list[str]:
        return self.seen_all(self.evidence(attr))

    def seen_all(self, mids: list[str]) -> list[str]:
        return [e for e in self.order if all(self.visible(m, e) for m in mids)]

    def known_to(self, observer: str, subject: str) -> dict[str, str]:
        return {a.key: a.value for a in self.attrs.get(subject, []) if a.disclosed and a.statements
                and all(self.visible(m, observer) for m in a.statements)}

    def _asker(self, attr: Attr, query: str) -> str | None:
        return self._pick_asker(self.observers(attr), attr.entity, query)

    def _named(self, query: str) -> set[str]:
        """Entities a query speaks of in the third person ("rosa", "the principal")."""
        named = {e for e in self.order if last_option_in(query, [e]) is not None}
        if last_option_in(query, ["the principal", "the user"]) is not None:
            named.add(self.principal)
        return named

    def _pick_asker(self, seen: list[str], subject: str, query: str) -> str | None:
        """One of ``seen`` other than ``subject`` and anyone the query names (agents first); an agent
        may fall back to asking about itself, a human never does (it would speak of itself in the third
        person). None: no such asker."""
        named = self._named(query)
        agents = [e for e in seen if e != subject and e not in named and self.voices[e] != "human"]
        others = [e for e in seen if e != subject and e not in named]
        pool = agents or others or [e for e in seen if e not in named and self.voices[e] != "human"]
        return self.rng.choice(pool) if pool else None

    def _joined(self, number: int) -> list[str]:
        """Entities that took part in some session up to session ``number`` (1-based)."""
        return [e for e in self.order if self.first_seen.get(e, number) < number]

    # -- checkpoints --------------------------------------------------------------------
    def _checkpoint(self, cp_id: str, number: int, cp, asked_at: datetime) -> CheckpointLine:
        horizon = self.spec.horizon.horizon_of(number)
        allowed = cp.expanded()
        candidates: dict[str, list] = {}
        all_attrs = [a for eid in self.order for a in self.attrs[eid]]
        live = [a for a in all_attrs if a.disclosed and not a.hidden and a.secret is None and a.statements]
        for a in live:
            kind = a.defn.kind
            changed_recently = a.changed_at is not None and a.changed_at > self.previous_cp
            if kind in REVISION_KINDS and a.changed_at is not None and "revision" in allowed:
                sub = ("preference_reversal" if kind == "preference" else "fact_update") if changed_recently \
                    else "half_life"
                candidates.setdefault("revision", []).append(("revision", sub, a))
            elif kind in RECALL_KINDS:
                candidates.setdefault("fact_recall", []).append(("fact_recall", None, a))
            if kind == "relationship":
                candidates.setdefault("relationship_recall", []).append(("relationship_recall", None, a))
            if kind in FRONTIER:
                candidates.setdefault(FRONTIER[kind], []).append((FRONTIER[kind], None, a))
            if kind == "decision" and a.proposer:
                candidates.setdefault("attribution", []).append(("attribution", None, a))
            if kind in ("fact", "preference", "decision", "objective") \
                    and len([e for e in self.observers(a) if e != a.entity]) >= 2 \
                    and self.spec.paradigm == "multi_peer":
                candidates.setdefault("consistency", []).append(("consistency", None, a))
            if kind in ("decision", "objective", "fact", "preference") and self.spec.paradigm == "multi_peer":
                # Handoff: an entity that joined mid-trajectory asks about a shared fact established before.
                for joiner in self.order:
                    joined = self.first_seen.get(joiner, 0)
                    if joiner != a.entity and 0 < joined < number and a.first_session < joined:
                        candidates.setdefault("handoff", []).append(("handoff", joiner, a))
        for a in all_attrs:
            if a.hidden:
                candidates.setdefault("negative_recall", []).append(("negative_recall", None, a))
            if a.secret is not None and a.disclosed and self.first_seen.get(a.secret, 0) < number:
                candidates.setdefault("canary", []).append(("canary", None, a))
        for ep in self.episodes:
            if ep.message_id is not None:
                candidates.setdefault("temporal_recall", []).append(("temporal_recall", None, ep))
        for eid in self.order:
            for action in self.types[eid].actions:
                usable = [a for a in self.attrs[eid] if a.defn.action == action.subtype and a in live]
                if usable:
                    candidates.setdefault("action", []).append(("action", action, usable))
        public: list[Probe] = []
        truth: list[GoldProbe] = []
        picks = {t: self.rng.sample(candidates.get(t, []), min(MAX_PER_TYPE, len(candidates.get(t, []))))
                 for t in allowed}
        # Round robin over the requested types, so a cap never starves the types listed last.
        for round_ in range(MAX_PER_TYPE):
            for ptype in allowed:
                if round_ >= len(picks[ptype]) or len(public) >= MAX_PROBES_PER_CHECKPOINT:
                    continue
                for p, g in self._probe(cp_id, len(public) + 1, horizon, asked_at, number,
                                        *picks[ptype][round_]):
                    pid = f"{cp_id}-p{len(public) + 1}"
                    public.append(p.model_copy(update={"probe_id": pid}))
                    truth.append(g.model_copy(update={"probe_id": pid}))
        self.probes += truth
        self.snapshots[cp_id] = {eid: self.types[eid].snapshot(self.attrs[eid], self) for eid in self.order}
        return CheckpointLine(checkpoint_id=cp_id, after_session=number, horizon=horizon, probes=public)

    def _options(self, pool: list[str]) -> list[str]:
        options = list(pool) + [UNKNOWN]
        self.rng.shuffle(options)
        return options

    def _query(self, attr: Attr) -> str:
        return T.fill(self.rng.choice(attr.defn.queries), subject=_display(attr.entity), slot=attr.slot or "",
                      label=attr.defn.label)

    def _stale(self, attr: Attr) -> list[str]:
        return [v for v in attr.held if v != attr.value]

    def _probe(self, cp_id, n, horizon, asked_at, number, ptype, extra, obj) -> list[tuple[Probe, GoldProbe]]:
        at = _stamp(asked_at)
        pid = f"{cp_id}-p{n}"
        common = dict(probe_id=pid, checkpoint_id=cp_id, probe_type=ptype, horizon=horizon)
        if ptype == "temporal_recall":
            return self._temporal(pid, common, at, asked_at, obj)
        if ptype == "action":
            return self._action(pid, common, at, extra, obj)
        attr: Attr = obj
        common.update(attribute=attr.key, entity=attr.entity)
        if ptype in ("negative_recall", "canary"):
            query = self._query(attr)
            if ptype == "canary":
                asker = attr.secret
            else:  # anyone who has joined by now, never the subject
                pool = [e for e in self._joined(number) if e != attr.entity and e not in self._named(query)]
                if not pool:
                    return []
                asker = self.rng.choice(pool)
            probe = Probe(probe_id=pid, asked_by=asker, query=query, asked_at=at,
                          options=self._options(attr.pool))
            gold = GoldProbe(**common, abstention=True, answer=UNKNOWN, evidence=[],
                             owner=attr.entity if ptype == "canary" else None)
            return [(probe, gold)]
        if ptype == "attribution":
            options = self._options(self.order)
            query = T.fill(self.rng.choice(ATTRIBUTION_QUERIES), value=attr.value, label=attr.defn.label)
            asker = self._pick_asker(self.seen_all(attr.proposal_ids), attr.entity, query)
            if asker is None:
                return []
            return [(Probe(probe_id=pid, asked_by=asker, query=query, asked_at=at, options=options),
                     GoldProbe(**common, answer=attr.proposer, evidence=list(attr.proposal_ids)))]
        options = self._options(attr.pool)
        query = self._query(attr)
        gold = GoldProbe(**common, subtype=extra if ptype == "revision" else None, answer=attr.value,
                         stale=self._stale(attr), evidence=self.evidence(attr))
        if ptype == "handoff":
            return [(Probe(probe_id=pid, asked_by=extra, query=query, asked_at=at, options=options), gold)]
        if ptype == "consistency":
            seen = self.observers(attr)
            pair = [e for e in seen if e != attr.entity and e not in self._named(query)][:2]
            if len(pair) < 2:
                return []
            return [(Probe(probe_id=pid, asked_by=who, query=query, asked_at=at, options=options), gold)
                    for who in pair]
        asker = self._asker(attr, query)
        if asker is None:
            return []
        return [(Probe(probe_id=pid, asked_by=asker, query=query, asked_at=at, options=options), gold)]

    def _temporal(self, pid, common, at, asked_at, ep: _Episode):
        """Four amounts around the answer, the answer's rank among them uniform (DRIFT §6 temporal).

        The rank (how many amounts lie below the answer) is drawn first, uniformly; the unit is the
        natural one for the age (days under 3 weeks, weeks under 20, else months), or a finer one when
        the rank does not fit above 1 in it; with no unit that fits, the probe is not asked. So the
        smallest amount, which a hit dated at question time points to, is right in a quarter of
        the probes, as any other position.
        """
        days = (asked_at - ep.timestamp).total_seconds() / 86400
        natural = "days" if days < 21 else "weeks" if days < 7 * 20 else "months"
        k = self.rng.randrange(4)  # how many options lie below the answer
        for unit in ("months", "weeks", "days")[("months", "weeks", "days").index(natural):]:
            amount = days / UNITS[unit]
            right = round(amount)
            # Days and weeks are measured exactly as the reader does; a month counts 30 days here and
            # 30.44 there, so month options (and amounts near a half) keep a spread of at least 2.
            exact = unit != "months" and abs(amount - right) < 0.45
            spread = max(1 if exact else 2, right // 3)
            if right >= 1 and right - k * spread >= 1:
                break
        else:
            return []
        amounts = [right + (j - k) * spread for j in range(4)]

        def label(m: int) -> str:
            return f"{m} {unit if m != 1 else unit[:-1]}"
        options = [label(m) for m in amounts]
        self.rng.shuffle(options)
        options.append(UNKNOWN)
        query = f"How long before now did {_display(ep.entity)}'s {ep.target} happen?"
        seen = [e for e in self.order if self.visible(ep.message_id, e)]
        asker = self._pick_asker(seen, ep.entity, query)
        if asker is None:
            return []
        probe = Probe(probe_id=pid, asked_by=asker, query=query, asked_at=at, options=options,
                      temporal=Temporal(target=ep.target, unit=unit))
        gold = GoldProbe(**common, answer=label(right), evidence=[ep.message_id], entity=ep.entity,
                         attribute=f"episode:{ep.target}")
        return [(probe, gold)]

    def _action(self, pid, common, at, action, usable: list[Attr]):
        """Choices whose tag overlap says nothing about which one is right.

        Two attributes: the full 2 x 2 product of {right, one wrong} values, so every choice
        shares exactly one value with two others. One attribute: the right value and up to
        three wrong ones (no overlap at all). Exactly one choice matches the ground truth; the
        ``default`` (what the reader picks from an empty context) is drawn uniformly among the
        choices, so it is right with chance 1/len(choices), as any position.
        """
        attrs = self.rng.sample(usable, min(2, len(usable)))
        if any(len(a.pool) < 3 for a in attrs):
            return []
        right = {a.key: a.value for a in attrs}
        if len(attrs) == 2:
            wrong = {a.key: self.rng.choice([v for v in a.pool if v != a.value]) for a in attrs}
            first, second = (a.key for a in attrs)
            combos = [{first: x[first], second: y[second]} for x in (right, wrong) for y in (right, wrong)]
        else:
            a = attrs[0]
            combos = [right] + [{a.key: v} for v in self.rng.sample([v for v in a.pool if v != a.value],
                                                                   min(3, len(a.pool) - 1))]
        default = self.rng.randrange(len(combos))
        order = list(range(len(combos)))
        self.rng.shuffle(order)
        choices, answer = [], None
        for slot, idx in enumerate(order, start=1):
            combo = combos[idx]
            text = "; ".join(T.fill(a.defn.choice, value=combo[a.key]) for a in attrs)
            choices.append(Choice(choice_id=f"{pid}-o{slot}", text=text[0].upper() + text[1:], tags=combo,
                                  default=idx == default))
            if idx == 0:
                answer = f"{pid}-o{slot}"
        subject = attrs[0].entity
        evidence = [m for a in attrs for m in self.evidence(a)]
        query = T.fill(self.rng.choice(action.queries), subject=_display(subject))
        asker = self._pick_asker(self.seen_all(evidence), subject, query)
        if asker is None:
            return []
        probe = Probe(probe_id=pid, asked_by=asker, query=query, asked_at=at, choices=choices,
                      domains={a.key: list(a.pool) for a in attrs})
        gold = GoldProbe(**common, subtype=action.subtype, answer=answer, evidence=evidence, entity=subject,
                         attribute=",".join(a.key for a in attrs))
        return [(probe, gold)]

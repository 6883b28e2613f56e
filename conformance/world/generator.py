"""The deterministic DRIFT corpus generator (user_assistant paradigm, short horizon).

One scenario is made in two passes, both driven by one ``random.Random`` seeded
from ``(seed, scenario index)``:

1. **Plan** (no text yet): the principal's communication style and latent
   profile, which session carries which event (DRIFT §3.3: signal sessions change
   a fact, soft sessions disclose or re-mention one, noise sessions carry none),
   and which probes each checkpoint asks (§6.1).
2. **Render**: walk the sessions in time order, turn each planned event into
   dialogue from :mod:`conformance.world.templates`, track the latent state, and
   at each checkpoint emit the public probes (fixture) and their truth (gold).

The texts obey the deterministic reader's rule so that the gold evidence alone
answers every probe: among the hits, the newest that names any option wins, and
within a hit the option named last wins. Hence a message that carries an event
names only values of that event's attribute, and a change names the new value
last. Noise sessions name pool values only in the assistant's asides (news, TV,
trivia): distractors that share vocabulary with the probes but say nothing about
the principal.

Determinism: no ``hash()``, no wall clock, no set iteration; the output files are
canonical JSON (see :mod:`conformance.contract.corpus`), so one seed gives
byte-identical files.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from conformance.contract.corpus import write_fixture, write_gold
from conformance.contract.fixture import (
    CheckpointLine,
    EntityRef,
    HeaderLine,
    HorizonPhase,
    Message,
    Probe,
    SessionLine,
)
from conformance.contract.gold import GoldEvent, GoldFile, GoldProbe
from conformance.world import templates as T

SOURCE = "drift-generator/1"
PARADIGM = "user_assistant"
SCENARIO_PREFIX = "ua-short"
HORIZON = "short"
PRINCIPAL, ASSISTANT = "principal", "assistant"
UNKNOWN = "unknown"

START_TIME = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
MAX_START_OFFSET_MINUTES = 7 * 24 * 60  # each scenario starts somewhere in its first week
SESSION_GAP_HOURS = 8
PROBE_DELAY = timedelta(hours=1)  # probes are asked an hour after the checkpoint's last session starts

SIGNAL_FRACTION = 0.10  # DRIFT §3.3: ~10% of sessions change a fact
POOL_SIZE = 6  # option values per attribute per scenario ("unknown" comes on top)
STABLE_FACTS = 2  # disclosed attributes that never change (plain fact recall)
NEGATIVES_PER_CHECKPOINT = 2
MAX_PROBES_PER_CHECKPOINT = 6
MIN_PROBES_PER_CHECKPOINT = 4
MIN_PROBES = {"revision": 2, "negative_recall": 2, "fact_recall": 3}  # per scenario
DISTRACTOR_RATE = 0.6  # share of noise sessions with a pool value in an aside
MAX_PLAN_ATTEMPTS = 500


@dataclass(frozen=True)
class Style:
    """The principal's communication style; it picks template variants."""

    formality: str  # "casual" | "formal"
    verbosity: str  # "terse" | "chatty"


@dataclass(frozen=True)
class PlannedEvent:
    """One latent event: ``kind`` is disclose | change | mention; ``old`` only for change."""

    kind: str
    attribute: str
    new: str
    old: str | None = None


@dataclass(frozen=True)
class ProbeSpec:
    """What a probe asks, decided at planning time; answers come from the render pass."""

    attribute: str
    probe_type: str  # fact_recall | negative_recall | revision
    subtype: str | None = None  # revision: fact_update | half_life


@dataclass(frozen=True)
class Plan:
    """A scenario's latent trajectory before any text exists.

    Shapes: ``pools`` attribute -> option values; ``initial`` latent attribute ->
    starting value (never-mentioned attributes are absent); ``tiers`` one tier per
    session index; ``events`` session index -> its event (signal and soft only);
    ``checkpoints`` sessions stored before each checkpoint; ``probes`` one list of
    specs per checkpoint.
    """

    style: Style
    pools: dict[str, list[str]]
    initial: dict[str, str]
    negatives: list[str]
    tiers: list[str]
    events: dict[int, PlannedEvent]
    checkpoints: list[int]
    probes: list[list[ProbeSpec]]


# --- public API ------------------------------------------------------------

def generate_corpus(fixtures_dir: Path, gold_dir: Path, seed: int = 42, n_scenarios: int = 8,
                    sessions: int = 30, noise_ratio: float = 0.70) -> list[str]:
    """Write fixtures_dir/<id>.jsonl and gold_dir/<id>.json; return scenario ids.

    Ids are ``ua-short-001`` .. in order. Existing files are overwritten, others
    left alone (cleaning is the caller's business).

    Raises:
        ValueError: parameters that leave no room for the required events/probes.
    """
    if not 1 <= n_scenarios <= 999:
        raise ValueError(f"n_scenarios must be 1..999, got {n_scenarios}")
    ids = []
    for index in range(n_scenarios):
        scenario_id = f"{SCENARIO_PREFIX}-{index + 1:03d}"
        lines, gold = build_scenario(scenario_id, seed, index, sessions, noise_ratio)
        write_fixture(Path(fixtures_dir) / f"{scenario_id}.jsonl", lines)
        write_gold(Path(gold_dir) / f"{scenario_id}.json", gold)
        ids.append(scenario_id)
    return ids


def build_scenario(scenario_id: str, seed: int, index: int, sessions: int = 30,
                   noise_ratio: float = 0.70) -> tuple[list, GoldFile]:
    """One scenario in memory: (fixture lines, header first; gold)."""
    # A string seed is hashed with SHA-512 by ``random``: stable across runs and
    # platforms, unlike ``hash()``; the index keeps scenarios independent.
    rng = random.Random(f"{SOURCE}:{seed}:{index}")
    start = START_TIME + timedelta(minutes=15 * rng.randrange(MAX_START_OFFSET_MINUTES // 15))
    plan = plan_scenario(rng, sessions, noise_ratio)
    return _render(rng, scenario_id, seed, start, plan)


# --- planning --------------------------------------------------------------

def tier_counts(sessions: int, noise_ratio: float) -> tuple[int, int, int]:
    """(signal, soft, noise) session counts: 30 sessions at 0.70 give (3, 6, 21)."""
    noise = round(sessions * noise_ratio)
    # At least as many changes as the scenario needs revision probes.
    signal = max(MIN_PROBES["revision"], round(sessions * SIGNAL_FRACTION))
    soft = sessions - noise - signal
    return signal, soft, noise


def checkpoint_positions(sessions: int) -> list[int]:
    """Sessions stored before each checkpoint: thirds of the trajectory (10, 20, 30)."""
    return sorted({sessions * k // 3 for k in (1, 2, 3)} - {0})


def plan_scenario(rng: random.Random, sessions: int, noise_ratio: float) -> Plan:
    """Draw a plan; re-draw (same rng, so still deterministic) until it meets the probe minimums."""
    n_signal, n_soft, n_noise = tier_counts(sessions, noise_ratio)
    n_distinct = min(n_signal, len(T.CHANGEABLE))
    if n_noise < 0 or n_soft < n_distinct + 1:
        raise ValueError(f"{sessions} sessions at noise_ratio {noise_ratio} leave {n_soft} soft sessions; "
                         f"at least {n_distinct + 1} are needed to disclose facts before they change")
    checkpoints = checkpoint_positions(sessions)
    if len(checkpoints) < 2:
        raise ValueError(f"{sessions} sessions are too few for two checkpoints")
    style = Style(rng.choice([T.CASUAL, T.FORMAL]), rng.choice(["terse", "chatty"]))
    pools = {attr: rng.sample(T.POOLS[attr], POOL_SIZE) for attr in T.ATTRIBUTES}
    for _ in range(MAX_PLAN_ATTEMPTS):
        plan = _try_plan(rng, style, pools, sessions, checkpoints, n_signal, n_soft)
        if plan is not None:
            return plan
    raise ValueError(f"no plan for {sessions} sessions at noise_ratio {noise_ratio} meets the probe minimums "
                     f"{MIN_PROBES}; use more sessions or a lower noise_ratio")


def _try_plan(rng: random.Random, style: Style, pools: dict[str, list[str]], sessions: int,
              checkpoints: list[int], n_signal: int, n_soft: int) -> Plan | None:
    """One attempt at a plan; None when the draw cannot satisfy the constraints."""
    # Which attributes change, in time order; more signals than changeable
    # attributes cycle through them again (a second change of the same fact).
    distinct = rng.sample(T.CHANGEABLE, min(n_signal, len(T.CHANGEABLE)))
    change_attrs = [distinct[i % len(distinct)] for i in range(n_signal)]
    rest = [a for a in T.ATTRIBUTES if a not in distinct]
    stable = rng.sample(rest, min(STABLE_FACTS, n_soft - len(distinct)))
    negatives = [a for a in rest if a not in stable]

    signal_slots, soft_slots = _place_tiers(rng, checkpoints, n_signal, n_soft)
    if len(signal_slots) != n_signal or len(soft_slots) != n_soft:
        return None  # a checkpoint window too small for its share of sessions
    deadlines = {}  # attribute -> session of its first change: it must be disclosed before
    for attr, pos in zip(change_attrs, signal_slots):
        deadlines.setdefault(attr, pos)
    if not _feasible(list(deadlines.values()), len(stable), soft_slots):
        return None

    initial = {attr: rng.choice(pools[attr]) for attr in T.ATTRIBUTES if attr in distinct or attr in stable}
    events = _assign_events(rng, pools, initial, change_attrs, signal_slots, soft_slots, deadlines, stable)
    probes = _plan_probes(rng, events, checkpoints, negatives)
    totals = {kind: sum(spec.probe_type == kind for specs in probes for spec in specs) for kind in MIN_PROBES}
    if any(totals[kind] < need for kind, need in MIN_PROBES.items()):
        return None
    tiers = ["noise"] * sessions
    for pos in signal_slots:
        tiers[pos] = "signal"
    for pos in soft_slots:
        tiers[pos] = "soft"
    return Plan(style, pools, initial, negatives, tiers, events, checkpoints, probes)


def _place_tiers(rng: random.Random, checkpoints: list[int], n_signal: int,
                 n_soft: int) -> tuple[list[int], list[int]]:
    """Sorted (signal, soft) session indexes, spread round-robin over checkpoint windows.

    Spreading puts a change before every checkpoint, so each checkpoint has a
    fresh revision probe. Session 0 is never a signal (nothing is known yet).
    """
    bounds = [0] + checkpoints
    windows = [list(range(lo, hi)) for lo, hi in zip(bounds, bounds[1:])]
    signal: list[int] = []
    soft: list[int] = []
    for count, chosen, banned in ((n_signal, signal, {0}), (n_soft, soft, set())):
        per_window = [count // len(windows) + (w < count % len(windows)) for w in range(len(windows))]
        for window, k in zip(windows, per_window):
            free = [s for s in window if s not in banned and s not in signal]
            chosen.extend(rng.sample(free, min(k, len(free))))
    return sorted(signal), sorted(soft)


def _feasible(deadlines: Sequence[int], n_stable: int, slots: Sequence[int]) -> bool:
    """Can the soft ``slots`` still disclose every pending fact in time?

    Earliest deadline first: the k-th earliest slot must precede the k-th
    earliest change, and there must be a slot for every stable fact as well.
    """
    if len(slots) < len(deadlines) + n_stable:
        return False
    return all(slot < deadline for slot, deadline in zip(sorted(slots), sorted(deadlines)))


def _assign_events(rng: random.Random, pools: dict[str, list[str]], initial: dict[str, str],
                   change_attrs: list[str], signal_slots: list[int], soft_slots: list[int],
                   deadlines: dict[str, int], stable: list[str]) -> dict[int, PlannedEvent]:
    """Session index -> event, simulating the latent state in time order.

    Soft sessions choose at random among the moves that keep the rest feasible:
    disclose a fact that will change, disclose a stable fact, or re-mention the
    current value of a disclosed one.
    """
    current = dict(initial)
    held = {attr: [value] for attr, value in initial.items()}  # every value an attribute has had
    disclosed: list[str] = []
    pending_change = list(deadlines)  # first-change order
    pending_stable = list(stable)
    changes = iter(change_attrs)
    events: dict[int, PlannedEvent] = {}
    for pos in sorted(signal_slots + soft_slots):
        if pos in signal_slots:
            attr = next(changes)
            assert attr in disclosed, "feasibility guarantees disclosure before change"
            # Prefer a value the principal never had, so stale answers stay distinct;
            # long trajectories that exhaust the pool fall back to any other value.
            fresh = [v for v in pools[attr] if v not in held[attr]]
            new = rng.choice(fresh or [v for v in pools[attr] if v != current[attr]])
            events[pos] = PlannedEvent("change", attr, new, old=current[attr])
            current[attr] = new
            held[attr].append(new)
            continue
        later = [s for s in soft_slots if s > pos]
        moves: dict[str, list[str]] = {"disclose": [], "mention": []}
        for attr in pending_change:
            rest = [deadlines[a] for a in pending_change if a != attr]
            if _feasible(rest, len(pending_stable), later):
                moves["disclose"].append(attr)
        for attr in pending_stable:
            if _feasible([deadlines[a] for a in pending_change], len(pending_stable) - 1, later):
                moves["disclose"].append(attr)
        if _feasible([deadlines[a] for a in pending_change], len(pending_stable), later):
            moves["mention"] = list(disclosed)
        kind = rng.choice([k for k, attrs in moves.items() if attrs])
        attr = rng.choice(moves[kind])
        events[pos] = PlannedEvent(kind, attr, current[attr])
        if kind == "disclose":
            disclosed.append(attr)
            (pending_change if attr in pending_change else pending_stable).remove(attr)
    return events


def _plan_probes(rng: random.Random, events: dict[int, PlannedEvent], checkpoints: list[int],
                 negatives: list[str]) -> list[list[ProbeSpec]]:
    """Probe specs per checkpoint (DRIFT §6.1), in PRNG-shuffled order.

    Every change since the previous checkpoint gets a ``fact_update`` revision;
    one older change may be re-asked as ``half_life``; two never-mentioned
    attributes get negative recall; disclosed, unchanged facts fill the rest.
    """
    result = []
    previous = 0
    for after in checkpoints:
        disclosed: list[str] = []
        last_change: dict[str, int] = {}
        for pos in sorted(events):
            if pos >= after:
                break
            event = events[pos]
            if event.kind == "disclose":
                disclosed.append(event.attribute)
            elif event.kind == "change":
                last_change[event.attribute] = pos
        fresh = [a for a in disclosed if last_change.get(a, -1) >= previous]
        older = [a for a in disclosed if -1 < last_change.get(a, -1) < previous]
        facts = [a for a in disclosed if a not in last_change]
        specs = [ProbeSpec(a, "revision", "fact_update") for a in fresh]
        if older:
            specs.append(ProbeSpec(rng.choice(older), "revision", "half_life"))
        asked_negatives = rng.sample(negatives, min(NEGATIVES_PER_CHECKPOINT, len(negatives)))
        specs += [ProbeSpec(a, "negative_recall") for a in asked_negatives]
        # Fill up to the cap with fact recall, but keep one even past the cap:
        # long trajectories have many fresh changes and still need plain recall.
        room = max(1, MAX_PROBES_PER_CHECKPOINT - len(specs))
        specs += [ProbeSpec(a, "fact_recall") for a in rng.sample(facts, min(room, len(facts)))]
        spare = [a for a in negatives if a not in asked_negatives]
        while len(specs) < MIN_PROBES_PER_CHECKPOINT and spare:
            specs.append(ProbeSpec(spare.pop(0), "negative_recall"))
        rng.shuffle(specs)
        result.append(specs)
        previous = after
    return result


# --- rendering -------------------------------------------------------------

Turn = tuple[str, str]  # (author entity id, text)


def _fact_turns(rng: random.Random, style: Style, event: PlannedEvent) -> tuple[list[Turn], list[int]]:
    """Dialogue for a signal/soft session: (turns, indexes of the turns that state the value).

    Shape: [opener, reply]? + principal fact line + assistant ack + follow-up pairs;
    2..8 turns. The ack repeats the value half the time (it is then evidence too).
    """
    chatty = style.verbosity == "chatty"
    turns: list[Turn] = []
    if rng.random() < (0.8 if chatty else 0.3):
        opener = rng.choice(T.OPENERS)
        turns += [(PRINCIPAL, opener.ask(style.formality)), (ASSISTANT, opener.reply)]
    line = rng.choice(T.FACT_LINES[event.attribute][event.kind][style.formality])
    turns.append((PRINCIPAL, line.format(value=event.new, new=event.new, old=event.old)))
    evidence = [len(turns) - 1]
    if rng.random() < 0.5:
        ack = rng.choice(T.ACKS[event.attribute]["change" if event.kind == "change" else "value"])
        evidence.append(len(turns))
        turns.append((ASSISTANT, ack.format(value=event.new, new=event.new)))
    else:
        turns.append((ASSISTANT, rng.choice(T.GENERIC_ACKS)))
    n_follow = rng.randint(1, 2) if chatty else int(rng.random() < 0.3)
    turns += _follow_ups(rng, style, n_follow)
    return turns, evidence


def _noise_turns(rng: random.Random, style: Style, pools: dict[str, list[str]]) -> list[Turn]:
    """Dialogue for a noise session: a routine topic, 1..4 exchanges, maybe a distractor aside."""
    topic = rng.choice(T.NOISE_TOPICS)
    exchanges = rng.randint(2, 4) if style.verbosity == "chatty" else rng.randint(1, 2)
    turns = [(PRINCIPAL, topic.ask(style.formality)), (ASSISTANT, topic.reply)]
    turns += _follow_ups(rng, style, exchanges - 1)
    if rng.random() < DISTRACTOR_RATE:
        attr = rng.choice(T.ATTRIBUTES)
        aside = rng.choice(T.DISTRACTORS[attr]).format(value=rng.choice(pools[attr]))
        where = rng.choice([i for i, (author, _) in enumerate(turns) if author == ASSISTANT])
        turns[where] = (ASSISTANT, f"{turns[where][1]} {aside}")
    return turns


def _follow_ups(rng: random.Random, style: Style, count: int) -> list[Turn]:
    """``count`` follow-up exchanges (2 turns each); the last is often a thank-you closer."""
    if count <= 0:
        return []
    closing = rng.random() < 0.6
    chosen = rng.sample(T.FOLLOW_UPS, count - int(closing)) + ([rng.choice(T.CLOSERS)] if closing else [])
    turns: list[Turn] = []
    for exchange in chosen:
        turns += [(PRINCIPAL, exchange.ask(style.formality)), (ASSISTANT, exchange.reply)]
    return turns


def _messages(session_id: str, start: datetime, turns: list[Turn]) -> list[Message]:
    """Turns -> messages ``<session>-m<M>`` (1-based), one minute apart from the session start."""
    return [
        Message(message_id=f"{session_id}-m{i + 1}", author=author,
                role="user" if author == PRINCIPAL else "assistant",
                text=text, timestamp=_stamp(start + timedelta(minutes=i)), scope="shared")
        for i, (author, text) in enumerate(turns)
    ]


def _stamp(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class _Tracker:
    """The principal's latent state during the render pass, with the evidence for it.

    ``statements[attr]``: message ids stating the current value since it became
    current; ``change_ids[attr]``: message ids of the latest change; ``stale[attr]``:
    earlier values, oldest first.
    """

    def __init__(self, initial: dict[str, str]):
        self.value = dict(initial)
        self.statements: dict[str, list[str]] = {}
        self.change_ids: dict[str, list[str]] = {}
        self.stale: dict[str, list[str]] = {}

    def apply(self, event: PlannedEvent, message_ids: list[str]) -> None:
        attr = event.attribute
        if event.kind == "change":
            earlier = self.stale.get(attr, []) + [self.value[attr]]
            # A value may come back on long trajectories: it is then current, not stale.
            self.stale[attr] = [v for v in dict.fromkeys(earlier) if v != event.new]
            self.value[attr] = event.new
            self.change_ids[attr] = list(message_ids)
            self.statements[attr] = list(message_ids)
        else:
            self.statements.setdefault(attr, []).extend(message_ids)


def _render(rng: random.Random, scenario_id: str, seed: int, start: datetime,
            plan: Plan) -> tuple[list, GoldFile]:
    """Walk the plan in time order: sessions, checkpoints, and the gold beside them."""
    sessions = len(plan.tiers)
    header = HeaderLine(
        scenario_id=scenario_id, paradigm=PARADIGM, source=SOURCE,
        horizons=[HorizonPhase(name=HORIZON, sessions=sessions, session_gap_hours=SESSION_GAP_HOURS)],
        entities=[EntityRef(entity_id=PRINCIPAL, type="human"),
                  EntityRef(entity_id=ASSISTANT, type="assistant_agent")],
        holdout=False)
    lines: list = [header]
    tracker = _Tracker(plan.initial)
    events: list[GoldEvent] = []
    tiers: dict[str, str] = {}
    snapshots: dict[str, dict[str, dict[str, str]]] = {}
    probes: list[GoldProbe] = []
    for index in range(sessions):
        session_id = f"{scenario_id}-s{index + 1:02d}"
        begins = start + timedelta(hours=SESSION_GAP_HOURS * index)
        event = plan.events.get(index)
        if event is None:
            messages = _messages(session_id, begins, _noise_turns(rng, plan.style, plan.pools))
        else:
            turns, evidence = _fact_turns(rng, plan.style, event)
            messages = _messages(session_id, begins, turns)
            ids = [messages[i].message_id for i in evidence]
            tracker.apply(event, ids)
            events.append(GoldEvent(session_id=session_id, tier=plan.tiers[index], kind=event.kind,
                                    entity=PRINCIPAL, attribute=event.attribute, old=event.old,
                                    new=event.new, message_ids=ids))
        tiers[session_id] = plan.tiers[index]
        lines.append(SessionLine(session_id=session_id, index=index, time=_stamp(begins),
                                 participants=[PRINCIPAL, ASSISTANT], messages=messages))
        if index + 1 in plan.checkpoints:
            number = plan.checkpoints.index(index + 1) + 1
            checkpoint_id = f"{scenario_id}-c{number}"
            public, truth = _checkpoint_probes(rng, checkpoint_id, plan, tracker,
                                               _stamp(begins + PROBE_DELAY), plan.probes[number - 1])
            lines.append(CheckpointLine(checkpoint_id=checkpoint_id, after_session=index + 1,
                                        horizon=HORIZON, probes=public))
            probes += truth
            snapshots[checkpoint_id] = {PRINCIPAL: dict(tracker.value)}
    profile = {"style": {"formality": plan.style.formality, "verbosity": plan.style.verbosity},
               **plan.initial}
    gold = GoldFile(scenario_id=scenario_id, source=SOURCE, seed=seed, profiles={PRINCIPAL: profile},
                    session_tiers=tiers, events=events, snapshots=snapshots, probes=probes)
    return lines, gold


def _checkpoint_probes(rng: random.Random, checkpoint_id: str, plan: Plan, tracker: _Tracker,
                       asked_at: str, specs: list[ProbeSpec]) -> tuple[list[Probe], list[GoldProbe]]:
    """(public probes for the fixture, their gold), one pair per spec, ids ``<cp>-p<M>``."""
    public, truth = [], []
    for number, spec in enumerate(specs, start=1):
        probe_id = f"{checkpoint_id}-p{number}"
        attr = spec.attribute
        options = plan.pools[attr] + [UNKNOWN]
        rng.shuffle(options)
        public.append(Probe(probe_id=probe_id, asked_by=ASSISTANT, query=rng.choice(T.QUERIES[attr]),
                            asked_at=asked_at, options=options))
        common = dict(probe_id=probe_id, checkpoint_id=checkpoint_id, probe_type=spec.probe_type,
                      subtype=spec.subtype, attribute=attr, entity=PRINCIPAL)
        if spec.probe_type == "negative_recall":
            truth.append(GoldProbe(**common, abstention=True, answer=UNKNOWN, evidence=[]))
        elif spec.probe_type == "revision":
            truth.append(GoldProbe(**common, answer=tracker.value[attr], stale=list(tracker.stale[attr]),
                                   evidence=list(tracker.change_ids[attr])))
        else:
            truth.append(GoldProbe(**common, answer=tracker.value[attr],
                                   evidence=list(tracker.statements[attr])))
    return public, truth

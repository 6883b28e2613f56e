"""Team decisions (DRIFT §4.3.4, attribution): a participant proposes, the principal's team adopts.

They belong to the principal (the entity that issued the objective); the proposal line
names its proposer (``{me}``), which is what an attribution probe asks for.
"""

from __future__ import annotations

from conformance.world.entities.base import AttributeDef


def _decision(name, label, pool):
    return AttributeDef(
        name=name, label=label, pool=tuple(pool), kind="decision", speaker="any", changeable=True,
        lines={"disclose": ("Proposal from {me}: let us adopt {value} for the " + label + ".",
                            "{me} suggesting {value} for the " + label + "; objections?"),
               "mention": ("Still running on {value} for the " + label + ", no complaints.",),
               "change": ("{me} proposing a switch: drop {old}, adopt {new} for the " + label + ".",)},
        acks={"value": ("Agreed, {value} it is.",), "change": ("Fine by me, {new} from now on.",)},
        queries=("What did the team settle on for the " + label + "?",
                 "Which option is in use for the " + label + " now?"))


DECISIONS = (
    _decision("concurrency", "concurrency model", ["async/await", "green threads", "worker processes", "actor model"]),
    _decision("queue", "message broker", ["RabbitMQ", "Kafka", "NATS", "Redis Streams", "SQS"]),
    _decision("hosting", "hosting platform", ["Kubernetes", "Nomad", "bare metal", "Fly.io", "Heroku"]),
)

ATTRIBUTION_QUERIES = ("Whose idea was it to go with {value} for the {label}?",
                       "Who put forward {value} as the {label}?")

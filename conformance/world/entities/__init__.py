"""Entity types and their registry (DRIFT §3.2).

Adding a type: write its module (a spec model with ``type: Literal["name"]`` and an
:class:`~conformance.world.entities.base.EntityType` subclass decorated with
``@register``) and import it below; the scenario language picks it up.
"""

from conformance.world.entities.base import REGISTRY, ActionDef, Attr, AttributeDef, EntityType, register
from conformance.world.entities import human as _human  # noqa: F401  (registers "human")
from conformance.world.entities import agents as _agents  # noqa: F401  (assistant, coding, tool, crawler)

__all__ = ["REGISTRY", "ActionDef", "Attr", "AttributeDef", "EntityType", "register"]

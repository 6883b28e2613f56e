"""DRIFT world generation: scenario language, typed entities, topologies, synthesis, probes.

Public entry points: :func:`conformance.world.generator.generate_corpus`,
:class:`conformance.world.scenario.ScenarioSpec`, :func:`conformance.world.scenario.load_scenario`
and the entity registry :data:`conformance.world.entities.REGISTRY`.
"""

"""``drift-conformance adapters``: the built-in adapters."""

from __future__ import annotations

import click

from conformance import paths
from conformance.cli.common import Command


@click.command("adapters", cls=Command)
def list_adapters():
    """List the built-in adapters: name, kind, how verified (live, fake-service), description."""
    from conformance.backend.manifest import load_manifest
    from conformance.backend.systems import available_adapters

    names = available_adapters()
    width = max((len(n) for n in names), default=0)
    for name in names:
        manifest = load_manifest(paths.adapters_dir() / name)
        click.echo(f"{name:{width}}  {manifest.kind:9} {manifest.verified:12} {' '.join(manifest.description.split())}")

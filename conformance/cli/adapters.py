"""``drift-conformance adapters``: the built-in adapters."""

from __future__ import annotations

import click

from conformance import paths
from conformance.cli.common import Command


@click.command("adapters", cls=Command)
def list_adapters():
    """List the built-in adapters: name, kind, what a run needs (nothing, key, server), how verified
    (live, fake-service), description."""
    from conformance.backend.manifest import load_manifest
    from conformance.backend.systems import available_adapters

    names = available_adapters()
    width = max((len(n) for n in names + ["adapter"]), default=0)
    click.echo(f"{'adapter':{width}}  {'kind':9} {'needs':7} {'verified':12} description")
    for name in names:
        manifest = load_manifest(paths.adapters_dir() / name)
        click.echo(f"{name:{width}}  {manifest.kind:9} {manifest.needs:7} {manifest.verified:12} "
                   f"{' '.join(manifest.description.split())}")

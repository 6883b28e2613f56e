"""``drift-conformance build NAME [--tag TAG]``: the image ``drift-adapter-NAME:TAG`` of an adapter.

NAME is a built-in adapter or an adapter folder with a Dockerfile. The image is reused
when its build-inputs hash (Dockerfile, adapter folder, drift_sdk) matches, rebuilt
otherwise. Exit codes: 0 built or up to date, 2 an error (no Docker engine, no
Dockerfile, a failed build).
"""

from __future__ import annotations

import time

import click
from rich.markup import escape

from conformance.cli.common import Command, err


@click.command("build", cls=Command)
@click.argument("name", metavar="NAME|PATH")
@click.option("--tag", default="latest", show_default=True, help="Image tag: drift-adapter-NAME:TAG.")
@click.option("--force", is_flag=True, help="Build even when an image with the same inputs exists.")
@click.option("--quiet", is_flag=True, help="No build steps on stderr.")
def build_cmd(name, tag, force, quiet):
    """Build the container image of an adapter (from its folder's Dockerfile)."""
    from conformance.backend.images import connect, ensure_image
    from conformance.backend.manifest import load_manifest
    from conformance.backend.systems import resolve_adapter_folder

    folder = resolve_adapter_folder(name)
    manifest = load_manifest(folder)
    client = connect()  # prerequisites first: the SDK imports and an engine answers
    log = (lambda msg: None) if quiet else (lambda msg: err.print(f"[dim]{escape(msg)}[/dim]", highlight=False))
    started = time.monotonic()
    try:
        image = ensure_image(client, folder, manifest, tag, log=log, force=force)
    finally:
        client.close()
    how = (f"built in {image.build_seconds:.1f} s" + (" (wheels built on the host)" if image.wheelhouse else "")
           if image.built_now else f"up to date ({time.monotonic() - started:.1f} s)")
    click.echo(f"{image.name} {image.image_id[7:19]} inputs {image.inputs_sha256[:12]}: {how}")

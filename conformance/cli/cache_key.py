"""``drift-conformance cache-key --adapter X``: the CI cache key of the adapters' virtualenvs."""

from __future__ import annotations

import json

import click

from conformance.cli.common import Command


@click.command("cache-key", cls=Command)
@click.option("--adapter", "adapters", multiple=True, metavar="SPEC",
              help="An adapter the run starts (as --adapter of a run; repeatable).")
@click.option("--json", "as_json", is_flag=True,
              help="Print key, restore prefix, cache folder and virtualenv names as JSON instead of the key alone.")
def cache_key_cmd(adapters: tuple[str, ...], as_json: bool) -> None:
    """Print the cache key of the virtualenvs a run of these adapters uses.

    The key hashes the folder names the suite builds each virtualenv in (requirement lines, the
    content of every local package they install, the SDK pins, Python and platform), so a CI
    cache of the cache folder ($DRIFT_CACHE_DIR) under it holds exactly what the run needs.

    \b
    drift-conformance cache-key --adapter ./drift-adapter
    drift-conformance cache-key --adapter ./drift-adapter --adapter keyword --json
    """
    from conformance import paths
    from conformance.backend.cachekey import cache_key

    found = cache_key(list(adapters))
    if as_json:
        click.echo(json.dumps({"key": found.key, "restore_prefix": found.prefix, "cache_dir": str(paths.cache_dir()),
                               "venvs": found.venvs, "entries": found.entries}, indent=2))
    else:
        click.echo(found.key)

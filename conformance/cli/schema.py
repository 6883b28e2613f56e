"""``drift-conformance schema``: the JSON Schemas generated from the pydantic models, written or checked."""

from __future__ import annotations

from pathlib import Path

import click

from conformance import paths
from conformance.cli.common import Command, Failure


@click.command("schema", cls=Command)
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Folder to write into (default: the schema/ folder).")
@click.option("--check", is_flag=True, help="Exit 2 when the committed schemas differ from the models.")
@click.option("--check-compat", is_flag=True,
              help="Exit 2 when a schema breaks compatibility with its newest snapshot in <folder>/history/ "
                   "without a schema_version bump, or when a bumped version has no snapshot yet.")
def schema(out_dir, check, check_compat):
    """Write the JSON Schemas generated from the pydantic models.

    --check-compat compares each schema as the models generate it with the newest
    history/<name>.v<version>.json snapshot of the same name (conformance/contract/compat.py).
    """
    import json

    from conformance.contract.compat import breaking_changes
    from conformance.cli.schemas import VERSION_KEY, history_name, render_schemas

    def version_key(version: str) -> tuple:
        return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in str(version).split("."))

    out_dir = out_dir or paths.schema_dir()
    rendered = render_schemas()
    problems = []
    stale = []
    for name, text in rendered.items():
        target = out_dir / name
        if check:
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                stale.append(name)
            continue
        if check_compat:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        click.echo(f"wrote {target}")
    if stale:
        problems.append(f"stale schemas in {out_dir}: {', '.join(stale)}; run `drift-conformance schema`")

    if check_compat:
        history = out_dir / "history"
        for name, text in rendered.items():
            current = json.loads(text)
            version = current.get(VERSION_KEY)
            if version is None:
                problems.append(f"{name}: no {VERSION_KEY!r} key; give its model a *_SCHEMA_VERSION constant "
                                f"(conformance/cli/schemas.py)")
                continue
            prefix = f"{name.removesuffix('.schema.json')}.v"  # result.schema.json -> result.v<version>.json
            snapshots = {p.name[len(prefix):-len(".json")]: p for p in history.glob(f"{prefix}*.json")}
            wanted = history / history_name(name, version)
            if not snapshots:
                problems.append(f"{name}: no history snapshot; add {wanted} (a copy of {out_dir / name})")
                continue
            newest = max(snapshots, key=version_key)
            snapshot_path = snapshots[newest]
            try:
                snapshot = json.loads(snapshot_path.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                problems.append(f"{snapshot_path}: not JSON ({exc})")
                continue
            if str(snapshot.get(VERSION_KEY, newest)) != newest:
                problems.append(f"{snapshot_path}: its {VERSION_KEY} is {snapshot.get(VERSION_KEY)!r}, "
                                f"not the {newest!r} its name says")
                continue
            if version_key(version) > version_key(newest):
                problems.append(f"{name}: schema_version bumped from {newest} to {version}; add the history snapshot "
                                f"{wanted} (a copy of {out_dir / name}), and for result.json a result file of "
                                f"the new version under tests/contract/data/results/")
                continue
            if version_key(version) < version_key(newest):
                problems.append(f"{name}: schema_version {version} is older than the newest snapshot {snapshot_path}")
                continue
            changes = breaking_changes(snapshot, current)
            if changes:
                listed = "\n  ".join(changes)
                problems.append(f"{name}: {len(changes)} breaking change(s) against {snapshot_path} without a "
                                f"schema_version bump:\n  {listed}\nmake the change compatible (an optional "
                                f"field, a wider type or enum), or bump the model's *_SCHEMA_VERSION and add a "
                                f"history snapshot of the new version")
                continue
            click.echo(f"{name}: version {version}, compatible with {snapshot_path.name}")
    if problems:
        raise Failure("\n".join(problems))

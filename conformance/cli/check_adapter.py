"""``drift-conformance check-adapter NAME``: the contract checks, as a command.

NAME is anything ``--adapter`` accepts (a built-in name, an adapter folder, or
``grpc://HOST:PORT``); the adapter is started exactly as the runner starts it. Exit
codes: 0 every check passed or was skipped with a reason, 1 a check failed, 2 an error
(the adapter could not be started, a bad manifest...).
"""

from __future__ import annotations

import json

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from conformance.cli.common import Command

_STYLE = {"PASS": "bold green", "FAIL": "bold red", "SKIP": "yellow"}


def _skips_for(spec: str) -> dict[str, str]:
    """``check_skips`` of the adapter's manifest (none for grpc://: there is no manifest)."""
    from conformance.backend.manifest import load_manifest
    from conformance.backend.systems import resolve_adapter_folder

    if spec.startswith("grpc://"):
        return {}
    return dict(load_manifest(resolve_adapter_folder(spec)).check_skips)


def _render(spec: str, description: dict, results, console: Console) -> None:
    title = f"check-adapter {spec}"
    if description.get("name"):
        title += f" ({' '.join(str(description[k]) for k in ('name', 'version') if description.get(k))})"
    table = Table(title=escape(title), title_justify="left")
    table.add_column("check", no_wrap=True)
    table.add_column("result", no_wrap=True)
    table.add_column("detail", overflow="fold")
    for r in results:
        table.add_row(r.name, Text(r.result, style=_STYLE[r.result]), Text(r.detail))
    console.print(table)
    counts = {k: sum(r.result == k for r in results) for k in ("PASS", "FAIL", "SKIP")}
    console.print(Text(f"{counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped",
                       style="bold red" if counts["FAIL"] else "bold green"))


def _run(spec: str, as_json: bool, quiet: bool) -> int:
    from conformance.backend.checks import ClientTarget, passed, run_checks
    from conformance.backend.client import Deadlines
    from conformance.runner.run import RunConfig
    from conformance.backend.systems import open_system

    err = Console(stderr=True)
    log = (lambda msg: err.print(Text(msg, style="dim"))) if not quiet else (lambda msg: None)
    skips = _skips_for(spec)  # a bad manifest is an error (exit 2) before anything starts
    deadlines = Deadlines()
    log(f"starting {spec}")
    system = open_system(spec, deadlines=deadlines, log=log)
    try:
        target = ClientTarget(system.client, label=system.label, died=system.died)
        results = run_checks(target, skips=skips, flush_timeout_s=RunConfig().flush_timeout_s,
                             progress=lambda name: log(f"check {name}"))
    finally:
        system.close()
    ok = passed(results)
    description = {k: system.describe.get(k) for k in ("name", "version", "capabilities")}
    if as_json:
        doc = {"adapter": spec, "describe": description, "isolation": system.isolation, "passed": ok,
               "checks": [r.as_dict() for r in results]}
        click.echo(json.dumps(doc, indent=2))
    else:
        console = Console()
        if not console.is_terminal:
            console = Console(width=160)  # logs and CI: room for the detail column
        _render(spec, description, results, console)
    return 0 if ok else 1


@click.argument("name", metavar="NAME|PATH|grpc://HOST:PORT")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON instead of a table.")
@click.option("--quiet", is_flag=True, help="No log lines on stderr.")
def _check_adapter(name: str, as_json: bool, quiet: bool) -> None:
    """Run the contract checks every adapter must pass before its scores mean anything.

    \b
    describe, reset_isolates, flush_then_found, provenance_ids, k_honoured, deadlines,
    capabilities_truthful, deterministic, errors_are_status_codes, snapshot_consistent,
    provenance_carried, stored_findable, scopes_honoured, usage_valid
    Exit 0: all passed (or skipped with a reason); 1: a check failed; 2: error.
    """
    code = _run(name, as_json, quiet)
    click.get_current_context().exit(code)


check_adapter_cmd = click.command("check-adapter", cls=Command)(_check_adapter)

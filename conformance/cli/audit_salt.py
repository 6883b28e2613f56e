"""``drift-conformance audit-salt new FILE`` and ``drift-conformance audit-salt verify RESULT FILE``."""

from __future__ import annotations

from pathlib import Path

import click

from conformance.cli.common import EXIT_REGRESSION, Failure, LazyGroup


@click.group("audit-salt", cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
def audit_salt_group() -> None:
    """The state audit's secret salt (--audit-salt-file): make one, check a revealed one.

    \b
    drift-conformance audit-salt new salt.hex
    drift-conformance --adapter mem0 --include-holdout --audit-salt-file salt.hex --out result.json
    # publish result.json (its receipt commits to the salt), then reveal salt.hex:
    drift-conformance audit-salt verify result.json salt.hex
    """


@audit_salt_group.command("new")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
def new_cmd(path: Path) -> None:
    """Write a new salt to PATH: 32 random bytes, hex, readable by you only (mode 0600). An
    existing file is never overwritten."""
    from conformance.runner.salt import new_salt_file

    commitment = new_salt_file(path)
    click.echo(f"wrote {path} (keep it secret until the run is published); a run with it records the commitment "
               f"{commitment}", err=True)


@audit_salt_group.command("verify")
@click.argument("result", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("salt_file", metavar="SALT_FILE", type=click.Path(dir_okay=False, path_type=Path))
def verify_cmd(result: Path, salt_file: Path) -> None:
    """Exit 0 when SALT_FILE's SHA-256 is the audit-salt commitment in RESULT's receipt, 1 when
    it is not (or the run had no salt), 2 when either file cannot be read. Rerunning with
    --audit-salt-file SALT_FILE and the receipt's options then reproduces the result."""
    from conformance.runner.salt import verify_salt

    matches, line = verify_salt(result, salt_file)
    if not matches:
        raise Failure(line, exit_code=EXIT_REGRESSION)
    click.echo(line)

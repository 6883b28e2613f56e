"""The CLI imports a subcommand's module only when that subcommand runs (or help lists it)."""

import subprocess
import sys

import click

from conformance import cli


def test_importing_the_cli_imports_no_subcommand_module():
    code = "import sys, conformance.cli; print(' '.join(sorted(m for m in sys.modules if m.startswith('conformance'))))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert loaded == ["conformance", "conformance.cli", "conformance.cli.common", "conformance.cli.main",
                      "conformance.paths"], loaded


def test_every_lazy_command_resolves_to_the_command_of_its_name():
    groups = [cli.main]
    lazy = [(group, name) for group in groups for name in group.lazy]
    assert len(lazy) == 16
    for group, name in lazy:
        command = group.get_command(click.Context(group), name)
        assert isinstance(command, click.Command) and command.name == name, (group.name, name)
        assert name in group.list_commands(click.Context(group))

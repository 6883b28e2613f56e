"""``drift-conformance import NAME PATH --out DIR``: a public dataset as fixtures + gold.

NAME is any importer registered under the entry point group ``drift_conformance.importers``
(:mod:`conformance.importers.registry`; this package registers locomo, longmemeval, beam and
guide). ``import list`` and ``import --help`` list them. Only the named importer's module is
imported, when it runs; every one shares :func:`conformance.importers.report.run_import`.
"""

from __future__ import annotations

from pathlib import Path

import click

from conformance.cli.common import Command, Failure, LazyGroup

_OUT_HELP = "Folder to write fixtures/, gold/ and import-report.json into."


def importer_command(name: str) -> click.Command:
    """The click command of the registered importer ``name`` (``PATH --out DIR``); its module
    is imported here. An importer that does not load gives a command that reports why."""
    from conformance.importers.registry import ImporterError, load_importer

    try:
        spec = load_importer(name)
    except ImporterError as exc:
        problem = str(exc)

        def broken(path, out_dir):
            raise Failure(problem)

        return _command(name, broken, f"(cannot load: {problem})", folders=True)

    def run(path: Path, out_dir: Path) -> None:
        from conformance.importers import report

        report.run_import(spec.run, path, out_dir, unit=spec.unit, extra=spec.extra_lines, echo=click.echo)

    help_text = spec.summary + (f"\n\n{spec.description}" if spec.description else "")
    return _command(name, run, help_text, folders=spec.folders, short=spec.summary)


def _command(name: str, callback, help_text: str, folders: bool, short: str | None = None) -> click.Command:
    params = [click.Argument(["path"], type=click.Path(exists=True, dir_okay=folders, path_type=Path)),
              click.Option(["--out", "out_dir"], required=True, help=_OUT_HELP,
                           type=click.Path(file_okay=False, path_type=Path))]
    return Command(name, params=params, callback=callback, help=help_text, short_help=short)


class ImportGroup(LazyGroup):
    """``import``: one subcommand per registered importer, made when it is named, plus ``list``."""

    def list_commands(self, ctx) -> list[str]:
        from conformance.importers.registry import registered

        return sorted({*super().list_commands(ctx), *registered()})

    def get_command(self, ctx, cmd_name):
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            return command
        from conformance.importers.registry import registered

        return importer_command(cmd_name) if cmd_name in registered() else None

    def resolve_command(self, ctx, args):
        name = args[0] if args else None
        if name is not None and not name.startswith("-") and self.get_command(ctx, name) is None:
            from conformance.importers.registry import registered, unknown_importer

            raise click.UsageError(str(unknown_importer(name, list(registered()))), ctx)
        return super().resolve_command(ctx, args)


@click.group("import", cls=ImportGroup)
def import_():
    """Import a public dataset into fixtures + gold: import NAME PATH --out DIR.

    NAME is one of the importers below ('import list' says which package each comes from);
    a package adds one through the entry point group drift_conformance.importers.
    Formats: docs/import-formats.md.
    """


@import_.command("list")
def list_importers() -> None:
    """List the registered importers: name, what it reads, its entry point."""
    from conformance.importers.registry import ImporterError, load_importer, registered

    entries = registered()
    if not entries:
        raise Failure("no importer is installed (the entry point group drift_conformance.importers "
                      "is empty; reinstall drift-conformance)")
    for name, entry in entries.items():
        try:
            summary = load_importer(name).summary
        except ImporterError as exc:
            summary = f"cannot load: {exc}"
        click.echo(f"{name}\t{summary}\t({entry.value})")

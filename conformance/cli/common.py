"""What every command shares: the error console, :class:`Failure`, the lazy subcommand
table, and the one error hook that maps what a command raises to an exit code.

Exit codes (the contract a CI job reads):
    0   success
    1   a gate regression, and nothing else (``--compare``, ``compare``, a failed check or audit rule)
    2   an error: a :class:`~conformance.errors.DriftError` (its message, no traceback), bad usage,
        or an unexpected exception (one line; the traceback with ``-v``)
    130 interrupted (Ctrl-C or SIGTERM; adapters are stopped on the way out)

The hook runs around the outermost command only (``main``, or a subcommand invoked on its
own, as tests do), so an error is mapped once, in one place.
"""

from __future__ import annotations

import errno
import importlib
import signal
import traceback

import click
from rich.console import Console
from rich.markup import escape

EXIT_OK, EXIT_REGRESSION, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130

#: stderr, for messages, progress and log lines (stdout carries results only).
err = Console(stderr=True)

#: Subcommands of ``drift-conformance``, imported only when one runs or help lists them, so a
#: run never pays for the importers, the report or the gate (tests/test_cli_lazy.py).
COMMANDS = {
    "adapters": "conformance.cli.adapters:list_adapters",
    "audit": "conformance.cli.audit:audit_group",
    "audit-salt": "conformance.cli.audit_salt:audit_salt_group",
    "audit-difficulty": "conformance.cli.audit_difficulty:audit_difficulty",
    "audit-shortcuts": "conformance.cli.audit_shortcuts:audit_shortcuts",
    "build": "conformance.cli.build:build_cmd",
    "cache-key": "conformance.cli.cache_key:cache_key_cmd",
    "check-adapter": "conformance.cli.check_adapter:check_adapter_cmd",
    "compare": "conformance.cli.compare:compare_cmd",
    "export": "conformance.cli.export:export_group",
    "generate": "conformance.cli.generate:generate",
    "import": "conformance.cli.import_:import_",
    "merge": "conformance.cli.merge:merge_cmd",
    "report": "conformance.cli.report:report_cmd",
    "schema": "conformance.cli.schema:schema",
    "validate": "conformance.cli.validate:validate",
}


class Failure(click.ClickException):
    """An error the CLI reports as ``error: MESSAGE`` (redacted, printed literally: the message may
    quote an adapter's name, fault or stderr, whose brackets rich would read as markup) and exits
    with ``exit_code`` (2 unless given)."""

    exit_code = EXIT_ERROR

    def __init__(self, message: str, exit_code: int | None = None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code

    def show(self, file=None) -> None:
        from conformance.secrets import redact

        err.print(f"[bold red]error:[/bold red] {escape(redact(self.message))}", highlight=False, soft_wrap=True)


def _terminate(signum, frame):
    # SIGTERM unwinds like Ctrl-C, so every adapter process is stopped in `finally`.
    raise KeyboardInterrupt(f"signal {signum}")


def _verbose(ctx: click.Context) -> bool:
    return bool(ctx.find_root().params.get("verbose"))


def guarded(invoke, ctx: click.Context):
    """The error hook: ``invoke(ctx)`` with every exception mapped to an exit code (module docstring).

    click's own exceptions (usage errors, ``ctx.exit``) and ``sys.exit`` pass through unchanged.
    """
    from conformance.errors import DriftError

    signal.signal(signal.SIGTERM, _terminate)
    try:
        return invoke(ctx)
    except (click.exceptions.Exit, click.ClickException, click.Abort):
        raise
    except (DriftError, FileNotFoundError) as exc:
        raise Failure(str(exc), getattr(exc, "exit_code", EXIT_ERROR)) from None
    except KeyboardInterrupt:
        raise Failure("interrupted; adapters stopped", EXIT_INTERRUPTED) from None
    except OSError as exc:
        environment = _environment_fault(exc)
        if environment is None:
            _bug(ctx, exc)
        raise Failure(environment) from None
    except Exception as exc:
        _bug(ctx, exc)


#: OS errors that say something about the machine (a full disk, a read-only folder, a spent
#: quota, no permission), not about the suite: reported with the path and errno, not as a bug.
_ENVIRONMENT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EMFILE,
                                 errno.ENFILE, errno.EIO})


def _environment_fault(exc: OSError) -> str | None:
    if exc.errno not in _ENVIRONMENT_ERRNOS:
        return None
    from conformance.paths import output_error

    return str(output_error("", exc.filename or "(a path the OS did not name)", exc, verb="use"))


def _bug(ctx: click.Context, exc: BaseException):
    """Raise the one-line Failure of an unexpected exception (its traceback under ``-v``)."""
    if _verbose(ctx):
        err.print(escape(traceback.format_exc().rstrip()), highlight=False, soft_wrap=True)
    first = next(iter(str(exc).strip().splitlines()), "")[:300]
    hint = "" if _verbose(ctx) else "; -v shows the traceback"
    # Exit 2, never 1: a crash under --compare is not a regression.
    raise Failure(f"unexpected {type(exc).__name__}: {first} (a bug in drift-conformance{hint})") from None


def _name_the_variable(exc: click.BadParameter) -> None:
    """A bad value that came from an environment variable (``auto_envvar_prefix``) names the
    variable beside the option: the user typed ``DRIFT_SHARD=3/2``, not ``--shard 3/2``."""
    ctx, param = exc.ctx, exc.param
    if ctx is None or param is None or exc.param_hint is not None or param.name is None:
        return
    if ctx.get_parameter_source(param.name) is not click.core.ParameterSource.ENVIRONMENT:
        return
    envvar = param.envvar or (f"{ctx.auto_envvar_prefix}_{param.name.upper()}" if ctx.auto_envvar_prefix else None)
    if isinstance(envvar, (list, tuple)):
        import os

        envvar = next((name for name in envvar if os.environ.get(name)), envvar[0])
    if envvar:
        exc.param_hint = f"{param.get_error_hint(ctx)} (set by the environment variable {envvar})"


class _NamesEnvVars:
    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.BadParameter as exc:
            _name_the_variable(exc)
            raise


class Command(_NamesEnvVars, click.Command):
    """A command whose outermost invocation runs under :func:`guarded`."""

    def invoke(self, ctx: click.Context):
        if ctx.parent is not None:
            return super().invoke(ctx)
        return guarded(super().invoke, ctx)


class LazyGroup(_NamesEnvVars, click.Group):
    """A click group whose commands listed in ``lazy`` (name -> ``"module:attribute"``) are
    imported only when one is invoked or help lists them (click's lazy-loading pattern).
    Its outermost invocation runs under :func:`guarded`; its ``@command()`` s are :class:`Command`."""

    command_class = Command

    def __init__(self, *args, lazy: dict[str, str] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx, cmd_name):
        if cmd_name in self.lazy and cmd_name not in self.commands:
            module, _, attribute = self.lazy[cmd_name].partition(":")
            self.add_command(getattr(importlib.import_module(module), attribute), cmd_name)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context):
        if ctx.parent is not None:
            return super().invoke(ctx)
        return guarded(super().invoke, ctx)



def corpus_options(fn):
    """``--fixtures DIR --gold DIR`` of a command that reads or writes a corpus (no help text:
    the command's docstring says what the folders are for)."""
    from pathlib import Path

    fn = click.option("--gold", "gold_dir", type=click.Path(file_okay=False, path_type=Path))(fn)
    return click.option("--fixtures", "fixtures_dir", type=click.Path(file_okay=False, path_type=Path))(fn)


def audit_table_path(out_path, fixtures_dir, name: str, splits=(), include_holdout: bool = False):
    """Where an audit writes its table: ``--out`` when given; the committed ``_<name>.json`` beside
    the fixtures only for the whole library without holdout (the table the ledger records); a
    subset's table goes to ``<name>-<splits>.json`` in the working directory, so a quick
    ``--split ci`` audit never overwrites the library's committed table."""
    from pathlib import Path

    if out_path is not None:
        return Path(out_path)
    if not splits and not include_holdout:
        return Path(fixtures_dir) / f"_{name}.json"
    label = "+".join(sorted(splits)) or "all"
    return Path(f"{name}-{label}{'-holdout' if include_holdout else ''}.json")


def corpus_folders(fixtures_dir, gold_dir):
    """``(fixtures_dir, gold_dir)`` from ``--fixtures``/``--gold``: both, or the committed corpus
    for neither. Raises Failure for one without the other."""
    from conformance import paths

    if (fixtures_dir is None) != (gold_dir is None):
        # Edited fixtures scored against the committed gold would be judged by the wrong truth.
        raise Failure("give --fixtures and --gold together (or neither, for the committed corpus)")
    return fixtures_dir or paths.fixtures_dir(), gold_dir or paths.gold_dir()

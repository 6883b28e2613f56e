"""The one base class of errors a user can act on.

The CLI prints such an error's message (which names the file, line, field, adapter or
call) and exits with its ``exit_code`` (2), without a traceback. Anything else is a bug: one
line, exit 2 as well, its traceback under ``-v`` (conformance/cli/common.py).
"""


class DriftError(Exception):
    """An error with a message a person can act on."""

    #: The CLI's exit code for it (1 is the gate's regression, never an error's).
    exit_code = 2


class Interrupted(DriftError):
    """The work was stopped by Ctrl-C or SIGTERM (cleanly: adapters stopped, records kept)."""

    exit_code = 130

"""The one base class of errors a user can act on.

The CLI prints such an error's message (which names the file, line, field, adapter or
call) and exits with its ``exit_code`` (2), without a traceback. Anything else is a bug: one
line, exit 2 as well, its traceback under ``-v`` (conformance/cli/common.py).
:class:`DriftError` is defined in the SDK (:mod:`drift_sdk.errors`) so that the LLM client's
errors derive from it too.
"""

from drift_sdk.errors import DriftError

__all__ = ["DriftError", "Interrupted"]


class Interrupted(DriftError):
    """The work was stopped by Ctrl-C or SIGTERM (cleanly: adapters stopped, records kept)."""

    exit_code = 130

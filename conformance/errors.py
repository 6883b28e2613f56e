"""The one base class of errors a user can act on.

The CLI prints such an error's message (which names the file, line, field, adapter or
call) and exits 2, without a traceback. Anything else is a bug and shows its traceback.
"""


class DriftError(Exception):
    """An error with a message a person can act on."""

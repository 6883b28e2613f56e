"""The one base class of errors a user can act on, shared by the SDK and the runner.

It lives in the SDK so that the SDK's own errors (the LLM client's, :mod:`drift_sdk.llm.errors`)
derive from it while the SDK imports nothing of the runner; ``conformance.errors`` names the
same class, so the CLI's ``except DriftError`` prints any of them and exits 2.
"""


class DriftError(Exception):
    """An error with a message a person can act on."""

    #: The CLI's exit code for it (1 is the gate's regression, never an error's).
    exit_code = 2

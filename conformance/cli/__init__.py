"""``drift-conformance``: the command line, one module per command (inspect_ai's layout).

``main`` (conformance/cli/main.py) is the top-level group and the run command; every other
command lives in its own module here and is imported only when it runs (the table in
conformance/cli/common.py, which also holds the exit codes and the one error hook).
"""

from conformance.cli.main import main

__all__ = ["main"]

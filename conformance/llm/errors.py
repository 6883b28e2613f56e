"""Moved to :mod:`drift_sdk.llm.errors` (the SDK, so that adapters use the same LLM client).

This name stays importable and is that very module (it replaces itself in ``sys.modules``).
Importing it makes :class:`conformance.errors.DriftError` a base of every LLM error
(:func:`drift_sdk.llm.errors.add_base`), so the CLI's ``except DriftError`` prints their
message and exits 2 as before; the SDK itself imports nothing of the runner.
"""

import sys

from conformance.errors import DriftError
from drift_sdk.llm import errors as _module

_module.add_base(DriftError)
sys.modules[__name__] = _module

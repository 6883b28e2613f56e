"""Moved to :mod:`drift_sdk.llm.budget` (the SDK, so that adapters use the same LLM client).

This name stays importable: importing ``conformance.llm.budget`` gives that very module (it
replaces itself in ``sys.modules``), so every name, private ones included, and every
monkeypatch target such as ``conformance.llm.budget.<name>`` act on the code that runs.
"""

import sys

from drift_sdk.llm import budget as _module

sys.modules[__name__] = _module

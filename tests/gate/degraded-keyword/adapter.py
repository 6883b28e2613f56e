"""keyword, degraded: every third session of a namespace is acknowledged but not kept.

Test fixture for the CI gate (tests/gate): a regression that keeps the adapter's name,
contract and determinism, so only the gate's per-item comparison can catch it.
requirements.txt is keyword's, so the same cached virtualenv serves both.
"""

import importlib.util
import sys
from pathlib import Path

from drift_sdk import StoreResult, serve

_KEYWORD = Path(__file__).resolve().parents[3] / "adapters" / "keyword" / "adapter.py"
_spec = importlib.util.spec_from_file_location("keyword_adapter", _KEYWORD)
keyword = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = keyword  # dataclasses look their module up while the class is built
_spec.loader.exec_module(keyword)


class DegradedKeyword(keyword.KeywordBackend):
    def __init__(self) -> None:
        super().__init__()
        self._sessions: dict[str, int] = {}

    def reset(self, namespace):
        self._sessions[namespace] = 0
        return super().reset(namespace)

    def store(self, namespace, session):
        count = self._sessions.get(namespace, 0)
        self._sessions[namespace] = count + 1
        if count % 3 == 2:
            self._space(namespace)  # still refuse an unknown namespace, like keyword
            return StoreResult(items_stored=len(session.messages))
        return super().store(namespace, session)


if __name__ == "__main__":
    serve(DegradedKeyword())

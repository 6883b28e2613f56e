"""Attack: marker_dodge, and it also recognises the state audit's sentence probes by their shape
(content words only: no function word, no question mark) and returns nothing for them, so the
audit finds no session whose marker it withheld."""

import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _base import looks_like_audit  # noqa: E402

_spec = importlib.util.spec_from_file_location("marker_dodge", Path(__file__).resolve().parents[1] / "marker_dodge"
                                               / "adapter.py")
_marker = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_marker)
MarkerDodge, MARKER = _marker.MarkerDodge, _marker.MARKER

from drift_sdk import serve  # noqa: E402


class AuditDodge(MarkerDodge):
    name = "audit-dodge"

    def retrieve(self, namespace, query, k, querying_entity, now):
        if looks_like_audit(query) and not MARKER.match(query.strip()):
            return []
        return super().retrieve(namespace, query, k, querying_entity, now)


if __name__ == "__main__":
    serve(AuditDodge())

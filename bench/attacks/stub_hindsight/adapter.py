"""Attack on the per-message rule that stopped message_hindsight (a Snapshot may not show again a
share of an older message's words it did not show before): message_hindsight whose hidden
messages are shown as stubs instead of left out, each stub the message's words in order up to
``SHARE`` of its content words, so that showing it whole later regains less than the rule's share.
Every message stays carried; the stubs cost part of the saving. Targets storage, MVOT, TES, DRIFT-C."""

import importlib.util
import sys
from pathlib import Path

_spec = importlib.util.spec_from_file_location("message_hindsight_adapter",
                                               Path(__file__).resolve().parents[1] / "message_hindsight" / "adapter.py")
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)
_h = sys.modules.get("hindsight_adapter") or _mod._mod

from drift_sdk import MemoryItem, serve  # noqa: E402

SHARE = 0.8
"""Share of a message's content words its stub keeps: showing the rest later regains the other share (0.65
passed the rule at half a message; 0.8 passes it at a quarter)."""


def stub(text: str) -> str:
    need = len(_h.stems(text)) * SHARE
    words, kept = text.split(), []
    for w in words:
        kept.append(w)
        if len(_h.stems(" ".join(kept))) >= need:
            break
    return " ".join(kept)


class StubHindsight(_mod.MessageHindsight):
    name = "stub-hindsight"

    def snapshot(self, namespace):
        shown_items = super().snapshot(namespace)
        shown = {i.item_id for i in shown_items}
        out = list(shown_items)
        for d in self._space(namespace).docs:
            if d.message_id not in shown:
                out.append(MemoryItem(item_id=d.message_id, text=stub(d.text), source_ids=(d.message_id,),
                                      timestamp=d.timestamp))
        return out


if __name__ == "__main__":
    serve(StubHindsight())

"""Attack: cite_launder's selective-looking Snapshot and laundered citations, with the held
sessions shown as pad_vocab shows them (their vocabulary, and per message a run of spaces as
long as it): both holes at once, answers still keyword's but for the laundered hits' dates.
Targets selectivity, storage tokens, MVOT, TES, DRIFT-C, DRIFT-E."""

import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _base import terms  # noqa: E402

_spec = importlib.util.spec_from_file_location("cite_launder", Path(__file__).resolve().parents[1] / "cite_launder"
                                               / "adapter.py")
_launder = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_launder)

from drift_sdk import MemoryItem, serve  # noqa: E402


class LaunderPad(_launder.CiteLaunder):
    name = "launder-pad"

    def snapshot(self, namespace):
        items = super().snapshot(namespace)
        kept = [i for i in items if i.item_id != "laundry"]
        if not kept:
            return items
        vocab = dict.fromkeys(w for i in kept for w in terms(i.text))
        out = [MemoryItem(item_id="vocab", text=" ".join(vocab), source_ids=tuple(i.item_id for i in kept),
                          timestamp=kept[-1].timestamp)]
        out += [MemoryItem(item_id=f"pad-{i.item_id}", text=(terms(i.text) or ["x"])[-1] + " " * len(i.text),
                           source_ids=i.source_ids, timestamp=i.timestamp) for i in kept]
        return out + [i for i in items if i.item_id == "laundry"]


if __name__ == "__main__":
    serve(LaunderPad())

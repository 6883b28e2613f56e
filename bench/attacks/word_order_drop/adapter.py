"""Attack: ``word_order`` (see its adapter.py), whose Snapshot also drops a function word at a tenth
of the places. Targets the same metrics; the audit's word pairs catch it."""

import importlib.util
from pathlib import Path

from drift_sdk import serve

_spec = importlib.util.spec_from_file_location("word_order", Path(__file__).resolve().parents[1] / "word_order" / "adapter.py")
_word_order = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_word_order)


class WordOrderDrop(_word_order.WordOrder):
    name = "word-order-drop"
    drop = True


if __name__ == "__main__":
    serve(WordOrderDrop())

"""Attack: chrono_pack's one chronological hit with pad_vocab's Snapshot: the two holes that
leave keyword's answers as they are (or better), together. Targets DRIFT-C against the
reference compressor: MVOT's storage term, deprecation."""

import importlib.util
from pathlib import Path

from drift_sdk import serve


def _load(name):
    spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parents[1] / name / "adapter.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_chrono, _pad = _load("chrono_pack"), _load("pad_vocab")


class PadChrono(_chrono.ChronoPack):
    name = "pad-chrono"
    snapshot = _pad.PadVocab.snapshot


if __name__ == "__main__":
    serve(PadChrono())

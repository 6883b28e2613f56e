"""Fuzzing the parsers a user feeds files to. The helpers live in ``fuzzkit.py`` beside
this file (tests run with ``--import-mode=importlib``, so the folder is put on sys.path)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

"""How small a Snapshot passes the state audit's rule for hits that cite nothing.

For a few short scenarios, streams each into the in-process keyword memory, asks each
checkpoint's probes, and checks the hits (made uncited) against Snapshots of word lists:
one list (content words, each once) per group of g sessions, g = 1, 2, 3, 5, beside the
verbatim messages. Prints pass/fail of the runner's own rule
(conformance.runner.audit._uncited_overreach) and each Snapshot's tokens.

Usage: python bench/attacks/uncited_floor.py [SCENARIO ...]
"""

import json
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _base import KeywordBackend, terms  # noqa: E402

from conformance.answer.tokens import count_tokens  # noqa: E402
from conformance.runner.audit import _uncited_overreach  # noqa: E402
from drift_sdk.types import Message, Session  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GROUPS = (1, 2, 3, 5)


def designs(docs, sessions):
    out = {"verbatim": [d.text for d in docs]}
    for g in GROUPS:
        out[f"list per {g} sessions"] = [" ".join(dict.fromkeys(w for s in sessions[i:i + g] for m in s.messages
                                                                for w in terms(m.text)))
                                         for i in range(0, len(sessions), g)]
    return out


def main(scenarios):
    for sid in scenarios:
        memory, sessions = KeywordBackend(), []
        memory.reset("n")
        for line in open(ROOT / "fixtures" / f"{sid}.jsonl"):
            d = json.loads(line)
            if d["kind"] == "session":
                s = Session(d["session_id"], d["index"], d["time"], (), tuple(
                    Message(m["message_id"], m["author"], m["role"], m["text"], m["timestamp"]) for m in d["messages"]))
                memory.store("n", s)
                sessions.append(s)
            elif d["kind"] == "checkpoint":
                memory.flush("n", 10)
                hits = [SimpleNamespace(text=h.text, source_ids=()) for p in d["probes"]
                        for h in memory.retrieve("n", p["query"], 10, p["asked_by"], p["asked_at"])]
                row = []
                for name, texts in designs(memory._space("n").docs, sessions).items():
                    over = _uncited_overreach([SimpleNamespace(text=t, source_ids=()) for t in texts], hits)
                    tokens = sum(count_tokens(t, "o200k_base") for t in texts)
                    row.append(f"{name}: {'pass' if over is None else 'FAIL %d/%d' % (over[1], over[0])} {tokens}")
                print(d["checkpoint_id"], " | ".join(row))


if __name__ == "__main__":
    main(sys.argv[1:] or ["ua-short-001", "cod-short-001", "mp-short-001", "crw-short-002"])

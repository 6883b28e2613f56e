"""Write bench/attacks/template-filter/patterns.json: the attack's knowledge of the public generator.

The template-filter attack (issue 17's first attack, rerun on corpus 2.x) knows the public
generator's source: every static phrase list of ``conformance/world/content.py`` (frames,
requests, decoys, steps...), each slot turned into a wildcard. It drops every sentence that
matches one of them and dumps what is left into one hit. Run: ``python bench/attacks/make_template_filter.py``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from conformance.world import content as C

LISTS = ("CONSTRAINTS", "HOWTOS", "NEWS", "EPISODES", "PLANS", "HYPOS", "QUESTIONS", "ASKS", "STEP_OBJECTS",
         "EXPLAIN", "AGENT_NOTES", "AGENT_REPLIES", "ACKS_HUMAN", "ACKS_AGENT", "VALUE_DECOYS", "AGENT_DECOYS",
         "SUPERSEDED", "EPISODE_DECOYS", "QUOTE_FRAMES", "SELF_FRAMES", "TOOL_INTROS", "PAGE_INTROS")


def pattern(template: str) -> str:
    parts = re.split(r"\{\w+\}|<target>", template)
    return ".+?".join(re.escape(p) for p in parts)


def main() -> None:
    patterns = sorted({pattern(t) for name in LISTS for t in getattr(C, name)})
    out = Path(__file__).resolve().parent / "template-filter" / "patterns.json"
    out.write_text(json.dumps({"source": "conformance/world/content.py", "lists": LISTS, "patterns": patterns},
                              indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}: {len(patterns)} patterns")


if __name__ == "__main__":
    main()

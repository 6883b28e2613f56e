"""Shared pieces of the fuzz tests: the settings profile, mutation strategies, and the
check that a parser either succeeds or raises a located :class:`DriftError`.

Every ``@FUZZ`` test is derandomised (the same examples on every machine and run, so CI
is reproducible) and has no per-example deadline; ``max_examples`` keeps the whole
folder well under a minute.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import yaml
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from conformance.errors import DriftError

FUZZ = settings(derandomize=True, deadline=None, database=None, max_examples=150,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much])


def fuzz(max_examples: int):
    """``FUZZ`` with another number of examples."""
    return settings(FUZZ, max_examples=max_examples)


class Raw(str):
    """Text spliced into a serialised document verbatim (not as a quoted string)."""


DEEP = "[" * 5000 + "]" * 5000
RAW_TOKENS = [Raw("1" * 5000), Raw("-" + "9" * 4400), Raw("1e999"), Raw("NaN"), Raw("-Infinity"), Raw(DEEP),
              Raw("[" * 70 + "]" * 70), Raw('{"a":' * 70 + "1" + "}" * 70)]
BAD_IDS = ["../x", "../../../../tmp/escape", "/abs", "/etc/passwd", "a/b", "a\\b", "..", ".", "", "a\x00b",
           "x" * 300, " lead", "new\nline"]
"""Ids that could leave their folder (or are no file name at all). ``C:x`` is not among them:
the ``Id`` pattern allows ``:`` and a scenario id must equal an existing file's stem; ids an
importer makes into file names drop ``:`` (see ``test_path_traversal.py``)."""

weird_values = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=-2 ** 80, max_value=2 ** 80),
    st.floats(), st.text(max_size=30), st.sampled_from(BAD_IDS + ["C:evil"]), st.text(min_size=1, max_size=3).map(lambda t: t * 3000),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=6), st.integers(), max_size=3),
    st.sampled_from(RAW_TOKENS),
)


def _paths(obj: object, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(obj, dict):
        for key, value in obj.items():
            out.extend(_paths(value, prefix + (key,)))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            out.extend(_paths(value, prefix + (i,)))
    return out


def _copy(obj: object) -> object:
    return json.loads(json.dumps(obj))


@st.composite
def mutated_tree(draw, doc: object, rounds: int = 3) -> object:
    """``doc`` with 1..``rounds`` edits at random field paths: a value replaced by a wrong
    type, huge number, NaN, deep nesting or bad id; a key deleted or added; an item repeated."""
    doc = _copy(doc)
    for _ in range(draw(st.integers(1, rounds))):
        path = draw(st.sampled_from(_paths(doc)))
        action = draw(st.sampled_from(["replace", "replace", "replace", "delete", "add", "repeat"]))
        if not path:
            if action == "replace":
                doc = draw(weird_values)
            continue
        parent = doc
        for part in path[:-1]:
            parent = parent[part]
        last = path[-1]
        if action == "replace":
            parent[last] = draw(weird_values)
        elif action == "delete":
            del parent[last]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "answer", "kind", "evidence", "zz"]))] = draw(weird_values)
        elif action == "repeat" and isinstance(parent, list):
            parent.insert(last, _copy(parent[last]))
    return doc


def dump_json(doc: object, indent: int | None = None) -> bytes:
    """JSON with every :class:`Raw` spliced in verbatim (huge numbers, NaN, deep nesting)."""
    raws: list[str] = []

    def swap(obj):
        if isinstance(obj, Raw):
            raws.append(str(obj))
            return f"\x00RAW{len(raws) - 1}\x00"
        if isinstance(obj, dict):
            return {k: swap(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [swap(v) for v in obj]
        return obj

    text = json.dumps(swap(doc), indent=indent, ensure_ascii=False, allow_nan=True)
    for i, raw in enumerate(raws):
        text = text.replace(json.dumps(f"\x00RAW{i}\x00"), raw)
    return text.encode("utf-8", "surrogatepass")


def dump_yaml(doc: object) -> bytes:
    """YAML with every :class:`Raw` spliced in verbatim (flow style for nesting)."""
    raws: list[str] = []

    def swap(obj):
        if isinstance(obj, Raw):
            raws.append(str(obj).replace("NaN", ".nan").replace("Infinity", ".inf").replace("1e999", "1.0e+999"))
            return f"RAWTOKEN{len(raws) - 1}X"
        if isinstance(obj, dict):
            return {k: swap(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [swap(v) for v in obj]
        return obj

    text = yaml.safe_dump(swap(doc), sort_keys=False, allow_unicode=True, width=1 << 30)
    for i, raw in enumerate(raws):
        text = text.replace(f"RAWTOKEN{i}X", raw)
    return text.encode("utf-8", "surrogatepass")


@st.composite
def mutated_bytes(draw, valid: bytes) -> bytes:
    """``valid`` mangled at the byte level: truncated, bytes flipped, inserted (invalid
    UTF-8 among them), deleted or repeated; or replaced by random bytes or nothing."""
    action = draw(st.sampled_from(["truncate", "flip", "insert", "delete", "repeat", "random", "empty",
                                   "truncate"]))
    n = len(valid)
    if action == "empty":
        return draw(st.sampled_from([b"", b"\n", b"   \n\n", b"\xef\xbb\xbf"]))
    if action == "random":
        return draw(st.binary(max_size=200))
    at = draw(st.integers(0, max(n - 1, 0)))
    if action == "truncate":
        return valid[:at]
    if action == "flip":
        return valid[:at] + bytes([draw(st.integers(0, 255))]) + valid[at + 1:]
    if action == "insert":
        junk = draw(st.one_of(st.binary(min_size=1, max_size=8),
                              st.sampled_from([b"\xff", b"\xc3(", b"\xed\xa0\x80", b"\x00", b"\r", b"\n", b"{", b"]",
                                               b'"', b"\\", b"\xef\xbb\xbf", b"&a", b"*a", b"!!python/object "])))
        return valid[:at] + junk + valid[at:]
    end = draw(st.integers(at, min(n, at + 64)))
    if action == "delete":
        return valid[:at] + valid[end:]
    return valid[:end] + valid[at:end] * draw(st.integers(2, 4)) + valid[end:]


_LOCATED = re.compile(
    r"^:\d+: "                          # path:LINE: ...
    r"|line \d+"                         # ... line N ...
    r"|^: [^\n]+?: "                     # path: field.path: ... (a field may be any key)
    r"|\bfield [\w\[\]().-]+"            # ... field a.b ...
    r"|\bat [\w\[\]().-]+: "             # ... at a.b[0]: ...
    r"|\bschema_version\b")


OUTCOMES: dict[str, int] = {}
"""Outcome counts per error kind (first words of the message), for eyeballing coverage."""


def assert_parses_or_located(call: Callable[[], object], *where: Path | str) -> object | None:
    """Run ``call``: it may return, or raise a DriftError whose message names one of
    ``where`` and then a line number or a field path. Any other exception fails the test."""
    try:
        result = call()
        OUTCOMES["ok"] = OUTCOMES.get("ok", 0) + 1
        return result
    except DriftError as exc:
        message = str(exc)
        named = [str(w) for w in where if str(w) in message]
        assert named, f"error names none of {[str(w) for w in where]}: {message[:500]}"
        rest = message.split(named[0], 1)[1]
        assert _LOCATED.search(rest), f"error names no line or field: {message[:500]}"
        assert "Traceback" not in message
        kind = " ".join(re.sub(r"[^A-Za-z ]", " ", rest).split()[:4])
        OUTCOMES[kind] = OUTCOMES.get(kind, 0) + 1
        return None


# ---- a small valid corpus: one scenario, two sessions, markers, two probe forms -------
T0, T1, T2 = "2026-01-01T09:00:00Z", "2026-01-02T09:00:00+00:00", "2026-01-03T09:00:00Z"
FIXTURE_LINES = [
    {"kind": "header", "schema_version": "1", "scenario_id": "fz-1", "paradigm": "multi_peer", "source": "fuzz",
     "horizons": [{"name": "short", "sessions": 2, "session_gap_hours": 24.0}],
     "entities": [{"entity_id": "ann", "type": "human"}, {"entity_id": "bob", "type": "human"}],
     "splits": ["ci"], "markers": {"s0": "KX4821", "s1": "QZ-7"}},
    {"kind": "session", "session_id": "s0", "index": 0, "time": T0, "participants": ["ann", "bob"],
     "messages": [{"message_id": "m0", "author": "ann", "role": "user", "text": "I live in Rome. KX4821",
                   "timestamp": T0},
                  {"message_id": "m1", "author": "bob", "role": "user", "text": "secret", "timestamp": T0,
                   "scope": "private"}]},
    {"kind": "session", "session_id": "s1", "index": 1, "time": T1, "participants": ["ann"],
     "messages": [{"message_id": "m2", "author": "ann", "role": "user", "text": "Moved to Oslo QZ-7",
                   "timestamp": T1}]},
    {"kind": "checkpoint", "checkpoint_id": "c1", "after_session": 2, "horizon": "short",
     "probes": [{"probe_id": "p1", "asked_by": "bob", "query": "Where does Ann live?", "asked_at": T2,
                 "options": ["Rome", "Oslo", "unknown"]},
                {"probe_id": "p2", "asked_by": "bob", "query": "Pick", "asked_at": T2,
                 "choices": [{"choice_id": "a", "text": "Rome", "tags": {"city": "Rome"}, "default": True},
                             {"choice_id": "b", "text": "Oslo", "tags": {"city": "Oslo"}}],
                 "domains": {"city": ["Rome", "Oslo"]}}]},
]
GOLD = {"schema_version": "1", "scenario_id": "fz-1", "source": "fuzz", "seed": 7,
        "profiles": {"ann": {"city": "Rome", "pets": ["cat"]}}, "session_tiers": {"s0": "signal", "s1": "noise"},
        "events": [{"session_id": "s0", "tier": "signal", "kind": "disclose", "entity": "ann", "attribute": "city",
                    "new": "Rome", "message_ids": ["m0"]}],
        "snapshots": {"c1": {"ann": {"city": "Oslo"}}},
        "probes": [{"probe_id": "p1", "checkpoint_id": "c1", "probe_type": "revision", "answer": "Oslo",
                    "stale": ["Rome"], "evidence": ["m0", "m2"], "entity": "ann", "horizon": "short"},
                   {"probe_id": "p2", "checkpoint_id": "c1", "probe_type": "action", "answer": "b",
                    "evidence": ["m2"]}]}


def fixture_bytes(lines: list) -> bytes:
    return b"".join(dump_json(line) + b"\n" for line in lines)


def write_corpus(root: Path, fixture: bytes | None = None, gold: bytes | None = None) -> tuple[Path, Path]:
    """``root/fixtures/fz-1.jsonl`` and ``root/gold/fz-1.json`` (the valid ones by default)."""
    fixtures, golds = root / "fixtures", root / "gold"
    fixtures.mkdir(parents=True, exist_ok=True)
    golds.mkdir(parents=True, exist_ok=True)
    (fixtures / "fz-1.jsonl").write_bytes(fixture_bytes(FIXTURE_LINES) if fixture is None else fixture)
    (golds / "fz-1.json").write_bytes(dump_json(GOLD, indent=1) if gold is None else gold)
    return fixtures, golds

"""Reading, writing and validating a corpus: ``fixtures/*.jsonl`` + ``gold/*.json``.

Everything written here is canonical JSON (sorted keys, compact separators, UTF-8,
``\\n`` line ends) so that the same inputs give byte-identical files.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, TypeAdapter, ValidationError

from conformance.contract.fixture import (
    GOLD_KEYS,
    CheckpointLine,
    FixtureLine,
    HeaderLine,
    SessionLine,
)
from conformance.contract.gold import GoldFile
from conformance.contract.limits import (
    MAX_FIXTURE_BYTES,
    MAX_GOLD_BYTES,
    MAX_JSONL_LINE_BYTES,
    BadDocument,
    TooLarge,
    bounded_lines,
    human,
    parse_json,
    read_bounded,
)
from conformance.errors import DriftError

_LINE = TypeAdapter(FixtureLine)


class CorpusError(DriftError, ValueError):
    """A corpus file is malformed. ``str()`` names the file, the line and the field."""

    def __init__(self, path: Path | str, message: str, line: int | None = None, field: str | None = None):
        self.path, self.line, self.field = str(path), line, field
        where = self.path + (f":{line}" if line is not None else "")
        super().__init__(f"{where}: " + (f"{field}: " if field else "") + message)


def canonical_json(obj: object) -> str:
    """One deterministic JSON text for ``obj`` (no trailing newline)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _dump(model: BaseModel) -> dict:
    return model.model_dump(mode="json", exclude_none=True)


def write_fixture(path: Path, lines: Iterable[BaseModel]) -> None:
    """Write fixture lines (header first) as canonical JSONL."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        for line in lines:
            out.write(canonical_json(_dump(line)) + "\n")


def write_gold(path: Path, gold: GoldFile) -> None:
    """Write a gold file as canonical, indented JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(_dump(gold), sort_keys=True, indent=1, ensure_ascii=False)
    path.write_text(text + "\n", encoding="utf-8", newline="\n")


def _has_gold_key(obj: object) -> bool:
    """Whether a gold key occurs anywhere in ``obj`` (a parsed JSON line: no shared parts,
    depth already bounded); no paths are built, so a clean line costs one set test per object."""
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if not GOLD_KEYS.isdisjoint(item):
                return True
            stack.extend(v for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, (dict, list)))
    return False


def _gold_key_path(obj: object, prefix: str = "") -> str | None:
    if isinstance(obj, dict):
        for key, value in obj.items():
            here = f"{prefix}.{key}" if prefix else str(key)
            if key in GOLD_KEYS:
                return here
            found = _gold_key_path(value, here)
            if found:
                return found
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            found = _gold_key_path(value, f"{prefix}[{i}]")
            if found:
                return found
    return None


def _field_path(err: dict) -> str:
    parts = [str(p) for p in err["loc"] if p not in ("header", "session", "checkpoint")]
    return ".".join(parts) or "(line)"


def iter_fixture(path: Path) -> Iterator[HeaderLine | SessionLine | CheckpointLine]:
    """Stream a fixture's validated lines, one at a time (never the whole file).

    Raises:
        CorpusError: bad JSON, a gold key, a schema violation, or an out-of-order
            line; the error names the file, the line number and the field path.
    """
    seen_sessions = 0
    message_ids: set[str] = set()
    total, started = 0, False
    # Binary mode, decoded line by line: a text-mode reader keeps a decoded chunk
    # (earlier transcript text) alive as a Python string; this keeps only one line,
    # and a bounded readline never holds more than MAX_JSONL_LINE_BYTES of it.
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise CorpusError(path, f"cannot read: {exc.strerror or exc}") from None
    with handle:
        for line_read in bounded_lines(handle, MAX_JSONL_LINE_BYTES):
            lineno, raw = line_read.number, line_read.data
            total += line_read.size
            if raw is None:
                raise CorpusError(path, f"line longer than {human(MAX_JSONL_LINE_BYTES)} (the input limit; "
                                        "see docs/input-limits.md)", lineno)
            if total > MAX_FIXTURE_BYTES:
                raise CorpusError(path, f"fixture larger than {human(MAX_FIXTURE_BYTES)} (the input limit; "
                                        "see docs/input-limits.md)", lineno)
            del line_read
            if not raw.strip():
                continue
            try:
                data = parse_json(raw)
            except BadDocument as exc:
                raise CorpusError(path, exc.message, lineno, exc.field) from None
            del raw
            leak = _gold_key_path(data) if _has_gold_key(data) else None
            if leak:
                raise CorpusError(path, "gold key in a fixture (gold belongs in gold/, never in what the adapter sees)",
                                  lineno, leak)
            if not isinstance(data, dict) or "kind" not in data:
                raise CorpusError(path, "expected an object with a 'kind' of header, session or checkpoint", lineno)
            try:
                line = _LINE.validate_python(data)
            except ValidationError as exc:
                first = exc.errors()[0]
                raise CorpusError(path, first["msg"], lineno, _field_path(first)) from None
            del data
            started_before, started = started, True
            if not started_before and not isinstance(line, HeaderLine):
                raise CorpusError(path, "the first line must be the header", lineno, "kind")
            if started_before and isinstance(line, HeaderLine):
                raise CorpusError(path, "a second header line", lineno, "kind")
            if isinstance(line, SessionLine):
                if line.index != seen_sessions:
                    raise CorpusError(path, f"session index {line.index}, expected {seen_sessions}", lineno, "index")
                for i, msg in enumerate(line.messages):
                    if msg.message_id in message_ids:
                        raise CorpusError(path, f"duplicate message id {msg.message_id!r}", lineno,
                                          f"messages.{i}.message_id")
                    message_ids.add(msg.message_id)
                seen_sessions += 1
            elif isinstance(line, CheckpointLine) and line.after_session != seen_sessions:
                raise CorpusError(path, f"checkpoint after_session={line.after_session} but "
                                        f"{seen_sessions} sessions precede it", lineno, "after_session")
            # Hand the line over without keeping a reference in this frame (budget gate).
            handover = [line]
            del line
            yield handover.pop()


def read_header(path: Path) -> HeaderLine:
    """The header line alone (cheap: reads one line)."""
    for line in iter_fixture(path):
        assert isinstance(line, HeaderLine)
        return line
    raise CorpusError(path, "empty fixture")


def read_gold(path: Path) -> GoldFile:
    """Load and validate one gold file.

    Raises:
        CorpusError: bad JSON or a schema violation, naming the field path.
    """
    try:
        data = parse_json(read_bounded(path, MAX_GOLD_BYTES))
    except TooLarge as exc:
        raise CorpusError(path, f"gold file {exc}") from None
    except OSError as exc:
        raise CorpusError(path, f"cannot read: {exc.strerror or exc}") from None
    except BadDocument as exc:
        raise CorpusError(path, exc.message, exc.line, exc.field) from None
    if not isinstance(data, dict):
        raise CorpusError(path, f"expected a JSON object (a gold file), got {type(data).__name__}", 1)
    try:
        return GoldFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise CorpusError(path, first["msg"], field=".".join(str(p) for p in first["loc"]) or "(document)") from None


def fixture_files(fixtures_dir: Path) -> list[Path]:
    return sorted(Path(fixtures_dir).glob("*.jsonl"))


def file_sha256(path: Path) -> tuple[str, int]:
    """(hex SHA-256, size in bytes) of a file, read in chunks."""
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def fixtures_hash(fixtures_dir: Path, gold_dir: Path) -> str:
    """SHA-256 over sorted gold files then sorted fixture files, names included.

    Each file contributes ``<dir>/<name>\\0<bytes>\\0``; holdout files count too.
    """
    digest = hashlib.sha256()
    for kind, folder, pattern in (("gold", gold_dir, "*.json"), ("fixtures", fixtures_dir, "*.jsonl")):
        for path in sorted(Path(folder).glob(pattern)):
            digest.update(f"{kind}/{path.name}".encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def corpus_version(fixtures_dir: Path) -> str | None:
    """The ``corpus_version`` of the folder's ledger; None without a ledger or version."""
    try:
        return json.loads((Path(fixtures_dir) / LEDGER_NAME).read_text(encoding="utf-8")).get("corpus_version")
    except (OSError, ValueError, AttributeError):
        return None


def scenario_hashes(fixture_paths: list[Path], gold_dir: Path) -> dict[str, str]:
    """Scenario id -> SHA-256 over its gold file then its fixture file (the CI gate's bless
    mode compares item by item the scenarios whose hash did not change)."""
    out = {}
    for path in sorted(fixture_paths, key=lambda p: p.stem):
        digest = hashlib.sha256()
        for file in (Path(gold_dir) / f"{path.stem}.json", path):
            digest.update(Path(file).read_bytes() + b"\0")
        out[path.stem] = digest.hexdigest()
    return out


def selection_hash(fixture_paths: list[Path], gold_dir: Path) -> str:
    """SHA-256 over the given fixture files and their gold files (sorted by scenario id).

    Each scenario contributes ``gold/<id>.json\0<bytes>\0fixtures/<id>.jsonl\0<bytes>\0``,
    so adding, removing or editing a selected scenario changes it and nothing else does.
    Raises FileNotFoundError when a fixture's gold file is missing.
    """
    digest = hashlib.sha256()
    for path in sorted(fixture_paths, key=lambda p: p.stem):
        gold = Path(gold_dir) / f"{path.stem}.json"
        for label, file in ((f"gold/{gold.name}", gold), (f"fixtures/{path.name}", path)):
            digest.update(label.encode() + b"\0" + Path(file).read_bytes() + b"\0")
    return digest.hexdigest()


def session_index(path: Path) -> dict[str, str]:
    """Map every message id of a fixture to its session id."""
    return {m.message_id: line.session_id for line in iter_fixture(path) if isinstance(line, SessionLine)
            for m in line.messages}


def gold_hash(gold_dir: Path) -> str:
    """SHA-256 over the sorted gold files alone, names included."""
    digest = hashlib.sha256()
    for path in sorted(Path(gold_dir).glob("*.json")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@dataclass(frozen=True)
class Selection:
    """Which scenarios a run covers. Empty tuples mean "no filter"."""

    patterns: tuple[str, ...] = ()
    """Globs over scenario ids."""
    paradigms: tuple[str, ...] = ()
    horizons: tuple[str, ...] = ()
    """A scenario's horizon is the phase its trajectory ends in (short, medium, long)."""
    splits: tuple[str, ...] = ()
    include_holdout: bool = False
    """Holdout scenarios are left out unless asked for (published runs only)."""

    def describe(self) -> dict:
        return {"scenario_patterns": list(self.patterns), "paradigms": list(self.paradigms),
                "horizons": list(self.horizons), "splits": list(self.splits),
                "include_holdout": self.include_holdout}


def scenario_horizon(header: HeaderLine) -> str:
    return header.horizons[-1].name


def select_fixtures(fixtures_dir: Path, selection: Selection = Selection()) -> tuple[list[Path], list[str]]:
    """Fixture files the selection keeps, and the ids of holdout scenarios it left out."""
    kept, held_out = [], []
    for path in fixture_files(fixtures_dir):
        if selection.patterns and not any(fnmatch.fnmatchcase(path.stem, p) for p in selection.patterns):
            continue
        header = read_header(path)
        if selection.paradigms and header.paradigm not in selection.paradigms:
            continue
        if selection.horizons and scenario_horizon(header) not in selection.horizons:
            continue
        if selection.splits and not set(selection.splits) & set(header.splits):
            continue
        if header.holdout and not selection.include_holdout:
            held_out.append(header.scenario_id)
            continue
        kept.append(path)
    return kept, held_out


def validate_corpus(fixtures_dir: Path, gold_dir: Path) -> list[str]:
    """Check every fixture against its gold; returns the scenario ids checked.

    Raises:
        CorpusError: a fixture without gold (or the reverse), or any error of
            :func:`validate_scenario`.
    """
    fixtures = {p.stem: p for p in fixture_files(fixtures_dir)}
    golds = {p.stem: p for p in sorted(Path(gold_dir).glob("*.json"))}
    for missing in sorted(set(fixtures) - set(golds)):
        raise CorpusError(fixtures[missing], f"no gold file {Path(gold_dir) / (missing + '.json')}")
    for missing in sorted(set(golds) - set(fixtures)):
        raise CorpusError(golds[missing], f"no fixture file {Path(fixtures_dir) / (missing + '.jsonl')}")
    for scenario, path in fixtures.items():
        validate_scenario(path, golds[scenario])
    return sorted(fixtures)


def validate_selection(fixture_paths: list[Path], gold_dir: Path) -> dict[str, GoldFile]:
    """Check the given fixtures (a run's selection) against their gold files, and only them.

    A run reads no other scenario, so it validates no other; ``drift-conformance validate``
    (:func:`validate_corpus`) checks the whole corpus. Returns scenario id -> its gold.

    Raises:
        CorpusError: a selected fixture without a gold file, or any error of :func:`validate_scenario`.
    """
    gold = {}
    for path in fixture_paths:
        gold_path = Path(gold_dir) / f"{Path(path).stem}.json"
        if not gold_path.is_file():
            raise CorpusError(path, f"no gold file {gold_path}")
        gold[Path(path).stem] = validate_scenario(Path(path), gold_path)
    return gold


def validate_scenario(path: Path, gold_path: Path) -> GoldFile:
    """Check one fixture against its gold file; returns the gold, validated.

    Raises:
        CorpusError: a malformed line or gold file, a probe without gold, gold for a probe
            the fixture lacks, evidence naming no message, or a header marker that breaks
            the rules of :class:`_MarkerCheck`.
    """
    scenario = path.stem
    gold = read_gold(gold_path)
    probe_ids: set[str] = set()
    message_ids: set[str] = set()
    markers: _MarkerCheck | None = None
    header_seen = False
    for line in iter_fixture(path):
        if isinstance(line, HeaderLine):
            header_seen = True
            if line.scenario_id != scenario:
                raise CorpusError(path, f"scenario_id {line.scenario_id!r} does not match the file name", 1,
                                  "scenario_id")
            markers = _MarkerCheck(path, line.markers) if line.markers else None
        if isinstance(line, SessionLine):
            message_ids.update(m.message_id for m in line.messages)
            if markers is not None:
                markers.session(line)
        if isinstance(line, CheckpointLine):
            probe_ids.update(p.probe_id for p in line.probes)
    if not header_seen:
        raise CorpusError(path, "empty fixture: expected a header line, sessions and checkpoints", 1)
    if markers is not None:
        markers.finish()
    gold_ids = {p.probe_id for p in gold.probes}
    if probe_ids != gold_ids:
        extra = sorted(gold_ids - probe_ids)[:5]
        lacking = sorted(probe_ids - gold_ids)[:5]
        raise CorpusError(gold_path, f"probes differ from the fixture: gold only {extra}, fixture only {lacking}",
                          field="probes")
    for i, probe in enumerate(gold.probes):
        dangling = [e for e in probe.evidence if e not in message_ids]
        if dangling:
            raise CorpusError(gold_path, f"evidence {dangling} names no message of the fixture",
                              field=f"probes.{i}.evidence")
    return gold


_WORD = re.compile(r"\w+")


class _MarkerCheck:
    """The header's session markers, checked while the sessions stream past.

    Rules (each error names the file, the line and the session id):

    * every key is the id of a session of the fixture;
    * no two sessions share a marker;
    * a session's marker occurs, as a whole word and with its case, in a shared message
      of that session (the runner's probe looks for it in what the memory kept of the
      shared record);
    * it occurs in no message of any other session.

    Only the words of the session at hand are held, never earlier sessions' text.
    """

    def __init__(self, path: Path, markers: dict[str, str]):
        self.path = Path(path)
        self.markers = dict(markers)
        self.owner: dict[str, str] = {}
        for session_id, code in self.markers.items():
            if code in self.owner:
                raise CorpusError(path, f"session {session_id!r} has the marker {code!r} of session "
                                        f"{self.owner[code]!r}; markers are unique", 1, f"markers.{session_id}")
            self.owner[code] = session_id
        # Markers made of word characters are found by set lookup; any other one by a search.
        self.words = {c for c in self.owner if _WORD.fullmatch(c)}
        self.phrases = {c: re.compile(r"(?<!\w)" + re.escape(c) + r"(?!\w)") for c in self.owner if c not in self.words}
        self.seen: set[str] = set()

    def _found(self, text: str) -> set[str]:
        found = self.words.intersection(_WORD.findall(text))
        found.update(c for c, pattern in self.phrases.items() if pattern.search(text))
        return found

    def session(self, line: SessionLine) -> None:
        sid = line.session_id
        self.seen.add(sid)
        own = self.markers.get(sid)
        found_shared: set[str] = set()
        for i, msg in enumerate(line.messages):
            found = self._found(msg.text)
            stray = sorted(c for c in found if c != own)
            if stray:
                code = stray[0]
                raise CorpusError(self.path, f"marker {code!r} of session {self.owner[code]!r} also occurs in "
                                             f"session {sid!r} (message {msg.message_id!r}); a marker belongs "
                                             "to one session only", self._line_of(sid), f"messages.{i}.text")
            if msg.scope == "shared":
                found_shared |= found
        if own is not None and own not in found_shared:
            raise CorpusError(self.path, f"marker {own!r} of session {sid!r} does not occur (as a whole word) "
                                         "in a shared message of that session", self._line_of(sid),
                              f"markers.{sid}")

    def finish(self) -> None:
        unknown = sorted(set(self.markers) - self.seen)
        if unknown:
            raise CorpusError(self.path, f"marker {self.markers[unknown[0]]!r} is keyed by {unknown[0]!r}, "
                                         "which is no session of this fixture", 1, f"markers.{unknown[0]}")

    def _line_of(self, session_id: str) -> int | None:
        """The line number of a session (only looked up to report an error)."""
        needle = json.dumps(session_id).encode()
        with open(self.path, "rb") as handle:
            for lineno, raw in enumerate(handle, start=1):
                if needle in raw:
                    data = json.loads(raw)
                    if isinstance(data, dict) and data.get("kind") == "session" and \
                            data.get("session_id") == session_id:
                        return lineno
        return None


LEDGER_NAME = "_ledger.json"
AUDITS_KEY = "audits"
"""Ledger key of the audits recorded after generation (``audit-shortcuts``); ``generate --check`` ignores it."""


def build_ledger(fixtures_dir: Path, gold_dir: Path, seed: int, rebuild: str,
                 corpus_version: str | None = None) -> dict:
    """Corpus metadata: counts per paradigm, horizon, split and probe type, the seed,
    the corpus version (receipts record it) and the command that rebuilds the corpus
    byte-identically. Deterministic (no timestamps)."""
    scenarios = []
    probe_types: dict[str, int] = {}
    for path in fixture_files(fixtures_dir):
        header = read_header(path)
        sessions = probes = 0
        for line in iter_fixture(path):
            if isinstance(line, SessionLine):
                sessions += 1
            elif isinstance(line, CheckpointLine):
                probes += len(line.probes)
        for probe in read_gold(Path(gold_dir) / f"{path.stem}.json").probes:
            probe_types[probe.probe_type] = probe_types.get(probe.probe_type, 0) + 1
        scenarios.append({"scenario_id": header.scenario_id, "paradigm": header.paradigm,
                          "horizon": header.horizons[-1].name, "sessions": sessions, "probes": probes,
                          "holdout": header.holdout, "splits": sorted(header.splits)})

    def count(key: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in scenarios:
            out[str(s[key])] = out.get(str(s[key]), 0) + 1
        return dict(sorted(out.items()))

    splits: dict[str, int] = {}
    for s in scenarios:
        for name in s["splits"]:
            splits[name] = splits.get(name, 0) + 1
    return {"seed": seed, "rebuild": rebuild, "corpus_version": corpus_version, "scenarios": len(scenarios),
            "sessions": sum(s["sessions"] for s in scenarios), "probes": sum(s["probes"] for s in scenarios),
            "by_paradigm": count("paradigm"), "by_horizon": count("horizon"), "holdout": count("holdout"),
            "splits": dict(sorted(splits.items())), "probe_types": dict(sorted(probe_types.items())),
            "fixtures_hash": fixtures_hash(fixtures_dir, gold_dir), "scenario_list": scenarios}

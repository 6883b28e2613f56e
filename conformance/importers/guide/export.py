"""Export a corpus to the guide's JSON Lines case format (docs/import-formats.md#guide), with
the ``drift`` objects that let the import rebuild each scenario byte for byte."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pydantic import BaseModel

from conformance import paths
from conformance.contract.corpus import CorpusError, canonical_json, iter_fixture, read_gold
from conformance.contract.fixture import HeaderLine, Message, Probe, SessionLine
from conformance.contract.gold import GoldProbe
from conformance.contract.limits import human
from conformance.errors import DriftError
from conformance.importers.guide import keys
from conformance.importers.guide.keys import EXTRAS_KEY, GuideExportError

if TYPE_CHECKING:
    from conformance.contract.corpus import Selection

def _dump(model: BaseModel, exclude: set[str]) -> dict:
    return model.model_dump(mode="json", exclude_none=True, exclude=exclude)


def _turn(message: Message) -> dict:
    role = "user" if message.role == "user" else "assistant"
    extras: dict[str, Any] = {"author": message.author, "timestamp": message.timestamp, "scope": message.scope}
    if message.role != role:
        extras["role"] = message.role
    return {"turn_id": message.message_id, "role": role, "text": message.text, EXTRAS_KEY: extras}


def _session(line: SessionLine) -> dict:
    return {"session_id": line.session_id, "timestamp": line.time, "turns": [_turn(m) for m in line.messages],
            EXTRAS_KEY: {"participants": list(line.participants)}}


def _question(probe: Probe, gold: GoldProbe) -> dict:
    extras = _dump(probe, {"probe_id", "query", "asked_at"})
    extras.update(_dump(gold, {"probe_id", "probe_type", "answer", "evidence"}))
    return {"qid": probe.probe_id, "type": gold.probe_type, "asked_at": probe.asked_at, "question": probe.query,
            "gold_answer": gold.answer, "evidence": list(gold.evidence), EXTRAS_KEY: extras}


class _CaseWriter:
    """Writes one case line in pieces, refusing one longer than :data:`keys.MAX_CASE_LINE_BYTES`."""

    def __init__(self, out: TextIO, scenario_id: str):
        self.out, self.scenario_id, self.size = out, scenario_id, 0

    def write(self, piece: str) -> None:
        self.size += len(piece.encode("utf-8"))
        if self.size > keys.MAX_CASE_LINE_BYTES:
            raise GuideExportError(f"scenario {self.scenario_id}: its case would be a line longer than "
                                   f"{human(keys.MAX_CASE_LINE_BYTES)}, which import refuses (see docs/input-limits.md)")
        self.out.write(piece)


def _export_case(fixture: Path, gold_path: Path, out: TextIO) -> None:
    gold = read_gold(gold_path)
    truth = {p.probe_id: p for p in gold.probes}
    writer: _CaseWriter | None = None
    header: HeaderLine | None = None
    checkpoints: list[dict] = []
    questions: list[str] = []
    sessions = 0
    for line in iter_fixture(fixture):
        if isinstance(line, HeaderLine):
            header = line
            if line.scenario_id != fixture.stem:
                raise CorpusError(fixture, f"scenario_id {line.scenario_id!r} does not match the file name", 1,
                                  "scenario_id")
            if gold.scenario_id != line.scenario_id:
                raise CorpusError(gold_path, f"scenario_id {gold.scenario_id!r} is not the fixture's "
                                             f"{line.scenario_id!r}", field="scenario_id")
            writer = _CaseWriter(out, line.scenario_id)
            writer.write('{"case_id":' + canonical_json(line.scenario_id) + ',"sessions":[')
        elif isinstance(line, SessionLine):
            assert writer is not None
            writer.write(("," if sessions else "") + canonical_json(_session(line)))
            sessions += 1
        else:
            checkpoints.append({"checkpoint_id": line.checkpoint_id, "after_session": line.after_session,
                                "horizon": line.horizon})
            for probe in line.probes:
                gold_probe = truth.pop(probe.probe_id, None)
                if gold_probe is None:
                    raise CorpusError(gold_path, f"no gold for probe {probe.probe_id!r} of the fixture", field="probes")
                questions.append(canonical_json(_question(probe, gold_probe)))
    if writer is None or header is None:
        raise CorpusError(fixture, "empty fixture: expected a header line, sessions and checkpoints", 1)
    if truth:
        raise CorpusError(gold_path, f"gold for probes the fixture lacks: {sorted(truth)[:5]}", field="probes")
    extras = {"header": _dump(header, {"kind", "scenario_id"}), "gold": _dump(gold, {"scenario_id", "probes"}),
              "checkpoints": checkpoints}
    writer.write('],"questions":[' + ",".join(questions) + '],"' + EXTRAS_KEY + '":' + canonical_json(extras) + "}\n")


def export_guide(fixtures_dir: Path | str, gold_dir: Path | str, out_path: Path | str,
                 selection: "Selection | None" = None) -> int:
    """Write the selected scenarios of a corpus to ``out_path`` as guide JSONL; return the
    number of cases written.

    ``selection`` (:class:`conformance.contract.corpus.Selection`, default: every scenario but the
    holdout ones) picks scenarios as a run does: globs, paradigms, horizons, splits
    (``Selection(splits=("ci",))``); holdout scenarios only with ``include_holdout=True``.
    Each case carries the ``drift`` objects that let
    :func:`conformance.importers.guide.import_guide` rebuild the scenario byte for byte. The
    file is written whole or not at all (a ``.part`` file is renamed at the end); an empty
    selection writes an empty file.

    Raises:
        CorpusError: a fixture or gold file is malformed, or they do not match.
        GuideExportError: a case would exceed :data:`keys.MAX_CASE_LINE_BYTES`.
        OSError: the output cannot be written.
    """
    from conformance.contract.corpus import Selection, select_fixtures

    fixtures, _held_out = select_fixtures(Path(fixtures_dir), selection or Selection())
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    partial = out_path.with_name(out_path.name + ".part")
    try:
        with open(partial, "w", encoding="utf-8", newline="\n") as out:
            for fixture in fixtures:
                _export_case(fixture, Path(gold_dir) / f"{fixture.stem}.json", out)
        os.replace(partial, out_path)
    finally:
        partial.unlink(missing_ok=True)
    return len(fixtures)


def export_selection(fixtures_dir: Path | None, gold_dir: Path | None, out_path: Path, selection) -> int:
    """:func:`export_guide` of the scenarios ``selection`` (a ``contract.corpus.Selection``) picks
    from a corpus (default: the packaged one); returns the number of cases written.

    Raises:
        DriftError: a missing folder, a selection that matches nothing (naming the holdout
            scenarios it left out), or an unwritable ``out_path``.
    """
    from conformance.contract.corpus import select_fixtures

    fixtures_dir = fixtures_dir or paths.fixtures_dir()
    gold_dir = gold_dir or paths.gold_dir()
    for folder, what in ((fixtures_dir, "fixture"), (gold_dir, "gold")):
        if not Path(folder).is_dir():
            raise DriftError(f"{what} folder {folder} does not exist")
    chosen, held_out = select_fixtures(fixtures_dir, selection)
    if not chosen:
        n = len(held_out)
        extra = f" ({n} holdout scenario{'' if n == 1 else 's'} left out; --include-holdout exports " \
            f"{'it' if n == 1 else 'them'})" if held_out else ""
        raise DriftError(f"no scenario of {fixtures_dir} matches the filters{extra}")
    try:
        return export_guide(fixtures_dir, gold_dir, out_path, selection)
    except OSError as exc:
        raise DriftError(f"{exc.filename or out_path}: {exc.strerror or exc}") from None

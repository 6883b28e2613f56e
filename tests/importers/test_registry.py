"""`import NAME`: importers come from the ``drift_conformance.importers`` entry points, a
package outside this one can add one, only the named one is imported, and an unknown or
broken one is a clear error (exit 2) naming what is installed."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from importlib import metadata

import pytest
from click.testing import CliRunner

from conformance import cli
from conformance.importers import registry
from conformance.importers.registry import ENTRY_POINT_GROUP, Importer, ImporterError, load_importer, registered

BUILT_IN = ["beam", "guide", "locomo", "longmemeval"]

# A third-party importer, as another distribution would ship it: one scenario per line of a
# text file, each line one user message, with no probes.
PLUGIN = '''
from pathlib import Path

from conformance.contract.corpus import write_fixture, write_gold
from conformance.contract.fixture import EntityRef, HeaderLine, HorizonPhase, Message, SessionLine
from conformance.contract.gold import GoldFile
from conformance.importers.registry import Importer
from conformance.importers.report import SourceFormatError
from conformance.importers.toolkit import ReportBuilder, sanitise_id


def run(path, out_dir):
    text = Path(path).read_text(encoding="utf-8")
    if not text.strip():
        raise SourceFormatError(f"{path}: (file): no line")
    report = ReportBuilder("notes", ())
    for n, line in enumerate(text.splitlines(), start=1):
        sid = sanitise_id(f"notes-{n}")
        session = SessionLine(session_id=f"{sid}-S1", index=0, time="2026-01-01T00:00:00Z", participants=["u"],
                              messages=[Message(message_id=f"{sid}-m1", author="u", role="user", text=line,
                                                timestamp="2026-01-01T00:00:00Z")])
        header = HeaderLine(scenario_id=sid, paradigm="user_assistant", source="notes",
                            horizons=[HorizonPhase(name="short", sessions=1, session_gap_hours=24)],
                            entities=[EntityRef(entity_id="u", type="human")])
        write_fixture(out_dir / "fixtures" / f"{sid}.jsonl", [header, session])
        write_gold(out_dir / "gold" / f"{sid}.json", GoldFile(scenario_id=sid, source="notes", probes=[]))
        report.scenario(sid, [session], [])
    return report.write(out_dir, path, "0" * 64, len(text), ["one scenario per line"])


IMPORTER = Importer(run=run, summary="Notes: one scenario per line of a text file.", unit="line")
NOT_AN_IMPORTER = run
'''


def _entry(name: str, value: str) -> metadata.EntryPoint:
    return metadata.EntryPoint(name=name, value=value, group=ENTRY_POINT_GROUP)


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """The installed entry points plus a fake distribution's: ``notes`` (a working importer),
    ``wrong`` (names a function), ``missing`` (a module that does not exist) and ``list``
    (a reserved name, ignored)."""
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "drift_notes_plugin.py").write_text(PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    real = metadata.entry_points

    def entry_points(**params):
        found = list(real(**params))
        if params.get("group") == ENTRY_POINT_GROUP:
            found += [_entry("notes", "drift_notes_plugin:IMPORTER"),
                      _entry("wrong", "drift_notes_plugin:NOT_AN_IMPORTER"),
                      _entry("missing", "drift_no_such_module:IMPORTER"),
                      _entry("list", "drift_notes_plugin:IMPORTER")]
        return metadata.EntryPoints(found)

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    source = tmp_path / "notes.txt"
    source.write_text("I moved to Rome.\nMy sister is called Ada.\n", encoding="utf-8")
    return source


def test_the_built_in_importers_are_registered_through_entry_points():
    assert list(registered()) == BUILT_IN
    for name in BUILT_IN:
        importer = load_importer(name)
        assert isinstance(importer, Importer) and importer.summary
    assert load_importer("beam").folders and not load_importer("locomo").folders


def test_a_third_party_importer_runs_through_import_name(plugin, tmp_path):
    assert list(registered()) == sorted([*BUILT_IN, "missing", "notes", "wrong"])
    result = CliRunner().invoke(cli.main, ["import", "notes", str(plugin), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "notes: 2 scenarios, 2 sessions, 2 messages, 0 probes" in result.output
    assert sorted(p.name for p in (tmp_path / "out" / "fixtures").iterdir()) == ["notes-1.jsonl", "notes-2.jsonl"]
    report = json.loads((tmp_path / "out" / "import-report.json").read_text(encoding="utf-8"))
    assert (report["source"], report["scenarios"]) == ("notes", ["notes-1", "notes-2"])


def test_a_third_party_importer_s_source_error_exits_2(plugin, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    result = CliRunner().invoke(cli.main, ["import", "notes", str(empty), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "empty.txt: (file): no line" in result.output, result.output


def test_import_list_and_help_name_every_registered_importer(plugin):
    listed = CliRunner().invoke(cli.main, ["import", "list"])
    assert listed.exit_code == 0, listed.output
    rows = {line.split("\t")[0]: line for line in listed.output.splitlines()}
    assert sorted(rows) == sorted([*BUILT_IN, "missing", "notes", "wrong"])
    assert "Notes: one scenario per line" in rows["notes"] and "(drift_notes_plugin:IMPORTER)" in rows["notes"]
    assert "cannot load" in rows["missing"] and "drift_no_such_module" in rows["missing"]
    assert "not an" in rows["wrong"]
    shown = CliRunner().invoke(cli.main, ["import", "--help"])
    assert shown.exit_code == 0, shown.output
    for name in (*BUILT_IN, "notes", "list"):
        assert f"  {name} " in shown.output, (name, shown.output)


def test_an_unknown_name_is_a_usage_error_naming_the_installed_importers(tmp_path):
    source = tmp_path / "x.json"
    source.write_text("[]", encoding="utf-8")
    result = CliRunner().invoke(cli.main, ["import", "locomoo", str(source), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "no importer named 'locomoo'; installed: beam, guide, locomo, longmemeval" in result.output
    assert not (tmp_path / "out").exists()


def test_a_broken_entry_point_is_an_error_not_a_crash(plugin, tmp_path):
    for name, says in (("missing", "does not load: ModuleNotFoundError"), ("wrong", "is a function, not an")):
        with pytest.raises(ImporterError, match=f"importer '{name}' .*{says}"):
            load_importer(name)
        result = CliRunner().invoke(cli.main, ["import", name, str(plugin), "--out", str(tmp_path / name)])
        assert result.exit_code == 2 and says in result.output, result.output


def test_an_empty_group_says_how_to_repair_the_install(monkeypatch):
    monkeypatch.setattr(metadata, "entry_points", lambda **params: metadata.EntryPoints([]))
    with pytest.raises(ImporterError, match="none is installed.*reinstall drift-conformance"):
        load_importer("locomo")
    assert registry.registered() == {}


def test_the_existing_command_lines_keep_their_paths_and_options():
    for name in BUILT_IN:
        shown = CliRunner().invoke(cli.main, ["import", name, "--help"], terminal_width=200)
        assert shown.exit_code == 0 and "PATH" in shown.output and "--out" in shown.output, (name, shown.output)
        assert "docs/import-formats.md" in shown.output


def test_import_name_loads_only_that_importer(tmp_path):
    # A run of one importer never pays for the others (nor does the CLI before it runs).
    source = tmp_path / "locomo.json"
    source.write_text("[]", encoding="utf-8")
    code = textwrap.dedent(f"""
        import sys
        from conformance.cli import main
        try:
            main(["import", "locomo", {str(source)!r}, "--out", {str(tmp_path / "out")!r}])
        except SystemExit:
            pass
        print("MODULES", *sorted(m for m in sys.modules if m.startswith("conformance.importers.")))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    loaded = proc.stdout.splitlines()[-1].split()[1:]
    assert "conformance.importers.locomo" in loaded, (loaded, proc.stderr)
    assert not [m for m in loaded if m.split(".")[2] in ("beam", "guide", "longmemeval")], loaded
    assert "no conversation could be imported" in proc.stderr, proc.stderr

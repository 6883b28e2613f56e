"""Your own scenario file (issue 19, item 11): ``generate --scenario-file`` and ``validate
--scenario-file``; errors name the file and the field. The YAML below is this suite's own
rendering of a baseline user-assistant scenario over three horizons (the shape of the
spec's ``ua-baseline-001``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BASELINE = """\
# A principal and an assistant over a short, a medium and a long horizon.
id: ua-baseline-001
paradigm: user_assistant
noise_ratio: 0.7
horizon:
  short:  {sessions: 30, session_gap_hours: 8}
  medium: {sessions: 200, session_gap_days: 3}
  long:   {sessions: 1000, session_gap_days: 14}
entities:
  - id: principal
    type: human
    profile:
      big_five: {O: 0.6, C: 0.55, E: 0.35, A: 0.75, N: 0.25}
      event_distribution: {job_change: 0.03, opinion_shift: 0.04, habit_form: 0.08}
  - id: assistant
    type: assistant_agent
    capability_profile:
      context_window: 128000
      tool_access: [search]
topology:
  - {session_range: [0, -1], active: [principal, assistant], pattern: linear}
checkpoints:
  - {after_session: 30, probe_types: [recall, action]}
  - {after_session: 200, probe_types: [recall, action, revision]}
  - {after_session: 1000, probe_types: [recall, action, revision]}
"""


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_generate_from_a_scenario_file_is_valid_and_byte_identical(tmp_path):
    spec = tmp_path / "my-scenario.yaml"  # a user's file need not be named after its id
    spec.write_text(BASELINE)
    for out in ("a", "b"):
        proc = cli("generate", "--scenario-file", str(spec), "--fixtures", f"{out}/fixtures", "--gold", f"{out}/gold",
                   cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert "wrote 1 scenarios" in proc.stdout
    fixture = tmp_path / "a" / "fixtures" / "ua-baseline-001.jsonl"
    assert fixture.read_bytes() == (tmp_path / "b" / "fixtures" / "ua-baseline-001.jsonl").read_bytes()
    header = json.loads(fixture.read_text().splitlines()[0])
    assert header["scenario_id"] == "ua-baseline-001" and header["paradigm"] == "user_assistant"
    assert [h["name"] for h in header["horizons"]] == ["short", "medium", "long"]
    ledger = json.loads((tmp_path / "a" / "fixtures" / "_ledger.json").read_text())
    assert "--scenario-file" in ledger["rebuild"]
    proc = cli("validate", "--fixtures", "a/fixtures", "--gold", "a/gold", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_validate_a_scenario_file(tmp_path):
    spec = tmp_path / "baseline.yaml"
    spec.write_text(BASELINE)
    proc = cli("validate", "--scenario-file", str(spec), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "scenario ua-baseline-001 valid (user_assistant, 1000 sessions, 3 checkpoints" in proc.stdout


def test_errors_name_the_file_and_the_field(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(BASELINE.replace("probe_types: [recall, action, revision]}\n  - {after_session: 1000",
                                    "probe_types: [recall, teleport]}\n  - {after_session: 1000"))
    for args in (("validate", "--scenario-file", str(bad)),
                 ("generate", "--scenario-file", str(bad), "--fixtures", "f", "--gold", "g")):
        proc = cli(*args, cwd=tmp_path)
        assert proc.returncode == 2
        text = " ".join(proc.stderr.split())
        assert f"{bad}: checkpoints[1].probe_types" in text and "Traceback" not in proc.stderr
    assert not (tmp_path / "f").exists()
    proc = cli("generate", "--scenario-file", str(bad), cwd=tmp_path)
    assert proc.returncode == 2 and "--fixtures" in proc.stderr
    proc = cli("validate", "--scenario-file", str(tmp_path / "missing.yaml"), cwd=tmp_path)
    assert proc.returncode == 2 and "missing.yaml" in proc.stderr

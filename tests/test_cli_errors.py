"""The CLI under bad input: exit 2, a message naming what to fix, no traceback, and
environment variables named after the options."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def cli(*args, cwd, env=None):
    import os

    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env=full_env)


def assert_error(proc, *needles):
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    for needle in needles:
        assert needle in proc.stderr, (needle, proc.stderr)


def test_fixtures_without_gold_is_refused(tmp_path):
    assert_error(cli("--fixtures", str(REPO / "fixtures"), "--quiet", cwd=tmp_path), "--fixtures and --gold together")


def test_missing_fixture_folder_is_named(tmp_path):
    assert_error(cli("--fixtures", str(tmp_path / "nope"), "--gold", str(tmp_path / "nope2"), "--quiet",
                     cwd=tmp_path), "does not exist")


@pytest.mark.parametrize("spec", ["grpc://localhost", "grpc://[::1]", "grpc://127.0.0.1:99999"])
def test_malformed_grpc_address(tmp_path, spec):
    assert_error(cli("--adapter", spec, "--quiet", "--records-dir", str(tmp_path), cwd=tmp_path),
                 "expected grpc://HOST:PORT")


def test_import_of_malformed_or_empty_files(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"sample_id": "x", "conversation": ')
    assert_error(cli("import", "locomo", str(bad), "--out", str(tmp_path / "o1"), cwd=tmp_path), "bad.json")
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    assert_error(cli("import", "locomo", str(empty), "--out", str(tmp_path / "o2"), cwd=tmp_path),
                 "no conversation could be imported")


def test_import_refuses_a_folder_with_an_earlier_corpus(tmp_path):
    (tmp_path / "o" / "fixtures").mkdir(parents=True)
    (tmp_path / "o" / "fixtures" / "old.jsonl").write_text("{}\n")
    src = tmp_path / "one.json"
    src.write_text("[]")
    assert_error(cli("import", "locomo", str(src), "--out", str(tmp_path / "o"), cwd=tmp_path), "is not empty")


@pytest.mark.slow
def test_environment_variables_follow_option_names(tmp_path):
    proc = cli("--json", "--quiet", "--records-dir", str(tmp_path), cwd=tmp_path,
               env={"DRIFT_BUDGET": "77", "DRIFT_SCENARIO": "ua-short-003", "DRIFT_K": "4"})
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["receipt"]["config"]["budget_tokens"] == 77 and doc["receipt"]["config"]["k"] == 4
    assert doc["receipt"]["scenarios"] == ["ua-short-003"]
    assert_error(cli("--quiet", "--records-dir", str(tmp_path), cwd=tmp_path, env={"DRIFT_SCENARIO": "nomatch*"}),
                 "match no fixture")



def test_a_bad_value_from_an_environment_variable_names_the_variable(tmp_path):
    proc = cli("--quiet", "--records-dir", str(tmp_path), cwd=tmp_path, env={"DRIFT_SHARD": "3/2"})
    assert_error(proc, "'--shard' (set by the environment variable DRIFT_SHARD)", "shard 3/2")
    proc = cli("validate", cwd=tmp_path, env={"DRIFT_VALIDATE_SEED": "abc"})
    assert_error(proc, "'--seed' (set by the environment variable DRIFT_VALIDATE_SEED)")
    # Typed on the command line, the option alone is named.
    proc = cli("--quiet", "--records-dir", str(tmp_path), "--shard", "3/2", cwd=tmp_path)
    assert_error(proc, "Invalid value for '--shard': shard 3/2")

#: Two library scenarios, generated as a user's own: the generator's folder rules and its
#: byte check are the same for any corpus, and two short scenarios take seconds, not a library.
SMALL = [REPO / "scenarios" / "ua-short-003.yaml", REPO / "scenarios" / "cod-short-001.yaml"]


def small_args():
    return [arg for spec in SMALL for arg in ("--scenario-file", str(spec))]


def small_generation(tmp_path):
    """A freshly generated two-scenario corpus, ledger included."""
    f, g = tmp_path / "f", tmp_path / "g"
    proc = cli("generate", *small_args(), "--fixtures", str(f), "--gold", str(g), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return f, g


def test_generate_clears_only_what_an_earlier_generation_wrote(tmp_path):
    f, g = small_generation(tmp_path)
    ledger = json.loads((f / "_ledger.json").read_text())
    ledger["scenario_list"].append({"scenario_id": "zz-stale"})
    (f / "_ledger.json").write_text(json.dumps(ledger))
    (f / "zz-stale.jsonl").write_text("{}\n")      # written by an earlier generation: removed
    (f / "notes.txt").write_text("mine")            # never written by the generator: kept
    assert cli("generate", *small_args(), "--fixtures", str(f), "--gold", str(g), cwd=tmp_path).returncode == 0
    assert not (f / "zz-stale.jsonl").exists() and (f / "notes.txt").read_text() == "mine"


def test_generate_refuses_a_folder_it_did_not_write(tmp_path):
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "notes.jsonl").write_text("{}\n")
    assert_error(cli("generate", "--fixtures", str(tmp_path / "f"), "--gold", str(tmp_path / "g"), cwd=tmp_path),
                 "no _ledger.json")
    assert (tmp_path / "f" / "notes.jsonl").exists()
    assert_error(cli("generate", "--fixtures", str(tmp_path / "f"), cwd=tmp_path), "--fixtures and --gold together")


def test_validate_refuses_fixtures_without_their_gold(tmp_path):
    # The packaged gold would have joined someone else's fixtures: every probe "unknown" or "mismatched".
    f, g = small_generation(tmp_path)
    assert_error(cli("validate", "--fixtures", str(f), cwd=tmp_path), "--fixtures and --gold together")
    assert_error(cli("validate", "--gold", str(g), cwd=tmp_path), "--fixtures and --gold together")
    ok = cli("validate", "--fixtures", str(f), "--gold", str(g), cwd=tmp_path)
    assert ok.returncode == 0 and "scenarios valid" in ok.stdout, ok.stderr


def test_generate_check_fails_on_a_changed_byte(tmp_path):
    f, g = small_generation(tmp_path)
    check = ("generate", "--check", *small_args(), "--fixtures", str(f), "--gold", str(g))
    ok = cli(*check, cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "matches the generator byte for byte" in ok.stdout
    victim = sorted(g.glob("*.json"))[0]
    victim.write_bytes(victim.read_bytes().replace(b'"answer"', b'"answer" ', 1))
    (f / "extra.jsonl").write_text("{}\n")
    # One byte changed and one file added: the check names each, and the command that rebuilds.
    assert_error(cli(*check, cwd=tmp_path), f"gold/{victim.name}", "fixtures/extra.jsonl", "--scenario-file")




def test_a_misspelt_adapter_is_refused_before_anything_starts(tmp_path):
    proc = cli("--adapter", "keywrod", "--split", "ci", "--records-dir", str(tmp_path / "runs"), cwd=tmp_path)
    assert_error(proc, "--adapter keywrod", "did you mean keyword?")
    assert "starting adapters" not in proc.stderr  # refused before any adapter process
    assert not list((tmp_path / "runs").glob("*/records.jsonl"))


def test_a_run_of_only_a_control_kind_folder_names_why_nothing_scored(tmp_path):
    """A folder copied from adapters/none keeps ``kind: control``: the run must say so, not just 'scored nothing'."""
    import shutil

    mine = tmp_path / "my-memory"
    shutil.copytree(REPO / "adapters" / "none", mine)
    text = (mine / "adapter.yaml").read_text()
    (mine / "adapter.yaml").write_text(text.replace("name: none", "name: my-memory"))
    proc = cli("--adapter", str(mine), "--scenario", "ua-short-001", "--bootstrap", "100", "--quiet",
               "--records-dir", str(tmp_path / "runs"), cwd=tmp_path)
    assert_error(proc, "the run scored nothing", "my-memory", "kind: control", "adapter.yaml")


def test_a_gate_on_shard_1_of_1_is_refused_with_a_reason_that_holds(tmp_path):
    """1/1 is the whole selection: no 'other shards' to merge, the fix is to drop --shard."""
    proc = cli("--shard", "1/1", "--scenario", "ua-short-001", "--update-baseline", "--quiet",
               "--records-dir", str(tmp_path / "runs"), cwd=tmp_path)
    assert_error(proc, "--shard 1/1", "drop --shard")
    assert "other shards" not in proc.stderr

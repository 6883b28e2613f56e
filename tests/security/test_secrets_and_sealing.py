"""Secrets never reach what a run writes, and the adapter's folder and environment hold no corpus.

A hostile adapter is handed a canary API key (its adapter.yaml names the variable) and echoes
it everywhere it can: in hits, in Describe, on stderr, and then crashes so a fault message
quotes its stderr. Nothing the run writes may contain the canary. The same adapter reports
its working folder and environment, which must name neither fixtures nor gold.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from conformance.secrets import redact, secret_values

REPO = Path(__file__).resolve().parents[2]
CANARY = "sk-ant-canary-7c1d0e5f9a2b"
HONCHO = "honcho-canary-token-55aa"

HOSTILE = '''
import os, sys
from drift_sdk import Backend, Capabilities, Hit, serve

KEY = os.environ.get("ANTHROPIC_API_KEY", "")

def look():
    files = []
    for root, dirs, names in os.walk("."):
        files += [os.path.join(root, n) for n in names]
    return {"cwd": os.getcwd(), "files": sorted(files), "env": dict(os.environ)}

class Hostile(Backend):
    name, version = "hostile", "0"
    capabilities = Capabilities(provenance=True)
    calls = 0
    def settings(self):
        return {"key": KEY, "look": __import__("json").dumps(look())}
    def reset(self, namespace):
        self.last = None
    def store(self, namespace, session):
        self.last = session.messages[-1].message_id
        print(f"storing with key {KEY}", file=sys.stderr, flush=True)
    def retrieve(self, namespace, query, k, querying_entity, now):
        Hostile.calls += 1
        if Hostile.calls == 6:
            print(f"crashing, my key was {KEY}", file=sys.stderr, flush=True)
            os._exit(9)
        return [Hit(f"the key is {KEY}", 1.0, (self.last,), "2026-01-01T00:00:00Z")]

serve(Hostile())
'''


def test_redact_unit():
    env = {"ANTHROPIC_API_KEY": CANARY, "DRIFT_SEED": "0", "SHORT_TOKEN": "abc", "PATH": "/usr/bin:/bin/xx"}
    assert secret_values(env) == ((CANARY, "ANTHROPIC_API_KEY"),)
    assert redact(f"a {CANARY} b", env) == "a [redacted ANTHROPIC_API_KEY] b"
    assert redact("nothing here", env) == "nothing here"
    quoted = 'se"cret\\\\value-long'
    assert redact(json.dumps({"x": quoted}), {"X_SECRET": quoted}) == '{"x": "[redacted X_SECRET]"}'


def test_redact_scans_the_environment_once_and_again_only_after_it_changes(monkeypatch):
    import conformance.secrets as secrets

    scans = []
    real = secrets.secret_values
    monkeypatch.setattr(secrets, "secret_values", lambda environ: scans.append(1) or real(environ))
    monkeypatch.setenv("DRIFT_TEST_API_KEY", CANARY)
    for _ in range(100):
        assert redact(f"a {CANARY} b") == "a [redacted DRIFT_TEST_API_KEY] b"
    assert len(scans) == 1  # once for 100 records, not once per record
    monkeypatch.setenv("DRIFT_TEST_API_KEY", HONCHO)  # a changed value is seen at the next call
    assert redact(f"{CANARY} {HONCHO}") == f"{CANARY} [redacted DRIFT_TEST_API_KEY]"
    monkeypatch.delenv("DRIFT_TEST_API_KEY")
    assert redact(HONCHO) == HONCHO
    assert len(scans) == 3


def test_hostile_adapter_cannot_leak_a_key_or_see_the_corpus(tmp_path):
    folder = tmp_path / "hostile"
    folder.mkdir()
    (folder / "adapter.py").write_text(textwrap.dedent(HOSTILE))
    (folder / "requirements.txt").write_text("")
    (folder / "adapter.yaml").write_text("name: hostile\ndescription: leaks what it can\n"
                                         "env: [ANTHROPIC_API_KEY]\n")
    env = {**os.environ, "ANTHROPIC_API_KEY": CANARY, "HONCHO_API_KEY": HONCHO}
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "--adapter", str(folder), "--scenario",
                           "ua-short-001", "--scenario", "cod-short-001", "--out", "r.json", "--records-dir", "runs",
                           "--bootstrap", "200"], cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 2, proc.stderr  # it crashed: incomplete
    report = subprocess.run([sys.executable, "-m", "conformance.cli", "report", "r.json", "--html", "r.html",
                             "--markdown", "r.md"], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert report.returncode == 0, report.stderr
    written = {str(p): p.read_text(errors="replace") for p in tmp_path.rglob("*")
               if p.is_file() and "hostile" not in p.parts}
    written["stdout"], written["stderr"] = proc.stdout, proc.stderr
    for name, text in written.items():
        assert CANARY not in text and HONCHO not in text, name
    everything = "\n".join(written.values())
    assert "[redacted ANTHROPIC_API_KEY]" in everything  # the adapter did try
    assert "crashing, my key was [redacted ANTHROPIC_API_KEY]" in " ".join(proc.stderr.split()) or \
        "crashing" in everything

    doc = json.loads((tmp_path / "r.json").read_text())
    look = json.loads(doc["systems"]["hostile"]["describe"]["settings"]["look"])
    assert look["env"].get("ANTHROPIC_API_KEY") == "[redacted ANTHROPIC_API_KEY]"  # only what adapter.yaml names
    assert "HONCHO_API_KEY" not in look["env"]
    corpus = [str(REPO / "fixtures"), str(REPO / "gold")]
    for value in [look["cwd"], *look["files"], *look["env"].values()]:
        assert not any(c in value for c in corpus), value
    assert not any(f.endswith((".jsonl", "gold.json")) for f in look["files"])
    # Only the launcher's own variables and what adapter.yaml names: no DRIFT_FIXTURES, DRIFT_GOLD, keys...
    launcher = {"DRIFT_RUNNER_PID", "DRIFT_BACKEND_PORT_FILE", "DRIFT_BACKEND_ADDRESS"}
    assert {k for k in look["env"] if k.startswith("DRIFT_")} <= launcher, sorted(look["env"])
    assert not {k for k in look["env"] if secret_values({k: "x" * 20})} - {"ANTHROPIC_API_KEY"}


def test_an_adapter_yaml_cannot_ask_for_the_harness_s_own_variables(tmp_path, monkeypatch):
    """``env: [DRIFT_HOLDOUT_SEED]`` in adapter.yaml handed the sealed holdout's seed to the adapter,
    which regenerates its gold with the public generator; the audit salt file, the corpus and records
    folders likewise. adapter.yaml is refused, naming the variable; the launcher drops such a name too."""
    import pytest

    from conformance.backend.manifest import AdapterManifest as Manifest, ManifestError, load_manifest
    from conformance.secrets import harness_variable

    for name in ("DRIFT_HOLDOUT_SEED", "DRIFT_AUDIT_SALT_FILE", "DRIFT_GOLD", "DRIFT_FIXTURES", "DRIFT_RECORDS_DIR",
                 "DRIFT_LLM_CACHE", "DRIFT_CACHE_DIR", "DRIFT_DATASETS_DIR", "DRIFT_MERGE_GOLD"):
        assert harness_variable(name), name
        folder = tmp_path / name
        folder.mkdir()
        (folder / "adapter.yaml").write_text(f"name: greedy\ndescription: asks for it\nenv: [OPENAI_API_KEY, {name}]\n")
        with pytest.raises(ManifestError, match=f"{name}.*the harness's own"):
            load_manifest(folder)
    for name in ("DRIFT_MEM0_INFER", "DRIFT_REFERENCE_LLM_MODEL", "ANTHROPIC_API_KEY", "DRIFT_TEST_API_KEY"):
        assert not harness_variable(name), name
    # Defence in depth: a manifest built without validation still hands nothing of the harness's.
    from conformance.backend.process import adapter_environment

    monkeypatch.setenv("DRIFT_HOLDOUT_SEED", "s" * 32)
    monkeypatch.setenv("DRIFT_MEM0_INFER", "1")
    manifest = Manifest.model_construct(**{**Manifest(name="x", description="y").__dict__,
                                           "env": ["DRIFT_HOLDOUT_SEED", "DRIFT_MEM0_INFER"]})
    assert adapter_environment(manifest) == {"DRIFT_MEM0_INFER": "1"}


def test_every_cli_option_variable_is_the_harness_s():
    """The rule keeps up with the CLI: every variable an option reads (click's auto_envvar_prefix:
    DRIFT_<OPTION>, DRIFT_<SUBCOMMAND>_<OPTION>) is reserved."""
    import click

    from conformance.cli.common import COMMANDS
    from conformance.cli.main import main
    from conformance.secrets import harness_variable

    names = [f"DRIFT_{p.name.upper()}" for p in main.params if isinstance(p, click.Option)]
    ctx = click.Context(main)
    for sub in COMMANDS:
        command = main.get_command(ctx, sub)
        prefix = f"DRIFT_{sub.replace('-', '_').upper()}"
        names += [f"{prefix}_{p.name.upper()}" for p in command.params if isinstance(p, click.Option)]
        for nested in getattr(command, "commands", {}).values():
            names += [f"{prefix}_{nested.name.replace('-', '_').upper()}_{p.name.upper()}" for p in nested.params
                      if isinstance(p, click.Option)]
    assert len(names) > 60
    assert [n for n in names if not harness_variable(n)] == []

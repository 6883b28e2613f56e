"""Sealed holdout: generated from a secret, deterministic, valid, and the secret never written anywhere."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.answer.answerable import check_corpus
from conformance.contract.corpus import validate_corpus
from conformance.world.sealed import (
    SealedHoldoutError,
    read_secret,
    seed_fingerprint,
    write_sealed_holdout,
)

REPO = Path(__file__).resolve().parents[2]
SECRET = "canary-holdout-secret-7f3a9c"  # a canary: it must appear in no output


def sealed(root: Path, secret: str) -> tuple[Path, Path, list[str]]:
    fixtures, gold = root / "fixtures", root / "gold"
    fixtures.mkdir(parents=True)
    gold.mkdir()
    return fixtures, gold, write_sealed_holdout(fixtures, gold, secret)


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_sealed_scenarios_are_deterministic_valid_and_new(tmp_path):
    fixtures, gold, ids = sealed(tmp_path / "a", SECRET)
    again_fixtures, again_gold, _ = sealed(tmp_path / "b", SECRET)
    other_fixtures, _, _ = sealed(tmp_path / "c", SECRET + "-other")
    assert ids and all(i.startswith("sealed-") for i in ids)
    holdout_specs = [p.stem for p in (REPO / "scenarios").glob("*.yaml") if "holdout: true" in p.read_text()]
    assert sorted(ids) == sorted(f"sealed-{s}" for s in holdout_specs)
    assert folder_bytes(fixtures) == folder_bytes(again_fixtures) and folder_bytes(gold) == folder_bytes(again_gold)
    assert folder_bytes(fixtures) != folder_bytes(other_fixtures)
    assert sorted(validate_corpus(fixtures, gold)) == sorted(ids)
    assert check_corpus(fixtures, gold) == []
    # Not the committed holdout under a new name: the worlds differ.
    public = json.loads((REPO / "gold" / f"{holdout_specs[0]}.json").read_text())
    mine = json.loads((gold / f"sealed-{holdout_specs[0]}.json").read_text())
    assert [p["answer"] for p in public["probes"]] != [p["answer"] for p in mine["probes"]]
    for name, data in folder_bytes(fixtures).items() | folder_bytes(gold).items():
        assert SECRET.encode() not in data, name


def test_secret_rules():
    with pytest.raises(SealedHoldoutError, match="needs a secret seed in DRIFT_HOLDOUT_SEED"):
        read_secret({})
    with pytest.raises(SealedHoldoutError, match="at least 16"):
        read_secret({"DRIFT_HOLDOUT_SEED": "short"})
    assert read_secret({"DRIFT_HOLDOUT_SEED": SECRET}) == SECRET
    assert len(seed_fingerprint(SECRET)) == 64 and SECRET not in seed_fingerprint(SECRET)
    assert seed_fingerprint(SECRET) != seed_fingerprint(SECRET + "x")


def cli(*args, cwd, env_secret=SECRET):
    import os

    env = {**os.environ, "DRIFT_HOLDOUT_SEED": env_secret}
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=900, env=env)


def test_sealed_run_records_only_the_seed_hash(tmp_path):
    # --allow-dirty: this test runs from a checkout with edits too (tests/runner/test_merge_integrity.py
    # checks the refusal).
    proc = cli("--adapter", "keyword", "--scenario", "ua-short-005", "--sealed-holdout", "--out", "result.json",
               "--records-dir", "runs", "--bootstrap", "200", "--allow-dirty", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "result.json").read_text())
    receipt = doc["receipt"]
    assert receipt["scenarios"] == ["sealed-ua-short-005"]
    assert receipt["config"]["sealed_holdout"] == {"seed_sha256": seed_fingerprint(SECRET),
                                                   "scenarios": receipt["config"]["sealed_holdout"]["scenarios"]}
    assert any(note.startswith("sealed holdout:") for note in receipt["notes"])
    assert not Path(receipt["config"]["fixtures_dir"]).exists()  # the private corpus is gone
    outputs = [proc.stdout, proc.stderr] + [p.read_text() for p in tmp_path.rglob("*") if p.is_file()]
    assert all(SECRET not in text for text in outputs)
    # The explorer's export shows the sealed scenario's verdicts, never gold.
    export = cli("report", "result.json", "--probes", "probes.jsonl", cwd=tmp_path)
    assert export.returncode == 0, export.stderr
    lines = [json.loads(x) for x in (tmp_path / "probes.jsonl").read_text().splitlines()]
    assert lines and all(p["holdout"] and p["gold"] is None and p["verdict"] in ("correct", "wrong") for p in lines)


def test_sealed_holdout_never_feeds_the_gate(tmp_path):
    proc = cli("--adapter", "keyword", "--sealed-holdout", "--update-baseline", "--quiet", cwd=tmp_path)
    assert proc.returncode == 2 and "never uses holdout" in proc.stderr
    proc = cli("--adapter", "keyword", "--sealed-holdout", "--allow-dirty", "--quiet", cwd=tmp_path, env_secret="")
    assert proc.returncode == 2 and "DRIFT_HOLDOUT_SEED" in proc.stderr


def test_the_secret_selects_the_surface_too():
    """The sealed holdout shares no public surface: another faker locale or phrasing subset, chosen by the secret."""
    from conformance.world import content as C
    from conformance.world.sealed import generator_seed, sealed_synthesizer

    surfaces = {C.surface_for(generator_seed(SECRET + str(i))) for i in range(12)}
    assert all(s.variant != 0 for s in surfaces) and len({s.locale for s in surfaces}) >= 3
    surface = sealed_synthesizer(SECRET).surface
    assert surface == C.surface_for(generator_seed(SECRET)) and surface != C.PUBLIC
    kept = surface.pick(C.VALUE_DECOYS, "dec")
    assert 2 <= len(kept) < len(C.VALUE_DECOYS) and set(kept) < set(C.VALUE_DECOYS)
    assert C.PUBLIC.pick(C.VALUE_DECOYS, "dec") == C.VALUE_DECOYS

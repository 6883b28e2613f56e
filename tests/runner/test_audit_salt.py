"""The audit salt (``--audit-salt-file``): the state audit's seeded choices mixed with a secret.

Without a salt every choice (the message sampled per session, the words asked, the older
sessions re-probed, the probes' places among the real ones) is seeded by public ids alone, so an
adapter replays them at Store time (``bench/attacks/seed_replay``); these tests pin that seeding
as it was, and show a salt the adapter cannot know moves the choices out of its reach
(``ReplaysAuditSeed`` guesses the sampled message of every session without one, of few with one).

End to end (keyword on cod-short-001, the pair with cod-short-001 and ua-short-001 as two
shards): the same salt gives the same result, another salt other audit choices; the receipt
and the run header hold the commitment and no file of the run nor its log the salt;
``audit-salt verify`` accepts the committed file only; merge refuses shards of two salts; a
resume with another salt, or with none, is refused; an empty or short salt file is refused by name.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from conformance.contract.corpus import iter_fixture
from conformance.contract.fixture import HeaderLine, SessionLine
from conformance.runner.audit import MessageLedger, _rng

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(Path(__file__).parent))
import dishonest  # noqa: E402
import timing_fields  # noqa: E402
from ledger_replay import replay_ledger  # noqa: E402

SCENARIOS = ("cod-short-001", "ua-short-001")


def audit_choices(scenario: str, **ledger_args) -> tuple[dict, list]:
    """(session id -> (asked words, rest stems), every checkpoint's schedule) of a committed fixture."""
    ledger, checkpoints = replay_ledger(scenario, **ledger_args)
    schedules = [[(s, p.query, p.asked_by, p.asked_at) for s, p in schedule] for _, schedule in checkpoints]
    sentences = {s: (list(v.ask), sorted(v.rest)) for s, v in ledger.sentences.items()}
    return sentences, schedules


def digest(choices) -> str:
    return hashlib.sha256(json.dumps(choices).encode()).hexdigest()


# Computed from the code before the salt existed: public-id seeding must stay as it was, so
# baselines/main.json, tests/data/ci_reference_keyword.json and every committed figure hold.
PINNED_RNG = [(("cod-short-001", "cod-short-001-s001"), 0.40920987784127594, 887261797),
              (("ua-short-001", "c1", "ua-short-001-s002"), 0.695554174445149, 307519438),
              (("x", "c2", "order"), 0.5372025317847021, 629800811),
              (("s", "c3"), 0.8998890842029209, 383390700)]
PINNED_CHOICES = {"cod-short-001": "6272ebe01d6a346647a63e9480d3d6b24333cc9aec6a2c731c9adde58ff577af",
                  "ua-short-001": "052afc72d6939932bfff3c9a4dddb09326283984f2c9c04be06ad925fd2d5686"}


@pytest.mark.parametrize("parts, first, second", PINNED_RNG)
def test_without_a_salt_the_seeds_are_the_public_ids_as_before(parts, first, second):
    rng = _rng(*parts)
    assert (rng.random(), rng.randrange(10 ** 9)) == (first, second)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_without_a_salt_the_audit_choices_are_as_before(scenario):
    assert digest(audit_choices(scenario)) == PINNED_CHOICES[scenario]


# --- what the salt changes -------------------------------------------------------------------------------------------

SALT_A, SALT_B = b"a" * 31 + b"\n", b"b" * 31 + b"\n"


def test_a_salt_keys_every_seed():
    for parts, first, _ in PINNED_RNG:
        salted = _rng(*parts, salt=SALT_A).random()
        assert salted != first and salted != _rng(*parts, salt=SALT_B).random()
        assert salted == _rng(*parts, salt=SALT_A).random()


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_two_salts_sample_and_schedule_differently_one_salt_the_same(scenario):
    plain, a, b = audit_choices(scenario), audit_choices(scenario, salt=SALT_A), audit_choices(scenario, salt=SALT_B)
    assert audit_choices(scenario, salt=SALT_A) == a
    for (sentences, schedules), (theirs, their_schedules) in ((plain, a), (a, b), (plain, b)):
        assert set(sentences) == set(theirs)  # the same sessions have a message to sample
        differ = [s for s in sentences if sentences[s] != theirs[s]]
        assert len(differ) > len(sentences) / 2, (len(differ), len(sentences))
        assert schedules != their_schedules  # the audit's queries and their places among the real probes


def sampled_message(ledger: MessageLedger, session, marker: str | None) -> set[str]:
    """Message ids of ``session`` whose content words (its marker left out) are the ledger's
    sampled message's: the audit's choice, as the replaying adapter names it."""
    from conformance.provenance import content_words

    sentence = ledger.sentences.get(session.session_id)
    if sentence is None:
        return set()
    words = {w for term in sentence.ask for w in content_words(term)} | sentence.rest
    return {m.message_id for m in session.messages
            if content_words(m.text.replace(marker, " ") if marker else m.text) == words}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_an_adapter_replaying_the_public_seed_finds_the_audits_message_only_without_a_salt(scenario):
    """tests/runner/dishonest.py ``ReplaysAuditSeed`` (bench/attacks/seed_replay) runs the runner's
    ledger from public ids at Store time; against a salted run it mostly picks the wrong message."""
    namespace = f"t/{scenario}"
    replay = dishonest.ReplaysAuditSeed("replays", set())
    replay.reset(namespace)
    runners = {"none": MessageLedger(scenario_id=scenario), "salted": MessageLedger(scenario_id=scenario, salt=SALT_A)}
    hits = {name: 0 for name in runners}
    sessions, markers = 0, {}
    for line in iter_fixture(REPO / "fixtures" / f"{scenario}.jsonl"):
        if isinstance(line, HeaderLine):
            markers = dict(line.markers or {})
        if not isinstance(line, SessionLine):
            continue
        replay.store(namespace, line)
        guessed = {m.message_id for m in line.messages} & replay.sampled[namespace]
        for name, ledger in runners.items():
            ledger.add_session(line, markers.get(line.session_id))
            truth = sampled_message(ledger, line, markers.get(line.session_id))
            hits[name] += bool(truth) and guessed == truth
        sessions += line.session_id in runners["none"].sentences
    assert sessions > 10
    assert hits["none"] == sessions  # exact on every session, as bench/attacks/README.md says
    assert hits["salted"] < sessions / 2, hits


# --- a run with a salt: the CLI, the receipt, verify, merge, resume --------------------------------------------------

FAST = ("--adapter", "keyword", "--bootstrap", "100", "--records-dir", "runs")
PAIR = ("--scenario", "cod-short-001", "--scenario", "ua-short-001")


def cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """cod-short-001 unsalted, twice with salt A, once with salt B (readable by others); the pair as
    shards with A, A and B."""
    tmp = tmp_path_factory.mktemp("salt")
    (tmp / "a.salt").write_bytes(SALT_A)
    (tmp / "b.salt").write_bytes(SALT_B)
    (tmp / "a.salt").chmod(0o600)
    (tmp / "b.salt").chmod(0o644)  # the run warns, and goes on
    logs = {}
    for name, extra in (("none", ()), ("a1", ("--audit-salt-file", "a.salt")), ("a2", ("--audit-salt-file", "a.salt")),
                        ("b", ("--audit-salt-file", "b.salt")),
                        ("s1a", (*PAIR, "--shard", "1/2", "--audit-salt-file", "a.salt")),
                        ("s2a", (*PAIR, "--shard", "2/2", "--audit-salt-file", "a.salt")),
                        ("s2b", (*PAIR, "--shard", "2/2", "--audit-salt-file", "b.salt"))):
        scenario = () if "--shard" in extra else ("--scenario", "cod-short-001")
        proc = cli(*FAST, *scenario, *extra, "--out", f"{name}.json", cwd=tmp)
        assert proc.returncode == 0, proc.stderr
        logs[name] = proc.stdout + proc.stderr
    return tmp, logs


def load(folder: Path, name: str) -> dict:
    return json.loads((folder / name).read_text())


def state_audits(doc: dict) -> list:
    """(system, checkpoint, sessions probed) of every audited state record of the run."""
    records = Path(doc["receipt"]["config"]["records"]).read_text().splitlines()
    return [(r["system"], r["checkpoint_id"], r["audit"]["probed"]) for r in map(json.loads, records)
            if r.get("kind") == "state" and r.get("audit")]


def test_the_same_salt_gives_the_same_result_another_salt_other_audit_choices(runs):
    tmp, _ = runs
    a1, a2, b, none = (load(tmp, f"{n}.json") for n in ("a1", "a2", "b", "none"))
    assert timing_fields.comparable(a1) == timing_fields.comparable(a2)
    assert state_audits(a1) == state_audits(a2)
    # Which earlier sessions each checkpoint re-probes is seeded: the salt moves it.
    assert state_audits(a1) != state_audits(b) and state_audits(a1) != state_audits(none)
    assert [s for s, _, _ in state_audits(a1)] == [s for s, _, _ in state_audits(none)]  # same systems audited


def test_the_receipt_commits_to_the_salt_and_holds_it_nowhere(runs):
    tmp, logs = runs
    a1, none = load(tmp, "a1.json"), load(tmp, "none.json")
    assert a1["receipt"]["audit_salt"]["commitment"] == hashlib.sha256(SALT_A).hexdigest()
    assert none["receipt"]["audit_salt"] is None
    jsonschema.validate(a1, json.loads((REPO / "schema" / "result.schema.json").read_text()))
    # The commitment is no departure from the contract; neither is an unsalted CI run: no note.
    assert not any("salt" in n for doc in (a1, none) for n in doc["receipt"]["notes"])
    secret = SALT_A.strip().decode()
    shown = [p for p in tmp.rglob("*") if p.is_file() and p.name != "a.salt"
             and secret in p.read_text(encoding="utf-8", errors="replace")]
    assert not shown and secret not in "".join(logs.values())
    header = json.loads(Path(a1["receipt"]["config"]["records"]).read_text().splitlines()[0])
    assert header["binding"]["audit_salt"] == a1["receipt"]["audit_salt"]["commitment"]
    assert "audit_salt" not in json.loads(Path(none["receipt"]["config"]["records"]).read_text().splitlines()[0])[
        "binding"]


def test_a_published_run_without_a_salt_says_its_audit_can_be_replayed():
    from conformance.contract.corpus import Selection
    from conformance.runner.job import _salt_notes
    from conformance.runner.request import RunRequest
    from conformance.runner.salt import AuditSalt

    def notes(**options):
        return _salt_notes(RunRequest(adapters=[], fixtures_dir=REPO / "fixtures", gold_dir=REPO / "gold",
                                      records_dir=Path("runs"), **options))

    published = Selection(include_holdout=True)
    assert notes() == [] and notes(selection=published, audit_salt=AuditSalt.of(SALT_A)) == []
    assert notes(selection=published)[0].startswith("no audit salt: the state audit's choices are seeded by public ids")


def test_a_salt_file_others_can_read_is_warned_about(runs):
    _, logs = runs
    assert "warning: audit salt file b.salt is readable by other users (mode 644)" in logs["b"]
    assert "readable by other users" not in logs["a1"]


def test_the_report_shows_the_commitment_or_that_the_audit_can_be_replayed(runs):
    from conformance.contract.result import ResultDocument
    from conformance.report.markdown import render_markdown

    tmp, _ = runs
    salted = render_markdown(ResultDocument.model_validate(load(tmp, "a1.json")))
    assert f"**audit salt:** commitment SHA-256 {hashlib.sha256(SALT_A).hexdigest()}" in salted
    plain = render_markdown(ResultDocument.model_validate(load(tmp, "none.json")))
    assert "**audit salt:** none (public-id seeding: an adapter can replay the audit's choices)" in plain


def test_verify_accepts_the_committed_salt_and_refuses_any_other(runs):
    tmp, _ = runs
    ok = cli("audit-salt", "verify", "a1.json", "a.salt", cwd=tmp)
    assert ok.returncode == 0 and "is the audit salt" in ok.stdout, ok.stderr
    wrong = cli("audit-salt", "verify", "a1.json", "b.salt", cwd=tmp)
    assert wrong.returncode == 1 and "b.salt is not the salt of a1.json" in wrong.stderr
    unsalted = cli("audit-salt", "verify", "none.json", "a.salt", cwd=tmp)
    assert unsalted.returncode == 1 and "used no audit salt" in unsalted.stderr


def test_merge_refuses_shards_of_different_salts_and_keeps_the_commitment(runs):
    tmp, _ = runs
    mixed = cli("merge", "s1a.json", "s2b.json", "--out", "mixed.json", "--records-dir", "runs", "-q", cwd=tmp)
    assert mixed.returncode == 2 and "the shards differ in audit_salt" in mixed.stderr, mixed.stderr
    assert not (tmp / "mixed.json").exists()
    merged = cli("merge", "s1a.json", "s2a.json", "--out", "merged.json", "--records-dir", "runs", "-q", cwd=tmp)
    assert merged.returncode == 0, merged.stderr
    assert load(tmp, "merged.json")["receipt"]["audit_salt"] == load(tmp, "s1a.json")["receipt"]["audit_salt"]


@pytest.mark.parametrize("salt, recorded, now", [("b.salt", "commitment of a", "commitment of b"),
                                                 (None, "commitment of a", "'none'")])
def test_a_resume_with_another_salt_or_none_is_refused(runs, salt, recorded, now):
    tmp, _ = runs
    names = {"commitment of a": repr(hashlib.sha256(SALT_A).hexdigest()),
             "commitment of b": repr(hashlib.sha256(SALT_B).hexdigest())}
    run_id = load(tmp, "a1.json")["receipt"]["config"]["run_id"]
    proc = cli(*FAST, "--scenario", "cod-short-001", "--resume", run_id, *(("--audit-salt-file", salt) if salt else ()),
               "--quiet", cwd=tmp)
    assert proc.returncode == 2
    assert f"audit_salt: recorded {names[recorded]}, now {names.get(now, now)}" in proc.stderr, proc.stderr


def test_a_resume_of_an_unsalted_run_with_a_salt_is_refused_and_the_same_salt_resumes(runs):
    tmp, _ = runs
    unsalted = load(tmp, "none.json")["receipt"]["config"]["run_id"]
    proc = cli(*FAST, "--scenario", "cod-short-001", "--resume", unsalted, "--audit-salt-file", "a.salt", "--quiet",
               cwd=tmp)
    assert proc.returncode == 2 and "audit_salt: recorded 'none', now" in proc.stderr, proc.stderr
    same = cli(*FAST, "--scenario", "cod-short-001", "--resume", load(tmp, "a2.json")["receipt"]["config"]["run_id"],
               "--audit-salt-file", "a.salt", "--quiet", "--out", "resumed.json", cwd=tmp)
    assert same.returncode == 0, same.stderr
    assert load(tmp, "resumed.json")["receipt"]["audit_salt"] == load(tmp, "a2.json")["receipt"]["audit_salt"]


@pytest.mark.parametrize("content, shown", [(b"", "is empty"), (b"short salt\n", "holds 10 bytes"),
                                            (b"   \n\n", "is empty")])
def test_an_empty_or_short_salt_file_is_refused_naming_it(tmp_path, content, shown):
    (tmp_path / "weak.salt").write_bytes(content)
    proc = cli("--scenario", "cod-short-001", "--audit-salt-file", "weak.salt", "--quiet", cwd=tmp_path)
    assert proc.returncode == 2 and f"audit salt file weak.salt {shown}" in proc.stderr, proc.stderr
    assert not (tmp_path / "drift-runs").exists()  # refused before anything ran


def test_the_environment_names_the_salt_file_too(tmp_path):
    (tmp_path / "weak.salt").write_bytes(b"x")
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "--scenario", "cod-short-001", "--quiet"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "DRIFT_AUDIT_SALT_FILE": "weak.salt"})
    assert proc.returncode == 2 and "audit salt file weak.salt holds 1 bytes" in proc.stderr, proc.stderr


def test_audit_salt_new_writes_a_private_random_salt_and_never_overwrites(tmp_path):
    made = cli("audit-salt", "new", "s.hex", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    text = (tmp_path / "s.hex").read_text()
    assert len(text.strip()) == 64 and int(text, 16) and (tmp_path / "s.hex").stat().st_mode & 0o777 == 0o600
    assert hashlib.sha256(text.encode()).hexdigest() in made.stderr  # the commitment a run will record
    again = cli("audit-salt", "new", "s.hex", cwd=tmp_path)
    assert again.returncode == 2 and "exists" in again.stderr and (tmp_path / "s.hex").read_text() == text
    cli("audit-salt", "new", "t.hex", cwd=tmp_path)
    assert (tmp_path / "t.hex").read_text() != text

"""The main command end to end: real adapter processes over gRPC, the committed corpus,
result.json against the published schema, and the control ordering."""

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from conformance.cli.generate import comparable_bytes

REPO = Path(__file__).resolve().parents[1]
DATASETS = Path(os.environ.get("DRIFT_DATASETS_DIR") or REPO.parent / "shared" / "datasets")

pytestmark = pytest.mark.slow


def cli(*args, cwd, timeout=900):
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def schema(name):
    return json.loads((REPO / "schema" / name).read_text())


@pytest.fixture(scope="module")
def keyword_result(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("run")
    proc = cli("--adapter", "keyword", "--split", "ci", "--out", str(tmp / "result.json"), "--records-dir",
               str(tmp / "runs"), "--quiet", cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    return json.loads((tmp / "result.json").read_text()), proc


def value(doc, system, metric):
    return doc["systems"][system]["metrics"][metric]["value"]


def test_result_validates_against_the_published_schema(keyword_result):
    doc, _ = keyword_result
    jsonschema.validate(doc, schema("result.schema.json"))
    receipt = doc["receipt"]
    assert len(receipt["fixtures_hash"]) == 64 and receipt["config"]["splits"] == ["ci"]
    # the ci split holds short scenarios of every paradigm
    assert {sid.split("-")[0] for sid in receipt["scenarios"]} == {"ua", "cod", "crw", "mp"}
    assert receipt["config"]["k"] == 10 and receipt["config"]["budget_tokens"] == 1200
    for metric in ("accuracy", "recall_at_k", "revision_accuracy", "read_latency_ms_p99", "write_latency_ms_p99"):
        entry = doc["systems"]["keyword"]["metrics"][metric]
        assert entry["value"] is not None and entry["ci95"][0] <= entry["value"] <= entry["ci95"][1]


def test_the_ci_split_scores_exactly_as_the_committed_reference(keyword_result):
    """Every metric not derived from measured time, every paired difference, cell and note, as
    committed in tests/data (rebuilt only for a change meant to move scores: tests/ci_reference.py)."""
    sys.path.insert(0, str(REPO / "tests"))
    from ci_reference import REFERENCE, render

    doc, _ = keyword_result
    got, want = render(doc), REFERENCE.read_text(encoding="utf-8")
    if got != want:
        import difflib

        diff = "".join(list(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "reference", "run"))[:80])
        pytest.fail(f"the ci split scores differently from {REFERENCE.name}:\n{diff}")


def test_the_committed_baseline_gates_this_run_without_a_stale_justification(keyword_result, tmp_path):
    """baselines/main.json (what the repository's own PR gate reads) passes the current code's ci
    run, and each justification it carries still names a breach that run has: a justification of
    a breach the code no longer produces makes every run warn "stale?"."""
    (tmp_path / "result.json").write_text(json.dumps(keyword_result[0]))
    proc = cli("compare", str(REPO / "baselines" / "main.json"), str(tmp_path / "result.json"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "stale" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def test_controls_bracket_the_system(keyword_result):
    doc, _ = keyword_result
    for metric in ("recall_at_k", "revision_accuracy", "accuracy"):
        assert value(doc, "oracle", metric) >= value(doc, "keyword", metric) >= value(doc, "none", metric), metric
    assert value(doc, "none", "accuracy.negative_recall") == 1.0
    assert value(doc, "oracle", "accuracy") == 1.0


def test_each_adapter_ran_in_its_own_process(keyword_result):
    doc, _ = keyword_result
    iso = doc["receipt"]["isolation"]
    assert iso["keyword"]["mode"] == iso["none"]["mode"] == "process"
    assert iso["keyword"]["pid"] != iso["none"]["pid"] != os.getpid()
    assert iso["oracle"]["mode"] == "harness"
    assert iso["keyword"]["verified"] == "live"  # from adapter.yaml, into the receipt
    assert iso["keyword"]["limits"]["enforced_by"] in ("cgroup v2", "cgroup v1", "none")


def test_table_is_printed_with_intervals(keyword_result):
    _, proc = keyword_result
    assert "oracle (control)" in proc.stdout and "keyword" in proc.stdout and "[" in proc.stdout


def test_json_flag_prints_the_document(tmp_path):
    proc = cli("--adapter", "keyword", "--scenario", "ua-short-001", "--json", "--quiet",
               "--records-dir", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["receipt"]["scenarios"] == ["ua-short-001"]


def test_filter_matching_nothing_exits_2(tmp_path):
    proc = cli("--scenario", "no-such-*", "--quiet", "--records-dir", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 2 and "match no fixture" in proc.stderr


def test_unknown_adapter_exits_2_with_the_list(tmp_path):
    proc = cli("--adapter", "nope", "--quiet", "--records-dir", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 2 and "built-in adapters" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bad_fixture_exits_2_naming_file_and_line(tmp_path):
    fixtures, gold = tmp_path / "f", tmp_path / "g"
    fixtures.mkdir()
    gold.mkdir()
    src = (REPO / "fixtures" / "ua-short-001.jsonl").read_text().splitlines()
    src[2] = src[2].replace('"kind":"session"', '"kind":"session","tier":"noise"')
    (fixtures / "ua-short-001.jsonl").write_text("\n".join(src) + "\n")
    (gold / "ua-short-001.json").write_text((REPO / "gold" / "ua-short-001.json").read_text())
    proc = cli("--fixtures", str(fixtures), "--gold", str(gold), "--quiet", "--records-dir", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 2
    assert "ua-short-001.jsonl:3" in proc.stderr and "tier" in proc.stderr


def test_generate_rewrites_the_committed_corpus_byte_for_byte(tmp_path):
    proc = cli("generate", "--fixtures", str(tmp_path / "f"), "--gold", str(tmp_path / "g"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for kind in ("fixtures", "gold"):
        # _difficulty.json and _shortcuts.json are written by the audits, not by the generator
        committed = sorted(p.name for p in (REPO / kind).iterdir() if p.name not in ("_difficulty.json", "_shortcuts.json"))
        produced = sorted(p.name for p in (tmp_path / kind[0]).iterdir())
        assert produced == committed
        for name in committed:
            # The ledger also records the audits (audit-difficulty, audit-shortcuts): compared without them.
            assert comparable_bytes(tmp_path / kind[0] / name) == comparable_bytes(REPO / kind / name), name


def test_committed_schemas_are_generated_from_the_models(tmp_path):
    proc = cli("schema", "--check", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr + proc.stdout


def test_locomo_imports_and_runs_through_keyword(tmp_path):
    source = DATASETS / "locomo" / "locomo10.json"
    if not source.exists():
        pytest.skip(f"LoCoMo not available at {source} (set DRIFT_DATASETS_DIR)")
    proc = cli("import", "locomo", str(source), "--out", str(tmp_path / "locomo"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "dangling_evidence" in proc.stdout and "malformed_evidence" in proc.stdout
    proc = cli("--adapter", "keyword", "--fixtures", str(tmp_path / "locomo" / "fixtures"), "--gold",
               str(tmp_path / "locomo" / "gold"), "--scenario", "locomo-conv-26", "--out", str(tmp_path / "r.json"),
               "--quiet", "--records-dir", str(tmp_path / "runs"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert any(line.startswith("n/a accuracy") and "need an answer model" in line for line in proc.stdout.splitlines())
    doc = json.loads((tmp_path / "r.json").read_text())
    assert value(doc, "keyword", "accuracy") is None
    assert value(doc, "oracle", "recall_at_k") >= value(doc, "keyword", "recall_at_k") > value(doc, "none", "recall_at_k")


def _records(runs_dir: Path) -> list[dict]:
    (path,) = runs_dir.glob("*/records.jsonl")
    out = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record["kind"] == "run":
            record.pop("run_id")  # names the run, not what it measured
        for timing in ("read_latency_ms", "write_latency_ms", "reader_latency_ms", "last_write_latency_ms"):
            record.pop(timing, None)
        out.append(record)
    return out


def test_keyword_reruns_retrieve_identically(tmp_path):
    # guide §9.2: a deterministic backend must retrieve the same ids, scores and answers twice.
    for run in ("a", "b"):
        proc = cli("--adapter", "keyword", "--scenario", "ua-short-002", "--quiet", "--records-dir",
                   str(tmp_path / run), cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    first, second = _records(tmp_path / "a"), _records(tmp_path / "b")
    assert first == second and any(r["kind"] == "probe" and r["hits"] for r in first)


def test_drift_suite_in_the_result(keyword_result):
    # DRIFT §7 over the ci split: every headline composite present with an interval, and
    # the controls where the definitions put them.
    doc, proc = keyword_result
    systems = doc["systems"]
    assert systems["reference-compressor"]["kind"] == "reference"
    for system in ("keyword", "reference-compressor", "oracle"):
        for metric in ("drift_c", "drift_e", "mvot", "selectivity", "tes", "lps", "action_alignment"):
            entry = systems[system]["metrics"][metric]
            assert entry["value"] is not None, (system, metric, entry.get("reason"))
            assert entry["ci95"][0] <= entry["value"] <= entry["ci95"][1], (system, metric)
    assert value(doc, "none", "mvot") == 0.0 and value(doc, "none", "action_alignment") == 0.5
    assert value(doc, "none", "tes") is None and systems["none"]["metrics"]["tes"]["reason"]
    # keyword stores every session: TNR 0, TPR 1.
    assert value(doc, "keyword", "selectivity") == 0.5
    assert value(doc, "reference-compressor", "tes") == pytest.approx(1.0)
    assert value(doc, "oracle", "mvot") == 1.0
    assert systems["keyword"]["measurement"]["selectivity"] == "snapshot provenance"
    assert "no answer model" in systems["keyword"]["measurement"]["ttfrt_ms_p99"]
    assert systems["keyword"]["series"]["token_cost_curve"]
    assert len(systems["keyword"]["series"]["latency_quantiles_ms"]["read"]) == 101
    assert "DRIFT-C" in proc.stdout and "DRIFT-E" in proc.stdout


def test_repeat_gives_a_zero_noise_floor_for_a_deterministic_adapter_and_baseline_pairs(tmp_path):
    proc = cli("--adapter", "keyword", "--scenario", "ua-short-00[23]", "--repeat", "2", "--baseline-system",
               "reference-compressor", "--out", str(tmp_path / "r.json"), "--records-dir", str(tmp_path / "runs"),
               "--quiet", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    keyword = doc["systems"]["keyword"]
    floor = keyword["noise_floor"]["accuracy"]
    assert floor["value"] == 0.0 and floor["ci95"] == [0.0, 0.0]
    # DRIFT metrics get a floor too; latencies move between passes, answers do not.
    assert keyword["noise_floor"]["mvot"]["value"] == 0.0
    assert "lps" in keyword["noise_floor"] and "drift_c" in keyword["paired_vs_none"]
    assert "drift_e" not in keyword["paired_vs_none"]  # none has no DRIFT-E (spends no tokens)
    assert keyword["baseline_system"] == "reference-compressor"
    assert keyword["paired_vs_baseline"]["accuracy"]["n"] > 0
    assert doc["receipt"]["config"]["repeats"] == 2
    # The report renders from this result, both forms.
    report = cli("report", str(tmp_path / "r.json"), "--html", str(tmp_path / "r.html"), "--markdown",
                 str(tmp_path / "r.md"), cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert "<svg" in (tmp_path / "r.html").read_text() and "Noise floor" in (tmp_path / "r.md").read_text()


def test_unknown_baseline_system_is_a_clear_error(tmp_path):
    proc = cli("--adapter", "keyword", "--scenario", "ua-short-002", "--baseline-system", "nosuch", "--quiet",
               "--records-dir", str(tmp_path / "runs"), cwd=tmp_path)
    assert proc.returncode == 2
    assert "--baseline-system nosuch: not a system of this run" in proc.stderr

"""The opt-in answer model and judge, end to end against the local fake Messages API (loopback).

A LoCoMo-format file is imported, run through keyword (plus the controls) with
``--answer-model`` and ``--judge-model``: per-category accuracy with intervals, a judgments
file blinded to systems, spend, a cached rerun that makes no call and gives the same result,
a spent budget that stops cleanly and resumes, the noise floor of ``--repeat 2``, and a canary
key that never shows. The fake "model" answers by looking for the gold answer in the
excerpts it is shown, so an answer depends on what the memory returned.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "adapters"))
from fake_anthropic import FakeAnthropic  # noqa: E402

from conformance.importers.locomo import import_locomo  # noqa: E402
from conformance.llm.answer import ANSWER_SYSTEM_PROMPT, parse_answer, prompt_sha256, render_question  # noqa: E402
from drift_sdk.llm.errors import LLMConfigError  # noqa: E402
from conformance.llm.judge import JUDGE_SYSTEM_PROMPT, declines, parse_verdict  # noqa: E402
from conformance.llm.settings import llm_settings  # noqa: E402
from conformance.runner.job import run_job  # noqa: E402

pytest.importorskip("anthropic")

CANARY = "sk-ant-canary-answer-5d1e9b7c3a"
ANSWER_MODEL = "claude-haiku-4-5-20251001"
JUDGE_MODEL = "claude-sonnet-4-5-20250929"
REPO = Path(__file__).resolve().parents[2]

# Gold answers the fake model knows, by question. Found in an excerpt -> answered (paraphrased
# for some, so the judge has work); not found -> "unknown".
FACTS = {
    "Where did Ann move?": ("Lisbon", "She moved to Lisbon"),
    "What pet did Ann adopt?": ("cat", "a cat"),
    "What does Bob play?": ("chess", "chess"),
    "When does Bob run?": ("Sundays", "on Sundays"),
    "Where did Cy travel?": ("Rome", "Rome, Italy"),
    "What does Di cook?": ("risotto", "she cooks risotto"),
    "What is Eve's job?": ("nurse", "she is a nurse"),
    "What car does Fay drive?": ("Volvo", "a Volvo"),
}


def _conversation(sample: str, a: str, b: str, lines: list[tuple[str, str]], qa: list[dict]) -> dict:
    conversation = {"speaker_a": a, "speaker_b": b}
    for n, (speaker, text) in enumerate(lines, start=1):
        conversation[f"session_{n}_date_time"] = f"10:00 am on {n} May, 2023"
        conversation[f"session_{n}"] = [{"speaker": speaker, "dia_id": f"D{n}:1", "text": text},
                                        {"speaker": b if speaker == a else a, "dia_id": f"D{n}:2",
                                         "text": "Nice, tell me more about the weekend plans."}]
    return {"sample_id": sample, "conversation": conversation, "qa": qa}


LOCOMO = [
    _conversation("c1", "Ann", "Bob", [("Ann", "I moved to Lisbon last week."), ("Ann", "I adopted a cat."),
                                       ("Bob", "I play chess every evening.")],
                  [{"question": "Where did Ann move?", "answer": "Lisbon", "evidence": ["D1:1"], "category": 4},
                   {"question": "What pet did Ann adopt?", "answer": "a cat", "evidence": ["D2:1"], "category": 4},
                   {"question": "What does Bob play?", "answer": "chess", "evidence": ["D3:1"], "category": 1},
                   {"question": "What is Ann's dog called?", "adversarial_answer": "Rex", "evidence": [],
                    "category": 5}]),
    _conversation("c2", "Cy", "Di", [("Cy", "Back from Rome at last."), ("Di", "I cooked risotto tonight."),
                                     ("Di", "The garden is growing well.")],
                  [{"question": "Where did Cy travel?", "answer": "Rome", "evidence": ["D1:1"], "category": 4},
                   {"question": "What does Di cook?", "answer": "risotto", "evidence": ["D2:1"], "category": 1},
                   {"question": "When does Bob run?", "answer": "Sundays", "evidence": ["D3:1"], "category": 2},
                   {"question": "What is Cy's boat called?", "adversarial_answer": "Sea", "evidence": [],
                    "category": 5}]),
    _conversation("c3", "Eve", "Fay", [("Eve", "Night shifts again, I work as a nurse."),
                                       ("Fay", "I finally bought a Volvo.")],
                  [{"question": "What is Eve's job?", "answer": "nurse", "evidence": ["D1:1"], "category": 4},
                   {"question": "What car does Fay drive?", "answer": "Volvo", "evidence": ["D2:1"], "category": 1},
                   {"question": "What is Fay's cat called?", "adversarial_answer": "Tom", "evidence": [],
                    "category": 5}]),
]


def responder(request: dict) -> str:
    """The fake model: an answerer that reads its excerpts, and a lenient word-match judge."""
    system = request.get("system") or ""
    if isinstance(system, list):
        system = "".join(block.get("text", "") for block in system)
    text = request["messages"][0]["content"]
    if system == JUDGE_SYSTEM_PROMPT:
        question = re.search(r"Question: (.*)", text)[1]
        reference = re.search(r"Reference answer: (.*)", text)[1]
        candidate = re.search(r"Candidate answer: (.*)", text)[1]
        if question == "What does Di cook?":
            return "Hmm, hard to say"  # an unparseable verdict: counted as wrong
        words = [w for w in re.findall(r"\w+", reference.lower()) if w not in ("a", "the")]
        return "CORRECT" if all(w in candidate.lower() for w in words) else "INCORRECT"
    assert system == ANSWER_SYSTEM_PROMPT
    question = re.search(r"Question: (.*)", text)[1]
    excerpts = text.split("Memory excerpts")[1].split("Question:")[0].lower()
    if question in FACTS and FACTS[question][0].lower() in excerpts:
        return FACTS[question][1]
    return "unknown"


@pytest.fixture
def fake():
    with FakeAnthropic(responder, api_key=CANARY) as server:
        yield server


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("locomo")
    source = root / "locomo.json"
    source.write_text(json.dumps(LOCOMO), encoding="utf-8")
    import_locomo(source, root / "corpus")
    return root / "corpus"


def _settings(fake, cache: Path, **kwargs):
    kwargs.setdefault("judge_model", JUDGE_MODEL)
    return llm_settings(ANSWER_MODEL, kwargs.pop("judge_model"), cache_dir=cache,
                        environ={"ANTHROPIC_API_KEY": CANARY, "ANTHROPIC_BASE_URL": fake.url}, max_retries=0,
                        **kwargs)


def _run(corpus: Path, records: Path, llm, **kwargs):
    return run_job(["keyword"], corpus / "fixtures", corpus / "gold", records_dir=records, n_boot=300, llm=llm,
                   **kwargs)


def _scores(doc) -> dict:
    """Everything a rerun must reproduce: accuracy metrics with intervals and grading counts."""
    return {label: ({k: v.model_dump() for k, v in s.metrics.items() if k.startswith(("accuracy", "abstention"))},
                    s.judging) for label, s in doc.systems.items()}


def test_answer_model_and_judge_over_a_locomo_import_then_a_free_cached_rerun(fake, corpus, tmp_path):
    doc = _run(corpus, tmp_path / "runs", _settings(fake, tmp_path / "cache"))
    assert doc.complete, doc.errors
    keyword, oracle, none = doc.systems["keyword"], doc.systems["oracle"], doc.systems["none"]
    # Per-category accuracy with 95% intervals (three scenarios: the bootstrap has clusters).
    for name in ("accuracy.single_hop", "accuracy.multi_hop", "accuracy", "abstention_accuracy"):
        metric = oracle.metrics[name]
        assert metric.value is not None and metric.ci95 is not None, name
    # The oracle hands over the evidence: every answerable probe is found; "What does Di cook?"
    # gets an unparseable verdict (wrong); "When does Bob run?" names a turn that does not say it.
    assert oracle.metrics["accuracy"].value == pytest.approx(6 / 8)
    assert oracle.judging["judge_unparseable"] == 1 and oracle.judging["exact"] >= 3
    # The amnesiac declines everything: right on the three abstention probes only.
    assert none.metrics["accuracy"].value == 0.0 and none.metrics["abstention_accuracy"].value == 1.0
    # Abstention gold is "unknown": those three match exactly; the other eight declines are wrong.
    assert none.judging["declined"] == 8 and none.judging["exact"] == 3 and none.judging["judge"] == 0
    assert keyword.metrics["accuracy"].value is not None
    # Receipt: pinned model, prompt text and hash, judge; served model in every probe record.
    config = doc.receipt.config
    assert config["answer_model"]["model"] == ANSWER_MODEL
    assert config["answer_model"]["prompt_sha256"] == prompt_sha256(ANSWER_SYSTEM_PROMPT)
    assert config["answer_model"]["prompt"] == ANSWER_SYSTEM_PROMPT and config["answer_model"]["temperature"] == 0
    assert config["judge_model"]["model"] == JUDGE_MODEL
    records = [json.loads(line) for line in Path(config["records"]).read_text().splitlines()]
    probes = [r for r in records if r["kind"] == "probe"]
    assert probes and all(r["answer_call"]["served_model"] == ANSWER_MODEL for r in probes)
    assert all(r["reader_latency_ms"] == r["answer_call"]["ttft_ms"] for r in probes)
    assert keyword.measurement["ttfrt_ms_p99"] == "measured time to first token"
    # Spend: every call is counted and priced.
    spend = doc.spend
    # Two systems handing over the same context get the same prompt: the second is a cache hit.
    assert spend["answer"]["calls"] + spend["answer"]["cached_calls"] == len(probes)
    assert spend["answer"]["calls"] == len([r for r in fake.requests if r["system"] == ANSWER_SYSTEM_PROMPT])
    assert spend["answer"]["cost_usd"] > 0
    assert spend["judge"]["calls"] > 0 and spend["total_usd"] > spend["answer"]["cost_usd"]
    assert spend["answer"]["served_models"] == [ANSWER_MODEL]
    # The judge saw no system name, context or ids, and the systems' items were interleaved.
    judge_requests = [r for r in fake.requests if r.get("system") == JUDGE_SYSTEM_PROMPT]
    assert len(judge_requests) == spend["judge"]["calls"]
    for name in ("answer", "judge"):
        assert spend[name]["input_tokens"] > 0 and spend[name]["output_tokens"] > 0
    for request in judge_requests:
        body = request["messages"][0]["content"]
        assert not re.search(r"keyword|oracle|reference|none|locomo-|Memory excerpts", body), body
    judgments = [json.loads(line) for line in (Path(config["records"]).parent / "judgments.jsonl").read_text()
                 .splitlines()]
    assert len(judgments) == spend["judge"]["calls"]
    assert not any(set(j) & {"system", "scenario_id", "probe_id"} for j in judgments)
    assert any(not j["parsed"] for j in judgments)
    n_requests = len(fake.requests)

    # A rerun from the cache: no call, the same scores, no spend.
    again = _run(corpus, tmp_path / "runs2", _settings(fake, tmp_path / "cache"))
    assert len(fake.requests) == n_requests
    assert _scores(again) == _scores(doc)
    assert again.spend["answer"]["calls"] == 0 and again.spend["answer"]["cached_calls"] == len(probes)
    assert again.spend["judge"]["calls"] == 0 and again.spend["total_usd"] == 0
    # The same reader latencies too (cached calls keep the original timing).
    assert again.systems["oracle"].metrics["ttfrt_ms_p50"].value is not None
    # The canary key shows nowhere.
    for path in [*Path(tmp_path / "runs").rglob("*"), *Path(tmp_path / "cache").rglob("*")]:
        if path.is_file():
            assert CANARY not in path.read_text(encoding="utf-8", errors="replace"), path
    assert CANARY not in doc.model_dump_json()


def test_without_a_judge_free_form_answers_are_graded_by_exact_match_only(fake, corpus, tmp_path):
    doc = _run(corpus, tmp_path / "runs", _settings(fake, tmp_path / "cache", judge_model=None))
    assert doc.complete
    oracle = doc.systems["oracle"]
    # Only "a cat" and "chess" match exactly; paraphrases ("She moved to Lisbon", "a Volvo") count as wrong.
    assert oracle.judging["judge"] == 0 and oracle.metrics["accuracy"].value == pytest.approx(2 / 8)
    assert any("exact match only" in note for note in doc.receipt.notes)
    assert not any(r.get("system") == JUDGE_SYSTEM_PROMPT for r in fake.requests)


def test_a_spent_budget_stops_cleanly_and_resume_finishes_for_free(fake, corpus, tmp_path):
    # About one and a half scenarios of calls (a call costs about $0.0002 at the fake's token counts).
    doc = _run(corpus, tmp_path / "runs", _settings(fake, tmp_path / "cache", budget_usd=0.004))
    assert not doc.complete
    assert any("spend budget" in e and "--resume" in e for e in doc.errors), doc.errors
    assert doc.spend["budget_exhausted"] is True
    run_id = doc.receipt.config["run_id"]
    scored = doc.receipt.scenarios
    assert len(scored) < 3  # only finished scenarios are scored
    # The budget bounds the run, not each invocation: resuming with the same budget stops at once.
    calls_before = len(fake.requests)
    again = _run(corpus, tmp_path / "runs", _settings(fake, tmp_path / "cache", budget_usd=0.004), run_id=run_id,
                 resume=True)
    assert not again.complete and len(fake.requests) == calls_before
    assert any("earlier invocations of this run" in e for e in again.errors), again.errors
    done = _run(corpus, tmp_path / "runs", _settings(fake, tmp_path / "cache"), run_id=run_id, resume=True)
    assert done.complete and len(done.receipt.scenarios) == 3
    assert len(fake.requests) > calls_before
    # What the run cost over its three invocations equals an uninterrupted run's cost (each call
    # paid once: a call of the interrupted scenario is a cache hit afterwards).
    full = _run(corpus, tmp_path / "runs3", _settings(fake, tmp_path / "cache-full"))
    assert _scores(full) == _scores(done)
    assert done.spend["total_usd"] == pytest.approx(full.spend["total_usd"], rel=1e-6)
    assert done.spend["spent_earlier_usd"] == pytest.approx(doc.spend["total_usd"], rel=1e-6)


def test_repeat_two_asks_the_model_afresh_and_gives_a_noise_floor(fake, corpus, tmp_path):
    doc = _run(corpus, tmp_path / "runs", _settings(fake, tmp_path / "cache"), repeats=2)
    assert doc.complete
    records = [json.loads(line) for line in Path(doc.receipt.config["records"]).read_text().splitlines()]
    made = {rep: sum(1 for r in records if r["kind"] == "probe" and r["repeat"] == rep
                     and not r["answer_call"]["cached"]) for rep in (1, 2)}
    # Replicate 2 has its own cache: it asks the model afresh, exactly as often as replicate 1.
    assert made[1] > 0 and made[2] == made[1]
    answers = [r for r in fake.requests if r.get("system") == ANSWER_SYSTEM_PROMPT]
    assert len(answers) == made[1] + made[2]
    assert (tmp_path / "cache" / "r1").is_dir() and (tmp_path / "cache" / "r2").is_dir()
    noise = doc.systems["oracle"].noise_floor["accuracy"]
    assert noise.value == 0.0  # the fake is deterministic: no pipeline noise


def test_configuration_errors_are_clear(fake, tmp_path):
    with pytest.raises(LLMConfigError, match="alias"):
        llm_settings("claude-haiku-4-5", None, cache_dir=tmp_path, environ={"ANTHROPIC_API_KEY": CANARY})
    with pytest.raises(LLMConfigError, match="--answer-model"):
        llm_settings(None, JUDGE_MODEL, cache_dir=tmp_path, environ={"ANTHROPIC_API_KEY": CANARY})
    with pytest.raises(LLMConfigError, match="--answer-model"):
        llm_settings(None, None, budget_usd=1.0, cache_dir=tmp_path)
    assert llm_settings(None, None, cache_dir=tmp_path) is None
    allowed = llm_settings("claude-haiku-4-5", None, allow_alias=True, cache_dir=tmp_path,
                           environ={"ANTHROPIC_API_KEY": CANARY, "ANTHROPIC_BASE_URL": fake.url})
    assert allowed.answer.model == "claude-haiku-4-5"


def test_parse_answer_maps_replies_onto_the_answer_domain():
    from conformance.contract.fixture import Choice, Probe

    free = Probe(probe_id="p", asked_by="u", query="Where?", asked_at="2024-01-01T00:00:00Z")
    assert parse_answer(free, '  "Lisbon."\nBecause she said so.') == "Lisbon"
    assert parse_answer(free, "Answer: Porto") == "Porto"
    assert parse_answer(free, "") == "unknown"
    closed = Probe(probe_id="p", asked_by="u", query="Where?", asked_at="2024-01-01T00:00:00Z",
                   options=["Lisbon", "Porto", "unknown"])
    assert parse_answer(closed, "porto") == "Porto"
    assert parse_answer(closed, "She moved from Lisbon to Porto.") == "Porto"
    assert parse_answer(closed, "No idea at all") == "unknown"
    choice = Probe(probe_id="p", asked_by="u", query="Which?", asked_at="2024-01-01T00:00:00Z",
                   choices=[Choice(choice_id="a1", text="Use tabs", default=True),
                            Choice(choice_id="a2", text="Use spaces")])
    assert parse_answer(choice, "a2") == "a2"
    assert parse_answer(choice, "I pick a1.") == "a1"
    assert parse_answer(choice, "neither") == "neither"  # names nothing of the domain: scored wrong


def test_render_question_shows_only_in_budget_context():
    from conformance.answer.reader import ContextHit
    from conformance.contract.fixture import Probe

    probe = Probe(probe_id="p", asked_by="u", query="Where?", asked_at="2024-01-01T00:00:00Z",
                  options=["Lisbon", "unknown"])
    hits = [ContextHit(1, "kept text", 1.0, ("m1",), "2023-05-01T10:00:00Z", 5, True),
            ContextHit(2, "cut text", 0.5, ("m2",), "2023-05-02T10:00:00Z", 5000, False)]
    text = render_question(probe, hits)
    assert "[1] (2023-05-01T10:00:00Z) kept text" in text and "cut text" not in text
    assert "Options (reply with one, verbatim): Lisbon | unknown" in text
    assert "(none: the memory returned nothing)" in render_question(probe, [])


@pytest.mark.parametrize("reply,verdict", [("CORRECT", True), ("incorrect.", False), ("Correct", True),
                                           ("**CORRECT**", True), (" INCORRECT\n", False),
                                           ("  INCORRECT because", None), ("CORRECT or INCORRECT", None),
                                           ("The answer is CORRECT", None), ("NOT INCORRECT", None),
                                           ("maybe", None), ("", None)])
def test_parse_verdict(reply, verdict):
    assert parse_verdict(reply) is verdict


@pytest.mark.parametrize("answer,declined", [("unknown", True), ("I don't know.", True), ("Not mentioned", True),
                                             ("The excerpts do not say", True), ("Lisbon", False),
                                             ("known for chess", False)])
def test_declines(answer, declined):
    assert declines(answer) is declined


def test_cli_answer_and_judge_run_writes_a_valid_result(fake, corpus, tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "ANTHROPIC_API_KEY": CANARY,
           "ANTHROPIC_BASE_URL": fake.url, "DRIFT_CACHE_DIR": str(Path.home() / ".cache" / "drift-conformance")}
    out = tmp_path / "result.json"
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "--adapter", "keyword", "--fixtures",
                           str(corpus / "fixtures"), "--gold", str(corpus / "gold"), "--answer-model", ANSWER_MODEL,
                           "--judge-model", JUDGE_MODEL, "--llm-cache", str(tmp_path / "cache"), "--records-dir",
                           str(tmp_path / "runs"), "--bootstrap", "200", "--quiet", "--out", str(out)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    schema = json.loads((REPO / "schema" / "result.schema.json").read_text())
    jsonschema.validate(result, schema)
    assert result["spend"]["answer"]["calls"] > 0
    assert CANARY not in proc.stdout + proc.stderr + out.read_text()


def test_audit_sample_is_blinded_and_score_reports_agreement_in_the_report(fake, corpus, tmp_path):
    from click.testing import CliRunner

    from conformance.cli import main
    from conformance.report.audit import cohen_kappa, wilson

    doc = _run(corpus, tmp_path / "runs", _settings(fake, tmp_path / "cache"))
    result = tmp_path / "result.json"
    result.write_text(doc.model_dump_json(), encoding="utf-8")
    runner = CliRunner()
    audit, key = tmp_path / "audit.jsonl", tmp_path / "audit-key.json"
    out = runner.invoke(main, ["audit", "sample", str(result), "--n", "20", "--out", str(audit), "--key", str(key)])
    assert out.exit_code == 0, out.output
    items = [json.loads(line) for line in audit.read_text().splitlines()]
    assert len(items) == 20
    # Blinded: no system, probe, scenario or verdict in the labeler's file.
    for item in items:
        assert set(item) == {"audit_id", "question", "reference", "candidate", "human_verdict"}
        assert item["human_verdict"] is None
    mapping = json.loads(key.read_text())["items"]
    assert set(mapping) == {i["audit_id"] for i in items}
    assert {m["system"] for m in mapping.values()} <= {"none", "oracle", "keyword", "reference-compressor"}
    # A "human" who agrees with the pipeline except on every item of the oracle graded by the judge.
    labelled = []
    for item in items:
        truth = mapping[item["audit_id"]]
        verdict = truth["pipeline_verdict"]
        if truth["system"] == "oracle" and truth["method"].startswith("judge"):
            verdict = "incorrect" if verdict == "correct" else "correct"
        labelled.append({**item, "human_verdict": verdict})
    labelled[0]["human_verdict"] = None  # one item skipped
    audit.write_text("".join(json.dumps(i) + "\n" for i in labelled))
    score_path = tmp_path / "audit-score.json"
    out = runner.invoke(main, ["audit", "score", str(audit), "--key", str(key), "--out", str(score_path)])
    assert out.exit_code == 0, out.output
    score = json.loads(score_path.read_text())
    pairs = []
    for item in labelled[1:]:
        truth = mapping[item["audit_id"]]
        pairs.append((truth["pipeline_verdict"] == "correct", item["human_verdict"] == "correct"))
    agree = sum(a == b for a, b in pairs)
    assert score["labelled"] == 19 and score["unlabelled"] == 1
    assert score["overall"]["agree"] == agree and score["overall"]["ci95"] == wilson(agree, 19)
    assert score["overall"]["kappa"] == cohen_kappa(pairs)
    assert "judge-human agreement" in out.output
    if "oracle" in score["by_system"] and score["by_system"]["oracle"]["n"]:
        others = [r for s, r in score["by_system"].items() if s != "oracle"]
        assert all(r["agreement"] == 1.0 for r in others)
    # The report shows it.
    md_path = tmp_path / "report.md"
    out = runner.invoke(main, ["report", str(result), "--markdown", str(md_path), "--html", str(tmp_path / "r.html"),
                               "--audit", str(score_path)])
    assert out.exit_code == 0, out.output
    text = md_path.read_text()
    assert "judge-human agreement" in text and "over 19 labelled items" in text
    assert "answer model" in text and ANSWER_MODEL in text and "spend" in text
    assert "judge-human agreement" in (tmp_path / "r.html").read_text()
    # A labelled file of another sample is refused, not scored against the wrong items.
    other_key = tmp_path / "other-key.json"
    out = runner.invoke(main, ["audit", "sample", str(result), "--n", "20", "--seed", "7", "--out",
                               str(tmp_path / "other.jsonl"), "--key", str(other_key)])
    assert out.exit_code == 0, out.output
    out = runner.invoke(main, ["audit", "score", str(audit), "--key", str(other_key)])
    assert out.exit_code == 2 and "belongs to another sample" in out.output
    # --out and --key on one path would hand the labeler the key.
    out = runner.invoke(main, ["audit", "sample", str(result), "--out", str(tmp_path / "x.json"), "--key",
                               str(tmp_path / "x.json")])
    assert out.exit_code == 2 and "give two paths" in out.output
    # An audit shown with another run's result is refused.
    other = doc.model_copy(deep=True)
    other.receipt.config["run_id"] = "20260101T000000Z-000000"
    other_result = tmp_path / "other-result.json"
    other_result.write_text(other.model_dump_json(), encoding="utf-8")
    out = runner.invoke(main, ["report", str(other_result), "--markdown", str(md_path), "--audit", str(score_path)])
    assert out.exit_code == 2 and "show an audit with the result it sampled" in out.output
    # A bad label names the file and line.
    bad = labelled[:]
    bad[2] = {**bad[2], "human_verdict": "yes"}
    audit.write_text("".join(json.dumps(i) + "\n" for i in bad))
    out = runner.invoke(main, ["audit", "score", str(audit), "--key", str(key)])
    assert out.exit_code == 2 and "line 3" in out.output and "human_verdict" in out.output


def test_wilson_and_kappa_golden():
    from conformance.report.audit import cohen_kappa, wilson

    # Hand-computed: p = 8/10, z = 1.96: centre = (0.8 + 0.19208) / 1.38416 = 0.716737;
    # half = 1.96 sqrt(0.016 + 0.009604) / 1.38416 = 0.226627 -> [0.490, 0.943].
    low, high = wilson(8, 10)
    assert low == pytest.approx(0.490162, abs=1e-5) and high == pytest.approx(0.943313, abs=1e-5)
    assert wilson(0, 0) is None
    # 4 pairs: agree on 3; pipeline says yes 2/4, human 3/4: p_o = .75, p_e = .5*.75 + .5*.25 = .5 -> kappa .5.
    assert cohen_kappa([(True, True), (True, True), (False, True), (False, False)]) == pytest.approx(0.5)
    assert cohen_kappa([(True, True), (True, True)]) is None


def test_a_rate_limit_that_outlasts_the_retries_stops_the_run_cleanly(fake, corpus, tmp_path):
    fake.fail_next(10_000, 429)
    settings = llm_settings(ANSWER_MODEL, None, cache_dir=tmp_path / "cache", max_retries=1,
                            environ={"ANTHROPIC_API_KEY": CANARY, "ANTHROPIC_BASE_URL": fake.url})
    with pytest.raises(Exception) as info:
        _run(corpus, tmp_path / "runs", settings)
    text = str(info.value)
    # No scenario finished: nothing to score, but the error says why and how to continue.
    assert "rate-limiting" in text and "2 attempts" in text and "--resume" in text
    assert CANARY not in text


def test_reports_never_show_the_key(fake, corpus, tmp_path):
    from conformance.report.html import render_html
    from conformance.report.markdown import render_markdown

    doc = _run(corpus, tmp_path / "runs", _settings(fake, tmp_path / "cache"))
    for text in (render_html(doc), render_markdown(doc), doc.model_dump_json()):
        assert CANARY not in text and ANSWER_MODEL in text


def test_systems_with_internal_models_are_named_in_the_receipt():
    from types import SimpleNamespace

    from conformance.runner.job import internal_model_notes

    results = {"mem0": SimpleNamespace(describe={"internal_models": ["all-MiniLM-L6-v2", ANSWER_MODEL]}),
               "vector": SimpleNamespace(describe={"internal_models": ["all-MiniLM-L6-v2"]}),
               "keyword": SimpleNamespace(describe={"internal_models": []})}
    llm = SimpleNamespace(answer=SimpleNamespace(model=ANSWER_MODEL))
    assert internal_model_notes(results, llm) == [
        f"mem0 runs internal models: all-MiniLM-L6-v2, {ANSWER_MODEL}; one of them is the answer model",
        f"vector runs internal models: all-MiniLM-L6-v2; none is the answer model ({ANSWER_MODEL}): report vector "
        "together with them"]
    assert internal_model_notes(results) == ["mem0 runs internal models: all-MiniLM-L6-v2, " + ANSWER_MODEL,
                                             "vector runs internal models: all-MiniLM-L6-v2"]


def test_the_reference_compressors_llm_form_drops_the_extractive_departure():
    from conformance.runner.job import spec_departures

    host = {"cpus": 2, "memory_gib": 24}
    extractive = " ".join(spec_departures(host))
    llm = " ".join(spec_departures(host, reference_form="llm: one Messages API call per session in Store "
                                                         f"({ANSWER_MODEL}, temperature 0)"))
    assert "is extractive and calls no LLM" in extractive and "is extractive" not in llm
    assert "runs in its LLM form" in llm and ANSWER_MODEL in llm


def test_credentials_in_the_base_url_are_never_recorded(fake, tmp_path):
    from drift_sdk.llm.client import public_url

    assert public_url("http://u:hunter2pass@127.0.0.1:8080/v1?token=abc#x") == "http://127.0.0.1:8080/v1"
    assert public_url("https://api.anthropic.com") == "https://api.anthropic.com"
    url = fake.url.replace("http://", "http://u:hunter2pass@")
    settings = llm_settings(ANSWER_MODEL, None, cache_dir=tmp_path, environ={"ANTHROPIC_API_KEY": CANARY,
                                                                             "ANTHROPIC_BASE_URL": url})
    assert "hunter2pass" not in json.dumps(settings.describe()) and "hunter2pass" not in repr(settings.answer.client(1))
    fake.fail_next(5, 529)
    client = settings.answer.client(1)
    client.max_retries = 0
    with pytest.raises(Exception) as info:
        client.complete("s", "q", max_tokens=5)
    assert "hunter2pass" not in str(info.value) and "127.0.0.1" in str(info.value)


def test_without_a_key_a_run_is_repeated_from_the_cache_and_a_miss_stops_cleanly(fake, corpus, tmp_path):
    # Someone repeating a published run from its response cache needs no key.
    first = _run(corpus, tmp_path / "runs", _settings(fake, tmp_path / "cache"))
    keyless = llm_settings(ANSWER_MODEL, JUDGE_MODEL, cache_dir=tmp_path / "cache", environ={})
    assert keyless.warnings and "only answers already in the response cache" in keyless.warnings[0]
    calls = len(fake.requests)
    again = _run(corpus, tmp_path / "runs2", keyless)
    assert again.complete and len(fake.requests) == calls and _scores(again) == _scores(first)
    assert any("without an API key" in n for n in again.receipt.notes)
    # A cache miss without a key: the run stops with the missing-key message, nothing half-scored.
    cold = llm_settings(ANSWER_MODEL, None, cache_dir=tmp_path / "cold", environ={})
    with pytest.raises(Exception, match="ANTHROPIC_API_KEY is not set") as info:
        _run(corpus, tmp_path / "runs3", cold)
    assert "--resume" in str(info.value)
    # Without a cache there is nothing to serve: the missing key is an error at once.
    from drift_sdk.llm.client import AnthropicClient

    with pytest.raises(LLMConfigError, match="ANTHROPIC_API_KEY is not set"):
        AnthropicClient(ANSWER_MODEL, environ={})


def test_an_interrupt_while_judging_keeps_every_paid_call_on_the_ledger(fake, corpus, tmp_path, monkeypatch):
    from conformance.llm.judge import JudgeModel
    from conformance.runner.job import JobError, read_spend_ledger

    real, seen = JudgeModel.judge, []

    def judge_then_interrupt(self, item):
        if len(seen) == 3:
            raise KeyboardInterrupt
        seen.append(item)
        return real(self, item)

    monkeypatch.setattr(JudgeModel, "judge", judge_then_interrupt)
    with pytest.raises(JobError, match="interrupted while judging.*--resume") as info:
        _run(corpus, tmp_path / "runs", _settings(fake, tmp_path / "cache"), run_id="20261129T000000Z-aaaaaa")
    assert "20261129T000000Z-aaaaaa" in str(info.value)
    ledger = read_spend_ledger(tmp_path / "runs" / "20261129T000000Z-aaaaaa")
    # Every call made before the interrupt is on the ledger, written as it was charged.
    assert len(ledger) == len(fake.requests) and {c["role"] for c in ledger} == {"answer", "judge"}
    monkeypatch.setattr(JudgeModel, "judge", real)
    done = _run(corpus, tmp_path / "runs", _settings(fake, tmp_path / "cache"), run_id="20261129T000000Z-aaaaaa",
                resume=True)
    full = _run(corpus, tmp_path / "runs2", _settings(fake, tmp_path / "cache-full"))
    assert done.complete and _scores(done) == _scores(full)
    assert done.spend["total_usd"] == pytest.approx(full.spend["total_usd"], rel=1e-6)
    for role in ("answer", "judge"):
        assert done.spend[role]["calls"] == full.spend[role]["calls"]
        assert done.spend[role]["cost_usd"] == pytest.approx(full.spend[role]["cost_usd"], rel=1e-6)


def test_when_judging_stops_early_no_system_gets_a_partial_accuracy(fake, corpus, tmp_path):
    # Answers cached by a run without a judge; then a keyless run with a judge: every verdict misses.
    _run(corpus, tmp_path / "runs", _settings(fake, tmp_path / "cache", judge_model=None))
    keyless = llm_settings(ANSWER_MODEL, JUDGE_MODEL, cache_dir=tmp_path / "cache", environ={})
    doc = _run(corpus, tmp_path / "runs2", keyless)
    assert not doc.complete and any("judging stopped" in e and "n/a for every system" in e for e in doc.errors)
    # The judge's own wording: the answers were cached, the judge needed the key.
    assert any("the judge model (--judge-model" in e for e in doc.errors), doc.errors
    assert not any("leave --answer-model off" in e for e in doc.errors)
    for label in ("keyword", "oracle", "none"):
        accuracy = doc.systems[label].metrics["accuracy"]
        assert accuracy.value is None and "judging stopped early" in accuracy.reason
        for name in ("mvot", "drift_c"):
            metric = doc.systems[label].metrics.get(name)
            assert metric is None or metric.value is not None or "answer model" not in (metric.reason or ""), name


def test_a_baseline_binds_the_answer_pipeline(fake, corpus, tmp_path):
    from conformance.gate.baseline import baseline_from_result, gate_config
    from conformance.gate.compare import compare

    doc = _run(corpus, tmp_path / "runs", _settings(fake, tmp_path / "cache"))
    bound = gate_config(doc).answer_model
    assert bound.startswith(ANSWER_MODEL) and prompt_sha256()[:16] in bound and JUDGE_MODEL in bound
    baseline = baseline_from_result(doc)
    assert baseline.config.answer_model == bound
    compare(baseline, doc)  # no crash: the gate reads the bound string

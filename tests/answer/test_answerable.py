"""The semantic corpus checks catch unanswerable probes and canaries said in the open."""

import json
import shutil
from pathlib import Path

from conformance.answer.answerable import check_corpus, check_scenario

REPO = Path(__file__).resolve().parents[2]


def copy(tmp_path, scenario):
    for kind, ext in (("fixtures", "jsonl"), ("gold", "json")):
        (tmp_path / kind).mkdir(exist_ok=True)
        shutil.copy(REPO / kind / f"{scenario}.{ext}", tmp_path / kind / f"{scenario}.{ext}")
    return tmp_path / "fixtures" / f"{scenario}.jsonl", tmp_path / "gold" / f"{scenario}.json"


def test_committed_ci_scenarios_are_answerable(tmp_path):
    for scenario in ("ua-short-001", "mp-short-001", "mp-short-008"):
        copy(tmp_path, scenario)
    assert check_corpus(tmp_path / "fixtures", tmp_path / "gold") == []


def test_a_gold_answer_the_evidence_does_not_support_is_reported(tmp_path):
    fixture, gold_path = copy(tmp_path, "ua-short-001")
    gold = json.loads(gold_path.read_text())
    victim = next(p for p in gold["probes"] if p["probe_type"] == "fact_recall")
    victim["evidence"] = []
    gold_path.write_text(json.dumps(gold))
    problems = check_scenario(fixture, gold_path)
    assert any(victim["probe_id"] in p and "its evidence gives 'unknown'" in p for p in problems)


def test_a_canary_said_in_the_open_to_its_asker_is_reported(tmp_path):
    fixture, gold_path = copy(tmp_path, "mp-short-008")
    gold = json.loads(gold_path.read_text())
    canary = next(p for p in gold["probes"] if p["probe_type"] == "canary")
    asker = next(json.loads(line)["probes"] for line in fixture.read_text().splitlines()
                 if json.loads(line)["kind"] == "checkpoint" and
                 any(q["probe_id"] == canary["probe_id"] for q in json.loads(line)["probes"]))
    asked_by = next(q["asked_by"] for q in asker if q["probe_id"] == canary["probe_id"])
    disclosed = {m for ev in gold["events"] if ev["entity"] == canary["owner"] and
                 ev["attribute"] == canary["attribute"] for m in ev["message_ids"]}
    assert disclosed
    assert check_scenario(fixture, gold_path) == []
    # Re-say the canary's disclosure as a shared message in a session the asker attends.
    lines = [json.loads(line) for line in fixture.read_text().splitlines()]
    for line in lines:
        if line["kind"] == "session":
            for m in line["messages"]:
                if m["message_id"] in disclosed:
                    m["scope"] = "shared"
                    if asked_by not in line["participants"]:
                        line["participants"].append(asked_by)
    fixture.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    problems = check_scenario(fixture, gold_path)
    assert any("is not private" in p and canary["probe_id"] in p for p in problems)
    assert any(f"a session {asked_by} attended" in p and canary["probe_id"] in p for p in problems)

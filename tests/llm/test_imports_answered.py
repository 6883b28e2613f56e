"""Every importer's small test file, end to end with the answer model and judge (local fake
Messages API): the imported corpus runs through keyword and the controls, every probe is
answered and graded, rubric items reach the judge as rubrics, and the oracle ceiling and the
import report's doubtful gold meet in the result."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "adapters"))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "importers"))
from fake_anthropic import FakeAnthropic  # noqa: E402
from fake_reader import excerpt_responder  # noqa: E402

from conformance.contract.corpus import validate_corpus  # noqa: E402
from conformance.llm.judge import JUDGE_SYSTEM_PROMPT, RUBRIC_PREFIX  # noqa: E402
from conformance.llm.settings import llm_settings  # noqa: E402
from conformance.runner.job import run_job  # noqa: E402

pytest.importorskip("anthropic")

KEY = "sk-ant-imports-canary-93e1"


responder = excerpt_responder(words=40)


def _locomo(tmp: Path) -> Path:
    from test_locomo import SAMPLE

    source = tmp / "locomo10.json"
    source.write_text(json.dumps(SAMPLE), encoding="utf-8")
    from conformance.importers.locomo import import_locomo

    import_locomo(source, tmp / "out")
    return tmp / "out"


def _beam(tmp: Path) -> Path:
    from test_beam import _folder_layout

    from conformance.importers.beam import import_beam

    import_beam(_folder_layout(tmp), tmp / "out")
    return tmp / "out"


def _longmemeval(tmp: Path) -> Path:
    from test_longmemeval import S_SAMPLE

    from conformance.importers.longmemeval import import_longmemeval

    source = tmp / "longmemeval_s.json"
    source.write_text(json.dumps(S_SAMPLE), encoding="utf-8")
    import_longmemeval(source, tmp / "out")
    return tmp / "out"


def _guide(tmp: Path) -> Path:
    from test_guide import SAMPLE

    from conformance.importers.guide import import_guide

    source = tmp / "cases.jsonl"
    source.write_text(SAMPLE, encoding="utf-8")
    import_guide(source, tmp / "out")
    return tmp / "out"


IMPORTERS = {"locomo": _locomo, "beam": _beam, "longmemeval": _longmemeval, "guide": _guide}


@pytest.mark.parametrize("name", sorted(IMPORTERS))
def test_import_then_answer_and_judge_end_to_end(name, tmp_path):
    out = IMPORTERS[name](tmp_path)
    assert validate_corpus(out / "fixtures", out / "gold")
    with FakeAnthropic(responder, api_key=KEY) as fake:
        settings = llm_settings("claude-haiku-4-5-20251001", "claude-sonnet-4-5-20250929", cache_dir=tmp_path / "c",
                                environ={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake.url}, max_retries=0)
        doc = run_job(["keyword"], out / "fixtures", out / "gold", records_dir=tmp_path / "runs", n_boot=200,
                      llm=settings)
        requests = list(fake.requests)
    assert doc.complete, doc.errors
    records = [json.loads(line) for line in Path(doc.receipt.config["records"]).read_text().splitlines()]
    probes = [r for r in records if r["kind"] == "probe"]
    assert probes and all(r["answer"] is not None and r["answer_call"] for r in probes)
    for label in ("keyword", "oracle", "none"):
        graded = sum(doc.systems[label].judging.values()) - doc.systems[label].judging["judge_correct"]
        assert graded == sum(1 for r in probes if r["system"] == label)
        assert doc.systems[label].metrics["recall_at_k"].value is not None or label == "none"
    assert doc.spend["answer"]["calls"] > 0
    assert any(r.get("system") == JUDGE_SYSTEM_PROMPT for r in requests)
    # The oracle ceiling of the dataset is in the result, with its reasons.
    (source, ceiling), = doc.oracle_ceiling.items()
    assert ceiling["probes"] > 0 and isinstance(ceiling["reasons"], list)
    if name == "beam":
        # Rubric-graded items reach the judge as rubrics.
        assert any(RUBRIC_PREFIX in r["messages"][0]["content"] for r in requests
                   if r.get("system") == JUDGE_SYSTEM_PROMPT)

"""The opt-in answer model and judge over a LoCoMo import, against the local fake Messages API.

Prints per-category answer accuracy with 95% intervals per system, the calls, tokens and cost
the run recorded, the prompt size in o200k tokens (a proxy for Claude's tokenizer) with the
list-price cost it implies for a real run, and then reruns from the response cache: no call,
the same scores.

    python bench/answer_judge_fake.py [path/to/locomo10.json] [--adapter keyword]

Default path: ``../shared/datasets/locomo/locomo10.json`` beside the checkout. The fake
"model" is crude on purpose (it answers with the first words of the top excerpt, and its
judge accepts a candidate holding every word of the reference), so the accuracies measure the
plumbing, not a model; the token counts and call numbers are what a real run would make.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "adapters"))
sys.path.insert(0, str(ROOT / "tests" / "llm"))

from fake_anthropic import FakeAnthropic  # noqa: E402
from fake_reader import excerpt_responder  # noqa: E402

from conformance.answer.tokens import count_tokens  # noqa: E402
from conformance.importers.locomo import import_locomo  # noqa: E402
from conformance.llm.answer import ANSWER_SYSTEM_PROMPT  # noqa: E402
from conformance.llm.judge import JUDGE_SYSTEM_PROMPT  # noqa: E402
from drift_sdk.llm.prices import PRICES  # noqa: E402
from conformance.llm.settings import llm_settings  # noqa: E402
from conformance.runner.job import run_job  # noqa: E402

KEY = "sk-ant-bench-fake"
ANSWER_MODEL, JUDGE_MODEL = "claude-haiku-4-5-20251001", "claude-sonnet-4-5-20250929"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("source", nargs="?", default=str(ROOT.parent / "shared" / "datasets" / "locomo" /
                                                            "locomo10.json"))
    parser.add_argument("--adapter", default="keyword")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="drift-answer-bench-") as tmp, \
            FakeAnthropic(excerpt_responder(words=12), api_key=KEY) as fake:
        tmp = Path(tmp)
        import_locomo(Path(args.source), tmp / "corpus")
        env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake.url}

        def run(records: str):
            settings = llm_settings(ANSWER_MODEL, JUDGE_MODEL, cache_dir=tmp / "cache", environ=env)
            started = time.perf_counter()
            doc = run_job([args.adapter], tmp / "corpus" / "fixtures", tmp / "corpus" / "gold",
                          records_dir=tmp / records, n_boot=1000, llm=settings)
            return doc, time.perf_counter() - started

        doc, wall = run("runs")
        print(f"first run: {wall:.1f} s, {len(fake.requests)} calls to the fake, complete={doc.complete}")
        for label, result in doc.systems.items():
            cats = {k: v for k, v in result.metrics.items() if k.startswith("accuracy.") or k in
                    ("accuracy", "abstention_accuracy")}
            shown = ", ".join(f"{k} {v.value:.3f} [{v.ci95[0]:.3f}, {v.ci95[1]:.3f}]" if v.ci95 else f"{k} n/a"
                              for k, v in sorted(cats.items()) if v.value is not None)
            print(f"  {label}: {shown}")
            print(f"    grading: {result.judging}")
        print("spend (fake token counts):", json.dumps(doc.spend, sort_keys=True))
        answer_tokens = [count_tokens(ANSWER_SYSTEM_PROMPT + r["messages"][0]["content"]) for r in fake.requests
                         if r.get("system") == ANSWER_SYSTEM_PROMPT]
        judge_tokens = [count_tokens(JUDGE_SYSTEM_PROMPT + r["messages"][0]["content"]) for r in fake.requests
                        if r.get("system") == JUDGE_SYSTEM_PROMPT]
        a_price, j_price = PRICES["claude-haiku-4-5"], PRICES["claude-sonnet-4-5"]
        a_usd = sum(answer_tokens) / 1e6 * float(a_price.input_usd_per_mtok) + \
            len(answer_tokens) * 16 / 1e6 * float(a_price.output_usd_per_mtok)
        j_usd = sum(judge_tokens) / 1e6 * float(j_price.input_usd_per_mtok) + \
            len(judge_tokens) * 2 / 1e6 * float(j_price.output_usd_per_mtok)
        print(f"prompt size (o200k): answer {len(answer_tokens)} calls, {sum(answer_tokens):,} tokens "
              f"(mean {sum(answer_tokens) / max(1, len(answer_tokens)):.0f}); judge {len(judge_tokens)} calls, "
              f"{sum(judge_tokens):,} tokens")
        print(f"list-price estimate of a real run: answer (Haiku 4.5, 16 output tokens per call) ${a_usd:.2f}, "
              f"judge (Sonnet 4.5, 2 output tokens) ${j_usd:.2f}")
        before = len(fake.requests)
        again, wall2 = run("runs2")
        same = all(again.systems[k].metrics[m].model_dump() == doc.systems[k].metrics[m].model_dump()
                   for k in doc.systems for m in doc.systems[k].metrics if m.startswith(("accuracy", "abstention")))
        print(f"cached rerun: {wall2:.1f} s, {len(fake.requests) - before} calls, same accuracy metrics: {same}, "
              f"spend total ${again.spend['total_usd']}")


if __name__ == "__main__":
    main()

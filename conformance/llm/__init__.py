"""The opt-in LLM path of a run (issue 8): the answer model (:mod:`conformance.llm.answer`),
the blinded judge (:mod:`conformance.llm.judge`) and the settings that build both from the
command line (:mod:`conformance.llm.settings`).

They call the suite's one LLM client, :mod:`drift_sdk.llm` (pinned model ids, streaming and
time to first token, bounded retries, a response cache and a spend budget), which lives in the
SDK so that adapters use it too; its errors are :class:`conformance.errors.DriftError`.
Importing this package does not import ``anthropic`` (an optional extra: ``pip install
'drift-conformance[llm]'``); :class:`drift_sdk.llm.AnthropicClient` imports it when constructed.
"""

#!/usr/bin/env bash
# The CI gate, the same steps locally, in this repository's workflow and in the reusable
# action (action.yml): run the gated split, then compare the result with the baseline as
# committed on the base branch (git show BASE_REF:BASELINE), so a change cannot rewrite
# what it is compared with. Exit 0 pass (or no baseline yet), 1 regression, 2 error or inconclusive.
#
#   scripts/gate.sh                              # keyword on the ci split against main's baseline
#   ADAPTERS="./my-adapter" BASE_REF=origin/main scripts/gate.sh
#
# Environment (all optional):
#   ADAPTERS         space-separated --adapter values          (default: keyword)
#   BASELINE         baseline path inside the repository        (default: baselines/main.json)
#   BASE_REF         git ref holding the trusted baseline; empty: the working tree's file
#                                                               (default: main)
#   SPLIT            scenario split the gate runs               (default: ci)
#   RESULT           gate this result.json instead of running (a merged run, say)
#   ALLOW_MISSING    "true": no baseline yet passes (exit 0) with a notice saying how to make one
#                                                               (default: true)
#   INCLUDE_HOLDOUT  "true": also a published run with holdout, reported, never gated
#   REPORT           "false": no report.html                   (default: true)
#   OUT_DIR          where result.json, gate.json, baseline.json, report.html and summary.md go
#                                                               (default: a temp folder)
#   SUMMARY          a file the Markdown summary is appended to (default: $GITHUB_STEP_SUMMARY)
#   GITHUB_OUTPUT    when set, verdict, exit-code, result, report, gate and baseline are appended
#   ANNOTATE         "true": GitHub annotations (::notice::, ::error::) (default: on under Actions)
#   DRIFT            the CLI to call                            (default: drift-conformance)
set -uo pipefail

ADAPTERS="${ADAPTERS:-keyword}"
BASELINE="${BASELINE:-baselines/main.json}"
BASE_REF="${BASE_REF-main}"
SPLIT="${SPLIT:-ci}"
RESULT="${RESULT:-}"
ALLOW_MISSING="${ALLOW_MISSING:-true}"
INCLUDE_HOLDOUT="${INCLUDE_HOLDOUT:-false}"
REPORT="${REPORT:-true}"
OUT_DIR="${OUT_DIR:-$(mktemp -d)}"
SUMMARY="${SUMMARY:-${GITHUB_STEP_SUMMARY:-$OUT_DIR/summary.md}}"
ANNOTATE="${ANNOTATE:-${GITHUB_ACTIONS:-false}}"
read -r -a DRIFT_CMD <<< "${DRIFT:-drift-conformance}"
mkdir -p "$OUT_DIR"

# The action's outputs (and a caller's later steps) read these; the verdict is "error" until
# a comparison says otherwise.
output() {
  if [ -n "${GITHUB_OUTPUT:-}" ]; then printf '%s=%s\n' "$1" "$2" >> "$GITHUB_OUTPUT"; fi
}
finish() {
  output exit-code "$1"
  echo "gate: exit $1 (outputs in $OUT_DIR)"
  exit "$1"
}

adapter_args=()
for adapter in $ADAPTERS; do adapter_args+=(--adapter "$adapter"); done
# In a checkout of drift-conformance itself, gate the checkout's corpus, not the copy an
# installed package carries (pip install . would otherwise score the corpus it was built with).
corpus_args=()
if [ -f conformance/cli/__init__.py ] && [ -d fixtures ] && [ -d gold ]; then
  corpus_args=(--fixtures fixtures --gold gold)
fi

if [ -n "$RESULT" ]; then
  echo "== gating $RESULT (no run)"
  cp "$RESULT" "$OUT_DIR/result.json" 2>/dev/null
  run_rc=$?
else
  echo "== run: ${DRIFT_CMD[*]} --split $SPLIT ${adapter_args[*]}"
  "${DRIFT_CMD[@]}" --split "$SPLIT" "${adapter_args[@]}" "${corpus_args[@]}" --quiet --records-dir "$OUT_DIR/runs" \
    --out "$OUT_DIR/result.json" > "$OUT_DIR/table.txt"
  run_rc=$?
  cat "$OUT_DIR/table.txt"
fi
if [ "$run_rc" -ne 0 ] || [ ! -s "$OUT_DIR/result.json" ]; then
  # A run that failed or scored nothing is an error, never a regression and never a pass.
  printf '## drift-conformance gate: ERROR (exit 2)\n\nThe gated run failed (exit %s) before it could be compared.\n' \
    "$run_rc" >> "$SUMMARY"
  if [ "$ANNOTATE" = "true" ]; then
    echo "::error title=drift-conformance gate::the gated run failed (exit $run_rc) before it could be compared; its log is above"
  fi
  echo "gate: the run failed (exit $run_rc)" >&2
  output verdict error
  finish 2
fi
output result "$OUT_DIR/result.json"

compare_args=(compare "$BASELINE" "$OUT_DIR/result.json" --candidate "$BASELINE" --summary "$SUMMARY"
              --json-out "$OUT_DIR/gate.json" --baseline-out "$OUT_DIR/baseline.json")
if [ -n "$BASE_REF" ]; then compare_args+=(--base-ref "$BASE_REF"); fi
if [ "$ALLOW_MISSING" = "true" ]; then compare_args+=(--allow-missing); fi
if [ "$ANNOTATE" = "true" ]; then compare_args+=(--annotate); fi
echo "== compare: ${DRIFT_CMD[*]} ${compare_args[*]}"
"${DRIFT_CMD[@]}" "${compare_args[@]}"
gate_rc=$?
verdict=$(sed -n 's/^  "verdict": "\(.*\)",\{0,1\}$/\1/p' "$OUT_DIR/gate.json" 2>/dev/null)
output verdict "${verdict:-error}"
output gate "$OUT_DIR/gate.json"
if [ -s "$OUT_DIR/baseline.json" ]; then output baseline "$OUT_DIR/baseline.json"; fi

if [ "$REPORT" != "true" ]; then
  :
elif "${DRIFT_CMD[@]}" report "$OUT_DIR/result.json" --html "$OUT_DIR/report.html" 2>/dev/null; then
  output report "$OUT_DIR/report.html"
else
  echo "note: the HTML report could not be written; the gate verdict stands" >&2
fi

if [ "$INCLUDE_HOLDOUT" = "true" ] && [ -z "$RESULT" ]; then
  # Published figures only: holdout scenarios never feed the gate.
  echo "== published run with holdout (reported, not gated)"
  if "${DRIFT_CMD[@]}" --split "$SPLIT" "${adapter_args[@]}" "${corpus_args[@]}" --include-holdout --quiet \
       --records-dir "$OUT_DIR/runs" --out "$OUT_DIR/result-holdout.json" > /dev/null \
     && "${DRIFT_CMD[@]}" report "$OUT_DIR/result-holdout.json" --markdown "$OUT_DIR/holdout.md"; then
    { printf '\n## Published run with holdout (not gated)\n\n'; cat "$OUT_DIR/holdout.md"; } >> "$SUMMARY"
  else
    echo "note: the published holdout run failed; the gate verdict stands" >&2
  fi
fi
finish "$gate_rc"

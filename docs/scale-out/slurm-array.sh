#!/usr/bin/env bash
# One drift-conformance shard per Slurm array task; the merge runs after the whole array.
#
#   jid=$(sbatch --parsable --array=1-4 docs/scale-out/slurm-array.sh)
#   sbatch --dependency=afterok:"$jid" --wrap \
#     'drift-conformance merge drift-shards/*/result.json --records-dir drift-shards/merged --out result.json'
#
# Array task ids must be 1..N (shards are numbered from 1); N is the array's task count.
# The output folder must be on a filesystem every node and the merge job see.
# Environment (all optional): ADAPTERS (space-separated, default keyword), DRIFT_ARGS (more
# options, the same in every task: --split ci, --repeat 2, ...), OUT_ROOT (default
# ./drift-shards), DRIFT (the CLI to call, default drift-conformance).
#SBATCH --job-name=drift-shard
#SBATCH --cpus-per-task=8
#SBATCH --mem=32G
#SBATCH --time=04:00:00
#SBATCH --output=drift-shard-%A_%a.log
set -euo pipefail

: "${SLURM_ARRAY_TASK_ID:?submit this as an array: sbatch --array=1-N docs/scale-out/slurm-array.sh}"
SHARDS="${SLURM_ARRAY_TASK_COUNT:?submit this as an array: sbatch --array=1-N}"
SHARD="$SLURM_ARRAY_TASK_ID"
if [ "$SHARD" -lt 1 ] || [ "$SHARD" -gt "$SHARDS" ]; then
  echo "array task id $SHARD is outside 1..$SHARDS: use --array=1-$SHARDS" >&2
  exit 2
fi
OUT="${OUT_ROOT:-$PWD/drift-shards}/$SHARD-of-$SHARDS"
read -r -a DRIFT_CMD <<< "${DRIFT:-drift-conformance}"
read -r -a extra <<< "${DRIFT_ARGS:---split ci}"
adapter_args=()
for adapter in ${ADAPTERS:-keyword}; do adapter_args+=(--adapter "$adapter"); done
mkdir -p "$OUT"
"${DRIFT_CMD[@]}" "${adapter_args[@]}" "${extra[@]}" --shard "$SHARD/$SHARDS" --records-dir "$OUT/runs" \
  --out "$OUT/result.json" --quiet

#!/usr/bin/env bash
# The steps of the reusable action (action.yml) other than the gate itself (scripts/gate.sh),
# one subcommand per step, so they run the same outside GitHub (tests/gate/test_action.py).
# Each appends its results to $GITHUB_OUTPUT when that is set, and prints them.
#
#   scripts/action.sh suite     the suite's own virtualenv: where, and its cache key
#   scripts/action.sh install   build it there (skipped when a restored cache holds it)
#   scripts/action.sh venvs     the adapters' virtualenv cache key, from the suite (cache-key)
#   scripts/action.sh prune     drop cached adapter virtualenvs this run does not use
#
# Environment:
#   PYTHON         interpreter the suite's virtualenv is made from (default: python3 on PATH);
#                  the caller's Python, PATH and packages are never changed
#   SUITE_DIR      the suite's virtualenv         (default: $RUNNER_TEMP/drift-conformance/suite)
#   SUITE_VERSION  a PyPI release to install; empty: the copy of the suite at ACTION_PATH
#   ACTION_PATH    the suite's source (the action's own checkout; default: this script's repository)
#   ADAPTERS       space-separated --adapter values (venvs)
#   DRIFT_CACHE_DIR  the adapters' virtualenv cache (venvs, prune)
set -euo pipefail

ACTION_PATH="${ACTION_PATH:-$(cd "$(dirname "$0")/.." && pwd)}"
SUITE_DIR="${SUITE_DIR:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}/drift-conformance/suite}"
SUITE_VERSION="${SUITE_VERSION:-}"
PYTHON="${PYTHON:-python3}"

output() {
  printf '%s=%s\n' "$1" "$2"
  if [ -n "${GITHUB_OUTPUT:-}" ]; then printf '%s=%s\n' "$1" "$2" >> "$GITHUB_OUTPUT"; fi
}

# What the suite's virtualenv holds: the release named, or every file a wheel of ACTION_PATH
# packs (pyproject.toml's wheel targets), with the interpreter's full version and platform
# (a virtualenv links to its interpreter).
suite_key() {
  "$PYTHON" - "$ACTION_PATH" "$SUITE_VERSION" <<'PY'
import hashlib, platform, sys
from pathlib import Path
root, version = Path(sys.argv[1]), sys.argv[2]
digest = hashlib.sha256()
if version:
    digest.update(f"pypi {version}".encode())
else:
    for top in ("pyproject.toml", "README.md", "conformance", "drift_sdk", "adapters", "fixtures", "gold", "schema",
                "baselines", "proto", "scenarios"):
        base = root / top
        files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
        for path in files:
            if "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
print(f"drift-suite-{platform.system().lower()}-{platform.machine()}-py{platform.python_version()}-"
      f"{digest.hexdigest()[:16]}")
PY
}

suite() {
  output dir "$SUITE_DIR"
  output key "$(suite_key)"
  output drift "$SUITE_DIR/bin/drift-conformance"
}

install() {
  local key
  key="$(suite_key)"
  if [ -f "$SUITE_DIR/.complete" ] && [ "$(cat "$SUITE_DIR/.complete")" = "$key" ]; then
    echo "the suite's virtualenv $SUITE_DIR is current ($key)"
  else
    rm -rf "$SUITE_DIR"
    "$PYTHON" -m venv "$SUITE_DIR"
    "$SUITE_DIR/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
    if [ -n "$SUITE_VERSION" ]; then
      "$SUITE_DIR/bin/python" -m pip install -q --disable-pip-version-check "drift-conformance==$SUITE_VERSION"
    else
      "$SUITE_DIR/bin/python" -m pip install -q --disable-pip-version-check "$ACTION_PATH"
    fi
    printf '%s' "$key" > "$SUITE_DIR/.complete"
  fi
  "$SUITE_DIR/bin/drift-conformance" --version
}

venvs() {
  local adapter_args=() adapter info
  for adapter in ${ADAPTERS:-keyword}; do adapter_args+=(--adapter "$adapter"); done
  info="$("$SUITE_DIR/bin/drift-conformance" cache-key "${adapter_args[@]}" --json)"
  mkdir -p "${DRIFT_CACHE_DIR:?DRIFT_CACHE_DIR is the cache the key is of}"
  printf '%s\n' "$info" > "$DRIFT_CACHE_DIR/cache-key.json"
  "$SUITE_DIR/bin/python" - "$DRIFT_CACHE_DIR/cache-key.json" <<'PY' | while IFS='=' read -r name value; do output "$name" "$value"; done
import json, sys
info = json.load(open(sys.argv[1]))
print(f"key={info['key']}")
print(f"restore-prefix={info['restore_prefix']}")
print(f"dir={info['cache_dir']}")
PY
}

prune() {
  local keep="${DRIFT_CACHE_DIR:?}/cache-key.json" entry name
  [ -f "$keep" ] || return 0
  for entry in "$DRIFT_CACHE_DIR"/venvs/*; do
    [ -e "$entry" ] || continue
    name="$(basename "$entry")"
    name="${name%.lock}"
    if ! grep -q "\"$name\"" "$keep"; then
      echo "prune: $entry (not used by this run)"
      rm -rf "$entry"
    fi
  done
}

case "${1:-}" in
  suite) suite ;;
  install) install ;;
  venvs) venvs ;;
  prune) prune ;;
  *) echo "usage: $0 suite|install|venvs|prune" >&2; exit 2 ;;
esac

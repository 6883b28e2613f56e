"""Keep secrets out of everything a run writes: records, result.json, logs, reports.

An adapter may be handed an API key (its ``adapter.yaml`` names the variable) and can echo
it back in a hit, in Describe, or in its stderr, which a fault message quotes. Every text
the runner writes passes through :func:`redact`, which replaces the value of every secret
environment variable (names matching :data:`SECRET_NAME`, values of at least
:data:`MIN_SECRET_CHARS` characters) with ``[redacted NAME]``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from functools import lru_cache

#: Environment variable names whose values are secrets.
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|HOLDOUT_SEED", re.IGNORECASE)
#: Shorter values are not redacted: replacing "1" or "true" everywhere would garble records.
MIN_SECRET_CHARS = 8


def secret_values(environ: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """``(value, name)`` of every secret in ``environ``, longest value first (so a value that
    contains another is replaced whole)."""
    # Paths are not secrets (VIRTUAL_ENV_KEY_HINT=/home/...): redacting them would garble
    # the folders a receipt records.
    found = {value: name for name, value in environ.items()
             if SECRET_NAME.search(name) and len(value or "") >= MIN_SECRET_CHARS
             and not value.startswith(("/", "~", "./", "../"))}
    return tuple(sorted(found.items(), key=lambda item: -len(item[0])))


@lru_cache(maxsize=4)
def _pattern(values: tuple[tuple[str, str], ...]) -> tuple[re.Pattern | None, dict[str, str]]:
    if not values:
        return None, {}
    names: dict[str, str] = {}
    alternatives = []
    for value, name in values:
        # The JSON-escaped form too: a record is redacted after serialisation.
        for form in dict.fromkeys((value, json.dumps(value)[1:-1])):
            names[form] = name
            alternatives.append(re.escape(form))
    return re.compile("|".join(alternatives)), names


#: This process's environment as last seen, and the pattern built from it.
_current: tuple[dict, re.Pattern | None, dict[str, str]] = ({None: None}, None, {})


def _environment() -> dict:
    # os.environ's own dict (CPython): comparing it with a copy runs in C, where scanning every
    # name for a secret costs tens of microseconds per record written.
    data = getattr(os.environ, "_data", None)
    return data if isinstance(data, dict) else dict(os.environ)


def _process_pattern() -> tuple[re.Pattern | None, dict[str, str]]:
    """The pattern of this process's secrets: built once, rebuilt when the environment changed."""
    global _current
    seen, pattern, names = _current
    now = _environment()
    if now != seen:
        pattern, names = _pattern(secret_values(os.environ))
        _current = (dict(now), pattern, names)
    return pattern, names


def redact(text: str, environ: Mapping[str, str] | None = None) -> str:
    """``text`` with every secret value of ``environ`` (default: this process's environment)
    replaced by ``[redacted NAME]``."""
    pattern, names = _process_pattern() if environ is None else _pattern(secret_values(environ))
    if pattern is None or not text:
        return text
    return pattern.sub(lambda m: f"[redacted {names[m.group(0)]}]", text)


#: Variables the harness reads for itself: never handed to an adapter, whatever its adapter.yaml
#: lists. The sealed holdout's seed regenerates that holdout's gold with the public generator; the
#: audit salt file keys the state audit; the corpus, records, dataset and cache folders hold gold,
#: verdicts or cached judge answers; the rest set how the harness runs. Each main-command option's
#: variable (``DRIFT_<OPTION>``, click's ``auto_envvar_prefix``) is here, checked against the CLI
#: by tests/security/test_secrets_and_sealing.py.
HARNESS_VARIABLES = frozenset({
    "DRIFT_HOLDOUT_SEED", "DRIFT_CACHE_DIR", "DRIFT_DATASETS_DIR", "DRIFT_ADAPTER_USER", "DRIFT_NO_CGROUPS",
    "DRIFT_KEEP_ADAPTER_WORKDIR", "DRIFT_C_WEIGHTS", "DRIFT_E_WEIGHTS", "DRIFT_HOST",
    # the main command's options
    "DRIFT_ADAPTER", "DRIFT_ALLOW_ALIAS", "DRIFT_ALLOW_DIRTY", "DRIFT_ANSWER_MAX_TOKENS", "DRIFT_ANSWER_MODEL", "DRIFT_AS_JSON",
    "DRIFT_JSON", "DRIFT_AUDIT_SALT_FILE", "DRIFT_BASELINE_SYSTEM", "DRIFT_BOOTSTRAP", "DRIFT_BUDGET",
    "DRIFT_BUDGET_USD", "DRIFT_COMPARE_WITH", "DRIFT_COMPARE", "DRIFT_CONCURRENCY", "DRIFT_ENCODING",
    "DRIFT_EXECUTOR", "DRIFT_FIXTURES", "DRIFT_FRESH_PROCESS", "DRIFT_GATE", "DRIFT_GOLD", "DRIFT_HORIZON",
    "DRIFT_INCLUDE_HOLDOUT", "DRIFT_ISOLATION", "DRIFT_JUDGE_MODEL", "DRIFT_K", "DRIFT_KNOWN_BAD",
    "DRIFT_LLM_CACHE", "DRIFT_OUT", "DRIFT_PARADIGM", "DRIFT_QUIET", "DRIFT_RAY_ADDRESS", "DRIFT_RECORDS_DIR",
    "DRIFT_REPEAT", "DRIFT_RESUME", "DRIFT_SCENARIO", "DRIFT_SEALED_HOLDOUT", "DRIFT_SEED", "DRIFT_SHARD",
    "DRIFT_SHARDS", "DRIFT_SPLIT", "DRIFT_UPDATE_BASELINE", "DRIFT_VERBOSE", "DRIFT_VERSION", "DRIFT_WIDE",
})
#: A subcommand's options read ``DRIFT_<SUBCOMMAND>_<OPTION>``: every name under these is the harness's.
HARNESS_PREFIXES = tuple(f"DRIFT_{command}_" for command in (
    "ADAPTERS", "AUDIT", "BUILD", "CACHE_KEY", "CHECK_ADAPTER", "COMPARE", "EXPORT", "GENERATE", "IMPORT",
    "MERGE", "REPORT", "SCHEMA", "VALIDATE"))


def harness_variable(name: str) -> bool:
    """True for a variable the harness reads for itself (:data:`HARNESS_VARIABLES`, or under one
    of :data:`HARNESS_PREFIXES`), which no adapter may be handed."""
    return name in HARNESS_VARIABLES or name.startswith(HARNESS_PREFIXES)

"""Model ids: only dated snapshots, so a rerun talks to the same model."""

from __future__ import annotations

import re
from datetime import datetime

from drift_sdk.llm.errors import LLMConfigError

#: ``<family>-YYYYMMDD``, e.g. ``claude-haiku-4-5-20251001``.
_DATED = re.compile(r"^(?P<family>[a-z0-9][a-z0-9.\-]*?)-(?P<date>\d{8})$")
_ALIAS_TAIL = re.compile(r"-(latest|\d{8})$")
_ID_CHARS = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@/\-]*$")


def is_dated(model_id: str) -> bool:
    """True when ``model_id`` ends in ``-YYYYMMDD`` with a real calendar date."""
    m = _DATED.match(model_id)
    if not m:
        return False
    try:
        datetime.strptime(m.group("date"), "%Y%m%d")
    except ValueError:
        return False
    return True


def model_family(model_id: str) -> str:
    """The id without its snapshot date or ``-latest`` tail: ``claude-haiku-4-5-20251001`` ->
    ``claude-haiku-4-5``. An id without either tail is its own family."""
    return _ALIAS_TAIL.sub("", model_id)


def pinned_model(model_id: str, allow_alias: bool = False) -> str:
    """``model_id`` (stripped) when it is a dated snapshot id such as ``claude-haiku-4-5-20251001``.

    An alias (``claude-haiku-4-5``, ``claude-3-5-sonnet-latest``) can move to a new snapshot
    between two runs, so results made with it do not reproduce; it is returned only when
    ``allow_alias`` is true.

    Raises:
        LLMConfigError: an empty or malformed id, or an alias without ``allow_alias``.
    """
    if not isinstance(model_id, str) or not model_id.strip():
        raise LLMConfigError(f"a model id is required (e.g. 'claude-haiku-4-5-20251001'), got {model_id!r}")
    model_id = model_id.strip()
    if not _ID_CHARS.match(model_id):
        raise LLMConfigError(f"model id {model_id!r} has characters a model id never has")
    if is_dated(model_id) or allow_alias:
        return model_id
    raise LLMConfigError(
        f"model id {model_id!r} is an alias, not a dated snapshot (such as "
        f"'{model_family(model_id)}-YYYYMMDD', e.g. 'claude-haiku-4-5-20251001'): an alias can move to a "
        "new model between runs, so the results would not reproduce. Pass a dated id, or accept the alias "
        "explicitly (--allow-alias); the served model id of every call is recorded either way.")

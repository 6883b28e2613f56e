"""Reading what the report and the gate are given: a result.json, an audit score (every
failure a DriftError naming the file), and writing a report file."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import ValidationError

from conformance.contract.limits import MAX_RESULT_BYTES, TooLarge, read_bounded
from conformance.contract.result import RESULT_SCHEMA_VERSION, ResultDocument
from conformance.errors import DriftError
from conformance.paths import write_atomic


def _field_path(loc: tuple) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "(top level)"


def load_result(path: Path) -> ResultDocument:
    """Read and validate a result.json; every failure is a DriftError naming the file."""
    try:
        raw = read_bounded(path, MAX_RESULT_BYTES)
    except TooLarge as exc:
        raise DriftError(f"{path}: result file {exc}") from None
    except FileNotFoundError:
        raise DriftError(f"{path}: no such result file") from None
    except IsADirectoryError:
        raise DriftError(f"{path}: is a folder, not a result.json file") from None
    except OSError as exc:
        raise DriftError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        doc = ResultDocument.model_validate_json(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        if first["type"] == "json_invalid":
            raise DriftError(f"{path}: not valid JSON: {first['msg']}") from None
        if _is_baseline(raw):
            raise DriftError(f"{path}: this is a baseline, not a result.json (`compare` takes BASELINE then RESULT; "
                             "a result.json is what a run writes with --out)") from None
        raise DriftError(f"{path}: not a valid result.json: at {_field_path(first['loc'])}: "
                         f"{first['msg']}{more}") from None
    # Older result versions stay loadable (tests/contract/data/results); a newer one is refused.
    if not re.fullmatch(r"[0-9]{1,9}", doc.schema_version) or int(doc.schema_version) > int(RESULT_SCHEMA_VERSION):
        raise DriftError(f"{path}: schema_version {doc.schema_version!r} is newer than the {RESULT_SCHEMA_VERSION!r} "
                         "this drift-conformance reads; upgrade drift-conformance")
    return doc


def _is_baseline(raw: bytes | str) -> bool:
    """A gate baseline (baselines/main.json's shape: fixtures hash and cells, no receipt)."""
    import json

    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and "receipt" not in data and {"fixtures_hash", "justifications"} <= data.keys()


def load_audit(path: Path) -> dict:
    """An ``audit score --out`` file; a DriftError naming the file when it is not one."""
    import json

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DriftError(f"{path}: no such audit file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DriftError(f"{path}: not a readable audit score: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("overall"), dict) or "by_system" not in data:
        raise DriftError(f"{path}: not an audit score (write one with `drift-conformance audit score ... --out`)")
    return data


def write_report_file(path: Path, text: str) -> None:
    """Write a rendered report whole (temporary file, rename); an OutputError (a DriftError)
    naming the file and the errno when it cannot be written."""
    write_atomic(path, text, what="the report", parents=False)

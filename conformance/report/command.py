"""``drift-conformance report RESULT --html report.html [--markdown report.md]``."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import click
from pydantic import ValidationError

from conformance.contract.limits import MAX_RESULT_BYTES, TooLarge, read_bounded
from conformance.contract.result import RESULT_SCHEMA_VERSION, ResultDocument
from conformance.errors import DriftError


def _exit_2(fn):
    """The CLI's own ``_errors_exit_2``, looked up at call time.

    ``conformance.cli`` imports this module to register the command; importing it back
    at definition time would be circular.
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from conformance.cli import _errors_exit_2

        return _errors_exit_2(fn)(*args, **kwargs)

    return wrapper


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
        raise DriftError(f"{path}: not a valid result.json: at {_field_path(first['loc'])}: "
                         f"{first['msg']}{more}") from None
    # Older result versions stay loadable (tests/contract/data/results); a newer one is refused.
    if not re.fullmatch(r"[0-9]{1,9}", doc.schema_version) or int(doc.schema_version) > int(RESULT_SCHEMA_VERSION):
        raise DriftError(f"{path}: schema_version {doc.schema_version!r} is newer than the {RESULT_SCHEMA_VERSION!r} "
                         "this drift-conformance reads; upgrade drift-conformance")
    return doc


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


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise DriftError(f"{path}: cannot write the report: {exc.strerror or exc}") from None


@click.command("report", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("result", type=click.Path(dir_okay=True, path_type=Path))
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
              help="Write a self-contained HTML report (tables, plots as inline SVG) here.")
@click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
              help="Write a GitHub-flavoured Markdown report (tables, no plots) here.")
@click.option("--audit", "audit_path", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
              help="Show judge-human agreement from `drift-conformance audit score ... --out PATH`.")
@_exit_2
def report_cmd(result: Path, html_path: Path | None, markdown_path: Path | None, audit_path: Path | None) -> None:
    """Render a result.json as a readable report.

    \b
    drift-conformance report result.json --html report.html
    drift-conformance report result.json --html report.html --markdown report.md
    """
    if html_path is None and markdown_path is None:
        raise click.UsageError("give --html PATH, --markdown PATH or both: where to write the report")
    doc = load_result(result)
    audit = load_audit(audit_path) if audit_path is not None else None
    if audit is not None and audit.get("run_id") != doc.receipt.config.get("run_id"):
        raise DriftError(f"{audit_path}: the audit is of run {audit.get('run_id')!r}, but {result} is run "
                         f"{doc.receipt.config.get('run_id')!r}: show an audit with the result it sampled")
    if html_path is not None:
        from conformance.report.html import render_html

        _write(html_path, render_html(doc, audit))
        click.echo(f"wrote {html_path}", err=True)
    if markdown_path is not None:
        from conformance.report.markdown import render_markdown

        _write(markdown_path, render_markdown(doc, audit))
        click.echo(f"wrote {markdown_path}", err=True)

"""The CLI sits on top: no package below it imports click or ``conformance.cli`` (issue 18),
so a domain module raises DriftError and the CLI alone decides messages and exit codes."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "conformance"


def imported_modules(path: Path) -> set[str]:
    """Every module an ``import`` in the file names, function-level imports included."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_no_domain_module_imports_click_or_the_cli():
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if (PACKAGE / "cli") in path.parents:
            continue
        bad = sorted(m for m in imported_modules(path)
                     if m == "click" or m.startswith("click.") or m == "conformance.cli"
                     or m.startswith("conformance.cli."))
        if bad:
            offenders[str(path.relative_to(PACKAGE.parent))] = bad
    assert not offenders, offenders


def test_the_check_sees_a_function_level_import(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    from conformance.cli import Failure\n    import click\n")
    assert {"conformance.cli", "click"} <= imported_modules(sample)

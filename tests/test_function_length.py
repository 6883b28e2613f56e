"""No function in conformance/ is longer than 80 lines (issue 18): a long orchestrator is
split into stages (the job: prepare, stream, grade, score, result_document) rather than grown.

Length is counted from the ``def`` line to the function's last line (decorators left out,
docstring and comments in), as ``ast`` reports them; nested functions count inside their
parent and on their own.
"""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "conformance"
LIMIT = 80


def function_lengths(path: Path) -> dict[str, int]:
    """``{"<qualified name>": lines}`` of every function and method in the file."""
    out: dict[str, int] = {}

    def visit(node, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                out[name] = child.end_lineno - child.lineno + 1
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return out


def too_long(package: Path = PACKAGE, limit: int = LIMIT) -> dict[str, int]:
    """``{"<path relative to package>:<qualified name>": lines}`` of functions over ``limit``."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        for name, lines in function_lengths(path).items():
            if lines > limit:
                found[f"{path.relative_to(package).as_posix()}:{name}"] = lines
    return found


def test_no_function_in_conformance_exceeds_80_lines():
    found = too_long()
    assert not found, f"functions over {LIMIT} lines (split them into named steps): {found}"


def test_the_count_sees_methods_nested_functions_and_leaves_decorators_out(tmp_path):
    def body(indent: str, lines: int) -> list[str]:
        return [f"{indent}x{i} = {i}" for i in range(lines)]

    source = ["import functools", "",
              "@functools.lru_cache", "@functools.lru_cache", "def short():", *body("    ", LIMIT - 1), "",
              "class C:", "    def method(self):", *body("        ", LIMIT), "",
              "def outer():", "    def inner():", *body("        ", LIMIT), "    return inner", ""]
    sample = tmp_path / "pkg" / "sample.py"
    sample.parent.mkdir()
    sample.write_text("\n".join(source), encoding="utf-8")
    lengths = function_lengths(sample)
    assert lengths["short"] == LIMIT  # the def line and its body; the decorators are not counted
    assert lengths["C.method"] == LIMIT + 1 and lengths["outer.inner"] == LIMIT + 1
    assert lengths["outer"] == LIMIT + 3
    assert set(too_long(sample.parent)) == {"sample.py:C.method", "sample.py:outer", "sample.py:outer.inner"}

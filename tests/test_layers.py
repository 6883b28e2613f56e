"""The sub-package import graph of ``conformance/`` is acyclic and layered (issue 18).

Each unit (a sub-package such as ``conformance.scoring``, or a top-level module such as
``conformance.errors``) sits in one layer of :data:`LAYERS`, the table README.md's
"Layout" section shows; an import may only point to a unit of a strictly lower layer. The
graph is read from the code with :mod:`ast`: absolute and relative imports, at module level
and inside functions, ``TYPE_CHECKING`` blocks included.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "conformance"
README = Path(__file__).resolve().parents[1] / "README.md"

#: Bottom first. Units in one layer never import each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "paths", "secrets", "provenance"),
    ("contract",),
    ("world", "importers", "backend", "scoring"),
    ("answer", "gate"),
    ("llm",),
    ("runner",),
    ("report",),
    ("cli",),
)


def module_name(path: Path, root: Path = PACKAGE) -> str:
    """``conformance/scoring/rows.py`` -> ``conformance.scoring.rows`` (a package's
    ``__init__.py`` -> the package)."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, root: Path = PACKAGE) -> list[tuple[int, str]]:
    """(line, imported module) for every import of ``root``'s package in the file.

    Relative imports are resolved against the file's package; ``from pkg import name``
    counts as an import of ``pkg.name`` when that is a module of the tree, else of ``pkg``.
    """
    own = module_name(path, root)
    package = own if path.name == "__init__.py" else own.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                where = root.parent.joinpath(*candidate.split("."))
                is_module = where.with_suffix(".py").exists() or (where / "__init__.py").exists()
                found.append((node.lineno, candidate if is_module else target))
    inside = (pair for pair in found if pair[1] == root.name or pair[1].startswith(root.name + "."))
    return list(dict.fromkeys(inside))


def unit_of(module: str) -> str | None:
    """``conformance.scoring.rows`` -> ``scoring``; the bare root package -> None."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def unit_graph(root: Path = PACKAGE) -> dict[str, dict[str, list[str]]]:
    """unit -> imported unit -> ``"module:line imports target"`` for each such import."""
    graph: dict[str, dict[str, list[str]]] = {}
    for path in sorted(root.rglob("*.py")):
        source = module_name(path, root)
        here = unit_of(source)
        for line, target in imports_of(path, root):
            there = unit_of(target)
            if here is None and there is not None:
                graph.setdefault("<root>", {}).setdefault(there, []).append(f"{source}:{line} imports {target}")
            elif here is not None and there is not None and there != here:
                graph.setdefault(here, {}).setdefault(there, []).append(f"{source}:{line} imports {target}")
    return graph


def layer_violations(graph: dict[str, dict[str, list[str]]], layers=LAYERS) -> list[str]:
    """One line per import that does not point to a strictly lower layer (or names a unit
    the table does not hold)."""
    level = {unit: i for i, row in enumerate(layers) for unit in row}
    problems = []
    for here, targets in sorted(graph.items()):
        for there, where in sorted(targets.items()):
            if here not in level or there not in level:
                missing = here if here not in level else there
                problems += [f"{w} ({missing!r} is in no layer of LAYERS)" for w in where]
            elif level[there] >= level[here]:
                problems += [f"{w} (layer {level[here]} {here} -> layer {level[there]} {there})" for w in where]
    return problems


def find_cycle(graph: dict[str, dict[str, list[str]]]) -> list[str] | None:
    """One cycle of units (first unit repeated at the end), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(unit: str) -> list[str] | None:
        state[unit] = 1
        stack.append(unit)
        for there in sorted(graph.get(unit, {})):
            if state.get(there) == 1:
                return stack[stack.index(there):] + [there]
            if there not in state and (cycle := visit(there)):
                return cycle
        stack.pop()
        state[unit] = 2
        return None

    for unit in sorted(graph):
        if unit not in state and (cycle := visit(unit)):
            return cycle
    return None


def test_the_unit_graph_has_no_cycle():
    graph = unit_graph()
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle " + " -> ".join(cycle) + ":\n" + "\n".join(
        graph[a][b][0] for a, b in zip(cycle, cycle[1:]))


def test_every_import_points_to_a_lower_layer():
    problems = layer_violations(unit_graph())
    assert not problems, "imports against the layer table:\n" + "\n".join(problems)


def test_every_unit_is_in_the_table():
    units = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    units |= {p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    placed = {unit for row in LAYERS for unit in row}
    assert units == placed, f"not in LAYERS: {sorted(units - placed)}; gone: {sorted(placed - units)}"


def test_the_readme_shows_this_table():
    text = README.read_text(encoding="utf-8")
    rows = re.findall(r"^\s*(\d+)\s+(.+?)\s*$", text.split("Layers, bottom first", 1)[1].split("```", 2)[1],
                      re.MULTILINE)
    assert [tuple(names.replace(",", " ").split()) for _, names in rows] == list(LAYERS)


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "conformance"
    for name, text in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_a_relative_import_inside_a_function_against_the_table_is_named(tmp_path):
    root = _tree(tmp_path, {
        "contract/__init__.py": "",
        "contract/corpus.py": "def f():\n    from ..scoring import rows\n",
        "scoring/__init__.py": "",
        "scoring/rows.py": "from conformance.contract.corpus import f\n",
    })
    graph = unit_graph(root)
    assert graph == {"contract": {"scoring": ["conformance.contract.corpus:2 imports conformance.scoring.rows"]},
                     "scoring": {"contract": ["conformance.scoring.rows:1 imports conformance.contract.corpus"]}}
    assert find_cycle(graph) == ["contract", "scoring", "contract"]
    assert layer_violations(graph, (("contract",), ("scoring",))) == [
        "conformance.contract.corpus:2 imports conformance.scoring.rows (layer 0 contract -> layer 1 scoring)"]


def test_an_import_between_units_of_one_layer_or_of_an_unknown_unit_is_refused(tmp_path):
    root = _tree(tmp_path, {"paths.py": "from conformance import errors\n", "errors.py": "",
                            "extra/__init__.py": "from . import x\n", "extra/x.py": "import conformance.paths\n"})
    problems = layer_violations(unit_graph(root), (("errors", "paths"),))
    assert problems == ["conformance.extra.x:1 imports conformance.paths ('extra' is in no layer of LAYERS)",
                        "conformance.paths:1 imports conformance.errors (layer 0 paths -> layer 0 errors)"]

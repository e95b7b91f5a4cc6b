"""The import graph (docs/architecture.md): imports point down the layers only and
form no circle, counting the imports inside functions; an import left inside a
function says what heavy module it defers."""

from __future__ import annotations

import ast

from import_graph import all_arrows, circles, module_files, upward

DEFERRED = ("numba", "ray", "matplotlib", "scipy", "selenium", "pyspiel", "open_spiel",
            "pygambit", "clingo", "liteefg", "cvxpy")


def test_no_circle_and_no_upward_arrow() -> None:
    arrows = all_arrows()
    assert len(arrows) > 1000
    assert upward(arrows) == []
    assert circles(arrows) == []


def test_imports_inside_functions_defer_a_heavy_module() -> None:
    problems = []
    for module, path in module_files().items():
        lines = path.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for inner in ast.walk(node):
                if isinstance(inner, ast.Import | ast.ImportFrom):
                    said = " ".join(lines[max(0, inner.lineno - 3):inner.lineno]).lower()
                    names = ([a.name for a in inner.names] if isinstance(inner, ast.Import)
                             else [inner.module or ""])
                    heavy = any(n.split(".")[0] in DEFERRED for n in names)
                    if not ("defer" in said or heavy and "#" in said):
                        problems.append(f"{module}:{inner.lineno}: {', '.join(names)}")
    assert problems == [], "imports inside functions that defer nothing:\n" + "\n".join(problems)

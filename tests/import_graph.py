"""The project's import graph: circles and upward arrows, every import counted.

    python tests/import_graph.py [--edges] [--deferred]

Every ``import`` and ``from ... import`` of the project's own modules is an arrow, at
module level or inside a function (a function-level import closes a circle as surely
as a module-level one, only later). It prints the layers (docs/architecture.md),
the arrows that point up or sideways between ``agent`` and ``server``, every circle
(strongly connected set of modules), and the function-level imports of project
modules; exit status 1 when there is a circle or an upward arrow.
``tests/test_import_graph.py`` runs it in the suite.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("solvers", "gdl", "agent", "server")
TOP_MODULES = ("ggp_cli",)
# A package may import only packages of a lower layer, or its own.
LAYER = {"solvers": 0, "gdl": 1, "agent": 2, "server": 2, "ggp_cli": 3}


@dataclass(frozen=True)
class Arrow:
    """``source`` imports ``target`` (both dotted module names)."""

    source: str
    target: str
    line: int
    deferred: bool   # inside a function (or a class body): imported when it runs


def module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the project."""
    files = {name: ROOT / f"{name}.py" for name in TOP_MODULES}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            files[".".join(parts)] = path
    return files


def _resolve(name: str, modules: set[str]) -> str | None:
    """The longest project module that ``name`` names or lies in."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _package_of(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def arrows_of(module: str, path: Path, modules: set[str]) -> Iterator[Arrow]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = _package_of(module, path)

    def visit(node: ast.AST, deferred: bool) -> Iterator[Arrow]:
        for child in ast.iter_child_nodes(node):
            inner = deferred or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef
                                           | ast.Lambda)
            if isinstance(child, ast.Import):
                for alias in child.names:
                    target = _resolve(alias.name, modules)
                    if target and target != module:
                        yield Arrow(module, target, child.lineno, deferred)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")
                    anchor = anchor[:len(anchor) - (child.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                for alias in child.names:
                    target = _resolve(f"{base}.{alias.name}", modules) or _resolve(base, modules)
                    if target and target != module:
                        yield Arrow(module, target, child.lineno, deferred)
            else:
                yield from visit(child, inner)

    yield from visit(tree, False)


def all_arrows() -> list[Arrow]:
    files = module_files()
    names = set(files)
    return [a for module, path in files.items() for a in arrows_of(module, path, names)]


def circles(arrows: list[Arrow]) -> list[list[str]]:
    """The strongly connected sets of two or more modules (Tarjan, iterative)."""
    graph: dict[str, set[str]] = {}
    for arrow in arrows:
        # a package's __init__ that imports its own submodules is not a circle with them
        if arrow.target.startswith(arrow.source + "."):
            continue
        graph.setdefault(arrow.source, set()).add(arrow.target)
        graph.setdefault(arrow.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def upward(arrows: list[Arrow]) -> list[Arrow]:
    """Arrows into a higher layer, or between ``agent`` and ``server``."""
    bad = []
    for arrow in arrows:
        source, target = arrow.source.split(".")[0], arrow.target.split(".")[0]
        if source != target and LAYER[target] >= LAYER[source]:
            bad.append(arrow)
    return bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edges", action="store_true", help="print every arrow")
    parser.add_argument("--deferred", action="store_true",
                        help="print every function-level import of a project module")
    args = parser.parse_args(argv)
    arrows = all_arrows()
    found = circles(arrows)
    bad = upward(arrows)
    deferred = [a for a in arrows if a.deferred]
    modules = len(module_files())
    print(f"{modules} modules, {len(arrows)} arrows ({len(deferred)} inside functions)")
    print("layers (imports point down only): ggp_cli > agent | server > gdl > solvers")
    if args.edges:
        for a in arrows:
            print(f"  {a.source} -> {a.target}  (line {a.line}{', deferred' if a.deferred else ''})")
    if args.deferred:
        for a in deferred:
            print(f"  deferred: {a.source}:{a.line} -> {a.target}")
    print(f"upward arrows: {len(bad)}")
    for a in bad:
        print(f"  {a.source}:{a.line} -> {a.target}")
    print(f"circles: {len(found)}")
    for group in found:
        print("  " + " <-> ".join(group))
    return 1 if found or bad else 0


if __name__ == "__main__":
    sys.exit(main())

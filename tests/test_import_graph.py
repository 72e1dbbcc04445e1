r"""Imports go one way: no cycle among the project's modules, counting every import a module can make.

A cycle hidden by a workaround (an import inside a function, under ``TYPE_CHECKING``, or through a module
``__getattr__``) still ties two modules into one: neither can be read, tested or moved without the other. So the
graph here is read from the source with :mod:`ast` and counts imports wherever they stand, not only the ones that run
when a module loads.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(p.parent.name for p in ROOT.glob("posenc_*/__init__.py"))


def _modules() -> dict[str, Path]:
    r"""Every module of the project's packages, by dotted name (a package by its own name, not ``….__init__``)."""
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _imported(module: str, path: Path) -> Iterator[str]:
    r"""The dotted names a module's source imports, anywhere in it, relative imports resolved."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
            # `from pkg import sub` imports the submodule `pkg.sub` when there is one, else a name of `pkg`
            yield from (f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names)


def _project_module(name: str) -> str | None:
    r"""The project module that importing ``name`` loads (``a.b.c`` where only ``a.b`` is a module → ``a.b``)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> dict[str, set[str]]:
    r"""Module → the project modules it imports (itself excluded)."""
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        targets = {_project_module(name) for name in _imported(module, path)}
        graph[module] = {t for t in targets if t is not None and t != module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    r"""The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle_and_only_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_imports_inside_functions_and_under_type_checking(tmp_path: Path) -> None:
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import X\n"
    source += "def f():\n    from . import c\n"
    path = tmp_path / "a.py"
    path.write_text(source, encoding="utf-8")
    names = set(_imported("posenc_core.a", path))
    assert {"posenc_core.b", "typing"} <= names
    assert "posenc_core.c" in names or "posenc_core" in names


@pytest.mark.parametrize("package", PACKAGES)
def test_the_package_is_read(package: str) -> None:
    assert any(m == package or m.startswith(package + ".") for m in MODULES)


def test_no_import_cycle_among_the_project_modules() -> None:
    found = cycles(import_graph())
    assert not found, f"modules that import each other, directly or around a loop: {found}"

"""The package's modules import each other without cycles: a module that needs
another's internals is told so here, not at import time by a late import."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "incast"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports, at module level or inside functions."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    native = {module_name(p) for p in PACKAGE.rglob("*.pyi")} - set(modules)  # incast._core: imports nothing here
    graph: dict[str, set[str]] = {m: set() for m in [*modules, *native]}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [f"{node.module}.{a.name}" for a in node.names]
                targets = [n if n in graph else node.module for n in names]
            graph[name] |= {t for t in targets if t in graph and t != name}
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the modules along it, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return path[path.index(n) :] + [n]
            if n not in state and (found := visit(n)):
                return found
        state[m] = 2
        path.pop()
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_the_import_graph_of_the_package_has_no_cycle() -> None:
    found = cycle(import_graph())
    assert found is None, "import cycle: " + " -> ".join(found or [])


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None

"""The house rules a reader relies on, read from the source: no import cycle among the project's modules,
the four packages import one way only (agents -> reward -> graphs -> evals), and no function or method over
100 lines.

Imports are read from the syntax tree, so every import counts: at module level, inside functions and under
`TYPE_CHECKING`. Relative imports are resolved, and `from package import name` is an edge to the package
and, when `name` is a submodule, to that submodule too (importing it runs both).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from tests.source_imports import imported_names, module_name

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("agents", "graphs", "reward", "evals")
# The layers from the bottom: a module may import its own package and those below it, never one above.
LAYERS = ("agents", "reward", "graphs", "evals")
MAX_FUNCTION_LINES = 100


def module_files(root: Path, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    """Dotted module name (`reso.agents.adapters.loader`; a package by its `__init__.py`) → file."""
    return {module_name(path, root): path for package in packages for path in sorted((root / package).rglob("*.py"))}


@functools.cache
def _syntax_tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """module → the project modules it imports."""
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        names = imported_names(_syntax_tree(path), module, is_package=path.name == "__init__.py")
        graph[module] = {name for _, name in names if name in modules}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One loop per tangle of modules that import each other (a strongly connected component of more than one
    module, or a module importing itself): the shortest through its smallest module, in import order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(start: str) -> None:
        # Tarjan's algorithm, iterative: (module, its successors not yet looked at).
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            module, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[module] = min(low[module], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[module])
                if low[module] == index[module]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == module:
                            break
                    if len(component) > 1 or module in graph[module]:
                        components.append(component)

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(_one_loop(graph, component) for component in components)


def _one_loop(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest loop through the component's smallest module, to name in a failure."""
    first = min(component)
    paths = {first: [first]}
    frontier = [first]
    while frontier:
        following = []
        for module in frontier:
            for successor in sorted(graph[module] & component):
                if successor == first:
                    return paths[module]
                if successor not in paths:
                    paths[successor] = [*paths[module], successor]
                    following.append(successor)
        frontier = following
    return sorted(component)


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """`importer -> imported` for every import of a module in a higher layer (`LAYERS`)."""
    def layer(module: str) -> int:
        return LAYERS.index(module.split(".")[1])

    return sorted(f"{module} -> {imported}" for module, imports in graph.items() for imported in imports
                  if layer(imported) > layer(module))


def long_functions(modules: dict[str, Path], root: Path, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """`file:line name (N lines)`, the file relative to `root`, for every function or method longer than
    `limit` lines."""
    found = []
    for path in modules.values():
        for node in ast.walk(_syntax_tree(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > limit:
                    found.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({length} lines)")
    return sorted(found)


@pytest.fixture(scope="module")
def project_modules() -> dict[str, Path]:
    return module_files(ROOT)


def test_the_project_has_no_import_cycle(project_modules: dict[str, Path]) -> None:
    cycles = import_cycles(import_graph(project_modules))
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join([*loop, loop[0]]) for loop in cycles)


def test_the_packages_import_one_way(project_modules: dict[str, Path]) -> None:
    offenders = upward_imports(import_graph(project_modules))
    assert not offenders, f"imports against the layers {' -> '.join(LAYERS)}:\n" + "\n".join(offenders)


def test_the_layer_check_sees_an_upward_import(tmp_path: Path) -> None:
    """An import inside a function from a lower layer to a higher one is named; downward ones are not."""
    for package in ("agents", "graphs"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "agents" / "low.py").write_text("def late():\n    from reso.graphs.high import x\n")
    (tmp_path / "graphs" / "high.py").write_text("from reso.agents import low\n")
    graph = import_graph(module_files(tmp_path, ("agents", "graphs")))
    assert upward_imports(graph) == ["reso.agents.low -> reso.graphs.high"]


def test_no_function_is_over_100_lines(project_modules: dict[str, Path]) -> None:
    offenders = long_functions(project_modules, ROOT)
    assert not offenders, f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(offenders)


def test_the_checker_sees_every_kind_of_import(tmp_path: Path) -> None:
    """A cycle closed by an import inside a function, by a relative import and by `from package import
    submodule` (through the package's `__init__`) are all found; a one-way chain is not a cycle."""
    package = tmp_path / "agents"
    (package / "inner").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from reso.agents import b\n")
    (package / "b.py").write_text("def late():\n    from .a import something\n")
    (package / "inner" / "__init__.py").write_text("from reso.agents.inner.c import C\n")
    (package / "inner" / "c.py").write_text("from reso.agents import inner\n")
    (package / "d.py").write_text("import reso.agents.a\nfrom ..agents import c_missing\n")
    graph = import_graph(module_files(tmp_path, ("agents",)))
    assert graph["reso.agents.d"] == {"reso.agents", "reso.agents.a"}
    assert import_cycles(graph) == [
        ["reso.agents.a", "reso.agents.b"],
        ["reso.agents.inner", "reso.agents.inner.c"],
    ]


def test_the_checker_counts_lines_of_methods_too(tmp_path: Path) -> None:
    package = tmp_path / "agents"
    package.mkdir()
    body = "".join(f"        x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    (package / "long.py").write_text(f"class Holder:\n    def method(self) -> None:\n{body}")
    (package / "short.py").write_text("def fine() -> None:\n    pass\n")
    found = long_functions(module_files(tmp_path, ("agents",)), tmp_path)
    assert found == [f"agents/long.py:2 method ({MAX_FUNCTION_LINES + 1} lines)"]

"""The package's shape: no import cycles (lazy imports included), no module reading another's private fields."""

from __future__ import annotations

import ast

from conftest import ROOT

PACKAGE = ROOT / "streameval"
# attributes of other libraries' objects that start with an underscore by their own convention
FOREIGN = {"_asdict", "_replace", "_fields", "_make"}


def _modules() -> dict[str, ast.Module]:
    return {path.stem: ast.parse(path.read_text(), filename=str(path)) for path in sorted(PACKAGE.glob("*.py"))}


def _imports(tree: ast.Module, modules: set[str]) -> set[str]:
    """Package modules a module imports, at the top or inside functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("streameval."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("streameval."))
    return {m for m in found if m in modules and m != "__init__"}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def _own_names(tree: ast.Module) -> set[str]:
    """Names a module defines: its functions, classes and globals, and attributes it sets on self or cls."""
    own = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Assign):
            own.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            own.add(node.target.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            own.add(node.attr)
        elif isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Tuple):
                    own.update(e.value for e in stmt.value.elts if isinstance(e, ast.Constant))  # __slots__
    return own


def test_the_import_graph_has_no_cycle():
    modules = _modules()
    graph = {name: _imports(tree, set(modules)) for name, tree in modules.items()}
    assert _cycle(graph) is None, f"import cycle: {' -> '.join(_cycle(graph) or [])}"
    # the layering the protocol promises
    assert graph["io"] <= {"_codec"}, graph["io"]
    for report in ("binary_report", "multiclass_report", "regression_report", "curves", "confusion"):
        assert not graph[report] & {"binary", "multiclass", "regression", "paired"}, (report, graph[report])
    for user in ("windows", "averaging", "river", "dask", "spark", "cli"):
        assert not graph[user] & {"state", "histogram", "_codec"}, (user, graph[user])


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def _reaches(name: str, tree: ast.Module) -> list[str]:
    """Private attributes a module reads on objects, other than those it defines itself."""
    own = _own_names(tree)
    return [
        f"{name}.py:{node.lineno} .{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
        and node.attr not in own | FOREIGN
    ]


def test_no_module_reads_another_modules_private_attributes():
    assert [r for name, tree in _modules().items() for r in _reaches(name, tree)] == []


def test_the_private_reach_check_sees_one():
    reads_another = ast.parse("def f(acc):\n    return acc._counts, acc.count, acc.__class__\n")
    assert _reaches("m", reads_another) == ["m.py:2 ._counts"]
    reads_its_own = ast.parse(
        "class A:\n    def f(self, other):\n        self._counts = 1\n        return other._counts\n"
    )
    assert _reaches("m", reads_its_own) == []

"""The Python package has no import circles: Result holds data and does not import the
modules that view it (training, serving, fleet, plots register their views with _views instead),
imports used only in annotations sit under `if TYPE_CHECKING:`, every submodule imports alone in
a fresh interpreter, and Result keeps the methods and properties it had."""
import ast
import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

import clustersim as cs

SOURCE = ROOT / "python" / "clustersim"
PACKAGE = "clustersim"
MODULES = sorted(p.stem for p in SOURCE.glob("*.py") if p.stem != "__init__")
VIEW_MODULES = {"training", "serving", "fleet", "plots"}
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


# ------------------------------------------------------------------------- the import graph
def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or \
        (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(statements, *, in_functions: bool):
    """The import statements that run when `statements` run (module level: not those in function
    bodies, unless in_functions), leaving out `if TYPE_CHECKING:` blocks (their else runs)."""
    for node in statements:
        if isinstance(node, ast.If) and _is_type_checking(node):
            yield from _imports(node.orelse, in_functions=in_functions)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and not in_functions:
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, field, None)
            if isinstance(children, list):
                yield from _imports(children, in_functions=in_functions)


def _targets(node, modules) -> set[str]:
    """The package's modules an import statement imports ("__init__" for the package itself;
    _core, the compiled module, left out)."""
    found = set()
    if isinstance(node, ast.Import):
        for alias in node.names:
            parts = alias.name.split(".")
            if parts[0] == PACKAGE:
                found.add(parts[1] if len(parts) > 1 else "__init__")
    else:
        if node.level > 1:
            raise AssertionError(f"line {node.lineno}: an import above the package")
        if node.level == 1:
            base = node.module.split(".") if node.module else []
        elif node.module and node.module.split(".")[0] == PACKAGE:
            base = node.module.split(".")[1:]
        else:
            return found
        if base:
            found.add(base[0])
        else:  # from . import x: a submodule, or a name of the package's __init__
            for alias in node.names:
                if alias.name != "_core":
                    found.add(alias.name if alias.name in modules else "__init__")
    found.discard("_core")
    return found


def import_graph(source: Path = SOURCE, *, in_functions: bool = False) -> dict[str, set[str]]:
    """{module: the package's modules it imports}, modules named by file stem ("__init__" for
    the package); module-level imports only unless in_functions."""
    modules = {p.stem for p in source.glob("*.py")}
    graph = {}
    for name in sorted(modules):
        tree = ast.parse((source / f"{name}.py").read_text(), filename=f"{name}.py")
        edges = set()
        for node in _imports(tree.body, in_functions=in_functions):
            edges |= _targets(node, modules)
        edges.discard(name)  # `from . import x` inside x would be its own problem; not a circle
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle as [a, b, ..., a], or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_the_cycle_finder_finds_cycles_and_only_them():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_graph_sees_the_imports_it_must(tmp_path):
    for name, text in {"a": "from . import _core, b\nfrom .c import x\n",
                       "b": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\n"
                            "def f():\n    from .c import y\n",
                       "c": "try:\n    import clustersim.b\nexcept ImportError:\n    pass\nfrom . import name\n",
                       "__init__": "from .a import x\n"}.items():
        (tmp_path / f"{name}.py").write_text(text)
    assert import_graph(tmp_path) == {"a": {"b", "c"}, "b": set(), "c": {"b", "__init__"}, "__init__": {"a"}}
    assert import_graph(tmp_path, in_functions=True)["b"] == {"c"}
    assert find_cycle(import_graph(tmp_path)) == ["__init__", "a", "c", "__init__"]


def test_the_package_has_no_import_cycle():
    graph = import_graph()
    # Not vacuous: the edges the package is built on are seen.
    assert {"result", "training", "serving", "fleet", "plots"} <= graph["__init__"]
    assert "result" in graph["training"] and "_views" in graph["result"]
    assert find_cycle(graph) is None, f"import cycle at import time: {' -> '.join(find_cycle(graph))}"


def test_no_cycle_even_through_imports_inside_functions():
    graph = import_graph(in_functions=True)
    assert find_cycle(graph) is None, f"import cycle: {' -> '.join(find_cycle(graph))}"


def test_result_imports_no_view():
    tree = ast.parse((SOURCE / "result.py").read_text())
    modules = {p.stem for p in SOURCE.glob("*.py")}
    imported = set()
    for node in _imports(tree.body, in_functions=True):
        imported |= _targets(node, modules)
    assert not imported & (VIEW_MODULES | {"__init__"}), imported


def test_imports_used_only_in_annotations_are_under_type_checking():
    offenders = []
    for path in sorted(SOURCE.glob("*.py")):
        tree = ast.parse(path.read_text())
        bound = {}
        for node in _imports(tree.body, in_functions=False):
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                continue
            for alias in node.names:
                bound[(alias.asname or alias.name).split(".")[0]] = node.lineno
        in_annotations = set()
        for node in ast.walk(tree):
            annotations = []
            if isinstance(node, (ast.arg, ast.AnnAssign)) and node.annotation is not None:
                annotations.append(node.annotation)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
                annotations.append(node.returns)
            for annotation in annotations:
                in_annotations |= {id(n) for n in ast.walk(annotation)}
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in in_annotations}
        exported = set()
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                    for t in node.targets):
                exported = {e.value for e in node.value.elts}
        offenders += [f"{path.name}:{line} {name}" for name, line in bound.items()
                      if name not in used and name not in exported]
    assert not offenders, f"imported at run time, used only in annotations: {offenders}"


# ------------------------------------------------------------------ importing in a fresh process
def _fresh(code: str) -> subprocess.CompletedProcess:
    # The package under test (the build's copy, with _core) first on the path, as this process has it.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(cs.__file__).parent.parent)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    return subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.parametrize("name", MODULES + ["_core"])
def test_each_submodule_imports_alone_in_a_fresh_interpreter(name):
    proc = _fresh(f"import {PACKAGE}.{name}")
    assert proc.returncode == 0, proc.stderr


def test_a_fresh_import_registers_every_view():
    proc = _fresh("import clustersim.result\nfrom clustersim import _views\n"
                  "print(sorted(_views.accessors()), sorted(_views.plotters()))")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[0] == (
        "['fleet', 'memory', 'serving', 'step'] ['collective', 'serving', 'training', 'training_run']")


def test_the_package_tested_is_the_source():
    assert {p.stem for p in Path(cs.__file__).parent.glob("*.py")} == {p.stem for p in SOURCE.glob("*.py")}


# ----------------------------------------------------------------------- the public API stays
RESULT_PROPERTIES = ["flows", "jobs", "links", "timeseries", "step", "memory", "serving", "fleet"]
RESULT_METHODS = {"__init__": ["self", "summary_json", "timeseries_csv", "trace_json", "flows_csv",
                               "links_csv=''", "jobs_csv=''", "run_warnings=None"],
                  "save": ["self", "directory"], "plot": ["self", "ax=None"], "__repr__": ["self"]}


def _parameters(function) -> list[str]:
    return [p.name if p.default is inspect.Parameter.empty else f"{p.name}={p.default!r}"
            for p in inspect.signature(function).parameters.values()]


def test_result_keeps_its_methods_and_properties():
    for name in RESULT_PROPERTIES:
        assert isinstance(inspect.getattr_static(cs.Result, name), property), name
    for name, parameters in RESULT_METHODS.items():
        assert _parameters(getattr(cs.Result, name)) == parameters, name
    res = cs.Result('{"scenario": "s", "sim_time_s": 1.5}', "", "", "")
    assert (res.summary, res.warnings, res.trace, res.trace_path) == ({"scenario": "s", "sim_time_s": 1.5}, [],
                                                                      None, None)
    assert res.flows is None and res.jobs is None and res.links.empty and res.timeseries.empty
    assert repr(res) == "Result('s', sim_time_s=1.5)"
    with pytest.raises(ValueError, match="no plot for this result"):
        res.plot()


def test_result_views_are_the_view_modules_functions():
    from clustersim import _views, fleet, plots, serving, training

    assert _views.accessor("step") is training.step_frame
    assert _views.accessor("memory") is training.memory_frame
    assert _views.accessor("serving") is serving.serving_frame
    assert _views.accessor("fleet") is fleet.state_intervals
    assert {"collective", "training", "training_run", "serving"} <= set(_views.plotters())
    assert plots.collective_sizes and cs.collective_sizes is plots.collective_sizes
    with pytest.raises(RuntimeError, match="no view registered for 'nothing'"):
        _views.accessor("nothing")


def test_the_public_names_stay():
    assert cs.__all__ == ["Scenario", "Result", "ScenarioError", "Topology", "Comparison", "compare", "run",
                          "sweep", "plan", "grid_points", "random_samples", "latin_hypercube", "schema", "gantt",
                          "compare_markets", "job_states", "state_intervals", "collective_sizes",
                          "goodput_vs_interval", "serving_frame", "serving_plot", "step_frame", "memory_frame",
                          "step_breakdown", "pipeline_timeline", "size", "Sizing", "paired", "PairedComparison"]
    assert all(hasattr(cs, name) for name in cs.__all__)

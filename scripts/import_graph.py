"""The package's import graph: cycles, function-level imports, and what ``import dtf_notebook.compat.v1`` pays.

Run it from the repository root::

    python scripts/import_graph.py              # the summary (cycles, function-level imports, import cost)
    python scripts/import_graph.py --details    # plus every cycle's modules and every upward function-level import
    python scripts/import_graph.py --json       # the same figures as JSON
    python scripts/import_graph.py --no-import  # the static part only (no child process)
    python scripts/import_graph.py --root DIR   # another checkout's package (e.g. an older commit unpacked in DIR)

The static part reads every module of ``dtf_notebook`` with :mod:`ast` (nothing is imported) and draws an edge
from a module to each package module it imports: ``import a.b`` and ``from a import b`` name ``a.b`` when that is
a module, else ``a``. Imports under ``if TYPE_CHECKING:`` never run and are left out. An import inside a function
(or a method) is *function-level*; everything else runs when the module is imported (*module-level*).

* **Cycles** are the strongly connected components of more than one module, computed twice: over module-level
  edges only (what Python's import machinery has to untangle at import time) and over all edges (a function-level
  import that closes a cycle is "a cycle in disguise": the lower module still depends on the higher one).
  The package's root ``dtf_notebook/__init__.py`` re-exports ``compat.v1`` and wires the layers together (it is
  the top of every layer), so edges *into* the root are left out: importing ``dtf_notebook.x.y`` runs the root
  first, but the root is never a dependency of ``x.y``.
* **Layers** are those of ``ARCHITECTURE.md`` (``framework`` lowest, ``notebook`` highest); an upward import is
  one from a lower layer into a higher one.
* The **import cost** runs ``python -X importtime -c "import <module>"`` in a fresh process and reports the
  number of modules loaded, those of the package, whether torch, zmq and safetensors were loaded, and the
  cumulative import time of the top module.

Example:
    >>> graph = build_graph(PACKAGE_DIR)
    >>> "dtf_notebook.framework.graph" in graph.modules
    True
    >>> sorted(strongly_connected({"a": {"b"}, "b": {"a"}, "c": {"a"}}), key=len)[-1]
    ['a', 'b']
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "dtf_notebook"
PACKAGE_DIR = os.path.join(REPO, PACKAGE)

#: The layers, lowest first (a module belongs to the entry named by its first component under the package).
#: ARCHITECTURE.md's order, with what the code shows: ops' kernels use the runtime's values, resources and queues,
#: and the runtime reaches the kernels only through the op registry the ops fill, so runtime/ sits below ops/;
#: the small shared modules (errors, lazy_modules, frontend, lib, protos, platform) sit below everything.
LAYERS = [
    "errors",
    "lazy_modules",
    "frontend",
    "lib",
    "protos",
    "platform",
    "framework",
    "placement",
    "runtime",
    "ops",
    "distributed",
    "data",
    "summary",
    "layers",
    "rnn",
    "datasets",
    "train",
    "estimator",
    "server",
    "notebook",
    "compat",
    "examples",
]

#: Third-party modules a graph-building import must not load.
HEAVY = ("torch", "zmq", "safetensors")


@dataclass(frozen=True)
class Import:
    """One import statement's edge: ``source`` imports ``target`` at ``line``, in a function or not."""

    source: str
    target: str
    line: int
    function_level: bool


@dataclass
class Graph:
    """The package's modules (name -> file) and the imports between them."""

    modules: dict[str, str]
    imports: list[Import] = field(default_factory=list)

    def edges(self, function_level: bool = True) -> dict[str, set[str]]:
        """Module -> the package modules it imports (with or without function-level imports).

        Example:
            >>> g = Graph({"p.a": "", "p.b": ""}, [Import("p.a", "p.b", 1, True)])
            >>> g.edges(), g.edges(function_level=False)
            ({'p.a': {'p.b'}, 'p.b': set()}, {'p.a': set(), 'p.b': set()})
        """
        out: dict[str, set[str]] = {m: set() for m in self.modules}
        for imp in self.imports:
            if function_level or not imp.function_level:
                out[imp.source].add(imp.target)
        return out


def module_files(package_dir: str) -> dict[str, str]:
    """Every module of the package under ``package_dir``: dotted name -> file path.

    Example:
        >>> module_files(PACKAGE_DIR)["dtf_notebook.framework"].endswith("framework/__init__.py")
        True
    """
    root = os.path.dirname(package_dir)
    out: dict[str, str] = {}
    for folder, dirs, files in os.walk(package_dir):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                parts = os.path.relpath(path, root)[:-3].split(os.sep)
                if parts[-1] == "__init__":
                    parts.pop()
                out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.Module) -> Iterable[tuple[ast.Import | ast.ImportFrom, bool]]:
    """(import node, inside a function) for every import that can run."""

    def walk(node: ast.AST, in_function: bool) -> Iterable[tuple[ast.Import | ast.ImportFrom, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child, in_function
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for orelse in child.orelse:
                    yield from walk(orelse, in_function)
            else:
                inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
                yield from walk(child, inner)

    return walk(tree, False)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module name an ``ImportFrom`` starts from."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def module_imports(module: str, path: str, modules: dict[str, str]) -> list[Import]:
    """The package modules ``module`` (its source at ``path``) imports.

    Example:
        >>> files = module_files(PACKAGE_DIR)
        >>> name = "dtf_notebook.framework.op_registry"
        >>> [i.target for i in module_imports(name, files[name], files)]
        ['dtf_notebook.errors']
    """
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    is_package = path.endswith("__init__.py")
    out: list[Import] = []
    for node, in_function in _import_nodes(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = _resolve(module, is_package, node)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                targets.append(sub if sub in modules else base)
        for target in targets:
            # ``import a.b.c`` names a.b.c; an attribute of a module names the module.
            while target and target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in modules and target != PACKAGE and target != module:
                out.append(Import(module, target, node.lineno, in_function))
    return out


def build_graph(package_dir: str) -> Graph:
    """The import graph of the package under ``package_dir`` (read with ``ast``; nothing is imported).

    Example:
        >>> g = build_graph(PACKAGE_DIR)
        >>> any(i.target == "dtf_notebook.errors" for i in g.imports)
        True
    """
    modules = module_files(package_dir)
    graph = Graph(modules)
    for name, path in modules.items():
        graph.imports.extend(module_imports(name, path, modules))
    return graph


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm, iterative), each sorted.

    Example:
        >>> strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
        [['a', 'b', 'c']]
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
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
                    out.append(sorted(component))
    return sorted(out, key=lambda c: (-len(c), c))


def layer_of(module: str) -> str | None:
    """The layer of a package module (None for the package's root, which wires the layers together).

    Example:
        >>> layer_of("dtf_notebook.ops.math.binary"), layer_of("dtf_notebook")
        ('ops', None)
    """
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def upward(imp: Import) -> bool:
    """Whether an import goes from a lower layer into a higher one.

    Example:
        >>> upward(Import("dtf_notebook.framework.graph", "dtf_notebook.runtime.session", 1, True))
        True
    """
    low, high = layer_of(imp.source), layer_of(imp.target)
    return low is not None and high is not None and LAYERS.index(low) < LAYERS.index(high)


_IMPORTTIME = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def import_cost(module: str, python: str = sys.executable, repo: str = REPO) -> dict[str, object]:
    """What importing ``module`` in a fresh interpreter pays (``-X importtime``).

    Returns a dict: ``modules`` (all loaded, by importtime's count), ``package_modules``, ``heavy`` (which of
    torch/zmq/safetensors loaded) and ``seconds`` (the cumulative import time of ``module``).

    Example:
        >>> cost = import_cost("dtf_notebook.errors")
        >>> cost["heavy"]
        []
    """
    env = dict(os.environ, PYTHONPATH=repo + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run(
        [python, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        cwd=repo,
    )
    loaded, seconds = [], 0.0
    for line in result.stderr.splitlines():
        match = _IMPORTTIME.match(line)
        if match:
            loaded.append(match.group(4))
            if match.group(4) == module and not match.group(3).strip(" "):
                seconds = int(match.group(2)) / 1e6
            if match.group(4) == module:
                seconds = max(seconds, int(match.group(2)) / 1e6)
    return {
        "module": module,
        "modules": len(loaded),
        "package_modules": sum(1 for m in loaded if m == PACKAGE or m.startswith(PACKAGE + ".")),
        "heavy": [h for h in HEAVY if h in loaded],
        "seconds": round(seconds, 3),
    }


def summary(graph: Graph) -> dict[str, object]:
    """The static figures: module count, cycles (module-level and all), function-level and upward imports.

    Example:
        >>> s = summary(build_graph(PACKAGE_DIR))
        >>> s["modules"] > 100
        True
    """
    all_cycles = strongly_connected(graph.edges())
    module_cycles = strongly_connected(graph.edges(function_level=False))
    layered = {"framework", "ops", "runtime", "distributed"}
    lower_four = {m: t for m, t in graph.edges().items() if layer_of(m) in layered}
    lower_four = {m: {t for t in ts if layer_of(t) in layered} for m, ts in lower_four.items()}
    function_level = [i for i in graph.imports if i.function_level]
    cycle_of = {module: n for n, component in enumerate(all_cycles) for module in component}
    closing = [i for i in function_level if i.source in cycle_of and cycle_of[i.source] == cycle_of.get(i.target)]
    return {
        "modules": len(graph.modules),
        "imports": len(graph.imports),
        "function_level_imports": len(function_level),
        "function_level_imports_inside_cycles": len(closing),
        "upward_imports": len([i for i in graph.imports if upward(i)]),
        "upward_function_level_imports": len([i for i in function_level if upward(i)]),
        "cycles_all_edges": [len(c) for c in all_cycles],
        "cycles_module_level": [len(c) for c in module_cycles],
        "cycles_framework_ops_runtime_distributed": [len(c) for c in strongly_connected(lower_four)],
        "largest_cycle": all_cycles[0] if all_cycles else [],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--details", action="store_true", help="list every cycle and every upward import")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--no-import", action="store_true", help="skip the -X importtime child processes")
    parser.add_argument(
        "--cost-of",
        action="append",
        help="module whose import cost to measure (default: dtf_notebook.compat.v1 and framework.device_spec)",
    )
    parser.add_argument("--root", default=REPO, help="the checkout whose package to read (default: this one)")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    graph = build_graph(os.path.join(root, PACKAGE))
    figures = summary(graph)
    if not args.no_import:
        modules = args.cost_of or ["dtf_notebook.compat.v1", "dtf_notebook.framework.device_spec"]
        figures["import_cost"] = [import_cost(m, repo=root) for m in modules]
    if args.json:
        print(json.dumps(figures, indent=1))
        return
    print(f"modules: {figures['modules']}, imports between them: {figures['imports']}")
    print(
        f"function-level imports: {figures['function_level_imports']} "
        f"(upward across layers: {figures['upward_function_level_imports']}); "
        f"upward imports in all: {figures['upward_imports']}"
    )
    print(
        f"cycles (all edges), sizes: {figures['cycles_all_edges'] or 'none'} "
        f"(function-level imports inside them: {figures['function_level_imports_inside_cycles']})"
    )
    print(f"cycles (module-level edges), sizes: {figures['cycles_module_level'] or 'none'}")
    lower = figures["cycles_framework_ops_runtime_distributed"] or "none"
    print(f"cycles among framework/ops/runtime/distributed: {lower}")
    for cost in figures.get("import_cost", []):
        print(
            f"import {cost['module']}: {cost['seconds']:.3f} s, {cost['modules']} modules "
            f"({cost['package_modules']} of the package), heavy: {', '.join(cost['heavy']) or 'none'}"
        )
    if args.details:
        for component in strongly_connected(graph.edges()):
            print(f"\ncycle of {len(component)}:")
            for module in component:
                print(f"  {module}")
        print("\nupward imports (lower layer -> higher layer):")
        for imp in sorted(graph.imports, key=lambda i: (i.source, i.line)):
            if upward(imp):
                where = "function" if imp.function_level else "module"
                print(f"  {imp.source}:{imp.line} -> {imp.target} ({where}-level)")


if __name__ == "__main__":
    main()

"""The package's import rules (docs/internals.md "The map"): layers only point down, and no module loops.

Every import is read from the source with ``ast`` — lazy ones inside functions too, since a lazy import
is still a dependency (issue 19 found three loops hidden that way).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import agentctx_widgets

ROOT = Path(agentctx_widgets.__file__).parent
PACKAGE = ROOT.name

LAYERS: dict[str, int] = {
    "context": 0,       # seed 001: messages, the store, usage; imports nothing of ours
    "_js_types": 0,     # what our messages call a value's type (JavaScript's names); imports nothing
    "output": 1,        # seed 000's Output API and the delta engine
    "models": 1,        # model connectors and recordings
    "hooks": 2,         # the seed's hook lifecycle, JavaScript and Python hooks
    "html": 2,          # static HTML of contexts and outputs
    "yao": 3,           # today's Yao: assistants, TypeScript hooks, its request lifecycle
    "widget": 3,        # ContextView, the settled documents, watch
    "turns": 4,         # run_turn: picks the seed lifecycle or a Yao assistant's
    "_usage_report": 1,
    "notebook": 5,      # show / usage / run for any front end
    "suite": 5,         # turn-level diffs of two runs (and issue 22's suites)
    "_magic_args": 5,
    "magics": 6,        # %agentctx
    "nbval_plugin": 6,
    "__main__": 6,
    "(root)": 7,        # the front door: lazy re-exports of everything
}
"""Each top-level module or package of ``agentctx_widgets``, and its layer: a layer imports only lower ones
(and its own package)."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    base = ROOT.parent / name.replace(".", "/")
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def imports() -> dict[str, set[str]]:
    """module -> the modules of ours it imports (``from pkg import sub`` counts as ``pkg.sub``)."""
    found: dict[str, set[str]] = defaultdict(set)
    for path in ROOT.rglob("*.py"):
        name = module_name(path)
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target.split(".")[0] != PACKAGE:
                    continue
                subs = [f"{target}.{alias.name}" for alias in node.names if is_module(f"{target}.{alias.name}")]
                found[name].update(subs if len(subs) == len(node.names) else [target])
            elif isinstance(node, ast.Import):
                found[name].update(a.name for a in node.names if a.name.split(".")[0] == PACKAGE)
        found.setdefault(name, set())
    return found


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "(root)"


def test_every_top_level_module_has_a_layer() -> None:
    assert {layer_of(module) for module in imports()} == set(LAYERS)


def test_layers_only_import_lower_layers() -> None:
    wrong = sorted(f"{a} imports {b}" for a, targets in imports().items() for b in targets
                   if layer_of(a) != layer_of(b) and LAYERS[layer_of(b)] >= LAYERS[layer_of(a)])
    assert wrong == []


def test_no_module_imports_itself_back() -> None:
    graph = imports()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    loops: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph.get(node, ()):
            if other not in graph:
                continue
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                loops.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    assert loops == []

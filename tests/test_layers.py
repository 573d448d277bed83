"""The package's import rules (docs/internals.md "The map"): layers only point down, and no module loops.

Every import is read from the source with ``ast`` — lazy ones inside functions too, since a lazy import
is still a dependency (issue 19 found three loops hidden that way), and ``importlib.import_module`` /
``__import__`` calls whose names are literals (an f-string of literals and ``__package__`` / ``__name__``
counts; a name computed at run time cannot be seen).
"""

from __future__ import annotations

import ast
import textwrap
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


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str, root: Path = ROOT) -> bool:
    base = root.parent / name.replace(".", "/")
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def resolved(name: str, level: int, package: str) -> str:
    """``name`` imported ``level`` packages up from ``package`` (``from ..x import`` is level 2)."""
    if not level:
        return name
    base = package.split(".")[: len(package.split(".")) - level + 1]
    return ".".join(base + ([name] if name else []))


def literal(node: ast.AST | None, module: str, package: str) -> str | None:
    """The text of a string literal, or of an f-string made of literals, ``{__package__}`` and ``{__name__}``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name) and node.id in ("__package__", "__name__"):
        return package if node.id == "__package__" else module
    if isinstance(node, ast.JoinedStr):
        parts = [literal(v.value if isinstance(v, ast.FormattedValue) else v, module, package) for v in node.values]
        return None if None in parts else "".join(parts)  # type: ignore[arg-type]
    return None


def call_imports(node: ast.Call, module: str, package: str) -> list[str]:
    """What ``importlib.import_module(NAME[, PACKAGE])`` or ``__import__(NAME, ..., fromlist, level)`` imports,
    when its names are literals: a lazy import by call is still an import. Computed names are not seen."""
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    keywords = {k.arg: k.value for k in node.keywords}
    args = [*node.args, *([None] * 5)]
    name = literal(args[0] if node.args else keywords.get("name"), module, package)
    if name is None or called not in ("import_module", "__import__"):
        return []
    if called == "import_module":
        if not name.startswith("."):
            return [name]
        anchor = literal(args[1] if len(node.args) > 1 else keywords.get("package"), module, package)
        stripped = name.lstrip(".")
        return [] if anchor is None else [resolved(stripped, len(name) - len(stripped), anchor)]
    level_node = args[4] if len(node.args) > 4 else keywords.get("level")
    level = level_node.value if isinstance(level_node, ast.Constant) and isinstance(level_node.value, int) else 0
    target = resolved(name, level, package)
    fromlist = args[3] if len(node.args) > 3 else keywords.get("fromlist")
    names = [literal(e, module, package) for e in getattr(fromlist, "elts", [])]
    return [target, *(f"{target}.{n}" for n in names if n)]


def imports(root: Path = ROOT) -> dict[str, set[str]]:
    """module -> the modules of ours it imports (``from pkg import sub`` counts as ``pkg.sub``), by statement
    or by an ``import_module`` / ``__import__`` call with literal names, at the top or inside a function."""
    ours = root.name
    found: dict[str, set[str]] = defaultdict(set)
    for path in root.rglob("*.py"):
        name = module_name(path, root)
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                target = resolved(node.module or "", node.level, package)
                if target.split(".")[0] != ours:
                    continue
                subs = [f"{target}.{a.name}" for a in node.names if is_module(f"{target}.{a.name}", root)]
                found[name].update(subs if len(subs) == len(node.names) else [target])
            elif isinstance(node, ast.Import):
                found[name].update(a.name for a in node.names if a.name.split(".")[0] == ours)
            elif isinstance(node, ast.Call):
                found[name].update(t for t in call_imports(node, name, package)
                                   if t.split(".")[0] == ours and is_module(t, root))
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


def loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import loops of ``graph``: its strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
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
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_itself_back() -> None:
    assert loops(imports()) == []


def write_package(root: Path, files: dict[str, str]) -> Path:
    package = root / PACKAGE
    for relative, text in {"__init__.py": "", "models/__init__.py": "", **files}.items():
        (package / relative).parent.mkdir(parents=True, exist_ok=True)
        (package / relative).write_text(textwrap.dedent(text), encoding="utf-8")
    return package


def test_a_loop_behind_import_module_is_seen(tmp_path: Path) -> None:
    """The loop issue 19 found (connector -> registry, lazily; registry -> the connectors by importlib)."""
    package = write_package(tmp_path, {
        "models/connector.py": """
            def spec():
                from .registry import PROVIDERS  # lazy, inside a function
                return PROVIDERS
            """,
        "models/registry.py": """
            import importlib
            def chat():
                return importlib.import_module(f"{__package__}.openai_chat")
            """,
        "models/openai_chat.py": "from .connector import spec\n",
    })
    graph = imports(package)
    assert graph[f"{PACKAGE}.models.registry"] == {f"{PACKAGE}.models.openai_chat"}
    assert loops(graph) == [[f"{PACKAGE}.models.connector", f"{PACKAGE}.models.openai_chat",
                             f"{PACKAGE}.models.registry"]]


def test_import_calls_with_literal_names_are_imports(tmp_path: Path) -> None:
    package = write_package(tmp_path, {
        "context/__init__.py": "",
        "context/store.py": "",
        "context/usage.py": "",
        "output.py": "",
        "models/a.py": f"""
            import importlib
            from importlib import import_module
            def f(name):
                importlib.import_module("{PACKAGE}.output")
                import_module("..context.store", __package__)
                import_module(".b", package="{PACKAGE}.models")
                __import__("{PACKAGE}.context", fromlist=["usage"])
                importlib.import_module(name)  # computed: not seen
                importlib.import_module("json")  # not ours
            """,
        "models/b.py": "__import__('context.store', globals(), None, [], 2)\n",
    })
    graph = imports(package)
    assert graph[f"{PACKAGE}.models.a"] == {f"{PACKAGE}.output", f"{PACKAGE}.context.store", f"{PACKAGE}.models.b",
                                            f"{PACKAGE}.context", f"{PACKAGE}.context.usage"}
    assert graph[f"{PACKAGE}.models.b"] == {f"{PACKAGE}.context.store"}

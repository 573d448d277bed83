"""docs/internals.md "The map" stays true: its layer table is tests/test_layers.py's ``LAYERS`` row for row,
it names every top-level module and every module inside each package, its *may import* and *outside
packages* columns are exactly what each module imports, its list of stdlib-``json`` users is exact, and
every file it names exists.

``LAYERS`` and the import reader are read from tests/test_layers.py when the tests run (that file owns the
import rules; this one only holds the page to them), so a change there shows up here at once.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from collections import defaultdict
from functools import cache
from pathlib import Path
from types import ModuleType

import agentctx_widgets

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "internals.md"
PACKAGE_DIR = Path(agentctx_widgets.__file__).resolve().parent
JUPYTER = {"anywidget", "ipywidgets", "traitlets", "IPython", "nbval", "ipykernel", "jupyter_client", "comm"}


@cache
def layers_module() -> ModuleType:
    """tests/test_layers.py loaded by path under a private name (pytest collects the file itself)."""
    spec = importlib.util.spec_from_file_location("_layers_for_internals_map", REPO / "tests" / "test_layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def section(title: str) -> str:
    """The text under the heading ``title`` (any level), up to the next heading of the same or a higher level."""
    lines = DOC.read_text(encoding="utf-8").splitlines()
    for start, line in enumerate(lines):
        match = re.match(r"(#+) (.*)$", line)
        if match and match.group(2).strip() == title:
            level = len(match.group(1))
            end = next((i for i in range(start + 1, len(lines))
                        if (m := re.match(r"(#+) ", lines[i])) and len(m.group(1)) <= level), len(lines))
            return "\n".join(lines[start + 1:end])
    raise AssertionError(f"docs/internals.md has no heading {title!r}")


def ticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def key_of(cell: str) -> str:
    """A table row's module cell (`context/`, `turns.py`, `__init__.py`) as LAYERS names it."""
    names = ticked(cell)
    assert len(names) == 1, f"the module cell {cell!r} should hold one `name`"
    name = names[0]
    if name == "__init__.py":
        return "(root)"
    if name.endswith("/"):
        assert (PACKAGE_DIR / name / "__init__.py").is_file(), f"{name} in the map is not a package"
        return name[:-1]
    assert name.endswith(".py") and (PACKAGE_DIR / name).is_file(), f"{name} in the map is not a module"
    return name[:-3]


@cache
def table() -> dict[str, tuple[int, set[str], set[str]]]:
    """module -> (layer, may import, outside packages), from the map's table."""
    rows: dict[str, tuple[int, set[str], set[str]]] = {}
    for line in section("The map").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 5 or not cells[0].isdigit():
            continue
        key = key_of(cells[1])
        assert key not in rows, f"{key} has two rows in the map"
        rows[key] = (int(cells[0]), set(ticked(cells[3])), set(ticked(cells[4])))
    assert rows, "the map's table has no rows of the form | layer | `module` | owns | may import | outside |"
    return rows


def files_of(top: str) -> list[Path]:
    if top == "(root)":
        return [PACKAGE_DIR / "__init__.py"]
    path = PACKAGE_DIR / top
    return sorted(path.rglob("*.py")) if path.is_dir() else [path.with_suffix(".py")]


@cache
def our_imports() -> dict[str, set[str]]:
    """top-level module -> the other top-level modules of ours it imports, as test_layers reads imports;
    the root also loads its front door's names by module name (``_EXPORTS``, ``_ALSO``)."""
    layers = layers_module()
    found: dict[str, set[str]] = defaultdict(set)
    for module, targets in layers.imports().items():
        source = layers.layer_of(module)
        found[source].update(layers.layer_of(t) for t in targets if layers.layer_of(t) != source)
    by_name = {*agentctx_widgets._EXPORTS.values(), *agentctx_widgets._ALSO.values()}
    found["(root)"].update(name.split(".")[0] for name in by_name)
    return found


def outside_names(path: Path) -> set[str]:
    """The third-party packages ``path`` imports (absolute imports, lazy ones too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            first = name.split(".")[0]
            if first not in sys.stdlib_module_names and first not in ("__future__", PACKAGE_DIR.name):
                found.add(first)
    return found


@cache
def outside_imports() -> dict[str, set[str]]:
    """top-level module -> the third-party packages its files import."""
    return {top: set().union(*(outside_names(path) for path in files_of(top))) for top in layers_module().LAYERS}


def test_the_table_is_test_layers_LAYERS() -> None:
    assert {key: row[0] for key, row in table().items()} == layers_module().LAYERS


def test_every_top_level_module_and_package_has_a_row() -> None:
    present = {"(root)"}
    for path in PACKAGE_DIR.iterdir():
        if path.suffix == ".py" and path.name != "__init__.py":
            present.add(path.stem)
        elif path.is_dir() and (path / "__init__.py").is_file():
            present.add(path.name)
    assert set(table()) == present


def test_may_import_is_exactly_what_each_module_imports() -> None:
    layers = layers_module().LAYERS
    undeclared = sorted(f"{top} imports {b}, which its row does not list"
                        for top, targets in our_imports().items() for b in targets - table()[top][1])
    stale = sorted(f"{top}'s row lists {b}, which it does not import"
                   for top, (_, listed, _) in table().items() for b in listed - our_imports().get(top, set()))
    upward = sorted(f"{top} (layer {layers[top]}) may import {b} (layer {layers.get(b)})"
                    for top, (_, listed, _) in table().items() for b in listed
                    if b not in layers or layers[b] >= layers[top])
    assert (undeclared, stale, upward) == ([], [], [])


def test_outside_packages_are_exactly_what_each_module_imports() -> None:
    wrong = {top: {"imports": sorted(outside_imports().get(top, set())), "row": sorted(row[2])}
             for top, row in table().items() if outside_imports().get(top, set()) != row[2]}
    assert wrong == {}


def test_only_the_widget_the_magics_and_the_nbval_plugin_import_jupyter() -> None:
    """The page's rule (DESIGN.md's): Jupyter packages are imported only by widget/, magics.py, nbval_plugin.py."""
    allowed = {"widget", "magics", "nbval_plugin"}
    elsewhere = sorted(f"{path.relative_to(PACKAGE_DIR).as_posix()} imports {name}"
                       for top in set(layers_module().LAYERS) - allowed for path in files_of(top)
                       for name in sorted(outside_names(path) & JUPYTER))
    assert elsewhere == []
    assert {top for top, names in outside_imports().items() if names & JUPYTER} == allowed


def stdlib_json_users() -> set[str]:
    users = set()
    for path in PACKAGE_DIR.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Import) and any(alias.name == "json" for alias in node.names)) or (
                    isinstance(node, ast.ImportFrom) and not node.level and node.module == "json"):
                users.add(path.relative_to(PACKAGE_DIR).as_posix())
    return users


def test_the_stdlib_json_list_is_exact() -> None:
    text = section("The map")
    start = text.index("The standard library's `json` is imported by")
    listed = set(re.findall(r"^  - `([\w/]+\.py)`", text[start:], flags=re.M))
    listed |= set(re.findall(r"^  - `[\w/]+\.py` and `([\w/]+\.py)`", text[start:], flags=re.M))
    assert listed == stdlib_json_users()


def concern_bullets() -> dict[str, set[str]]:
    """package -> the file names its bullet in "Where a concern lives" gives."""
    bullets: dict[str, set[str]] = {}
    current = None
    for line in section("Where a concern lives").splitlines():
        match = re.match(r"- \*\*`(\w+)/`\*\*", line)
        if match:
            current = match.group(1)
            bullets[current] = set()
        elif not line.startswith("  "):
            current = None
        if current is not None:
            bullets[current].update(name for name in ticked(line) if re.fullmatch(r"[\w/.-]+\.(py|js)", name))
    return bullets


def test_every_module_inside_a_package_is_placed() -> None:
    bullets = concern_bullets()
    for top in layers_module().LAYERS:
        package = PACKAGE_DIR / top
        if not package.is_dir():
            continue
        present = {p.relative_to(package).as_posix() for p in package.rglob("*")
                   if p.suffix in (".py", ".js") and p.name != "__init__.py" and "__pycache__" not in p.parts}
        assert top in bullets, f"'Where a concern lives' has no bullet for {top}/"
        named = {name for name in bullets[top] if name != "__init__.py"}
        assert named == present, top


def test_every_file_the_page_names_exists() -> None:
    """A `name.py` / `.js` / `.json` / `.mjs` the page names is a file of the repo (paths are read from the
    repository, the package, js/, js/src/ and js/src/render/; a bare name must exist in one of them)."""
    bases = [REPO, REPO / "tests", PACKAGE_DIR, REPO / "js", REPO / "js" / "src", REPO / "js" / "src" / "render", REPO / "js" / "lab"]
    names = {name for name in ticked(DOC.read_text(encoding="utf-8"))
             if re.fullmatch(r"[\w./-]+\.(py|js|json|mjs|css|cfg)", name)}
    missing = sorted(name for name in names
                     if not any((base / name).is_file() for base in bases)
                     and not any(PACKAGE_DIR.rglob(name)))
    assert missing == []


def cited_headings() -> list[tuple[str, str]]:
    """(file, heading) for every heading of the page another file of the repo cites (the page's name, then
    the heading in double quotes)."""
    files = [*PACKAGE_DIR.rglob("*.py"), *(REPO / "tests").glob("*.py"), *(REPO / "js" / "src").rglob("*.js"),
             *(REPO / "js" / "lab").glob("*.js"), REPO / "README.md", *(REPO / "docs").glob("*.md")]
    return sorted({(path.relative_to(REPO).as_posix(), title) for path in files if path.is_file()
                   for title in re.findall(r'internals\.md[^"\n]{0,3}"([^"\n]+)"', path.read_text(encoding="utf-8"))})


def test_the_headings_other_files_cite_are_there() -> None:
    headings = [re.sub(r"^#+ ", "", line).replace("`", "") for line in DOC.read_text(encoding="utf-8").splitlines()
                if line.startswith("#")]
    cited = cited_headings()
    assert len(cited) >= 4  # test_layers.py, hooks/ and output/ __init__, js/src/protocol.js at least
    missing = [(where, title) for where, title in cited
               if not any(heading.startswith(title.replace("`", "")) for heading in headings)]
    assert missing == []

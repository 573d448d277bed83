"""No function in the package is over 80 lines (issue 19: "a function has one job").

A function's length is counted from its ``def`` line to its last line, decorators
excluded, nested functions counted inside their parent as well as on their own.
"""

from __future__ import annotations

import ast
from pathlib import Path


PACKAGE = Path(__file__).resolve().parent.parent / "agentctx_widgets"
MAX_LINES = 80


def long_functions(root: Path = PACKAGE, limit: int = MAX_LINES) -> list[str]:
    """``file:line name (N lines)`` for every function under ``root`` over ``limit`` lines."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > limit:
                    where = path.relative_to(root.parent)
                    found.append(f"{where}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_no_function_is_over_80_lines():
    found = long_functions()
    assert not found, f"functions over {MAX_LINES} lines:\n" + "\n".join(found)


def test_the_check_sees_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(
        f"def short():\n    return 1\n\n\nasync def long():\n{body}\n", encoding="utf-8"
    )
    assert long_functions(tmp_path / "pkg") == [f"pkg/mod.py:5 long ({MAX_LINES + 1} lines)"]
    assert long_functions(tmp_path / "pkg", limit=MAX_LINES + 1) == []


def test_the_package_is_found():
    assert (PACKAGE / "__init__.py").is_file()
    assert len(list(PACKAGE.rglob("*.py"))) > 20


if __name__ == "__main__":  # pragma: no cover
    print("\n".join(long_functions()) or "none")

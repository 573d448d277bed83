"""The notebooks that are regression checks (run by pytest --nbval) are stored as nbval needs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def test_every_notebook_is_there() -> None:
    assert [path.name for path in NOTEBOOKS] == ["hooks.ipynb", "models.ipynb", "regression.ipynb", "suite.ipynb", "tour.ipynb", "usage.ipynb",
                                                 "yao_assistant.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_notebook_is_stored_executed_with_the_python3_kernel(path: Path) -> None:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert notebook["metadata"]["kernelspec"] == {"name": "python3", "display_name": "Python 3", "language": "python"}
    code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    # executed top to bottom in one kernel (nbval compares only cells with stored outputs)
    assert [cell["execution_count"] for cell in code] == list(range(1, len(code) + 1))
    assert sum(bool(cell["outputs"]) for cell in code) >= len(code) // 2
    for cell in code:
        for output in cell["outputs"]:
            assert output["output_type"] != "error", (path.name, cell["source"][:80])

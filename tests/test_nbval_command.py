"""The README's nbval command, run exactly as printed, names the failing notebook.

Why this can go wrong: pytest picks its rootdir and config file from the command's paths before any
plugin has registered its options, so the value of a space-separated ``--nbval-sanitize-with PATH`` is
taken for a test path. The common ancestor of the notebook and the sanitizer (inside the installed
package) then becomes the root, another project's pytest config may apply, and a failure reads
``FAILED ../../work/main::Cell 0`` instead of naming the notebook. ``--nbval-sanitize-with=PATH`` is
one token pytest leaves alone. The command is read from README.md's code block, so this test breaks
when the README changes.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
SECTION = "### Notebooks as regression checks"


def readme_command(readme: Path = README) -> str:
    """The first ``bash`` block of the README's regression-check section, continuation lines joined as bash
    joins them (the backslash and newline go, the next line's indentation stays)."""
    text = readme.read_text(encoding="utf-8")
    start = text.index(SECTION)
    block = re.search(r"```bash\n(.*?)\n```", text[start:], re.S)
    assert block is not None, f"README.md: no ```bash block under {SECTION!r}"
    lines = block.group(1).replace("\\\n", "").strip().splitlines()
    activate = "source .venv/bin/activate"  # the clone's venv; the test runs with this venv's PATH already
    return "\n".join(line for line in lines if line.strip() != activate).strip()


def failing_notebook(path: Path) -> None:
    """One cell whose stored output (3) differs from what it prints (2)."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = nbformat.v4.new_code_cell("print(1 + 1)", execution_count=1)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="3\n")]
    notebook.cells = [cell]
    nbformat.write(notebook, path)


def run_readme_command(tmp_path: Path, readme: Path = README) -> tuple[str, subprocess.CompletedProcess]:
    command = readme_command(readme)
    assert command.startswith("pytest --nbval "), command
    [name] = [word for word in shlex.split(command) if word.endswith(".ipynb")]
    failing_notebook(tmp_path / name)
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # this venv's pytest and python
    finished = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300)
    return name, finished


def test_the_readme_command_names_the_failing_notebook(tmp_path: Path) -> None:
    name, finished = run_readme_command(tmp_path)
    assert finished.returncode == 1, finished.stdout + finished.stderr  # 1 = tests failed (not a usage error)
    failed = [line for line in finished.stdout.splitlines() if line.startswith("FAILED ")]
    assert [line.split(" - ")[0] for line in failed] == [f"FAILED {name}::Cell 0"], finished.stdout
    assert f"rootdir: {tmp_path}" in finished.stdout.splitlines()  # rooted at the notebook, no foreign config

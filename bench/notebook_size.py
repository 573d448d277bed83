"""Notebook size: an executed notebook with 1, 3 and 10 ContextViews, bundle shared vs carried per view;
and 20 scripted turns, each in a view of its own (the last release) vs settled into documents (now).

``jupyter nbconvert --execute`` stores the widget state of every model the kernel opened (closed ones
too) in ``metadata.widgets``. Each view used to carry anywidget's ``_esm``/``_css`` (the whole front-end
bundle); now one ``FrontEndBundle`` model per kernel carries it, gzipped, and each view a small loader. The "per view"
column is the old behaviour, which ``AGENTCTX_WIDGETS_INLINE_BUNDLE=1`` still gives (marimo, Colab).
Both columns are measured in one run, each notebook executed by nbconvert in a fresh kernel.

Run: ``.venv/bin/python bench/notebook_size.py`` (``--views 1 3 10`` picks the counts).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
KB = 1024

CELL = """from agentctx_widgets import Context, ContextView
ctx{i} = Context([{{"type": 2, "content": [{{"type": "text", "text": "Question {i}?"}}]}},
                 {{"type": 3, "content": [{{"type": "text", "text": "Answer **{i}**."}}]}}], name="view {i}")
ContextView(ctx{i})"""


SETUP = ("%load_ext agentctx_widgets\nfrom IPython.display import display\n"
         "from agentctx_widgets import Context, ContextView, ScriptedModel, run_turn\nchat = Context(name='chat')")
OLD_TURN = """view = ContextView(chat, title="chat")
display(view)
text = "Question {i}: what is {i} squared, and why?"
run_turn(chat, text, view=view, model=ScriptedModel([f"Scripted reply to: {{text}}"]))
view.settle()"""
TURN = '%agentctx run chat "Question {i}: what is {i} squared, and why?"'


def notebook(views: int, kind: str = "views") -> dict:
    sources = ([CELL.format(i=i) for i in range(views)] if kind == "views" else
               [SETUP] + [(OLD_TURN if kind == "old-turns" else TURN).format(i=i) for i in range(views)])
    cells = [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
              "source": source} for i, source in enumerate(sources)]
    return {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                                        "name": "python3"}, "language_info": {"name": "python"}}}


def executed_size(views: int, *, inline: bool, workdir: Path, kind: str = "views") -> tuple[int, int]:
    """Execute a notebook of ``views`` views (or turns) with nbconvert; return (file bytes, metadata.widgets bytes)."""
    source = workdir / f"{kind}{views}_{'inline' if inline else 'shared'}.ipynb"
    source.write_text(json.dumps(notebook(views, kind), indent=1))
    env = dict(os.environ, PYTHONPATH=str(REPO), JUPYTER_PATH=str(VENV_BIN.parent / "share" / "jupyter"))
    env.pop("AGENTCTX_WIDGETS_INLINE_BUNDLE", None)
    if inline:
        env["AGENTCTX_WIDGETS_INLINE_BUNDLE"] = "1"
    executed = source.with_name(source.stem + ".out.ipynb")
    subprocess.run([str(VENV_BIN / "jupyter"), "nbconvert", "--to", "notebook", "--execute",
                    "--output", executed.name, str(source)],
                   env=env, cwd=workdir, check=True, capture_output=True, timeout=600)
    data = json.loads(executed.read_text())
    widgets = data["metadata"].get("widgets", {})
    return executed.stat().st_size, len(json.dumps(widgets, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--views", type=int, nargs="+", default=[1, 3, 10])
    parser.add_argument("--turns", type=int, default=20, help="scripted turns in the turns table (0: skip it)")
    args = parser.parse_args()
    bundle = REPO / "agentctx_widgets" / "static"
    print(f"## notebook size: nbconvert --execute, widget state stored "
          f"(widget.js {(bundle / 'widget.js').stat().st_size / KB:.1f} KB, "
          f"widget.css {(bundle / 'widget.css').stat().st_size / KB:.1f} KB)")
    print("| views | bundle per view: file | shared bundle: file | per view: widget state | shared: widget state |")
    print("|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="actx-nbsize-") as tmp:
        for views in args.views:
            inline = executed_size(views, inline=True, workdir=Path(tmp))
            shared = executed_size(views, inline=False, workdir=Path(tmp))
            print(f"| {views} | {inline[0] / KB:.1f} KB | {shared[0] / KB:.1f} KB "
                  f"| {inline[1] / KB:.1f} KB | {shared[1] / KB:.1f} KB |")
        if args.turns:
            old = executed_size(args.turns, inline=True, workdir=Path(tmp), kind="old-turns")
            new = executed_size(args.turns, inline=False, workdir=Path(tmp), kind="turns")
            print(f"\n## {args.turns} scripted turns, nbconvert --execute")
            print("| | file | widget state |\n|---|---:|---:|")
            print(f"| a ContextView displayed per turn, bundle in each (the last release's %agentctx run) "
                  f"| {old[0] / KB:.1f} KB | {old[1] / KB:.1f} KB |")
            print(f"| %agentctx run: each turn settles into its document | {new[0] / KB:.1f} KB | {new[1] / KB:.1f} KB |")


if __name__ == "__main__":
    main()

"""A notebook saved with JupyterLab's DEFAULT settings (widget state not saved) reopens with its views.

The view's output carries its snapshot (application/vnd.agentctx.view+json), drawn by the package's
prebuilt extension with no widget model; text/html for viewers without it (nbconvert, JavaScript off).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness import ARTIFACTS, HANG, VENV_BIN, write_notebook

pytestmark = pytest.mark.browser

SAVED = ".agentctx-saved"
SNAPSHOT = ".agentctx-saved-view"
LIVE = ".agentctx-view"
SAVED_MIME = "application/vnd.agentctx.view+json"
SHOTS_COPY = Path("/tmp/agentctx_helpers/shots")

BUILD = r'''
from agentctx_widgets import Context, ContextView, Output
ctx = Context([{"type": 1, "content": [{"type": "text", "text": "You are a terse tutor."}]},
               {"type": 2, "content": [{"type": "text", "text": "What is 2+2?"}]}], name="reopen")
view = ContextView(ctx, model="gpt-4o", title="reopen")
out = Output(sinks=[view])
view
'''

# The text grows in steps the test can watch: each step waits for the page to show it (an `input()`
# would need a front end; instead the test runs this cell once per step through the kernel).
STEP = r'''
out.send({{"id": "m", "type": "text", "props": {{"content": "{text}"}}, "delta": {delta},
          "delta_path": "content", "delta_action": "append"}})
out.flush()
'''

REPLY = r'''
ctx.append({"type": 3, "content": [{"type": "text", "text": "It is **four**."}]})
view.settle()
'''

NO_WIDGET_STATE = "() => !document.body.textContent.includes('model not found')"


def saved_file(lab, name):
    return json.loads((lab.server.root / name).read_text())


def view_output(notebook):
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            if SAVED_MIME in output.get("data", {}):
                return output
    raise AssertionError("no output holds the saved view")


def save(lab):
    lab.command("docmanager:save")
    lab.wait_for("() => { const w = window.jupyterapp.shell.currentWidget;"
                 " return !!w && w.context && !w.context.model.dirty; }")


def shot(lab, name, selector=None):
    """A screenshot in the artifacts, copied to SHOTS_COPY too when that folder exists (for review)."""
    path = lab.screenshot(name, selector)
    if SHOTS_COPY.is_dir():
        shutil.copy(path, SHOTS_COPY / path.name)
    return path


def test_saved_with_default_settings_reopens_with_the_conversation(lab):
    write_notebook(lab.server.root, "reopen.ipynb", [BUILD, REPLY])
    lab.open("reopen.ipynb")
    lab.run_cell(0)
    lab.wait_for("(sel) => !!document.querySelector(sel)", f"{SAVED}[data-agentctx-mode=live] {LIVE}")
    # live: the widget streams (the text grows as the kernel sends it)
    shown = ""
    for piece in ("The answer", " is", " four"):
        lab.execute(STEP.format(text=piece, delta=bool(shown)))
        shown += piece
        lab.wait_for("([sel, text]) => { const el = document.querySelector(sel);"
                     " return !!el && el.textContent.trim() === text; }", [f"{LIVE} .actx-out[data-output-id=m]", shown])
    lab.run_cell(1)
    lab.wait_for("(sel) => { const el = document.querySelector(sel); return !!el && el.textContent.includes('four.'); }",
                 LIVE)
    save(lab)

    saved = view_output(saved_file(lab, "reopen.ipynb"))
    state = saved["data"][SAVED_MIME]["state"]
    assert [m["content"][0]["text"] for m in state["context"]] == [
        "You are a terse tutor.", "What is 2+2?", "It is **four**."]
    assert state["outputs"]["messages"]["m"]["props"]["content"] == "The answer is four"
    assert "It is <strong>four</strong>." in "".join(saved["data"]["text/html"])
    # default settings: Lab saves no widget state, so nothing but the output can draw the view
    assert "widgets" not in saved_file(lab, "reopen.ipynb")["metadata"]

    lab.server.shutdown_kernels()
    lab.open("reopen.ipynb", wait_kernel=False)
    lab.wait_for("(sel) => { const el = document.querySelector(sel);"
                 " return !!el && el.textContent.includes('four'); }", SNAPSHOT)
    page = lab.page
    assert page.locator(f"{SAVED}[data-agentctx-mode=snapshot]").count() == 1
    snapshot = page.locator(SNAPSHOT)
    texts = snapshot.locator(".actx-msg").all_text_contents()
    assert len(texts) == 3
    assert "What is 2+2?" in texts[1] and "four" in texts[2]
    assert snapshot.locator("strong", has_text="four").count() == 1
    assert "The answer is four" in snapshot.locator(".actx-out[data-output-id=m]").text_content()
    assert page.evaluate(NO_WIDGET_STATE)
    snapshot.scroll_into_view_if_needed()
    shot(lab, "reopen_lab_light", SAVED)
    lab.set_theme("JupyterLab Dark")
    shot(lab, "reopen_lab_dark", SAVED)
    lab.set_theme("JupyterLab Light")

    # a re-run of the cell gives the live widget again, in place of the snapshot
    lab.wait_notebook()
    lab.run_cell(0)
    lab.wait_for("(sel) => !!document.querySelector(sel)", f"{SAVED}[data-agentctx-mode=live] {LIVE}")
    assert page.locator(SAVED).count() == 1


def test_saved_view_reopens_in_notebook_7(lab):
    write_notebook(lab.server.root, "reopen7.ipynb", [BUILD, REPLY])
    lab.open("reopen7.ipynb")
    lab.run_all()
    lab.wait_for("(sel) => { const el = document.querySelector(sel); return !!el && el.textContent.includes('four.'); }",
                 LIVE)
    save(lab)
    lab.server.shutdown_kernels()
    page = lab.page
    page.goto(f"{lab.server.base_url}/notebooks/reopen7.ipynb?token={lab.server.token}")
    page.wait_for_function("(sel) => { const el = document.querySelector(sel);"
                           " return !!el && el.textContent.includes('four'); }", arg=SNAPSHOT)
    assert page.locator(SNAPSHOT).locator(".actx-msg").count() == 3
    assert page.evaluate(NO_WIDGET_STATE)
    shot(lab, "reopen_notebook7", SAVED)


def test_nbconvert_html_shows_the_conversation_without_javascript(lab, chromium, tmp_path):
    write_notebook(lab.server.root, "convert.ipynb", [BUILD, REPLY])
    lab.open("convert.ipynb")
    lab.run_all()
    lab.wait_for("(sel) => { const el = document.querySelector(sel); return !!el && el.textContent.includes('four.'); }",
                 LIVE)
    save(lab)
    target = tmp_path / "convert.html"
    subprocess.run([str(VENV_BIN / "jupyter"), "nbconvert", "--to", "html", "--output", str(target),
                    str(lab.server.root / "convert.ipynb")], check=True, capture_output=True, timeout=HANG)
    context = chromium.new_context(java_script_enabled=False, viewport={"width": 1000, "height": 900})
    try:
        page = context.new_page()
        page.goto(target.as_uri())
        body = page.locator("body").text_content()
        assert "What is 2+2?" in body and "It is four." in re.sub(r"\s+", " ", body)
        assert "model not found" not in body
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.locator(".actx-doc").first.screenshot(path=str(ARTIFACTS / "reopen_nbconvert.png"))
        if SHOTS_COPY.is_dir():
            shutil.copy(ARTIFACTS / "reopen_nbconvert.png", SHOTS_COPY / "reopen_nbconvert.png")
    finally:
        context.close()

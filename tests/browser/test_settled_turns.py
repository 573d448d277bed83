"""Turns that settle into documents, in real browsers: live in JupyterLab while they stream, then the
turn's static document; the executed notebook reads the same from nbconvert's HTML with JavaScript
disabled and the network blocked, and in JupyterLab and Notebook 7 with no kernel running its cells.
"""

from __future__ import annotations

import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

from harness import ARTIFACTS, write_notebook

pytestmark = pytest.mark.browser

REPLIES = ["Paris is **sunny**, 21 °C.", "Tomorrow: *rain*.\n\n| day | °C |\n|---|---|\n| Tue | 17 |",
           "Pack an `umbrella`."]
QUESTIONS = ["Weather in Paris?", "And tomorrow?", "What should I pack?"]

CELLS = [
    "%load_ext agentctx_widgets\nfrom agentctx_widgets import Context, ScriptedModel\n"
    f"chat = Context(name='trip')\nmodel = ScriptedModel({REPLIES!r}, chunk_size=4, delay=0.01)",
    *[f'%agentctx run chat "{question}" --model model' for question in QUESTIONS],
]


@pytest.fixture(scope="module")
def executed(lab_server):
    """The notebook executed headless (as CI does), saved in the server's root."""
    path = write_notebook(lab_server.root, "settled.ipynb", CELLS)
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    nbformat.write(nb, path)
    return path


def assert_every_turn_reads(page, root: str = "body") -> None:
    for question in QUESTIONS:
        assert page.locator(root).get_by_text(question).count() >= 1, question
    # each reply twice, as the view shows it: the assistant message in the context, and the text output
    # message the client received
    assert page.locator(f"{root} .actxd-md strong", has_text="sunny").count() == 2
    assert page.locator(f"{root} .actxd-md em", has_text="rain").count() == 2
    assert page.locator(f"{root} .actxd-md td", has_text="17").count() == 2
    assert page.locator(f"{root} .actxd-earlier").all_text_contents() == ["2 earlier messages",
                                                                                       "4 earlier messages"]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_nbconvert_html_reads_without_javascript_or_network(executed, chromium, tmp_path, theme):
    html = tmp_path / f"settled-{theme}.html"
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", f"--HTMLExporter.theme={theme}",
                    str(executed), "--output", str(html)], check=True, capture_output=True)
    context = chromium.new_context(java_script_enabled=False, color_scheme=theme, viewport={"width": 1100, "height": 900})
    requested: list[str] = []

    def block(route):
        requested.append(route.request.url)
        route.abort()

    context.route("http*://**", block)
    page = context.new_page()
    page.goto(html.as_uri())
    assert_every_turn_reads(page)
    # no widget stands where a turn was: the cells hold the documents
    assert page.locator(".actx-doc").count() == 3
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.locator(".actx-doc").nth(1).screenshot(path=str(ARTIFACTS / f"settled_nbconvert_{theme}.png"))
    context.close()
    assert all("cdn" in url or "mathjax" in url.lower() or "require" in url for url in requested), requested


def test_jupyterlab_shows_the_documents_without_running_a_cell(executed, lab):
    lab.open("settled.ipynb", wait_kernel=False)
    lab.wait_for("() => document.querySelectorAll('.jp-OutputArea-output .actx-doc').length === 3")
    assert_every_turn_reads(lab.page, ".jp-Notebook")
    lab.screenshot("settled_lab_light", ".jp-Cell:nth-child(3) .actx-doc")
    lab.set_theme("JupyterLab Dark")
    lab.screenshot("settled_lab_dark", ".jp-Cell:nth-child(3) .actx-doc")
    lab.set_theme("JupyterLab Light")


def test_notebook7_shows_the_documents_without_running_a_cell(executed, lab):
    page = lab.page
    page.goto(f"{lab.server.base_url}/notebooks/settled.ipynb?token={lab.server.token}")
    page.wait_for_function("() => document.querySelectorAll('.jp-OutputArea-output .actx-doc').length === 3",
                           timeout=600_000)
    assert_every_turn_reads(page, ".jp-Notebook")


def test_a_turn_is_live_while_it_streams_then_its_document(lab):
    slow = ("%load_ext agentctx_widgets\nfrom agentctx_widgets import Context, ScriptedModel\nchat = Context(name='live')\n"
            "model = ScriptedModel(['one two three four five six seven eight nine ten ' * 6], chunk_size=10, delay=0.1)")
    write_notebook(lab.server.root, "live_turn.ipynb", [slow, '%agentctx run chat "Count, slowly" --model model'])
    lab.open("live_turn.ipynb")
    lab.run_cell(0)
    # started, not awaited (the command's promise settles when the cell has run)
    lab.page.evaluate("() => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = 1;"
                      " void window.jupyterapp.commands.execute('notebook:run-cell'); }")
    cell = ".jp-Notebook .jp-Cell:nth-child(2) .jp-OutputArea"
    lab.wait_for(f"() => !!document.querySelector('{cell} .agentctx-view [data-testid=actx-pending]')", timeout=600)
    lab.wait_for(f"() => !!document.querySelector('{cell} .actx-doc')", timeout=600)
    assert lab.page.locator(f"{cell} .agentctx-view").count() == 0
    assert "Count, slowly" in lab.page.locator(f"{cell} .actx-doc").text_content()
    # the summary line is printed after the document is displayed: wait for it too
    lab.wait_for(f"() => (document.querySelector('{cell}')?.textContent || '').includes('turn done')", timeout=600)
    errors = [line for line in lab.console if line.startswith(("error", "pageerror")) and "agentctx" in line.lower()]
    assert errors == []

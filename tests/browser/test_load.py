"""Load, reloads and a kernel restart, through the real stack (JupyterLab + Chromium).

Sizes come from the environment so CI stays fast and bench/load.py can run the full figures:
AGENTCTX_LOAD_DELTAS (default 100,000 deltas, over AGENTCTX_LOAD_MESSAGES = deltas / 1,000 messages)
and AGENTCTX_RELOADS (default 3 page reloads during one stream).
"""

from __future__ import annotations

import pytest

from hardening_helpers import (LOAD_SETUP, VIEW, env_int, run_load_in_browser, run_reloads, saved_snapshots,
                               set_save_widget_state)
from harness import write_notebook

pytestmark = pytest.mark.browser

MB = 1024 * 1024


def test_many_deltas_over_many_messages_lose_nothing_and_memory_comes_back(lab):
    deltas = env_int("AGENTCTX_LOAD_DELTAS", 100_000)
    messages = env_int("AGENTCTX_LOAD_MESSAGES", max(1, deltas // 1_000))
    figures = run_load_in_browser(lab, deltas, messages)
    assert figures["lost"] == []                               # the kernel's own state is exact
    assert len(figures["expected"]) == messages
    assert figures["rendered"] == figures["expected"]          # the page shows exactly the kernel's state
    # kernel: peak RSS follows the text (5 bytes a delta; transient JSON copies of batches and snapshots
    # included), not a record per delta (~530 bytes a delta, i.e. 100 x the text, would fail this)
    assert figures["rss_growth"] < 32 * MB + 25 * figures["text_bytes"], figures["rss_growth"]
    # page: clearing the outputs gives back what they took (within half of it, or 4 MB); the widget model
    # keeps the previous value of a changed trait, so the big `_snapshot` text goes at the next change
    taken = figures["heap_full"] - figures["heap_start"]
    for stage in ("heap_after_next_change", "heap_closed"):
        assert figures[stage] - figures["heap_start"] < max(4 * MB, taken // 2), (stage, figures)
    print({k: v for k, v in figures.items() if k not in ("rendered", "expected")})


def test_page_reloads_during_a_stream_always_end_on_the_kernels_state(lab):
    rounds = env_int("AGENTCTX_RELOADS", 3)
    results = run_reloads(lab, rounds)
    assert len(results) == rounds
    for result in results:
        assert result["rendered"] == result["expected"], result["round"]
    # every round added its deltas: the last state holds them all (10 ids, 5 characters a delta)
    assert results[-1]["chars"] == 5 * 10_000 * rounds - 10  # each id's text is stripped of its final space
    print("reloads:", [(r["round"], r["mid_stream"], r["equal"]) for r in results])


RESTART = r'''
from agentctx_widgets import Context
ctx = Context([{"type": 2, "content": [{"type": "text", "text": "Count for me, slowly."}]},
               {"type": 3, "content": [{"type": "text", "text": "Counting **now**."}]}], name="restart")
view = ContextView(ctx)
view.write([{"id": "m0", "type": "text", "props": {"content": ""}}])
stop = threading.Event()
def produce():
    """A slow stream that is still running when the notebook is saved and the kernel restarted."""
    i = 0
    while not stop.is_set():
        view.write([delta(0, piece(i))])
        i += 1
        time.sleep(0.0005)
producer = threading.Thread(target=produce, daemon=True)
producer.start()
view
'''

KERNEL_RESTARTED = """async () => { const nb = window.jupyterapp.shell.currentWidget;
  await nb.sessionContext.session.kernel.restart(); return true; }"""


def test_saved_widget_state_renders_after_a_kernel_restart_mid_stream(lab):
    set_save_widget_state(lab.server, True)
    try:
        path = write_notebook(lab.server.root, "restart.ipynb", [LOAD_SETUP + RESTART])
        lab.open("restart.ipynb")
        lab.run_all()
        lab.wait_for("(sel) => { const el = document.querySelector(sel); return !!el && Number(el.dataset.seq) > 0"
                     " && el.textContent.includes('0000 0001'); }", VIEW)
        # the synced snapshot trait is written at least once a second while busy: wait for one with text
        lab.execute("import time as _t\nwhile '0000 0001' not in view._snapshot: _t.sleep(0.05)", timeout=600)
        lab.command("docmanager:save")
        lab.wait_for("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
        assert lab.kernel_json("producer.is_alive()"), "the stream ended before the save"
        (saved,) = [s for s in saved_snapshots(path) if s["header"]["name"] == "restart"]
        saved_text = saved["outputs"]["messages"]["m0"]["props"]["content"]
        assert saved_text.startswith("0000 0001 ") and saved["context"][0]["content"][0]["text"] == "Count for me, slowly."

        lab.page.evaluate(KERNEL_RESTARTED)   # mid-stream: the producer thread dies with the kernel
        lab.wait_notebook()
        assert lab.kernel_json("len(__import__('ipywidgets').widgets.widget._instances)") == 0
        lab.page.reload()
        lab.wait_notebook()
        lab.wait_for("([sel, seq]) => { const el = document.querySelector(sel);"
                     " return !!el && Number(el.dataset.seq) === seq; }", [VIEW, saved["seq"]])
        root = lab.page.locator(VIEW)
        assert "Count for me, slowly." in root.text_content()
        assert root.locator("strong", has_text="now").count() == 1
        shown = root.locator(".actx-out[data-output-id=m0]").text_content()
        assert shown.strip() == saved_text.strip()
        crashes = [line for line in lab.console if line.startswith("pageerror") or "[agentctx-widgets]" in line]
        assert crashes == []
        print(f"restart: saved at seq {saved['seq']} with {len(saved_text):,} characters; rendered after restart + reload")
    finally:
        set_save_widget_state(lab.server, False)

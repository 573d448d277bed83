"""The whole stream path under load: nothing lost, bounded comm rate, late / second / reloaded views catch up."""

from __future__ import annotations

import pytest

from harness import write_notebook

pytestmark = pytest.mark.browser

VIEW = ".agentctx-view"

SETUP = r'''
import threading, time
from agentctx_widgets import ContextView, Output

def piece(i):
    """5 characters: 4 base-36 digits of i and a space (unique and ordered for i < 36**4)."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    s = ""
    for _ in range(4):
        i, r = divmod(i, 36)
        s = digits[r] + s
    return s + " "

view = ContextView(title="stream")
out = Output(sinks=[view])
comm_sends = []
_comm_send = view.comm.send
def _counting_send(*args, **kwargs):
    comm_sends.append(time.monotonic())
    return _comm_send(*args, **kwargs)
view.comm.send = _counting_send

def max_per_second(times):
    """Most comm messages inside any 1-second window."""
    best, start = 0, 0
    for end, t in enumerate(times):
        while t - times[start] >= 1.0:
            start += 1
        best = max(best, end - start + 1)
    return best

def final_text():
    return view.state()["outputs"]["messages"]["m"]["props"]["content"]
'''

BURST = r'''
out.send({"id": "m", "type": "text", "props": {"content": ""}})
out.flush()
for i in range(100_000):
    out.send({"id": "m", "type": "text", "props": {"content": piece(i)}, "delta": True,
              "delta_path": "content", "delta_action": "append"})
    out.flush()
# the stream ends: the message is closed (the renderer re-parses a huge still-open tail only
# geometrically, so an unclosed message may show up to a tenth less until it grows or closes)
out.send({"id": "m", "type": "text", "props": {}, "done": True})
out.flush()
'''

TEXT_OF = """([sel, id, i]) => { const el = document.querySelectorAll(sel)[i];
  const out = el && el.querySelector(`.actx-out[data-output-id="${id}"]`);
  return out ? out.textContent : null; }"""

CAUGHT_UP = """([sel, seq, count]) => { const els = document.querySelectorAll(sel);
  return els.length >= count && [...els].every(el => Number(el.dataset.seq) === seq); }"""


SETTLED = """([sel, id, count, length]) => [...document.querySelectorAll(sel)].slice(0, count).every(el => {
  const out = el.querySelector(`.actx-out[data-output-id="${id}"]`);
  return !!out && out.textContent.trim().length === length; })"""


def rendered_texts(lab, count: int) -> list[str]:
    return [lab.page.evaluate(TEXT_OF, [VIEW, "m", i]) for i in range(count)]


def test_one_hundred_thousand_deltas_arrive_in_order_at_a_bounded_comm_rate(lab):
    write_notebook(lab.server.root, "burst.ipynb", [SETUP + "\nview", BURST])
    lab.open("burst.ipynb")
    lab.run_all(timeout=600)
    view_state = lab.kernel_json("{'seq': view.state()['seq'], 'length': len(final_text())}")
    assert view_state["length"] == 500_000
    lab.wait_for(CAUGHT_UP, [VIEW, view_state["seq"], 1], timeout=600)
    expected = lab.kernel_json("final_text()")
    assert expected == "".join(_piece(i) for i in range(100_000))  # in order, nothing lost or doubled
    (text,) = rendered_texts(lab, 1)
    assert text.strip() == expected.strip()
    rate = lab.kernel_json("max_per_second(comm_sends)")
    assert 0 < rate <= 100, rate
    lab.screenshot("burst_done", VIEW)


def _piece(i: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    s = ""
    for _ in range(4):
        i, r = divmod(i, 36)
        s = digits[r] + s
    return s + " "


STREAM_IN_THREAD = r'''
started = threading.Event()
def produce(count=30_000):
    out.send({"id": "m", "type": "text", "props": {"content": ""}})
    out.flush()
    started.set()
    for i in range(count):
        out.send({"id": "m", "type": "text", "props": {"content": piece(i)}, "delta": True,
                  "delta_path": "content", "delta_action": "append"})
        out.flush()
        if i % 5 == 4:
            time.sleep(0.001)  # a paced producer (a model streaming), so the reload lands mid-stream
    out.send({"id": "m", "type": "text", "props": {}, "done": True})
    out.flush()
producer = threading.Thread(target=produce, daemon=True)
producer.start()
started.wait()
'''


def test_late_second_and_reloaded_views_catch_up_to_the_same_state(lab):
    cells = [SETUP + STREAM_IN_THREAD, "view  # a view that renders late, mid-stream", "view  # a second view"]
    write_notebook(lab.server.root, "catchup.ipynb", cells)
    lab.open("catchup.ipynb")
    lab.run_all()
    assert lab.kernel_json("producer.is_alive()"), "the producer finished before the views rendered"
    lab.wait_for("(sel) => document.querySelectorAll(sel).length === 2 && "
                 "[...document.querySelectorAll(sel)].every(el => el.dataset.seq !== undefined)", VIEW)
    lab.command("docmanager:save")
    lab.wait_for("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
    progress = lab.kernel_json("[producer.is_alive(), len(final_text())]")
    lab.page.reload()
    lab.wait_notebook()
    lab.wait_for("(sel) => document.querySelectorAll(sel).length === 2", VIEW, timeout=600)
    lab.execute("producer.join()")
    final = lab.kernel_json("{'seq': view.state()['seq'], 'text': final_text()}")
    lab.wait_for(CAUGHT_UP, [VIEW, final["seq"], 2], timeout=600)
    assert final["text"] == "".join(_piece(i) for i in range(30_000))
    # the seq is rendered at once; a long open Markdown block's text settles on the renderer's timer,
    # which a loaded machine runs late: wait for the text itself (what the user ends up seeing)
    lab.wait_for(SETTLED, [VIEW, "m", 2, len(final["text"].strip())], timeout=600)
    for text in rendered_texts(lab, 2):
        assert text.strip() == final["text"].strip()
    lab.screenshot("catchup_after_reload", VIEW)
    # the reload really was mid-stream (reported, not asserted: it depends on machine speed)
    print("at reload: producer alive, chars so far =", progress)

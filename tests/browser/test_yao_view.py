"""A Yao request streamed into a ContextView in real JupyterLab: the assistant's block (a text, an
``execute`` observation, a todo list; tests/fixtures/yao_view) renders as one titled box, the execute
message as the CUI 66cb383f shows it (chatbox/messages/Execute: status, ``tool summary``, input and output
folded), the model's streamed reply with its duration; screenshots in the light and dark themes."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import write_notebook

pytestmark = pytest.mark.browser

VIEW = ".agentctx-view"
ASSISTANT = Path(__file__).resolve().parents[1] / "fixtures" / "yao_view" / "assistants" / "tests" / "view-blocks"

TURN = r'''
from pathlib import Path
from agentctx_widgets import Context, ContextView, ScriptedModel, run_turn
ctx = Context(name="yao-view")
view = ContextView(ctx)
display(view)
result = run_turn(ctx, "What is in the workspace?", assistant=Path(%r),
                  model=ScriptedModel(["The workspace holds a README, the sources and the tests."], chunk_size=8),
                  view=view)
print("turn", result.ok, result.hooks_called)
''' % str(ASSISTANT)


def test_a_yao_block_and_its_execute_message_in_the_view_light_and_dark(lab):
    write_notebook(lab.server.root, "yao_view.ipynb", [TURN])
    lab.open("yao_view.ipynb")
    lab.run_all()
    seq = lab.kernel_json("view.state()['seq']")
    lab.wait_for("([sel, seq]) => { const el = document.querySelector(sel);"
                 " return !!el && Number(el.dataset.seq) >= seq; }", [VIEW, seq])
    outputs = lab.page.locator(".jp-OutputArea-output").all_inner_texts()
    assert any("turn True ['Create']" in text for text in outputs), outputs

    root = lab.page.locator(VIEW).first
    box = root.locator(".actx-group")
    assert box.count() == 1
    assert box.get_attribute("data-block-id") == "B1"
    assert box.locator(".actx-block-name").inner_text() == "Block B1"
    assert box.locator(".actx-block-type").text_content() == "mixed"
    kinds = box.locator("[data-output-id]").evaluate_all("els => els.map(e => e.dataset.kind)")
    assert kinds == ["text", "execute", "todo"], kinds

    run = box.locator("[data-kind=execute] .actx-exec")
    assert run.get_attribute("data-status") == "completed"
    assert run.locator(".actx-exec-label").inner_text() == "Bash ls -la"
    assert run.locator(".actx-exec-fact").all_inner_texts() == ["exit 0", "claude-cli"]
    detail = run.locator(".actx-exec-detail")
    assert not detail.is_visible()  # folded, as the CUI starts it
    run.locator("summary").click()
    detail.wait_for(state="visible")
    assert detail.inner_text() == '{\n  "command": "ls -la"\n}\nREADME.md\nsrc/\ntests/'

    todo = box.locator("[data-kind=todo] .actx-exec")
    assert todo.locator(".actx-exec-label").inner_text() == "Todo (1/2)"
    assert todo.locator(".actx-exec-todo").count() == 2  # TodoView opens its list

    # the Send'd text is one chunk (no duration); the model's reply streamed in 7 chunks has one
    assert box.locator("[data-kind=text] .actx-duration").count() == 0
    reply = root.locator(".actx-output-list > [data-kind=text]")
    assert reply.count() == 1
    # its chip shows the measured time, and none when the stream took under the 1 ms Yao counts in
    reply_ms = lab.kernel_json("[m.get('metadata', {}).get('duration_ms') for m in view.state()['outputs']['messages'].values()"
                               " if m.get('type') == 'text' and not m.get('group_id')]")
    assert len(reply_ms) == 1, reply_ms
    chip = reply.locator(":scope > .actx-duration")
    if reply_ms[0]:
        assert chip.inner_text().endswith(" ms") or chip.inner_text().endswith(" s")
    else:
        assert chip.count() == 0  # no "0 ms" chip

    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        lab.set_theme(theme)
        label = run.locator(".actx-exec-label")
        colour = label.evaluate("el => getComputedStyle(el).color")
        background = root.evaluate("el => getComputedStyle(el).backgroundColor")
        assert colour != background, (theme, colour, background)
        name = "yao_view_" + theme.split()[-1].lower()
        assert lab.screenshot(name, VIEW).stat().st_size > 0
    assert not [line for line in lab.console if line.startswith("pageerror")], lab.console

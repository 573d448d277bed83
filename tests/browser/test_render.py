"""Every message type reaches the screen, in light and dark theme, and hostile Markdown runs nothing."""

from __future__ import annotations

import json

import pytest

from harness import write_notebook

pytestmark = pytest.mark.browser

VIEW = ".agentctx-view"

ALL_TYPES = r'''
import base64, struct
from agentctx_widgets import Context, ContextView, Output

PNG = "iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAFklEQVR4nGO4o6FBEmIY1TCqYfhqAAAyBCwQhvh37QAAAABJRU5ErkJggg=="  # 16x16 red
ctx = Context([
    {"type": 1, "content": [{"type": "text", "text": "You are a weather bot."}]},
    {"type": 2, "content": [{"type": "text", "text": "Weather in **Paris**?"},
                            {"type": "binary", "mimetype": "text/plain", "filename": "notes.txt",
                             "content": base64.b64encode(b"hello").decode()}]},
    {"type": 3, "content": [{"type": "thinking", "text": "The user wants weather."},
                            {"type": "text", "text": "Let me check."},
                            {"type": "toolCall", "callId": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}]},
    {"type": 4, "callId": "call_1", "content": [{"type": "text", "text": "18 C and sunny"}]},
    {"type": 3, "content": [{"type": "text", "text": "It is *sunny*."},
                            {"type": "image", "mimetype": "image/png", "content": PNG}]},
    {"type": "note", "text": "a record"},
], name="all-types")
view = ContextView(ctx, model="gpt-4o")
out = Output(sinks=[view])
out.send({"id": "o-user", "type": "user_input", "props": {"content": "typed by the user"}})
out.send({"id": "o-text", "type": "text", "props": {"content": "Plain **markdown** text"}})
out.send({"id": "o-think", "type": "thinking", "props": {"content": "thinking out loud"}})
out.send({"id": "o-load", "type": "loading", "props": {"message": "Loading things..."}})
out.send({"id": "o-tool", "type": "tool_call", "props": {"id": "call_9", "name": "lookup", "arguments": '{"q": 1}'}})
out.send({"id": "o-err", "type": "error", "props": {"message": "Something broke", "code": "E_TEST", "details": "details here"}})
out.send({"id": "o-img", "type": "image", "props": {"url": "data:image/png;base64," + PNG, "alt": "a red square", "width": 16, "height": 16}})
out.send({"id": "o-audio", "type": "audio", "props": {"url": "https://example.invalid/a.mp3", "format": "mp3", "transcript": "audio words", "controls": True}})
out.send({"id": "o-video", "type": "video", "props": {"url": "https://example.invalid/v.mp4", "format": "mp4", "controls": True}})
out.send({"id": "o-action", "type": "action", "props": {"name": "open_panel", "payload": {"x": 1}}})
out.send({"id": "o-event", "type": "event", "props": {"event": "stream_start", "data": {"k": "v"}}})
out.send({"id": "o-unknown", "type": "chart", "props": {"series": [1, 2, 3]}})
out.send_group({"id": "g1", "messages": [{"id": "o-g1", "type": "text", "props": {"content": "grouped one"}},
                                          {"id": "o-g2", "type": "text", "props": {"content": "grouped two"}}]})
out.flush()
view
'''

OUTPUT_IDS = ["o-user", "o-text", "o-think", "o-load", "o-tool", "o-err", "o-img", "o-audio", "o-video",
              "o-action", "o-event", "o-unknown", "o-g1", "o-g2"]


def wait_rendered(lab, seq_at_least: int = 0, index: int = 0) -> None:
    lab.wait_for(
        "([sel, seq, i]) => { const el = document.querySelectorAll(sel)[i];"
        " return !!el && el.dataset.seq !== undefined && Number(el.dataset.seq) >= seq; }",
        [VIEW, seq_at_least, index],
    )


def open_rendered(lab, name: str, cell: str):
    """Open a one-cell notebook, run it, wait until its view shows the kernel's latest state; the view's locator."""
    write_notebook(lab.server.root, name, [cell])
    lab.open(name)
    lab.run_all()
    wait_rendered(lab, lab.kernel_json("view.state()['seq']"))
    return lab.page.locator(VIEW)


def test_every_message_type_renders_in_light_and_dark(lab):
    root = open_rendered(lab, "all_types.ipynb", ALL_TYPES)

    kinds = root.locator(".actx-msg").evaluate_all("els => els.map(e => e.dataset.kind)")
    for kind in ["system", "user", "assistant", "record"]:
        assert kind in kinds, kinds
    assert root.locator("[data-testid=actx-tool-result]").count() == 1
    blocks = set(root.locator(".actx-block").evaluate_all("els => els.map(e => e.dataset.block)"))
    assert {"text", "thinking", "toolCall", "image", "binary"} <= blocks, blocks
    assert root.locator(".actx-msg strong", has_text="Paris").count() == 1  # Markdown, not raw asterisks

    rendered = root.locator(".actx-out").evaluate_all(
        "els => Object.fromEntries(els.map(e => [e.dataset.outputId, {kind: e.dataset.kind, text: e.textContent}]))")
    assert set(OUTPUT_IDS) <= set(rendered), sorted(rendered)
    for output_id, needle in [("o-user", "typed by the user"), ("o-text", "markdown"), ("o-think", "thinking out loud"),
                              ("o-load", "Loading things"), ("o-tool", "lookup"), ("o-err", "Something broke"),
                              ("o-g1", "grouped one"), ("o-g2", "grouped two")]:
        assert needle in rendered[output_id]["text"], (output_id, rendered[output_id])
    # an unknown type keeps its type on the wrapper and shows its name and its props as JSON
    assert rendered["o-unknown"]["kind"] == "chart"
    unknown = root.locator(".actx-out[data-output-id=o-unknown]")
    assert unknown.locator(".actx-generic .actx-label").text_content() == "chart"
    assert json.loads(unknown.locator(".actx-generic pre.actx-json").text_content()) == {"series": [1, 2, 3]}
    assert root.locator(".actx-out[data-output-id=o-text] strong", has_text="markdown").count() == 1
    assert root.locator(".actx-out[data-output-id=o-img] img").count() == 1
    # remote media (https) waits for a click (issue 21: a saved notebook must fetch nothing when opened)
    for output_id, tag in [("o-audio", "audio"), ("o-video", "video")]:
        media = root.locator(f".actx-out[data-output-id={output_id}]")
        assert media.locator(tag).count() == 0, output_id
        assert media.locator("[data-testid=actx-remote-img]").get_attribute("data-kind") == tag
    audio = root.locator(".actx-out[data-output-id=o-audio]")
    audio.locator("[data-testid=actx-remote-img]").click()
    audio.locator("audio").wait_for(state="attached")
    assert audio.locator("audio").count() == 1 and audio.locator("[data-testid=actx-remote-img]").count() == 0
    group = root.locator(".actx-group[data-group-id=g1]")
    assert group.locator(".actx-out").count() == 2

    lab.page.locator(VIEW).scroll_into_view_if_needed()
    for theme, name in [("JupyterLab Light", "light"), ("JupyterLab Dark", "dark")]:
        lab.set_theme(theme)
        lab.page.evaluate("(sel) => { document.querySelector(sel + ' .actx-body').scrollTop = 0; }", VIEW)
        lab.screenshot(f"all_types_{name}_top", VIEW)
        lab.page.evaluate("(sel) => { const b = document.querySelector(sel + ' .actx-body'); b.scrollTop = b.scrollHeight; }", VIEW)
        lab.screenshot(f"all_types_{name}_bottom", VIEW)
    background = lab.page.evaluate(
        "(sel) => getComputedStyle(document.querySelector(sel).querySelector('.actx-root')).color", VIEW)
    lab.set_theme("JupyterLab Light")
    # dark theme: light text on a dark page (rgb components of the text color are high)
    channels = [int(c) for c in background[background.index("(") + 1: background.index(")")].split(",")[:3]]
    assert sum(channels) / 3 > 128, background


HOSTILE = r'''
from agentctx_widgets import Context, ContextView, Output
payload = (
    "Before\n\n"
    "<img src=x onerror=\"window.__pwned = 'img'; console.log('PWNED img')\">\n\n"
    "<script>window.__pwned = 'script'; console.log('PWNED script')</script>\n\n"
    "[click me](javascript:window.__pwned='link';console.log('PWNED-link'))\n\n"
    "<a href=\"javascript:window.__pwned='a'\">raw link</a>\n\n"
    "After"
)
ctx = Context([{"type": 2, "content": [{"type": "text", "text": payload}]},
               {"type": 3, "content": [{"type": "thinking", "text": payload}, {"type": "text", "text": payload}]}],
              name="hostile")
view = ContextView(ctx)
out = Output(sinks=[view])
out.send({"id": "h1", "type": "text", "props": {"content": payload}})
out.send({"id": "h2", "type": "error", "props": {"message": payload, "details": payload}})
out.flush()
view
'''


def test_hostile_markdown_executes_nothing(lab):
    root = open_rendered(lab, "hostile.ipynb", HOSTILE)
    assert "After" in root.locator(".actx-out[data-output-id=h1]").text_content()
    # A control image with a broken src: once its onerror has fired, a payload image would have too.
    lab.page.evaluate(
        "() => { const img = document.createElement('img'); img.onerror = () => { window.__control = true; };"
        " img.src = 'x?control'; document.body.append(img); }")
    lab.wait_for("() => window.__control === true")
    links = root.locator("a")
    for i in range(links.count()):
        href = links.nth(i).get_attribute("href") or ""
        assert not href.strip().lower().startswith("javascript:"), href
        if not href and links.nth(i).is_visible():
            links.nth(i).click(no_wait_after=True)  # a neutralised link must stay inert
    assert root.locator("script").count() == 0
    assert root.locator("[onerror], [onclick], [onload]").count() == 0
    assert lab.page.evaluate("() => window.__pwned") is None
    assert not [line for line in lab.console if "PWNED" in line], lab.console


LONG = r'''
from agentctx_widgets import Context, ContextView
ctx = Context([{"type": 2 + (i % 2), "content": [{"type": "text", "text": f"Message {i} with **bold {i}**"}]}
               for i in range(2_000)], name="long")
view = ContextView(ctx)
view
'''

# Scroll the view's body to the top every frame until message 0 is rendered, then back to the end
# (a few screens a frame) until the newest is; record every index that entered the DOM on the way and
# what is rendered at the top. Bounded by frames, not time.
SCROLL_UP_AND_DOWN = """async ([sel, count]) => {
  const view = document.querySelector(sel);
  const body = view.querySelector('[data-testid=actx-body]');
  const list = view.querySelector('[data-testid=actx-context]');
  const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
  const indexes = () => [...list.querySelectorAll(':scope > [data-index]')].map((el) => Number(el.dataset.index));
  const seen = new Set(indexes());
  const mo = new MutationObserver((records) => { for (const r of records) for (const n of r.addedNodes)
    if (n.dataset && n.dataset.index !== undefined) seen.add(Number(n.dataset.index)); });
  mo.observe(list, {childList: true});
  const has = (i) => !!list.querySelector(`:scope > [data-index="${i}"]`);
  for (let i = 0; i < 3000 && !(has(0) && body.scrollTop === 0); i += 1) { body.scrollTop = 0; await frame(); }
  const top = {shown: indexes(), later: view.querySelector('[data-testid=actx-load-later]').textContent,
               zeroBold: list.querySelector('[data-index="0"] strong')?.textContent ?? null,
               zeroVisible: list.querySelector('[data-index="0"]')?.getBoundingClientRect().bottom > body.getBoundingClientRect().top};
  for (let i = 0; i < 3000 && !(has(count - 1) && body.scrollTop + body.clientHeight >= body.scrollHeight - 1); i += 1) {
    body.scrollTop += 3 * body.clientHeight; await frame();
  }
  mo.disconnect();
  return {top, bottom: indexes(), seen: [...seen].sort((a, b) => a - b),
          laterHidden: view.querySelector('[data-testid=actx-load-later]').hidden,
          moreHidden: view.querySelector('[data-testid=actx-load-more]').hidden};
}"""


def test_every_message_of_a_long_context_is_reachable_by_scrolling(lab):
    root = open_rendered(lab, "long.ipynb", LONG)
    first = root.locator("[data-testid=actx-context] > [data-index]").evaluate_all("els => els.map(e => Number(e.dataset.index))")
    assert first == list(range(2_000 - len(first), 2_000)) and 0 < len(first) < 2_000, first  # lazily, the newest
    assert root.locator("[data-testid=actx-load-more]").is_visible()
    walk = lab.page.evaluate(SCROLL_UP_AND_DOWN, [VIEW, 2_000])
    assert walk["seen"] == list(range(2_000))  # every message entered the DOM on the way
    top = walk["top"]["shown"]
    assert top == list(range(len(top))) and len(top) < 2_000, top  # at the top: the oldest, in order, a window
    assert walk["top"]["later"] == f"↓ Show later messages ({2_000 - len(top)} more)"
    # the oldest message was rendered when it was reached: its Markdown, not raw asterisks, on screen
    assert walk["top"]["zeroBold"] == "bold 0"
    assert walk["top"]["zeroVisible"] is True
    bottom = walk["bottom"]
    assert bottom == list(range(2_000 - len(bottom), 2_000)), bottom  # back at the newest
    assert walk["laterHidden"] is True
    assert walk["moreHidden"] is False

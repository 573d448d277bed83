"""The whole hostile corpus in every field the view renders, in real Chromium inside JupyterLab.

Every payload of tests/vectors/xss_payloads.json (and every hostile URL) goes into every rendered
field of context messages, the pending message, the header and output messages. Then: nothing ran
(a trap on window.__actx_pwned, dialogs, console errors), nothing was fetched from anywhere but the
JupyterLab server (every request recorded), and text fields still show the payload as text.

REMOTE_URLS add http(s) and protocol-relative URLs (issue 21): a remote image, audio or video source or
video thumbnail is a click-to-load button, so none of them is fetched before a click; then a click on
one video, one audio and one image does send its request (the guard sees media fetches).
"""

from __future__ import annotations

import re

import pytest

from hardening_helpers import CORPUS_PATH, VIEW, PageGuard, corpus
from harness import write_notebook

pytestmark = pytest.mark.browser

BUILD = r'''
import base64, json
from agentctx_widgets import Context, ContextView, Output

corpus = json.load(open(CORPUS_PATH))
P = corpus["payloads"]
U = corpus["urls"] + REMOTE_URLS
ALL = P + U          # every hostile string; URL fields get the same list (payloads are hostile URLs too)
B64 = base64.b64encode(b"hostile").decode()

def args_object(p):
    return {p: p, "list": [p], "nested": {"html": p}}

# Context: blocks of one kind never sit next to each other (the constructor keeps blocks as given).
user = {"type": 2, "content": [b for p in ALL for b in (
    {"type": "text", "text": p},
    {"type": "binary", "mimetype": p, "filename": p, "content": B64},
)]}
assistant = {"type": 3, "content": [b for i, p in enumerate(ALL) for b in (
    {"type": "thinking", "text": p},
    {"type": "text", "text": p},
    {"type": "toolCall", "callId": f"call_{i}", "name": p, "arguments": p},
    {"type": "toolCall", "callId": p, "name": p, "arguments": args_object(p)},
)]}
results = [{"type": 4, "callId": f"call_{i}", "content": [{"type": "text", "text": p}]} for i, p in enumerate(ALL)]
failed = [{"type": 3, "content": [], "error": {"message": p, "retry": p}} for p in ALL]
failed_plain = [{"type": 3, "content": [], "error": p} for p in ALL]
records = [{"type": p, p: p, "html": p} for p in ALL]

ctx_view = ContextView(Context([user, assistant] + results, name=" | ".join(ALL)))
err_view = ContextView(Context(failed + failed_plain + records, name="errors and records"))
ctx_view.set_pending({"type": 3, "content": [b for p in ALL for b in (
    {"type": "text", "text": p}, {"type": "thinking", "text": p})]})

out_view = ContextView(title="hostile outputs")
out = Output(sinks=[out_view])
for i, p in enumerate(ALL):
    out.send({"id": f"text-{i}", "type": "text", "props": {"content": p}})
    out.send({"id": f"think-{i}", "type": "thinking", "props": {"content": p}})
    out.send({"id": f"load-{i}", "type": "loading", "props": {"message": p}})
    out.send({"id": f"tool-{i}", "type": "tool_call", "props": {"id": p, "name": p, "arguments": p}})
    out.send({"id": f"toolobj-{i}", "type": "tool_call", "props": {"id": p, "name": p, "arguments": args_object(p)}})
    out.send({"id": f"err-{i}", "type": "error", "props": {"message": p, "code": p, "details": p}})
    out.send({"id": f"img-{i}", "type": "image", "props": {"url": p, "alt": p}})
    out.send({"id": f"audio-{i}", "type": "audio", "props": {"url": p, "transcript": p, "format": p}})
    out.send({"id": f"video-{i}", "type": "video", "props": {"url": p, "thumbnail": p, "transcript": p}})
    out.send({"id": f"action-{i}", "type": "action", "props": {"name": p, "payload": p}})
    out.send({"id": f"event-{i}", "type": "event", "props": {"event": p, "data": {"html": p}}})
    out.send({"id": f"input-{i}", "type": "user_input", "props": {"content": p}})
    out.send({"id": f"unknown-{i}", "type": "x-hostile", "props": {"html": p, p: p}})
    out.send({"id": p, "type": p, "props": {"content": p}})            # the id and the type themselves
    out.send_group({"id": p, "messages": [{"id": f"grp-{i}", "type": "text", "props": {"content": p}}]})
# a streaming (not done) text whose tail is still being parsed
out.send({"id": "streaming", "type": "text", "props": {"content": "\n\n".join(ALL)}})
out.flush()
for v in (ctx_view, err_view, out_view):
    v.settle()
seqs = [v.state()["seq"] for v in (ctx_view, err_view, out_view)]
display(ctx_view, err_view, out_view)
'''

# Remote URLs (issue 21): each points at the corpus's unserved port, so a fetch shows in the request log.
# Three, so the error view's 3 entries per string (80 strings) still fit its window of 240 rendered entries.
REMOTE_URLS = [
    "http://127.0.0.1:9/leak.http-media",
    "https://127.0.0.1:9/leak.https-media",
    "//127.0.0.1:9/leak.protocol-relative",
]

# Fields per payload. Context (18): user text, binary filename, binary mimetype, thinking, text,
# toolCall name, string arguments, object arguments, toolCall callId, tool result text, error message,
# retry, error string, record type, record fields, header name, pending text, pending thinking.
# Outputs (27): text, thinking, loading message, tool_call id / name / string arguments / object
# arguments, error message / code / details, image url / alt, audio url / transcript / format, video
# url / thumbnail / transcript, action props, event props, user_input, unknown-type props, message id,
# message type, group id, group member text, a still-streaming text.
FIELDS = 18 + 27

ALL_RENDERED = """([sel, seqs]) => { const els = document.querySelectorAll(sel);
  return els.length === seqs.length && seqs.every((s, i) => Number(els[i].dataset.seq) >= s); }"""

LOAD_EVERYTHING = """(sel) => { let clicks = 0;
  for (const el of document.querySelectorAll(sel)) {
    for (const b of el.querySelectorAll('[data-testid=actx-load-more]')) {
      if (!b.hidden) { b.click(); clicks += 1; }
    }
    for (const d of el.querySelectorAll('details')) d.open = true;   // every hidden part on screen
  }
  return clicks; }"""

# One broken image plus a frame or two: when its onerror has run, any payload's would have too.
CONTROL_IMAGE = """() => new Promise((resolve) => {
  const img = document.createElement('img');
  img.onerror = () => requestAnimationFrame(() => requestAnimationFrame(() => resolve(true)));
  img.src = 'actx-control-image.png?' + Math.random();
  document.body.append(img);
})"""


SCROLL_AND_READ = """async (el) => {
  const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  for (let n = el.closest('.actx-msg, .actx-md-section, .actx-md-chunk'); n; n = n.parentElement?.closest(
      '.actx-msg, .actx-md-section, .actx-md-chunk')) { n.scrollIntoView(); await frame(); }
  el.scrollIntoView(); await frame();
  return el.innerText; }"""


def collapsed(text: str) -> str:
    """``text`` as innerText shows it in an element with ``white-space: normal``."""
    return re.sub(r"[ \t\n\r\f]+", " ", text).strip(" ")


def seen(locator) -> str:
    """What a person sees of an element: scrolled on screen first (off-screen messages are skipped by
    content-visibility, and innerText of skipped content is empty)."""
    return locator.evaluate(SCROLL_AND_READ)


def test_the_whole_corpus_in_every_field_runs_nothing_and_fetches_nothing(lab):
    data = corpus()
    everything = data["payloads"] + data["urls"] + REMOTE_URLS
    guard = PageGuard(lab.page, lab.server.base_url)
    write_notebook(lab.server.root, "hostile_all.ipynb",
                   [f"CORPUS_PATH = {str(CORPUS_PATH)!r}\nREMOTE_URLS = {REMOTE_URLS!r}\n" + BUILD])
    lab.open("hostile_all.ipynb")
    lab.run_all()
    seqs = lab.kernel_json("seqs")
    lab.wait_for(ALL_RENDERED, [VIEW, seqs], timeout=600)
    while lab.page.evaluate(LOAD_EVERYTHING, VIEW):
        pass  # each click renders one more page of earlier messages; stop when none is left
    lab.page.evaluate(CONTROL_IMAGE)
    views = lab.page.locator(VIEW)

    # ---- every entry and output message reached the screen
    ctx_view, err_view, out_view = views.nth(0), views.nth(1), views.nth(2)
    assert ctx_view.locator(".actx-msg[data-index]").count() == 2
    assert ctx_view.locator("[data-testid=actx-tool-result]").count() == len(everything)
    assert err_view.locator(".actx-msg[data-index]").count() == 3 * len(everything)
    assert err_view.locator("[data-testid=actx-response-error]").count() == 2 * len(everything)
    expected_outputs = lab.kernel_json("len(out.state['order'])")
    assert out_view.locator(".actx-out").count() == expected_outputs == 15 * len(everything) + 1

    # ---- nothing ran, nothing asked, nothing fetched
    assert guard.pwned() == []
    assert lab.page.evaluate("() => window.__actx_pwned") is None
    assert guard.dialogs == []
    assert [e for e in guard.console_errors if "actx_pwn" in e or "127.0.0.1:9" in e] == []
    assert guard.foreign_requests() == []
    assert guard.leak_requests() == []
    for root in (ctx_view, err_view, out_view):
        assert root.locator("script, iframe, object, embed, svg, math, style, link, meta, base, form").count() == 0
        bad_attrs = root.evaluate("""(el) => [...el.querySelectorAll('*')].flatMap(n => [...n.attributes]
            .filter(a => a.name.startsWith('on') || (/^(href|src|poster|action|formaction|xlink:href)$/.test(a.name)
                     && /^[\\s\\x00-\\x1f]*(javascript|vbscript|data:text)/i.test(a.value)))
            .map(a => n.tagName + '[' + a.name + '=' + a.value + ']'))""")
        assert bad_attrs == []

    # ---- the payloads are still there, as text (inner_text: what a person sees)
    spot = [0, 1, 6, 16, 29, 40, 55, 57, 61, 68, 69, 73]
    raw_args = ctx_view.locator(".actx-block-toolCall .actx-args-raw")
    tool_outputs = ctx_view.locator(".actx-tool-output")
    for i in spot:
        payload = everything[i]
        assert seen(raw_args.nth(i)) == payload, i
        assert seen(tool_outputs.nth(i)) == payload, i
        assert seen(out_view.locator(f"[data-output-id=err-{i}] .actx-error-details")) == payload, i
        assert seen(out_view.locator(f"[data-output-id=tool-{i}] .actx-args-raw")) == payload, i
        image = out_view.locator(f"[data-output-id=img-{i}]")
        if payload.startswith("data:image/"):  # an image of its own type is shown (an <img> runs no script)
            assert image.locator("img").get_attribute("src") == payload
        else:
            blocked = seen(image.locator("[data-testid=actx-blocked-url] code"))
            assert blocked == collapsed(payload), i  # inline code: CSS collapses white space
    header_name = ctx_view.locator("[data-testid=actx-header-name]").text_content()
    assert header_name == " | ".join(everything)
    # Markdown fields show code and look-alikes as text
    assert "<script>window.__actx_pwned=1</script>" in seen(out_view.locator("[data-output-id=text-53]"))
    assert "<img src=x onerror=window.__actx_pwned=1>" in seen(out_view.locator("[data-output-id=text-54]"))
    assert everything[57] in seen(out_view.locator("[data-output-id=text-57]"))
    assert everything[61] in seen(out_view.locator("[data-output-id=text-61]"))
    print(f"hostile corpus: {len(everything)} strings x {FIELDS} fields; {len(guard.requests)} requests, "
          f"all to the server; console errors (unrelated): {len(guard.console_errors)}")
    lab.screenshot("hostile_outputs", f"{VIEW} >> nth=2")

    # ---- remote media wait for a click (issue 21); a click does fetch
    first = len(everything) - len(REMOTE_URLS)
    for offset, url in enumerate(REMOTE_URLS):
        for kind in ("img", "audio", "video"):
            placeholder = out_view.locator(f"[data-output-id={kind}-{first + offset}] [data-testid=actx-remote-img]")
            assert placeholder.count() == (0 if url.startswith("//") else 1), (kind, url)
    video = out_view.locator(f"[data-output-id=video-{first}]")
    for theme in ("JupyterLab Dark", "JupyterLab Light"):
        lab.set_theme(theme)
        video.scroll_into_view_if_needed()
        lab.screenshot(f"hostile_click_to_load_video_{theme.split()[-1].lower()}", f"{VIEW} >> nth=2 >> [data-output-id=video-{first}]")
    assert guard.foreign_requests() == []
    clicked = []
    for kind, tag, offset in (("video", "video", 0), ("audio", "audio", 1), ("img", "img", 0)):
        url = REMOTE_URLS[offset]
        output = out_view.locator(f"[data-output-id={kind}-{first + offset}]")
        with lab.page.expect_request(lambda request, url=url: request.url == url, timeout=60_000):
            output.locator("[data-testid=actx-remote-img]").click()
        assert output.locator(tag).count() == 1, kind
        clicked.append(url)
    assert set(guard.foreign_requests()) <= set(clicked), guard.foreign_requests()

"""The exported page in real Chromium, opened from disk the way a CI artifact or a bug report is:
JavaScript disabled and every network request blocked and recorded. Every message reads, Markdown is
rendered, nothing is fetched but the file itself; light and dark screenshots go to artifacts/.

A second page holds the whole hostile corpus and is opened with JavaScript *enabled* (a trap on the
corpus's flag): the CSP and the sanitiser together run nothing and fetch nothing.
"""

from __future__ import annotations

import base64
import json
import struct
import time
import zlib
from pathlib import Path

import pytest

from harness import ARTIFACTS, REPO
from hardening_helpers import PWN_TRAP

from agentctx_widgets import Context
from agentctx_widgets.html import to_html

pytestmark = pytest.mark.browser

CORPUS = json.loads((REPO / "tests" / "vectors" / "xss_payloads.json").read_text())


def png(width: int, height: int, rgb: tuple[int, int, int]) -> str:
    """A solid-colour PNG, base64."""
    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    body = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    return base64.b64encode(body).decode()


USER_TEXT = "What is the weather in Paris, and can you draw me a chart?"
ASSISTANT_TEXT = ("Here is **the forecast** for Paris:\n\n| day | sky | °C |\n|---|---|---|\n| Mon | sunny | 21 |\n"
                  "| Tue | rain | 17 |\n\nCall it with `get_weather(city)`:\n\n```python\nget_weather(\"Paris\")\n```\n\n"
                  "- source: [example.com](https://example.com/forecast)\n- chart: ![chart](http://127.0.0.1:9/leak-chart.png)")
TOOL_RESULT = '{"city": "Paris", "temp": 21, "sky": "sunny"}'
FAILED_TOOL = "timeout after 30 s"
RESPONSE_ERROR = "upstream returned 529 (overloaded)"


def tour() -> tuple[Context, list[dict]]:
    ctx = Context([
        {"type": 1, "content": [{"type": "text", "text": "You are a *concise* weather assistant."}]},
        {"type": 2, "content": [{"type": "text", "text": USER_TEXT},
                                {"type": "image", "mimetype": "image/png", "content": png(48, 24, (30, 136, 229)),
                                 "filename": "sketch.png"}]},
        {"type": 3, "content": [
            {"type": "thinking", "text": "The user wants Paris weather. Call **get_weather**."},
            {"type": "toolCall", "callId": "call_1", "name": "get_weather", "arguments": {"city": "Paris", "days": 2}},
            {"type": "toolCall", "callId": "call_2", "name": "draw_chart", "arguments": '{"series": [21, 17'},
        ]},
        {"type": 4, "callId": "call_1", "content": [{"type": "text", "text": TOOL_RESULT}]},
        {"type": 4, "callId": "call_2", "error": True, "content": [{"type": "text", "text": FAILED_TOOL}]},
        {"type": "checkpoint", "turn": 1, "note": "after tools"},
        {"type": 3, "content": [{"type": "text", "text": ASSISTANT_TEXT}]},
        {"type": 2, "content": [{"type": "text", "text": "Thanks! And tomorrow?"},
                                {"type": "binary", "mimetype": "application/pdf", "filename": "trip.pdf",
                                 "content": base64.b64encode(b"%PDF-1.4 tiny").decode()}]},
        {"type": 3, "content": [], "error": {"message": RESPONSE_ERROR, "retry": True}},
    ], name="Paris weather (export tour)")
    outputs = [
        {"id": "u1", "type": "user_input", "props": {"content": "Weather in Paris?"}},
        {"id": "l1", "type": "loading", "props": {"message": "Looking it up…"}},
        {"id": "l1", "type": "loading", "props": {}, "done": True},
        {"id": "th", "type": "thinking", "props": {"content": "Checking the **forecast**."}, "done": True},
        {"id": "t1", "type": "text", "props": {"content": "It is *sunny*"}},
        {"id": "t1", "type": "text", "props": {"content": " and 21 °C."}, "delta": True, "delta_path": "content"},
        {"id": "tc", "type": "tool_call", "props": {"id": "call_1", "name": "get_weather",
                                                    "arguments": '{"city": "Paris"}'}},
        {"id": "img", "type": "image", "props": {"url": "data:image/png;base64," + png(32, 16, (67, 160, 71)),
                                                 "alt": "a green bar"}},
        {"id": "rimg", "type": "image", "props": {"url": "http://127.0.0.1:9/leak-hook.png", "alt": "remote"}},
        {"id": "au", "type": "audio", "props": {"url": "http://127.0.0.1:9/leak.mp3", "format": "mp3",
                                                "duration": 3.5, "transcript": "Sunny, 21 degrees."}},
        {"id": "vi", "type": "video", "props": {"url": "http://127.0.0.1:9/leak.mp4", "thumbnail": "http://127.0.0.1:9/t.png"}},
        {"id": "e1", "type": "error", "props": {"message": "rate limited", "code": "429", "details": "retry in 2 s"}},
        {"id": "ac", "type": "action", "props": {"name": "open_panel", "payload": {"panel": "map"}}},
        {"id": "ev", "type": "event", "props": {"event": "stream_end"}},
        {"id": "grp", "messages": [{"id": "g1", "type": "text", "props": {"content": "grouped one"}},
                                   {"id": "g2", "type": "text", "props": {"content": "grouped two"}}]},
        {"id": "cu", "type": "weather_card", "props": {"city": "Paris", "temp": 21}},
    ]
    return ctx, outputs


VISIBLE = [USER_TEXT, "the forecast", TOOL_RESULT, FAILED_TOOL, RESPONSE_ERROR, "Thanks! And tomorrow?",
           "You are a", "get_weather", "draw_chart", "checkpoint", "It is sunny and 21 °C.", "rate limited",
           "grouped one", "grouped two", "weather_card", "Weather in Paris?", "trip.pdf"]


@pytest.fixture(scope="module")
def browser(chromium):
    """The session's Chromium (conftest.py): one Playwright per process, since a second
    sync_playwright() cannot start while the first one's loop runs."""
    return chromium


class Opened:
    def __init__(self, browser, path: Path, *, javascript: bool, color_scheme: str = "light") -> None:
        self.url = path.resolve().as_uri()
        self.requests: list[str] = []
        self.context = browser.new_context(java_script_enabled=javascript, viewport={"width": 1000, "height": 900},
                                           color_scheme=color_scheme)
        self.page = self.context.new_page()
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.routed: list[str] = []
        self.page.route("**/*", self._route)

    def _route(self, route) -> None:
        self.routed.append(route.request.url)
        if route.request.url == self.url:
            route.continue_()
        else:
            route.abort()

    def open(self):
        self.page.goto(self.url)
        self.page.wait_for_load_state("load")
        return self.page

    def foreign(self) -> list[str]:
        return [url for url in self.requests + self.routed if url != self.url and not url.startswith("data:")]

    def close(self) -> None:
        self.context.close()


def test_exported_page_reads_without_javascript_and_fetches_nothing(browser, tmp_path):
    ctx, outputs = tour()
    path = tmp_path / "tour.html"
    path.write_text(to_html(ctx, outputs), encoding="utf-8")
    opened = Opened(browser, path, javascript=False)
    try:
        page = opened.open()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "html_export_light_folded.png"), full_page=True)  # as a reader opens it
        for text in VISIBLE:
            assert page.get_by_text(text, exact=False).filter(visible=True).count() >= 1, text
        assert page.locator("article[data-kind]").count() == 6  # 9 entries: 2 results beneath their calls, 1 record
        assert page.locator("details.actxd-record").count() == 1
        strong = page.locator(".actxd-msg-assistant .actxd-block-text strong").first
        assert strong.is_visible() and strong.inner_text() == "the forecast"
        assert page.locator(".actxd-md table th").count() == 3
        assert page.locator(".actxd-md pre code").first.inner_text().strip() == 'get_weather("Paris")'
        # results beneath their calls, folded calls and thinking
        call = page.locator('[data-block=toolCall][data-call-id="call_1"]')
        assert call.locator("[data-testid=actx-tool-result]").inner_text().endswith(TOOL_RESULT)
        assert page.locator("details.actxd-tool-call").count() == 3
        assert not page.get_by_text('"days": 2').is_visible()          # folded until opened
        page.locator("details.actxd-tool-call summary").first.click()  # <details> opens without JavaScript
        assert page.get_by_text('"days": 2').is_visible()
        # images: inline ones are drawn (data:), remote ones are links
        inline = page.locator("img.actxd-img")
        assert inline.count() == 2
        assert all(inline.nth(i).get_attribute("src").startswith("data:image/png;base64,") for i in range(2))
        assert all(inline.nth(i).evaluate("(img) => img.naturalWidth") > 0 for i in range(2))
        assert page.locator('a.actxd-img-link[href="http://127.0.0.1:9/leak-chart.png"]').count() == 1
        assert page.locator('a.actxd-img-link[href="http://127.0.0.1:9/leak-hook.png"]').count() == 1
        assert page.locator("audio, video, script, iframe, object, embed").count() == 0
        assert page.locator("[data-testid=actx-usage]").inner_text().startswith("≈ ")
        assert opened.foreign() == []
        assert opened.requests == [opened.url]

        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            page.locator("details").evaluate_all("(all) => all.forEach((d) => { d.open = true; })")
            page.screenshot(path=str(ARTIFACTS / f"html_export_{scheme}.png"), full_page=True)
        background = page.locator(".actx-doc").evaluate("(el) => getComputedStyle(el).backgroundColor")
        assert background == "rgb(17, 17, 17)"  # dark fallback (no --jp-* variables on this page)
        page.emulate_media(color_scheme="light")
        background = page.locator(".actx-doc").evaluate("(el) => getComputedStyle(el).backgroundColor")
        assert background == "rgb(255, 255, 255)"
        assert opened.foreign() == []
    finally:
        opened.close()


THEMES = REPO / ".venv" / "share" / "jupyter" / "lab" / "themes" / "@jupyterlab"


@pytest.mark.parametrize("theme, os_scheme, background", [
    ("light", "dark", "rgb(255, 255, 255)"),   # JupyterLab Light on a dark OS: the theme wins
    ("dark", "light", "rgb(33, 33, 33)"),      # JupyterLab Dark on a light OS (--jp-layout-color1: #212121)
])
def test_jupyterlab_theme_variables_win_over_the_os_setting(browser, tmp_path, theme, os_scheme, background):
    """The fragment inside JupyterLab's own theme CSS (the real theme files, inlined) and its light/dark
    flag on <body>, as a cell output sees them."""
    css = THEMES / f"theme-{theme}-extension" / "index.css"
    if not css.exists():
        pytest.skip(f"{css} is missing (JupyterLab not installed in .venv)")
    ctx, outputs = tour()
    fragment = to_html(ctx, outputs, standalone=False)
    light = "true" if theme == "light" else "false"
    page_html = (f"<!doctype html><meta charset=utf-8><style>{css.read_text()} body {{ background: var(--jp-layout-color0);"
                 f" margin: 0; padding: 16px; }}</style><body data-jp-theme-light={light}>{fragment}")
    path = tmp_path / f"jupyterlab_{theme}.html"
    path.write_text(page_html, encoding="utf-8")
    opened = Opened(browser, path, javascript=False, color_scheme=os_scheme)
    try:
        page = opened.open()
        root = page.locator(".actx-doc")
        assert root.evaluate("(el) => getComputedStyle(el).backgroundColor") == background
        assert root.evaluate("(el) => getComputedStyle(el).colorScheme") == theme
        page.locator("details").evaluate_all("(all) => all.forEach((d) => { d.open = true; })")
        page.screenshot(path=str(ARTIFACTS / f"html_export_jupyterlab_{theme}.png"), full_page=True)
        # a fragment (a cell's document) fetches nothing either: a hook-sent remote image waits for a click
        assert opened.foreign() == []
        assert page.locator('a.actxd-img-link[href="http://127.0.0.1:9/leak-hook.png"]').count() == 1
    finally:
        opened.close()


def test_hostile_page_runs_nothing_with_javascript_enabled(browser, tmp_path):
    everything = CORPUS["payloads"] + CORPUS["urls"]
    entries = []
    for i, p in enumerate(everything):
        entries.append({"type": 2, "content": [{"type": "text", "text": p}, {"type": "image", "url": p, "alt": p}]})
        entries.append({"type": 3, "content": [{"type": "thinking", "text": p}, {"type": "text", "text": p},
                                               {"type": "toolCall", "callId": f"c{i}", "name": p, "arguments": p}]})
        entries.append({"type": 4, "callId": f"c{i}", "error": True, "content": [{"type": "text", "text": p}]})
        entries.append({"type": 3, "content": [], "error": {"message": p, "retry": p}})
        entries.append({"type": p, p: p})
    outputs = []
    for i, p in enumerate(everything):
        outputs += [{"id": f"t{i}", "type": "text", "props": {"content": p}},
                    {"id": f"i{i}", "type": "image", "props": {"url": p, "alt": p}},
                    {"id": f"a{i}", "type": "audio", "props": {"url": p, "transcript": p}},
                    {"id": f"v{i}", "type": "video", "props": {"url": p, "thumbnail": p}},
                    {"id": f"x{i}", "type": p, "props": {p: p}}]
    path = tmp_path / "hostile.html"
    path.write_text(to_html(Context(entries, name=" | ".join(everything)), outputs, title=" | ".join(everything)),
                    encoding="utf-8")
    opened = Opened(browser, path, javascript=True)
    dialogs: list[str] = []
    try:
        opened.page.add_init_script(PWN_TRAP)
        opened.page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page = opened.open()
        page.locator("details").evaluate_all("(all) => all.forEach((d) => { d.open = true; })")
        page.wait_for_timeout(300)  # let any image error or toggle handler have its turn
        assert page.evaluate("() => window.__actx_hits") == []
        assert page.evaluate("() => window.__actx_pwned") is None
        assert dialogs == []
        assert opened.foreign() == []
        assert page.locator("script, iframe, object, embed, svg, math, form, input, button, base, link").count() == 0
        assert page.locator("article[data-kind]").count() == 3 * len(everything)  # results sit beneath their calls
    finally:
        opened.close()


def test_a_10000_message_export_opens_quickly(browser, tmp_path):
    entries = []
    for i in range(2500):
        entries += [
            {"type": 2, "content": [{"type": "text", "text": f"Question {i}: the weather in city {i}?"}]},
            {"type": 3, "content": [{"type": "toolCall", "callId": f"c{i}", "name": "get_weather", "arguments": {"city": i}}]},
            {"type": 4, "callId": f"c{i}", "content": [{"type": "text", "text": f'{{"temp": {i % 30}}}'}]},
            {"type": 3, "content": [{"type": "text", "text": f"In **city {i}** it is `{i % 30}` °C.\n\n- dry\n- calm"}]},
        ]
    path = tmp_path / "big.html"
    path.write_text(to_html(entries), encoding="utf-8")
    opened = Opened(browser, path, javascript=False)
    try:
        started = time.perf_counter()
        page = opened.open()
        elapsed = time.perf_counter() - started
        assert page.locator("article[data-kind]").count() == 7500
        # chunks off screen are skipped until scrolled to; the last one renders when it is
        chunks = page.locator(".actxd-chunk")
        assert chunks.count() == 150 and chunks.nth(1).evaluate("(el) => getComputedStyle(el).contentVisibility") == "auto"
        assert chunks.first.evaluate("(el) => getComputedStyle(el).contentVisibility") == "visible"  # the first screen is never skipped
        assert page.get_by_text("Question 2499: the weather in city 2499?").is_visible()
        print(f"10,000-message export: {path.stat().st_size / 1e6:.1f} MB, loaded in {elapsed:.2f} s")
        assert elapsed < 3, elapsed  # about 0.4 s here; generous for a loaded CI machine
        assert opened.foreign() == []
    finally:
        opened.close()

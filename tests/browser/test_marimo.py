"""ContextView in marimo (``mo.ui.anywidget(view)``): a real ``marimo edit`` server, a real Chromium, a
10,000-delta stream from a thread a cell starts, and the bytes that stream costs on marimo's websocket.

The app is tests/fixtures/marimo_stream.py; one page opens it, and query parameters choose the stream
(a second page on a ``marimo edit`` notebook would join the first one's session, not rerun it).
"""

from __future__ import annotations

import json

import pytest

from harness import REPO, VENV_BIN
from marimo_harness import VIEW_OUTPUT_TEXT_JS, Frame, MarimoServer, stream_and_settle

pytestmark = pytest.mark.browser

APP = REPO / "tests" / "fixtures" / "marimo_stream.py"
DELTAS = 10_000
PACE = 2
"""The app pauses 1 ms after every PACE deltas: the stream lasts seconds (5,000 pauses), as a model's
does, so a periodic whole-state sync would show (one a second used to)."""

CONTEXT_BODIES = [("user", "Count for me, please."), ("assistant", "Here it comes, one piece at a time.")]
"""What the app's two context messages render as (the assistant's ``**one piece**`` is bold)."""


def piece(i: int) -> str:
    """The app's i-th delta: 5 base-36 digits of i and a space (unique and in order)."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    s = ""
    for _ in range(5):
        i, r = divmod(i, 36)
        s = digits[r] + s
    return s + " "


def test_piece_is_what_the_app_streams():
    assert [piece(i) for i in (0, 1, 35, 36, 36**5 - 1)] == ["00000 ", "00001 ", "0000z ", "00010 ", "zzzzz "]


@pytest.fixture(scope="module")
def marimo_server():
    if not (VENV_BIN / "marimo").exists():
        pytest.fail(f"{VENV_BIN / 'marimo'} is missing: marimo is in the test extra (pip install -e '.[test]')")
    server = MarimoServer(APP).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def streamed(marimo_server, chromium):
    """One page on the app streaming DELTAS deltas, left once the settled snapshot arrived."""
    expected = "".join(piece(i) for i in range(DELTAS))
    run = stream_and_settle(chromium, marimo_server, deltas=DELTAS, pace=PACE, length=len(expected.strip()))
    yield {"page": run.page, "view": run.page.locator(".agentctx-view").first, "traffic": run.traffic,
           "expected": expected, "snapshot": run.snapshot, "console": run.console}
    run.context.close()


def test_the_view_shows_every_delta_in_order(streamed):
    text = streamed["page"].evaluate(VIEW_OUTPUT_TEXT_JS, ["m"])
    assert text.strip() == streamed["expected"].strip()


def shown_text(page, locator) -> str:
    """What a reader sees of ``locator`` once scrolled to it. The view follows the stream to its end,
    so the context messages at the top may sit off screen, where ``content-visibility: auto`` skips
    them and ``innerText`` is empty: scroll there and wait for the next frame to lay them out."""
    locator.scroll_into_view_if_needed()
    page.wait_for_function("el => el.innerText.trim().length > 0", arg=locator.element_handle(), polling="raf")
    return locator.inner_text().strip()


def test_the_context_messages_render(streamed):
    page, view = streamed["page"], streamed["view"]
    messages = view.locator(".actx-context .actx-msg")
    shown = [(messages.nth(i).get_attribute("data-kind"), shown_text(page, messages.nth(i).locator(".actx-msg-body")))
             for i in range(messages.count())]
    assert shown == CONTEXT_BODIES
    assert shown_text(page, view.locator(".actx-msg-assistant .actx-msg-body strong")) == "one piece"
    assert view.locator("[data-testid=actx-header-name]").inner_text() == "marimo stream"


def test_the_settled_snapshot_trait_holds_the_whole_stream(streamed):
    snapshot = streamed["snapshot"]
    message = snapshot["outputs"]["messages"]["m"]
    assert (message["props"]["content"], message["done"]) == (streamed["expected"], True)
    assert [m["content"][0]["text"] for m in snapshot["context"]] == [
        "Count for me, please.", "Here it comes, **one piece** at a time."]


def test_the_page_logs_no_view_errors(streamed):
    ours = [line for line in streamed["console"] if "agentctx" in line or line.startswith("pageerror")]
    assert ours == []


def wire_text(frames: list[Frame], output_id: str) -> str:
    """The text of one output message as the page could rebuild it from the wire alone: the snapshot
    reply's text (a view that rendered late starts there), then every later batch's ops for that id
    in seq order (a replace sets the text, an append adds to it). Only the ops this app sends."""
    text, seq = "", 0
    for frame in frames:
        content = frame.body.get("content") if frame.method == "custom" else None
        if not isinstance(content, dict) or content["seq"] <= seq:
            continue
        seq = content["seq"]
        if content["kind"] == "snapshot":
            message = content["state"]["outputs"]["messages"].get(output_id)
            text = message["props"]["content"] if message else ""
            continue
        for op in content["ops"]:
            message = op.get("message") if op["op"] == "out" else None
            if not message or message.get("id") != output_id or "content" not in message["props"]:
                continue
            delta = message["props"]["content"]
            text = text + delta if message.get("delta") else delta
    return text


def test_stream_traffic_on_marimos_websocket_is_linear(streamed):
    """Each delta crosses marimo's websocket once, and the whole-state ``_snapshot`` writes add up to a
    constant times the settled state — never one a second (issue #14: that made traffic grow with the
    square of the stream). Writes at seqs that at least double (mid-stream catch-ups) and then the
    settled one sum to under 3x the last (worst case: the settled write just after a catch-up).
    ``-s`` prints the account; bench/marimo_stream.py compares stream sizes."""
    traffic, expected = streamed["traffic"], streamed["expected"]
    account = traffic.account()
    print(f"\nmarimo websocket, {DELTAS:,} deltas ({len(expected):,} characters): "
          + json.dumps(account, sort_keys=True))
    assert wire_text(traffic.view_frames(), "m") == expected
    assert account["batch_frames"] > 1  # the text streamed in as batches, not in one snapshot at the end
    settled_frame = max(frame.size for frame in traffic.view_frames()
                        if frame.method == "update" and "_snapshot" in frame.body.get("state", {}))
    assert settled_frame > len(expected)  # the settled trait holds the whole text (checked exactly above)
    assert account["snapshot_trait_bytes"] <= 3 * settled_frame, account

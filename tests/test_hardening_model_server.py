"""A hostile or broken model server (issue 21): what it may send is bounded, and the next turn works.

Each case is a real loopback server (tests/wire_server.py) read through the real SDK. The caps are
lowered for the test (they are module constants, read at each chunk), so a case costs a few MB and
ends by the cap, never by a clock.
"""

from __future__ import annotations

import functools
import gzip
import socket
import threading

import orjson
import pytest

import agentctx_widgets
from agentctx_widgets import Context, OpenAIChatModel
from agentctx_widgets.models import limits
from wire_server import Reply, WireServer

run_unchecked = functools.partial(agentctx_widgets.run_turn, check=False)

MiB = 1024 * 1024


def chunk(text: str) -> bytes:
    payload = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
    return b"data: " + orjson.dumps(payload) + b"\n\n"


def finished() -> bytes:
    last = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    return b"data: " + orjson.dumps(last) + b"\n\ndata: [DONE]\n\n"


GOOD = Reply(body=[chunk("Hello"), chunk(" there"), finished()])


def turn(server: WireServer, **model_options):
    context = Context()
    result = run_unchecked(context, "hi", model=OpenAIChatModel("m", base_url=server.url, api_key="k", **model_options))
    return context, result


@pytest.fixture
def small_caps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_LINE_BYTES", 1 * MiB)
    monkeypatch.setattr(limits, "MAX_RESPONSE_BYTES", 4 * MiB)


def test_an_endless_line_is_cut_at_the_line_cap_and_the_next_turn_works(small_caps: None) -> None:
    endless = [b"data: {\"x\": \"" + b"a" * (256 * 1024) for _ in range(64)]  # 16 MiB, never a newline
    with WireServer([Reply(body=endless), GOOD]) as server:
        context, result = turn(server)
        assert result.error["code"] == "RESPONSE_TOO_LARGE"
        assert "a line over 1 MiB without a newline" in result.error["message"]
        assert f"POST {server.url}/chat/completions" in result.error["message"]
        assert [m["type"] for m in context.messages()] == [2]  # the user's message; nothing of the reply
        _, again = turn(server)
    assert again.error is None and again.response["content"] == "Hello there"


def test_a_response_of_valid_lines_is_cut_at_the_response_cap(small_caps: None) -> None:
    many = [b"".join(chunk("word ") for _ in range(1000)) for _ in range(200)]  # ~20 MB of valid deltas
    with WireServer(Reply(body=many)) as server:
        context, result = turn(server)
    assert result.error["code"] == "RESPONSE_TOO_LARGE"
    assert "passed 4 MiB (models.limits.MAX_RESPONSE_BYTES)" in result.error["message"]
    assert [m["type"] for m in context.messages()] == [2]


def test_a_gzip_bomb_is_cut_while_it_inflates(small_caps: None) -> None:
    bomb = gzip.compress(b"data: " + b"0" * (200 * MiB), compresslevel=9)  # ~200 KB on the wire
    assert len(bomb) < 1 * MiB
    with WireServer(Reply(body=bomb, headers={"content-encoding": "gzip"})) as server:
        _, result = turn(server)
        sent = server.requests[0].headers
    assert result.error["code"] == "RESPONSE_TOO_LARGE"
    assert sent["accept-encoding"] == "identity"  # it was asked for an uncompressed body


def test_a_compressed_stream_within_the_caps_is_read() -> None:
    body = gzip.compress(chunk("Hello") + chunk(" there") + finished())
    with WireServer(Reply(body=body, headers={"content-encoding": "gzip"})) as server:
        _, result = turn(server)
    assert result.error is None and result.response["content"] == "Hello there"


def test_an_encoding_that_is_not_read_says_so() -> None:
    with WireServer(Reply(body=b"\x00\x01", headers={"content-encoding": "br"})) as server:
        _, result = turn(server)
    assert result.error["code"] == "BAD_STREAM"
    assert "compressed its response as 'br'" in result.error["message"]


def test_a_server_that_never_answers_ends_at_the_timeout() -> None:
    listener = socket.create_server(("127.0.0.1", 0))  # accepts, reads, never answers
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        model = OpenAIChatModel("m", base_url=f"http://127.0.0.1:{listener.getsockname()[1]}/v1", api_key="k",
                                timeout=0.5)
        result = run_unchecked(Context(), "hi", model=model)
    finally:
        stop.set()
        thread.join()
        for connection in held:
            connection.close()
        listener.close()
    assert result.error["code"] == "TIMEOUT"


def test_the_default_timeout_is_ours_and_documented() -> None:
    client = OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1", api_key="k").client
    timeout = client.timeout
    assert (timeout.connect, timeout.read, timeout.write, timeout.pool) == (10.0, 300.0, 60.0, 30.0)
    assert limits.TIMEOUT_SECONDS == {"connect": 10.0, "read": 300.0, "write": 60.0, "pool": 30.0}


def test_more_tool_calls_than_the_cap_end_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_TOOL_CALLS", 3)
    ran: list[str] = []

    def f() -> str:
        ran.append("f")
        return "ok"

    def call(index: int) -> bytes:
        delta = {"tool_calls": [{"index": index, "id": f"call_{index}", "type": "function",
                                 "function": {"name": "f", "arguments": "{}"}}]}
        payload = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        return b"data: " + orjson.dumps(payload) + b"\n\n"

    with WireServer(Reply(body=[call(i) for i in range(10)] + [finished()])) as server:
        context = Context()
        result = run_unchecked(context, "hi", model=OpenAIChatModel("m", base_url=server.url, api_key="k"), tools=[f])
    assert result.error["code"] == "RESPONSE_TOO_LARGE"
    assert "started more than 3 tool calls (models.limits.MAX_TOOL_CALLS)" in result.error["message"]
    assert ran == [] and [m["type"] for m in context.messages()] == [2]


def test_a_key_the_server_echoes_reaches_no_error_output_message_or_repr() -> None:
    """Issue 21: a 401 body echoing the key put it in the error, the output message and the result's repr."""
    key = "sk-live-abcdefghijklmnop"
    body = f'{{"error": {{"message": "Invalid key {key}", "type": "invalid_request_error", "code": "invalid_api_key"}}}}'
    with WireServer(Reply(body=body, status=401, content_type="application/json")) as server:
        context = Context()
        result = run_unchecked(context, "hi", model=OpenAIChatModel("m", base_url=server.url, api_key=key))
    assert result.error["code"] == "AUTHENTICATION" and "Invalid key ***" in result.error["message"]
    shown = [m for m in result.output if m.get("type") == "error"]
    assert shown and all(key not in orjson.dumps(m).decode() for m in shown)
    assert key not in repr(result) and key not in orjson.dumps(result.error).decode()

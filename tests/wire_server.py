"""A loopback HTTP server that speaks a provider's wire format from hand-written captures.

Connectors are tested against this, through the real SDKs and a real socket, never a mock of the SDK.
Each request is answered by the next :class:`Reply` (the last one repeats); every request's method,
path, headers and JSON body are recorded for whole-body assertions. The server listens on 127.0.0.1
only and stops by itself after ``lifetime`` seconds even if a test forgets it.
"""

from __future__ import annotations

import http.server
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

CAPTURES = Path(__file__).parent / "vectors" / "wire"


def capture(name: str) -> str:
    """The text of ``tests/vectors/wire/NAME`` (an SSE capture or a JSON body)."""
    return (CAPTURES / name).read_text(encoding="utf-8")


def sse_events(text: str) -> list[str]:
    """Split an SSE capture into its events (blank-line separated), each ending in a blank line."""
    return [block.strip("\n") + "\n\n" for block in text.replace("\r\n", "\n").split("\n\n") if block.strip()]


@dataclass
class Reply:
    """One HTTP response. ``body`` is a str/bytes, or a list of pieces written (and flushed) one by one
    with ``delay`` seconds before each after the first; ``cut_after`` closes the socket after that many
    pieces without finishing the response (a dropped connection)."""

    body: str | bytes | list[str | bytes] = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/event-stream"
    delay: float = 0.0
    cut_after: int | None = None
    first_delay: float = 0.0


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    raw: bytes
    arrived: float
    peer: tuple = ()
    """The client's (host, port): two requests with the same peer came on one connection."""

    @property
    def json(self) -> Any:
        return orjson.loads(self.raw)


class WireServer:
    """``with WireServer([Reply(...)]) as server: client(base_url=server.url)``."""

    def __init__(self, replies: list[Reply] | Reply, *, lifetime: float = 60.0, prefix: str = "/v1") -> None:
        self.replies = replies if isinstance(replies, list) else [replies]
        self.requests: list[Request] = []
        self.prefix = prefix
        self.lifetime = lifetime
        self.disconnected = threading.Event()
        """Set when the client closed the socket while a reply was still being written."""
        self.first_byte_at: list[float] = []
        """``time.perf_counter()`` when each reply's first body piece was flushed."""
        self._server: http.server.ThreadingHTTPServer | None = None
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]  # type: ignore[union-attr]
        return f"http://{host}:{port}{self.prefix}"

    def __enter__(self) -> WireServer:
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                with owner._lock:
                    index = len(owner.requests)
                    owner.requests.append(Request("POST", self.path, {k.lower(): v for k, v in self.headers.items()},
                                                  raw, time.perf_counter(), tuple(self.client_address)))
                    reply = owner.replies[min(index, len(owner.replies) - 1)]
                owner._answer(self, reply)

            do_GET = do_POST

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="wire-server",
                         daemon=True).start()
        self._timer = threading.Timer(self.lifetime, self.close)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        server, self._server_closed = self._server, True
        if server is not None:
            server.shutdown()
            server.server_close()
        timer = getattr(self, "_timer", None)
        if timer is not None:
            timer.cancel()

    def _answer(self, handler: http.server.BaseHTTPRequestHandler, reply: Reply) -> None:
        pieces = reply.body if isinstance(reply.body, list) else [reply.body]
        data = [piece.encode() if isinstance(piece, str) else piece for piece in pieces]
        handler.send_response(reply.status)
        handler.send_header("content-type", reply.content_type)
        for name, value in reply.headers.items():
            handler.send_header(name, value)
        streamed = isinstance(reply.body, list) or reply.cut_after is not None
        if streamed:
            handler.send_header("transfer-encoding", "chunked")
        else:
            handler.send_header("content-length", str(len(data[0])))
        handler.end_headers()
        try:
            if reply.first_delay:
                time.sleep(reply.first_delay)
            for position, piece in enumerate(data):
                if reply.cut_after is not None and position >= reply.cut_after:
                    handler.wfile.flush()
                    handler.connection.shutdown(socket.SHUT_RDWR)
                    handler.close_connection = True
                    return
                if position and reply.delay:
                    time.sleep(reply.delay)
                if streamed:
                    handler.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                else:
                    handler.wfile.write(piece)
                handler.wfile.flush()
                if position == 0:
                    self.first_byte_at.append(time.perf_counter())
            if streamed:
                handler.wfile.write(b"0\r\n\r\n")
                handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.disconnected.set()
            handler.close_connection = True


def capture_data(name: str) -> list[dict]:
    """The ``data:`` payload of every event of a capture, as the SDK hands them over (``[DONE]`` left out)."""
    payloads = []
    for block in sse_events(capture(name)):
        data = [line[len("data:"):].strip() for line in block.splitlines() if line.startswith("data:")]
        if data and data[0] != "[DONE]":
            payloads.append(orjson.loads(data[0]))
    return payloads


def translate_with(translator: Any, payloads: list[dict]) -> list[dict]:
    """Feed a pure translator every payload, then finish it; every event must be a valid one."""
    from agentctx_widgets.context import validate_response_event

    events = [event for payload in payloads for event in translator.feed(payload)] + translator.finish()
    for event in events:
        validate_response_event(event)
    return events


def assemble(events: list[dict]) -> tuple[dict, Any]:
    """(the assembled message, the usage) of normalised events."""
    from agentctx_widgets.context import create_assembler

    assembler = create_assembler()
    for event in events:
        assembler.consume(event)
    return assembler.message(), assembler.usage

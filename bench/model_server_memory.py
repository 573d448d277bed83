"""Model-server memory benchmark: the kernel's peak RSS against a hostile server, at the DEFAULT caps.

The probes of ``tests/test_hardening_model_server.py`` (issue 21), with ``models/limits.py`` as shipped
(16 MiB a line, 256 MiB a response, 128 tool calls; the tests lower the first two to 1 and 4 MiB). A
loopback server here (127.0.0.1, streamed from generators: nothing of a case is built whole) answers each
case; each case runs ``run_turn(check=False)`` with ``OpenAIChatModel`` in a fresh child process, which
reports its peak RSS (``ru_maxrss``), the turn's seconds and the error code. The baseline row is the same
child doing a trivial good turn: the imports, the SDK client and one turn. Each child runs under
``RLIMIT_AS`` 6 GiB and a 900 s timeout, so a regression ends as a failed row, not a machine out of memory.

Run: ``.venv/bin/python bench/model_server_memory.py`` (``--cases baseline,endless_line`` for some;
``--list`` names them).
"""

from __future__ import annotations

import argparse
import http.server
import json
import resource
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MiB = 1024 * 1024


def chunk(delta: dict, finish: str | None = None) -> bytes:
    payload = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"


def text(value: str) -> bytes:
    return chunk({"content": value})


DONE = chunk({}, "stop") + b"data: [DONE]\n\n"


def good() -> Iterator[bytes]:
    yield text("Hello") + text(" there") + DONE


def endless_line() -> Iterator[bytes]:
    """``data: {"x": "aaaa…`` and never a newline (was 3.6 GB and MemoryError at 62 s)."""
    yield b'data: {"x": "'
    piece = b"a" * (256 * 1024)
    while True:
        yield piece


def small_deltas() -> Iterator[bytes]:
    """Valid 5-character text deltas without end: the SDK parses each (≈1.9 M before the 256 MiB cap)."""
    piece = text("word ") * 500
    while True:
        yield piece


def big_deltas() -> Iterator[bytes]:
    """Valid text deltas of 64 KiB each without end: the reply's text grows towards the 256 MiB cap."""
    piece = text("w" * (64 * 1024 - 1) + " ")
    while True:
        yield piece


def _deflated(lines: Iterator[bytes], total: int) -> Iterator[bytes]:
    """``total`` bytes of ``lines``, gzip-compressed as they go (the bomb is never held inflated)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    sent = 0
    for line in lines:
        out = compressor.compress(line)
        sent += len(line)
        if out:
            yield out
        if sent >= total:
            break
    yield compressor.flush()


def _repeat(piece: bytes) -> Iterator[bytes]:
    while True:
        yield piece


def gzip_line_bomb() -> Iterator[bytes]:
    """1 GiB of ``data: 000…`` with no newline, gzip'd to ≈1 MB (the test's bomb, 5× bigger)."""
    yield from _deflated(_repeat(b"0" * MiB), 1024 * MiB)


def gzip_delta_bomb() -> Iterator[bytes]:
    """1 GiB of valid text deltas, gzip'd: inflated only up to the 256 MiB response cap."""
    yield from _deflated(_repeat(text("word ") * 2000), 1024 * MiB)


def _call(index: int, arguments: str, start: bool) -> bytes:
    call: dict = {"index": index, "function": {"arguments": arguments}}
    if start:
        call = {"index": index, "id": f"call_{index}", "type": "function", "function": {"name": "f", "arguments": arguments}}
    return chunk({"tool_calls": [call]})


def tool_calls() -> Iterator[bytes]:
    """10^6 tool-call deltas, each a new call (was 2.9 GB and still running at 240 s)."""
    for start in range(0, 1_000_000, 1000):
        yield b"".join(_call(index, "{}", True) for index in range(start, start + 1000))
    yield chunk({}, "tool_calls") + b"data: [DONE]\n\n"


ARGUMENT_DELTAS = 1_000_000


def tool_argument_deltas() -> Iterator[bytes]:
    """10^6 tool-call deltas of one call's arguments (``{"x": "…"}``, 1 MB in all), then the call's end; the
    tool runs and the second request gets a good reply."""
    yield _call(0, '{"x": "', True)
    piece = _call(0, "y", False) * 1000
    for _ in range(ARGUMENT_DELTAS // 1000):
        yield piece
    yield _call(0, '"}', False) + chunk({}, "tool_calls") + b"data: [DONE]\n\n"


CASES = {
    "baseline": ("a trivial good turn (imports, client, one turn)", good, None),
    "endless_line": ("an endless data: line, no newline", endless_line, None),
    "small_deltas": ("valid 5-char deltas without end", small_deltas, None),
    "big_deltas": ("valid 64 KiB deltas without end", big_deltas, None),
    "gzip_line_bomb": ("gzip bomb: 1 GiB line in ≈1 MB", gzip_line_bomb, "gzip"),
    "gzip_delta_bomb": ("gzip bomb: 1 GiB of valid deltas", gzip_delta_bomb, "gzip"),
    "tool_calls": ("10^6 tool-call deltas, each a new call", tool_calls, None),
    "tool_argument_deltas": ("10^6 argument deltas of one call", tool_argument_deltas, None),
}


class Server:
    """A loopback server: ``/<case>/v1/chat/completions`` streams that case (its second request: ``good``)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("content-length") or 0))
                case = self.path.strip("/").split("/")[0]
                seen = owner.counts[case] = owner.counts.get(case, 0) + 1
                _, body, encoding = CASES[case]
                pieces = body() if seen == 1 else good()
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                if encoding and seen == 1:
                    self.send_header("content-encoding", encoding)
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                try:
                    for piece in pieces:
                        if piece:
                            self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):  # the client stopped reading: the cap
                    self.close_connection = True

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda request, address: None  # a client that hung up at its cap: expected
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def url(self, case: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/{case}/v1"

    def __enter__(self) -> Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def child(url: str) -> None:
    """One case's turn, in this process; prints one JSON line."""
    resource.setrlimit(resource.RLIMIT_AS, (6 * 1024 * MiB, 6 * 1024 * MiB))
    sys.path.insert(0, str(REPO))
    from agentctx_widgets import Context, OpenAIChatModel, run_turn

    def f(x: str = "") -> str:
        return f"got {len(x)} characters"

    imported = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    result = run_turn(Context(), "hi", model=OpenAIChatModel("m", base_url=url, api_key="sk-bench-key-0000"),
                      tools=[f], check=False)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    error = result.error or {}
    print(json.dumps({"imported_kb": imported, "peak_kb": peak, "seconds": seconds, "code": error.get("code"),
                      "message": (error.get("message") or "")[:160], "tool_results": len(result.tool_results or [])}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    if args.list:
        for name, (what, _, _) in CASES.items():
            print(f"{name}: {what}")
        return
    names = [name.strip() for name in args.cases.split(",") if name.strip()]
    unknown = [name for name in names if name not in CASES]
    if unknown:
        parser.error(f"unknown cases {unknown}; --list names them")
    print("| case | the server sends | ends with | s | peak RSS MB | over baseline MB |")
    print("|---|---|---|---|---|---|")
    baseline = None
    with Server() as server:
        for name in names:
            done = subprocess.run([sys.executable, __file__, "--child", server.url(name)], capture_output=True,
                                  text=True, timeout=900)
            if done.returncode != 0 or not done.stdout.strip():
                print(f"| {name} | {CASES[name][0]} | child failed (exit {done.returncode}): "
                      f"{done.stderr.strip().splitlines()[-1:] } | | | |")
                continue
            row = json.loads(done.stdout.strip().splitlines()[-1])
            peak = row["peak_kb"] / 1024
            if name == "baseline":
                baseline = peak
            over = f"{peak - baseline:+.0f}" if baseline is not None and name != "baseline" else "—"
            ends = row["code"] or f"ok ({row['tool_results']} tool result{'s' * (row['tool_results'] != 1)})"
            print(f"| {name} | {CASES[name][0]} | {ends} | {row['seconds']:.1f} | {peak:.0f} | {over} |", flush=True)


if __name__ == "__main__":
    main()

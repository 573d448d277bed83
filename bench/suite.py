"""Regression suites (issue 22): checking 1,000 recorded cases x 3 turns with JavaScript hooks, and recording
against a loopback model server, measured in one run.

1. ``--cases`` cases (default 1,000) of ``--turns`` turns (default 3) are recorded offline from a
   ``ScriptedModel`` whose reply depends on the request (a ~200-character answer in 8-character deltas,
   usage on ``done``), with seed-API JavaScript hooks (``Create`` prepends a system prompt and sends a
   loading message, ``Done`` sends a status message: two worker round trips a turn). Then
   ``Suite(path).check(hooks=lambda: hooks_from_js(HOOKS), concurrency=N)`` for N in ``--concurrency``
   (wall time, the file read included; every case must pass; the hook sets the factory made are counted
   and their worker processes must have ended after). Target: <= 60 s on this 2-core machine.
   Beside it, the least the job can cost: the same file read and every case's recorded model events
   replayed into one list (no hooks, no turns, no comparison).
2. ``Suite.record`` of ``--record-cases`` one-turn cases (default 64) against a real loopback HTTP server
   speaking OpenAI's chat-completions SSE (``OpenAIChatModel(base_url="http://127.0.0.1:…/v1")``), which
   waits ``--latency`` seconds (default 0.05) before answering each request, with concurrency 16 and 1.
   The suite file is also grepped for the API key (it must not be there). One untimed record first (the
   SDK's import and first client).

With ``--profile``, a cProfile of one check goes to stderr (top 30 by cumulative time).

    .venv/bin/python bench/suite.py [--cases N] [--turns N] [--concurrency 2,4,8] [--record-cases N]
                                    [--latency S] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import http.server
import io
import pstats
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import orjson

from agentctx_widgets import hooks_from_js
from agentctx_widgets.models import OpenAIChatModel, ScriptedModel
from agentctx_widgets.suite import Suite

HOOKS = """
function Create(ctx, messages) {
  ctx.Send({type: "loading", props: {message: "thinking about " + messages.length + " messages"}});
  return { messages: [{role: "system", content: "You are a terse assistant."}, ...messages] };
}
function Done(ctx, messages, response) {
  ctx.Send({type: "text", props: {content: "(done)"}});
}
"""
KEY = "sk-bench-0123456789abcdefSECRET"


def note(text: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def answer(messages: list[dict]) -> dict:
    """A reply that depends on the request: the last user text, padded to ~200 characters."""
    last = messages[-1]["content"][0]["text"]
    text = f"About {last!r}: " + " ".join(f"word{i}" for i in range(30))
    return {"text": text, "usage": {"input_tokens": 20 + len(messages), "output_tokens": 40}}


def cases(count: int, turns: int) -> list[dict]:
    return [{"id": f"c{n:04d}", "turns": [f"question {t + 1} of case {n}" for t in range(turns)]}
            for n in range(count)]


def replay_floor(path: Path) -> tuple[float, int]:
    """The least the check can cost: the file read, every recorded event appended to one list."""
    started = time.perf_counter()
    events: list[dict] = []
    with open(path, "rb") as file:
        next(file)
        for line in file:
            case = orjson.loads(line)
            for call in case["calls"]:
                for event in call["events"]:
                    events.append(dict(event))
    return time.perf_counter() - started, len(events)


class LatencyChatServer:
    """POST /v1/chat/completions: waits ``latency`` s, then streams a short answer as OpenAI's SSE."""

    def __init__(self, latency: float) -> None:
        from bench.models import CHAT_USAGE, _Quiet, _Server, chat_chunk

        class Handler(_Quiet):
            disable_nagle_algorithm = True  # headers and body are two writes: Nagle + delayed ACK added ~40 ms

            def do_POST(self) -> None:  # noqa: N802
                self._request_json()
                time.sleep(latency)
                self._start_sse()
                body = [chat_chunk(role=True)] + [chat_chunk(f" w{i}") for i in range(20)]
                body += [chat_chunk(finish="stop"), chat_chunk(usage=CHAT_USAGE), b"data: [DONE]\n\n"]
                try:
                    self._piece(b"".join(body))
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

        self.server = _Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, name="bench-suite-sse", daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def workers_gone(pids: list[int | None], bound: float = 10.0) -> bool:
    """Whether these hook sets' worker processes ended once ``check`` closed them (closing is asynchronous)."""
    assert None not in pids, "a hook set without a worker"
    ends = time.monotonic() + bound
    while time.monotonic() < ends:
        if not any(Path(f"/proc/{pid}").exists() and "Z" not in _state(pid) for pid in pids):
            return True
        time.sleep(0.02)
    return False


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def timed(work: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    value = work()
    return time.perf_counter() - started, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--concurrency", default="2,4")
    parser.add_argument("--record-cases", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as folder:
        path = Path(folder) / "suite.jsonl"
        note(f"recording {args.cases} cases x {args.turns} turns (ScriptedModel, JS hooks)")
        seconds, _ = timed(lambda: Suite.record(path, cases(args.cases, args.turns),
                                                model=ScriptedModel(answer, chunk_size=8),
                                                hooks=lambda: hooks_from_js(HOOKS), concurrency=4))
        size = path.stat().st_size
        rows.append((f"record {args.cases} x {args.turns} (ScriptedModel, concurrency 4)", f"{seconds:.1f} s",
                     f"file {size / 1e6:.1f} MB"))
        floor, events = replay_floor(path)
        rows.append(("baseline: read the file, replay every recorded event into a list", f"{floor:.2f} s",
                     f"{events} events"))
        for concurrency in [int(part) for part in args.concurrency.split(",")]:
            note(f"check, concurrency {concurrency}")
            made: list[int | None] = []

            def factory() -> Any:  # counts the hook sets check makes (one per pool thread)
                hooks = hooks_from_js(HOOKS)
                made.append(hooks.worker_pid)  # started with the set; replaced only after a limit (none here)
                return hooks

            check = functools.partial(Suite(path).check, hooks=factory, concurrency=concurrency)
            if args.profile:
                profiler = cProfile.Profile()
                seconds, report = timed(lambda: profiler.runcall(check))
                out = io.StringIO()
                pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(30)
                print(out.getvalue(), file=sys.stderr)
            else:
                seconds, report = timed(check)
            assert report.ok, str(report)[:2000]
            gone = workers_gone(made)
            rows.append((f"check {report.total} x {args.turns}, JS hooks, concurrency {concurrency}",
                         f"{seconds:.1f} s", f"{report.headline()}; {seconds / floor:.0f}x the baseline; "
                         f"{len(made)} hook sets made, workers ended after: {gone}"))
        server = LatencyChatServer(args.latency)
        try:
            warm = OpenAIChatModel("gpt-4.1-mini", base_url=server.url, api_key=KEY)  # the SDK's import, untimed
            Suite.record(Path(folder) / "warm.jsonl", ["hi"], model=warm, hooks=lambda: hooks_from_js(HOOKS))
            for concurrency in (16, 1):
                note(f"record against the loopback server, concurrency {concurrency}")
                model = OpenAIChatModel("gpt-4.1-mini", base_url=server.url, api_key=KEY)
                target = Path(folder) / f"live-{concurrency}.jsonl"
                seconds, _ = timed(lambda: Suite.record(target, cases(args.record_cases, 1), model=model,
                                                        hooks=lambda: hooks_from_js(HOOKS), concurrency=concurrency))
                leaked = KEY.encode() in target.read_bytes()
                rows.append((f"record {args.record_cases} x 1 against loopback SSE ({args.latency * 1000:.0f} ms a "
                             f"request), concurrency {concurrency}", f"{seconds:.2f} s",
                             f"{args.record_cases / seconds:.0f} cases/s; key in file: {leaked}"))
        finally:
            server.close()
    print("| what | time | notes |\n|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    main()

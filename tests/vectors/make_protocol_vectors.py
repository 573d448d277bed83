"""Write tests/vectors/protocol.json: stream-protocol sequences recorded from the real StreamProtocol.

Why: the kernel side (widget/stream.py) and the front end (js/src/protocol.js + js/src/delta.js) must
agree on every op and on recovery (gaps, late views, reloads). Each case drives StreamProtocol through
plain callables and the suite's fake scheduler (tests/fakes.py) and records, in order, what a page would see:

    {"t": ms, "trait": state}            the kernel wrote the synced ``_snapshot`` trait
    {"t": ms, "render": true}            a view renders (a later one replaces the first: a reload)
    {"t": ms, "kernel": msg, "lost": b}  a comm message; ``lost`` when no view had rendered yet or the
                                         case drops it on purpose (the gap case)
    {"t": ms, "view_sends": msg}         what the view must have sent by now (written by hand in the
                                         case: the kernel then answers it)

``final`` is the kernel's state at the end (``StreamProtocol.state()``); js/test/protocol-vectors.test.js
replays the events and requires the front end to hold exactly that. tests/test_protocol_vectors.py
regenerates the file and compares, so it cannot go stale.

    .venv/bin/python tests/vectors/make_protocol_vectors.py
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson

from agentctx_widgets.widget.stream import StreamProtocol

TESTS = str(Path(__file__).resolve().parents[1])
if TESTS not in sys.path:  # run as a script (pytest has tests/ on the path already)
    sys.path.insert(0, TESTS)
from fakes import FakeScheduler  # noqa: E402

OUT = Path(__file__).with_name("protocol.json")
START = 1000.0


def header(context: list[dict[str, Any]]) -> dict[str, Any]:
    """A header as plain as the view's but with nothing that depends on other modules' estimates."""
    return {"name": "vectors", "count": len(context), "tokens": 0, "window": None, "model": None}


class Case:
    """One recorded sequence: the protocol, the fake time, and the events a page would see."""

    def __init__(self, context: list[dict[str, Any]] | None = None) -> None:
        self.timers = FakeScheduler(now=START)
        self.events: list[dict[str, Any]] = []
        self.rendered = False
        self._lose = 0
        self.proto = StreamProtocol(self._send, self._trait, header, context=context,
                                    clock=self.timers.clock, schedule=self.timers)

    def _t(self) -> int:
        return round((self.timers.now - START) * 1000)

    def _send(self, message: Any) -> None:
        lost = not self.rendered or self._lose > 0
        if self.rendered and self._lose:
            self._lose -= 1
        self.events.append({"t": self._t(), "kernel": orjson.loads(orjson.dumps(message)), "lost": lost})

    def _trait(self, state: Any) -> None:
        self.events.append({"t": self._t(), "trait": orjson.loads(orjson.dumps(state))})

    def render(self) -> None:
        """A view renders now (again: a page reload); it reads the trait and will ask for a snapshot."""
        self.rendered = True
        self.events.append({"t": self._t(), "render": True})

    def view_sync(self, seq: int) -> None:
        """The view asks for a snapshot (on render, on a gap); the kernel answers at its next slot."""
        self.events.append({"t": self._t(), "view_sends": {"kind": "sync", "seq": seq}})
        self.proto.request_sync()

    def lose(self, count: int = 1) -> None:
        """The next ``count`` comm messages never reach the view."""
        self._lose = count

    def wait(self, seconds: float) -> None:
        self.timers.advance(seconds)

    def finish(self, name: str, doc: str) -> dict[str, Any]:
        self.wait(2.0)
        count = len(self.events)
        final = orjson.loads(orjson.dumps(self.proto.state()))
        assert len(self.events) == count, f"{name}: state() had to send something; end the case settled"
        return {"name": name, "doc": doc, "events": self.events, "final": final}


def text(msg_id: str | None, content: str, **extra: Any) -> dict[str, Any]:
    message = {"type": "text", "props": {"content": content}, **extra}
    if msg_id is not None:
        message["id"] = msg_id
    return message


def append(msg_id: str | None, content: str, **extra: Any) -> dict[str, Any]:
    return text(msg_id, content, delta=True, delta_path="content", delta_action="append", **extra)


def user(words: str) -> dict[str, Any]:
    return {"type": 2, "content": [{"type": "text", "text": words}]}


def folded_appends() -> dict[str, Any]:
    case = Case()
    case.render()
    case.view_sync(0)
    case.wait(0.05)
    case.proto.output(text("m", "He"))  # goes out at once: nothing was sent in the last 30 ms
    for piece in ["ll", "o", ",", " world"]:
        case.proto.output(append("m", piece))
    case.proto.output(text("n", ""))
    for piece in ["a", "b"]:  # two streams interleaved: each folds into one op
        case.proto.output(append("n", piece))
        case.proto.output(append("m", "!"))
    case.wait(0.05)
    case.proto.output({**append("m", "?"), "done": True})  # a done ends the fold
    return case.finish("folded appends", "string appends within 30 ms fold into one op per message, "
                       "also interleaved; a done delta is sent as it is")


def gap() -> dict[str, Any]:
    case = Case()
    case.render()
    case.view_sync(0)
    case.wait(0.05)
    case.proto.output(text("m", "a"))
    case.wait(0.05)
    case.lose()
    case.proto.output(append("m", "b"))  # lost: the view will see batch 3 after 1
    case.wait(0.05)
    case.proto.output(append("m", "c"))
    case.view_sync(1)  # batch 3 after batch 1: the view (at seq 1) saw a gap
    case.wait(0.05)
    case.proto.output(append("m", "d"))
    return case.finish("gap", "a lost batch: the next one is a gap, the view asks for a snapshot, "
                       "adopts it and resumes with the batches after it")


def late_view() -> dict[str, Any]:
    case = Case([user("hi")])
    case.proto.output(text("m", "sent before any view rendered"))
    case.wait(0.05)
    case.proto.output(append("m", "; lost"))
    case.wait(0.100)  # not settled yet: the trait still holds seq 0
    case.render()
    case.view_sync(0)
    case.wait(0.05)
    case.proto.output(append("m", "; after"))
    return case.finish("late view", "batches sent before the view rendered are lost; it starts from the "
                       "trait (seq 0), asks for a snapshot and applies what follows")


def reload() -> dict[str, Any]:
    case = Case()
    case.render()
    case.view_sync(0)
    case.wait(0.05)
    case.proto.output(text("m", "one"))
    case.wait(1.0)  # settled: the trait now holds seq 1 (the live view ignores it: not newer)
    case.proto.output(append("m", " two"))
    case.wait(0.100)
    case.render()  # the page reloads: the new view has only the trait (seq 1)
    case.view_sync(1)
    case.wait(0.05)
    case.proto.output(append("m", " three"))
    return case.finish("reload", "a reloaded view starts from the settled trait, asks for a snapshot from "
                       "its seq, and goes on from there")


def trait_catch_up() -> dict[str, Any]:
    case = Case()
    case.render()
    case.view_sync(0)
    case.wait(0.05)
    case.proto.output(text("m", "x"))
    case.wait(0.05)
    case.lose()
    case.proto.output(append("m", "y"))  # lost, and nothing follows: no gap to notice
    case.wait(1.0)  # the stream settles: the trait (seq 2) is newer than the view (seq 1)
    case.proto.output(append("m", "z"))
    return case.finish("settled trait catches a view up", "a view that lost the last batch of a burst "
                       "adopts the settled trait, newer than itself, and applies the next batch")


def clear_output() -> dict[str, Any]:
    case = Case([user("hi")])
    case.render()
    case.view_sync(0)
    case.wait(0.05)
    case.proto.output(text("m", "old"))
    case.proto.output(append("m", " text"))
    case.proto.output(text(None, "id-less"))
    case.proto.clear_output()
    case.proto.output(append("m", "new"))  # an append for an id the clear forgot creates it again
    case.proto.output(append("", " slot"))  # id "" shares the slot of id-less messages
    return case.finish("clear_output", "clear_output forgets output messages (not the context); later "
                       "appends start afresh; id-less messages share one slot")


def context_edits() -> dict[str, Any]:
    case = Case([user("first"), user("second")])
    case.render()
    case.view_sync(0)
    case.wait(0.05)
    case.proto.reset_context([user("A"), user("B")])  # the view was pointed at another Context
    case.wait(0.05)
    case.proto.context_change({"action": "added", "index": 2, "message": user("third")})
    case.proto.context_change({"action": "updated", "index": 0, "message": user("A, edited")})
    case.proto.context_change({"action": "removed", "index": 1, "message": user("B")})
    live = {"type": 3, "content": [{"type": "text", "text": "Thin"}]}
    case.proto.set_pending(live)
    case.wait(0.05)
    live["content"][0]["text"] += "king"  # the runner grows the pending message in place
    case.proto.set_pending(live)
    case.wait(0.05)
    live["content"].append({"type": "toolCall", "callId": "c1", "name": "f", "arguments": {}})
    case.proto.set_pending(live)
    case.wait(0.05)
    case.proto.set_pending(None)  # committed: it arrives as a context message
    case.proto.context_change({"action": "added", "index": 2, "message": live})
    return case.finish("context edits", "reset / added / updated / removed context ops, the header "
                       "they change, and a pending message that grows by text, then by a block, then commits")


CASES = [folded_appends, gap, late_view, reload, trait_catch_up, clear_output, context_edits]


def build() -> list[dict[str, Any]]:
    """Every case, recorded afresh."""
    return [make() for make in CASES]


def dumps(cases: list[dict[str, Any]]) -> bytes:
    """One event per line, so a diff of the file reads as a diff of the sequences."""
    lines = []
    for case in cases:
        events = ",\n  ".join(orjson.dumps(event).decode() for event in case["events"])
        lines.append(f'{{"name": {orjson.dumps(case["name"]).decode()}, "doc": {orjson.dumps(case["doc"]).decode()},\n'
                     f' "events": [\n  {events}],\n "final": {orjson.dumps(case["final"]).decode()}}}')
    return ("[\n" + ",\n\n".join(lines) + "\n]\n").encode()


if __name__ == "__main__":
    OUT.write_bytes(dumps(build()))
    print(f"wrote {OUT}")

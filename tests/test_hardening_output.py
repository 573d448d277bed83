"""Output messages that JSON (and so the view, the notebook and the session file) cannot carry are refused
at send with OutputMessageError naming the place — never a raw orjson TypeError or a RecursionError later."""

from __future__ import annotations

import pytest

from agentctx_widgets import Output
from agentctx_widgets.output import OutputMessageError
from agentctx_widgets.output.messages import MAX_DEPTH


def nested(depth: int) -> dict:
    root: dict = {}
    node = root
    for _ in range(depth):
        node["a"] = {}
        node = node["a"]
    return root


@pytest.mark.parametrize(("props", "match"), [
    ({"n": 2**70}, r"message\.props\.n is 1180591620717411303424, an integer past 64 bits"),
    ({"n": -(2**63) - 1}, r"message\.props\.n is -9223372036854775809, an integer past 64 bits"),
    ({"s": "ok \ud800"}, r"message\.props\.s has a lone surrogate"),
    ({"\udc00key": 1}, r"message\.props has a lone surrogate"),
    (nested(MAX_DEPTH + 5), rf"is nested more than {MAX_DEPTH} levels deep"),
])
def test_what_json_cannot_carry_is_refused_at_send_and_nothing_is_applied(props, match):
    out = Output()
    out.send({"type": "text", "props": {"content": "before"}, "id": "m"})
    before = out.pending_state
    with pytest.raises(OutputMessageError, match=match):
        out.send({"type": "text", "props": props, "id": "m"})
    assert out.pending_state == before
    out.flush()
    assert out.state["messages"]["m"]["props"] == {"content": "before"}


def test_the_edges_of_the_range_and_deep_but_allowed_nesting_pass():
    out = Output()
    out.send({"type": "text", "props": {"big": 2**64 - 1, "small": -(2**63), "deep": nested(MAX_DEPTH - 3)}, "id": "m"})
    out.flush()
    assert out.state["messages"]["m"]["props"]["big"] == 2**64 - 1


def test_a_ten_thousand_part_delta_path_is_a_diagnostic_not_a_recursion_error():
    out = Output()
    out.send({"type": "text", "props": {"content": "x"}, "id": "m"})
    out.send({"type": "text", "props": {}, "id": "m", "delta": True, "delta_path": ".".join(["a"] * 10_000)})
    assert [d["code"] for d in out.diagnostics] == ["missing_value"]


def test_replay_at_infinite_speed_shows_each_block_once_so_it_stays_linear():
    """Issue 11: `%agentctx replay --speed inf` grew each text chunk by chunk (a 3.2 MB session took 268 s)."""
    from agentctx_widgets.magics import _stream_into, stream_chunks

    class View:
        def __init__(self):
            self.shown = []

        def set_pending(self, message):
            self.shown.append([dict(block) for block in message["content"]])

    text = " ".join(f"w{i}" for i in range(50_000))
    message = {"type": 3, "content": [{"type": "thinking", "text": "t " * 10}, {"type": "text", "text": text}]}
    view = View()
    count = _stream_into(view, message, pause=0.0)
    assert count == len(stream_chunks("t " * 10)) + len(stream_chunks(text)) == 50_010
    assert len(view.shown) == 2 and view.shown[-1] == message["content"]  # one set_pending per block, whole


def test_agentctx_load_of_a_fifo_or_a_directory_says_what_it_is_and_binds_nothing(tmp_path):
    import os

    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "agentctx_widgets")
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    for target, said in ((fifo, "is a FIFO (named pipe), not a regular file"), (tmp_path, "is a directory, not a regular file")):
        with capture_output() as out:
            shell.run_line_magic("agentctx", f"load {target} --as loaded_thing")
        assert out.stderr.startswith("agentctx: load: cannot read ") and said in out.stderr, out.stderr
        assert out.stderr.count("\n") == 1 and "loaded_thing" not in shell.user_ns


def test_agentctx_load_of_garbage_is_one_error_and_a_partly_bad_file_one_summary_line(tmp_path):
    """Issue 12: a binary file printed one line per bad line (1,074) and bound an empty Context."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "agentctx_widgets")
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(b"\x00\x9f not json\n" * 40)
    with capture_output() as out:
        shell.run_line_magic("agentctx", f"load {garbage} --as junk")
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("agentctx: load: garbage.jsonl has no readable line (40 skipped")
    assert "junk" not in shell.user_ns and out.stdout == ""

    partly = tmp_path / "partly.jsonl"
    partly.write_text('{"type": 2, "content": [{"type": "text", "text": "hi"}]}\n' + "nope\n" * 5)
    with capture_output() as out:
        shell.run_line_magic("agentctx", f"load {partly} --as partly")
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("agentctx: load: skipped 5 unreadable lines of partly.jsonl: ")
    assert out.stderr.rstrip().endswith("; …")  # the first three are named, the rest counted
    assert len(shell.user_ns.pop("partly")) == 1

    many = tmp_path / "many.jsonl"  # past the 20 reasons load_session keeps: the count is still every line
    many.write_text('{"type": 2, "content": [{"type": "text", "text": "hi"}]}\n' + "nope\n" * 500)
    with capture_output() as out:
        shell.run_line_magic("agentctx", f"load {many} --as many")
    assert out.stderr.startswith("agentctx: load: skipped 500 unreadable lines of many.jsonl: ")
    assert len(shell.user_ns.pop("many")) == 1

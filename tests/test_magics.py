"""``%agentctx`` through a real IPython shell: every subcommand and every error path.

Displayed objects are recorded by replacing the ``display`` the magics module calls; printed lines are
captured with IPython's ``capture_output`` (the shell and its helpers: magic_shell.py). An error must be
one ``agentctx: ...`` line on stderr, with no traceback, and must leave the user namespace and every
context exactly as they were. The usage report, the offline tiktoken lookup, the argument parsers, the
nbval sanitizer and the stored notebooks have test files of their own.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

import agentctx_widgets
from agentctx_widgets import _usage_report
from agentctx_widgets import magics as magics_module
from agentctx_widgets.context import Context, system_message, user_message
from agentctx_widgets.output import without_echoes as shown

from magic_shell import assert_error, assert_turn_failure, cell, ip, line, names, sample_context, shell  # noqa: F401 - ip, shell: fixtures

JS_HOOKS = """
function Create(ctx, messages) {
  ctx.Send({type: "loading", props: {message: "Thinking..."}, id: "l1"});
  ctx.Flush();
  return { messages };
}
function Done(ctx, messages, response) {
  ctx.Send("Done: " + response.content);
  ctx.Flush();
  return {};
}
"""

PY_HOOKS = """
def Create(ctx, messages):
    ctx.Send({"type": "text", "props": {"content": "from python"}, "id": "p1"})
    ctx.Flush()
    return {"messages": messages}

def helper():
    return 1
"""




def save_session(tmp_path: Path, name: str, messages: list[dict]) -> Path:
    ctx = Context(messages, name=name, dir=tmp_path)
    return ctx.save()


ASSISTANT_REPLY = {
    "type": 3,
    "content": [
        {"type": "thinking", "text": "The user greets me."},
        {"type": "text", "text": "Hello! How can I help you today?"},
        {"type": "toolCall", "callId": "c1", "name": "lookup", "arguments": {"q": "greeting"}},
    ],
}


# ---- parsing and help ---------------------------------------------------------------------------
def test_help_lists_every_subcommand(ip: Any) -> None:
    result, out = line(ip, "help")
    assert result is None and out.stderr == ""
    for usage in (
        "%agentctx show CTX",
        "%agentctx usage [--model NAME] [--no-exact] CTX",
        "%%agentctx hooks [--lang {js,python}] NAME",
        "%agentctx run [--hooks NAME] [--model NAME_OR_VAR] [--tools NAMES] [--assistant PATH] [--accept {cui-web,standard}] [--no-stream] [--strict]"
        " [--budget USD] [--result NAME] CTX [TEXT ...]",
        "%agentctx load [--as NAME] PATH",
        "%agentctx replay [--speed X] PATH",
        "%agentctx export [--title TITLE] CTX PATH",
    ):
        assert usage in out.stdout


def test_help_says_where_the_shipped_sanitizer_is(ip: Any) -> None:
    _, out = line(ip, "help")
    path = Path(agentctx_widgets.__file__).with_name("nbval_sanitize.cfg")
    assert path.is_file()
    assert f"--nbval-sanitize-with={path}" in out.stdout


def test_empty_line_is_help(ip: Any) -> None:
    _, out = line(ip, "")
    assert "%agentctx show CTX" in out.stdout


@pytest.mark.parametrize("text", ["help run", "run --help", "run -h"])
def test_help_for_one_command(ip: Any, text: str) -> None:
    _, out = line(ip, text)
    assert out.stdout.startswith("usage: %agentctx run")
    assert "--no-stream" in out.stdout and "--accept {cui-web,standard}" in out.stdout
    assert "replay" not in out.stdout


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("bogus x", ("unknown command 'bogus'", "show, usage, hooks, run, load, replay, watch, export, diff, help")),
        ('show "unclosed', ("cannot split", "no closing quotation")),
        ("show", ("show: the following arguments are required: CTX",)),
        ("show a b", ("show: unrecognized arguments: b",)),
        ("usage ctx --model", ("usage: argument --model: expected one argument",)),
        ("run ctx hi --accept json", ("run: argument --accept: invalid choice: 'json'",)),
        ("replay s.jsonl --speed 0", ("replay: argument --speed: speed must be greater than 0",)),
        ("replay s.jsonl --speed -2", ("speed must be greater than 0",)),
        ("replay s.jsonl --speed fast", ("speed must be a number, got 'fast'",)),
        ("help nonsense", ("unknown command 'nonsense'",)),
        ("hooks greet", ("hooks needs a cell: write %%agentctx hooks greet",)),
    ],
)
def test_bad_arguments_print_one_line_and_change_nothing(ip: Any, text: str, fragments: tuple[str, ...]) -> None:
    before = names(ip)
    result, out = line(ip, text)
    assert result is None
    assert_error(out, *fragments)
    assert names(ip) == before
    assert ip.shown == []


def test_line_only_commands_refuse_a_cell(ip: Any) -> None:
    _, out = cell(ip, "show ctx", "anything")
    assert_error(out, "show is a line magic")




# ---- show -----------------------------------------------------------------------------------------
def test_show_a_context_variable(ip: Any) -> None:
    ctx = sample_context()
    ip.user_ns["ctx"] = ctx
    result, out = line(ip, "show ctx")
    assert out.stderr == ""
    (view,) = ip.shown
    assert result is view  # displayed where the magic stands, and returned (x = %agentctx show ctx)
    assert isinstance(view, agentctx_widgets.ContextView)
    assert view.context is ctx
    assert [m["content"][0]["text"] for m in view.state()["context"]] == [
        "You are a helpful assistant.",
        "hello there friend",
    ]


def test_show_a_list_of_messages(ip: Any) -> None:
    ip.user_ns["msgs"] = [user_message("one two"), {"type": 3, "content": [{"type": "text", "text": "three"}]}]
    _, out = line(ip, "show msgs")
    assert out.stderr == ""
    (view,) = ip.shown
    assert len(view.state()["context"]) == 2


def test_show_a_session_file_by_path_and_by_variable(ip: Any, tmp_path: Path) -> None:
    path = save_session(tmp_path, "chat", [user_message("hi"), ASSISTANT_REPLY])
    _, out = line(ip, f'show "{path}"')
    assert out.stderr == ""
    ip.user_ns["where"] = str(path)
    _, out = line(ip, "show where")
    assert out.stderr == ""
    assert [len(view.state()["context"]) for view in ip.shown] == [2, 2]


def test_show_goes_through_ipython_display(shell: InteractiveShell) -> None:
    shell.user_ns["shown_ctx"] = sample_context()
    try:
        with capture_output() as out:
            shell.run_line_magic("agentctx", "show shown_ctx")
    finally:
        del shell.user_ns["shown_ctx"]
    (output,) = out.outputs
    assert "application/vnd.jupyter.widget-view+json" in output.data
    assert "hello there friend" in output.data["text/plain"]


@pytest.mark.parametrize(
    ("setup", "text", "fragments"),
    [
        ({}, "show nothing_here", ("show: no variable or file named 'nothing_here'",)),
        ({"number": 42}, "show number", ("show: number holds a int, not a Context",)),
        (
            {"bad": [{"type": 2, "content": "not a list"}]},
            "show bad",
            ("show: bad is not a list of messages", "context[0]"),
        ),
        ({}, "show missing/session.jsonl", ("show: no such file: 'missing/session.jsonl'",)),
        ({"gone": "/nonexistent/x.jsonl"}, "show gone", ("show: no such file: '/nonexistent/x.jsonl'",)),
    ],
)
def test_show_errors(ip: Any, setup: dict, text: str, fragments: tuple[str, ...]) -> None:
    ip.user_ns.update(setup)
    before = names(ip)
    _, out = line(ip, text)
    assert_error(out, *fragments)
    assert names(ip) == before and ip.shown == []




# ---- usage (the report itself: test_usage_report.py) ---------------------------------------------
def test_usage_of_an_unknown_variable(ip: Any) -> None:
    _, out = line(ip, "usage nope")
    assert_error(out, "usage: no variable or file named 'nope'")




# ---- load -----------------------------------------------------------------------------------------
def test_load_binds_the_file_stem(ip: Any, tmp_path: Path) -> None:
    path = save_session(tmp_path, "my-session", [user_message("hi"), ASSISTANT_REPLY])
    _, out = line(ip, f"load {path}")
    assert out.stderr == ""
    assert out.stdout == "loaded 2 messages from my-session.jsonl into my_session\n"
    loaded = ip.user_ns["my_session"]
    assert isinstance(loaded, Context) and loaded.messages() == [user_message("hi"), ASSISTANT_REPLY]


def test_load_as_a_name(ip: Any, tmp_path: Path) -> None:
    path = save_session(tmp_path, "s", [user_message("hi")])
    _, out = line(ip, f"load {path} --as chat")
    assert out.stdout == "loaded 1 message from s.jsonl into chat\n"
    assert len(ip.user_ns["chat"]) == 1


def test_load_reports_skipped_lines(ip: Any, tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_text('{"type": 2, "content": [{"type": "text", "text": "ok"}]}\n{"type": 3, "cont\n')
    _, out = line(ip, f"load {path} --as cut")
    assert out.stdout == "loaded 1 message from cut.jsonl into cut\n"
    assert out.stderr.startswith("agentctx: load: ") and "line 2" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("load nowhere.jsonl", ("load: no such file: 'nowhere.jsonl'",)),
        ("load {path} --as 1x", ("load: '1x' is not a valid Python variable name",)),
        ("load {path} --as class", ("load: 'class' is not a valid Python variable name",)),
    ],
)
def test_load_errors(ip: Any, tmp_path: Path, text: str, fragments: tuple[str, ...]) -> None:
    path = save_session(tmp_path, "s", [user_message("hi")])
    before = names(ip)
    _, out = line(ip, text.format(path=path))
    assert_error(out, *fragments)
    assert names(ip) == before




# ---- replay ---------------------------------------------------------------------------------------
class RecordingView:
    """Stands in for a ContextView: keeps a copy of every pending message it is shown."""

    def __init__(self) -> None:
        self.pending: list[Any] = []

    def set_pending(self, message: Any) -> None:
        self.pending.append(copy.deepcopy(message))


def test_stream_into_grows_each_text_block_chunk_by_chunk() -> None:
    view = RecordingView()
    count = magics_module._stream_into(view, ASSISTANT_REPLY, 1e-6)  # any pause: watched, so chunk by chunk
    # "The user greets me." -> 4 chunks; "Hello! How can I help you today?" -> 7; the tool call -> 1
    assert count == 12 == len(view.pending)
    texts = [[block.get("text") for block in message["content"]] for message in view.pending]
    assert texts[0] == ["The "]
    assert texts[3] == ["The user greets me."]
    assert texts[4] == ["The user greets me.", "Hello! "]
    assert texts[10] == ["The user greets me.", "Hello! How can I help you today?"]
    assert view.pending[-1] == ASSISTANT_REPLY  # the whole message once every chunk arrived
    assert ASSISTANT_REPLY["content"][1]["text"] == "Hello! How can I help you today?"  # source untouched


@pytest.mark.parametrize("text", ["", "one", "  leading and trailing  ", "tabs\tand\nnew lines\n\n"])
def test_stream_chunks_join_back_to_the_text(text: str) -> None:
    chunks = magics_module.stream_chunks(text)
    assert "".join(chunks) == text
    assert len(chunks) == len(text.split())


def test_replay_streams_assistant_messages_into_a_new_view(ip: Any, tmp_path: Path) -> None:
    messages = [system_message("Be brief."), user_message("hi"), ASSISTANT_REPLY, {"type": "note", "x": 1}]
    path = save_session(tmp_path, "recorded", messages)
    before = names(ip)
    _, out = line(ip, f"replay {path} --speed inf")
    assert out.stderr == ""
    assert out.stdout == "replayed 4 messages from recorded.jsonl (1 assistant message streamed in 12 chunks)\n"
    (view,) = ip.shown
    state = view.state()
    assert state["context"] == messages and state["pending"] is None
    assert json.loads(view._snapshot)["context"] == messages
    assert names(ip) == before  # replay binds nothing


def test_replay_pauses_scale_with_speed(ip: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = save_session(tmp_path, "r", [user_message("hi"), ASSISTANT_REPLY])
    pauses: list[float] = []
    monkeypatch.setattr(magics_module.time, "sleep", pauses.append)
    line(ip, f"replay {path} --speed 4")
    assert pauses == [magics_module.REPLAY_CHUNK_SECONDS / 4] * 11  # one per text chunk, none for the tool call


def test_replay_of_a_missing_file(ip: Any) -> None:
    _, out = line(ip, "replay missing.jsonl")
    assert_error(out, "replay: no such file: 'missing.jsonl'")
    assert ip.shown == []


# ---- hooks ----------------------------------------------------------------------------------------
def test_hooks_cell_defines_a_javascript_hook_set(ip: Any) -> None:
    result, out = cell(ip, "hooks greet", JS_HOOKS)
    assert result is None and out.stderr == ""
    assert out.stdout == "hook set greet (JavaScript): Create, Done\n"
    assert ip.user_ns["greet"].names == frozenset({"Create", "Done"})


@pytest.mark.parametrize("first_line", ["hooks pyhooks", "hooks pyhooks --lang python"])
def test_hooks_cell_in_python_takes_only_the_hook_functions(ip: Any, first_line: str) -> None:
    _, out = cell(ip, first_line, PY_HOOKS)
    assert out.stdout == "hook set pyhooks (Python): Create\n"
    assert ip.user_ns["pyhooks"].names == frozenset({"Create"})
    assert "helper" not in ip.user_ns  # the cell ran in a namespace of its own


def test_language_detection() -> None:
    assert magics_module.detect_language(PY_HOOKS) == "python"
    assert magics_module.detect_language("async def Done(ctx, messages, response):\n    return {}") == "python"
    assert magics_module.detect_language(JS_HOOKS) == "js"
    assert magics_module.detect_language("function Create() { const undef = 1; }") == "js"


@pytest.mark.parametrize(
    ("first_line", "body", "fragments"),
    [
        ("hooks broken", "function Create(ctx, messages) { return {", ("hooks broken: the JavaScript does not load", "(%%agentctx hooks broken, line 2)")),
        ("hooks none", "const x = 1;", ("hooks none: the cell defines none of Create, Before, After, Done, Error",)),
        ("hooks none --lang python", "x = 1", ("hooks none: the cell defines none of",)),
        ("hooks bad", "def Create(ctx, messages):\n    return {", ("hooks bad: SyntaxError", "cell line 3")),
        (
            "hooks boom",
            "x = 1\ndef Create(ctx, m):\n    pass\n1 / 0\n",
            ("hooks boom: the cell raised ZeroDivisionError", "cell line 5"),
        ),
        ("hooks notfn --lang python", "Create = 3", ("hooks notfn: the cell defines none of",)),
        ("hooks 2fast", JS_HOOKS, ("hooks: '2fast' is not a valid Python variable name",)),
        ("hooks empty", "   \n", ("hooks empty: the cell is empty",)),
        ("hooks x --lang ruby", JS_HOOKS, ("hooks: argument --lang: invalid choice: 'ruby'",)),
    ],
)
def test_hooks_errors_bind_nothing(ip: Any, first_line: str, body: str, fragments: tuple[str, ...]) -> None:
    before = names(ip)
    _, out = cell(ip, first_line, body)
    assert_error(out, *fragments)
    assert names(ip) == before
    assert ip.magics_manager.registry["AgentContextMagics"].hook_sets == {}


def test_hooks_never_overwrite_another_kind_of_variable(ip: Any) -> None:
    ctx = sample_context()
    ip.user_ns["ctx"] = ctx
    _, out = cell(ip, "hooks ctx", JS_HOOKS)
    assert_error(out, "hooks: ctx already holds a Context; choose another name")
    assert ip.user_ns["ctx"] is ctx


def test_run_accepts_python_hook_functions_in_a_variable(ip: Any) -> None:
    ip.user_ns["mine"] = {"Done": lambda ctx, messages, response: ctx.Send("bye") or {}}
    _, out = line(ip, 'run chat "hi" --hooks mine')
    assert out.stderr == ""
    assert SUMMARY.match(out.stdout).group(5) == "Done"


def test_redefining_a_hook_set_replaces_it(ip: Any) -> None:
    cell(ip, "hooks h", JS_HOOKS)
    _, out = cell(ip, "hooks h", "def Done(ctx, messages, response):\n    return {}\n")
    assert out.stdout == "hook set h (Python): Done\n"
    assert ip.user_ns["h"].names == frozenset({"Done"})


# ---- run ------------------------------------------------------------------------------------------
SUMMARY = re.compile(
    r"^turn done: (\d+) in \+ (\d+) out = (\d+) tokens \((estimate|provider)\), \d+ ms, hooks: (.*)\n$"
)


def test_run_creates_and_binds_a_context_for_a_new_name(ip: Any) -> None:
    result, out = line(ip, 'run chat "hello there"')
    assert result is None and out.stderr == ""
    chat = ip.user_ns["chat"]
    assert isinstance(chat, Context) and chat.name == "chat"
    assert chat.messages() == [
        user_message("hello there"),
        {"type": 3, "content": [{"type": "text", "text": "Scripted reply to: hello there"}]},
    ]
    # input: "hello there" = 2 words -> 3 tokens; output: 5 words -> ceil(20/3) = 7 tokens
    assert SUMMARY.match(out.stdout).groups() == ("3", "7", "10", "estimate", "none")
    (turn,) = ip.turns
    assert turn.view.context is chat and turn.view.state()["context"] == chat.messages()
    # the turn settled into its document (what the cell keeps) and the live view was closed
    assert turn.document.text().splitlines()[1:3] == ["[user] hello there", "[assistant] Scripted reply to: hello there"]
    assert turn.view.comm is None


@pytest.mark.parametrize(("source", "text"), [
    ("%agentctx run chat say hello in five words", "say hello in five words"),
    ("%agentctx run chat say  hello --no-stream in five words", "say hello in five words"),  # options anywhere
    ("%agentctx run chat how many words?", "how many words?"),  # IPython would read 'words?' as a help request
    ('%agentctx run chat "keep  my   spacing?"', "keep  my   spacing?"),
])
def test_run_takes_unquoted_text_whole_through_a_real_cell(ip: Any, source: str, text: str) -> None:
    """Issue 20: unquoted text failed with 'unrecognized arguments', and a text ending in '?' went to
    IPython's help (Object 'words' not found.). Run as a whole cell, through IPython's input transformers."""
    with capture_output() as out:
        ip.run_cell(source)
    assert out.stderr == "", out.stderr
    assert ip.user_ns["chat"].at(0) == user_message(text)
    assert ip.user_ns["chat"].at(1)["content"][0]["text"] == f"Scripted reply to: {text}"


def test_the_question_mark_rule_leaves_other_lines_alone() -> None:
    from agentctx_widgets.magics import keep_question_marks

    lines = ["x = 1\n", "%agentctx?\n", "%agentctx run chat why?\n", "  %agentctx run chat why?\n"]
    assert keep_question_marks(lines) == [
        "x = 1\n", "%agentctx?\n", "get_ipython().run_line_magic('agentctx', 'run chat why?')\n",
        "  %agentctx run chat why?\n"]


def test_run_with_hooks_on_an_existing_context(ip: Any) -> None:
    cell(ip, "hooks greet", JS_HOOKS)
    ctx = sample_context()
    ip.user_ns["ctx"] = ctx
    _, out = line(ip, 'run ctx "What is 2+2?" --hooks greet')
    assert out.stderr == ""
    assert SUMMARY.match(out.stdout).group(5) == "Create, Done"
    # the new user text merges into the last (user) message: seed 001's append_message
    assert len(ctx) == 3 and ctx.at(-1)["content"][0]["text"] == "Scripted reply to: What is 2+2?"
    result = ip.magics_manager.registry["AgentContextMagics"].last_result
    kinds = [(m["type"], m["props"].get("message") or m["props"].get("content")) for m in shown(result.output)]
    assert kinds == [
        ("loading", "Thinking..."),
        ("text", "Scripted reply to: What is 2+2?"),
        ("text", "Done: Scripted reply to: What is 2+2?"),
    ]
    (turn,) = ip.turns
    assert turn.view.state()["outputs"]["messages"]["l1"]["props"] == {"message": "Thinking..."}
    assert turn.starts == [2]  # the document counts the two earlier messages, then shows the turn


def test_run_with_a_model_class_builds_it_or_says_to_pass_an_instance(ip: Any) -> None:
    """Issue 18 §7: ``--model ScriptedModel`` (the class) failed with ``stream() missing 1 required
    positional argument``."""

    class Echo:
        model_id = "echo"

        def stream(self, messages, options=None):
            yield {"type": "text_delta", "contentIndex": 0, "delta": "echoed"}
            yield {"type": "done"}

    ip.user_ns["Echo"] = Echo
    _, out = line(ip, 'run c0 "hi" --model Echo')
    assert out.stderr == "" and ip.user_ns["c0"].at(-1)["content"][0]["text"] == "echoed"
    ip.user_ns["ScriptedModel"] = agentctx_widgets.ScriptedModel
    _, out = line(ip, 'run c0 "again" --model ScriptedModel')
    assert out.stderr.startswith("agentctx: run: ScriptedModel is the class ScriptedModel, not a model; pass an "
                                 "instance (model = ScriptedModel(...); --model model): ")
    assert len(ip.user_ns["c0"]) == 2  # nothing ran


def test_run_with_a_model_variable_and_a_model_id(ip: Any) -> None:
    ip.user_ns["bot"] = agentctx_widgets.ScriptedModel(["Four."], model="gpt-4o")
    _, out = line(ip, 'run c1 "2+2?" --model bot')
    assert out.stderr == ""
    assert ip.user_ns["c1"].at(-1)["content"][0]["text"] == "Four."
    _, out = line(ip, 'run c2 "2+2?" --model o3 --no-stream --accept standard')
    assert out.stderr == ""
    assert ip.user_ns["c2"].at(-1)["content"][0]["text"] == "Scripted reply to: 2+2?"
    first, second = (turn.view for turn in ip.turns)
    assert first.model == "gpt-4o" and second.model == "o3"
    assert second.state()["header"]["window"] == 200_000
    result = ip.magics_manager.registry["AgentContextMagics"].last_result
    assert result.chunks[0]["object"] == "chat.completion.chunk"  # a standard client got OpenAI chunks


def test_run_binds_the_turn_result_on_request(ip: Any) -> None:
    cell(ip, "hooks greet", JS_HOOKS)
    _, out = line(ip, 'run chat "hi" --hooks greet --result turn')
    assert out.stderr == ""
    turn = ip.user_ns["turn"]
    assert turn.ok and turn.hooks_called == ["Create", "Done"]
    assert turn.output[-1]["props"] == {"content": "Done: Scripted reply to: hi"}
    before = names(ip)
    _, out = line(ip, 'run chat "hi" --result 3d')
    assert_error(out, "run: '3d' is not a valid Python variable name")
    assert names(ip) == before and len(ip.user_ns["chat"]) == 2


def test_run_takes_the_user_text_from_the_cell(ip: Any) -> None:
    _, out = cell(ip, "run memo", "line one\nline two\n")
    assert out.stderr == ""
    assert ip.user_ns["memo"].at(0) == user_message("line one\nline two")


def test_run_counts_in_the_lifetime_usage(ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_usage_report, "try_exact_counter", lambda model: None)
    from agentctx_widgets.hooks import usage_log

    usage_log.reset_session_usage()
    line(ip, 'run tally "one two three"')  # in: 3 words -> 4; out: "Scripted reply to: one two three" 6 -> 8
    line(ip, 'run other "four"')  # in: 1 -> 2; out: 4 words -> 6
    report, _ = line(ip, "usage tally")
    assert report.lifetime_responses == 2
    assert (report.lifetime["inputTokens"], report.lifetime["outputTokens"]) == (6, 14)
    text = repr(report)
    assert "lifetime in this kernel: 2 model responses, 6 in + 14 out = 20 tokens" in text
    assert "  of which this context: 4 in + 8 out = 12 tokens" in text


@pytest.mark.parametrize(
    ("setup", "text", "fragments"),
    [
        ({}, 'run chat "hi" --hooks nope', ("run: no hook set named 'nope'",)),
        ({"five": 5}, 'run chat "hi" --hooks five', ("run: five holds a int, not a hook set",)),
        ({"num": 3}, 'run num "hi"', ("run: num holds a int, not a Context",)),
        ({"m": 3}, 'run chat "hi" --model m', ("run: m holds a int, not a model",)),
        ({}, "run chat", ("run: no user text",)),
        ({}, 'run chat "   "', ("run: no user text",)),
        ({}, 'run 9lives "hi"', ("run: '9lives' is not a valid Python variable name",)),
    ],
)
def test_run_errors_bind_nothing(ip: Any, setup: dict, text: str, fragments: tuple[str, ...]) -> None:
    ip.user_ns.update(setup)
    before = names(ip)
    _, out = line(ip, text)
    assert_error(out, *fragments)
    assert names(ip) == before and ip.shown == []


def test_run_text_on_the_line_and_in_the_cell_is_an_error(ip: Any) -> None:
    _, out = cell(ip, 'run chat "hi"', "also this")
    assert_error(out, "run: give the user text on the magic line or in the cell, not both")
    assert "chat" not in ip.user_ns


@pytest.mark.parametrize(
    ("hooks", "fragments"),
    [
        ("function Create(ctx, messages) { throw new Error('no database'); }", ("Create", "no database", "HOOK_THREW")),
        ("def Before(ctx, messages, response):\n    raise KeyError('user_id')\n", ("Before", "user_id")),
        ("function Done(ctx, messages, response) { return 42; }", ("Done",)),
    ],
)
def test_a_failing_hook_leaves_the_context_unchanged(ip: Any, hooks: str, fragments: tuple[str, ...]) -> None:
    cell(ip, "hooks bad", hooks)
    ctx = sample_context()
    before = copy.deepcopy(ctx.messages())
    ip.user_ns["ctx"] = ctx
    _, out = line(ip, 'run ctx "hello" --hooks bad')
    assert_turn_failure(out, *fragments)
    assert ctx.messages() == before
    (turn,) = ip.turns
    # the document shows the failed turn as it happened (the input merged into the last user message,
    # so that message is shown, not counted); then the context was put back
    assert turn.document.text().splitlines()[1:3] == ["… 1 earlier message", "[user] hello there friend hello"]
    # a new name is not bound when its first turn fails
    _, out = line(ip, 'run fresh "hello" --hooks bad')
    assert "fresh" not in ip.user_ns


def test_a_failing_model_leaves_the_context_unchanged(ip: Any) -> None:
    ip.user_ns["flaky"] = agentctx_widgets.ScriptedModel([{"text": "partial", "error": "rate limited"}])
    ctx = sample_context()
    ctx.append(user_message("earlier question"))  # the next user message merges into this one
    before = copy.deepcopy(ctx.messages())
    ip.user_ns["ctx"] = ctx
    _, out = line(ip, 'run ctx "hello" --model flaky')
    assert_turn_failure(out, "rate limited")
    assert ctx.messages() == before




def test_a_failed_run_puts_back_a_context_whose_last_message_the_turn_merged_into(shell):
    """The context is restored exactly: unfolded blocks and the merged-into message are as they were."""
    from agentctx_widgets import Context

    two_blocks = {"type": 2, "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    ctx = Context([two_blocks])  # the constructor keeps blocks as given (no folding)
    before = copy.deepcopy(ctx.messages())
    shell.user_ns["ctx_r"] = ctx
    shell.user_ns["boom_r"] = {"Create": lambda c, m: (_ for _ in ()).throw(RuntimeError("boom"))}
    shell.run_line_magic("agentctx", 'run ctx_r "more" --hooks boom_r')
    assert ctx.messages() == before


def test_export_writes_a_standalone_page_and_errors_are_one_line(ip: Any, tmp_path: Path) -> None:
    ip.user_ns["chat"] = sample_context("chat")
    target = tmp_path / "chat.html"
    _, out = line(ip, f"export chat {target}")
    assert out.stderr == "" and out.stdout.startswith(f"exported {len(ip.user_ns['chat'])} messages to {target} (")
    page = target.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and "<script" not in page.lower()
    assert "default-src 'none'" in page and "<title>chat · agentctx</title>" in page
    _, out = line(ip, f"export chat {tmp_path}")
    assert_error(out, "export: ", "is a directory")
    _, out = line(ip, f"export nope {target}")
    assert_error(out, "export: no variable or file named 'nope'")


def test_export_refuses_to_write_through_a_symlink(ip: Any, tmp_path: Path) -> None:
    ip.user_ns["demo"] = sample_context()
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me")
    (tmp_path / "out.html").symlink_to(precious)
    _, out = line(ip, f"export demo {tmp_path / 'out.html'}")
    assert_error(out, "export: ", "is a symlink", "refusing to write through it")
    assert precious.read_text() == "keep me"


def test_export_holds_the_output_messages_the_turns_showed(ip: Any, tmp_path: Path) -> None:
    """Issue 18 §7: ``%agentctx export`` left out the output messages the view and the document showed."""
    cell(ip, "hooks status", 'function Create(ctx, messages) {\n  ctx.Send({type: "text", props: {content: "Step one done"}, id: "s1"});\n}')
    _, out = line(ip, 'run talk "hi" --hooks status')
    assert out.stderr == ""
    target = tmp_path / "talk.html"
    _, out = line(ip, f"export talk {target}")
    assert out.stderr == "" and out.stdout.startswith(f"exported 2 messages and 2 output messages to {target} (")
    # the hook's message and the reply as the client got it (the view shows both)
    page = target.read_text(encoding="utf-8")
    assert "Step one done" in page and "Scripted reply to: hi" in page
    # the context's cost in this kernel: its one turn ran on the scripted model, which no table prices
    assert 'data-testid="actx-cost"' in page and "cost unpriced (scripted)" in page


def test_export_shows_what_the_contexts_turns_cost(ip: Any, tmp_path: Path) -> None:
    """Issue 23: the export carries the context's lifetime cost; gpt-4o at $2.50 / $10.00 per million
    (OpenAI's price page), two turns of 1000 in / 100 out: 2 x ($0.0025 + $0.001) = $0.007."""
    from agentctx_widgets import Context, ScriptedModel, run_turn

    priced = Context(name="priced")
    model = ScriptedModel(["one", "two"], usage={"prompt_tokens": 1000, "completion_tokens": 100}, model="gpt-4o")
    run_turn(priced, "first", model=model)
    run_turn(priced, "second", model=model)
    ip.user_ns["priced"] = priced
    target = tmp_path / "priced.html"
    _, out = line(ip, f"export priced {target}")
    assert out.stderr == ""
    page = target.read_text(encoding="utf-8")
    assert ">cost $0.007<" in page and "cost unpriced" not in page and "input $0.005 · output $0.002" in page
    fresh = Context([{"type": 2, "content": [{"type": "text", "text": "no turn ran"}]}], name="fresh")
    ip.user_ns["fresh"] = fresh
    line(ip, f"export fresh {tmp_path / 'fresh.html'}")
    assert 'data-testid="actx-cost"' not in (tmp_path / "fresh.html").read_text(encoding="utf-8")  # no turn: no cost


def test_a_javascript_cell_with_a_def_line_stays_javascript_and_errors_say_the_language(ip: Any) -> None:
    """Issue 12: any line starting `def ` made the cell Python, so this JavaScript failed with a Python SyntaxError."""
    source = "// def helpers below\nfunction Create(ctx, messages) {\n  const s = `\ndef not_python`;\n  return { messages };\n}\n"
    _, out = cell(ip, "hooks jsdef", source)
    assert out.stderr == "" and out.stdout == "hook set jsdef (JavaScript): Create\n"
    _, out = cell(ip, "hooks typo", "def Create(ctx, messages):\n    return {")
    assert_error(out, "hooks typo: SyntaxError", "(the cell was taken for Python; write --lang js or --lang python to choose)")


def test_run_prints_console_lines_and_binds_a_failed_result(ip: Any) -> None:
    """Issue 12: console.log lines were never shown, and a failed turn bound no --result to assert on."""
    cell(ip, "hooks talk", 'function Create(ctx, messages) { console.log("seen", messages.length); }')
    _, out = line(ip, 'run chat "hi" --hooks talk')
    assert out.stdout.splitlines()[1:] == ["  console.log [Create]: seen 1"]
    cell(ip, "hooks fails", 'function Create(ctx, messages) { console.warn("about to fail"); throw new Error("no"); }')
    _, out = line(ip, 'run chat "again" --hooks fails --result failed')
    assert out.stdout.splitlines()[0] == "  console.warn [Create]: about to fail"
    assert_turn_failure(out, "Create (%%agentctx hooks fails, line 2): Error: no")
    # the hook is on the cell's line 2 (line 1 is the magic), as JupyterLab numbers it
    assert ip.user_ns["failed"].error["code"] == "HOOK_THREW"  # bound, with its error, for assertions

"""JavaScript hooks in QuickJS-NG: the host environment, live flushes, limits and hostile code."""

from __future__ import annotations

import functools
import asyncio

import re
from pathlib import Path

import pytest

from agentctx_widgets import Context, Output, ScriptedModel, hooks_from_js, run_turn
from agentctx_widgets.hooks import (
    HookContext,
    HookLoadError,
    HookMemoryError,
    HookReturnError,
    HookStackOverflowError,
    HookThrewError,
    HookTimeoutError,
)
from agentctx_widgets.output import without_echoes as shown

run_turn = functools.partial(run_turn, check=False)  # these tests read failed turns' results; test_turn_error raises


class RecordingSink:
    def __init__(self) -> None:
        self.messages: list[dict] = []

    def write(self, messages: list[dict]) -> None:
        self.messages.extend(messages)


def call(hooks, name, *args, **fields):
    output = Output()
    sink = output.add_sink(RecordingSink())
    result = asyncio.run(hooks.call(name, HookContext(output=output, **fields), *args))
    output.flush()
    return result, sink.messages


def test_flush_reaches_the_sink_while_the_hook_still_runs():
    seen_at_probe: list[list[str]] = []
    output = Output()
    sink = output.add_sink(RecordingSink())

    def probe():
        seen_at_probe.append([m["props"]["content"] for m in sink.messages])
        return len(sink.messages)

    hooks = hooks_from_js(
        """
        function Create(ctx, messages) {
          ctx.Send("first");
          ctx.Flush();
          const n = probe();
          ctx.Send("after probe saw " + n);
          const m = probe();
          return { messages };
        }
        """,
        globals={"probe": probe},
    )
    asyncio.run(hooks.call("Create", HookContext(output=output), []))
    output.flush()
    # the first probe ran after Flush: the sink had "first"; the second ran before any flush
    assert seen_at_probe == [["first"], ["first"]]
    assert [m["props"]["content"] for m in sink.messages] == ["first", "after probe saw 1"]


def test_ctx_fields_and_lowercase_aliases_are_visible():
    hooks = hooks_from_js(
        """
        function create(ctx, messages) {
          ctx.send(`${ctx.chat_id}|${ctx.assistant_id}|${ctx.locale}|${ctx.authorized.user_id}|${ctx.metadata.k}|${ctx.client.type}|${ctx.accept}`);
          ctx.flush();
        }
        """
    )
    assert hooks.names == {"Create"}
    result, sent = call(hooks, "Create", [], chat_id="c1", assistant_id="a1", locale="zh-cn",
                        authorized={"user_id": "u1"}, metadata={"k": 3}, client={"type": "web"}, accept="standard")
    assert result is None
    assert sent == [{"type": "text", "props": {"content": "c1|a1|zh-cn|u1|3|web|standard"}}]


def test_console_lines_are_captured_and_optionally_echoed(capsys):
    source = """
    function Done(ctx, messages, response) {
      console.log("a", 1, {b: [2]}, null, undefined);
      console.warn("careful");
      console.info(new Error("boom"));
    }
    """
    quiet = hooks_from_js(source)
    call(quiet, "Done", [], {})
    assert quiet.take_console() == [
        {"level": "log", "hook": "Done", "text": 'a 1 {"b":[2]} null undefined'},
        {"level": "warn", "hook": "Done", "text": "careful"},
        {"level": "info", "hook": "Done", "text": "Error: boom"},
    ]
    assert capsys.readouterr().err == ""
    loud = hooks_from_js(source, echo_console=True)
    call(loud, "Done", [], {})
    assert "[Done] console.warn: careful" in capsys.readouterr().err


def test_python_global_errors_become_catchable_js_errors():
    def boom(x):
        raise ValueError(f"bad {x}")

    hooks = hooks_from_js(
        """
        function Create(ctx, messages) {
          try { boom(7); } catch (e) { ctx.Send("caught " + e.name + ": " + e.message); }
          ctx.Send("limit " + LIMIT.max);
        }
        """,
        globals={"boom": boom, "LIMIT": {"max": 5}},
    )
    _, sent = call(hooks, "Create", [])
    assert [m["props"]["content"] for m in sent] == ["caught ValueError: host function: bad 7", "limit 5"]


def test_sleep_is_not_charged_to_the_time_limit():
    slept: list[float] = []

    def slow_sleep(seconds: float) -> None:  # a host call slower than the whole JS time limit
        import time

        slept.append(seconds)
        time.sleep(0.3)

    hooks = hooks_from_js("function Create(ctx, m) { time.Sleep(300); return {}; }", time_limit=0.2, sleep=slow_sleep)
    result, _ = call(hooks, "Create", [])
    assert result == {}
    assert slept == [0.3]


def test_wall_limit_bounds_sleeping_forever():
    hooks = hooks_from_js("function Create(ctx, m) {\n  for (;;) time.Sleep(100);\n}", wall_limit=0.3)
    with pytest.raises(HookTimeoutError, match=r"Create \(line 2\): .*wall-clock"):
        call(hooks, "Create", [])


def test_syntax_error_is_a_load_error_with_the_line():
    with pytest.raises(HookLoadError, match=r"line 3.*SyntaxError"):
        hooks_from_js("function Create(ctx, m) {\n  return {};\n  let = = 1;\n}")


def test_top_level_endless_loop_is_a_load_error():
    with pytest.raises(HookLoadError, match="time limit"):
        hooks_from_js("while (true) {}", time_limit=0.2)


# -- hostile hooks through run_turn: a clear error, the Error hook, and a healthy next turn ----------

HOSTILE = {
    "endless loop": ("while (true) {}", HookTimeoutError, "time limit"),
    "loop that catches": ("for (;;) { try { while (true) {} } catch (e) {} }", HookTimeoutError, "time limit"),
    "memory bomb": ("const a = []; while (true) a.push(new Array(100000).fill(a.length));", HookMemoryError, "memory"),
    "deep recursion": ("function down(n) { return down(n + 1) + 1; } down(0);", HookStackOverflowError, "stack"),
    "throw string": ('throw "no way";', HookThrewError, 'non-Error value \\(string\\): no way'),
    "throw object": ("throw {code: 1};", HookThrewError, 'non-Error value \\(object\\): \\{"code":1\\}'),
    "throw Error": ('throw new TypeError("typed");', HookThrewError, "TypeError: typed"),
    "huge Send": ('ctx.Send("x".repeat(3 * 1024 * 1024));', HookThrewError, "over the 1,048,576-byte limit"),
    "bad message": ('ctx.Send({type: 42});', HookThrewError,
                    r"Error: invalid message: message\.type is required and must be a string \(got number 42\)"),
}


def hostile_source(attack: str) -> str:
    # the attack sits on line 4, inside the hook, and only runs when the user says "attack"
    return f"""let errors = [];
function Create(ctx, messages) {{
  if (messages[messages.length - 1].content === "attack") {{
    {attack}
  }}
  ctx.Send("create ok");
  return {{ messages }};
}}
function Error(ctx, messages, error) {{
  report(error);
}}
"""


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_hostile_hook_is_a_clear_error_and_the_next_turn_works(kind):
    attack, error_type, text = HOSTILE[kind]
    reported: list[dict] = []
    hooks = hooks_from_js(hostile_source(attack), time_limit=0.3, memory_limit=16 * 1024 * 1024,
                          max_send_bytes=1024 * 1024, globals={"report": reported.append})
    context = Context()
    result = run_turn(context, "attack", hooks=hooks, model=ScriptedModel(["fine"]))

    assert result.error is not None and result.error["hook"] == "Create"
    # a thrown object's own code is kept as thrown (a number stays a number for `error.code === 1`)
    assert result.error["code"] == (1 if kind == "throw object" else error_type.default_code)
    assert result.hooks_called == ["Create", "Error"]
    # the line that ran: QuickJS reports an interrupted loop at an enclosing statement; the loop is named
    assert len(reported) == 1 and reported[0]["hook"] == "Create" and reported[0]["line"] == 4
    assert re.search(text, reported[0]["message"]), reported[0]["message"]
    assert reported[0]["message"].startswith(f"Create (line {reported[0]['line']}): ")
    assert result.output[-1]["type"] == "error"
    assert [m["type"] for m in context.messages()] == [2]  # nothing half-committed

    again = run_turn(context, "hello", hooks=hooks, model=ScriptedModel(["fine"]))
    assert again.error is None
    assert [m["props"]["content"] for m in shown(again.output)] == ["create ok", "fine"]
    assert [m["type"] for m in context.messages()] == [2, 3]  # the two user inputs merged
    hooks.close()


def test_throw_object_keeps_its_code_for_the_error_hook():
    reported: list[dict] = []
    hooks = hooks_from_js(hostile_source('throw {code: "RATE_LIMIT"};'), globals={"report": reported.append})
    run_turn(Context(), "attack", hooks=hooks, model=ScriptedModel(["x"]))
    assert reported[0]["code"] == "RATE_LIMIT"


def test_engine_is_rebuilt_after_a_limit_and_global_state_resets():
    hooks = hooks_from_js(
        """
        let calls = 0;
        function Create(ctx, messages) {
          calls += 1;
          ctx.Send("call " + calls);
          if (messages.length === 0) { while (true) {} }
        }
        """,
        time_limit=0.2,
    )
    assert call(hooks, "Create", [{"role": "user", "content": "a"}])[1][0]["props"]["content"] == "call 1"
    with pytest.raises(HookTimeoutError):
        call(hooks, "Create", [])
    assert hooks.rebuilds == 1
    assert call(hooks, "Create", [{"role": "user", "content": "a"}])[1][0]["props"]["content"] == "call 1"


@pytest.mark.parametrize(
    ("returned", "match"),
    [
        ('"ok"', r"failed to unmarshal to HookCreateResponse: json: cannot unmarshal string into Go value of type "
                 r"context\.HookCreateResponse \(returned str 'ok'\)"),
        ("42", r"cannot unmarshal number into Go value of type context\.HookCreateResponse \(returned int 42\)"),
        ("{ messages: 3 }", r"cannot unmarshal number into Go struct field HookCreateResponse\.messages of type "
                            r"\[\]context\.Message \(returned messages = int 3\)"),
        ("{ temperature: 'hot' }", r"cannot unmarshal string into Go struct field HookCreateResponse\.temperature of "
                                   r"type float64"),
        ("{ max_tokens: 1.5 }", r"cannot unmarshal number 1\.5 into Go struct field HookCreateResponse\.max_tokens of "
                                r"type int"),
        ('{ messages: [{role: "robot", content: "x"}] }', r"messages\[0\]\.role = 'robot'"),
        ("function () {}", r"returned a function"),
        ("Promise.resolve({})", r"returned a Promise"),
    ],
)
def test_wrong_return_shape_names_hook_and_line(returned, match):
    hooks = hooks_from_js(f"\n\nfunction Create(ctx, messages) {{\n  return {returned};\n}}\n")
    with pytest.raises(HookReturnError, match=match) as caught:
        call(hooks, "Create", [])
    assert caught.value.hook == "Create" and caught.value.line == 3


def test_error_in_a_nested_function_names_the_line_that_threw():
    hooks = hooks_from_js("function helper(x) {\n  return x.missing.deeper;\n}\nfunction Before(ctx, m, r) {\n  return helper({});\n}\n")
    with pytest.raises(HookThrewError, match=r"Before \(line 2\): TypeError") as caught:
        call(hooks, "Before", [], {})
    assert caught.value.name == "TypeError"


def test_seed_error_hook_shadowing_global_error_does_not_break_the_host():
    # the seed's `function Error(...)` replaces the global Error; host errors must still work
    hooks = hooks_from_js("function Error(ctx, m, e) { return { error: e }; }\nfunction Create(ctx, m) { ctx.Send({type: 1}); }")
    with pytest.raises(HookThrewError, match=r"invalid message: message\.type is required and must be a string \(got number 1\)"):
        call(hooks, "Create", [])
    assert call(hooks, "Error", [], {"message": "x"})[0] == {"error": {"message": "x"}}


def test_new_error_in_a_hook_is_javascripts_error_even_with_the_seeds_error_hook_loaded():
    """Issue 10: with seed example 6 loaded, `throw new Error("validation failed")` in Create used to call
    the Error hook as a constructor (TypeError: cannot read property 'code' of undefined)."""
    source = SEED_ERROR_HOOK + """
function Create(ctx, messages) {
  const e = new Error("validation failed");
  report({isError: e instanceof Error, name: e.name, stack: typeof e.stack});
  throw e;
}"""
    reported: list = []
    hooks = hooks_from_js(source, globals={"report": reported.append})
    line = source.split("\n").index('  const e = new Error("validation failed");') + 1
    with pytest.raises(HookThrewError, match=rf"Create \(line {line}\): Error: validation failed") as caught:
        call(hooks, "Create", [])
    assert reported == [{"isError": True, "name": "Error", "stack": "string"}]
    assert caught.value.name == "Error"
    # and the seed's own Error hook still runs as the Error hook, sending its friendly message
    result, sent = call(hooks, "Error", [], {"message": "boom", "code": "X"})
    assert result == {"error": {"message": "boom", "code": "X"}}
    assert sent == [{"type": "error", "props": {"message": "I encountered an issue while processing your request.",
                                                 "code": "X"}}]


SEED_ERROR_HOOK = (Path(__file__).parent / "fixtures" / "seed_hooks" / "example_6_error.js").read_text()
"""The seed's example 6, verbatim (tests/test_hooks_seed_examples.py checks the fixture against the seed)."""


def test_no_file_system_or_network_globals():
    hooks = hooks_from_js(
        "function Create(ctx, m) { ctx.Send([typeof require, typeof fetch, typeof std, typeof os, typeof XMLHttpRequest, JSON.stringify(process.env)].join(',')); }"
    )
    assert call(hooks, "Create", [])[1][0]["props"]["content"] == "undefined,undefined,undefined,undefined,undefined,{}"


def test_dropped_hooks_free_their_engine_thread():
    import threading
    import time
    import weakref

    def engine_threads():
        return {t.ident for t in threading.enumerate() if t.name.startswith("agentctx-quickjs")}

    before = engine_threads()
    hooks = hooks_from_js("function Create(ctx, m) { ctx.Send('x'); }")
    call(hooks, "Create", [])
    mine = engine_threads() - before
    assert len(mine) == 1
    ref = weakref.ref(hooks)
    del hooks
    assert ref() is None  # no reference cycle keeps the engine alive
    deadline = time.monotonic() + 5
    while engine_threads() & mine and time.monotonic() < deadline:
        time.sleep(0.01)  # waiting on the condition "the thread has exited", bounded
    assert not engine_threads() & mine

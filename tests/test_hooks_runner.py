"""run_turn: the lifecycle of DESIGN.md steps 1-8, with Python hooks, a ScriptedModel and a fake view."""

from __future__ import annotations

import functools
import asyncio
import copy
import threading

import pytest

from agentctx_widgets import Context, Output, ScriptedModel, hooks_from_js, hooks_from_python, run_turn, run_turn_async
from agentctx_widgets.hooks import HookContext, context_usage, reset_session_usage, session_usage
from agentctx_widgets.output import without_echoes as shown

run_turn = functools.partial(run_turn, check=False)  # these tests read failed turns' results; test_turn_error raises


class RecordingView:
    """A stand-in for ContextView: records writes and pending messages (copied when called)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []
        self.pending_objects: list[object] = []
        self.threads: set[str] = set()

    def write(self, messages):
        self.calls.append(("write", [m.get("props", {}).get("content") for m in messages]))
        self.threads.add(threading.current_thread().name)

    def set_pending(self, message):
        self.calls.append(("pending", copy.deepcopy(message)))
        self.pending_objects.append(message)

    def pendings(self):
        return [value for kind, value in self.calls if kind == "pending"]


def text_of(message):
    return "".join(block.get("text", "") for block in message["content"] if block["type"] == "text")


def assistant(text):
    return {"type": 3, "content": [{"type": "text", "text": text}]}


# -- steps 1, 3, 5: append, stream, commit ---------------------------------------------------------


def test_plain_turn_appends_streams_commits_and_sends():
    context, view = Context(), RecordingView()
    result = run_turn(context, "hi", model=ScriptedModel(["Hello there"], chunk_size=5), view=view)
    assert context.messages() == [{"type": 2, "content": [{"type": "text", "text": "hi"}]}, assistant("Hello there")]
    assert result.error is None and result.retries == 0 and result.hooks_called == []
    assert result.response["content"] == "Hello there" and result.response["message"] == assistant("Hello there")
    # the growing message after every event, then None once committed
    texts = [None if p is None else text_of(p) for p in view.pendings()]
    # start and text_start show nothing yet; each delta, text_end and done do
    assert texts == ["Hello", "Hello ther", "Hello there", "Hello there", "Hello there", None]
    assert len({id(obj) for obj in view.pending_objects[:-1]}) == 1  # by reference: one live object
    assert [m["props"]["content"] for m in shown(result.output)] == ["Hello there"]
    assert set(result.timings) >= {"model", "commit", "total"}


def test_streaming_false_shows_nothing_until_before_is_done():
    view = RecordingView()
    seen_in_before: list[int] = []
    hooks = hooks_from_python({"Before": lambda ctx, m, r: seen_in_before.append(len(view.pendings()))})
    run_turn(Context(), "hi", hooks=hooks, model=ScriptedModel(["Hello"]), view=view, streaming=False)
    assert seen_in_before == [0]
    assert view.pendings() == [assistant("Hello"), None]


def test_standard_client_gets_chunks_and_a_finish():
    """As Yao's OpenAI writer: each chunk carries its message's id, the role goes on the first text or
    thinking chunk, the done half of each reply block sends nothing, and the stream ends with [DONE]."""
    result = run_turn(Context(), "hi", model=ScriptedModel([{"thinking": "t", "text": "Hi"}]), accept="standard")
    chunks, done = result.chunks[:-1], result.chunks[-1]
    assert done == "[DONE]"
    thinking_id, text_id = (chunk["id"] for chunk in chunks)
    assert thinking_id.startswith("resp_") and thinking_id.endswith("_0") and text_id == thinking_id[:-1] + "1"
    assert [chunk["choices"] for chunk in chunks] == [
        [{"index": 0, "delta": {"reasoning_content": "t", "role": "assistant"}, "finish_reason": None}],
        [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": None}],
    ]
    assert {(chunk["object"], chunk["model"]) for chunk in chunks} == {("chat.completion.chunk", "yao-agent")}


# -- step 2: Create ---------------------------------------------------------------------------------


def test_create_sees_openai_like_messages_and_can_replace_what_the_model_sees():
    seen = []

    def create(ctx, messages):
        seen.append(copy.deepcopy(messages))
        return {"messages": [{"role": "system", "content": "Be brief."}, *messages]}

    context = Context([{"type": 2, "content": [{"type": "text", "text": "earlier"}], "id": "u0"}, assistant("ok")])
    model = ScriptedModel(["Sure"])
    run_turn(context, "now", hooks=hooks_from_python(create=create), model=model)
    assert seen == [[{"role": "user", "content": "earlier", "id": "u0"}, {"role": "assistant", "content": "ok"},
                     {"role": "user", "content": "now"}]]
    assert model.calls[0] == [
        {"type": 1, "content": [{"type": "text", "text": "Be brief."}]},
        {"type": 2, "content": [{"type": "text", "text": "earlier"}], "id": "u0"},
        assistant("ok"),
        {"type": 2, "content": [{"type": "text", "text": "now"}]},
    ]
    assert len(context) == 4  # Create's replacement is what the model sees, not the context


PASSED_THROUGH = [
    {"type": 2, "content": [{"type": "text", "text": "long doc", "cache_control": {"type": "ephemeral"}}]},
    {"type": 3, "content": [{"type": "text", "text": "answer"}, {"type": "thinking", "text": "why"}]},
    {"type": 2, "content": [{"type": "text", "text": "go"}]},
    {"type": 3, "content": [{"type": "text", "text": "Let me look."},
                            {"type": "toolCall", "callId": "c1", "name": "find", "arguments": {"q": 1}},
                            {"type": "text", "text": "Then done."}]},
]


def test_messages_create_passes_through_come_back_unchanged():
    context = Context(copy.deepcopy(PASSED_THROUGH))
    hooks = hooks_from_python(create=lambda ctx, m: {"messages": [{"role": "system", "content": "S"}, *m]})
    model = ScriptedModel(["ok"])
    result = run_turn(context, "now", hooks=hooks, model=model)
    expected = [
        {"type": 1, "content": [{"type": "text", "text": "S"}]},
        {"type": 2, "content": [{"type": "text", "text": "long doc", "cache_control": {"type": "ephemeral"}}]},
        {"type": 3, "content": [{"type": "text", "text": "answer"}, {"type": "thinking", "text": "why"}]},
        {"type": 2, "content": [{"type": "text", "text": "go"}]},
        {"type": 3, "content": [{"type": "text", "text": "Let me look."},
                                {"type": "toolCall", "callId": "c1", "name": "find", "arguments": {"q": 1}},
                                {"type": "text", "text": "Then done."}]},
        {"type": 2, "content": [{"type": "text", "text": "now"}]},
    ]
    assert result.model_messages == expected
    assert model.calls[0] == expected


def test_a_message_create_changes_is_converted_and_the_rest_pass_through():
    def create(ctx, messages):
        messages[0]["content"] = "short doc"
        return {"messages": messages}

    context = Context(copy.deepcopy(PASSED_THROUGH))
    result = run_turn(context, None, hooks=hooks_from_python(create=create), model=ScriptedModel(["ok"]))
    assert result.model_messages == [
        {"type": 2, "content": [{"type": "text", "text": "short doc"}]},  # changed: cache_control is gone
        {"type": 3, "content": [{"type": "text", "text": "answer"}, {"type": "thinking", "text": "why"}]},
        {"type": 2, "content": [{"type": "text", "text": "go"}]},
        {"type": 3, "content": [{"type": "text", "text": "Let me look."},
                                {"type": "toolCall", "callId": "c1", "name": "find", "arguments": {"q": 1}},
                                {"type": "text", "text": "Then done."}]},
    ]
    assert context.at(0)["content"][0]["cache_control"] == {"type": "ephemeral"}  # the context is untouched


def test_hooks_returning_nothing_change_nothing():
    calls = []
    hooks = hooks_from_python({name: (lambda name: lambda *a: calls.append(name))(name)
                               for name in ("Create", "Before", "After", "Done")})
    model = ScriptedModel(["fine"])
    context = Context()
    result = run_turn(context, "hi", hooks=hooks, model=model)
    assert calls == ["Create", "Before", "After", "Done"] == result.hooks_called
    assert model.calls[0] == [{"type": 2, "content": [{"type": "text", "text": "hi"}]}]
    assert context.at(-1) == assistant("fine") and result.response["content"] == "fine"


# -- step 4: Before ---------------------------------------------------------------------------------


def test_before_changing_the_response_changes_what_is_committed_sent_and_shown():
    view = RecordingView()
    hooks = hooks_from_python({"Before": lambda ctx, m, r: {"response": {**r, "content": r["content"].upper()}}})
    context = Context()
    result = run_turn(context, "hi", hooks=hooks, model=ScriptedModel(["quiet words"]), view=view)
    assert context.at(-1) == assistant("QUIET WORDS")
    assert [m["props"]["content"] for m in shown(result.output)] == ["QUIET WORDS"]
    assert view.pendings()[-2:] == [assistant("QUIET WORDS"), None]
    assert result.response["message"] == assistant("QUIET WORDS")


def test_before_can_replace_the_message_itself():
    replacement = {"type": 3, "content": [{"type": "text", "text": "from message"}], "id": "a1"}
    hooks = hooks_from_python({"Before": lambda ctx, m, r: {"response": {"message": replacement}}})
    context = Context()
    run_turn(context, "hi", hooks=hooks, model=ScriptedModel(["orig"]))
    assert context.at(-1) == replacement


def test_js_before_hook_changes_the_response():
    hooks = hooks_from_js('function Before(ctx, messages, response) { response.content = "[" + response.content + "]"; return { response }; }')
    context = Context()
    run_turn(context, "hi", hooks=hooks, model=ScriptedModel(["x"]))
    assert context.at(-1) == assistant("[x]")


# -- step 6: After with tool calls --------------------------------------------------------------------


def test_tool_calls_reach_after_in_openai_shape():
    got = []
    hooks = hooks_from_python({"After": lambda ctx, m, r: got.append(r["tool_calls"])})
    reply = {"tool_calls": [{"id": "call_9", "name": "lookup", "arguments": {"q": "paris"}}]}
    context = Context()
    result = run_turn(context, "hi", hooks=hooks, model=ScriptedModel([reply]))
    assert got == [[{"id": "call_9", "type": "function", "function": {"name": "lookup", "arguments": '{"q":"paris"}'}}]]
    assert context.at(-1)["content"] == [{"type": "toolCall", "callId": "call_9", "name": "lookup", "arguments": {"q": "paris"}}]
    call = {"type": "tool_call", "props": {"id": "call_9", "name": "lookup", "arguments": '{"q":"paris"}'},
            "id": result.output[0]["id"]}
    assert result.output == [call, {**call, "done": True}]  # the call, then done (no hook showed it)


# -- step 8: errors, retries, no half-commit ----------------------------------------------------------


def test_model_error_without_error_hook_is_surfaced_and_nothing_is_committed():
    context, view = Context(), RecordingView()
    result = run_turn(context, "hi", model=ScriptedModel([{"text": "partial", "error": "upstream 500"}]), view=view)
    assert result.error == {"message": "upstream 500", "code": "MODEL_ERROR", "name": "ModelError", "hook": None}
    assert result.output == [{"type": "error", "props": {"message": "upstream 500", "code": "MODEL_ERROR"}}]
    assert context.messages() == [{"type": 2, "content": [{"type": "text", "text": "hi"}]}]
    assert result.response is None
    assert view.pendings()[-1] is None


def test_exception_in_before_leaves_no_half_committed_response():
    def before(ctx, messages, response):
        ctx.Send("about to fail")
        raise ValueError("nope")

    context = Context()
    result = run_turn(context, "hi", hooks=hooks_from_python(before=before), model=ScriptedModel(["x"]))
    assert [m["type"] for m in context.messages()] == [2]
    assert result.error["hook"] == "Before" and result.error["name"] == "ValueError"
    assert "nope" in result.error["message"]
    assert [m["type"] for m in shown(result.output)] == ["text", "error"]


def test_error_hook_retry_reruns_from_create():
    calls = []
    hooks = hooks_from_python({
        "Create": lambda ctx, m: calls.append("Create"),
        "Error": lambda ctx, m, e: calls.append(("Error", e["code"])) or {"retry": True},
    })
    model = ScriptedModel([{"error": {"message": "busy", "code": "RATE_LIMIT"}}, "second try"])
    context = Context()
    result = run_turn(context, "hi", hooks=hooks, model=model)
    assert calls == ["Create", ("Error", "RATE_LIMIT"), "Create"]
    assert result.retries == 1 and result.error is None
    assert context.messages()[-1] == assistant("second try") and len(context) == 2


def test_retries_are_bounded():
    hooks = hooks_from_python(error=lambda ctx, m, e: {"retry": True})
    model = ScriptedModel([{"error": "always"}])
    result = run_turn(Context(), "hi", hooks=hooks, model=model, max_retries=2)
    assert result.retries == 2 and len(model.calls) == 3
    assert result.error["message"] == "always (gave up after 2 retries)"


def after_failing_once():
    """Hooks whose After fails on the first attempt (after the commit) and whose Error retries;
    the list records the response content each After saw."""
    attempts = []

    def after(ctx, messages, response):
        attempts.append(response["content"])
        if len(attempts) == 1:
            raise RuntimeError("flaky after")

    return hooks_from_python(after=after, error=lambda ctx, m, e: {"retry": True}), attempts


def test_retry_after_commit_removes_the_first_attempts_response():
    hooks, attempts = after_failing_once()
    context = Context()
    run_turn(context, "hi", hooks=hooks, model=ScriptedModel(["one", "two"]))
    assert attempts == ["one", "two"]
    assert context.messages() == [{"type": 2, "content": [{"type": "text", "text": "hi"}]}, assistant("two")]


def test_retry_after_a_response_that_merged_into_the_last_message_restores_that_message():
    # run_turn(context, None) with the context ending in an assistant message: the reply merges
    # into it, so undoing the failed attempt must put "A" back, not just truncate.
    hooks, _ = after_failing_once()
    context = Context([{"type": 2, "content": [{"type": "text", "text": "hi"}]}, assistant("A")])
    model = ScriptedModel(["B"])
    result = run_turn(context, None, hooks=hooks, model=model)
    assert result.error is None and result.retries == 1
    assert context.messages() == [{"type": 2, "content": [{"type": "text", "text": "hi"}]}, assistant("A\n\nB")]
    # the second attempt's model saw the context as it was before the first attempt
    assert model.calls[1] == [{"type": 2, "content": [{"type": "text", "text": "hi"}]}, assistant("A")]


def test_error_hook_can_rewrite_the_surfaced_error():
    hooks = hooks_from_python(error=lambda ctx, m, e: {"error": {"message": "Try later", "code": "SOFT"}})
    result = run_turn(Context(), "hi", hooks=hooks, model=ScriptedModel([{"error": "x"}]), accept="standard")
    assert result.error == {"message": "Try later", "code": "SOFT"}
    # Yao's error chunk: the code as type and code; the stream still ends with [DONE]
    assert result.chunks[-2:] == [{"error": {"message": "Try later", "type": "SOFT", "code": "SOFT"}}, "[DONE]"]


def test_failing_error_hook_does_not_hide_the_original_error():
    def error(ctx, messages, err):
        raise KeyError("inside Error")

    result = run_turn(Context(), "hi", hooks=hooks_from_python(error=error), model=ScriptedModel([{"error": "first"}]))
    assert result.error["message"] == "first"
    assert result.error["handler_error"]["hook"] == "Error"


def test_error_hook_sees_the_messages_create_returned():
    seen = []
    hooks = hooks_from_python(
        create=lambda ctx, m: {"messages": [{"role": "system", "content": "S"}, *m]},
        error=lambda ctx, m, e: seen.append([x["role"] for x in m]),
    )
    run_turn(Context(), "hi", hooks=hooks, model=ScriptedModel([{"error": "x"}]))
    assert seen == [["system", "user"]]


# -- entry points ----------------------------------------------------------------------------------------


def test_async_entry_point_with_async_hooks():
    async def create(ctx, messages):
        await asyncio.sleep(0)
        ctx.Send("async create")
        return None

    async def main():
        return await run_turn_async(Context(), "hi", hooks=hooks_from_python(create=create), model=ScriptedModel(["ok"]))

    result = asyncio.run(main())
    assert [m["props"]["content"] for m in shown(result.output)] == ["async create", "ok"]


def test_sync_entry_works_inside_a_running_loop_and_flushes_reach_the_view():
    view = RecordingView()
    hooks = hooks_from_js('function Create(ctx, m) { ctx.Send("live"); ctx.Flush(); }')

    async def cell():  # like a Jupyter cell: a loop is already running in this thread
        return run_turn(Context(), "hi", hooks=hooks, model=ScriptedModel(["ok"]), view=view)

    result = asyncio.run(cell())
    assert result.error is None
    assert ("write", ["live"]) in view.calls
    assert view.calls.index(("write", ["live"])) < view.calls.index(("write", ["ok", "ok"]))


# -- ctx, output, usage ---------------------------------------------------------------------------------


def test_hook_ctx_fields_and_a_caller_output():
    seen = []
    hooks = hooks_from_python(create=lambda ctx, m: seen.append((ctx.chat_id, ctx.locale, ctx.accept, ctx.metadata)))
    output = Output()
    before = list(output.sinks)
    run_turn(Context(id="ctx-1"), "hi", hooks=hooks, model=ScriptedModel(["ok"]), output=output, locale="de")
    run_turn(Context(), "hi", hooks=hooks, model=ScriptedModel(["ok"]),
             hook_ctx=HookContext(chat_id="given", metadata={"a": 1}), accept="standard")
    # Yao's defaults: locale "" and no metadata until someone sets it (agent/context/jsapi.go:31-103)
    assert seen == [("ctx-1", "de", "cui-web", None), ("given", "", "standard", {"a": 1})]
    assert output.sinks == before  # the turn's own sinks were removed
    assert [m["props"]["content"] for m in shown(output.messages)] == ["ok"]


def test_usage_is_finalized_and_counted_per_session_and_context():
    reset_session_usage()
    context = Context()
    model = ScriptedModel([{"text": "a b c", "usage": {"prompt_tokens": 10, "completion_tokens": 4}}])
    first = run_turn(context, "hi", model=model)
    assert {k: first.usage[k] for k in ("inputTokens", "outputTokens", "totalTokens", "source")} == \
        {"inputTokens": 10, "outputTokens": 4, "totalTokens": 14, "source": "provider"}
    assert first.response["usage"]["total_tokens"] == 14
    run_turn(context, "again", model=model)
    assert session_usage()["totalTokens"] == 28 and session_usage()["responses"] == 2
    assert context_usage(context)["inputTokens"] == 20
    estimated = run_turn(Context(), "one two three", model=ScriptedModel(["four five six"]))
    assert estimated.usage["source"] == "estimate" and estimated.usage["outputTokens"] == 4  # 3 words * 4/3
    reset_session_usage()
    assert session_usage() == {"responses": 0}


def test_bad_arguments_are_clear():
    with pytest.raises(TypeError, match="model"):
        run_turn(Context(), "hi")
    with pytest.raises(TypeError, match="unknown keyword"):
        run_turn(Context(), "hi", model=ScriptedModel(["x"]), chatid="typo")


def test_a_failing_view_is_reported_as_the_turns_error_not_raised():
    class BrokenView(RecordingView):
        def set_pending(self, message):
            raise RuntimeError("view is broken")

    context = Context()
    result = run_turn(context, "hi", model=ScriptedModel(["x"]), view=BrokenView())
    assert result.error["name"] == "RuntimeError" and "view is broken" in result.error["message"]
    assert len(context) == 1


def test_a_view_that_can_settle_is_settled_once_at_the_end_of_the_turn():
    class SettlingView(RecordingView):
        def settle(self):
            self.calls.append(("settle", None))

    view = SettlingView()
    run_turn(Context(), "hi", model=ScriptedModel(["Hello"]), view=view)
    kinds = [kind for kind, _ in view.calls]
    assert kinds.count("settle") == 1
    assert kinds[-1] == "settle"  # after the commit and the last flush


def test_a_view_that_fails_to_settle_is_a_warning_not_a_lost_result():
    class BadSettle(RecordingView):
        def settle(self):
            raise RuntimeError("disk full")

    with pytest.warns(RuntimeWarning, match="disk full"):
        result = run_turn(Context(), "hi", model=ScriptedModel(["Hello"]), view=BadSettle())
    assert result.ok and result.response["content"] == "Hello"


def test_an_empty_reply_is_said_once_with_the_stop_reason_and_commits_nothing_for_it():
    """Issue 20: an empty reply gave ok=True, committed nothing, and leaked the store's UserWarning."""
    import warnings

    context = Context()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = run_turn(context, "hi", model=ScriptedModel([""]))
    assert result.ok and context.messages() == [{"type": 2, "content": [{"type": "text", "text": "hi"}]}]
    assert [(d["code"], d["where"]) for d in result.diagnostics] == [("empty_reply", "response")]
    assert result.diagnostics[0]["message"].startswith("the reply is empty (no text, thinking or tool call: the model")


def test_a_reply_cut_off_by_the_token_limit_is_said_in_the_result_and_the_view():
    """Issue 20: a reply cut by finish_reason 'length' was shown as complete (only calls[i] knew)."""
    shown: list = []

    class View:
        def write(self, messages):
            pass

        def set_pending(self, message):
            pass

        def set_diagnostics(self, items):
            shown.append([item["code"] for item in items])

    context = Context()
    result = run_turn(context, "tell me everything", model=ScriptedModel([{"text": "Once upon a", "stop": "length"}]),
                      view=View())
    assert result.ok and result.calls[0]["truncated"] is True
    [cut] = result.diagnostics
    assert cut["code"] == "reply_cut_off" and cut["where"] == "response"
    assert cut["message"] == "the reply was cut off: the model stopped at its token limit ('length'), so it is incomplete"
    assert shown and shown[-1] == ["reply_cut_off"]
    assert context.at(-1)["content"][0]["text"] == "Once upon a"  # committed as it came

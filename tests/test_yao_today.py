"""Issue 24's six differences from today's Yao (YaoApp/yao 5a3f9a6a), each as Yao's code has it.

Real hooks: TypeScript hook sources in assistants written to a temp directory, run in QuickJS through
``run_turn(..., assistant=...)``; their sub-agents are loaded assistants too. Exact slot rules of
``All / Any / Race`` are checked on :func:`agentctx_widgets.yao.fanout.fan_out` itself, where the order
the calls finish in is fixed by events (never by timing); through a hook, what a race cannot fix is
asserted as Yao's tests assert it (one slot per request).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path

import pytest

from agentctx_widgets import Context, ScriptedModel, TurnError, run_turn
from agentctx_widgets.hooks.turn_core import StopSignal
from agentctx_widgets.yao import load_assistant
from agentctx_widgets.yao.fanout import FanOutStopped, fan_out, has_no_error
from agentctx_widgets.yao.runner import NOTEBOOK_AUTHORIZED, run_assistant
from agentctx_widgets.yao.turns import script_hooks

WORKER = ("{ \"name\": \"Worker\", \"connector\": \"main\", \"prompts\": [{ \"role\": \"system\", "
          "\"content\": \"Work.\" }] }")


def write_assistant(app: Path, name: str, package: str, script: str | None = None) -> Path:
    """``app/assistants/today/<name>`` with its package.yao and, when given, ``src/index.ts``."""
    folder = app / "assistants" / "today" / name
    (folder / "src").mkdir(parents=True)
    (folder / "package.yao").write_text(package)
    if script is not None:
        (folder / "src" / "index.ts").write_text(script)
    return folder


def caller_with(app: Path, next_body: str, *, worker: bool = True, package: str | None = None) -> object:
    """A caller assistant whose ``Next`` runs ``next_body`` (TypeScript returning ``{data}``), loaded with
    the worker assistant beside it."""
    script = ("import { agent } from \"@yao/agent\";\n"
              "function Next(ctx: agent.Context, payload: any, options: any): any {\n" + next_body + "\n}\n")
    folder = write_assistant(app, "caller", package or "{ \"name\": \"Caller\", \"connector\": \"main\" }", script)
    others = [load_assistant(write_assistant(app, "worker", WORKER))] if worker else []
    return load_assistant(folder, assistants=others)


class BlockingModel:
    """An async model whose stream starts (``entered`` counts it) and then waits, cancellably, until
    ``release`` is set: a sub-agent that is still running when the caller is stopped."""

    model = "blocking"

    def __init__(self) -> None:
        self.entered = 0
        self.closed = 0  # streams closed before release: their request was stopped
        self.lock = threading.Lock()
        self.release = threading.Event()

    def stream(self, messages, *, options=None):
        async def events():
            with self.lock:
                self.entered += 1
            yield {"type": "start", "model": self.model}
            try:
                while not self.release.is_set():
                    await asyncio.sleep(0.01)
            except (asyncio.CancelledError, GeneratorExit):
                with self.lock:
                    self.closed += 1
                raise
            yield {"type": "done"}

        return events()


# -- 1. ctx.__release and ctx.trace.__release ------------------------------------------------------

def test_release_functions_exist_under_both_names(tmp_path):
    """agent/context/jsapi.go:32-37 and trace/jsapi/trace.go:36-41 set one release function as both
    ``__release`` and ``Release``; it returns undefined (trace.go:174)."""
    caller = caller_with(tmp_path, """
  const kinds = [typeof ctx.__release, typeof ctx.Release, typeof ctx.trace.__release, typeof ctx.trace.Release];
  const answers = [ctx.trace.__release(), ctx.trace.Release(), ctx.__release()];
  return { data: { kinds, undefined: answers.map((a) => a === undefined) } };""", worker=False)
    result = run_turn(Context(), "hi", assistant=caller, model=ScriptedModel(["unused"]))
    assert result.next == {"kinds": ["function"] * 4, "undefined": [True, True, True]}


# -- 2. All / Any / Race: one slot per request, run at once ----------------------------------------

def test_all_runs_the_calls_at_once(tmp_path):
    """agent/caller/orchestrator.go:31-65: All starts one goroutine per request and waits for all. Each
    worker's model waits at a barrier of three, so the batch can only finish if the three run at once
    (one after another, the first would wait at the barrier until its 10 s timeout and fail). A request
    without an agent string is skipped (agent/caller/jsapi.go:144-154): three slots for four requests."""
    barrier = threading.Barrier(3)
    model = ScriptedModel(lambda messages: (barrier.wait(10), "ok")[1])
    caller = caller_with(tmp_path, """
  const ask = [{ role: "user", content: "go" }];
  const found = ctx.agent.All([{ agent: 3, messages: ask }, { agent: "today.worker", messages: ask },
                               { agent: "today.worker", messages: ask }, { agent: "today.worker", messages: ask }]);
  return { data: found.map((r) => [r.agent_id, r.content ?? r.error]) };""")
    result = run_turn(Context(), "hi", assistant=caller, model=model)
    assert result.next == [["today.worker", "ok"]] * 3


def test_all_of_three_200_ms_calls_concurrent_and_one_after_another(tmp_path):
    """The figure for the report (printed, not asserted: pytest -s): All of three sub-agents whose model
    takes 200 ms, against three ctx.agent.Call one after another in the same hook."""
    model = ScriptedModel(lambda messages: (time.sleep(0.2), "ok")[1])
    caller = caller_with(tmp_path, """
  const ask = [{ role: "user", content: "go" }];
  let t = Date.now();
  const all = ctx.agent.All([0, 1, 2].map(() => ({ agent: "today.worker", messages: ask })));
  const concurrent = Date.now() - t;
  t = Date.now();
  const one = [0, 1, 2].map(() => ctx.agent.Call("today.worker", ask));
  const sequential = Date.now() - t;
  return { data: { concurrent, sequential, contents: [...all, ...one].map((r) => r.content) } };""")
    result = run_turn(Context(), "hi", assistant=caller, model=model)
    assert result.next["contents"] == ["ok"] * 6
    print(f"\nctx.agent.All of 3 calls of 200 ms: {result.next['concurrent']} ms; "
          f"3 ctx.agent.Call one after another: {result.next['sequential']} ms")


def test_any_and_race_return_one_slot_per_request(tmp_path):
    """orchestrator.go:71-206 (Any: until the first success; Race: the first result) returns
    ``results := make([]*Result, len(reqs))`` — a slot per request, null where none was kept; Yao's
    tests assert the length. The unknown agent fails at once, the worker succeeds: Any's success slot is
    always the worker's; the failure reached the collector before it or was dropped (null)."""
    caller = caller_with(tmp_path, """
  const ask = [{ role: "user", content: "go" }];
  const any = ctx.agent.Any([{ agent: "today.missing", messages: ask }, { agent: "today.worker", messages: ask }]);
  const race = ctx.agent.Race([{ agent: "today.worker", messages: ask }, { agent: "today.worker", messages: ask }]);
  const shape = (r) => (r === null ? null : r.content ?? r.error);
  return { data: { any: any.map(shape), race: race.map(shape) } };""")
    result = run_turn(Context(), "hi", assistant=caller, model=ScriptedModel(["ok"]))
    any_slots, race_slots = result.next["any"], result.next["race"]
    assert len(any_slots) == 2 and any_slots[1] == "ok"
    assert any_slots[0] is None or any_slots[0].startswith("failed to get agent: today.missing")
    assert len(race_slots) == 2 and "ok" in race_slots and set(race_slots) <= {"ok", None}


def test_fan_out_slots_follow_the_order_the_calls_finish_in():
    """The slot rules, with the finishing order fixed: the collector's ``succeeded`` runs on the calling
    thread as each result arrives (orchestrator.go:124-133), and each later call waits for the one
    before it to have been collected. Any: what came before the first success and the success, None
    after it (Yao: null or filled by chance, :109-114); Race: the first result alone (:195-203); the
    compact shape is ctx.llm's (agent/llm/jsapi.go:698-732, 761-774)."""
    seen = [threading.Event() for _ in range(3)]

    def succeeded(result):
        seen[result["i"]].set()
        return has_no_error(result)

    def call(i, error=False):
        def run(slot):
            if i:
                seen[i - 1].wait(5)
            return {"i": i, **({"error": "down"} if error else {})}
        return run

    batch = fan_out([call(0, error=True), call(1), call(2)], "any", succeeded=succeeded, wait_rest=True)
    assert batch.slots == [{"i": 0, "error": "down"}, {"i": 1}, None]
    assert (batch.order, batch.decisive) == ([0, 1], 1)
    assert batch.compact("any") == [{"i": 1}]
    seen = [threading.Event() for _ in range(3)]
    batch = fan_out([call(1), call(0, error=True)][::-1], "race", succeeded=succeeded)
    assert batch.slots == [{"i": 0, "error": "down"}, None] and batch.compact("race") == [{"i": 0, "error": "down"}]
    seen = [threading.Event() for _ in range(3)]
    failing = fan_out([call(0, error=True), call(1, error=True)], "any", succeeded=succeeded)
    assert failing.decisive is None and failing.compact("any") == [{"i": 0, "error": "down"}, {"i": 1, "error": "down"}]


def test_fan_out_stops_waiting_and_cancels_the_calls():
    """A stopped wait (the request's stop, a hook's limit: ``stopped()``) and Ctrl-C in the calling
    thread both end the batch at once and set every call's cancel; a call that raises is its slot's
    error (Yao's recover(), orchestrator.go:44-52); a call's ``here`` runs on the calling thread."""
    cancelled = []

    def blocked(slot):
        slot.cancel.on_stop(lambda: cancelled.append(slot.index))
        while not slot.cancel.is_set():
            time.sleep(0.01)
        return "late"

    asked = []
    with pytest.raises(FanOutStopped, match=r"stopped \(interrupt\)"):
        fan_out([blocked, blocked], "all", stopped=lambda: asked.append(1) or ("interrupt" if len(asked) > 2 else None))
    assert sorted(cancelled) == [0, 1]
    cancelled.clear()

    def interrupt():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fan_out([blocked], "all", stopped=interrupt)
    assert cancelled == [0]
    me = threading.get_ident()
    batch = fan_out([lambda slot: slot.here(threading.get_ident), lambda slot: 1 / 0], "all")
    assert batch.slots == [me, {"error": "ZeroDivisionError: division by zero"}]


def test_the_requests_stop_ends_a_hooks_batch_and_its_sub_agents(tmp_path):
    """The request's StopSignal (what Ctrl-C sets, hooks/caller.py) set while ctx.agent.All waits on two
    sub-agents: the hook is stopped, the request ends without committing anything, and each sub-agent's
    model stream sees its request stopped (it never gets to release)."""
    model = BlockingModel()
    caller = caller_with(tmp_path, """
  const ask = [{ role: "user", content: "go" }];
  const found = ctx.agent.All([{ agent: "today.worker", messages: ask }, { agent: "today.worker", messages: ask }]);
  return { data: found.length };""")
    stop, context = StopSignal(), Context()

    def stop_when_both_started():
        while model.entered < 2:
            time.sleep(0.01)
        stop.set()

    watcher = threading.Thread(target=stop_when_both_started, daemon=True)
    watcher.start()
    try:
        with pytest.raises(asyncio.CancelledError):  # what run_until_stopped raises for a stop from elsewhere
            run_assistant(context, "hi", assistant=caller, model=model, stop=stop, hooks_of=script_hooks)
        deadline = time.monotonic() + 10  # a hang guard, not a latency bound
        while model.closed < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        model.release.set()
    watcher.join(5)
    assert (model.entered, model.closed) == (2, 2)  # both sub-agents' streams closed by the stop
    assert context.messages() == [{"type": 2, "content": [{"type": "text", "text": "hi"}]}]


# -- 3. the caller's connector picks the model ----------------------------------------------------

def test_the_callers_connector_wins_over_the_assistants(tmp_path):
    """agent/assistant/agent.go:643-650 (opts.Connector before ast.Connector) and agent/caller/
    types.go:68-79 (CallOptions.Connector becomes the sub-agent's Options.Connector): run_turn's
    options={"connector": "b"} and ctx.agent.Call(id, messages, {connector: "b"}) are answered by "b"."""
    main, other = ScriptedModel(["from main"]), ScriptedModel(["from b"])
    caller = caller_with(tmp_path, """
  const sub = ctx.agent.Call("today.worker", [{ role: "user", content: "go" }], { connector: "b" });
  return { data: { sub: sub.content ?? sub.error, answer: payload.completion ? payload.completion.content : null } };""",
        package=WORKER.replace("Worker", "Caller"))
    result = run_turn(Context(), "hi", assistant=caller, connectors={"main": main, "b": other},
                      options={"connector": "b"})
    assert result.next == {"sub": "from b", "answer": "from b"}
    assert (len(main.calls), len(other.calls)) == (0, 2)
    plain = run_turn(Context(), "hi", assistant=caller, connectors={"main": main, "b": other})
    assert plain.next == {"sub": "from b", "answer": "from main"}  # the assistant's own connector, "main"


# -- 4. ctx.llm with a connector nobody registered -------------------------------------------------

def test_ctx_llm_with_an_unknown_connector_fails_as_connector_select_does(tmp_path):
    """agent/llm/jsapi.go:82-86: connector.Select fails and the result carries ``error`` ("failed to
    select connector …"); no other model answers. A diagnostic says how to register one; the turn's
    model still answers under its own connector and its model id."""
    model = ScriptedModel(["from main"], model="gpt-4.1-mini")
    caller = caller_with(tmp_path, """
  const ask = [{ role: "user", content: "x" }];
  const [nope, own, byId] = ["deepseek.v3", "main", "gpt-4.1-mini"].map((c) => ctx.llm.Stream(c, ask));
  return { data: [nope.error ?? nope.content, own.content, byId.content] };""", worker=False)
    result = run_turn(Context(), "hi", assistant=caller, model=model)
    assert result.next[0].startswith("failed to select connector deepseek.v3: no model for it here")
    assert result.next[1:] == ["from main", "from main"] and len(model.calls) == 2
    (found,) = [d for d in result.diagnostics if d["code"] == "llm_connector_unknown"]
    assert "'deepseek.v3'" in found["message"] and "connectors={'deepseek.v3': model}" in found["hint"]


# -- 5. a sub-agent runs on a child stack --------------------------------------------------------------

def test_a_sub_agent_sends_no_stream_events_and_writes_to_the_client_with_a_thread_id(tmp_path):
    """agent.go:123 and :605: stream_start / stream_end only for the root stack, so onChunk never sees
    them; agent/caller/jsapi.go:114-130 (skip.output stays false) and agent/context/output.go:86-89 (a
    non-root stack's message gets ThreadID = the stack's id): the worker's reply reaches the caller's
    client with one thread_id, and skip.output keeps it away."""
    caller = caller_with(tmp_path, """
  const heard: any[] = [];
  const ask = [{ role: "user", content: "go" }];
  ctx.agent.Call("today.worker", ask, { onChunk: (msg: any) => { heard.push(msg.type === "event" ? msg.props.event : msg.type); return 0; } });
  ctx.agent.Call("today.worker", ask, { skip: { output: true } });
  return { data: heard };""")
    result = run_turn(Context(), "hi", assistant=caller, model=ScriptedModel(["worker reply"], chunk_size=100))
    assert result.next == ["text"]  # the reply's one chunk; no stream_start / stream_end, no events
    events = [m["props"]["event"] for m in result.messages if m.get("type") == "event"]
    assert events.count("stream_start") == 1 and events.count("stream_end") == 1  # the caller's own
    threaded = [m for m in result.messages if m.get("thread_id")]
    assert [m["props"].get("content") for m in threaded if m["type"] == "text"] == ["worker reply"]
    assert len({m["thread_id"] for m in threaded}) == 1
    starts = [m for m in result.messages if m.get("type") == "event" and m["props"]["event"] == "message_start"]
    assert [m["props"]["data"].get("thread_id") for m in starts] == [threaded[0]["thread_id"]]


# -- 6. authorized info -------------------------------------------------------------------------------

def test_no_authorized_info_is_the_notebook_identity_and_none_is_yaos_error(tmp_path):
    """agent/assistant/permission.go:9-14 with agent.go:27-32: a request whose ctx has no authorized info
    fails with "authorized information not found" before anything runs. Left out, the notebook's user
    is signed in (NOTEBOOK_AUTHORIZED, in ctx.authorized and its sub-agents', as Fork passes it on,
    agent/context/context.go:183)."""
    caller = caller_with(tmp_path, """
  const sub = ctx.agent.Call("today.worker", [{ role: "user", content: "go" }]);
  return { data: { authorized: ctx.authorized, sub: sub.content ?? sub.error } };""")
    result = run_turn(Context(), "hi", assistant=caller, model=ScriptedModel(["ok"]))
    assert result.next == {"authorized": NOTEBOOK_AUTHORIZED, "sub": "ok"}
    given = run_turn(Context(), "hi", assistant=caller, model=ScriptedModel(["ok"]), authorized={"user_id": "u7"})
    assert given.next["authorized"] == {"user_id": "u7"}
    context = Context()
    with pytest.raises(TurnError, match="authorized information not found") as caught:
        run_turn(context, "hi", assistant=caller, model=ScriptedModel(["ok"]), authorized=None)
    assert caught.value.result.messages == [] and context.messages() == []  # nothing ran, nothing sent
    assert json.dumps(NOTEBOOK_AUTHORIZED)  # plain JSON, as a hook reads it


def test_a_hooks_llm_and_agent_calls_count_on_the_request_and_its_context(tmp_path):
    """What a request cost includes what its hooks' ctx.llm and ctx.agent calls cost: both are billed model
    calls. gpt-4o at $2.50 / $10.00 per million (OpenAI's price page), 1000 in / 100 out a call: $0.0035 each;
    the session's total counts each once ($0.007), as do the result and the Context."""
    from decimal import Decimal

    from agentctx_widgets.hooks import usage_log

    caller = caller_with(tmp_path, """
  const r = ctx.llm.Stream("main", [{ role: "user", content: "go" }]);
  const a = ctx.agent.Call("today.worker", [{ role: "user", content: "go" }]);
  return { data: [r.content ?? r.error, a.content ?? a.error] };""")
    model = ScriptedModel(["llm reply", "agent reply"], usage={"inputTokens": 1000, "outputTokens": 100},
                          model="gpt-4o")
    before = usage_log.session_cost().total or Decimal(0)
    context = Context()
    result = run_turn(context, "hi", assistant=caller, model=model)
    assert result.next == ["llm reply", "agent reply"] and len(model.calls) == 2
    assert [call.get("via") for call in result.calls] == ["ctx.llm", None]
    assert result.cost.total == context.cost.total == Decimal("0.007")
    assert usage_log.session_cost().total - before == Decimal("0.007")


def test_a_hooks_llm_and_agent_calls_count_against_the_requests_budget(tmp_path):
    """``budget=`` holds for what the hooks spend too: the two calls above cost $0.007 (by hand, as above),
    past a $0.005 budget once the sub-agent's call ends. The hook's next ``ctx.llm`` call is not made (its
    result's error says why), and when the hook returns the request fails with BUDGET_EXCEEDED, its input
    the only thing the context keeps (as after the model's own stream passes the budget)."""
    from decimal import Decimal

    caller = caller_with(tmp_path, """
  const r = ctx.llm.Stream("main", [{ role: "user", content: "go" }]);
  const a = ctx.agent.Call("today.worker", [{ role: "user", content: "go" }]);
  const late = ctx.llm.Stream("main", [{ role: "user", content: "again" }]);
  return { data: [r.content ?? r.error, a.content ?? a.error, late.error] };""")
    model = ScriptedModel(["llm reply", "agent reply", "never"], usage={"inputTokens": 1000, "outputTokens": 100},
                          model="gpt-4o")
    context = Context()
    result = run_turn(context, "hi", assistant=caller, model=model, budget=0.005, check=False)
    assert len(model.calls) == 2  # the third call was refused, not made
    assert result.error["code"] == "BUDGET_EXCEEDED" and result.error["spent"] == 0.007
    assert result.error["message"] == ("the turn's cost passed its budget: spent $0.007 of $0.005; the request "
                                       "stopped when the hook that made the call returned and nothing was committed")
    assert result.cost.total == Decimal("0.007")
    assert [m["type"] for m in context.messages()] == [2]  # the input, nothing of the turn


def test_a_hook_that_throws_after_passing_its_budget_fails_with_the_budget_error(tmp_path):
    """The refused call's error, thrown by the hook, must not hide why: the request fails with
    BUDGET_EXCEEDED (not the hook's error), $0.007 of $0.005 as above."""
    caller = caller_with(tmp_path, """
  ctx.llm.Stream("main", [{ role: "user", content: "go" }]);
  ctx.agent.Call("today.worker", [{ role: "user", content: "go" }]);
  const late = ctx.llm.Stream("main", [{ role: "user", content: "again" }]);
  if (late.error) throw new Error(late.error);
  return { data: "unreachable" };""")
    model = ScriptedModel(["llm reply", "agent reply", "never"], usage={"inputTokens": 1000, "outputTokens": 100},
                          model="gpt-4o")
    result = run_turn(Context(), "hi", assistant=caller, model=model, budget=0.005, check=False)
    assert result.error["code"] == "BUDGET_EXCEEDED" and result.error["spent"] == 0.007 and len(model.calls) == 2


class RaceModel:
    """gpt-4o: a "fast" request answers (10 in / 1 out) once the other has started; any other starts, streams
    nothing until it is cancelled, then takes a while to close (as an SDK closing its connection), and is
    billed for its input. (The fast one waits, or on a busy machine it could win before the other began, and a
    call that never started is billed nothing.)"""

    model = "gpt-4o"

    def __init__(self) -> None:
        self.slow_started = threading.Event()

    def stream(self, messages, *, options=None):
        fast = "fast" in json.dumps(messages)

        async def events():
            yield {"type": "start", "model": "gpt-4o"}
            if fast:
                while not self.slow_started.is_set():
                    await asyncio.sleep(0.01)
            else:
                self.slow_started.set()  # its start was taken: the stream is open, billed from here
                try:
                    while True:
                        await asyncio.sleep(0.01)
                finally:
                    await asyncio.sleep(0.2)
            yield {"type": "text_start", "contentIndex": 0}
            yield {"type": "text_delta", "contentIndex": 0, "delta": "x"}
            yield {"type": "text_end", "contentIndex": 0, "text": "x"}
            yield {"type": "done", "usage": {"inputTokens": 10, "outputTokens": 1}}

        return events()


def test_a_race_losers_spending_counts_against_the_budget_though_it_ends_after_the_hook(tmp_path):
    """ctx.llm.Race returns with the winner and cancels the rest; a loser is billed for what it was sent and
    is counted when its stream has closed, which may be after the hook returned: the request waits for it
    before it ends. The loser's input, 40,001 words, is estimated at ceil(40001 × 4/3) = 53,335 tokens:
    $0.133 at gpt-4o's $2.50 per million, past a $0.01 budget."""
    caller = caller_with(tmp_path, """
  const r = ctx.llm.Race([{ connector: "main", messages: [{ role: "user", content: "fast" }] },
                          { connector: "main", messages: [{ role: "user", content: "slow" + " word".repeat(40000) }] }]);
  return { data: "done" };""", worker=False)
    context = Context()
    result = run_turn(context, "hi", assistant=caller, model=RaceModel(), budget=0.01, check=False)
    assert result.error is not None and result.error["code"] == "BUDGET_EXCEEDED", result.error
    assert result.cost.total > 0.13 and [m["type"] for m in context.messages()] == [2]


def test_a_race_losers_call_is_on_the_result_when_run_turn_returns_budget_or_not(tmp_path):
    """With no budget too, the request waits for its hooks' calls to close before it ends, so the result
    (and the Context's ledger) are whole when run_turn returns, not completed later by a loser's thread."""
    caller = caller_with(tmp_path, """
  ctx.llm.Race([{ connector: "main", messages: [{ role: "user", content: "fast" }] },
                { connector: "main", messages: [{ role: "user", content: "slow" }] }]);
  return { data: "done" };""", worker=False)
    context = Context()
    result = run_turn(context, "hi", assistant=caller, model=RaceModel())
    assert len(result.calls) == 2 and context.cost.calls == 2


def test_a_sub_agents_call_is_priced_on_the_callers_context_at_the_callers_prices(tmp_path):
    """prices= given to run_turn price the sub-agent's call on the Context too: 1000 x $1 + 100 x $2 per
    million = $0.0012 (it was 'unpriced' there: the sub-agent's own result has no prices)."""
    from decimal import Decimal

    caller = caller_with(tmp_path, """
  const a = ctx.agent.Call("today.worker", [{ role: "user", content: "go" }]);
  return { data: [a.content ?? a.error] };""")
    model = ScriptedModel(["agent reply"], usage={"inputTokens": 1000, "outputTokens": 100}, model="my-model")
    context = Context()
    result = run_turn(context, "hi", assistant=caller, model=model, prices={"my-model": {"input": 1.0, "output": 2.0}})
    assert result.cost.total == context.cost.total == Decimal("0.0012")


def test_a_batch_of_more_requests_than_the_cap_is_refused_before_any_runs():
    """Each request of All / Any / Race runs on a thread of its own, so a hook's loop of 10,000 requests
    would start 10,000 threads: refused whole (nothing ran), saying why and what to do."""
    from agentctx_widgets.yao.registries import Mcp
    from agentctx_widgets.yao.values import MAX_BATCH, YaoServiceError

    ran = []
    mcp = Mcp()
    mcp.register("echo", {"echo": lambda args: ran.append(args) or args})
    requests = [{"mcp": "echo", "tool": "echo", "arguments": {"n": n}} for n in range(MAX_BATCH + 1)]
    with pytest.raises(YaoServiceError, match=rf"^All: at most {MAX_BATCH} requests in one batch here, "
                                              rf"got {MAX_BATCH + 1} \(Yao has no such limit; split the batch\)$"):
        mcp.All(requests)
    assert ran == []
    assert len(mcp.All(requests[:MAX_BATCH])) == MAX_BATCH and len(ran) == MAX_BATCH
    with pytest.raises(YaoServiceError, match=rf"^CallToolsParallel: at most {MAX_BATCH} requests"):
        mcp.CallToolsParallel("echo", [{"name": "echo", "arguments": {"n": n}} for n in range(MAX_BATCH + 1)])
    assert len(ran) == MAX_BATCH  # nothing more ran

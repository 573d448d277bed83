"""One turn of the hook lifecycle (DESIGN.md "The hook lifecycle", steps 1–8), with tool rounds.

1. the user input is appended to the context;
2. ``Create(ctx, messages)`` may return ``{"messages"}`` to replace what the model sees;
3. the model streams events into an assembler; with ``streaming=True`` the view is shown the
   growing message after every event (``view.set_pending(message)``, by reference);
4. ``Before(ctx, messages, response)`` may return ``{"response"}`` to change it;
5. the response message is committed (``context.append``) and sent to the client as ``thinking`` /
   ``text`` / ``tool_call`` output messages; then ``view.set_pending(None)``;
6. ``After`` (may change the response the result reports);
   with ``tools=`` and a response that calls them: each call runs (one type-4 tool result per call,
   appended to the context as it completes) and the model is called again — steps 3–6 once per
   model response — until it answers without tool calls (at most ``max_tool_rounds`` rounds);
7. ``Done`` once, with the final response;
8. any exception in 2–7 calls ``Error(ctx, messages, error)`` with ``error = {"message", "code",
   "name", "hook", "line"?, "status"?, "retry"?}``. ``{"retry": true}`` reruns from step 2 (at most
   ``max_retries`` reruns; the context is first put back to just after step 1); ``{"error": X}``
   surfaces X as an ``error`` output message. With no Error hook, or one that returns nothing, the
   original error is surfaced. A failure before the final response is committed leaves the context
   as it was after step 1 (tool rounds included are taken back); a failure in ``After``/``Done`` of
   the final response leaves it committed (it was already sent).

An interrupt (``KeyboardInterrupt`` in the calling thread, i.e. the kernel's stop button) cancels the
turn wherever it is: the model stream is closed, the context is put back to just after step 1, the
view keeps the partial response marked as interrupted, and ``KeyboardInterrupt`` reaches the caller.
A ``budget`` the turn's running cost would pass stops it the same way (``turn_core.Budget``), but the
turn fails instead, with ``BUDGET_EXCEEDED`` (the ``Error`` hook is not asked: a retry would pass it
again) and the stopped call, its usage estimated, on ``result.calls``.
Python hooks and tools run on the calling thread (see :mod:`.caller`).

Hooks see ``messages`` as OpenAI-like ``{role, content}`` dicts and ``response`` as an OpenAI-like
dict (see :mod:`.openai_shapes`). The output is flushed after every hook returns (seed 000: messages a
hook did not flush reach the client when it returns).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import time
import uuid
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..context import Context, create_assembler
from ..context.validate import has_content
from ..models import Model, ModelError
from ..models.openai_shapes import tool_call_of
from ..models.tools import Tool, as_tools, result_message
from ..output import Output, adapter_for
from .base import Hooks
from .caller import run_on_worker
from .checkpoint import ContextCheckpoint
from .errors import BudgetError, error_dict
from .hook_context import CTX_FIELDS, HookContext
from .openai_shapes import from_view, message_from_response, response_of, to_view
from .python_hooks import hooks_from_python
from .returns import CREATE_FIELDS, CTX_OVERRIDE_FIELDS, MODEL_OPTION_FIELDS, unknown_create_keys
from .turn_core import Budget, Reply, StopSignal, as_user_message, call_tool, stream_reply
from .turn_result import TurnOutcome, checked  # noqa: F401 - checked: turns.py imports it from here

INTERRUPTED = {"message": "interrupted: the turn was stopped before it finished; nothing was committed",
               "code": "INTERRUPTED", "name": "KeyboardInterrupt", "hook": None}
"""``TurnResult.error`` of an interrupted turn, and the mark on the partial response the view keeps."""


_NOTHING_TO_SHOW = frozenset({"start", "text_start", "thinking_start"})
"""Events that add nothing visible: showing the pending message only from the first delta on makes the
first characters the view's leading-edge batch instead of waiting out the 30 ms batch interval behind an
empty block (bench/models.py: first byte → first character on the page)."""


class TurnView(Protocol):
    """What the runner needs of a view (``ContextView`` has it): an Output sink and a pending message."""

    def write(self, messages: list[dict]) -> None: ...

    def set_pending(self, message: dict | None) -> None: ...


@dataclass(repr=False)
class TurnResult(TurnOutcome):
    """What one turn of the seed lifecycle did (:class:`.turn_result.TurnOutcome` holds ``response``,
    ``usage``, ``error``, ``diagnostics``, ``hooks_called``, ``console`` and ``ok``). Here ``response`` is
    the final OpenAI-like response (after Before/After), and ``error`` is ``{"message", "code", "name",
    "hook", …}``."""

    output: list[dict] = field(default_factory=list)
    """Every output message flushed during the turn, in order."""
    chunks: list[dict] = field(default_factory=list)
    """What the client received: OpenAI chunks for ``accept="standard"``, else the messages."""
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds per step (``create``, ``model``, ``before``, ``commit``, ``after``, ``tools``, ``done``,
    ``error``; summed over retries and rounds) and ``total``."""
    retries: int = 0
    """How many times ``Error`` asked for, and got, a rerun."""
    model_messages: list[dict] = field(default_factory=list)
    """The Context messages the model received in its last call."""
    tool_results: list[dict] = field(default_factory=list)
    """The tool-result messages (type 4) the runner's tools produced, in order."""

    REPR_FIELDS = ("response", "usage", "output", "chunks", "console", "hooks_called", "timings", "error",
                   "retries", "model_messages", "calls", "tool_results", "diagnostics")

    @property
    def rate_limits(self) -> dict:
        """The rate-limit headers of the last model call that sent any (``usage_headers``)."""
        return next((call["rateLimits"] for call in reversed(self.calls) if call.get("rateLimits")), {})


async def run_seed_turn_async(
    context: Context,
    user_input: Any,
    *,
    model: Model | None = None,
    hooks: Hooks | str | Any = None,
    view: TurnView | None = None,
    tools: Iterable[Any] | None = None,
    max_tool_rounds: int | None = None,
    accept: str = "cui-web",
    streaming: bool = True,
    max_retries: int = 3,
    output: Output | None = None,
    hook_ctx: HookContext | None = None,
    options: dict | None = None,
    strict: bool = False,
    connectors: dict[str, Model] | None = None,
    prices: dict | None = None,
    budget: Any = None,
    **ctx_fields: Any,
) -> TurnResult:
    """One turn of the seed lifecycle (the module docstring); the failed result is returned, not raised.

    ``agentctx_widgets.run_turn`` (``turns.py``) is the front door: it documents every argument, picks
    this lifecycle or a Yao assistant's, and raises ``TurnError`` for ``check=True``."""
    return await _Turn(**locals()).run()


def run_seed_turn(context: Context, user_input: Any, **arguments: Any) -> TurnResult:
    """:func:`run_seed_turn_async` waited for from synchronous code (a notebook cell: its own event loop
    on a worker thread, Python hooks served here, Ctrl-C stops it; see :mod:`.caller`)."""
    turn = _Turn(context=context, user_input=user_input, **_with_defaults(arguments))
    return run_on_worker(turn.run, turn.interrupt)


@functools.cache
def _seed_signature() -> inspect.Signature:
    """Read once: ``inspect.signature`` of a function this size costs ~0.1 ms, a tenth of a scripted turn."""
    return inspect.signature(run_seed_turn_async)


def _with_defaults(arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` checked against :func:`run_seed_turn_async`'s signature, its defaults filled in."""
    bound = _seed_signature().bind(None, None, **arguments)
    bound.apply_defaults()
    given = dict(bound.arguments)
    del given["context"], given["user_input"]
    return given  # ctx_fields stays one dict, as _Turn takes it


def _as_hooks(hooks: Any) -> Hooks | None:
    if hooks is None or isinstance(hooks, Hooks):
        return hooks
    if isinstance(hooks, str):
        from .js_hooks import hooks_from_js

        return hooks_from_js(hooks)
    return hooks_from_python(hooks)


class _Recorder:
    """Sink keeping every flushed output message of the turn."""

    def __init__(self) -> None:
        self.messages: list[dict] = []

    def write(self, messages: list[dict]) -> None:
        self.messages.extend(messages)


class _Turn:
    def __init__(self, context: Any, user_input: Any, *, model: Any, hooks: Any, view: Any, tools: Any,
                 max_tool_rounds: int | None, accept: str, streaming: bool, max_retries: int, output: Output | None,
                 hook_ctx: HookContext | None, options: dict | None, strict: bool,
                 connectors: dict[str, Any] | None, prices: dict | None, budget: Any, ctx_fields: dict) -> None:
        if model is None or not callable(getattr(model, "stream", None)):
            raise TypeError(f"run_turn(model=…): expected a model with stream(messages), got {model!r}")
        unknown = set(ctx_fields) - set(CTX_FIELDS)
        if unknown:
            raise TypeError(f"run_turn: unknown keyword(s) {sorted(unknown)}; ctx fields are {list(CTX_FIELDS)}")
        for name, value in (("max_retries", max_retries), ("max_tool_rounds", 8 if max_tool_rounds is None else max_tool_rounds)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"run_turn({name}=…): expected an int ≥ 0, got {value!r}")
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"run_turn(options=…): expected a dict, got {type(options).__name__}")
        self.context = context
        self.user_input = user_input
        self.hooks = _as_hooks(hooks)
        self.model = model
        self.view = view
        self.tools: dict[str, Tool] = {tool.name: tool for tool in as_tools(tools)}
        self.max_tool_rounds = 8 if max_tool_rounds is None else max_tool_rounds
        self.accept = accept
        self.streaming = streaming
        self.max_retries = max_retries
        self.options = options
        self.turn_options = options  # the options of this attempt: Create may add model options
        self.strict = bool(strict)
        self.connectors = dict(connectors or {})
        for name, connector in self.connectors.items():
            if not callable(getattr(connector, "stream", None)):
                raise TypeError(f"run_turn(connectors=…): {name!r} is not a model with stream(messages)")
        self.caller_output = output
        self.hook_ctx = hook_ctx
        self.ctx_fields = ctx_fields
        self.budget = Budget.of(budget, prices, model)  # PriceError / a bad budget before anything runs
        self.result = TurnResult(prices=prices)
        self.ctx: HookContext
        self.output: Output
        self.messages: list[dict] = []  # what hooks see as ``messages`` (Create may replace it)
        self.checkpoint: ContextCheckpoint | None = None
        self.final_committed = False
        self.error_shown = False
        self.seen_diagnostics = 0
        self.stop_requested = StopSignal()
        self._live: dict | None = None  # the response being streamed, for an interrupt's view

    # -- the turn ------------------------------------------------------------------------------

    async def run(self) -> TurnResult:
        started = time.monotonic()
        if self.user_input is not None:
            self.context.append(as_user_message(self.user_input))  # step 1
        self.checkpoint = ContextCheckpoint(self.context)
        self.output = self.caller_output if self.caller_output is not None else Output(accept=self.accept)
        was_strict, self.output.strict = self.output.strict, self.output.strict or self.strict
        seen = self.seen_diagnostics = len(self.output.diagnostics)
        base = self.hook_ctx if self.hook_ctx is not None else HookContext(chat_id=getattr(self.context, "id", None))
        fields = {"accept": self.accept, **self.ctx_fields}
        self.ctx = HookContext(**{**base.to_json(), **fields}).with_output(self.output)
        adapter = adapter_for(self.accept, locale=self.ctx.locale or "en", report=self.output.report)
        recorder = _Recorder()
        added = [sink for sink in (self.view, adapter, recorder)
                 if sink is not None and sink not in self.output.sinks]
        for sink in added:
            self.output.add_sink(sink)
        self.recorder = recorder
        try:
            try:
                await self._attempts()
            except asyncio.CancelledError:
                self._on_interrupt()
                raise
            except BudgetError as over:
                self._on_budget(over)
            if hasattr(adapter, "finish") and not getattr(adapter, "ended", False):
                adapter.finish()  # Yao closes every stream with [DONE], a failed one too (openai/writer.go:129-132)
        finally:
            self._flush_quietly()
            for sink in added:
                self.output.remove_sink(sink)
            settle = getattr(self.view, "settle", None)
            if callable(settle):
                try:  # the turn's end is a settled state: store it now, not on a timer a headless run may miss
                    settle()
                except Exception as failure:  # noqa: BLE001 - the turn's result must still reach the caller
                    warnings.warn(f"run_turn: the view could not store its settled state: {failure!r}",
                                  RuntimeWarning, stacklevel=2)
            self.result.output = recorder.messages
            self.result.chunks = list(adapter.chunks)
            self.result.diagnostics = self.output.diagnostics[seen:]
            self.output.strict = was_strict
            self._show_diagnostics()
            self.result.timings["total"] = time.monotonic() - started
        return self.result

    def interrupt(self) -> None:
        """(Calling thread, on Ctrl-C.) Wake whatever the turn may be blocked in; the task is then cancelled."""
        self.stop_requested.set()
        wake = getattr(self.hooks, "interrupt", None)
        if callable(wake):
            wake()

    def _on_interrupt(self) -> None:
        self._take_back(dict(INTERRUPTED), "interrupted")

    def _count(self, call: dict) -> None:
        """One billed call counted (``TurnOutcome.count_call``) and the turn's cost so far shown in the
        view's header (a tool round trip's calls update the same turn)."""
        self.result.count_call(call, self.context)
        show = getattr(self.view, "set_turn_cost", None)
        if callable(show):
            show(self.result.cost, turn=self.result)

    def _on_budget(self, over: BudgetError) -> None:
        """The budget stopped the turn: the stopped call counted, the turn taken back as an interrupt's,
        the error sent to the client."""
        if over.call is not None:
            self._count(over.call)
        error = over.to_dict()
        self._take_back(error, error["message"])
        self._surface(error)

    def _take_back(self, error: dict, mark: str) -> None:
        """Nothing of the turn stays but its input; the view keeps the partial response, marked."""
        self.checkpoint.restore(self.context)
        self.result.error = error
        self.result.response = None
        if self.view is not None:
            partial = None
            if self._live is not None:
                partial = {**_copy(self._live), "error": {"message": mark}}
            try:
                self._set_pending(partial)
            except Exception:  # noqa: BLE001 - the interrupt must still reach the caller
                pass

    async def _attempts(self) -> None:
        while True:
            self.final_committed = False
            self.messages = to_view(self._context_messages())
            try:
                await self._attempt()
                return
            except BudgetError:  # not for Error: a retry would pass the budget again
                raise
            except Exception as failure:  # noqa: BLE001 - step 8: every failure goes to Error
                self._live = None
                if self.view is not None:
                    try:
                        self._set_pending(None)
                    except Exception:  # noqa: BLE001 - the view's own failure is the error reported
                        pass
                self._flush_quietly()  # what a failed hook sent still goes out: it did send it
                error = error_dict(failure)
                decision = await self._on_error(self.messages, error)
                if decision == "retry":
                    if self.result.retries < self.max_retries:
                        self.checkpoint.restore(self.context)
                        self.result.retries += 1
                        self.ctx.retry, self.ctx.retry_times = True, self.result.retries  # as Yao's ctx says
                        continue
                    error = {**error, "message": f"{error['message']} (gave up after {self.max_retries} retries)"}
                    decision = error
                if not self.final_committed:
                    self.checkpoint.restore(self.context)  # no half turn: tool rounds go too
                    self.result.response = None
                self._surface(decision if isinstance(decision, dict) else error)
                return

    async def _attempt(self) -> None:
        messages = self.messages
        model_messages = self._context_messages()
        created = await self._hook("Create", "create", messages)  # step 2
        self.turn_options = self.options
        if created:
            self._apply_create(created)
            if created.get("messages"):  # Yao: absent, null or [] keep the input messages (agent.go:386)
                messages = self.messages = created["messages"]
                model_messages = from_view(messages, model_messages)  # passed-through messages stay as they were
        rounds = 0
        while True:
            response, message = await self._respond(messages, model_messages)  # steps 3–6
            calls = [block for block in message["content"] if block.get("type") == "toolCall"]
            if not self.tools or not calls:
                break
            rounds += 1
            if rounds > self.max_tool_rounds:
                raise ModelError(f"the model still called tools after {self.max_tool_rounds} rounds "
                                 "(max_tool_rounds)", code="MAX_TOOL_ROUNDS")
            with self._timed("tools"):
                results = [await self._run_tool(call) for call in calls]
            model_messages = [*model_messages, message, *results]
            messages = self.messages = [*messages, *to_view([message, *results])]
        done = await self._hook("Done", "done", messages, response)  # step 7
        if done and done.get("response") is not None:
            self.result.response = {**response, **done["response"]}

    def _apply_create(self, created: dict) -> None:
        """Apply Create's HookCreateResponse fields where Yao applies them (create.go:32-68,
        agent.go:611-648): model options for this attempt, ctx overrides, metadata merged, connector."""
        for key in unknown_create_keys(created):
            self.output.report("unknown_return_key", "Create's return value", key=key, hook="Create",
                               struct="HookCreateResponse", known=", ".join(CREATE_FIELDS))
        model_options = {key: created[key] for key in MODEL_OPTION_FIELDS if created.get(key) is not None}
        if model_options:
            self.turn_options = {**(self.options or {}), **model_options}
        for key in CTX_OVERRIDE_FIELDS:
            if created.get(key):
                setattr(self.ctx, key, created[key])
        if created.get("metadata"):
            self.ctx.metadata = {**(self.ctx.metadata or {}), **created["metadata"]}
        connector = created.get("connector")
        if connector:
            if connector in self.connectors:
                self.model = self.connectors[connector]
            else:
                self.output.report("unknown_connector", "Create's return value", connector=connector,
                                   chooser="Create chose", effect="the model stays the same",
                                   known=", ".join(self.connectors) or "none: run_turn(connectors={...})")

    async def _respond(self, messages: list[dict], model_messages: list[dict]) -> tuple[dict, dict]:
        """One model call and its response: stream, Before, commit, After. Returns (response, message)."""
        self.result.model_messages = model_messages
        reply = await self._stream(model_messages)  # step 3
        message, usage = reply.message, reply.usage
        self._count({"usage": usage, **reply.meta})
        response = response_of(message, usage)
        self.result.response = response

        mark = len(self.recorder.messages)
        changed = await self._hook("Before", "before", messages, response)  # step 4
        # seed 000: Before is where reasoning is displayed; when it showed some, the runner does not again
        before_showed_thinking = any(m.get("type") == "thinking" for m in self.recorder.messages[mark:])
        rebuilt = False
        if changed and changed.get("response") is not None:
            response = {**response, **changed["response"]}
            new_message = message_from_response(response, message)
            if new_message is not message:
                message, rebuilt = new_message, True
                canonical = response_of(message, usage)
                response.update({key: canonical[key] for key in ("content", "thinking", "tool_calls", "message")})
            self.result.response = response
        if self.view is not None and (rebuilt or not self.streaming):
            self._set_pending(message)

        with self._timed("commit"):  # step 5
            if has_content(message):
                self.context.append(message)
            else:  # said once, as a diagnostic, instead of the store's warning about a dropped message
                why = "the Before hook's response left nothing" if rebuilt else _stop_reason(self.result.calls)
                self.output.report("empty_reply", "response", why=why)
            self._live = None
            self.final_committed = not (self.tools and any(b.get("type") == "toolCall" for b in message["content"]))
            prefix = self._send_response(message, thinking=not before_showed_thinking)
            self.output.flush()
            if self.view is not None:
                self._set_pending(None)

        after = await self._hook("After", "after", messages, response)  # step 6
        if after and after.get("response") is not None:
            response = {**response, **after["response"]}
            self.result.response = response
        # seed 000's After shows the tool calls it handles: send only those no hook showed (by call id)
        shown = {m.get("props", {}).get("id") for m in self.recorder.messages[mark:] if m.get("type") == "tool_call"}
        self._send_tool_calls(message, prefix, shown)
        self._flush_quietly()
        return response, message

    # -- steps --------------------------------------------------------------------------------

    async def _hook(self, name: str, step: str, *args: Any) -> dict | None:
        if self.hooks is None or name not in self.hooks.names:
            return None
        self.result.hooks_called.append(name)
        with self._timed(step):
            try:
                answer = await self.hooks.call(name, self.ctx, *args)
            finally:
                self.result.console.extend(self.hooks.take_console())
            self.output.flush()  # what the hook sent but did not flush reaches the client now
            self._show_diagnostics()
            return answer

    async def _stream(self, messages: list[dict]) -> Reply:
        assembler = self._assembler = create_assembler()
        self._live = assembler.message()
        live = self.view is not None and self.streaming
        with self._timed("model"):
            reply = await stream_reply(self.model, messages, self._model_options(), stop=self.stop_requested,
                                       report=self.output.report, assembler=assembler, budget=self.budget,
                                       on_event=self._show_event if live else self._show_limits)
        self._live = reply.message
        return reply

    def _show_event(self, event: Any) -> None:
        if not isinstance(event, dict) or event.get("type") not in _NOTHING_TO_SHOW:
            self._set_pending(self._assembler.message())
        self._show_limits(event)

    def _show_limits(self, event: Any) -> None:
        if isinstance(event, dict) and event.get("type") == "start" and event.get("rateLimits"):
            self._show_rate_limits(event["rateLimits"])

    def _model_options(self) -> dict | None:
        if not self.tools:
            return self.turn_options
        options = dict(self.turn_options or {})
        options["tools"] = [*(options.get("tools") or []), *(tool.spec for tool in self.tools.values())]
        return options

    async def _run_tool(self, block: dict) -> dict:
        """Run one tool call; its result (or its failure, as an error result) goes into the context."""
        call_id, name = str(block.get("callId", "")), str(block.get("name", ""))
        ran = await call_tool(self.tools, name, block.get("arguments", {}))
        if ran.ok:
            result = result_message(call_id, name, ran.value)
        elif ran.missing:
            result = result_message(call_id, name, error=f"there is no tool named {name!r}; "
                                                          f"the tools are {', '.join(self.tools)}")
        elif ran.invalid is not None:
            result = result_message(call_id, name, error=str(ran.invalid))
        else:
            failure = ran.failure
            result = result_message(call_id, name, error=f"{name} raised {type(failure).__name__}: {failure}")
        self.context.append(result)
        self.result.tool_results.append(result)
        return result

    def _send_response(self, message: dict, *, thinking: bool) -> str:
        """Send the response's text (and thinking, unless Before showed some) as output messages;
        returns the id prefix its tool calls will use."""
        prefix = f"resp_{uuid.uuid4().hex[:8]}"
        for index, block in enumerate(message.get("content") or []):
            kind = block.get("type")
            if kind in ("text", "thinking") and block.get("text") and (thinking or kind == "text"):
                self._send_final(kind, {"content": block["text"]}, f"{prefix}_{index}")
        return prefix

    def _send_final(self, kind: str, props: dict, message_id: str) -> None:
        """A finished message as Yao's stream handler ends one: the content, then done with the same
        content (a standard client skips a done without delta; a CUI client keeps the content)."""
        self.output.send({"type": kind, "props": props, "id": message_id})
        self.output.send({"type": kind, "props": props, "id": message_id, "done": True})

    def _send_tool_calls(self, message: dict, prefix: str, shown: set) -> None:
        for index, block in enumerate(message.get("content") or []):
            if block.get("type") != "toolCall" or block.get("callId") in shown:
                continue
            call = tool_call_of(block)
            props = {"id": call["id"], "name": call["function"]["name"], "arguments": call["function"]["arguments"]}
            self._send_final("tool_call", props, f"{prefix}_{index}")

    async def _on_error(self, messages: list[dict], error: dict) -> dict | str | None:
        """Call the Error hook: ``"retry"``, the error to surface, or ``None`` for the default."""
        mark = len(self.recorder.messages)
        self.error_shown = False
        try:
            answer = await self._hook("Error", "error", messages, error)
            # an Error hook that showed its own error message replaces the raw one for the client (seed 000)
            self.error_shown = any(m.get("type") == "error" for m in self.recorder.messages[mark:])
        except Exception as failure:  # noqa: BLE001 - a failing Error hook must not hide the error
            self._flush_quietly()
            return {**error, "handler_error": error_dict(failure)}
        if not answer:
            return None
        if answer.get("retry"):
            return "retry"
        if answer.get("error") is not None:
            surfaced = answer["error"]
            return surfaced if isinstance(surfaced, dict) else {**error, "message": str(surfaced)}
        return None

    def _surface(self, error: dict) -> None:
        self.result.error = error
        if self.error_shown:  # the raw error stays on the result (and the log), not in front of the user
            return
        props: dict[str, Any] = {"message": str(error.get("message") or "error")}
        if error.get("code") is not None:
            props["code"] = str(error["code"])
        self.output.send({"type": "error", "props": props})
        self._flush_quietly()

    # -- helpers ------------------------------------------------------------------------------

    def _context_messages(self) -> list[dict]:
        return [m for m in self.context.messages() if isinstance(m.get("type"), int)]

    def _set_pending(self, message: dict | None) -> None:
        self.view.set_pending(message)

    def _show_diagnostics(self) -> None:
        show = getattr(self.view, "set_diagnostics", None)
        new = self.output.diagnostics[self.seen_diagnostics:]
        if callable(show) and new:
            show(new)

    def _show_rate_limits(self, limits: dict) -> None:
        show = getattr(self.view, "set_rate_limits", None)
        if callable(show):
            show(limits)

    def _flush_quietly(self) -> None:
        try:
            self.output.flush()
        except Exception:  # noqa: BLE001 - a failing sink is reported by the flush that hit it first
            pass

    def _timed(self, step: str) -> _Timer:
        return _Timer(self.result.timings, step)


class _Timer:
    def __init__(self, timings: dict[str, float], step: str) -> None:
        self.timings, self.step = timings, step

    def __enter__(self) -> None:
        self.started = time.monotonic()

    def __exit__(self, *exc: Any) -> None:
        self.timings[self.step] = self.timings.get(self.step, 0.0) + time.monotonic() - self.started


def _stop_reason(calls: list[dict]) -> str:
    """How the last model call ended, for the ``empty_reply`` diagnostic."""
    reason = calls[-1].get("stopReason") if calls else None
    return f"the model stopped with {reason!r}" if reason else "the model sent no stop reason"


def _copy(value: Any) -> Any:
    import orjson

    return orjson.loads(orjson.dumps(value))

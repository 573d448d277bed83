"""One turn of the hook lifecycle (DESIGN.md "The hook lifecycle", steps 1–8).

1. the user input is appended to the context;
2. ``Create(ctx, messages)`` may return ``{"messages"}`` to replace what the model sees;
3. the model streams events into an assembler; with ``streaming=True`` the view is shown the
   growing message after every event (``view.set_pending(message)``, by reference);
4. ``Before(ctx, messages, response)`` may return ``{"response"}`` to change it;
5. the response message is committed (``context.append``) and sent to the client as ``thinking`` /
   ``text`` / ``tool_call`` output messages; then ``view.set_pending(None)``;
6. ``After`` (may change the response the result reports), 7. ``Done``;
8. any exception in 2–7 calls ``Error(ctx, messages, error)`` with ``error = {"message", "code",
   "name", "hook", "line"}``. ``{"retry": true}`` reruns from step 2 (at most ``max_retries``
   reruns; a response committed by the failed attempt is removed first, or, if it merged into
   the last message, that message is put back as it was); ``{"error": X}`` surfaces
   X as an ``error`` output message. With no Error hook, or one that returns nothing, the original
   error is surfaced. ``TurnResult.error`` holds the surfaced error; a failure before step 5 leaves
   no response in the context.

Hooks see ``messages`` as OpenAI-like ``{role, content}`` dicts and ``response`` as an OpenAI-like
dict (see :mod:`.view`). The output is flushed after every hook returns (seed 000: messages a hook
did not flush reach the client when it returns).
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
import uuid
import warnings
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..context import create_assembler, finalize_usage, user_message
from ..models import ModelError
from ..output import Output, adapter_for
from .base import Hooks
from .context import CTX_FIELDS, HookContext
from .errors import HookError
from .python_hooks import hooks_from_python
from .usage_log import record_usage
from .view import from_view, message_from_response, response_of, to_view, tool_call_of


@dataclass
class TurnResult:
    """What one ``run_turn`` did."""

    response: dict | None = None
    """The final OpenAI-like response (after Before/After), or ``None`` if the turn failed early."""
    usage: dict | None = None
    """``finalize_usage(reported, model_messages, message)`` of the last model response."""
    output: list[dict] = field(default_factory=list)
    """Every output message flushed during the turn, in order."""
    chunks: list[dict] = field(default_factory=list)
    """What the client received: OpenAI chunks for ``accept="standard"``, else the messages."""
    console: list[dict] = field(default_factory=list)
    """JavaScript console lines: ``{"level", "hook", "text"}``."""
    hooks_called: list[str] = field(default_factory=list)
    """Hook names in call order (retries repeat them)."""
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds per step (``create``, ``model``, ``before``, ``commit``, ``after``, ``done``,
    ``error``; summed over retries) and ``total``."""
    error: dict | None = None
    """The surfaced error (``{"message", "code", "name", "hook", …}``), or ``None``."""
    retries: int = 0
    """How many times ``Error`` asked for, and got, a rerun."""
    model_messages: list[dict] = field(default_factory=list)
    """The Context messages the model received on the last attempt."""

    @property
    def ok(self) -> bool:
        return self.error is None


def run_turn(
    context: Any,
    user_input: Any,
    *,
    hooks: Any = None,
    model: Any = None,
    view: Any = None,
    accept: str = "cui-web",
    streaming: bool = True,
    max_retries: int = 3,
    output: Output | None = None,
    hook_ctx: HookContext | None = None,
    options: dict | None = None,
    **ctx_fields: Any,
) -> TurnResult:
    """Run one turn and wait for it. Works inside a running event loop (a Jupyter cell): the turn
    then runs on a worker thread with its own loop, and flushes still reach the view live."""
    kwargs = dict(hooks=hooks, model=model, view=view, accept=accept, streaming=streaming,
                  max_retries=max_retries, output=output, hook_ctx=hook_ctx, options=options, **ctx_fields)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run_turn_async(context, user_input, **kwargs))
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["result"] = asyncio.run(run_turn_async(context, user_input, **kwargs))
        except BaseException as error:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = error

    worker = threading.Thread(target=work, name="agentctx-run-turn", daemon=True)
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["result"]


async def run_turn_async(
    context: Any,
    user_input: Any,
    *,
    hooks: Any = None,
    model: Any = None,
    view: Any = None,
    accept: str = "cui-web",
    streaming: bool = True,
    max_retries: int = 3,
    output: Output | None = None,
    hook_ctx: HookContext | None = None,
    options: dict | None = None,
    **ctx_fields: Any,
) -> TurnResult:
    """Run one turn (see the module docstring); ``await`` it from async code."""
    if model is None or not callable(getattr(model, "stream", None)):
        raise TypeError(f"run_turn(model=…): expected a model with stream(messages), got {model!r}")
    unknown = set(ctx_fields) - set(CTX_FIELDS)
    if unknown:
        raise TypeError(f"run_turn: unknown keyword(s) {sorted(unknown)}; ctx fields are {list(CTX_FIELDS)}")
    if not isinstance(max_retries, int) or max_retries < 0:
        raise ValueError(f"run_turn(max_retries=…): expected an int ≥ 0, got {max_retries!r}")
    turn = _Turn(context, _as_hooks(hooks), model, view, accept, streaming, max_retries, options)
    return await turn.run(user_input, output, hook_ctx, ctx_fields)


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


class _Retry(Exception):
    pass


class _Turn:
    def __init__(self, context: Any, hooks: Hooks | None, model: Any, view: Any, accept: str,
                 streaming: bool, max_retries: int, options: dict | None) -> None:
        self.context = context
        self.hooks = hooks
        self.model = model
        self.view = view
        self.accept = accept
        self.streaming = streaming
        self.max_retries = max_retries
        self.options = options
        self.result = TurnResult()
        self.ctx: HookContext
        self.output: Output
        self.messages: list[dict] = []  # what hooks see as ``messages`` (Create may replace it)

    # -- the turn ------------------------------------------------------------------------------

    async def run(self, user_input: Any, output: Output | None, hook_ctx: HookContext | None,
                  ctx_fields: dict) -> TurnResult:
        started = time.monotonic()
        if user_input is not None:
            self.context.append(_as_user_message(user_input))  # step 1
        self.output = output if output is not None else Output(accept=self.accept)
        adapter = adapter_for(self.accept)
        recorder = _Recorder()
        added = [sink for sink in (self.view, adapter, recorder)
                 if sink is not None and sink not in self.output.sinks]
        for sink in added:
            self.output.add_sink(sink)
        base = hook_ctx if hook_ctx is not None else HookContext(chat_id=getattr(self.context, "id", None))
        fields = {"accept": self.accept, **ctx_fields}
        self.ctx = HookContext(**{**base.to_json(), **fields}).with_output(self.output)
        try:
            await self._attempts()
            if self.result.error is None and hasattr(adapter, "finish") and not getattr(adapter, "ended", False):
                adapter.finish()
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
        self.result.timings["total"] = time.monotonic() - started
        return self.result

    async def _attempts(self) -> None:
        while True:
            committed_at: list[_Undo] = []
            self.messages = to_view(self._context_messages())
            try:
                await self._attempt(committed_at)
                return
            except Exception as failure:  # noqa: BLE001 - step 8: every failure goes to Error
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
                        if committed_at:
                            committed_at[0].undo(self.context)
                        self.result.retries += 1
                        continue
                    error = {**error, "message": f"{error['message']} (gave up after {self.max_retries} retries)"}
                    decision = error
                if not committed_at:
                    self.result.response = None  # nothing was committed: no response to report
                self._surface(decision if isinstance(decision, dict) else error)
                return

    async def _attempt(self, committed_at: list[_Undo]) -> None:
        messages = self.messages
        model_messages = self._context_messages()
        created = await self._hook("Create", "create", messages)  # step 2
        if created and created.get("messages") is not None:
            messages = self.messages = created["messages"]
            model_messages = from_view(messages, model_messages)  # passed-through messages stay as they were
        self.result.model_messages = model_messages
        message, reported = await self._stream(model_messages)  # step 3
        usage = finalize_usage(reported, model_messages, message)
        record_usage(usage, self.context)
        self.result.usage = usage
        response = response_of(message, usage)
        self.result.response = response

        changed = await self._hook("Before", "before", messages, response)  # step 4
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
            committed_at.append(_Undo(self.context))
            self.context.append(message)
            self._send_response(message)
            self.output.flush()
            if self.view is not None:
                self._set_pending(None)

        after = await self._hook("After", "after", messages, response)  # step 6
        if after and after.get("response") is not None:
            response = {**response, **after["response"]}
            self.result.response = response
        done = await self._hook("Done", "done", messages, response)  # step 7
        if done and done.get("response") is not None:
            self.result.response = {**response, **done["response"]}

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
            return answer

    async def _stream(self, messages: list[dict]) -> tuple[dict, Any]:
        assembler = create_assembler()
        live = self.view is not None and self.streaming
        with self._timed("model"):
            events = self.model.stream(messages, options=self.options)
            if inspect.isawaitable(events):
                events = await events
            if hasattr(events, "__aiter__"):
                async for event in events:
                    self._consume(assembler, event, live)
            else:
                for event in events:
                    self._consume(assembler, event, live)
        message = assembler.message()
        if "error" in message:
            raise ModelError.from_event_error(message["error"])
        return message, assembler.usage

    def _consume(self, assembler: Any, event: dict, live: bool) -> None:
        assembler.consume(event)
        if live:
            self._set_pending(assembler.message())
        if isinstance(event, dict) and event.get("type") == "error":
            raise ModelError.from_event_error(event.get("error"))

    def _send_response(self, message: dict) -> None:
        prefix = f"resp_{uuid.uuid4().hex[:8]}"
        for index, block in enumerate(message.get("content") or []):
            kind = block.get("type")
            message_id = f"{prefix}_{index}"
            if kind in ("text", "thinking") and block.get("text"):
                self.output.send({"type": kind, "props": {"content": block["text"]}, "id": message_id, "done": True})
            elif kind == "toolCall":
                call = tool_call_of(block)
                self.output.send({
                    "type": "tool_call",
                    "props": {"id": call["id"], "name": call["function"]["name"], "arguments": call["function"]["arguments"]},
                    "id": message_id,
                    "done": True,
                })

    async def _on_error(self, messages: list[dict], error: dict) -> dict | str | None:
        """Call the Error hook: ``"retry"``, the error to surface, or ``None`` for the default."""
        try:
            answer = await self._hook("Error", "error", messages, error)
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

    def _flush_quietly(self) -> None:
        try:
            self.output.flush()
        except Exception:  # noqa: BLE001 - a failing sink is reported by the flush that hit it first
            pass

    def _timed(self, step: str) -> _Timer:
        return _Timer(self.result.timings, step)


class _Undo:
    """How to take back one ``context.append``: the length before it and a copy of the last entry,
    since an appended message may have merged into (changed) the last entry instead of adding one."""

    def __init__(self, context: Any) -> None:
        self.length = len(context)
        self.last = orjson.loads(orjson.dumps(context.at(-1))) if self.length else None

    def undo(self, context: Any) -> None:
        context.truncate(self.length)
        if self.length and context.at(self.length - 1) != self.last:
            context.replace(self.length - 1, self.last)


class _Timer:
    def __init__(self, timings: dict[str, float], step: str) -> None:
        self.timings, self.step = timings, step

    def __enter__(self) -> None:
        self.started = time.monotonic()

    def __exit__(self, *exc: Any) -> None:
        self.timings[self.step] = self.timings.get(self.step, 0.0) + time.monotonic() - self.started


def error_dict(failure: BaseException) -> dict:
    """The ``error`` argument of the Error hook for any exception."""
    if isinstance(failure, HookError):
        return failure.to_dict()
    if isinstance(failure, ModelError):
        error = {"message": failure.message, "code": failure.code or "MODEL_ERROR", "name": "ModelError", "hook": None}
        if failure.retry is not None:
            error["retry"] = failure.retry
        return error
    code = getattr(failure, "code", None)
    return {"message": f"{type(failure).__name__}: {failure}", "code": code if isinstance(code, str) else "TURN_ERROR",
            "name": type(failure).__name__, "hook": None}


def _as_user_message(user_input: Any) -> dict:
    if isinstance(user_input, dict):
        return user_input
    return user_message(user_input)

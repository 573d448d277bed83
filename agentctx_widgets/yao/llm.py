"""``ctx.llm``: a hook's direct model call, through the notebook's models instead of Yao's connectors.

Upstream (YaoApp/yao 5a3f9a6a): ``ctx.llm.Stream(connector, messages, options?)`` checks its arguments
(``agent/context/jsapi_llm.go:93-112``: ``"Stream requires connector and messages parameters"``,
``"connector must be a string"``, ``"messages must be an array"``), takes ``onChunk`` out of the options
(``:114-137``) and returns ``{connector, response?, content?, error?}`` (``agent/llm/jsapi_types.go:16-22``);
a failure after the arguments is the result's ``error``, not a throw (``agent/llm/jsapi.go:71-128``:
``"failed to select connector …"``, ``"failed to parse messages: message N is not an object"`` /
``"… missing role"``, ``"LLM stream failed: …"``). Each chunk becomes a message
``{type, props: {content}, chunk_id, message_id, delta: true}`` (``props.raw`` for tool-call chunks),
given to ``onChunk`` first and then sent to the client (``agent/llm/jsapi.go:376-512``); an error chunk
is ``{type: "error", props: {error}}`` and ends the stream. ``onChunk`` returning non-zero stops the
stream (``:407-411``; here: we stop reading the model and return what came so far). ``All / Any /
Race`` take ``[{connector, messages, options?}]`` (invalid requests skipped, ``:578-624``) with one
``onChunk(connector, index, msg)``; ``Any`` returns ``[first success]`` or every error, ``Race``
``[first result]`` (``:663-775``).

Here a connector name is looked up in ``connectors`` (Yao connector name → :class:`Model`), falling
back to ``default`` (a stand-alone ``YaoServices(model=…)``; a request's ``ctx.llm`` has none: the runner
registers its model under the request's connector and the model's id, and any other name fails as
``connector.Select`` does, ``agent/llm/jsapi.go:82-86``). The batch methods run their requests at once
(:mod:`.fanout`, as ``executeAll / Any / Race`` do), so ``Race`` is the first to finish.
``response`` is Yao's ``CompletionResponse`` JSON (``agent/context/types_llm.go:123-155``) built from our
normalised events; ``id`` is the model's when its ``start`` event carries one, ``created`` the clock's.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import copy
import functools
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, ContextManager

from ..context.assemble import Assembler
from ..output.diagnostics import diagnostic
from ..context.types import TYPE_OF_ROLE
from ..context.usage import finalize_usage
from ..context.usage_data import usage_normalize
from ..models.openai_shapes import from_view_message, tool_call_of
from ..models.protocol import Model, ModelError
from ..models.stream_events import Stop, events_of
from .clock import SYSTEM_CLOCK, Clock
from .ids import NextId, counters
from .request_shapes import completion_response
from .fanout import Slot
from .values import SKIP, BatchMethods, YaoServiceError, js_int, name_and_messages, on_calling_thread

OnChunk = Callable[[dict], Any]
Send = Callable[[dict], None]

_FLOAT_OPTIONS = ("temperature", "top_p", "presence_penalty", "frequency_penalty")
_INT_OPTIONS = ("max_tokens", "max_completion_tokens", "seed")


class Llm(BatchMethods):
    """``ctx.llm`` for one request.

    ``connectors`` maps Yao connector names to models, ``default`` answers any other name; ``next_id`` is the
    request's id counter (shared with the output API so ``M``/``C`` ids do not repeat); ``send``, when
    given, receives every chunk message as Yao writes it to the client.
    """

    def __init__(self, *, connectors: Mapping[str, Model] | None = None, default: Model | None = None,
                 next_id: NextId | None = None, send: Send | None = None,
                 clock: Clock = SYSTEM_CLOCK) -> None:
        self.connectors = dict(connectors or {})
        self.default = default
        self.next_id = next_id or counters()
        self.send = send
        self.clock = clock
        self.stop: Stop | None = None  # the request's stop (run_assistant sets it): a stream ends at Ctrl-C
        self.count: Callable[[dict], None] | None = None  # the request counts each billed call (run_assistant)
        self.refused: Callable[[], str | None] | None = None  # why a call is not made (the budget is passed)
        self.opened: Callable[[], ContextManager[None]] | None = None  # a call under way, until it is counted
        self.diagnostics: list[dict] = []  # the runner adds them to the request's result
        self._reported: set[str] = set()

    def _report_unknown(self, connector: str) -> None:
        """``llm_connector_unknown``, once per name: a notebook user expects the turn's model to answer."""
        if connector in self._reported:
            return
        self._reported.add(connector)
        known = ", ".join(sorted(self.connectors)) or "none"
        self.diagnostics.append(diagnostic("llm_connector_unknown", "ctx.llm", connector=connector, known=known))

    def Stream(self, *args: Any) -> dict:  # noqa: N802 - Yao's method names
        return self._stream(*name_and_messages("Stream", "connector", args))


    def GenerateImage(self, *args: Any) -> dict:  # noqa: N802
        if len(args) < 2:
            raise YaoServiceError("GenerateImage requires connector and prompt parameters")
        if not isinstance(args[0], str):
            raise YaoServiceError("connector must be a string")
        if not isinstance(args[1], str):
            raise YaoServiceError("prompt must be a string")
        return {"connector": args[0], "error": "ctx.llm.GenerateImage is not available here: the notebook's "
                "models stream text; call an image API from a registered process instead"}

    # -- one call ---------------------------------------------------------------------------
    def _stream(self, connector: str, messages: list, options: dict, on_chunk: OnChunk | None) -> dict:
        why = self.refused() if self.refused is not None else None
        if why:
            return {"connector": connector, "error": why}
        with self.opened() if self.opened is not None else contextlib.nullcontext():
            return self._call(connector, messages, options, on_chunk)

    def _call(self, connector: str, messages: list, options: dict, on_chunk: OnChunk | None) -> dict:
        result: dict[str, Any] = {"connector": connector}
        model = self.connectors.get(connector, self.default)
        if model is None:  # connector.Select fails: the result's error, no other model (jsapi.go:82-86)
            result["error"] = (f"failed to select connector {connector}: no model for it here: pass "
                               f"connectors={{{connector!r}: model}}")
            self._report_unknown(connector)
            return result
        try:
            context_messages = [_context_message(message, index) for index, message in enumerate(messages)]
        except ValueError as error:
            result["error"] = f"failed to parse messages: {error}"
            return result
        run = _Run(self, on_chunk)
        events: Iterator[dict] | None = None
        try:
            events = _events(model.stream(context_messages, options=_model_options(options)), self.stop)
            for event in events:
                if not run.consume(event):
                    break
        except Exception as error:  # noqa: BLE001 - a model failure is the result's error, as in Yao
            message = error.message if isinstance(error, ModelError) else str(error) or type(error).__name__
            run.error(message)
        finally:
            if events is not None:
                events.close()
            if self.count is not None and run.started:  # the stream opened: the provider bills it
                self.count(run.call(model, context_messages))
        if run.failed is not None:
            result["error"] = f"LLM stream failed: {run.failed}"
            return result
        response = run.response(self.clock)
        result["response"] = response
        if response.get("content"):
            result["content"] = response["content"]
        return result

    _batch_usage = "requires requests array parameter"
    _batch_on_chunk = True
    _batch_shape = "compact"  # [success] / the errors / [first] (jsapi.go:698-732, 761-774)

    def _prepare(self, request: Any, index: int, on_chunk: Callable[..., Any] | None) -> Any:
        if not (isinstance(request, dict) and isinstance(request.get("connector"), str)
                and isinstance(request.get("messages"), list)):
            return SKIP  # Yao skips a request without a connector string and a messages array (:578-624)
        options = request.get("options") if isinstance(request.get("options"), dict) else {}
        options = {key: value for key, value in options.items() if key != "onChunk"}
        handler = None if on_chunk is None else functools.partial(on_chunk, request["connector"], index)
        return lambda slot: self._fork(slot)._stream(request["connector"], request["messages"], options,
                                                     on_calling_thread(slot, handler))

    def _fork(self, slot: Slot) -> Llm:
        """``executeSingleRequestWithForkedContext`` (``jsapi.go:777-788``): this request's ``ctx.llm`` for
        one call of a batch, its ids and client writes made on the calling thread, stopped by the slot."""
        fork = copy.copy(self)
        fork.next_id = functools.partial(slot.here, self.next_id)
        if self.send is not None:
            fork.send = functools.partial(slot.here, self.send)
        fork.stop = slot.cancel
        return fork


class _Run:
    """One stream's state: Yao's chunk messages out, our assembler folding the response."""

    def __init__(self, llm: Llm, on_chunk: OnChunk | None) -> None:
        self.llm = llm
        self.on_chunk = on_chunk
        self.assembler = Assembler()
        self.message_id: str | None = None
        self.failed: str | None = None
        self.usage: Any = None
        self.model_id = ""
        self.response_id = ""
        self.started = False
        self.provider: str | None = None

    def call(self, model: Any, messages: list[dict]) -> dict:
        """The call as ``TurnResult.calls`` keeps one (its usage the provider's, else the kit's estimate), so
        the request's cost, its context's and its budget's count a hook's ``ctx.llm`` calls too."""
        name = self.model_id or getattr(model, "model", None)
        return {"usage": finalize_usage(self.usage, messages, self.assembler.message()),
                **({"model": name} if isinstance(name, str) and name else {}),
                **({"provider": self.provider} if self.provider else {}), "via": "ctx.llm"}

    def consume(self, event: dict) -> bool:
        """Fold one normalised event; false when the stream should stop."""
        kind = event.get("type")
        self.started = True
        self.assembler.consume(event)
        if kind == "start":
            self.provider = event.get("provider") if isinstance(event.get("provider"), str) else None
            self.model_id = str(event.get("model") or "")
            self.response_id = str(event.get("id") or "")
        elif kind in ("text_start", "thinking_start", "tool_call_start"):
            self.message_id = self.llm.next_id("M")
        elif kind in ("text_end", "thinking_end", "tool_call_end"):
            self.message_id = None
        elif kind in ("text_delta", "thinking_delta", "tool_call_delta"):
            return self._chunk(kind, str(event.get("delta", "")))
        elif kind == "done":
            self.usage = event.get("usage")
        elif kind == "error":
            error = event.get("error")
            self.error(error.get("message", "model error") if isinstance(error, dict) else str(error))
            return False
        return True

    def _chunk(self, kind: str, delta: str) -> bool:
        if self.message_id is None:  # a delta with no start: Yao opens a message (jsapi.go:386-389)
            self.message_id = self.llm.next_id("M")
        message_type = {"text_delta": "text", "thinking_delta": "thinking", "tool_call_delta": "tool_call"}[kind]
        props = {"raw": delta} if message_type == "tool_call" else {"content": delta}
        message = {"type": message_type, "props": props, "chunk_id": self.llm.next_id("C"),
                   "message_id": self.message_id, "delta": True}
        if self.on_chunk is not None and js_int(self.on_chunk(dict(message, props=dict(props)))) != 0:
            return False
        if self.llm.send is not None:
            self.llm.send(message)
        return True

    def error(self, text: str) -> None:
        message = {"type": "error", "props": {"error": text}}
        if self.on_chunk is not None:
            self.on_chunk({"type": "error", "props": {"error": text}})
        if self.llm.send is not None:
            self.llm.send(message)
        self.failed = text

    def response(self, clock: Clock) -> dict:
        """Yao's ``CompletionResponse`` (``types_llm.go:123-155``) for what the model said: its text and
        thinking as streamed (joined without a separator, as Yao appends the deltas)."""
        blocks = self.assembler.message().get("content", [])
        said = {"content": "".join(block.get("text", "") for block in blocks if block.get("type") == "text"),
                "thinking": "".join(block.get("text", "") for block in blocks if block.get("type") == "thinking"),
                "tool_calls": [tool_call_of(block) for block in blocks if block.get("type") == "toolCall"],
                "usage": None if self.usage is None else usage_normalize(self.usage)}
        return completion_response(said, id=self.response_id, model=self.model_id, created=clock.wall_ms() // 1000)


def _model_options(options: dict) -> dict:
    """Yao's completion options as our models take them (``agent/llm/jsapi.go:241-344``)."""
    result: dict[str, Any] = {}
    for key in _FLOAT_OPTIONS:
        if isinstance(options.get(key), (int, float)) and not isinstance(options.get(key), bool):
            result[key] = float(options[key])
    for key in _INT_OPTIONS:
        if isinstance(options.get(key), (int, float)) and not isinstance(options.get(key), bool):
            result[key] = int(options[key])
    for key in ("stop", "tool_choice"):
        if key in options:
            result[key] = options[key]
    for key in ("user", "reasoning_effort"):
        if isinstance(options.get(key), str):
            result[key] = options[key]
    if isinstance(options.get("response_format"), dict):
        result["response_format"] = options["response_format"]
    if isinstance(options.get("tools"), list):
        result["tools"] = [_tool_schema(tool) for tool in options["tools"] if isinstance(tool, dict)]
    return result


def _tool_schema(tool: dict) -> dict:
    """An OpenAI tool (``{type: "function", function: {...}}``) as ``{name, description, parameters}``."""
    function = tool.get("function") if isinstance(tool.get("function"), dict) else tool
    schema = {"name": str(function.get("name", "")), "description": str(function.get("description", ""))}
    schema["parameters"] = function.get("parameters") or {"type": "object", "properties": {}}
    return schema


def _context_message(message: Any, index: int) -> dict:
    """A Yao (OpenAI-shaped) message as a Context message (``models.openai_shapes``); the errors are
    ``ParseMessages``' texts, and only text parts can be sent."""
    if not isinstance(message, dict):
        raise ValueError(f"message {index} is not an object")
    role = message.get("role")
    if not isinstance(role, str):
        raise ValueError(f"message {index} missing role")
    if role not in TYPE_OF_ROLE:
        raise ValueError(f"message {index} has role {role!r}, which has no Context message type")
    content = message.get("content")
    for part in content if isinstance(content, list) else ():
        if not (isinstance(part, dict) and part.get("type") == "text"):
            raise ValueError(f"message {index}: only text content parts can be sent to the notebook's "
                             f"models, got {part!r:.60}")
    return from_view_message(message)


def _events(stream: Any, stop: Stop | None = None) -> Iterator[dict]:
    """A model's events read synchronously, one at a time (a hook's call blocks, as in Yao).

    An async stream (or an awaitable: ``models.stream_events``) is stepped on an event loop of its own
    in a helper thread, so this works whether or not the caller is inside a running loop, and each chunk
    reaches ``onChunk`` as the model sends it. Closing this generator early closes the model's stream;
    so does ``stop`` (the request's Ctrl-C), at once, even while the model is silent: the step waited
    for is cancelled, the stream closed, and :class:`ModelError` ("interrupted") raised.
    """
    if isinstance(stream, Iterable):
        iterator = iter(stream)
        try:
            for event in iterator:
                if stop is not None and stop.is_set():
                    raise _interrupted()
                yield event
        finally:
            close = getattr(iterator, "close", None)
            if callable(close):
                close()
        return
    events = events_of(stream, stop=stop)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="yao-llm-stream", daemon=True)
    thread.start()
    stepping: dict[str, asyncio.Task] = {}

    async def step() -> tuple[bool, Any]:
        stepping["task"] = asyncio.current_task()
        try:
            return True, await events.__anext__()
        except StopAsyncIteration:
            return False, None

    async def close() -> None:
        task = stepping.get("task")
        if task is not None and not task.done():  # a cancelled step: let it unwind before closing
            await asyncio.wait([task])
        await events.aclose()

    try:
        while True:
            future = asyncio.run_coroutine_threadsafe(step(), loop)
            unwatch = stop.on_stop(future.cancel) if callable(getattr(stop, "on_stop", None)) else None
            try:
                more, event = future.result()
            except concurrent.futures.CancelledError:
                raise _interrupted() from None
            finally:
                if unwatch is not None:
                    unwatch()
            if not more:
                return
            yield event
    finally:
        try:
            asyncio.run_coroutine_threadsafe(close(), loop).result()
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()


def _interrupted() -> ModelError:
    return ModelError("interrupted: the request was stopped", code="INTERRUPTED")

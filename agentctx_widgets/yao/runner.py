"""One Yao request, in the order ``Assistant.Stream`` runs it at yao 5a3f9a6a (``agent/assistant/agent.go``).

1. ``stream_start`` (root call only, ``agent.go:123-125``, ``705-725``), once the assistant's connector
   has a model (else ``stream_end`` alone with the error, ``agent.go:113-121``);
2. the history plus the input are the ``fullMessages`` hooks see (``agent.go:143-149``);
3. ``Create(ctx, fullMessages, options)`` (``agent.go:216-243``): its ``HookCreateResponse`` sets
   ``ctx.locale / theme / route``, merges ``metadata`` and picks the ``connector``
   (``hook/create.go:34-80``); ``delegate`` hands the request to another assistant at once, no model
   call, and the root still ends with ``stream_end`` (``agent.go:245-274``);
4. the model call, only for an assistant with prompts or tools (``agent.go:284``): system prompts are
   prepended to Create's ``messages`` (or to ``fullMessages`` when it returned none) and its
   temperature / max_tokens / max_completion_tokens / audio override the assistant's options
   (``build.go:29-60``, ``271-296``, ``469-490``); the ``mcp`` servers' tools registered here are offered
   as ``server_id__tool`` after the others and their calls run on those servers (``build.go:546-595``,
   ``mcp.go:31-415``: ``yao/registries.py``);
5. tool calls (``agent.go:359-494``): all succeed → on; a failure that is not retryable (network,
   timeout, …, ``mcp.go:484-509``) fails the request; a retryable one (bad arguments) asks the model
   again with the results, up to 3 attempts;
6. with a hook script: ``Next(ctx, {messages, completion, tools, error}, options)``
   (``hook/next.go:22-28``); its ``delegate`` calls another assistant, its ``data`` becomes
   ``Response.next``, anything else leaves the standard response whose ``next`` is the whole return
   (``next.go:11-40``, ``69-88``). With **no script at all** and tool results, Yao's automatic tool
   loop feeds them back until the model stops calling tools (``agent.go:550-586``, ``loop.go``), and
   falls back to the ``__yao.loop_fallback`` assistant when it fails;
7. ``stream_end`` with ``status``, ``error`` and the last completion's ``usage`` (``agent.go:616``,
   ``728-759``).

Any error ends the request with ``stream_end`` status ``"error"`` and takes the turn back out of the
Context (the input stays). A ``budget`` its running cost would pass (``hooks.turn_core.Budget``: every
model call of the request, delegations and tool loops included) ends it so too, whatever step it is in
(no tool retry, loop fallback or delegation catches it), closing the model stream as Ctrl-C does. A
hook's ``ctx.llm`` or sub-agent call is charged when it ends; past the budget, the request fails when
that hook returns (``request_state.Shared.count``).

Yao's ``Script.Execute`` turns *any* hook error whose text contains "is not
defined" / "is not a function" into a null return (``hook/script.go:37-42``) — meant for a missing
hook, it also swallows a misspelled name inside one; we do the same and record the diagnostic
``hook_error_hidden``. Yao's engine is V8; QuickJS-NG words a call of a non-function "not a function"
(V8: "o.fn is not a function"), which we read as V8's text, so both engines hide the same errors.

Who, which model, which stack (Yao's ``Stream`` before step 1): a request without authorized info
fails with ``authorized information not found`` before anything runs (``permission.go:9-14``,
``agent.go:27-32``) — ``run_assistant(authorized=None)``; left out, it is :data:`NOTEBOOK_AUTHORIZED`
(the user is signed in by being at the notebook). ``options["connector"]`` picks the model before the
assistant's own (``agent.go:643-650``, ``agent/caller/types.go:68-79``; a ``Create`` hook's still wins).
``nested=True`` is a sub-agent's request (``ctx.agent.Call``) on a child stack: no ``stream_start`` /
``stream_end`` (``agent.go:123``, ``:605``).

What the runner needs of an assistant, a hook set and an output sink is written down as Protocols
(:class:`YaoAssistant`, :class:`YaoHooks`, :class:`YaoSink`), so the loader, the TypeScript hooks and
the output writers of this package plug in as they are.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import re
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from ..context import Context
from ..hooks.checkpoint import ContextCheckpoint
from ..hooks.errors import BudgetError, HookError, error_dict
from ..hooks.hook_context import CTX_FIELDS, HookContext
from ..hooks.openai_shapes import from_view, response_of, to_view
from ..models.openai_shapes import from_view_message
from ..hooks.turn_core import (Budget, StopSignal, as_user_message, call_tool, run_until_stopped,
                               stream_reply)
from ..hooks.turn_result import TurnOutcome
from ..models import ModelError
from ..models.tools import Tool, as_tools
from ..output import Output
from ..context.validate import has_content
from .chunk_writer import ChunkWriter
from .clock import SYSTEM_CLOCK, Clock
from .binding import current_context, script_api
from .wire import (ASSISTANT_FIELDS, EVENT_TEXT, STREAM_END, STREAM_START, assistant_info, stream_end_data,
                   stream_start_data)
from .writers import OpenAIWriter, writer_for
from .memory import MemoryStore
from .registries import (OfferedTool, call_offered, call_parallel, mcp_server_configs,
                         offered_tools, parse_mcp_tool_name, retryable, text_content)
from .request_state import RequestFailed, Shared
from .hook_sets import PythonYaoHooks, YaoHooks, as_yao_hooks, hooks_for
from .request_shapes import (CREATE_FIELDS, MODEL_OPTION_FIELDS, NEXT_FIELDS, as_json, call_arguments,
                             completion_response, decode, fallback_markdown, tool_call_response,
                             tool_result_message, unknown_keys)

__all__ = ["PythonYaoHooks", "RequestFailed", "YaoAssistant", "YaoHooks", "YaoSink", "YaoTurnResult",
           "as_yao_hooks", "run_assistant", "run_assistant_async"]

SESSION_MEMORY = MemoryStore()
"""``ctx.memory``'s store for this process: user, team and chat memory outlive a request, as in Yao."""

NIL_PATTERNS = ("is not defined", "is not a function", "is not a Function")
"""Error texts Yao's ``Script.Execute`` answers with a null return (``hook/script.go:38-40``)."""

_QUICKJS_NOT_A_FUNCTION = re.compile(r"\bTypeError: not a function\b")
"""QuickJS-NG's text for calling a non-function (``ctx.nothing()``, ``o.fn()``), where V8 — Yao's
engine — writes "ctx.nothing is not a function": the same error, so the same null return."""

MAX_TOOL_ATTEMPTS = 3
"""Tool-call attempts before the request fails (``agent.go:366``)."""

DEFAULT_LOOP_TURNS = 5
"""The tool loop's turns unless ``mcp.options.max_turn`` says otherwise (``loop.go:177-196``)."""

LOOP_FALLBACK = "__yao.loop_fallback"
"""The assistant Yao delegates to when the tool loop fails (``loop.go:202-218``)."""

TOOL_RETRY_PROMPT = ("Some tool calls above failed. Read the errors, correct the arguments and call the "
                     "tools again.")
"""The system message after failed tool calls (``agent.go:838-843``). Yao's text is an i18n entry
(``assistant.agent.tool_retry_prompt``) this kit does not ship; this is ours."""

# -- what the runner needs of the other pieces -----------------------------------------------------


class YaoAssistant(Protocol):
    """What the runner reads of a loaded assistant (``yao.assistant.Assistant`` has it). Optional, read
    with defaults: ``prompts`` (Context messages or ``{role, content}``), ``connector``, ``options``
    (temperature, max_tokens, …), ``mcp`` (``{"options": {"tool_loop", "max_turn"}}``), ``hooks`` (a
    :class:`YaoHooks`), ``name``, ``type``, ``avatar``, ``description``."""

    id: str


class YaoSink(Protocol):
    """Where the request's messages go, in order: Yao's event messages (``{"type": "event", "props":
    {"event", "message", "data"}}``), the model's chunks and whatever hooks send."""

    def send(self, message: dict) -> Any: ...


Delegate = Callable[[str, list[dict], dict], Any]
"""``delegate(agent_id, messages, options)`` → the delegated assistant's Response (a dict, a
:class:`YaoTurnResult`, or an awaitable of either)."""


@dataclass(repr=False)
class YaoTurnResult(TurnOutcome):
    """What one request did (``hooks.turn_result.TurnOutcome`` holds ``response``, ``usage``,
    ``error``, ``diagnostics``, ``hooks_called`` — nested delegations included —, ``console`` and ``ok``).
    Here ``response`` is Yao's ``Response``: ``request_id, context_id, trace_id, chat_id, assistant_id,
    create?, next?, completion?, tools?`` (``agent/context/types.go:398-408``); ``usage`` is summed over
    every model call (``stream_end`` carries Yao's: the last call's); ``error`` is ``{"message", "hook"?,
    "cause"?}``."""

    next: Any = None
    """``Response.next``: Next's ``data``, or its whole return when it had no data, else ``None``."""
    events: list[dict] = field(default_factory=list)
    """The lifecycle events (``stream_start``, ``message_start`` / ``message_end``, ``stream_end``) in order."""
    messages: list[dict] = field(default_factory=list)
    """Everything sent to the client, in order (events, chunks, hook messages)."""
    model_messages: list[list[dict]] = field(default_factory=list)
    """The Context messages of each model call, in order."""
    model_options: list[dict | None] = field(default_factory=list)
    """The options of each model call, in order."""
    accept: str = "cui-web"
    """The client kind the request was for."""
    trace: dict | None = None
    """What the hooks recorded with ``ctx.trace``: the root node with its children nested, as Yao's
    trace JSON (``trace.Trace.tree``); None when they recorded nothing (or ran with the seed's ctx)."""

    REPR_FIELDS = ("response", "next", "events", "messages", "usage", "error", "diagnostics", "hooks_called",
                   "console", "model_messages", "model_options", "accept", "trace", "calls")

    @property
    def client(self) -> str:
        """What the client received, as Yao writes it (``writers.writer_for(accept)``): the CUI's SSE
        lines, or a standard client's OpenAI chunks and ``data: [DONE]`` (written when first read)."""
        return self._written()[0]

    @property
    def chunks(self) -> list:
        """A standard client's chunks (chunk maps, error objects, ``"[DONE]"``); empty for a CUI client."""
        return self._written()[1]

    def _written(self) -> tuple[str, list]:
        cached = self.__dict__.get("_client")
        if cached is None or cached[0] != len(self.messages):
            writer = writer_for(self.accept)
            for message in self.messages:
                try:
                    writer.write([message])
                except Exception:  # noqa: BLE001 - the writer's refusal (Yao's ConvertError): it sends nothing
                    continue
            writer.close()
            cached = self.__dict__["_client"] = (len(self.messages), writer.text,
                                                 list(writer.chunks) if isinstance(writer, OpenAIWriter) else [])
        return cached[1], cached[2]

    @property
    def completion(self) -> dict | None:
        return (self.response or {}).get("completion")

    @property
    def tools(self) -> list[dict]:
        return (self.response or {}).get("tools") or []


# -- the request ----------------------------------------------------------------------------------


class _Request:
    def __init__(self, *, context: Context, input_messages: list[dict] | None, assistant: Any, hooks: YaoHooks | None,
                 model: Any, connectors: dict[str, Any], tools: dict[str, Tool], max_tool_rounds: int | None,
                 options: dict, hook_options: dict, ctx: HookContext, shared: Shared, ids: dict[str, str], root: bool,
                 delegate: Delegate | None, assistants: dict[str, Any], append_input: bool,
                 hooks_of: Callable[[Any], Any] | None, connector: str = "") -> None:
        self.context, self.input_messages, self.assistant = context, input_messages or [], assistant
        self.hooks, self.model, self.connectors, self.tools = hooks, model, connectors, tools
        self.max_tool_rounds, self.options, self.ctx, self.shared = max_tool_rounds, options, ctx, shared
        self.hook_options = hook_options  # Yao's call-level Options, as the hooks see them
        self.ids, self.root, self.delegate, self.assistants = ids, root, delegate, assistants
        self.append_input, self.hooks_of = append_input, hooks_of
        self.connector = connector  # the call-level connector (options.Connector; Create's sets it)
        self.last_completion: dict | None = None
        self.mcp_tools: dict[str, OfferedTool] = {}  # the assistant's MCP servers' tools, by Yao's name
        self.call_names: dict[str, str] = {}  # a tool call's id → the name the model called
        self.contents: dict[str, str] = {}  # a tool call's id → its ToolCallResult.Content (a retry shows it)

    # -- the order of Stream -----------------------------------------------------------------------

    async def run(self) -> dict:
        started = self.shared.now()
        if self._calls_model():  # capabilities before stream_start: a missing model sends stream_end alone
            try:
                self._model()
            except RequestFailed as failed:
                if self.root:
                    self._stream_end(started, "error", str(failed), None)
                raise
        if self.root:
            self._stream_start(started)
        for message in self.input_messages if self.append_input else ():
            self.context.append(message)
        checkpoint = ContextCheckpoint(self.context)
        try:
            response = await self._stream()
            if self.shared.has_open_calls():  # a Race's losers, counted (and charged) as they close
                await asyncio.to_thread(self.shared.wait_calls_closed)
            self.shared.check_budget()
        except asyncio.CancelledError:  # Ctrl-C: nothing of the turn stays but the input
            self.shared.stop.set()  # what runs outside this task (ctx.llm, ctx.agent.Call) stops too
            checkpoint.restore(self.context)
            raise
        except BudgetError as over:  # as Ctrl-C, but the request fails
            checkpoint.restore(self.context)
            if self.root:
                self._stream_end(started, "error", over.message, None)
            raise
        except RequestFailed as failed:
            checkpoint.restore(self.context)
            if self.root:
                self._stream_end(started, "error", str(failed), None)
            raise
        if self.root:
            self._stream_end(started, "completed", None, self.last_completion)
        return response

    async def _stream(self) -> dict:
        full = self._full_messages()
        full_view = to_view(full)
        created: dict | None = None
        if self.hooks is not None:
            created = await self._create(full_view)
            if created and created.get("delegate"):
                return await self._delegate(created["delegate"])

        completion, tools, model_messages, last_message, options = None, None, None, None, None
        if self._calls_model():
            model_messages = self._build_messages(full, created)
            await self._offer_mcp_tools(created)
            options = self._completion_options(created)
            completion, last_message = await self._llm(model_messages, options)
            if completion.get("tool_calls"):
                completion, tools, model_messages, last_message = await self._tool_calls(
                    model_messages, options, completion, last_message)

        if self.hooks is not None:
            if tools and "Next" not in self.hooks.names:
                self.shared.report("no_tool_loop", f"assistant {self._id()!r}", count=len(tools))
            payload = {"messages": full_view, "completion": completion, "tools": tools, "error": ""}
            answer = await self._hook("Next", payload, self._options_map())
            nxt = self._decode(answer, "Next", "NextHookResponse", NEXT_FIELDS)
            if nxt is not None and nxt.get("delegate"):
                return await self._delegate(nxt["delegate"])
            if nxt is not None and nxt.get("data") is not None:
                return self._response(created, nxt["data"], completion, tools)
            return self._response(created, nxt, completion, tools)
        if tools and self._tool_loop_enabled():
            first = completion
            try:
                completion, tools = await self._tool_loop(model_messages, options, completion, tools, last_message)
            except RequestFailed:
                self.last_completion = first  # stream_end reports the call before the loop (agent.go:564-581, 616)
                return await self._loop_fallback(full_view, first, tools)
        return self._response(created, None, completion, tools)

    # -- Create -------------------------------------------------------------------------------------

    async def _create(self, full_view: list[dict]) -> dict | None:
        answer = await self._hook("Create", full_view, self._options_map())
        if answer is None:
            return None
        created = self._decode(answer, "Create", "HookCreateResponse", CREATE_FIELDS)
        for key in ("locale", "theme", "route"):  # session level (create.go:47-60)
            if created.get(key):
                setattr(self.ctx, key, created[key])
        if created.get("metadata"):  # merged, the hook's keys win (create.go:62-71)
            self.ctx.metadata = {**(self.ctx.metadata or {}), **created["metadata"]}
        if created.get("connector"):  # call level (create.go:75-80)
            self.connector = created["connector"]
            self.ctx.connector = created["connector"]
        return created

    def _decode(self, answer: Any, hook: str, struct: str, fields: dict[str, str]) -> dict | None:
        """A hook's return as Go decodes it; a mistyped field fails the request (``create.go:29-31``)."""
        if answer is None:
            return None
        try:
            decoded = decode(answer, hook, struct, fields)
        except HookError as error:
            raise RequestFailed(error.detail, hook=hook, cause=error) from error
        self._report_unknown(hook, struct, answer, fields)
        return decoded

    def _report_unknown(self, hook: str, struct: str, answer: Any, fields: dict[str, str]) -> None:
        for key in unknown_keys(answer, fields):
            self.shared.report("unknown_return_key", f"{hook}'s return value", hook=hook, key=key, struct=struct,
                               known=", ".join(fields))

    # -- the model ----------------------------------------------------------------------------------

    def _calls_model(self) -> bool:
        """Yao calls the model only for an assistant with prompts or MCP tools (``agent.go:284``)."""
        assistant = self.assistant
        return bool(getattr(assistant, "prompts", None)) or bool(self.tools) or bool(getattr(assistant, "mcp", None))

    def _prompts(self, created: dict | None = None) -> list[dict]:
        """The prompt messages: ``assistant.request_prompts`` (global prompts, the preset, ``$CTX.``
        variables filled, ``build.go:62-175``) when the assistant has it, else ``assistant.prompts``."""
        build = getattr(self.assistant, "request_prompts", None)
        if callable(build):
            metadata = self.ctx.metadata or {}
            preset = (created or {}).get("prompt_preset") or metadata.get("__prompt_preset")
            disable = (created or {}).get("disable_global_prompts")
            if disable is None and isinstance(metadata.get("__disable_global_prompts"), bool):
                disable = metadata["__disable_global_prompts"]
            prompts = build(self._prompt_variables(), preset=preset if isinstance(preset, str) and preset else None,
                            disable_global=disable)
        else:
            prompts = getattr(self.assistant, "prompts", None) or []
        return [p if isinstance(p.get("type"), int) else from_view_message(p) for p in prompts]

    def _prompt_variables(self) -> dict[str, str] | None:
        """The request's ``$CTX.`` variables (``build.go:177-267``), through ``assistant.prompt_variables``."""
        variables = getattr(self.assistant, "prompt_variables", None)
        if not callable(variables):
            return None
        ctx, authorized = self.ctx, self.ctx.authorized or {}
        request = {"THEME": ctx.theme, "ROUTE": ctx.route, "REFERER": ctx.referer,
                   "CLIENT_TYPE": (ctx.client or {}).get("type", ""), "USER_ID": authorized.get("user_id", ""),
                   "TEAM_ID": authorized.get("team_id", ""), "TENANT_ID": authorized.get("tenant_id", "")}
        return variables(locale=ctx.locale, chat_id=ctx.chat_id, metadata=ctx.metadata,
                         **{key: str(value) for key, value in request.items() if value})

    def _build_messages(self, full: list[dict], created: dict | None) -> list[dict]:
        """System prompts, then Create's messages or the full messages (``build.go:29-60``)."""
        base = full
        if created and created.get("messages"):
            base = from_view(created["messages"], full)  # what Create passed through stays as it was
        return [*self._prompts(created), *base]

    def _completion_options(self, created: dict | None) -> dict | None:
        """The assistant's options < the run's ``options`` < Create's (``build.go:271-296``); with tools."""
        options = {**(getattr(self.assistant, "options", None) or {}), **self.options}
        for key in MODEL_OPTION_FIELDS:
            if created and created.get(key) is not None:
                options[key] = created[key]
        if self.tools:
            options["tools"] = [*(options.get("tools") or []), *(tool.spec for tool in self.tools.values())]
        if self.mcp_tools:  # appended after the others (build.go:586-591)
            options["tools"] = [*(options.get("tools") or []), *(tool.spec for tool in self.mcp_tools.values())]
        return options or None

    def _model(self) -> Any:
        name = self.connector or getattr(self.assistant, "connector", "") or ""
        if name and name in self.connectors:
            return self.connectors[name]
        if name and self.connectors and name not in self.shared.unknown_connectors:
            self.shared.unknown_connectors.add(name)
            self.shared.report("unknown_connector", f"assistant {self._id()!r}", connector=name,
                               chooser="the assistant uses", effect="the default model answers",
                               known=", ".join(self.connectors))
        if self.model is None:
            raise RequestFailed(f"connector not specified: no model for connector {name!r} "
                                "(pass run_assistant(model=...) or connectors={...})")
        return self.model

    async def _llm(self, messages: list[dict], options: dict | None) -> tuple[dict, dict]:
        """One model call, streamed to the client as Yao's handler does; the message is committed."""
        self.shared.check_budget()
        model = self._model()
        self.shared.result.model_messages.append(messages)
        self.shared.result.model_options.append(options)
        writer = ChunkWriter(self.shared)
        try:
            reply = await stream_reply(model, messages, options, stop=self.shared.stop, report=self.shared.report,
                                       on_event=writer.on_event, budget=self.shared.budget)
        except BudgetError as over:  # the stopped call is counted; the request ends (run)
            if over.call is not None:
                self.shared.count(over.call, metered=self.shared.budget)
            raise
        except ModelError as error:
            raise RequestFailed(str(error), cause=error) from error
        except RequestFailed:
            raise
        except Exception as error:  # noqa: BLE001 - a model's failure fails the request, as in Yao
            raise RequestFailed(f"{type(error).__name__}: {error}", cause=error) from error
        writer.close_open()
        message, usage, meta = reply.message, reply.usage, reply.meta
        result = self.shared.result
        self.shared.count({"usage": usage, **meta}, metered=self.shared.budget)
        if has_content(message):
            self.context.append(message)
        else:  # said once, as a diagnostic, instead of the store's warning about a dropped message
            reason = meta.get("stopReason")
            self.shared.report("empty_reply", "response",
                               why=f"the model stopped with {reason!r}" if reason else "the model sent no stop reason")
        completion = completion_response(response_of(message, usage), model=meta.get("model", ""),
                                         created=self.shared.now() // 1000, stop_reason=meta.get("stopReason"))
        self.last_completion = completion
        return completion, message

    # -- tools ---------------------------------------------------------------------------------------

    async def _offer_mcp_tools(self, created: dict | None) -> None:
        """The assistant's MCP servers' tools for the model (``build.go:546-595``, ``mcp.go:75-216``):
        Create's ``mcp_servers`` when it returned some, else package.yao's ``mcp.servers``."""
        try:
            servers = (created or {}).get("mcp_servers") or mcp_server_configs(getattr(self.assistant, "mcp", None))
        except ValueError as bad:  # Yao refuses such an assistant at load (convert.go:105-131)
            raise RequestFailed(f"assistant {self._id()!r}: {bad}") from None
        if not servers:
            return
        tools, problems = await offered_tools(self._mcp_registry(), servers, self.shared.stop)
        self.mcp_tools = {tool.name: tool for tool in tools}
        self.shared.result.diagnostics.extend(problems)

    def _mcp_registry(self) -> Any:
        return (getattr(self.assistant, "services", None) or {}).get("mcp")

    async def _run_tools(self, calls: list[dict]) -> tuple[list[dict], bool, bool]:
        """Run a reply's calls as ``executeToolCalls`` does (``mcp.go:223-237``): one alone, else
        :meth:`_run_several`; returns (ToolCallResponses, any failed, any failure retryable)."""
        ran = [await self._run_tool(calls[0])] if len(calls) == 1 else await self._run_several(calls)
        for call in calls:
            self.call_names[call["id"]] = call["function"]["name"]
        for answer, _ in ran:
            self.context.append(self._tool_message(answer))
        return ([answer for answer, _ in ran], any(answer.get("error") for answer, _ in ran),
                any(can_retry for _, can_retry in ran))

    async def _run_several(self, calls: list[dict]) -> list[tuple[dict, bool]]:
        """Several calls, as ``executeMultipleToolCallsParallel`` (``mcp.go:417-479``): grouped by server
        (in the order of their first call; Go's map order is random), each server's calls at once
        (``registries.call_parallel``), run again one after another when one failed retryably
        (``:464-470``, ``yao_tools_rerun``); a call whose name or arguments do not parse gets no result
        (``yao_tool_call_dropped``). Python tools (ours, not Yao's) run first, each as a lone call."""
        ran = [await self._run_tool(call) for call in calls if call["function"]["name"] in self.tools]
        groups: dict[str, list[dict]] = {}
        for call in calls:
            name = call["function"]["name"]
            parsed = None if name in self.tools else parse_mcp_tool_name(name)
            if parsed is not None:
                groups.setdefault(parsed[0], []).append(call)
            elif name not in self.tools:
                self._dropped(call, "its name is not server__tool (mcp.go:428-433)")
        registry = self._mcp_registry()
        for server_id, group in groups.items():
            server = registry.servers.get(server_id) if registry is not None else None
            if server is None:  # every call fails to select the client, nothing runs (mcp.go:443-455)
                ran += [await self._run_tool(call) for call in group]
                continue
            answers = await call_parallel(server, server_id, group)
            if any(answer.error and answer.retryable for answer in answers):
                self.shared.report("yao_tools_rerun", f"assistant {self._id()!r}", server=server_id,
                                   count=len(group))
                ran += [await self._run_tool(call) for call in group]
                continue
            for answer in answers:
                if answer.dropped:
                    self._dropped(answer.call, answer.dropped)
                    continue
                self.contents[answer.call["id"]] = answer.content
                response = tool_call_response(answer.call, result=answer.result, error=answer.error)
                response.update(server=server_id, tool=answer.tool)
                ran.append((response, answer.retryable))
        return ran

    def _dropped(self, call: dict, why: str) -> None:
        self.shared.report("yao_tool_call_dropped", f"assistant {self._id()!r}", call_id=call["id"],
                           name=call["function"]["name"], why=why)

    async def _run_tool(self, call: dict) -> tuple[dict, bool]:
        """One call: a Python tool by its name, else ``server__tool`` on the assistant's MCP server
        (``mcp.go:240-415``); returns its ToolCallResponse and whether its failure is retryable."""
        name = call["function"]["name"]
        if name not in self.tools and parse_mcp_tool_name(name) is not None:
            server_id, tool, result, error, can_retry, self.contents[call["id"]] = await call_offered(
                self._mcp_registry(), name, call["function"].get("arguments"))
            answer = tool_call_response(call, result=result, error=error)
            answer.update(server=server_id, tool=tool)  # ToolCallResult.Server / Tool (types.go:62-73)
            return answer, can_retry
        ran = await call_tool(self.tools, name, call_arguments(call))
        if ran.ok:
            value = as_json(ran.value, name)
            self.contents[call["id"]] = orjson.dumps(text_content(value)).decode()
            return tool_call_response(call, result=value), False
        if ran.missing:
            text, again = f"failed to select MCP client for tool {name!r}", False
        elif ran.invalid is not None:
            text, again = f"argument validation failed: {ran.invalid}", True
        else:  # a tool's failure is a result the request handles
            text = f"tool call failed: {ran.failure}"
            again = retryable(text)
        self.contents[call["id"]] = text
        return tool_call_response(call, result=text, error=text), again  # its ParsedContent is the text

    def _retry_message(self, answer: dict) -> dict:
        """A tool result in a retry request: its ``ToolCallResult.Content`` as it is (``agent.go:824-829``:
        the content's JSON, or the error text), where the tool loop writes ``Error: …`` (``loop.go:144-151``)."""
        message = self._tool_message(answer)
        content = self.contents.get(answer["toolcall_id"])
        if content is not None:
            message["content"] = [{"type": "text", "text": content}]
        return message

    def _tool_message(self, answer: dict) -> dict:
        """The tool result's Context message, named as the model called the tool (``server__tool``)."""
        return {**tool_result_message(answer), "name": self.call_names.get(answer["toolcall_id"], answer["tool"])}

    async def _tool_calls(self, messages: list[dict], options: dict | None, completion: dict,
                          message: dict) -> tuple[dict, list[dict], list[dict], dict]:
        """Run the calls; on retryable failures ask the model again (``agent.go:359-494``)."""
        current = completion
        for attempt in range(MAX_TOOL_ATTEMPTS):
            tools, failed, retryable = await self._run_tools(current["tool_calls"])
            if not failed:
                return current, tools, messages, message
            if not retryable:
                raise RequestFailed("tool calls failed with non-retryable errors (MCP internal issues)")
            if attempt == MAX_TOOL_ATTEMPTS - 1:
                raise RequestFailed(f"tool calls failed after {MAX_TOOL_ATTEMPTS} attempts")
            messages = [*messages, message, *(self._retry_message(t) for t in tools),
                        {"type": 1, "content": [{"type": "text", "text": TOOL_RETRY_PROMPT}]}]
            current, message = await self._llm(messages, options)
            if not current.get("tool_calls"):
                raise RequestFailed(f"LLM did not return tool calls in retry attempt {attempt + 1}")
        raise AssertionError("unreachable")

    def _tool_loop_enabled(self) -> bool:
        loop = ((getattr(self.assistant, "mcp", None) or {}).get("options") or {}).get("tool_loop")
        return loop is not False  # loop.go:163-175

    def _loop_turns(self) -> int:
        if self.max_tool_rounds is not None:
            return self.max_tool_rounds
        turns = ((getattr(self.assistant, "mcp", None) or {}).get("options") or {}).get("max_turn")
        return int(turns) if isinstance(turns, (int, float)) and not isinstance(turns, bool) and turns > 0 \
            else DEFAULT_LOOP_TURNS

    async def _tool_loop(self, messages: list[dict], options: dict | None, completion: dict, tools: list[dict],
                         message: dict) -> tuple[dict, list[dict]]:
        """Feed tool results back until the model answers without calls (``loop.go:32-122``)."""
        every, last = list(tools), list(tools)
        turns = self._loop_turns()
        for turn in range(turns):
            messages = [*messages, message, *(self._tool_message(t) for t in last)]
            try:
                completion, message = await self._llm(messages, options)  # the same options (loop.go:56)
            except RequestFailed as failed:
                raise RequestFailed(f"tool loop LLM call failed (turn {turn + 1}): {failed}") from failed
            if not completion.get("tool_calls"):
                return completion, every
            last, _, _ = await self._run_tools(completion["tool_calls"])  # loop.go:85 ignores failures
            every.extend(last)
        raise RequestFailed(f"tool loop reached max turns ({turns})")

    async def _loop_fallback(self, full_view: list[dict], completion: dict, tools: list[dict]) -> dict:
        """``__yao.loop_fallback`` gets the conversation and the results as Markdown (``loop.go:204-270``);
        when it cannot run either, the standard response stands (``agent.go:565-581``)."""
        try:
            content = fallback_markdown(full_view, tools)
            return await self._delegate({"agent_id": LOOP_FALLBACK, "messages": [{"role": "user", "content": content}]})
        except RequestFailed:
            return self._response(None, None, completion, tools)

    # -- Next, delegation, the response ---------------------------------------------------------------

    async def _delegate(self, config: dict) -> dict:
        """Run another assistant with the same ctx and sink (``next.go:42-67``)."""
        agent_id = config.get("agent_id", "")
        messages = config.get("messages") or []
        options = config.get("options") or {}
        if self.delegate is not None:
            try:
                answer = self.delegate(agent_id, messages, options)
                if inspect.isawaitable(answer):
                    answer = await answer
            except RequestFailed:
                raise
            except Exception as error:  # noqa: BLE001 - the delegated call's failure is the request's
                raise RequestFailed(f"delegated assistant '{agent_id}' failed: {error}", cause=error) from error
            return answer.response if isinstance(answer, YaoTurnResult) else answer
        target = self.assistants.get(agent_id)
        if target is None:
            raise RequestFailed(f"failed to load delegated assistant '{agent_id}': not found "
                                f"(known: {', '.join(self.assistants) or 'none'}; "
                                "pass assistants={...} or delegate=...)")
        self.ctx.referer = "agent"  # RefererAgent (next.go:55)
        nested = _Request(
            context=self.context, input_messages=[from_view_message(m) for m in messages], assistant=target,
            hooks=hooks_for(target, self.hooks_of), model=self.model, connectors=self.connectors,
            tools=self.tools, max_tool_rounds=self.max_tool_rounds, options={},
            hook_options=dict(options),
            ctx=_ctx_for(target, self.ctx), shared=self.shared, ids=self.ids, root=False, delegate=None,
            assistants=self.assistants, append_input=False, hooks_of=self.hooks_of)
        if isinstance(options.get("metadata"), dict):
            nested.ctx.metadata = {**(nested.ctx.metadata or {}), **options["metadata"]}  # agent.go:60
        if isinstance(options.get("connector"), str):
            nested.connector = options["connector"]  # OptionsFromMap → opts.Connector (agent.go:646-650)
        return await nested.run()  # stream_end keeps the root's own completion (agent.go:264, 616)

    def _response(self, created: dict | None, nxt: Any, completion: dict | None, tools: list[dict] | None) -> dict:
        """Yao's ``Response`` with its ``omitempty`` fields (``next.go:69-88``, ``types.go:398-408``)."""
        response: dict[str, Any] = {"request_id": self.ids["request_id"], "context_id": self.ids["context_id"],
                                    "trace_id": self.ids["trace_id"], "chat_id": self.ctx.chat_id,
                                    "assistant_id": self._id()}
        for key, value in (("create", created), ("next", nxt), ("completion", completion), ("tools", tools)):
            if value is not None and not (key == "tools" and not value):
                response[key] = value
        return response

    # -- hooks ---------------------------------------------------------------------------------------

    async def _hook(self, name: str, *args: Any) -> Any:
        """Call a hook as ``Script.Execute`` does: a missing one, or an error naming something "not
        defined" / "not a function", is a null return (``hook/script.go:34-44``)."""
        if name not in self.hooks.names:
            return None
        self.shared.result.hooks_called.append(name)
        output = getattr(self.ctx, "output", None)
        try:
            try:
                answer = await self.hooks.call(name, self.ctx, *args)
            finally:
                self._collect(output)
        except Exception as error:  # noqa: BLE001 - sorted below, as Yao sorts it
            self.shared.check_budget()  # a hook that throws (or runs out of time) after passing the budget
            text = error.detail if isinstance(error, HookError) else str(error)
            if isinstance(error, NameError):
                text = f"{type(error).__name__}: {text}"
            pattern = next((p for p in NIL_PATTERNS if p in text or p in str(error)), None)
            if pattern is None and _QUICKJS_NOT_A_FUNCTION.search(str(error)):
                pattern = "is not a function"  # V8's words for it (see _QUICKJS_NOT_A_FUNCTION)
            if pattern is None:
                raise RequestFailed(text, hook=name, cause=error) from error
            self.shared.report("hook_error_hidden", f"{name} of assistant {self._id()!r}", hook=name,
                               error=text, pattern=pattern)
            answer = None
        self.shared.check_budget()  # a ctx.llm or sub-agent call of this hook passed the budget
        try:
            return as_json(answer, name)
        except HookError as error:
            raise RequestFailed(error.detail, hook=name, cause=error) from error

    def _collect(self, output: Any) -> None:
        """The hook's console lines and the Output's diagnostics (what ``ctx.Send`` was sent) so far."""
        take = getattr(self.hooks, "take_console", None)
        if callable(take):
            self.shared.result.console.extend(take())
        if output is not None and callable(getattr(output, "flush", None)):
            try:
                output.flush()
            finally:
                self.shared.take_output_diagnostics(output)

    def _options_map(self) -> dict:
        """``Options.ToMap()``: connector, mode, search, skip, disable_global_prompts, metadata when set
        (``agent/context/options.go:4-34``)."""
        options = self.hook_options
        mapped = {key: options[key] for key in ("mode", "search", "skip", "disable_global_prompts")
                  if options.get(key) not in (None, "", False)}
        connector = self.connector or options.get("connector")
        if connector:
            mapped["connector"] = connector
        if options.get("metadata") is not None:
            mapped["metadata"] = options["metadata"]
        return mapped

    # -- helpers -------------------------------------------------------------------------------------

    def _id(self) -> str:
        return str(getattr(self.assistant, "id", "") or "")

    def _full_messages(self) -> list[dict]:
        if not self.append_input:
            return list(self.input_messages)
        return [m for m in self.context.messages() if isinstance(m.get("type"), int)]

    def _stream_start(self, started: int) -> None:
        """``stream_start``: ``EventStreamStartData`` as ``agent.go:712-720`` fills it (``wire.stream_start_data``)."""
        named = {"name": getattr(self.assistant, "display_name", None),
                 "description": getattr(self.assistant, "display_description", None)}
        info = {key: named[key](self.ctx.locale) if callable(named.get(key)) else getattr(self.assistant, key, None)
                for key in ASSISTANT_FIELDS[1:]}  # ast.Info(ctx.Locale): name and description translated
        data = stream_start_data(self.ids["context_id"], self.ids["request_id"], started, self.ctx.chat_id or "",
                                 self.ids["trace_id"], assistant=assistant_info(self._id(), **info),
                                 metadata=self.ctx.metadata)
        self.shared.event(STREAM_START, EVENT_TEXT[STREAM_START], data)

    def _stream_end(self, started: int, status: str, error: str | None, completion: dict | None) -> None:
        """``stream_end``: ``EventStreamEndData`` as ``agent.go:733-749`` fills it (``wire.stream_end_data``),
        with the usage of ``completion`` (the request's last model call) when it has some."""
        now = self.shared.now()
        data = stream_end_data(self.ids["request_id"], self.ids["context_id"], self.ids["trace_id"], now,
                               now - started, status, error=error or "",
                               usage=(completion or {}).get("usage") or None, metadata=self.ctx.metadata)
        self.shared.event(STREAM_END, EVENT_TEXT[STREAM_END], data)


def _ctx_for(assistant: Any, ctx: Any) -> Any:
    """The ctx a delegated assistant sees: the same request (output, fields), its own assistant id."""
    nested = copy.copy(ctx)
    nested.assistant_id = str(getattr(assistant, "id", "") or "")
    nested.connector = str(getattr(assistant, "connector", "") or "")
    return nested


# -- the front door -------------------------------------------------------------------------------

_ID_FIELDS = ("context_id", "request_id", "trace_id")


async def run_assistant_async(
    context: Context,
    user_input: Any,
    *,
    assistant: Any,
    model: Any = None,
    hooks: Any = None,
    output: YaoSink | None = None,
    connectors: dict[str, Any] | None = None,
    tools: Iterable[Any] | None = None,
    max_tool_rounds: int | None = None,
    options: dict | None = None,
    delegate: Delegate | None = None,
    assistants: dict[str, Any] | None = None,
    hooks_of: Callable[[Any], Any] | None = None,
    hook_ctx: Any = None,
    id_generator: Any = None,
    accept: str = "cui-web",
    clock: Clock | None = None,
    trace_listener: Callable[[dict], None] | None = None,
    stop: StopSignal | None = None,
    prices: dict | None = None,
    budget: Any = None,
    nested: bool = False,
    caller: Any = None,
    **ctx_fields: Any,
) -> YaoTurnResult:
    """Run one Yao request (see the module docstring) against ``context`` and return what it did.

    ``assistant`` is a loaded assistant (:class:`YaoAssistant`); ``hooks`` its script (default
    ``assistant.hooks``; a :class:`YaoHooks` or a dict of Python ``Create`` / ``Next`` functions);
    ``model`` answers for the assistant's connector unless ``connectors`` maps that name to a model;
    ``tools`` are Python tools beside the ``mcp`` servers' (``Assistant.mcp``); ``max_tool_rounds`` caps the
    tool loop (default ``mcp.options.max_turn``, else 5); ``options`` are call-level options (Yao's
    ``Options``: ``metadata``, ``mode``, … go to the hooks; model options such as ``temperature`` to
    the model); ``delegate(agent_id, messages, options)`` or ``assistants`` (id → assistant, default
    ``assistant.assistants``) answer a ``delegate``; ``hooks_of(assistant)`` loads an assistant's hook
    script (for ``assistant`` when ``hooks`` is not given, and for the assistants it delegates to);
    ``output`` receives every message in order (``send(message)``); ``hook_ctx`` is the ``ctx`` hooks
    get (default a :class:`HookContext` on the kit's Output; the current output API's ctx plugs in here,
    with its ``id_generator`` — ``message()`` / ``chunk()`` — shared with the model's chunks); ``clock`` (a
    ``yao.clock.Clock``) stamps the events; ``ctx_fields`` set ``ctx`` fields (``chat_id``, ``locale``, …) and
    the ``context_id`` / ``request_id`` / ``trace_id`` of the events; ``stop`` (a
    ``hooks.turn_core.StopSignal``), set from any thread, stops the request, its hooks' ``ctx.llm`` and
    ``ctx.agent.Call`` (``run_assistant`` sets it on Ctrl-C); ``prices``, ``budget``: ``run_turn``'s (its cost counts
    hooks' and sub-agents' calls: ``caller``, ``Shared.count``); ``nested``, ``authorized``: the module docstring.
    """
    _check_arguments(assistant, model, connectors, max_tool_rounds, options, delegate, hooks_of)
    ids = _request_ids(ctx_fields)
    script = as_yao_hooks(hooks) if hooks is not None else hooks_for(assistant, hooks_of)
    connector = _call_connector(assistant, options := dict(options or {}))
    guard = Budget.of(budget, prices, (connectors or {}).get(connector) or model, where="run_assistant")
    shared = Shared(output, clock or SYSTEM_CLOCK, YaoTurnResult(accept=accept, prices=prices), id_generator, stop,
                    budget=guard, context=context, caller=caller)  # where the request's calls are counted
    if not _authorized(ctx_fields, hook_ctx):
        return _refused(shared.result)
    known = dict(assistants if assistants is not None else getattr(assistant, "assistants", None) or {})
    fields = {"chat_id": getattr(context, "id", "") or "", "accept": accept,
              "connector": str(getattr(assistant, "connector", "") or ""), "assistant_id": assistant.id}

    def services_of() -> dict:  # today's ctx's services (a current-API script only)
        return {"connectors": _llm_connectors(connector, model, connectors), "model": None, "store": SESSION_MEMORY,
                "context_id": ids["context_id"], "trace_listener": trace_listener,
                "agents": _agent_runner(known, model, connectors, hooks_of, accept, shared,
                                        ctx_fields.get("authorized")),
                **dict(getattr(assistant, "services", None) or {})}

    ctx, services = _hook_ctx(script, hook_ctx, shared, fields, ctx_fields, services_of, accept)
    if isinstance(options.get("metadata"), dict):  # ctx.MergeMetadata(opts.Metadata) (agent.go:59-60)
        ctx.metadata = {**(ctx.metadata or {}), **options["metadata"]}
    request = _Request(
        context=context, input_messages=[as_user_message(user_input)] if user_input is not None else [],
        assistant=assistant, hooks=script, model=model, connectors=dict(connectors or {}),
        tools={tool.name: tool for tool in as_tools(tools)}, max_tool_rounds=max_tool_rounds,
        options={key: value for key, value in options.items() if key not in _HOOK_OPTIONS}, hook_options=options,
        ctx=ctx, shared=shared, ids=ids, root=not nested, delegate=delegate, assistants=known, append_input=True,
        hooks_of=hooks_of, connector=connector)
    await _run_root(request, script, shared.result)
    _end_request(shared.result, ctx, services)
    return shared.result


def _hook_ctx(script: Any, hook_ctx: Any, shared: Shared, fields: dict, ctx_fields: dict,
              services_of: Callable[[], dict], accept: str) -> tuple[Any, Any]:
    """The ctx the hooks get and the request's services (``None`` but for today's ctx): the caller's
    ``hook_ctx``, today's ctx for a current-API script, else the seed's ``HookContext``."""
    if hook_ctx is not None:
        given = {"assistant_id": fields["assistant_id"], **ctx_fields}
        return _onto_callers_ctx(hook_ctx, {k: v for k, v in fields.items() if k != "assistant_id"}, given), None
    if script is not None and script_api(script).api == "current":
        ctx = _current_ctx(shared, services_of(), {**fields, **ctx_fields})
        return ctx, ctx.services
    ctx = HookContext(**{**fields, **ctx_fields}).with_output(Output(accept=accept))
    ctx.output.add_sink(shared)
    return ctx, None


NOTEBOOK_AUTHORIZED = {"sub": "notebook", "client_id": "agentctx-widgets", "user_id": "notebook",
                       "auth_source": "notebook"}
"""``ctx.authorized`` of a notebook request that names none (Yao's ``AuthorizedInfo`` fields,
``openapi/oauth/types/types.go:620-633``): the user is signed in by being at the notebook. Its
``user_id`` keys ``ctx.memory.user`` (``agent/context/context.go:23-48``)."""
NO_AUTHORIZED = "authorized information not found"
"""Yao's error for a request without authorized info (``agent/assistant/permission.go:9-14``)."""


def _authorized(ctx_fields: dict[str, Any], hook_ctx: Any) -> bool:
    """Whether the request has authorized info: left out, it is :data:`NOTEBOOK_AUTHORIZED` (put into
    ``ctx_fields``, unless the caller's ``hook_ctx`` has its own); ``authorized=None`` has none."""
    if "authorized" in ctx_fields:
        return ctx_fields["authorized"] is not None
    if hook_ctx is None or not getattr(hook_ctx, "authorized", None):
        ctx_fields["authorized"] = copy.deepcopy(NOTEBOOK_AUTHORIZED)
    return True


def _refused(result: YaoTurnResult) -> YaoTurnResult:
    """The request without authorized info: Yao's error, before anything runs (``agent.go:27-32``)."""
    result.error = {"message": NO_AUTHORIZED, "hook": None}
    return result


def _call_connector(assistant: Any, options: dict) -> str:
    """The request's connector: the caller's ``options["connector"]``, else the assistant's
    (``GetConnector``, ``agent/assistant/agent.go:643-650``; ``CallOptions.ToContextOptions``,
    ``agent/caller/types.go:68-79``)."""
    given = options.get("connector")
    if isinstance(given, str) and given:
        return given
    return str(getattr(assistant, "connector", "") or "")


def _llm_connectors(connector: str, model: Any, connectors: dict | None) -> dict:
    """What ``ctx.llm`` can select: the ``connectors`` given, and ``model`` under the request's own
    connector (it answers the request) and under its model id (``OpenAIChatModel("gpt-4o")`` as
    ``"gpt-4o"``); any other name fails as ``connector.Select`` does (``agent/llm/jsapi.go:82-86``)."""
    known = dict(connectors or {})
    if model is None:
        return known
    for name in (connector, getattr(model, "model", None)):
        if isinstance(name, str) and name and name not in known:
            known[name] = model
    return known


_HOOK_OPTIONS = frozenset({"metadata", "mode", "search", "skip", "disable_global_prompts", "connector"})
"""Call-level options that are the hooks' (``Options.ToMap``), not the model's."""


def _check_arguments(assistant: Any, model: Any, connectors: dict | None, max_tool_rounds: Any, options: Any,
                     delegate: Any, hooks_of: Any = None) -> None:
    """``run_assistant``'s arguments checked, each refusal naming the argument and what it got."""
    _check_callable("hooks_of", hooks_of)
    if assistant is None or not isinstance(getattr(assistant, "id", None), str):
        raise TypeError(f"run_assistant(assistant=…): expected a loaded assistant with an id, got {assistant!r}")
    if model is not None and not callable(getattr(model, "stream", None)):
        raise TypeError(f"run_assistant(model=…): expected a model with stream(messages), got {model!r}")
    for name, connector in (connectors or {}).items():
        if not callable(getattr(connector, "stream", None)):
            raise TypeError(f"run_assistant(connectors=…): {name!r} is not a model with stream(messages)")
    if max_tool_rounds is not None and (not isinstance(max_tool_rounds, int) or isinstance(max_tool_rounds, bool)
                                        or max_tool_rounds < 1):
        raise ValueError(f"run_assistant(max_tool_rounds=…): expected an int ≥ 1, got {max_tool_rounds!r}")
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"run_assistant(options=…): expected a dict, got {type(options).__name__}")
    _check_callable("delegate", delegate)


def _check_callable(name: str, value: Any) -> None:
    if value is not None and not callable(value):
        raise TypeError(f"run_assistant({name}=…): expected a callable, got {type(value).__name__}")


def _request_ids(ctx_fields: dict[str, Any]) -> dict[str, str]:
    """The events' ``context_id`` / ``request_id`` / ``trace_id``, taken out of ``ctx_fields`` (a new id
    for each one not given); what is left must be ctx fields."""
    ids = {key: str(ctx_fields.pop(key, None) or uuid.uuid4().hex) for key in _ID_FIELDS}
    unknown = set(ctx_fields) - set(CTX_FIELDS)
    if unknown:
        raise TypeError(f"run_assistant: unknown keyword(s) {sorted(unknown)}; ctx fields are {list(CTX_FIELDS)}")
    return ids


def _current_ctx(shared: Shared, services: dict[str, Any], fields: dict[str, Any]) -> Any:
    """Today's ctx (``binding.py``) for a current-API script: ``Send`` returns ids from the counters the
    model's messages continue, and ``ctx.memory`` / ``llm`` / ``trace`` / ``mcp`` / ``search`` /
    ``workspace`` are the request's ``services``; a ``ctx.llm.Stream`` ends at the request's stop."""
    ctx = current_context(sinks=[shared], services=services, **fields)
    shared.id_generator = ctx.output.ids
    for member in (ctx.services.llm, ctx.services.agent, ctx.services.mcp, ctx.services.search):
        member.stop = shared.stop  # a stream, a sub-agent, a batch's wait end at the request's stop
    ctx.services.llm.count = shared.count
    ctx.services.llm.refused = shared.refused_by_budget
    ctx.services.llm.opened = shared.call_open
    if ctx.services.workspace is not None:  # a Python hook's Copy / ReadFile stops with the request
        ctx.services.workspace.stop = shared.stop
    return ctx


def _onto_callers_ctx(ctx: Any, defaults: dict[str, Any], given: dict[str, Any]) -> Any:
    """The caller's ctx keeps what it has; the defaults fill what it lacks, the given fields are set."""
    for key, value in {**{k: v for k, v in defaults.items() if not getattr(ctx, k, "")}, **given}.items():
        setattr(ctx, key, value)
    return ctx


async def _run_root(request: _Request, script: Any, result: YaoTurnResult) -> None:
    """Run the root request into ``result`` (its response, or why it failed); the request's stop wakes
    the script (a hook in ``time.Sleep``) while it runs."""
    wake = getattr(script, "interrupt", None)
    unwake = request.shared.stop.on_stop(wake) if callable(wake) else (lambda: None)
    try:
        response = await request.run()
    except BudgetError as over:
        result.error = over.to_dict()
    except RequestFailed as failed:
        result.error = {"message": str(failed), "hook": failed.hook}
        if failed.cause is not None:
            result.error["cause"] = error_dict(failed.cause)
    else:
        result.response = response
        result.next = response.get("next") if isinstance(response, dict) else None
    finally:
        unwake()


def _end_request(result: YaoTurnResult, ctx: Any, services: Any) -> None:
    """What the hooks sent is flushed; the trace is kept on ``result`` and the services are released
    (``ctx.memory.context`` goes at the end of the request, ``context.go:93-99``)."""
    if callable(getattr(getattr(ctx, "output", None), "flush", None)):
        ctx.output.flush()
    if services is not None:
        result.trace = services.trace.tree()
        result.diagnostics.extend([*services.trace.diagnostics, *services.llm.diagnostics])
        services.release()


def run_assistant(context: Context, user_input: Any, **kwargs: Any) -> YaoTurnResult:
    """Run one Yao request and wait for it (inside a notebook's running loop too; Ctrl-C stops it,
    waking a hook that sleeps, and leaves the context as it was after the input).
    The arguments are :func:`run_assistant_async`'s."""
    assistant = kwargs.get("assistant")
    hooks = kwargs.get("hooks")
    kwargs["hooks"] = as_yao_hooks(hooks) if hooks is not None else hooks_for(assistant, kwargs.get("hooks_of"))
    stop = kwargs["stop"] = kwargs.get("stop") or StopSignal()  # Ctrl-C sets it: the hook is woken
    return run_until_stopped(lambda: run_assistant_async(context, user_input, **kwargs), stop)


run_assistant.__doc__ = (run_assistant.__doc__ or "") + "\n\n" + (run_assistant_async.__doc__ or "")


def _agent_runner(assistants: dict[str, Any], model: Any, connectors: dict | None, hooks_of: Any,
                  accept: str, caller: Shared, authorized: Any) -> Callable[..., dict]:
    """``ctx.agent.Call``'s runner: another loaded assistant (by id) runs a request of its own on the
    messages the hook passed (the last one its input), in a Context of its own (Yao's sub-agents skip the
    history: ``agent/caller/jsapi.go:112-134``), on a child stack (``nested``: no ``stream_start`` /
    ``stream_end``, ``agent.go:123, 605``), with the caller's authorized info (``Fork``,
    ``agent/context/context.go:155-185``) and the call's ``connector`` (``types.go:68-79``); ``on_message``
    gets what it writes, ``stop`` (the batch's cancel) ends it as the caller's stop does. Returns its Response."""
    def run(agent_id: str, messages: list, options: dict, on_message: Any, *, stop: Any = None) -> dict:
        target = assistants.get(agent_id)
        if target is None:
            raise LookupError(f"{agent_id}: not among the assistants loaded with this one "
                              f"({', '.join(sorted(assistants)) or 'none'})")
        converted = [as_user_message(message) for message in messages]
        history, last = converted[:-1], converted[-1] if converted else None
        child = StopSignal()  # the caller's stop ends this request too, and so does the batch's cancel
        unlink = [caller.stop.on_stop(child.set), *([stop.on_stop(child.set)] if stop is not None else [])]
        try:
            with caller.call_open():  # its model calls are charged to the caller's budget as they end
                result = run_assistant(Context(history), last, assistant=target, model=model, connectors=connectors,
                                       hooks_of=hooks_of,
                                       output=_Callback(on_message) if callable(on_message) else None,
                                       accept=accept, stop=child, nested=True, authorized=authorized, caller=caller,
                                       options={key: value for key, value in options.items()
                                                if key in ("metadata", "connector")})
        except asyncio.CancelledError:  # stopped from the caller's side: a failure for the hook that called
            raise RuntimeError("the calling request was interrupted") from None
        finally:
            for remove in unlink:
                remove()
        if result.error is not None:
            raise RuntimeError(result.error.get("message") or "the assistant failed")
        return result.response or {}

    run.accepts_stop = True  # type: ignore[attr-defined]
    return run


class _Callback:
    """A YaoSink calling a hook's ``onChunk`` with each message a sub-agent writes."""

    def __init__(self, fn: Callable[[dict], Any]) -> None:
        self.fn = fn

    def send(self, message: dict) -> None:
        self.fn(message)


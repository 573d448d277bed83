"""``ctx.agent``: a hook calling another loaded assistant (agent-to-agent, "A2A"), as Yao does.

Upstream (YaoApp/yao 5a3f9a6a): ``agent/context/jsapi_agent.go`` checks the arguments and takes
``onChunk`` out of the options; ``agent/caller/`` builds the call (``jsapi.go:192-320``), always sets
``skip.history`` (``:112-134``), records an ``agent_call`` trace node and returns
``{agent_id, response?, content?, error?}`` (``orchestrator.go:223-296``, ``types.go:28-65``). Here the
sub-agent runs through a callable the runner passes (:data:`AgentRunner`).
"""

from __future__ import annotations

import copy
import functools
import uuid
from collections.abc import Callable
from typing import Any

from .fanout import FanOutStopped, Slot, fan_out
from .trace import Trace
from .values import SKIP, BatchMethods, js_int, json_value, name_and_messages, on_calling_thread

AgentRunner = Callable[[str, list, dict, "Callable[[dict], Any] | None"], dict]
"""``runner(agent_id, messages, options, on_message) -> Response``: runs another assistant.

``options`` are Yao's call options (``connector``, ``mode``, ``metadata``, ``skip``); ``on_message``,
when given, is called with each message the sub-agent writes. An unknown id raises ``LookupError``.
A runner with ``accepts_stop = True`` also takes ``stop=`` (a ``StopSignal`` that ends the sub-request)."""

Send = Callable[[dict], Any]


class Agent(BatchMethods):
    """``ctx.agent``: agent-to-agent calls (``agent/context/jsapi_agent.go``, ``agent/caller/``).

    ``Call(agent_id, messages, options?)`` returns ``{agent_id, response?, content?, error?}``
    (``agent/caller/types.go:28-34``); ``skip.history`` is always set for a sub-agent and ``skip.output``
    kept only when the caller set it (``agent/caller/jsapi.go:112-134``); a trace node ``"Agent: <id>"``
    (type ``agent_call``) records it (``agent/caller/orchestrator.go:261-295``). Failures are the result's
    ``error``: ``"failed to get agent: …"`` for an unknown id, ``"agent call failed: …"`` when it fails
    (``orchestrator.go:235-286``). What the sub-agent writes goes to ``onChunk`` first (a non-zero return
    keeps it from the client, ``agent/context/output.go:18-23``; lifecycle events do not go there) and
    then to the caller's client (``client``) with the sub-agent's ``thread_id`` (``output.go:86-89``),
    unless ``skip.output``. ``All / Any / Race`` run at once and return one slot per request, ``None``
    where a call did not finish (``orchestrator.go:31-206``; :mod:`.fanout`); every call, ``Call`` too,
    runs on a thread of its own while the caller's thread runs ``onChunk`` and the client writes.
    """

    _batch_usage = "requires requests array parameter"
    _batch_on_chunk = True
    _batch_wait_rest = True  # orchestrator.go:119-135: Any and Race return once every goroutine ended

    def __init__(self, runner: AgentRunner | None, trace: Trace | None, client: Send | None = None) -> None:
        self.runner = runner
        self.trace = trace
        self.client = client

    def Call(self, *args: Any) -> dict:  # noqa: N802 - Yao's method names
        agent_id, messages, options, on_chunk = name_and_messages("Call", "agentID", args)
        call = self._slot_call(agent_id, messages, options, on_chunk)
        return fan_out([call], "all", stopped=self._stopped).slots[0]

    def _prepare(self, request: Any, index: int, on_chunk: Callable[..., Any] | None) -> Any:
        """``parseRequestsWithHandlers`` (``agent/caller/jsapi.go:141-189``): a request needs an ``agent``
        string and a ``messages`` array, else it is skipped; the global ``onChunk`` gets the id and index."""
        if not (isinstance(request, dict) and isinstance(request.get("agent"), str)
                and isinstance(request.get("messages"), list)):
            return SKIP
        options = request.get("options") if isinstance(request.get("options"), dict) else {}
        handler = None if on_chunk is None else functools.partial(on_chunk, request["agent"], index)
        return self._slot_call(request["agent"], request["messages"], options, handler)

    def _slot_call(self, agent_id: str, messages: list, options: dict,
                   on_chunk: Callable[[dict], Any] | None) -> Callable[[Slot], dict]:
        call_options = _call_options(options)
        parsed = [json_value(message, "invalid messages") for message in messages if isinstance(message, dict)]
        return lambda slot: self._call(agent_id, parsed, call_options, on_chunk, slot)

    def _call(self, agent_id: str, messages: list, options: dict, on_chunk: Callable[[dict], Any] | None,
              slot: Slot) -> dict:
        result: dict[str, Any] = {"agent_id": agent_id}
        if self.runner is None:
            result["error"] = (f"failed to get agent: {agent_id}: no assistants are loaded here: pass "
                               "assistants={id: assistant} when loading the calling assistant")
            return result
        node = None if self.trace is None else slot.here(
            self.trace.add, {"agent_id": agent_id, "referer": "agent_fork"},
            {"label": f"Agent: {agent_id}", "type": "agent_call", "icon": "smart_toy",
             "description": f"A2A call to '{agent_id}'"})
        try:
            response = self._run(agent_id, messages, options, _Delivery(self, slot, on_chunk, options), slot)
        except Exception as error:  # noqa: BLE001 - a failed sub-agent is the result's error, as in Yao
            if node is not None:    # upstream looks the id up before adding the node; our runner looks
                slot.here(node.Fail, str(error))  # it up when it runs, so the node is there, and fails
            prefix = "failed to get agent" if isinstance(error, LookupError) else "agent call failed"
            result["error"] = f"{prefix}: {_reason(error)}"
            return result
        if node is not None:
            slot.here(node.Complete, {"agent_id": agent_id, "status": "completed"})
        result["response"] = json_value(response, "agent response")
        content = _completion_text(response)
        if content:
            result["content"] = content
        return result

    def _run(self, agent_id: str, messages: list, options: dict, deliver: Callable[[dict], Any], slot: Slot) -> Any:
        assert self.runner is not None
        if getattr(self.runner, "accepts_stop", False):
            return self.runner(agent_id, messages, options, deliver, stop=slot.cancel)  # type: ignore[call-arg]
        return self.runner(agent_id, messages, options, deliver)


class _Delivery:
    """Where one sub-agent's messages go, each on the caller's thread: ``onChunk`` first (not the
    lifecycle events, which Yao sends past it with ``sendRaw``), then the caller's client with the
    call's ``thread_id`` (a stack id, a UUID as ``agent/context/stack.go:61-75`` makes), unless
    ``skip.output`` or ``onChunk`` answered non-zero (``agent/context/output.go:18-23``, ``:86-89``)."""

    def __init__(self, agent: Agent, slot: Slot, on_chunk: Callable[[dict], Any] | None, options: dict) -> None:
        self.on_chunk = on_calling_thread(slot, on_chunk)
        self.client = None if options["skip"].get("output") or agent.client is None else agent.client
        self.here = slot.here
        self.thread_id = str(uuid.uuid4())

    def __call__(self, message: dict) -> None:
        if not isinstance(message, dict):
            return
        if message.get("type") != "event" and self.on_chunk is not None:
            if js_int(self.on_chunk(copy.deepcopy(message))) != 0:
                return
        if self.client is not None:
            try:
                self.here(self.client, _threaded(message, self.thread_id))
            except FanOutStopped:
                pass  # the caller stopped waiting: nobody reads the client any more


def _threaded(message: dict, thread_id: str) -> dict:
    """``message`` with the sub-agent's ``thread_id``: a message's own, an event's ``data`` for
    ``message_start`` / ``message_end`` (``output.go:86-89``, ``:134-139``, ``:199-206``)."""
    out = copy.deepcopy(message)
    if out.get("type") != "event":
        out["thread_id"] = out.get("thread_id") or thread_id
        return out
    props = out.get("props") if isinstance(out.get("props"), dict) else {}
    data = props.get("data")
    if props.get("event") in ("message_start", "message_end") and isinstance(data, dict) and not data.get("thread_id"):
        data["thread_id"] = thread_id
    return out


def _call_options(options: dict) -> dict:
    """Yao's ``CallOptions`` for a sub-agent (``agent/caller/jsapi.go:112-134, 280-320``): ``skip.history``
    always, ``skip.output`` only when the caller set it."""
    result: dict[str, Any] = {}
    for key in ("connector", "mode"):
        if isinstance(options.get(key), str):
            result[key] = options[key]
    if isinstance(options.get("metadata"), dict):
        result["metadata"] = json_value(options["metadata"], "invalid metadata")
    skip: dict[str, bool] = {}
    if isinstance(options.get("skip"), dict):
        for key in ("history", "trace", "output", "keyword", "search", "content_parsing"):
            if isinstance(options["skip"].get(key), bool):
                skip[key] = options["skip"][key]
    skip["history"] = True
    result["skip"] = skip
    return result


def _completion_text(response: Any) -> str:
    """``extractContentFromCompletion`` (``agent/caller/orchestrator.go:298-326``): a string, or the first text part."""
    completion = response.get("completion") if isinstance(response, dict) else None
    content = completion.get("content") if isinstance(completion, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                return part["text"]
    return ""


def _reason(error: BaseException) -> str:
    text = str(error)
    if isinstance(error, KeyError) and error.args:
        text = str(error.args[0])
    return text or type(error).__name__

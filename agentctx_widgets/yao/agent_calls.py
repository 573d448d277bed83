"""``ctx.agent``: a hook calling another loaded assistant (agent-to-agent, "A2A"), as Yao does.

Upstream (YaoApp/yao 5a3f9a6a): ``agent/context/jsapi_agent.go`` checks the arguments and takes
``onChunk`` out of the options; ``agent/caller/`` builds the call (``jsapi.go:192-320``), always sets
``skip.history`` (``:112-134``), records an ``agent_call`` trace node and returns
``{agent_id, response?, content?, error?}`` (``orchestrator.go:223-296``, ``types.go:28-65``). Here the
sub-agent runs through a callable the runner passes (:data:`AgentRunner`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .trace import Trace
from .values import SKIP, BatchMethods, json_value, name_and_messages

AgentRunner = Callable[[str, list, dict, "Callable[[dict], Any] | None"], dict]
"""``runner(agent_id, messages, options, on_message) -> Response``: runs another assistant.

``options`` are Yao's call options (``connector``, ``mode``, ``metadata``, ``skip``); ``on_message``,
when given, is called with each message the sub-agent writes. An unknown id raises ``LookupError``."""


class Agent(BatchMethods):
    """``ctx.agent``: agent-to-agent calls (``agent/context/jsapi_agent.go``, ``agent/caller/``).

    ``Call(agent_id, messages, options?)`` returns ``{agent_id, response?, content?, error?}``
    (``agent/caller/types.go:28-34``); ``skip.history`` is always set for a sub-agent
    (``agent/caller/jsapi.go:112-134``); a trace node ``"Agent: <id>"`` (type ``agent_call``) records it
    (``agent/caller/orchestrator.go:261-295``). Failures are the result's ``error``: ``"failed to get
    agent: …"`` for an unknown id, ``"agent call failed: …"`` when it fails (``orchestrator.go:235-286``).
    The batch methods run the requests one after another (Yao: concurrently).
    """

    def __init__(self, runner: AgentRunner | None, trace: Trace | None) -> None:
        self.runner = runner
        self.trace = trace

    def Call(self, *args: Any) -> dict:  # noqa: N802 - Yao's method names
        return self._call(*name_and_messages("Call", "agentID", args))


    def _call(self, agent_id: str, messages: list, options: dict, on_chunk: Callable[[dict], Any] | None,
              *, batch: bool = False) -> dict:
        result: dict[str, Any] = {"agent_id": agent_id}
        call_options = _call_options(options, batch=batch)
        parsed = [json_value(message, "invalid messages") for message in messages if isinstance(message, dict)]
        if self.runner is None:
            result["error"] = (f"failed to get agent: {agent_id}: no assistants are loaded here: pass "
                               "assistants={id: assistant} when loading the calling assistant")
            return result
        node = None
        if self.trace is not None:
            node = self.trace.add({"agent_id": agent_id, "referer": "agent_fork"},
                                  {"label": f"Agent: {agent_id}", "type": "agent_call", "icon": "smart_toy",
                                   "description": f"A2A call to '{agent_id}'"})
        try:
            response = self.runner(agent_id, parsed, call_options, on_chunk)
        except LookupError as error:  # upstream looks the id up before adding the node; our runner looks
            if node is not None:      # it up when it runs, so the node is there, and fails
                node.Fail(str(error))
            result["error"] = f"failed to get agent: {_reason(error)}"
            return result
        except Exception as error:  # noqa: BLE001 - a failed sub-agent is the result's error, as in Yao
            if node is not None:
                node.Fail(str(error))
            result["error"] = f"agent call failed: {_reason(error)}"
            return result
        if node is not None:
            node.Complete({"agent_id": agent_id, "status": "completed"})
        result["response"] = json_value(response, "agent response")
        content = _completion_text(response)
        if content:
            result["content"] = content
        return result

    _batch_usage = "requires requests array parameter"
    _batch_on_chunk = True

    def _request(self, request: Any, index: int, on_chunk: Callable[..., Any] | None) -> Any:
        if not (isinstance(request, dict) and isinstance(request.get("agent"), str)):
            return SKIP
        messages = request.get("messages") if isinstance(request.get("messages"), list) else []
        options = request.get("options") if isinstance(request.get("options"), dict) else {}
        handler = None if on_chunk is None else functools.partial(on_chunk, request["agent"], index)
        return self._call(request["agent"], messages, options, handler, batch=True)


def _call_options(options: dict, *, batch: bool) -> dict:
    """Yao's ``CallOptions`` for a sub-agent (``agent/caller/jsapi.go:112-134, 280-320``)."""
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
    if batch:
        skip["output"] = True  # batch calls never write to the client (JSAPI.md "Parallel Agent Calls")
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

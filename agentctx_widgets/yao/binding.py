"""Today's Yao ``ctx`` inside a TypeScript/JavaScript hook: the output API and the services, in QuickJS.

Yao 5a3f9a6a builds the hook's ``ctx`` in ``agent/context/jsapi.go:20-171``: fields, the output methods
(``Send`` … ``EndBlock``, ``:48-62``), ``mcp`` / ``search`` / ``agent`` / ``llm`` (``:65-75``), ``trace``
(an object with ``id``, ``:96-102``; ``trace/jsapi/trace.go:33-52``, its ``Release`` and ``__release``
``:36-41``), ``memory`` when there is one (``:147-152``), ``workspace`` only with a workspace
(``:163-170``) and ``Release`` / ``__release`` (``:32-37``); it has
no ``SendGroup`` / ``Flush``. :class:`YaoHookContext` is that ``ctx`` for one request: the JavaScript
bridge (``hooks/js_hooks.py``) asks it for :meth:`~YaoHookContext.host_members` — the table of method
paths the prelude installs on the hook's ``ctx`` — and sends each call back to
:meth:`~YaoHookContext.host_call`, which runs it on the request's :class:`~.output.YaoOutput` or through
:func:`~.service_calls.call_service`. Only the paths in the table are reachable.

``onChunk`` (``ctx.llm.Stream``, ``ctx.agent.Call`` and their ``All / Any / Race``) is called for real
while the call runs: the bridge sends each chunk back into the worker, which runs the hook's function
(its own ``ctx`` calls served meanwhile) and returns its number, so a non-zero return stops the stream
and a throw stops it too, unrethrown (``jsapi_agent.go:170-198``).

Time: a call of ``llm`` / ``agent`` / ``mcp`` / ``search`` waits on the outside world, so that wait is not
the hook's ``time_limit`` (as ``time.Sleep`` is not; the ``wall_limit`` still bounds it); the JavaScript
its ``onChunk`` runs is. Every other member's call counts, as any host call does.

Which API a script gets is :mod:`.api_generation`'s rule (:func:`script_api`): a seed script keeps the
seed's ``HookContext`` (``Send`` / ``SendGroup`` / ``Flush``) unchanged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..hooks.hook_context import HookContext
from .api_generation import Api, ApiChoice, MixedApiError, scan
from .output import SinkLike, YaoCallError, YaoOutput
from .service_calls import METHODS, call_service, mounted
from .services import YaoServices
from .values import YaoServiceError
from .wire import parse_message

OUTPUT_METHODS = ("Send", "SendStream", "Replace", "Append", "Merge", "Set", "End", "MessageID", "BlockID",
                  "ThreadID", "EndBlock")
"""The output methods of today's ``ctx`` (``jsapi.go:48-62``), in Yao's order."""
SEED_METHODS = ("SendGroup", "Flush", "send", "send_group", "flush")
"""The seed ``ctx``'s methods that today's does not have (a call is Yao's "not a function")."""
CALLBACK_AT = {"llm.Stream": 2, "agent.Call": 2, "llm.All": 1, "llm.Any": 1, "llm.Race": 1,
               "agent.All": 1, "agent.Any": 1, "agent.Race": 1}
"""Which argument carries ``{onChunk}`` (``jsapi_llm.go:114-137``, ``jsapi_agent.go:192-215``)."""
RESULT_KINDS = {"trace.Add": "node", "trace.Parallel": "nodes", "trace.Info": "owner", "trace.Debug": "owner",
                "trace.Warn": "owner", "trace.Error": "owner"}
"""How the prelude turns a result into JavaScript: a trace node object, a list of them, or the object the
method was called on (Yao's trace log methods return ``this``, ``trace/jsapi/trace.go``)."""
OUTSIDE = ("llm", "agent", "mcp", "search")
"""Members whose calls wait on the outside world (a model, another assistant, a tool, a search): that
wait is not the hook's time, as ``time.Sleep`` is not (the wall-clock limit still bounds it)."""
RELEASE = ("Release", "__release")
"""``ctx.Release`` and ``ctx.__release``: Yao sets one release function under both names (``jsapi.go:32-37``)."""
VOID_RESULTS = ("EndBlock", "Release", "__release", "trace.Release", "trace.__release", "memory.Set", "memory.Del",
                "memory.Clear")
"""Methods whose result is ``undefined`` in Yao (``jsapi.go:744``, ``:214``, ``:835``, ``:851``, ``:896``),
where Python's ``None`` would otherwise reach the hook as ``null`` (what ``memory.Get`` of a missing key
returns, ``:798-800``)."""
NODE_RESULTS = {"Add": "node", "Parallel": "nodes"}
"""A node's ``Add`` / ``Parallel`` make nodes; its other methods return the node (``trace/jsapi/node.go``)."""


class BindingCallError(Exception):
    """A ``ctx`` call failed: ``str(error)`` is the JavaScript ``Error``'s message (Yao's text when Yao has one)."""


@dataclass
class YaoHookContext(HookContext):
    """The ``ctx`` of one request under today's Yao API (see the module docstring).

    ``output`` is the request's :class:`YaoOutput` (the runner flushes it at the end), ``services`` its
    :class:`YaoServices`. Use :func:`current_context` to build one with shared ids.
    """

    services: Any = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict:
        """The fields today's ``ctx`` has (``jsapi.go:39-46``, ``:104-145``: ``metadata`` and
        ``authorized`` are ``{}`` when there are none)."""
        return {"chat_id": self.chat_id, "assistant_id": self.assistant_id, "locale": self.locale,
                "theme": self.theme, "referer": self.referer, "accept": self.accept, "route": self.route,
                "client": dict(self.client), "metadata": dict(self.metadata or {}),
                "authorized": dict(self.authorized or {})}

    def host_members(self) -> dict:
        """The table the prelude builds ``ctx``'s members from: method paths with how their results
        come back, the argument holding ``onChunk``, plain values, and the seed methods to remove."""
        methods: dict[str, str] = {name: "void" if name in VOID_RESULTS else "value" for name in OUTPUT_METHODS}
        shape = mounted(self.services) if self.services is not None else {}
        for member, listed in shape.items():
            if member == "trace_id":
                continue
            if isinstance(listed, dict):  # memory: {space: methods}
                for space, names in listed.items():
                    methods.update({f"{member}.{space}.{name}": "void" if f"{member}.{name}" in VOID_RESULTS
                                    else "value" for name in names})
            else:
                methods.update({f"{member}.{name}": RESULT_KINDS.get(f"{member}.{name}", "void" if f"{member}.{name}"
                                                                     in VOID_RESULTS else "value") for name in listed})
        methods["Release"] = methods["__release"] = "void"  # both the same function (jsapi.go:32-37)
        values = {"trace.id": shape["trace_id"]} if "trace_id" in shape else {}
        outside = [path for path in methods if path.split(".", 1)[0] in OUTSIDE]
        callbacks = {path: at for path, at in CALLBACK_AT.items() if path in methods}
        return {"methods": methods, "outside": outside, "callbacks": callbacks,
                "node": {name: NODE_RESULTS.get(name, "owner") for name in METHODS["trace.node"]}
                if "trace.Add" in methods else {}, "values": values, "drop": list(SEED_METHODS)}

    def host_call(self, path: str, args: list, on_chunk: Callable[..., int] | None = None) -> Any:
        """Run ``ctx.<path>(*args)`` for the bridge and return its JSON result. ``on_chunk`` stands for the
        hook's ``onChunk`` (the bridge calls the JavaScript function with each chunk while this runs).
        Raises :class:`BindingCallError` with the text the hook's ``Error`` gets."""
        if not isinstance(path, str) or not self._reachable(path):
            raise BindingCallError(f"ctx.{path} is not a method of this request's ctx")
        if not isinstance(args, list):
            raise BindingCallError(f"ctx.{path}: the arguments must be a list")
        at = CALLBACK_AT.get(path)
        if on_chunk is not None and at is not None and len(args) > at and isinstance(args[at], dict):
            args = [*args]
            args[at] = {**args[at], "onChunk": on_chunk}
        try:
            if path in OUTPUT_METHODS:
                return getattr(self._output(path), path)(*args)
            if path in RELEASE:
                return self.services.Release(*args) if self.services is not None else None
            return call_service(self.services, path, args)
        except (YaoCallError, YaoServiceError) as error:
            raise BindingCallError(str(error)) from error
        except BindingCallError:
            raise
        except Exception as error:  # ours or a registered callable's: named, as the JS Error's text
            raise BindingCallError(f"ctx.{path}: {type(error).__name__}: {error}") from error

    def _reachable(self, path: str) -> bool:
        """Whether ``path`` is in :meth:`host_members`'s table (or a trace node's method), without building it."""
        if path in OUTPUT_METHODS or path in RELEASE:
            return True
        services = self.services
        if services is None:
            return False
        parts = path.split(".")
        if parts[0] == "memory":
            return len(parts) == 3 and parts[1] in services.memory.present() and parts[2] in METHODS["memory"]
        if parts[:2] == ["trace", "node"]:
            return len(parts) == 3 and parts[2] in METHODS["trace.node"]
        return len(parts) == 2 and parts[0] in services.members() and parts[1] in METHODS.get(parts[0], ())

    def _output(self, path: str) -> YaoOutput:
        if not isinstance(self.output, YaoOutput):
            raise BindingCallError(f"ctx.{path}: this ctx has no Yao output (build it with current_context)")
        return self.output


def current_context(*, sinks: Iterable[SinkLike] | None = None, services: YaoServices | dict | None = None,
                    output: YaoOutput | None = None, **fields: Any) -> YaoHookContext:
    """A :class:`YaoHookContext` whose output writes to ``sinks`` and whose services share its ids
    (pass ``ctx.output.ids`` to ``run_assistant(id_generator=…)`` so the model's messages continue the
    same ``M`` / ``C`` counters). ``services`` is a :class:`YaoServices`, or a dict of its keyword
    arguments (``connectors``, ``agents``, ``mcp``, ``workspace``, ``store``…) for one made for
    ``fields`` (``chat_id``, ``authorized``…) with the shared ids, ``ctx.llm``'s chunks going to the
    client through the output, as Yao's do (``agent/llm/jsapi.go:413-419``)."""
    out = output if output is not None else YaoOutput(sinks)
    ctx = YaoHookContext(**fields)
    if not isinstance(services, YaoServices):
        if services is not None and not isinstance(services, dict):
            raise TypeError(f"current_context(services=…): expected YaoServices or a dict of its options, got "
                            f"{type(services).__name__}")
        options = {"context_id": "ctx-1", "next_id": out.ids.next_id, "send": _client_send(out),
                   "client": _client_forward(out), **(services or {})}
        services = YaoServices.for_request(ctx, **options)
    return dataclasses.replace(ctx, output=out, services=services)


def _client_send(out: YaoOutput) -> Callable[[dict], None]:
    def send(message: dict) -> None:
        out.send(parse_message(message))
        out.flush()

    return send


def _client_forward(out: YaoOutput) -> Callable[[dict], None]:
    def forward(message: dict) -> None:
        out.forward(message)
        out.flush()

    return forward


def script_sources(hooks: Any) -> dict[str, str]:
    """The source text of a hook set's modules by file (a TypeScript module set's ``src/`` files, a
    ``JsHooks``'s one source); ``{}`` for hooks with no script (Python hooks)."""
    layout = getattr(hooks, "_layout", None)
    if layout is not None:
        return {layout.name(module.path): module.source for module in layout.modules}
    source = getattr(hooks, "source", None)
    return {"<source>": source} if isinstance(source, str) else {}


def script_api(hooks: Any, *, explicit: Api | None = None) -> ApiChoice:
    """The output API ``hooks`` run with (:mod:`.api_generation`'s rule over every module): the current
    one for a TypeScript module set by default, the seed's for ``hooks_from_js``. Raises
    :class:`MixedApiError` naming a file and line of each when the modules use both."""
    if explicit is not None:
        if explicit not in ("seed", "current"):
            raise ValueError(f"api must be 'seed' or 'current', got {explicit!r}")
        return ApiChoice(explicit, (), "explicit")
    default: Api = "current" if getattr(hooks, "_layout", None) is not None else "seed"
    found: dict[str, list[tuple[int, str]]] = {"current": [], "seed": []}
    where: dict[str, list[str]] = {"current": [], "seed": []}
    for file, source in script_sources(hooks).items():
        for api, uses in scan(source).items():
            found[api].extend(uses)
            where[api].extend(f"{file}:{line}" for line, _ in uses)
    if found["current"] and found["seed"]:
        raise MixedApiError(f"the script uses both output APIs: {found['current'][0][1]} ({where['current'][0]}) "
                            f"is today's Yao, {found['seed'][0][1]} ({where['seed'][0]}) the seed's; no Yao runs "
                            "both — pass api='current' or api='seed' to choose")
    for api in ("current", "seed"):
        if found[api]:
            return ApiChoice(api, tuple(found[api]), "script")  # type: ignore[arg-type]
    return ApiChoice(default, (), "default")


def hook_context_for(hooks: Any, *, api: Api | None = None, sinks: Iterable[SinkLike] | None = None,
                     services: YaoServices | dict | None = None, **fields: Any) -> YaoHookContext | None:
    """The ``ctx`` to run ``hooks`` with (``run_assistant(hook_ctx=…, id_generator=ctx.output.ids)``):
    a :class:`YaoHookContext` when :func:`script_api` says the script is today's, ``None`` for a seed
    script (the runner's default ``HookContext``, the seed's ``Send`` / ``SendGroup`` / ``Flush``)."""
    if script_api(hooks, explicit=api).api == "seed":
        return None
    return current_context(sinks=sinks, services=services, **fields)


__all__ = ["BindingCallError", "YaoHookContext", "current_context", "hook_context_for", "script_api",
           "script_sources"]

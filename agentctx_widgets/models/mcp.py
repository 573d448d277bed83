"""Real MCP servers through the official ``mcp`` SDK (``pip install "agentctx-widgets[mcp]"``).

``McpServer.stdio(command, args)`` runs a server as a child process; ``McpServer.http(url)`` talks to a
streamable-HTTP one. Either starts on first use and is stopped by :meth:`McpServer.close`, by ``with``,
or at interpreter exit. The SDK is async (anyio): every server's session lives on one kept background
event loop (a daemon thread), and each call is bridged to it — from plain code (``call_tool``, waiting
interruptibly: Ctrl-C cancels the request on the server), or from a turn's own loop (``acall_tool``:
cancelling the awaiting task cancels the request).

Every call is bounded: ``timeout`` seconds (default 30, per server, or per call), and a result over
``max_result_bytes`` (default 1 MB of JSON) is refused. A server that crashes, hangs, or cannot start
fails the call with :class:`McpError` naming the server (and the tail of a stdio server's stderr); the
next call starts it again. A stdio child is stopped as the SDK stops one (``mcp/client/stdio.py``
``_stop_server_process``: stdin closed, then SIGTERM and SIGKILL to its own process group).

Results are the MCP wire JSON (camelCase, as ``tools/list`` etc. send them) without the protocol's
envelope fields (``_meta``, ``resultType``, ``ttlMs``, ``cacheScope``). :meth:`McpServer.tools` are
:class:`~agentctx_widgets.models.tools.Tool`\\ s, so ``run_turn(tools=[server, python_function])`` offers
the server's tools next to Python ones.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import os
import tempfile
import threading
import weakref
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from typing import Any

from .tools import Tool, ToolDefinitionError, _NAME, _untitled

__all__ = ["McpError", "McpServer", "McpTool", "McpToolError", "tool_text"]

DEFAULT_TIMEOUT = 30.0
START_TIMEOUT = 60.0
"""How long a server may take to start and answer ``initialize`` (apart from ``timeout``, which bounds each
call: a Python server importing its SDK takes a second or more on a busy machine, however short its calls)."""
DEFAULT_MAX_RESULT_BYTES = 1_000_000
_ENVELOPE = frozenset({"_meta", "resultType", "ttlMs", "cacheScope"})
_STDERR_TAIL = 2000
_CLOSE_WAIT = 10.0  # the SDK's own stop is bounded (2 s + 2 s + 2 s); this only guards against a stuck loop


class McpError(RuntimeError):
    """An MCP call that did not give a result: ``server`` names the server, the message says why."""

    def __init__(self, server: str, message: str) -> None:
        super().__init__(f"MCP server {server!r}: {message}")
        self.server = server


class McpToolError(RuntimeError):
    """A tool's own failure (an ``isError`` result); the message is the tool's text."""


# -- the background loop ---------------------------------------------------------------------------

_LOOP: dict[str, Any] = {}
_LOOP_LOCK = threading.Lock()


def _loop() -> asyncio.AbstractEventLoop:
    """The kept event loop every server's session runs on (started on first use, a daemon thread)."""
    with _LOOP_LOCK:
        if "loop" not in _LOOP:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="agentctx-mcp", daemon=True)
            thread.start()
            _LOOP.update(loop=loop, thread=thread)
        return _LOOP["loop"]


_STOP = threading.local()


@contextlib.contextmanager
def stopping(check: Callable[[], Any]) -> Iterator[None]:
    """Calls made on this thread inside the block also end when ``check()`` says why (a Yao request's stop,
    seen from a JavaScript hook's bridge thread, where Ctrl-C does not land): the call is cancelled and
    raises :class:`McpError` saying it was stopped. Inside another such block, either check ends them."""
    previous = getattr(_STOP, "check", None)
    _STOP.check = check if previous is None else (lambda: check() or previous())
    try:
        yield
    finally:
        _STOP.check = previous


def _wait(future: concurrent.futures.Future, name: str) -> Any:
    """``future``'s result, waiting in slices so Ctrl-C lands (and a :func:`stopping` check is read); an
    interrupt or a stop cancels the call it waits on."""
    check = getattr(_STOP, "check", None)
    try:
        while True:
            try:
                return future.result(timeout=0.1)
            except concurrent.futures.TimeoutError:
                why = check() if check is not None else None
                if why:
                    raise McpError(name, f"the call was stopped ({why})") from None
    except BaseException:
        future.cancel()
        raise


# -- one server --------------------------------------------------------------------------------------


class McpServer:
    """One MCP server the kit starts and stops; see the module docstring."""

    def __init__(self, kind: str, target: dict, *, name: str, timeout: float, max_result_bytes: int,
                 start_timeout: float = START_TIMEOUT) -> None:
        for label, seconds in (("timeout", timeout), ("start_timeout", start_timeout)):
            if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not seconds > 0:
                raise ValueError(f"McpServer({name!r}): {label} must be a positive number of seconds, got {seconds!r}")
        if not isinstance(max_result_bytes, int) or isinstance(max_result_bytes, bool) or max_result_bytes < 1:
            raise ValueError(f"McpServer({name!r}): max_result_bytes must be a positive integer, got {max_result_bytes!r}")
        self.kind, self.target, self.name = kind, target, name
        self.timeout, self.max_result_bytes = float(timeout), max_result_bytes
        self.start_timeout = float(start_timeout)
        self._state: dict[str, Any] = {}  # loop-side: client, task, closing, stderr
        self._start_lock: asyncio.Lock | None = None
        self._tools: list[Tool] | None = None
        self._schemas: dict[Any, Any] = {}  # each listed tool's inputSchema, by name
        _OPEN.add(self)

    @classmethod
    def stdio(cls, command: str, args: Iterable[str] = (), env: Mapping[str, str] | None = None,
              cwd: str | os.PathLike | None = None, name: str | None = None, *, timeout: float = DEFAULT_TIMEOUT,
              max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES, start_timeout: float = START_TIMEOUT) -> McpServer:
        """A server run as ``command args…`` (its own process group), spoken to over stdin/stdout. ``env`` is
        added to the SDK's safe default environment (``HOME``, ``PATH``, …), not to all of ``os.environ``."""
        if not isinstance(command, str) or not command:
            raise ValueError(f"McpServer.stdio(command): expected a non-empty string, got {command!r}")
        arguments = [args] if isinstance(args, str) else list(args)
        if not all(isinstance(item, str) for item in arguments):
            raise ValueError(f"McpServer.stdio(args): expected strings, got {arguments!r}")
        if env is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in dict(env).items()):
            raise ValueError("McpServer.stdio(env): expected a mapping of strings to strings")
        target = {"command": command, "args": arguments, "env": dict(env) if env is not None else None,
                  "cwd": os.fspath(cwd) if cwd is not None else None}
        return cls("stdio", target, name=name or os.path.basename(command), timeout=timeout,
                   max_result_bytes=max_result_bytes, start_timeout=start_timeout)

    @classmethod
    def http(cls, url: str, headers: Mapping[str, str] | None = None, name: str | None = None, *,
             timeout: float = DEFAULT_TIMEOUT, max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
             start_timeout: float = START_TIMEOUT) -> McpServer:
        """A streamable-HTTP server at ``url`` (``headers`` sent with every request, e.g. Authorization)."""
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"McpServer.http(url): expected an http:// or https:// URL, got {url!r}")
        if headers is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in dict(headers).items()):
            raise ValueError("McpServer.http(headers): expected a mapping of strings to strings")
        return cls("http", {"url": url, "headers": dict(headers or {})}, name=name or url, timeout=timeout,
                   max_result_bytes=max_result_bytes, start_timeout=start_timeout)

    def __repr__(self) -> str:
        where = " ".join([self.target["command"], *self.target["args"]]) if self.kind == "stdio" else self.target["url"]
        return f"McpServer.{self.kind}({self.name!r}: {where})"

    def __enter__(self) -> McpServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- the calls (plain code: wait interruptibly; a turn's loop: await) ----------------------------

    def list_tools(self) -> dict:
        """``{"tools": [{name, description, inputSchema}, …]}`` (every page); the schemas are kept, so a call
        is checked against its tool's before it is sent (:meth:`arguments_problem`)."""
        listed = self._sync(self._list_all, "tools/list")
        self._schemas = {tool.get("name"): tool.get("inputSchema") for tool in listed.get("tools") or []}
        return listed

    def arguments_problem(self, tool: str, arguments: Mapping[str, Any]) -> str | None:
        """Why ``arguments`` do not fit ``tool``'s listed ``inputSchema`` (:func:`arguments_problem`), or None
        (also when the tools were not listed yet: the server checks its own)."""
        return arguments_problem(self._schemas.get(tool), arguments)

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *, timeout: float | None = None) -> dict:
        """The ``CallToolResult`` JSON: ``{"content": […], "isError": bool, "structuredContent"?}``."""
        return _wait(self._submit(self._call_tool(name, arguments, timeout)), self.name)

    async def acall_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                         timeout: float | None = None) -> dict:
        """:meth:`call_tool` awaited from another event loop; cancelling it cancels the request."""
        return await asyncio.wrap_future(self._submit(self._call_tool(name, arguments, timeout)))

    def list_resources(self, cursor: str | None = None) -> dict:
        return self._sync(lambda client: client.list_resources(cursor=cursor or None), "resources/list")

    def read_resource(self, uri: str) -> dict:
        return self._sync(lambda client: client.read_resource(str(uri)), f"resources/read {uri!r}")

    def list_prompts(self, cursor: str | None = None) -> dict:
        return self._sync(lambda client: client.list_prompts(cursor=cursor or None), "prompts/list")

    def get_prompt(self, name: str, arguments: Mapping[str, Any] | None = None) -> dict:
        strings = {key: value if isinstance(value, str) else _json_text(value) for key, value in (arguments or {}).items()}
        return self._sync(lambda client: client.get_prompt(str(name), strings or None), f"prompts/get {name!r}")

    def tools(self) -> list[Tool]:
        """The server's tools as :class:`McpTool`\\ s (listed once, on first use)."""
        if self._tools is None:
            self._tools = [McpTool(self, spec) for spec in self.list_tools()["tools"]]
        return list(self._tools)

    __agentctx_tools__ = tools  # what models.tools.as_tools expands a tool source with

    def close(self) -> None:
        """Stop the server (a stdio child: stdin closed, then its process group killed); idempotent."""
        loop = _LOOP.get("loop")
        if loop is None or not self._state:
            return
        future = asyncio.run_coroutine_threadsafe(self._stop(), loop)
        try:
            future.result(timeout=_CLOSE_WAIT)
        except concurrent.futures.TimeoutError:
            future.cancel()

    # -- loop side -------------------------------------------------------------------------------------

    def _submit(self, coroutine: Awaitable[Any]) -> concurrent.futures.Future:
        return asyncio.run_coroutine_threadsafe(coroutine, _loop())

    def _sync(self, request: Callable[[Any], Awaitable[Any]], what: str) -> dict:
        return _wait(self._submit(self._request(request, what, None)), self.name)

    async def _list_all(self, client: Any) -> Any:
        page = await client.list_tools()
        tools, cursor = list(page.tools), page.next_cursor
        for _ in range(100):  # a paginator that never ends stops here
            if not cursor:
                break
            page = await client.list_tools(cursor=cursor)
            tools, cursor = tools + list(page.tools), page.next_cursor
        return {"tools": [tool.model_dump(by_alias=True, exclude_none=True, mode="json") for tool in tools]}

    async def _call_tool(self, name: str, arguments: Mapping[str, Any] | None, timeout: float | None) -> dict:
        if arguments is not None and not isinstance(arguments, Mapping):
            raise McpError(self.name, f"tools/call {name!r}: arguments must be an object, got {type(arguments).__name__}")
        return await self._request(lambda client: client.call_tool(str(name), dict(arguments or {})),
                                   f"tools/call {name!r}", timeout)

    async def _request(self, request: Callable[[Any], Awaitable[Any]], what: str, timeout: float | None) -> dict:
        import anyio
        from mcp import MCPError

        seconds = self.timeout if timeout is None else float(timeout)
        client = await self._started()
        try:
            result = await asyncio.wait_for(request(client), seconds)
        except (asyncio.TimeoutError, TimeoutError):
            raise McpError(self.name, f"{what} did not answer within {seconds:g} s (timeout=)") from None
        except MCPError as error:
            if _connection_lost(error):
                raise await self._lost(what, error) from None
            raise McpError(self.name, f"{what} failed: {error} (code {error.code})") from None
        except (OSError, EOFError, anyio.ClosedResourceError, anyio.BrokenResourceError) as error:
            raise await self._lost(what, error) from None
        return self._bounded(result, what)

    def _bounded(self, result: Any, what: str) -> dict:
        if isinstance(result, dict):
            data, size = result, len(_json_text(result))
        else:
            text = result.model_dump_json(by_alias=True, exclude_none=True)
            data, size = None, len(text.encode())
        if size > self.max_result_bytes:
            raise McpError(self.name, f"{what}: the result is {size:,} bytes, over the cap of "
                                      f"{self.max_result_bytes:,} (max_result_bytes=); it was refused")
        if data is None:
            data = result.model_dump(by_alias=True, exclude_none=True, mode="json")
        return {key: value for key, value in data.items() if key not in _ENVELOPE}

    async def _lost(self, what: str, error: BaseException) -> McpError:
        """The connection is gone (the server crashed or exited): a clear error; the next call restarts it."""
        tail = self._stderr_tail()
        await self._stop()
        detail = f"; its stderr ends: {tail}" if tail else ""
        return McpError(self.name, f"{what} failed: the server stopped ({error}){detail}")

    async def _started(self) -> Any:
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if self._state.get("client") is None:
                await self._start()
            return self._state["client"]

    async def _start(self) -> None:
        ready: asyncio.Future = asyncio.get_running_loop().create_future()
        closing = asyncio.Event()
        self._state = {"closing": closing, "stderr": None}
        self._state["task"] = asyncio.ensure_future(self._session(ready, closing))
        try:
            self._state["client"] = await asyncio.wait_for(asyncio.shield(ready), self.start_timeout)
        except (asyncio.TimeoutError, TimeoutError):
            await self._stop()
            raise McpError(self.name, f"did not start within {self.start_timeout:g} s{self._tail_note()}") from None
        except McpError:
            raise
        except Exception as error:  # noqa: BLE001 - a start that failed, named
            note = self._tail_note()
            await self._stop()
            cause = _first_leaf(error)
            raise McpError(self.name, f"could not start: {type(cause).__name__}: {cause}{note}") from None

    async def _session(self, ready: asyncio.Future, closing: asyncio.Event) -> None:
        """Owns the SDK client for the server's life: entered and exited in this one task (anyio's rule)."""
        from mcp import Client

        try:
            async with Client(self._transport(), mode="auto") as client:
                ready.set_result(client)
                await closing.wait()
        except BaseException as error:  # noqa: BLE001 - reported to whoever waits for the start
            if not ready.done():
                ready.set_exception(error if isinstance(error, Exception) else RuntimeError(repr(error)))
            if not isinstance(error, Exception):
                raise

    def _transport(self) -> Any:
        if self.kind == "stdio":
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client

            self._state["stderr"] = stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
            return stdio_client(StdioServerParameters(**self.target), errlog=stderr)
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        http = httpx2.AsyncClient(headers=self.target["headers"], timeout=httpx2.Timeout(30.0, read=300.0))
        return streamable_http_client(self.target["url"], http_client=http, max_sse_event_size=self.max_result_bytes)

    async def _stop(self) -> None:
        state, self._state = self._state, {}
        if not state:
            return
        state["closing"].set()
        task = state.get("task")
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), _CLOSE_WAIT)
            except (asyncio.TimeoutError, TimeoutError):
                task.cancel()
            except Exception:  # noqa: BLE001 - a session that failed while stopping is stopped
                pass
        if state.get("stderr") is not None:
            state["stderr"].close()

    def _stderr_tail(self) -> str:
        stream = self._state.get("stderr")
        if stream is None or stream.closed:
            return ""
        try:
            stream.flush()
            size = os.fstat(stream.fileno()).st_size
            with open(os.dup(stream.fileno()), "rb", closefd=True) as raw:
                raw.seek(max(0, size - _STDERR_TAIL))
                return raw.read().decode("utf-8", "replace").strip()[-_STDERR_TAIL:]
        except OSError:
            return ""

    def _tail_note(self) -> str:
        tail = self._stderr_tail()
        return f"; its stderr ends: {tail}" if tail else ""


def _connection_lost(error: Any) -> bool:
    return "connection closed" in str(error).lower()


def _json_text(value: Any) -> str:
    import orjson

    return orjson.dumps(value).decode()


# -- tools ---------------------------------------------------------------------------------------------


class McpTool(Tool):
    """One tool of an MCP server, offered to the model: its schema is the server's ``inputSchema`` and a
    call runs on the server (an ``isError`` result raises :class:`McpToolError`, which the turn turns
    into an error tool result, as it does any tool's failure)."""

    def __init__(self, server: McpServer, spec: dict) -> None:
        name = spec.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            raise ToolDefinitionError(f"tools: MCP server {server.name!r} has a tool named {name!r}, which a model "
                                      "cannot call (letters, digits, _ and -, at most 64)")
        self.server, self.name, self.mcp_spec = server, name, spec
        self.description = spec.get("description") or ""
        self.arguments_model = None  # type: ignore[assignment] - the server checks its own arguments
        self.is_async = True
        self.function = self._run

    @property
    def spec(self) -> dict[str, Any]:
        schema = spec if isinstance(spec := self.mcp_spec.get("inputSchema"), dict) else {"type": "object"}
        return {"name": self.name, "description": self.description, "parameters": _untitled(schema)}

    def __repr__(self) -> str:
        return f"McpTool({self.name!r} on {self.server.name!r})"

    def check(self, arguments: Any) -> dict[str, Any]:
        if isinstance(arguments, str):
            raise ValueError(f"the arguments are not valid JSON: {arguments[:200]!r}")
        if not isinstance(arguments, dict):
            raise ValueError(f"the arguments must be a JSON object, got {type(arguments).__name__}")
        problem = arguments_problem(self.mcp_spec.get("inputSchema"), arguments)
        if problem:  # as a Python tool's arguments are checked before the call: the model reads why
            raise ValueError(problem)
        return arguments

    async def _run(self, **arguments: Any) -> str:
        result = await self.server.acall_tool(self.name, arguments)
        text = tool_text(result)
        if result.get("isError"):
            raise McpToolError(text or "the tool failed")
        return text


def arguments_problem(schema: Any, arguments: Any) -> str | None:
    """Why ``arguments`` do not fit a tool's JSON Schema — the first error, with where it is
    (``arguments.city: 3 is not of type 'string'``) — or None. Yao checks them before the call
    (``agent/assistant/mcp.go:344-356``); a schema jsonschema cannot read checks nothing (the server
    checks its own arguments), and so does an environment without jsonschema (the ``mcp`` extra brings it)."""
    if not isinstance(schema, dict):
        return None
    try:
        from jsonschema import validators
        from jsonschema.exceptions import SchemaError
    except ImportError:
        return None
    try:
        checker = validators.validator_for(schema)
        checker.check_schema(schema)
        errors = sorted(checker(schema).iter_errors(arguments), key=lambda error: [str(p) for p in error.path])
    except (SchemaError, RecursionError, TypeError, ValueError):
        return None
    if not errors:
        return None
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in errors[0].path)
    return f"arguments{where}: {errors[0].message}"


def tool_text(result: Mapping[str, Any]) -> str:
    """What a model reads of a ``CallToolResult``: its text blocks, other blocks described, or the
    structured content as JSON when there is no content."""
    parts = []
    for block in result.get("content") or []:
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "resource" and isinstance(block.get("resource"), dict) and "text" in block["resource"]:
            parts.append(str(block["resource"]["text"]))
        else:
            parts.append(f"[{kind} {block.get('mimeType', '')}]".replace(" ]", "]"))
    if not parts and result.get("structuredContent") is not None:
        return _json_text(result["structuredContent"])
    return "\n".join(parts)


# -- stopped at exit -------------------------------------------------------------------------------------

_OPEN: "weakref.WeakSet[McpServer]" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for server in list(_OPEN):
        try:
            server.close()
        except Exception:  # noqa: BLE001 - exiting: stop the others
            pass


def _first_leaf(error: BaseException) -> BaseException:
    """The first exception inside anyio's task-group wrapping ("unhandled errors in a TaskGroup (1
    sub-exception)" says nothing): what actually failed, e.g. ``ConnectError: All connection attempts failed``."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error

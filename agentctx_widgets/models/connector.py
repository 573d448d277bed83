"""What the three SDK connectors share: options, the client, headers, errors, closing the stream.

A provider module supplies a :class:`Provider`: a pure request builder (Context messages → the
provider's request body), a pure translator class (provider stream chunks as dicts → normalised
events), and how to open the stream with its SDK. :class:`SdkModel` does the rest, the same way for
every provider:

- ``options`` given to the constructor go into every request; ``stream(options=...)`` (what
  ``run_turn(options=...)`` passes) is merged over them for one call; ``options["tools"]`` is the
  runner's neutral tool list, converted by the builder.
- The client is the one passed as ``client=`` (sync or async SDK client), else an async SDK client
  built from ``api_key`` / ``base_url`` — or, with neither, from the SDK's own environment variables —
  once per loop (``clients.LoopClients``: an async client is bound to its event loop; turns run one
  after another on a kept loop), so the rounds of a tool loop and the turns of a session share its
  connections; its HTTP pool uses the process's
  one TLS context (``clients.shared_tls_context``), and its transport bounds what the server may send
  (``limits``: bytes per line and per response, decompressed size, ``TIMEOUT_SECONDS``). SDK retries are off (``max_retries=0``) so every failure reaches the ``Error`` hook,
  which decides (seed 000, Pattern 4).
- The first event is ``start`` with ``model`` (the id this model was given: it comes before any
  chunk that could say what the provider ran), ``provider`` and ``rateLimits`` (``usage_headers`` of
  the response, when it has any). Every failure is raised as ``ModelError``.
- Closing the iterator (the runner does it on an interrupt or any failure) closes the HTTP stream,
  so the provider stops generating and billing.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
from collections.abc import AsyncIterator, Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import Any

from ..context import content_indexer, usage_headers
from .answer import answered_model, same_model
from .clients import current_pool, shared_tls_context
from .errors import error_event, error_from_sdk, redacted, redacted_event
from .hints import Target, safe_url
from . import limits
from .limits import bounded_client, default_timeout, http_module
from .protocol import ModelError


def import_sdk(module: str, extra: str) -> Any:
    """Import an optional SDK, or raise an ``ImportError`` that says which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(
            f"the {module!r} package is needed for this model: pip install \"agentctx-widgets[{extra}]\""
        ) from error


_NOT_BODY = frozenset({"self", "extra_headers", "extra_query", "extra_body", "timeout"})
_BODY_PARAMETERS: dict[Any, frozenset[str] | None] = {}


def sdk_arguments(create: Callable[..., Any], request: dict) -> dict:
    """``request`` as keyword arguments for an SDK's ``create``: the body fields it names stay, every other
    option (vLLM's ``top_k``, ``chat_template_kwargs``, a field newer than the SDK, ``temperature`` where
    an SDK dropped the parameter) goes into ``extra_body`` — merged with one given as an option — which
    the SDK sends in the body too. So the body on the wire is the request the builder made."""
    function = getattr(create, "__func__", create)
    if function not in _BODY_PARAMETERS:
        try:
            parameters = inspect.signature(create).parameters.values()
        except (TypeError, ValueError):
            _BODY_PARAMETERS[function] = None
        else:
            _BODY_PARAMETERS[function] = None if any(p.kind is p.VAR_KEYWORD for p in parameters) else (
                frozenset(p.name for p in parameters) - _NOT_BODY)
    known = _BODY_PARAMETERS[function]
    if known is None:
        return request
    arguments = {key: value for key, value in request.items() if key in known}
    extra = {**(request.get("extra_body") or {}), **{k: v for k, v in request.items() if k not in known and k != "extra_body"}}
    if extra:
        arguments["extra_body"] = extra
    return arguments


PROVIDERS: dict[str, tuple[str, str, str]] = {
    "openai": ("openai_chat", "OpenAIChatModel", "OpenAI Chat Completions, or any compatible server (OPENAI_BASE_URL)"),
    "openai-responses": ("openai_responses", "OpenAIResponsesModel", "the OpenAI Responses API"),
    "anthropic": ("anthropic", "AnthropicModel", "Anthropic Messages"),
}
"""``provider:model`` spec prefix → (module under agentctx_widgets.models, class, what it talks to): the
SDK connectors. Here, below them, so that :attr:`SdkModel.spec` reads it without importing anything
above; ``registry.model_from_spec`` builds a model from it."""


@dataclass(frozen=True)
class Provider:
    """One provider's pieces. :meth:`open` starts the stream on the SDK client's ``endpoint``."""

    name: str
    """As errors and ``start`` events name it: ``"openai"``, ``"anthropic"``."""
    sdk: str
    extra: str
    key_env: str
    base_url_env: str
    client_class: str
    """The async client's class name in the SDK (``"AsyncOpenAI"``)."""
    build_request: Callable[..., dict]
    translator: Callable[[], Any]
    endpoint: str
    """Where ``create`` is on the SDK client: ``"chat.completions"``, ``"responses"``, ``"messages"``."""

    def open(self, client: Any, request: dict) -> Any:
        """The SDK's raw streaming response (``with_raw_response.create(..., stream=True)``, the options the
        SDK has no parameter for in ``extra_body``: :func:`sdk_arguments`), awaited when the client is async."""
        resource = functools.reduce(getattr, self.endpoint.split("."), client)
        return resource.with_raw_response.create(**sdk_arguments(resource.create, request))


class Translator:
    """What the three translators share (pure; one instance per response): the blocks open now, in start
    order (key → kind: ``"text"``, ``"thinking"``, ``"tool_call"``), each ended by its kind's ``*_end``; a
    terminal event (``done`` or ``error``) after which nothing more is translated; and the ``INCOMPLETE``
    error of a stream that stopped before its provider said it was complete."""

    provider = ""
    cut_short = ""
    """How :meth:`finish` says the stream ended too soon (``"before message_stop"``)."""
    handlers: dict[str, Callable[..., list[dict]]] = {}
    """Event ``type`` → the method that translates it; other types carry nothing the Context keeps."""

    def __init__(self) -> None:
        self._indexes = content_indexer()
        self._open: dict[Hashable, str] = {}
        self._ended = False

    def feed(self, event: dict) -> list[dict]:
        if self._ended or not isinstance(event, dict):
            return []
        handler = self.handlers.get(event.get("type"))  # type: ignore[arg-type]
        return handler(self, event) if handler else []

    def finish(self) -> list[dict]:
        """End of the stream: nothing after a terminal event, else the open blocks closed and
        ``INCOMPLETE``."""
        if self._ended:
            return []
        return self._close() + self._failed(
            f"{self.provider}: the stream ended {self.cut_short} (the response is incomplete)", "INCOMPLETE")

    def _start(self, key: Hashable, kind: str) -> list[dict]:
        if key in self._open:
            return []
        self._open[key] = kind
        return [{"type": f"{kind}_start", "contentIndex": self._indexes.of(key)}]

    def _delta(self, key: Hashable, kind: str, delta: str) -> list[dict]:
        """``delta`` for the block ``key``, started first when it is not open."""
        delta_event = {"type": f"{kind}_delta", "contentIndex": self._indexes.of(key), "delta": delta}
        return self._start(key, kind) + [delta_event]

    def _end(self, key: Hashable, **fields: Any) -> list[dict]:
        kind = self._open.pop(key)
        return [{"type": f"{kind}_end", "contentIndex": self._indexes.of(key), **fields}]

    def _close(self) -> list[dict]:
        events: list[dict] = []
        for key in list(self._open):
            events += self._end(key)
        return events

    def _done(self, **fields: Any) -> list[dict]:
        """The last events: the open blocks closed, then ``done`` with those of ``fields`` that are not
        None."""
        self._ended = True
        done = {"type": "done", **{name: value for name, value in fields.items() if value is not None}}
        return self._close() + [done]

    def _failed(self, message: str, code: str) -> list[dict]:
        """The last event: an ``error`` of ours."""
        self._ended = True
        return [{"type": "error", "error": {"message": message, "code": code, "provider": self.provider}}]

    def _stream_error(self, error: Any) -> list[dict]:
        """The last event: the error the provider sent inside the stream."""
        self._ended = True
        return [error_event(error, provider=self.provider)]


class SdkModel:
    """A :class:`~agentctx_widgets.models.Model` on an official SDK; subclasses set ``provider``."""

    provider: Provider
    default_options: dict[str, Any] = {}

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: Any = None,
        max_retries: int = 0,
        timeout: float | None = None,
        **options: Any,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"{type(self).__name__}(model): expected a model id such as 'gpt-4.1-mini', got {model!r}")
        if client is not None and (api_key is not None or base_url is not None):
            raise ValueError(f"{type(self).__name__}: give client= or api_key=/base_url=, not both")
        self.model = model
        self.base_url = base_url
        self.options = {**self.default_options, **options}
        self.max_retries = max_retries
        self.timeout = timeout
        self._api_key = api_key
        self._client = client
        if client is None:
            import_sdk(self.provider.sdk, self.provider.extra)  # fail now, naming the extra, not at the first turn

    def __repr__(self) -> str:
        where = f", base_url={self.base_url!r}" if self.base_url else ""
        return f"{type(self).__name__}({self.model!r}{where})"

    @property
    def model_id(self) -> str:
        """The model id (for the view's context-window gauge)."""
        return self.model

    @property
    def spec(self) -> str:
        """``provider:model`` as ``model_from_spec`` and the magics' ``--model`` spell it."""
        prefix = next((name for name, (_, cls, _) in PROVIDERS.items() if cls == type(self).__name__), self.provider.name)
        return f"{prefix}:{self.model}"

    def replay_identity(self) -> dict:
        """What a ``ReplayModel`` keys this model's recordings by: the spec and the request options."""
        return {"model": self.spec, "options": self.options}

    @property
    def key_source(self) -> str:
        """Where the API key came from, for a 401's message."""
        if self._client is not None:
            return "the client passed as client="
        if self._api_key is not None:
            return "api_key="
        return f"the environment variable {self.provider.key_env}" + (
            "" if os.environ.get(self.provider.key_env) else " (which is not set)")

    @property
    def client(self) -> Any:
        """The client passed as ``client=``, else a new async SDK client built from ``api_key`` /
        ``base_url`` (or, with neither, the SDK's own environment variables).

        Not kept here: an async client belongs to the event loop it first ran in. :meth:`stream` takes it
        from the running turn's ``LoopClients`` (one per loop and settings: the kept loop's serves turn
        after turn), or, outside a turn, builds one per call and closes it."""
        if self._client is not None:
            return self._client
        sdk = import_sdk(self.provider.sdk, self.provider.extra)
        kwargs: dict[str, Any] = {"max_retries": self.max_retries}
        if self._api_key is not None:
            kwargs["api_key"] = self._api_key
        elif not os.environ.get(self.provider.key_env):
            kwargs["api_key"] = "missing"  # let the provider answer 401, naming the variable, not fail here
        if self.base_url is not None:
            kwargs["base_url"] = self.base_url
        if getattr(sdk, "DefaultAsyncHttpxClient", None) is None:  # an SDK without one: its own defaults
            if self.timeout is not None:
                kwargs["timeout"] = self.timeout
        else:  # the SDK's default HTTP client (redirects, headers) with our caps, timeout and TLS context
            http = http_module(sdk)
            kwargs["timeout"] = self.timeout if self.timeout is not None else default_timeout(http)
            kwargs["http_client"] = bounded_client(sdk, self.provider.name, shared_tls_context(http),
                                                   kwargs["timeout"])
        return getattr(sdk, self.provider.client_class)(**kwargs)

    def _pool_key(self) -> tuple:
        """Models with these equal build the same client, so a pool gives them one. The SDK reads the key
        and base URL from the environment when they were not given: a change there is another client."""
        env = tuple(os.environ.get(name) for name in (self.provider.key_env, self.provider.base_url_env))
        return (self.provider.name, self._api_key, self.base_url, self.timeout, self.max_retries, env)

    def request(self, messages: list[dict], options: dict | None = None) -> dict:
        """The provider request body this model would send for ``messages`` (pure; no network)."""
        merged = {**self.options, **(options or {})}
        return self.provider.build_request(messages, model=self.model, options=merged)

    def stream(self, messages: list[dict], *, options: dict | None = None) -> AsyncIterator[dict] | Iterator[dict]:
        """Normalised events for one model call (async for an async client, sync for a sync one)."""
        request = self.request(messages, options)
        client = self._client
        if client is None:
            return self._events_async(None, request)  # a client of our own, built in the loop that runs it
        if _is_async(client):
            return self._events_async(client, request)
        return self._events_sync(client, request)

    # -- the two drivers (one translator, same events) ------------------------------------------

    async def _events_async(self, client: Any, request: dict) -> AsyncIterator[dict]:
        """``client`` None: the turn's pooled client, or outside a turn one for this call, closed at its
        end (see :attr:`client`)."""
        translator = self.provider.translator()
        owned = client is None
        pool = current_pool() if owned else None
        close_after = owned and pool is None
        stream = None
        target: Target | None = None
        try:
            if pool is not None:
                client = pool.get(self._pool_key(), lambda: self.client)
            elif owned:
                client = self.client
            target = self._target(client, request)
            raw = await self.provider.open(client, request)
            stream = raw.parse()
            if inspect.isawaitable(stream):  # the Anthropic SDK's async parse() is a coroutine
                stream = await stream
            yield self._start(raw)
            answer = _Answer(self.model, self.provider.name, target)
            async for chunk in stream:
                for event in translator.feed(answer.read(_as_dict(chunk))):
                    yield answer.mark(event)
            for event in translator.finish():
                yield answer.mark(event)
        except ModelError as failure:  # every error leaves through here or below, its secrets blanked out
            raise redacted(failure, target or self._target(client, request))
        except Exception as failure:  # noqa: BLE001 - every failure becomes a ModelError
            target = target or self._target(client, request)
            if not owned and isinstance(failure, RuntimeError) and "Event loop is closed" in str(failure):
                raise redacted(ModelError(
                    f"{self.provider.name}: the async client passed as client= belongs to an event loop that has "
                    "ended (turns share one loop, but a turn run beside another, or from your own loop, gets "
                    "another): pass api_key=/base_url= so the model builds its clients, or a sync client",
                    code="MODEL_ERROR", provider=self.provider.name), target) from failure
            raise redacted(error_from_sdk(failure, provider=self.provider.name, key_source=self.key_source,
                                          target=target), target) from failure
        finally:
            if stream is not None:
                await stream.close()
            if close_after and client is not None:
                await client.close()

    def _events_sync(self, client: Any, request: dict) -> Iterator[dict]:
        translator = self.provider.translator()
        stream = None
        target = self._target(client, request)
        try:
            raw = self.provider.open(client, request)
            stream = raw.parse()
            yield self._start(raw)
            answer = _Answer(self.model, self.provider.name, target)
            for chunk in stream:
                yield from map(answer.mark, translator.feed(answer.read(_as_dict(chunk))))
            yield from map(answer.mark, translator.finish())
        except ModelError as failure:
            raise redacted(failure, target)
        except Exception as failure:  # noqa: BLE001
            raise redacted(error_from_sdk(failure, provider=self.provider.name, key_source=self.key_source,
                                          target=target), target) from failure
        finally:
            if stream is not None:
                stream.close()

    def _target(self, client: Any, request: dict) -> Target:
        """Where this call went, for its error: the client's base URL, the model asked for, and the key to
        blank out of any text shown."""
        base = getattr(client, "base_url", None) if client is not None else None
        base_url = str(base) if base is not None else (self.base_url or os.environ.get(self.provider.base_url_env))
        key = self._api_key or getattr(client, "api_key", None) or os.environ.get(self.provider.key_env)
        given = self.base_url or os.environ.get(self.provider.base_url_env) or (str(base) if self._client is not None and base else None)
        return Target(url=safe_url(base_url), model=str(request.get("model") or self.model), base_url=given,
                      provider=self.provider.name, key_env=self.provider.key_env,
                      secrets=(key,) if isinstance(key, str) else ())

    def _start(self, raw: Any) -> dict:
        event: dict[str, Any] = {"type": "start", "model": self.model, "provider": self.provider.name}
        limits = usage_headers(getattr(raw, "headers", None))
        if limits:
            event["rateLimits"] = limits
        return event


class _Answer:
    """What one response says beyond its events: the model the server said answered (every API names it
    in its first chunk), put on the ``done`` event as ``responseModel`` when it is not the one asked for
    (see :mod:`.answer`); and how many tool calls it started, refused past ``limits.MAX_TOOL_CALLS`` (the turn
    counts them too, for every model: this stop only comes earlier); an ``error`` event's text without the
    call's secrets (``target.redact``)."""

    def __init__(self, requested: str, provider: str = "", target: Target | None = None) -> None:
        self.requested = requested
        self.provider = provider
        self.target = target
        self.model: str | None = None
        self._first = True
        self._tool_calls = 0

    def read(self, chunk: dict) -> dict:
        if self._first:
            self._first = False
            self.model = answered_model(chunk)
        return chunk

    def mark(self, event: dict) -> dict:
        kind = event.get("type")  # read once: this runs for every event of the stream
        if kind == "error":
            return redacted_event(event, self.target)
        if kind == "tool_call_start":
            self._tool_calls += 1
            if self._tool_calls > limits.MAX_TOOL_CALLS:
                raise ModelError(f"{self.provider}: the server's response started more than {limits.MAX_TOOL_CALLS} "
                                 "tool calls (models.limits.MAX_TOOL_CALLS); the call was stopped and nothing of it "
                                 "was kept", code="RESPONSE_TOO_LARGE", provider=self.provider)
        if kind == "done" and self.model is not None and not same_model(self.requested, self.model):
            return {**event, "responseModel": self.model}
        return event


def _is_async(client: Any) -> bool:
    return type(client).__name__.startswith("Async")


def _as_dict(chunk: Any) -> dict:
    """An SDK chunk as plain data, extra (undocumented) fields included (``reasoning_content``)."""
    if isinstance(chunk, dict):
        return chunk
    return chunk.to_dict(mode="json")

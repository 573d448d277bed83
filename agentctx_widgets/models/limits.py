"""Bounds on what a model server may send: bytes per line, bytes per response, decompressed size, time.

Why: a model server is input from outside. Without bounds, an endless ``data:`` line with no newline
took 3.6 GB before a ``MemoryError``, a gzip bomb 3.8 GB, and a server that never answers held a turn
for the SDK's 600 s. The SDKs read the body through httpx, so the bounds sit in the one place every
byte passes: the HTTP transport of the client ``SdkModel`` builds (``BoundedTransport``). It asks for
an uncompressed body (``Accept-Encoding: identity``), decompresses one a server compresses anyway by
itself with a cap on the output, and counts bytes as they arrive: a line longer than
:data:`MAX_LINE_BYTES` or a response longer than :data:`MAX_RESPONSE_BYTES` ends the call with a
``ModelError`` (code ``RESPONSE_TOO_LARGE``) naming the cap and the URL, having held at most one
network chunk more than the cap. :data:`DEFAULT_TIMEOUT` is ours, not the SDK's 600 s: settable per
model with ``timeout=`` (seconds or an ``httpx.Timeout``).

The SDKs bring their own HTTP package (``openai`` and ``anthropic`` today use ``httpx2``, a fork of
httpx that refuses httpx's objects), so the transport, the timeout and the limits are built from the
module the SDK's client class comes from (:func:`http_module`). A client passed as ``client=`` is the
user's and keeps its own transport and timeouts.
"""

from __future__ import annotations

import functools
import importlib
import zlib
from collections.abc import AsyncIterator
from types import ModuleType
from typing import Any

from .hints import safe_url
from .protocol import ModelError

MAX_LINE_BYTES = 16 * 1024 * 1024
"""The longest run of bytes without a newline a response may hold (an SSE line; a JSON body's line)."""

MAX_RESPONSE_BYTES = 256 * 1024 * 1024
"""The most bytes one response may hold, after decompression (a long reply is a few MB)."""

MAX_TOOL_CALLS = 128
"""The most tool calls one response may start (OpenAI takes at most 128 tools in a request; 100,000
distinct calls took 85 MB in the translator alone, and each would run)."""

TIMEOUT_SECONDS = {"connect": 10.0, "read": 300.0, "write": 60.0, "pool": 30.0}
"""Our default timeout: connect within 10 s; at most 300 s between two pieces of the response (a slow
model's first token on a CPU included); 60 s to send the request; 30 s waiting for a free connection."""

CONNECTIONS = {"max_connections": 1000, "max_keepalive_connections": 100}
"""The pool of one client (the SDKs' own figures)."""

_DECODERS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


def http_module(sdk: ModuleType) -> ModuleType:
    """The HTTP package (``httpx`` or ``httpx2``) whose ``AsyncClient`` the SDK's default client extends."""
    client = getattr(sdk, "DefaultAsyncHttpxClient")
    base = next(c for c in client.__mro__ if c.__name__ == "AsyncClient")
    return importlib.import_module(base.__module__.split(".")[0])


def default_timeout(http: ModuleType) -> Any:
    """:data:`TIMEOUT_SECONDS` as ``http.Timeout``."""
    return http.Timeout(**TIMEOUT_SECONDS)


def bounded_client(sdk: ModuleType, provider: str, tls: Any, timeout: Any) -> Any:
    """The SDK's default async HTTP client, with our transport (the caps) and the shared TLS context."""
    http = http_module(sdk)
    transport = _classes(http)[1](provider, verify=tls, limits=http.Limits(**CONNECTIONS))
    return sdk.DefaultAsyncHttpxClient(transport=transport, timeout=timeout)


class _Caps:
    """The caps on one response body, counted as its bytes arrive (and decompressed within them)."""

    def __init__(self, url: str, encoding: str | None, provider: str) -> None:
        self.url = url
        self.provider = provider
        self.total = 0
        self.line = 0
        self.decoder = zlib.decompressobj(_DECODERS[encoding]) if encoding else None

    def fail(self, what: str) -> ModelError:
        return ModelError(f"{self.provider}: the server's response {what} (POST {self.url}); the call was "
                          "stopped and nothing of it was kept", code="RESPONSE_TOO_LARGE",
                          provider=self.provider, url=self.url)

    def count(self, data: bytes) -> bytes:
        """``data``, counted; raises once the response or its current line passes its cap."""
        self.total += len(data)
        if self.total > MAX_RESPONSE_BYTES:
            raise self.fail(f"passed {MAX_RESPONSE_BYTES // 2**20} MiB (models.limits.MAX_RESPONSE_BYTES)")
        newline = data.rfind(b"\n")
        self.line = len(data) - newline - 1 if newline >= 0 else self.line + len(data)
        if self.line > MAX_LINE_BYTES:
            raise self.fail(f"has a line over {MAX_LINE_BYTES // 2**20} MiB without a newline "
                            "(models.limits.MAX_LINE_BYTES)")
        return data

    def inflate(self, data: bytes) -> list[bytes]:
        """Decompress ``data`` in pieces no bigger than what is left under the cap: a bomb never lands."""
        pieces = []
        while data:
            room = MAX_RESPONSE_BYTES - self.total + 1
            try:
                piece = self.decoder.decompress(data, min(room, 1024 * 1024))  # type: ignore[union-attr]
            except zlib.error as error:
                raise ModelError(f"{self.provider}: the server's compressed response is corrupt ({error}; "
                                 f"POST {self.url})", code="BAD_STREAM", provider=self.provider,
                                 url=self.url) from None
            pieces.append(self.count(piece))
            data = self.decoder.unconsumed_tail  # type: ignore[union-attr]
        return pieces


async def _body_encoding(response: Any, provider: str, url: str) -> str | None:
    """The compression the response's body has (``None``: none); one not read here closes the response
    and raises."""
    encoding = (response.headers.get("content-encoding") or "").strip().lower() or None
    if encoding == "identity":
        encoding = None
    if encoding is not None and encoding not in _DECODERS:
        await response.aclose()
        raise ModelError(f"{provider}: the server compressed its response as {encoding!r}, which is "
                         f"not read here (POST {url}); it was asked for an uncompressed one",
                         code="BAD_STREAM", provider=provider, url=url)
    return encoding


@functools.cache
def _classes(http: ModuleType) -> tuple[type, type]:
    """:class:`BoundedBody` and :class:`BoundedTransport` for one HTTP package."""

    class BoundedBody(http.AsyncByteStream):
        """A response body that raises once it passes the caps (and decompresses within them)."""

        def __init__(self, inner: Any, url: str, encoding: str | None, provider: str) -> None:
            self._inner = inner
            self._caps = _Caps(url, encoding, provider)

        async def __aiter__(self) -> AsyncIterator[bytes]:
            caps = self._caps
            async for data in self._inner:
                if caps.decoder is None:
                    yield caps.count(data)
                else:
                    for piece in caps.inflate(data):
                        if piece:
                            yield piece

        async def aclose(self) -> None:
            await self._inner.aclose()

    class BoundedTransport(http.AsyncBaseTransport):
        """The HTTP package's own transport, every response body read through ``BoundedBody``."""

        def __init__(self, provider: str, **transport_options: Any) -> None:
            self._inner = http.AsyncHTTPTransport(**transport_options)
            self._provider = provider

        async def handle_async_request(self, request: Any) -> Any:
            request.headers["accept-encoding"] = "identity"
            response = await self._inner.handle_async_request(request)
            url = safe_url(str(request.url)) or ""
            encoding = await _body_encoding(response, self._provider, url)
            headers = [(k, v) for k, v in response.headers.multi_items()
                       if encoding is None or k.lower() not in ("content-encoding", "content-length")]
            body = BoundedBody(response.stream, url, encoding, self._provider)
            return http.Response(response.status_code, headers=headers, stream=body, extensions=response.extensions)

        async def aclose(self) -> None:
            await self._inner.aclose()

    return BoundedBody, BoundedTransport

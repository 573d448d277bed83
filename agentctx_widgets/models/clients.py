"""SDK clients kept for as long as the event loop that runs a turn, and one TLS setup per process.

Why: building an async SDK client costs far more than a loopback request (measured: a fresh
``AsyncOpenAI`` ~27 ms on a quiet machine, almost all of it the TLS context httpx builds from the CA
bundle for every client), and a client per model call also means a new TCP (and TLS) connection per
round of a tool loop. An async client belongs to the loop it first ran in, so clients can't outlive
their loop: turns run on one of the process's kept loops (``hooks.caller.KeptLoop``), each with a
:class:`LoopClients` pool that lives as long as it does, so every call of one model with the same
settings — the rounds of a tool loop and the turns of a session — gets the same client and connections;
turns at once each hold a kept loop (up to ``MAX_KEPT_LOOPS``), and one beyond them gets a fresh loop with a
pool of its own, closed when it ends. The TLS context is built once per process (with httpx's own
defaults: certifi, ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``) and shared by every client's HTTP pool.

Outside a pool (a model's ``stream`` driven from the user's own loop), a call builds a client of its
own and closes it when the call ends, as before.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Hashable
from typing import Any

_POOL: contextvars.ContextVar[LoopClients | None] = contextvars.ContextVar("agentctx_loop_clients", default=None)

_TLS_LOCK = threading.Lock()
_TLS_CONTEXTS: dict[str, Any] = {}


def shared_tls_context(http: Any = None) -> Any:
    """The process's one ``ssl.SSLContext`` for model clients, built on first use with the defaults of the
    HTTP package ``http`` (httpx, or the SDKs' httpx2: certifi, ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``)."""
    if http is None:
        import httpx as http
    with _TLS_LOCK:
        if http.__name__ not in _TLS_CONTEXTS:
            _TLS_CONTEXTS[http.__name__] = http.create_ssl_context()
        return _TLS_CONTEXTS[http.__name__]


class LoopClients:
    """The clients opened inside one turn's event loop, by what they were built for; closed together."""

    def __init__(self) -> None:
        self._clients: dict[Hashable, Any] = {}
        self.built = 0
        """How many clients this pool built (tests read it: one per model, not one per call)."""

    def get(self, key: Hashable, build: Callable[[], Any]) -> Any:
        client = self._clients.get(key)
        if client is None:
            client = self._clients[key] = build()
            self.built += 1
        return client

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            try:
                await client.close()
            except Exception:  # noqa: BLE001 - a client that fails to close must not hide the turn's result
                pass


def current_pool() -> LoopClients | None:
    """The pool of the turn running in this context, if any."""
    return _POOL.get()


class use_pool:
    """``async with use_pool(pool):`` — clients built inside come from ``pool``, which stays open after
    (the kept loop's pool, ``hooks.caller.KeptLoop``: one turn's clients serve the next)."""

    def __init__(self, pool: LoopClients) -> None:
        self.pool = pool
        self._token: contextvars.Token | None = None

    async def __aenter__(self) -> LoopClients:
        self._token = _POOL.set(self.pool)
        return self.pool

    async def __aexit__(self, *exc: Any) -> None:
        if self._token is not None:
            _POOL.reset(self._token)


class open_pool(use_pool):
    """``async with open_pool():`` — clients built inside share connections and close at the end."""

    def __init__(self) -> None:
        super().__init__(LoopClients())

    async def __aexit__(self, *exc: Any) -> None:
        await super().__aexit__(*exc)
        await self.pool.aclose()

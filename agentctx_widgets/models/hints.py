"""Where a failed request went, and what the usual mistake behind the failure is, in words a user acts on.

The SDKs say "Connection error." or "Not Found"; a user running a local server needs to read which URL
and which model the request went to, and that a ``base_url`` without ``/v1`` is the usual cause of a 404
from an OpenAI-compatible server (docs/servers.md). Nothing here ever prints a key: URLs lose their
query and user info, and known secrets are blanked from any text that is shown.
"""

from __future__ import annotations

import errno
import inspect
import os
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

DEFAULT_PORTS = "Ollama 11434, llama-server 8080, llama-cpp-python 8000, vLLM 8000, LM Studio 1234, LiteLLM proxy 4000"
"""The ports the servers of docs/servers.md listen on by default, for the connection-refused hint."""


@dataclass(frozen=True)
class Target:
    """What a request was sent to: shown in its error, never with a secret."""

    url: str | None
    """``METHOD URL`` of the request (query and user info removed), or the base URL when no request was made."""
    model: str | None
    base_url: str | None
    provider: str
    key_env: str
    secrets: tuple[str, ...] = ()
    """Values to blank out of any text shown (the API key in use)."""

    def where(self) -> str:
        parts = [self.url] if self.url else []
        if self.model:
            parts.append(f"model {self.model!r}")
        return ", ".join(parts)

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            if secret and len(secret) >= 8:  # real keys are long; "test" must not blank "org-test"
                text = text.replace(secret, "***")
        return text


KEY_ENVS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
"""The environment variables the built-in connectors read their key from (each ``Provider.key_env``): a
custom model may read them too, so its failures are blanked of their values (:func:`model_secrets`)."""

KEY_ATTRIBUTES = ("api_key", "_api_key", "apikey", "token", "_token", "auth_token", "access_token")
"""Attributes of a model (or of its ``client``) that may hold the key it was given."""


def model_secrets(model: Any) -> tuple[str, ...]:
    """The secrets a custom model's failure must not show: the values of :data:`KEY_ENVS` and of the model's
    own key attributes (:data:`KEY_ATTRIBUTES`, on the model, its ``client`` and a wrapped ``model``). Read
    with ``inspect.getattr_static``: no property runs (a model's ``client`` property may build a client)."""
    found = [os.environ.get(name) for name in KEY_ENVS]
    seen: list[Any] = []
    pending = [model]
    while pending and len(seen) < 4:
        item = pending.pop()
        if item is None or isinstance(item, (str, bytes, int, float)) or any(item is other for other in seen):
            continue
        seen.append(item)
        found.extend(_static(item, name) for name in KEY_ATTRIBUTES)
        pending.extend(_static(item, name) for name in ("client", "_client", "model", "_model"))
    unique: dict[str, None] = {}
    for value in found:
        if isinstance(value, str) and len(value) >= 8:  # as Target.redact: short values are not keys
            unique[value] = None
    return tuple(unique)


def _static(item: Any, name: str) -> Any:
    try:
        value = inspect.getattr_static(item, name)
    except AttributeError:
        return None
    except Exception:  # noqa: BLE001 - an odd object: nothing read from it
        return None
    return value if isinstance(value, str) or not hasattr(value, "__get__") else None  # no descriptors


def safe_url(url: Any) -> str | None:
    """``url`` without its query, fragment and user info (a key can hide in any of them)."""
    if url is None:
        return None
    try:
        parts = urlsplit(str(url))
    except ValueError:
        return None
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def request_line(failure: BaseException, base_url: Any) -> str | None:
    """``POST http://host/v1/chat/completions`` from the SDK exception's request, else the base URL."""
    request = getattr(failure, "request", None)
    if request is None:
        response = getattr(failure, "response", None)
        request = getattr(response, "request", None) if response is not None else None
    try:
        url = getattr(request, "url", None) if request is not None else None
        method = getattr(request, "method", None) if request is not None else None
    except RuntimeError:  # httpx raises when a request was never attached
        url = method = None
    if url is not None:
        shown = safe_url(url)
        return f"{method} {shown}" if isinstance(method, str) else shown
    return safe_url(base_url)


def refused(failure: BaseException) -> bool:
    """Did nothing listen at the address (ECONNREFUSED anywhere in the cause chain)?"""
    return _in_chain(failure, lambda e: isinstance(e, ConnectionRefusedError) or getattr(e, "errno", None) == errno.ECONNREFUSED
                     or "connection refused" in str(e).lower() or "connect call failed" in str(e).lower())


def unknown_host(failure: BaseException) -> bool:
    """Did the host name not resolve?"""
    return _in_chain(failure, lambda e: type(e).__name__ == "gaierror" or "name or service not known" in str(e).lower()
                     or "nodename nor servname" in str(e).lower() or "name resolution" in str(e).lower())


def _in_chain(failure: BaseException | None, test: Any) -> bool:
    seen = 0
    while failure is not None and seen < 10:
        if test(failure):
            return True
        failure = failure.__cause__ or failure.__context__
        seen += 1
    return False


def _has_v1(url: str | None) -> bool:
    return bool(url) and re.search(r"/v\d+(beta)?(/|$)", urlsplit(url.split(" ")[-1]).path or "") is not None


def hint(code: str, status: int | None, target: Target, failure: BaseException | None = None) -> str | None:
    """One sentence on the likely mistake behind this failure, or None when there is no usual one."""
    base = safe_url(target.base_url)
    if code == "CONNECTION" and failure is not None:
        if refused(failure):
            return (f"nothing accepted the connection at {base or 'the server'}: is the server running, on this host "
                    f"and port? (default ports: {DEFAULT_PORTS})")
        if unknown_host(failure):
            return f"the host name in {base or 'base_url'} does not resolve: check base_url"
        return None
    if status == 404 and target.provider == "openai":
        if target.base_url and not _has_v1(target.url or base):
            return (f"base_url {base} has no /v1: OpenAI-compatible servers (Ollama, llama-server, vLLM, LM Studio, "
                    f"LiteLLM) serve /v1/chat/completions, so try base_url={(base or '').rstrip('/') + '/v1'!r}")
        if target.model:
            models = (base or "").rstrip("/") + "/models" if base else "GET /v1/models"
            return f"is {target.model!r} a model this server serves? {models} lists them"
    if status == 404 and target.provider == "anthropic" and target.url and "/v1/v1/" in target.url:
        return "base_url ends in /v1 but the Anthropic SDK adds /v1/messages itself: drop the /v1"
    if code == "AUTHENTICATION":
        return _key_hint(target)
    return None


def _key_hint(target: Target) -> str | None:
    """A key variable under a near-miss name (``OPENAI_KEY`` for ``OPENAI_API_KEY``), named, never shown."""
    expected = target.key_env
    stem = expected.split("_")[0]
    near = sorted(name for name in os.environ
                  if name != expected and stem in name.upper() and "KEY" in name.upper() and os.environ.get(name))
    if near and not os.environ.get(expected):
        return f"{expected} is not set but {', '.join(near)} is: the SDK reads {expected} (or pass api_key=)"
    if not os.environ.get(expected) and target.base_url is None:
        return f"set {expected} or pass api_key="
    return None

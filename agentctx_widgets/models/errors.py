"""Provider failures → :class:`ModelError`, through one table of codes.

Every connector reports its failures the same way, so an ``Error`` hook can branch on ``error.code``
whatever the provider (seed 000's Pattern 4 checks ``error.code === "RATE_LIMIT"``). The SDKs of OpenAI
and Anthropic share one exception shape (``status_code``, ``response.headers``, ``body``), read here by
duck typing so this module imports neither.
"""

from __future__ import annotations

import email.utils
import json
import math
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .hints import Target, hint, request_line
from .protocol import ModelError

CODES: dict[str, str] = {
    "BAD_REQUEST": "the provider refused the request as malformed (HTTP 400)",
    "AUTHENTICATION": "no valid API key (HTTP 401)",
    "PERMISSION_DENIED": "the key may not use this model or endpoint (HTTP 403)",
    "NOT_FOUND": "no such model or endpoint (HTTP 404)",
    "CONFLICT": "HTTP 409",
    "REQUEST_TOO_LARGE": "the request is larger than the provider accepts (HTTP 413)",
    "CONTEXT_LENGTH": "the messages do not fit the model's context window",
    "UNPROCESSABLE": "HTTP 422",
    "RATE_LIMIT": "too many requests or tokens; see retry (HTTP 429)",
    "QUOTA": "the account has no credit left",
    "SERVER_ERROR": "the provider failed (HTTP 500 or an api_error event)",
    "UNAVAILABLE": "the provider is down or a gateway failed (HTTP 502/503)",
    "OVERLOADED": "the provider is overloaded (Anthropic HTTP 529 or an overloaded_error event)",
    "TIMEOUT": "the request timed out",
    "CONNECTION": "the connection failed or dropped before the response was complete",
    "BAD_STREAM": "the event stream was not what the provider's API documents",
    "INCOMPLETE": "the stream ended before the provider said the response was complete",
    "RESPONSE_TOO_LARGE": "the server sent more than models.limits allows (a line or a whole response)",
    "REFUSED": "the response failed (Responses API status 'failed') for a policy or unknown reason",
    "MAX_TOOL_ROUNDS": "the model still called tools after run_turn's max_tool_rounds rounds",
    "BUDGET_EXCEEDED": "the turn's running cost would pass run_turn's budget: the stream was closed, nothing committed",
    "BUDGET_UNPRICED": "run_turn has a budget but the price table (or prices=) cannot price the model called",
    "REPLAY_MISS": "a ReplayModel without a model was sent a request its recording file does not hold",
    "MODEL_ERROR": "any other model failure",
}
"""Every ``ModelError.code`` a connector raises, with what it means."""


STATUS_CODES: dict[int, str] = {
    400: "BAD_REQUEST", 401: "AUTHENTICATION", 402: "QUOTA", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
    408: "TIMEOUT", 409: "CONFLICT", 413: "REQUEST_TOO_LARGE", 422: "UNPROCESSABLE", 429: "RATE_LIMIT",
    500: "SERVER_ERROR", 502: "UNAVAILABLE", 503: "UNAVAILABLE", 504: "TIMEOUT", 529: "OVERLOADED",
}

PROVIDER_TYPES: dict[str, str] = {
    # Anthropic error.type (docs "Errors"), also sent as an ``error`` event mid-stream
    "invalid_request_error": "BAD_REQUEST",
    "authentication_error": "AUTHENTICATION",
    "permission_error": "PERMISSION_DENIED",
    "not_found_error": "NOT_FOUND",
    "request_too_large": "REQUEST_TOO_LARGE",
    "rate_limit_error": "RATE_LIMIT",
    "api_error": "SERVER_ERROR",
    "overloaded_error": "OVERLOADED",
    "timeout_error": "TIMEOUT",
    # OpenAI error.code / error.type
    "rate_limit_exceeded": "RATE_LIMIT",
    "insufficient_quota": "QUOTA",
    "context_length_exceeded": "CONTEXT_LENGTH",
    "server_error": "SERVER_ERROR",
    "invalid_api_key": "AUTHENTICATION",
    "model_not_found": "NOT_FOUND",
    "server_is_overloaded": "OVERLOADED",
    "too_many_requests": "RATE_LIMIT",
}
"""Provider error types (from a body or a mid-stream error event) → our code."""


def retry_after(headers: Any, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date), else None."""
    get = getattr(headers, "get", None)
    if not callable(get):
        return None
    milliseconds = _number(get("retry-after-ms"))
    if milliseconds is not None:
        return milliseconds / 1000
    raw = get("retry-after")
    seconds = _number(raw)
    if seconds is not None:
        return seconds
    if isinstance(raw, str) and raw.strip():
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - (time.time() if now is None else now))
    return None


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and number >= 0 else None


GENERIC_TYPES = frozenset({"invalid_request_error", "api_error", "server_error"})
"""Provider types that only say "client" or "server" fault: a known HTTP status says more (OpenAI
answers 503 with ``server_error`` and 404/403 with ``invalid_request_error``)."""


def code_for(status: int | None = None, provider_type: Any = None) -> str:
    """Our code for a provider error type (first, unless it is generic and the status is known) or
    an HTTP status."""
    if isinstance(provider_type, str) and provider_type in PROVIDER_TYPES:
        if not (provider_type in GENERIC_TYPES and status in STATUS_CODES):
            return PROVIDER_TYPES[provider_type]
    if status is not None:
        if status in STATUS_CODES:
            return STATUS_CODES[status]
        if status >= 500:
            return "SERVER_ERROR"
    return "MODEL_ERROR"


_MAX_MESSAGE = 600


def error_body(body: Any) -> tuple[str | None, Any]:
    """(message, provider type) from every error body a server sends: OpenAI ``{"error": {"message", "type",
    "code"}}``, Anthropic ``{"type": "error", "error": {"type", "message"}}``, a bare ``{"message"}``, ``error``
    as a string (Ollama, llama-server's router, LiteLLM), FastAPI's ``{"detail": "…"}`` (llama-cpp-python's
    401 and 404) or ``{"detail": [{"loc", "msg"}…]}`` (its 422), or a plain-text body. The OpenAI SDK hands
    over ``body["error"]`` when there is one, so a string body may be the inner message already."""
    if isinstance(body, str):
        return (_clip(body.strip()) or None, None)
    if not isinstance(body, Mapping):
        return None, None
    if isinstance(body.get("error"), str) and body["error"].strip():
        return _clip(body["error"].strip()), body.get("type") if isinstance(body.get("type"), str) else None
    inner = body.get("error") if isinstance(body.get("error"), Mapping) else body
    message = inner.get("message")
    code = inner.get("code")
    kind = code if isinstance(code, str) and code in PROVIDER_TYPES else inner.get("type")
    if isinstance(message, str) and message.strip():
        return _clip(message.strip()), kind
    detail = _detail(inner.get("detail", body.get("detail")))
    if detail:
        return detail, kind
    return None, kind


def _detail(detail: Any) -> str | None:
    """FastAPI's ``detail``: a string, or a validation list ``[{"loc": [...], "msg": "..."}]``."""
    if isinstance(detail, str):
        return _clip(detail.strip()) or None
    if isinstance(detail, list) and detail:
        shown = []
        for item in detail[:3]:
            if isinstance(item, Mapping):
                where = ".".join(str(part) for part in item.get("loc") or [])
                shown.append(f"{where}: {item.get('msg')}" if where else str(item.get("msg")))
            else:
                shown.append(str(item))
        more = f" (and {len(detail) - 3} more)" if len(detail) > 3 else ""
        return _clip("; ".join(shown) + more)
    return None


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_MESSAGE else text[:_MAX_MESSAGE] + "…"


def error_from_status(status: int, body: Any, headers: Any, *, provider: str, key_source: str | None = None,
                      request_id: str | None = None, target: Target | None = None) -> ModelError:
    """A ``ModelError`` for an HTTP error response: the server's own message, then where the request went
    (``POST url``, the model, where the key came from, the retry hint), then a hint for the usual mistake."""
    message, kind = error_body(body)
    code = code_for(status, kind)
    if message is None and isinstance(body, Mapping) and body:
        message = f"no error message; the body was {_clip(json.dumps(body, default=str))}"
    facts = [target.where()] if target is not None and target.where() else []
    if code == "AUTHENTICATION" and key_source:
        facts.append(f"the API key came from {key_source}")
    wait = retry_after(headers)
    if wait is not None:
        facts.append(f"retry after {wait:g} s")
    text = f"{provider} answered HTTP {status}: {message or 'no error message (the body was empty)'}"
    if facts:
        text += f" ({'; '.join(facts)})"
    advice = hint(code, status, target) if target is not None else None
    if advice:
        text += f". Hint: {advice}"
    if target is not None:
        text = target.redact(text)
    return ModelError(text, code=code, status=status, retry=wait, provider=provider, request_id=request_id,
                      url=target.url if target else None, model=target.model if target else None, hint=advice)


def error_event(error: Any, *, provider: str) -> dict:
    """A normalised ``error`` event for an error the provider sent inside the stream."""
    message, kind = error_body(error if isinstance(error, Mapping) and "error" in error else {"error": error})
    code = code_for(None, kind)
    text = f"{provider} stream error: {message or kind or 'no error message'}"
    return {"type": "error", "error": {"message": text, "code": code, "provider": provider}}


def error_from_sdk(failure: BaseException, *, provider: str, key_source: str | None = None,
                   target: Target | None = None) -> ModelError:
    """Any exception from an official SDK (or httpx beneath it) → ``ModelError``."""
    if isinstance(failure, ModelError):
        return failure
    if isinstance(failure.__cause__, ModelError):  # raised beneath the SDK (models.limits), which wrapped it
        return failure.__cause__
    status = getattr(failure, "status_code", None)
    response = getattr(failure, "response", None)
    if target is not None:
        target = replace(target, url=request_line(failure, target.base_url) or target.url)
    if isinstance(status, int) and status < 400 and getattr(failure, "body", None) is not None:
        return _stream_error(failure, provider=provider)
    if isinstance(status, int):
        headers = getattr(response, "headers", None)
        request_id = getattr(failure, "request_id", None)
        return error_from_status(status, getattr(failure, "body", None), headers, provider=provider,
                                 key_source=key_source, request_id=request_id if isinstance(request_id, str) else None,
                                 target=target)
    name = type(failure).__name__
    body = getattr(failure, "body", None)
    if body is not None and name == "APIError":  # an error the provider sent inside the event stream
        message, kind = error_body(body)
        return ModelError(f"{provider} stream error: {message or failure}", code=code_for(None, kind), provider=provider)
    where = f" ({target.where()})" if target is not None and target.where() else ""
    if "Timeout" in name:
        return _located(f"{provider}: the request timed out{where} ({failure})", "TIMEOUT", provider, target, failure)
    if "Connection" in name or isinstance(failure, (ConnectionError, OSError)) or _is_transport(failure):
        cause = failure.__cause__ or failure.__context__
        detail = f"{failure}" + (f" ({type(cause).__name__}: {cause})" if cause and str(cause) not in str(failure) else "")
        return _located(f"{provider}: the connection failed: {detail}{where}", "CONNECTION", provider, target, failure)
    if "Validation" in name or isinstance(failure, (ValueError, KeyError)):
        return ModelError(f"{provider}: the stream was malformed: {name}: {failure}", code="BAD_STREAM", provider=provider)
    return ModelError(f"{provider}: {name}: {failure}", code="MODEL_ERROR", provider=provider)


def _located(text: str, code: str, provider: str, target: Target | None, failure: BaseException) -> ModelError:
    advice = hint(code, None, target, failure) if target is not None else None
    if advice:
        text += f". Hint: {advice}"
    if target is not None:
        text = target.redact(text)
    return ModelError(text, code=code, provider=provider, url=target.url if target else None,
                      model=target.model if target else None, hint=advice)


def _stream_error(failure: BaseException, *, provider: str) -> ModelError:
    """An error event inside a 200 stream that the SDK raised as a status error (Anthropic's SDK raises
    ``APIStatusError`` with the stream's status 200 for ``event: error``): no HTTP failure, so no status."""
    message, kind = error_body(getattr(failure, "body", None))
    request_id = getattr(failure, "request_id", None)
    return ModelError(f"{provider} stream error: {message or kind or failure}", code=code_for(None, kind),
                      provider=provider, request_id=request_id if isinstance(request_id, str) else None)


def redacted(failure: ModelError, target: Target | None) -> ModelError:
    """``failure`` with ``target``'s secrets blanked out of its texts (in place, so its cause and traceback
    stay): the connector passes every error through here, whichever path made it, so none can forget."""
    if target is None or not target.secrets:
        return failure
    failure.message = target.redact(str(failure.message))
    failure.args = (failure.message, *failure.args[1:])
    for name in ("hint", "url", "request_id"):
        value = getattr(failure, name, None)
        if isinstance(value, str):
            setattr(failure, name, target.redact(value))
    return failure


def redacted_event(event: dict, target: Target | None) -> dict:
    """An ``error`` event with ``target``'s secrets blanked out of its error (other events as they are)."""
    if target is None or not target.secrets or event.get("type") != "error":
        return event
    return {**event, "error": _redact_all(event.get("error"), target)}


def redacted_failure(failure: BaseException, target: Target) -> BaseException:
    """Any model's failure with ``target``'s secrets blanked out (for a custom model, whose errors no
    connector redacted): a :class:`ModelError` as :func:`redacted` does; another exception in place — its
    ``args`` and the usual text attributes, and the same for its causes — so its type, traceback and
    ``error_dict`` stay. When its text still shows a secret (a ``__str__`` of its own), a ``ModelError`` with
    the blanked text of ``Type: message`` is returned instead, for the caller to raise."""
    if not target.secrets:
        return failure
    chain: list[BaseException] = []
    link: BaseException | None = failure
    while link is not None and len(chain) < 10 and not any(link is seen for seen in chain):
        chain.append(link)
        link = link.__cause__ or link.__context__
    for item in chain:
        if isinstance(item, ModelError):
            redacted(item, target)
            continue
        try:
            item.args = tuple(_redact_all(arg, target) for arg in item.args)
            for name in _TEXT_ATTRIBUTES:
                value = item.__dict__.get(name) if hasattr(item, "__dict__") else None
                if isinstance(value, (str, Mapping, list, tuple)):
                    setattr(item, name, _redact_all(value, target))
        except Exception:  # noqa: BLE001 - an exception that refuses new args: the check below replaces it
            pass
    text = _text(failure)
    if text is None or target.redact(text) != text:
        shown = target.redact(f"{type(failure).__name__}: {text or 'an error whose text cannot be read'}")
        code = getattr(failure, "code", None)
        return ModelError(shown, code=code if isinstance(code, str) else "MODEL_ERROR")
    return failure


_TEXT_ATTRIBUTES = ("message", "msg", "detail", "body", "reason", "strerror", "filename", "filename2", "hint",
                    "url", "request_id")
"""Attributes of an exception that may hold its text (``OSError.strerror``, an SDK error's ``body``)."""


def _text(failure: BaseException) -> str | None:
    try:
        return str(failure)
    except Exception:  # noqa: BLE001 - a broken __str__
        return None


def _redact_all(value: Any, target: Target) -> Any:
    if isinstance(value, str):
        return target.redact(value)
    if isinstance(value, Mapping):
        return {key: _redact_all(item, target) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redact_all(item, target) for item in value]
    return value


def _is_transport(failure: BaseException) -> bool:
    """httpx's transport errors (RemoteProtocolError, ReadError, …) without importing httpx."""
    module = type(failure).__module__ or ""
    return module.split(".")[0] in ("httpx", "httpx2", "httpcore", "h11", "anyio")

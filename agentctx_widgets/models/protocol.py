"""The one thing the runner needs from a model connector: a stream of normalised events."""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterable
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Model(Protocol):
    """A model connector.

    ``stream(messages, options=...)`` receives the Context messages the model should see (seed-001
    shapes: ``{"type": 2, "content": [blocks]}``) and returns a sync *or* async iterable of
    normalised response events (DESIGN.md "EventType": ``start``, ``text_delta`` with
    ``contentIndex`` and ``delta``, …, ``done`` with ``usage``, or ``error``). ``options["tools"]``,
    when the runner was given tools, lists them as ``{"name", "description", "parameters"}``
    (JSON Schema), the shape every connector converts to its provider's.
    """

    def stream(
        self, messages: list[dict], *, options: dict | None = None
    ) -> Iterable[dict] | AsyncIterable[dict]: ...


RETRYABLE = frozenset({"RATE_LIMIT", "SERVER_ERROR", "UNAVAILABLE", "OVERLOADED", "TIMEOUT", "CONNECTION", "INCOMPLETE"})
"""The ``ModelError.code`` values a retry may cure (``models.errors.CODES`` says what each means)."""


class ModelError(RuntimeError):
    """A failed response: the provider answered with an error, the stream broke, or the connector raised.

    ``code`` is a short machine-readable reason the ``Error`` hook can branch on (``"RATE_LIMIT"``,
    ``"OVERLOADED"``, ``"AUTHENTICATION"``; the table is :data:`agentctx_widgets.models.errors.CODES`),
    ``status`` the HTTP status when there was one, ``retry`` the provider's retry hint in seconds
    (``retry-after`` / ``retry-after-ms``) when it gave one, ``provider`` who said so.
    """

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        status: int | None = None,
        retry: Any = None,
        provider: str | None = None,
        request_id: str | None = None,
        url: str | None = None,
        model: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or "MODEL_ERROR"
        self.status = status
        self.retry = retry
        self.provider = provider
        self.request_id = request_id
        self.url = url
        """``METHOD URL`` the request went to (no query, no user info), when known."""
        self.model = model
        """The model id the request asked for."""
        self.hint = hint
        """The usual mistake behind this failure (base_url without /v1, no server on the port), or None."""

    @property
    def retryable(self) -> bool:
        """Would the same request plausibly succeed later (rate limit, overload, server or network failure)?"""
        return self.code in RETRYABLE

    def to_event_error(self) -> dict:
        """The ``error`` field of a normalised ``error`` event (seed 001: a string or ``{message, retry}``)."""
        error: dict[str, Any] = {"message": self.message, "code": self.code}
        for key in ("status", "retry", "provider", "url", "model", "hint"):
            value = getattr(self, key)
            if value is not None:
                error[key] = value
        return error

    @classmethod
    def from_event_error(cls, error: Any) -> ModelError:
        """Build from an ``error`` event's ``error`` field (a string or ``{"message", ...}``)."""
        if isinstance(error, dict):
            message = str(error.get("message") or "model error")
            status = error.get("status")
            return cls(
                message,
                code=error.get("code") if isinstance(error.get("code"), str) else None,
                status=status if isinstance(status, int) and not isinstance(status, bool) else None,
                retry=error.get("retry"),
                provider=error.get("provider") if isinstance(error.get("provider"), str) else None,
                **{key: error[key] for key in ("url", "model", "hint") if isinstance(error.get(key), str)},
            )
        return cls(str(error) if error else "model error")

    def __reduce__(self) -> Any:  # picklable with its fields (errors cross threads and processes)
        return (_rebuild, (self.message, self.to_event_error()))


def _rebuild(message: str, fields: dict) -> ModelError:
    error = ModelError.from_event_error(fields)
    error.message = message
    return error

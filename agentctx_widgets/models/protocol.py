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
    ``contentIndex`` and ``delta``, …, ``done`` with ``usage``, or ``error``).
    """

    def stream(
        self, messages: list[dict], *, options: dict | None = None
    ) -> Iterable[dict] | AsyncIterable[dict]: ...


class ModelError(RuntimeError):
    """A failed response: the model (or its connector) reported an ``error`` event or raised.

    ``code`` is a short machine-readable reason (``"RATE_LIMIT"``), ``retry`` the provider's
    retry hint when it gave one (``{"message", "retry"}`` errors).
    """

    def __init__(self, message: str, *, code: str | None = None, retry: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.retry = retry

    @classmethod
    def from_event_error(cls, error: Any) -> ModelError:
        """Build from an ``error`` event's ``error`` field (a string or ``{"message", ...}``)."""
        if isinstance(error, dict):
            message = str(error.get("message") or "model error")
            return cls(message, code=error.get("code"), retry=error.get("retry"))
        return cls(str(error) if error else "model error")

"""The limits of a JavaScript hook set (:class:`Limits`): one value, from ``hooks_from_js`` to the worker.

Limits per call (and for loading the source) stop one hook that runs away; caps per turn bound what a
turn's hooks can make the *kernel* keep, which no per-call limit does (a hook may call ``ctx.Send``
ten million times well inside its time). See ``js_hooks``'s module docstring for how each is enforced.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass
from typing import Any, TypedDict

MB = 1024 * 1024
MAX_SEND_BYTES = 8 * MB
"""Default ``max_send_bytes``: the largest one message may be (characters of its JSON)."""
MAX_OUTPUT_MESSAGES = 100_000
"""Default ``max_output_messages``: messages a hook set may send in one turn (all its hook calls)."""
MAX_OUTPUT_BYTES = 64 * MB
"""Default ``max_output_bytes``: characters of JSON a hook set may send in one turn."""
MAX_CONSOLE_BYTES = 4 * MB
"""Default ``max_console_bytes``: characters of console text a hook set may write in one turn."""

_SECONDS = ("time_limit", "wall_limit")


@dataclass(frozen=True)
class Limits:
    """What one JavaScript hook set may use: per call, and per turn (``run_turn`` makes one ``HookContext``
    per turn). ``Limits(time_limit=1)`` checks every field; a bad one raises naming it."""

    time_limit: float = 5.0
    """Seconds of a call's time outside ``time.Sleep`` (JavaScript and every host call count): an endless
    loop must not hold the turn, and a sleeping hook is not running away."""
    wall_limit: float = 60.0
    """Seconds of a call overall, sleeps included: a hook that sleeps or waits forever still ends."""
    memory_limit: int = 64 * MB
    """Bytes of JS heap (the worker's ``RLIMIT_AS`` is set above it): a memory bomb fails the hook, not
    the kernel."""
    stack_limit: int = 1 * MB
    """Bytes of JS stack: runaway recursion fails as a stack overflow before the C stack does."""
    max_send_bytes: int = MAX_SEND_BYTES
    """Characters of JSON one message may be: a huge ``ctx.Send`` is refused at the call, catchably."""
    max_output_messages: int = MAX_OUTPUT_MESSAGES
    """Messages a hook set may send in one turn: each is kept by the Output and the view."""
    max_output_bytes: int = MAX_OUTPUT_BYTES
    """Characters of JSON a hook set may send in one turn: what the kernel keeps of them."""
    max_console_bytes: int = MAX_CONSOLE_BYTES
    """Characters of console text a hook set may write in one turn (kept in ``TurnResult.console``)."""

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.name in _SECONDS:
                object.__setattr__(self, field.name, _seconds(field.name, value))
            else:
                object.__setattr__(self, field.name, _count(field.name, value))

    @classmethod
    def of(cls, limits: Limits | None = None, **options: Any) -> Limits:
        """``limits`` (default: the defaults) with ``options`` (the keyword arguments of ``hooks_from_js``)
        replacing its fields; an unknown name raises ``TypeError`` naming it and the known ones."""
        if limits is not None and not isinstance(limits, Limits):
            raise TypeError(f"hooks_from_js(limits=…): expected a Limits, got {type(limits).__name__}")
        known = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise TypeError(f"hooks_from_js(): unexpected keyword argument {unknown[0]!r} (the limits are "
                            f"{', '.join(field.name for field in dataclasses.fields(cls))})")
        if limits is None:
            return cls(**options)
        return dataclasses.replace(limits, **options) if options else limits

    # -- what the parts of the bridge are told --------------------------------------------------

    def worker_config(self) -> dict[str, int]:
        """What a worker process is started with (its heap and stack, its ``RLIMIT_AS``)."""
        return {"memory_limit": self.memory_limit, "stack_limit": self.stack_limit}

    def load_request(self) -> dict[str, Any]:
        """The limits the worker enforces itself at every load and call."""
        return {"time_limit": self.time_limit, "wall_limit": self.wall_limit, "max_send_bytes": self.max_send_bytes}

    def cap_texts(self) -> dict[str, str]:
        """How a call past each per-turn cap fails (the worker throws these; the kernel's backstop too)."""
        return {
            "messages_text": f"sent more than {self.max_output_messages:,} output messages in one turn "
                             "(the max_output_messages cap)",
            "chars_text": f"sent more than {self.max_output_bytes:,} bytes of output messages in one turn "
                          "(the max_output_bytes cap)",
            "console_text": f"wrote more than {self.max_console_bytes:,} bytes to the console in one turn "
                            "(the max_console_bytes cap)",
        }

    def caps_left(self, messages: int, chars: int, console: int) -> dict[str, Any]:
        """What a turn that has sent so much may still send, with the texts of the caps (for the worker)."""
        return {"messages": self.max_output_messages - messages, "chars": self.max_output_bytes - chars,
                "console": self.max_console_bytes - console, **self.cap_texts()}

    def time_text(self, why: str) -> str:
        """``its 5.0 s time limit`` / ``its 60.0 s wall-clock limit`` (``why``: time or wall)."""
        return f"its {self.time_limit} s time limit" if why == "time" else f"its {self.wall_limit} s wall-clock limit"


class LimitOptions(TypedDict, total=False):
    """The fields of :class:`Limits` as ``hooks_from_js`` keyword arguments (``**Unpack[LimitOptions]``),
    so that an editor completes and a type checker checks them."""

    time_limit: float
    wall_limit: float
    memory_limit: int
    stack_limit: int
    max_send_bytes: int
    max_output_messages: int
    max_output_bytes: int
    max_console_bytes: int


def _seconds(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"hooks_from_js({name}=…): expected a number of seconds, got {type(value).__name__}")
    seconds = float(value)
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"hooks_from_js({name}=…): expected a finite number of seconds > 0, got {value!r}")
    return seconds


def _count(name: str, value: Any) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"hooks_from_js({name}=…): expected an int, got {type(value).__name__} {value!r}")
    if value < 1:
        raise ValueError(f"hooks_from_js({name}=…): expected an int ≥ 1, got {value!r}")
    return int(value)


__all__ = ["MAX_CONSOLE_BYTES", "MAX_OUTPUT_BYTES", "MAX_OUTPUT_MESSAGES", "MAX_SEND_BYTES", "MB", "LimitOptions", "Limits"]

"""Per-request id counters (``M1``, ``C1``, …), as Yao's ``IDGenerator`` hands them out.

A service that writes messages (``ctx.llm.Stream``'s chunks) takes the request's ``next_id(prefix)``
so its ids continue the request's sequence instead of starting a second ``M1``; the runner's shared
counters have exactly this shape. :func:`counters` is the stand-alone default.
"""

from __future__ import annotations

from collections.abc import Callable

NextId = Callable[[str], str]
"""``next_id("M") -> "M3"``: the next id with that prefix in this request."""


def counters() -> NextId:
    """A fresh ``next_id``: each prefix counts from 1 on its own."""
    counts: dict[str, int] = {}

    def next_id(prefix: str) -> str:
        counts[prefix] = counts.get(prefix, 0) + 1
        return f"{prefix}{counts[prefix]}"

    return next_id

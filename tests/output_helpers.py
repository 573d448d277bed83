"""Test helpers for reading a turn's output as a person reads the client."""

from __future__ import annotations

from agentctx_widgets.output import without_echoes as shown

__all__ = ["shown"]

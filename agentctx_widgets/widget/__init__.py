"""ContextView and its kernel-side stream protocol (the only package here that imports Jupyter)."""

from .document import TurnDocument
from .stream import StreamProtocol
from .turn_display import TurnDisplay
from .view import ContextView

__all__ = ["ContextView", "StreamProtocol", "TurnDisplay", "TurnDocument"]

"""ContextView and its kernel-side stream protocol (the only package here that imports Jupyter)."""

from .stream import StreamProtocol
from .view import ContextView

__all__ = ["ContextView", "StreamProtocol"]

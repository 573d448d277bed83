"""Model connectors: anything with ``stream(messages, *, options=None)`` yielding normalised events."""

from .protocol import Model, ModelError
from .scripted import ScriptedModel, ScriptedStream

__all__ = ["Model", "ModelError", "ScriptedModel", "ScriptedStream"]

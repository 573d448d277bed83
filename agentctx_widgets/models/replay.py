"""Record model calls once, replay them forever: regression notebooks that run offline, byte for byte.

``ReplayModel(path, model=real_model)`` answers each request from the recording file when it is
there, and otherwise sends it to ``model`` and appends what came back. ``ReplayModel(path)`` (or the
environment variable ``AGENTCTX_REPLAY=replay``, for CI) never calls a model: a request that is not
in the file raises ``ModelError`` (code ``REPLAY_MISS``) naming its hash and showing how it differs
from the nearest recorded request.

The file is JSON Lines, one model call a line: ``{"key", "request": {"messages", "options"}, "model",
"events": [...]}``. The key is a hash of the normalised request — the Context messages the model
was sent, and its options (tools included) — as canonical JSON. The same request seen again (a retry
after an error) takes the next recording with that key, so a failure and its retry replay in order;
the last one repeats (re-running a notebook replays, it does not record again). A failed call is
recorded too (its ``error`` event), so the ``Error`` hook's path replays; with a ``model``, a request
whose recordings are used up and ended in an error is sent again (recording the retry). An
interrupted call is not recorded.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import threading
import warnings
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import orjson

from ..context import is_record
from .protocol import ModelError

MODES = ("auto", "replay", "record")
"""``auto``: replay what is recorded, record the rest (needs ``model``); ``replay``: never call the
model; ``record``: always call the model and append (re-recording)."""
ENV_MODE = "AGENTCTX_REPLAY"
DIFF_LINES = 40


def request_of(messages: list[dict], options: dict | None) -> dict:
    """The normalised request a recording is keyed by (records left out; options as given)."""
    return {"messages": [m for m in messages if not is_record(m)], "options": options or {}}


def request_key(request: dict) -> str:
    """A short stable hash of the request's canonical JSON (sorted keys)."""
    canonical = orjson.dumps(request, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    return hashlib.sha256(canonical).hexdigest()[:16]


class ReplayModel:
    """A :class:`~agentctx_widgets.models.Model` that records to, and replays from, ``path``."""

    def __init__(self, path: str | os.PathLike, model: Any = None, *, mode: str | None = None) -> None:
        mode = mode or os.environ.get(ENV_MODE) or "auto"
        if mode not in MODES:
            raise ValueError(f"ReplayModel(mode=…) / ${ENV_MODE}: expected one of {', '.join(MODES)}, got {mode!r}")
        if mode == "record" and model is None:
            raise ValueError("ReplayModel(mode='record') needs the model to record from: ReplayModel(path, model=…)")
        if model is not None and not callable(getattr(model, "stream", None)):
            raise TypeError(f"ReplayModel(model=…): expected a model with stream(messages), got {model!r}")
        self.path = Path(path)
        self.model = model
        self.mode = mode
        self.recordings: dict[str, list[dict]] = {}
        self.replayed = 0
        self.recorded = 0
        self._seen: dict[str, int] = {}
        self._lock = threading.Lock()
        self._load()

    def __repr__(self) -> str:
        return f"ReplayModel({str(self.path)!r}, model={self.model!r}, mode={self.mode!r})"

    @property
    def model_id(self) -> str | None:
        """The wrapped model's id, else the one the recordings name (for the context-window gauge)."""
        inner = getattr(self.model, "model_id", None) or getattr(self.model, "model", None)
        if isinstance(inner, str):
            return inner
        return next((entry["model"] for entries in self.recordings.values() for entry in entries
                     if isinstance(entry.get("model"), str)), None)

    def rewind(self) -> None:
        """Start again from the first recording of every request (a notebook re-run from the top)."""
        with self._lock:
            self._seen.clear()

    def stream(self, messages: list[dict], *, options: dict | None = None) -> Iterator[dict] | AsyncIterator[dict]:
        request = request_of(messages, options)
        key = request_key(request)
        with self._lock:
            entries = self.recordings.get(key)
            seen = self._seen.get(key, 0)
            live = self.model is not None and self.mode != "replay"
            if entries and self.mode != "record" and (seen < len(entries) or not live or not _failed(entries[-1])):
                self._seen[key] = seen + 1
                self.replayed += 1
                return iter([dict(event) for event in entries[min(seen, len(entries) - 1)]["events"]])
        if self.model is None or self.mode == "replay":
            raise self._miss(key, request)
        return self._record(key, request, messages, options)

    # -- recording ------------------------------------------------------------------------------

    async def _record(self, key: str, request: dict, messages: list[dict], options: dict | None) -> AsyncIterator[dict]:
        events: list[dict] = []
        stream = self.model.stream(messages, options=options)
        try:
            if hasattr(stream, "__aiter__"):
                async for event in stream:
                    events.append(event)
                    yield event
            else:
                for event in stream:
                    events.append(event)
                    yield event
        except ModelError as failure:
            events.append({"type": "error", "error": failure.to_event_error()})
            self._append(key, request, events)
            raise
        self._append(key, request, events)

    def _append(self, key: str, request: dict, events: list[dict]) -> None:
        entry = {"key": key, "model": self.model_id, "request": request, "events": events}
        line = orjson.dumps(entry, option=orjson.OPT_NON_STR_KEYS) + b"\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "ab") as file:
                file.write(line)
            self.recordings.setdefault(key, []).append(entry)
            self._seen[key] = len(self.recordings[key])
            self.recorded += 1

    def _load(self) -> None:
        if not self.path.exists():
            return
        if not self.path.is_file():
            raise ValueError(f"ReplayModel: {self.path} is not a regular file")
        for number, line in enumerate(self.path.read_bytes().splitlines(), start=1):
            if not line.strip():
                continue
            try:
                entry = orjson.loads(line)
            except orjson.JSONDecodeError as error:
                warnings.warn(f"ReplayModel: {self.path.name} line {number} is not JSON ({error}); skipped",
                              RuntimeWarning, stacklevel=3)
                continue
            if not (isinstance(entry, dict) and isinstance(entry.get("key"), str) and isinstance(entry.get("events"), list)):
                warnings.warn(f"ReplayModel: {self.path.name} line {number} is not a recording "
                              "({key, request, events}); skipped", RuntimeWarning, stacklevel=3)
                continue
            self.recordings.setdefault(entry["key"], []).append(entry)

    # -- misses -----------------------------------------------------------------------------------

    def _miss(self, key: str, request: dict) -> ModelError:
        where = f"{self.path.name}" if self.path.exists() else f"{self.path} (no such file yet)"
        text = f"replay: request {key} is not recorded in {where}"
        nearest = self._nearest(request)
        if nearest is not None:
            text += f"; it differs from the nearest recorded request ({nearest['key']}):\n" + _diff(nearest["request"], request)
        else:
            text += "; nothing is recorded yet"
        text += "\n(record it: ReplayModel(path, model=<a real model>) with the network and a key)"
        return ModelError(text, code="REPLAY_MISS", provider="replay")

    def _nearest(self, request: dict) -> dict | None:
        best, best_score = None, -1.0
        wanted = _lines(request)
        for entries in self.recordings.values():
            candidate = entries[-1]
            score = difflib.SequenceMatcher(None, _lines(candidate.get("request")), wanted, autojunk=False).ratio()
            if score > best_score:
                best, best_score = candidate, score
        return best


def _failed(entry: dict) -> bool:
    events = entry.get("events") or []
    return bool(events) and isinstance(events[-1], dict) and events[-1].get("type") == "error"


def _lines(request: Any) -> list[str]:
    return orjson.dumps(request, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS).decode().splitlines()


def _diff(recorded: Any, wanted: Any) -> str:
    lines = list(difflib.unified_diff(_lines(recorded), _lines(wanted), "recorded", "this request", n=2, lineterm=""))
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], f"… ({len(lines) - DIFF_LINES} more diff lines)"]
    return "\n".join(lines)

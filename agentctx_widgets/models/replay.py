"""Record model calls once, replay them forever: regression notebooks that run offline, byte for byte.

``ReplayModel(path, model=real_model)`` answers each request from the recording file when it is
there, and otherwise sends it to ``model`` and appends what came back. ``ReplayModel(path)`` (or the
environment variable ``AGENTCTX_REPLAY=replay``, for CI) never calls a model: a request that is not
in the file raises ``ModelError`` (code ``REPLAY_MISS``) naming its hash and showing how it differs
from the nearest recorded request.

The file is JSON Lines, one model call a line: ``{"key", "model", "request": {"model", "messages",
"options"}, "events": [...], "prices"?}`` (``prices``: below). The key is a hash of the normalised
request as canonical JSON: the model (``provider:model`` and the connector's own options, so two
providers or two temperatures are two requests), the Context messages it was sent, and the turn's options (tools included). Without a
``model``, a request is looked up by its messages and options alone; if those were recorded for several
models, ``model=`` must say which. The same request seen again (a retry
after an error) takes the next recording with that key, so a failure and its retry replay in order;
the last one repeats (re-running a notebook replays, it does not record again). A failed call is
recorded too (its ``error`` event), so the ``Error`` hook's path replays; with a ``model``, a request
whose recordings are used up and ended in an error is sent again (recording the retry). An
interrupted call is not recorded, nor a failure of the environment rather than of the model
(:data:`NOT_RECORDED`: no connection, a timeout, a missing or refused key), which would otherwise
replay forever once the network is back.

**Recorded prices.** A recorded call keeps the genai-prices table's prices in effect for the model that
answered (the ``done`` event's ``responseModel``, else the ``start`` event's ``model`` and ``provider``):
``"prices": {"model": "gpt-4o", "rates": {"input": "2.5", "output": "10", "cache_read": "1.25"},
"source": "genai-prices 0.2.3 (bundled data)"}`` (USD per million tokens as decimal strings,
``context.cost.table_prices``; a long-context tier keeps its base rate). A replayed call's ``done`` event
carries them as ``recordedPrices``, so ``result.cost`` prices it at them (``Cost.source`` ``recorded:
genai-prices 0.2.3 (bundled data)``) and a regression notebook's cost does not change when the table is
updated; ``result.reprice()`` shows both. A model the table does not know gets no ``prices`` (it stays
unpriced), pricing never stops a recording, and an older line without ``prices`` is priced by today's
table. The key hashes the request only, so ``prices`` is checked for its shape and size, not its truth.

A recording file travels with notebooks and pull requests, so it is read as untrusted input
(:class:`ReplayFileError`, naming the file and line, refuses it whole before anything replays): only a
regular file of at most ``MAX_FILE_BYTES``, lines read one at a time of at most ``MAX_LINE_BYTES``, no
line nested deeper than the session store's ``MAX_DEPTH`` nor with a key twice in one object, at most
``MAX_EVENTS`` events a recording, every event an object with a string ``type``, and every key
recomputed from its own request: a line whose key is not its request's hash (a forged or hand-edited
recording, which would otherwise answer another request) is refused. Appending never follows a
symlink (``O_NOFOLLOW``), and a recording that the next load would refuse is not written.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import heapq
import os
import threading
import warnings
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import orjson

from ..context import is_record
from ..context.cost import PriceError, recorded_price, table_prices
from ..context.safe_write import open_append, open_regular
from ..context.store import RefusedJSON, decode_json  # the session store's line checks: depth, keys twice
from .protocol import ModelError
from .stream_events import events_of

MODES = ("auto", "replay", "record")
"""``auto``: replay what is recorded, record the rest (needs ``model``); ``replay``: never call the
model; ``record``: always call the model and append (re-recording)."""
ENV_MODE = "AGENTCTX_REPLAY"
DIFF_LINES = 40
NOT_RECORDED = frozenset({"CONNECTION", "TIMEOUT", "AUTHENTICATION", "PERMISSION_DENIED", "REPLAY_MISS"})
"""Error codes that say something about the environment, not the model: such calls are not recorded."""
MAX_FILE_BYTES = 128 * 1024 * 1024
"""A recording file larger than this is refused by its size, before a byte of it is read."""
MAX_LINE_BYTES = 16 * 1024 * 1024
"""A line (one model call) longer than this is refused; lines are read at most this + 1 bytes at a time."""
MAX_EVENTS = 100_000
"""A recording with more events than this is refused (a long streamed answer is a few thousand)."""
NEAREST_CANDIDATES = 3
"""A miss diffs against this many recordings, picked by a linear-time score from all of them."""


class ReplayFileError(ValueError):
    """A recording file ``ReplayModel`` refuses to read or write; the message names the file and line."""


def request_of(messages: list[dict], options: dict | None, model: Any = None) -> dict:
    """The normalised request a recording is keyed by (records left out; options as given).

    ``model`` is the wrapped model's identity (:func:`identity_of`), ``None`` when unknown.
    """
    return {"model": model, "messages": [m for m in messages if not is_record(m)], "options": options or {}}


def identity_of(model: Any) -> Any:
    """What tells one model from another in a recording: ``model.replay_identity()`` when it has one
    (the SDK connectors: ``{"model": "anthropic:claude-sonnet-4-5", "options": {...}}``), else its id."""
    identity = getattr(model, "replay_identity", None)
    if callable(identity):
        return identity()
    name = getattr(model, "model_id", None) or getattr(model, "model", None)
    return {"model": name if isinstance(name, str) else type(model).__name__}


def _content_key(request: dict) -> str:
    return request_key({**request, "model": None})


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
        self._by_content: dict[str, set[str]] = {}  # key without the model -> full keys recorded
        self.identity = identity_of(model) if model is not None else None
        self.keep_prices = True
        """Whether a recorded line keeps the table's prices (module docstring). A suite's recorder sets it
        false: its turns keep each call's exact cost themselves (``suite/costs.py``), of which a line's
        base-tier rates would be a second, rougher record."""
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
        for entries in self.recordings.values():
            for entry in entries:
                name = (entry.get("model") or {}).get("model") if isinstance(entry.get("model"), dict) else None
                if isinstance(name, str):
                    return name.split(":", 1)[-1]
        return None

    def rewind(self) -> None:
        """Start again from the first recording of every request (a notebook re-run from the top)."""
        with self._lock:
            self._seen.clear()

    def stream(self, messages: list[dict], *, options: dict | None = None) -> Iterator[dict] | AsyncIterator[dict]:
        request = request_of(messages, options, self.identity)
        key = request_key(request) if self.model is not None else self._key_without_model(request)
        with self._lock:
            entries = self.recordings.get(key)
            seen = self._seen.get(key, 0)
            live = self.model is not None and self.mode != "replay"
            if entries and self.mode != "record" and (seen < len(entries) or not live or not _failed(entries[-1])):
                self._seen[key] = seen + 1
                self.replayed += 1
                return iter(_replayed(entries[min(seen, len(entries) - 1)]))
        if self.model is None or self.mode == "replay":
            raise self._miss(key, request)
        return self._record(key, request, messages, options)

    def _key_without_model(self, request: dict) -> str:
        keys = sorted(self._by_content.get(_content_key(request), ()))
        if len(keys) > 1:
            models = sorted({orjson.dumps(self.recordings[k][-1].get("model")).decode() for k in keys})
            raise ModelError(f"replay: this request was recorded for {len(keys)} models ({', '.join(models)}); "
                             "pass the one you mean: ReplayModel(path, model=...)", code="REPLAY_MISS", provider="replay")
        return keys[0] if keys else request_key(request)

    # -- recording ------------------------------------------------------------------------------

    async def _record(self, key: str, request: dict, messages: list[dict], options: dict | None) -> AsyncIterator[dict]:
        # An ``error`` event ends the call: it is recorded *before* it is handed on, because the
        # consumer (the runner) raises on it and closes this generator without reading further —
        # a close after the error is the end of a failed call, not an interruption.
        events: list[dict] = []
        stream = events_of(self.model.stream(messages, options=options))
        try:
            async with contextlib.aclosing(stream):
                async for event in stream:
                    events.append(event)
                    if _is_error(event):
                        self._append(key, request, events)
                        yield event
                        return
                    yield event
        except ModelError as failure:
            events.append({"type": "error", "error": failure.to_event_error()})
            self._append(key, request, events)
            raise
        self._append(key, request, events)

    def _append(self, key: str, request: dict, events: list[dict]) -> None:
        last = events[-1] if events else None
        if _is_error(last) and isinstance(last.get("error"), dict) and last["error"].get("code") in NOT_RECORDED:
            return
        entry = {"key": key, "model": request["model"], "request": request, "events": events}
        prices = prices_of(events) if self.keep_prices else None
        if prices is not None:
            entry["prices"] = prices
        line = orjson.dumps(entry, option=orjson.OPT_NON_STR_KEYS)
        problem = _refusal(line) or _entry_problem(orjson.loads(line))
        if problem:
            raise ReplayFileError(f"ReplayModel: this model call cannot be recorded in {self.path}: as a line it "
                                  f"{problem}; nothing written")
        line += b"\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = open_append(self.path, "ReplayModel")
            try:
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":  # a cut last line: start a new one
                    line = b"\n" + line
                if size + len(line) > MAX_FILE_BYTES:
                    raise ReplayFileError(f"ReplayModel: recording this model call would take {self.path} past "
                                          f"{MAX_FILE_BYTES} bytes (MAX_FILE_BYTES), which a load refuses; "
                                          f"nothing written (record into another file)")
                view = memoryview(line)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            self._index(entry)
            self._seen[key] = len(self.recordings[key])
            self.recorded += 1

    def _index(self, entry: dict) -> None:
        # only the line's checked ``prices`` say what a call cost, never an event's own ``recordedPrices`` (a
        # replay re-recorded, a forged line): dropped once, here, not on every replay
        events = entry["events"]
        for index, event in enumerate(events):
            if "recordedPrices" in event:
                events[index] = {key: value for key, value in event.items() if key != "recordedPrices"}
        self.recordings.setdefault(entry["key"], []).append(entry)
        if isinstance(entry.get("request"), dict):
            self._by_content.setdefault(_content_key(entry["request"]), set()).add(entry["key"])

    def _load(self) -> None:
        if not self.path.exists():  # a dangling symlink too: nothing to load (and appending refuses it)
            return
        fd, info = open_regular(self.path, "ReplayModel")
        with os.fdopen(fd, "rb") as file:
            if info.st_size > MAX_FILE_BYTES:
                raise ReplayFileError(f"ReplayModel: {self.path} is {info.st_size} bytes, over the {MAX_FILE_BYTES}-"
                                      f"byte limit (MAX_FILE_BYTES); refusing to read it")
            entries, read = [], 0
            for number, raw in enumerate(iter(lambda: file.readline(MAX_LINE_BYTES + 1), b""), start=1):
                read += len(raw)
                if read > MAX_FILE_BYTES:
                    raise ReplayFileError(f"ReplayModel: {self.path} grew past {MAX_FILE_BYTES} bytes "
                                          f"(MAX_FILE_BYTES) while being read; refusing it")
                cut = not raw.endswith(b"\n")
                if cut and len(raw) > MAX_LINE_BYTES:
                    raise ReplayFileError(f"ReplayModel: {self.path} line {number} is longer than {MAX_LINE_BYTES} "
                                          f"bytes (MAX_LINE_BYTES); refusing the file")
                entry = self._parse(raw, number)
                if entry is not None:
                    entries.append(entry)
        for entry in entries:  # all or nothing: a refused line above leaves nothing loaded
            self._index(entry)

    def _parse(self, raw: bytes, number: int) -> dict | None:
        """One line's recording; ``None`` (with a warning) for a blank, cut or non-JSON line or one that is
        not a recording at all; raises ``ReplayFileError`` for a line that is refused."""
        if not raw.strip():
            return None
        where = f"ReplayModel: {self.path} line {number}"
        try:
            entry = decode_json(raw)
        except RefusedJSON as refused:
            raise ReplayFileError(f"{where} {refused}; refusing the file") from None
        except orjson.JSONDecodeError as error:
            warnings.warn(f"ReplayModel: {self.path.name} line {number} is not JSON ({error}); skipped",
                          RuntimeWarning, stacklevel=4)
            return None
        if not (isinstance(entry, dict) and isinstance(entry.get("key"), str) and isinstance(entry.get("events"), list)):
            warnings.warn(f"ReplayModel: {self.path.name} line {number} is not a recording "
                          "({key, request, events}); skipped", RuntimeWarning, stacklevel=4)
            return None
        problem = _entry_problem(entry)
        if problem:
            raise ReplayFileError(f"{where} {problem}; refusing the file (re-record it)")
        return entry

    # -- misses -----------------------------------------------------------------------------------

    def _miss(self, key: str, request: dict) -> ModelError:
        if self.path.exists():
            where = f"{self.path.name}"
        elif not self.path.is_absolute():  # the usual cause: a notebook in another folder than the path assumes
            where = f"{self.path} (no such file yet; a relative path counts from the working directory, {Path.cwd()})"
        else:
            where = f"{self.path} (no such file yet)"
        text = f"replay: request {key} is not recorded in {where}"
        nearest = self._nearest(request)
        if nearest is not None:
            recorded = nearest["request"]
            if self.model is None:  # no model to tell apart: compare what was asked, not who was asked
                recorded = {k: v for k, v in recorded.items() if k != "model"}
                request = {k: v for k, v in request.items() if k != "model"}
            text += f"; it differs from the nearest recorded request ({nearest['key']}):\n" + _diff(recorded, request)
        else:
            text += "; nothing is recorded yet"
        text += "\n(record it: ReplayModel(path, model=<a real model>) with the network and a key)"
        return ModelError(text, code="REPLAY_MISS", provider="replay")

    def _nearest(self, request: dict) -> dict | None:
        """The recording most like ``request``: every recording scored by how many of its JSON lines it
        shares with the request (linear in their size, ``difflib``'s ``quick_ratio``), then the best
        ``NEAREST_CANDIDATES`` compared properly."""
        wanted = _lines(request)
        counts = Counter(wanted)
        scored = []
        for entries in self.recordings.values():
            candidate = entries[-1]
            lines = _lines(candidate.get("request"))
            common = sum(min(n, counts[line]) for line, n in Counter(lines).items() if line in counts)
            scored.append((2.0 * common / (len(lines) + len(wanted) or 1), len(scored), candidate, lines))
        best, best_score = None, -1.0
        for _, _, candidate, lines in heapq.nlargest(NEAREST_CANDIDATES, scored, key=lambda row: row[:2]):
            score = difflib.SequenceMatcher(None, lines, wanted, autojunk=False).ratio()
            if score > best_score:
                best, best_score = candidate, score
        return best


def _is_error(event: Any) -> bool:
    return isinstance(event, dict) and event.get("type") == "error"


def _replayed(entry: dict) -> list[dict]:
    """A recording's events as a replay hands them on (copies): its last ``done`` event carries the
    recorded ``prices`` as ``recordedPrices``."""
    events = [dict(event) for event in entry["events"]]  # no event has its own (``_index`` dropped them)
    prices = entry.get("prices")
    done = next((event for event in reversed(events) if event["type"] == "done"), None)
    if isinstance(prices, dict) and done is not None:
        done["recordedPrices"] = orjson.loads(orjson.dumps(prices))
    return events


def prices_of(events: list[dict]) -> dict | None:
    """The table's prices for the model that answered a finished call (module docstring), or ``None``:
    a failed call, a model the table does not know, or anything going wrong while pricing."""
    done = events[-1] if events and isinstance(events[-1], dict) and events[-1].get("type") == "done" else None
    if done is None:
        return None
    start = next((event for event in events if isinstance(event, dict) and event.get("type") == "start"), {})
    try:
        if done.get("recordedPrices") is not None:  # a replay re-recorded: the price it was first recorded with
            recorded_price(done["recordedPrices"])
            return orjson.loads(orjson.dumps(done["recordedPrices"]))
        return table_prices(done.get("usage"), done.get("responseModel") or start.get("model"), start.get("provider"))
    except Exception:  # noqa: BLE001 — a price is a nicety; recording the call is what matters
        return None


def _failed(entry: dict) -> bool:
    events = entry.get("events") or []
    return bool(events) and _is_error(events[-1])


def _refusal(line: bytes) -> str | None:
    """Why the line reader refuses ``line`` (too long, too deep, a key twice), ``None`` when it does not."""
    if len(line) > MAX_LINE_BYTES:
        return f"is {len(line)} bytes, over the {MAX_LINE_BYTES}-byte limit (MAX_LINE_BYTES)"
    try:
        decode_json(line)
    except RefusedJSON as refused:
        return str(refused)
    return None


def _entry_problem(entry: dict) -> str | None:
    """Why a parsed recording is refused: its key is not its request's hash, its ``model`` is not its
    request's, its ``prices`` are not a recorded price (``context.cost.recorded_price``: bounded decimal
    strings), an event is not an object with a string ``type``, or it has too many events."""
    request = entry.get("request")
    if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
        return "has no request ({model, messages, options}) to check its key against"
    try:
        actual = request_key(request)
    except (TypeError, orjson.JSONEncodeError) as error:
        return f"has a request that cannot be hashed ({error})"
    if actual != entry["key"]:
        return (f"has the key {entry['key']!r}, but its request hashes to {actual!r}: a recording answers only "
                f"the request it holds (a forged or hand-edited line)")
    if "model" in entry and entry["model"] != request.get("model"):
        return "names a model that is not its request's model"
    if "prices" in entry:
        try:
            recorded_price(entry["prices"], "prices")
        except PriceError as error:
            return f"has a bad recorded price: {error}"
    events = entry["events"]
    if len(events) > MAX_EVENTS:
        return f"has {len(events)} events, over the {MAX_EVENTS}-event limit (MAX_EVENTS)"
    for index, event in enumerate(events):
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            shown = orjson.dumps(event, option=orjson.OPT_NON_STR_KEYS).decode()
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            return f"has events[{index}] = {shown}, not an event (an object with a string type)"
    return None


def _lines(request: Any) -> list[str]:
    return orjson.dumps(request, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS).decode().splitlines()


def _diff(recorded: Any, wanted: Any) -> str:
    lines = list(difflib.unified_diff(_lines(recorded), _lines(wanted), "recorded", "this request", n=2, lineterm=""))
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], f"… ({len(lines) - DIFF_LINES} more diff lines)"]
    return "\n".join(lines)

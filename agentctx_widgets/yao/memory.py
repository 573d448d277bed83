"""``ctx.memory``: Yao's four memory namespaces, kept in this process with Yao's TTL rules.

Upstream (YaoApp/yao 5a3f9a6a) keeps memory in stores behind ``agent/memory/``; a hook sees
``ctx.memory.{user,team,chat,context}``, each a namespace of one store:

- a namespace is keyed by its id — the user id, team id, chat id, or the request's context id — and
  its keys live under the prefix ``"<space>:<id>:"`` (``agent/memory/memory.go:93-100``), so two users'
  ``Set("key")`` never meet (``memory_integration_test.go:108-318``);
- a namespace whose id is empty does not exist (``memory.go:32-66``; ``memory_integration_test.go:33-44``):
  with no user id, ``ctx.memory.user`` is absent, as in Yao;
- ``Set`` with no TTL (or 0) uses the space's default: none for user and team, 24 h for chat, 30 min for
  context (``memory.go:11-16``, ``namespace.go:30-36``); a negative TTL means no expiry (the store sets an
  expiry only for ``ttl > 0``: gou ``store/xun/xun.go`` ``Set``);
- the JavaScript binding (``agent/context/jsapi.go:784-973``) offers exactly ``Get Set Del Has Keys Len
  Clear Incr Decr GetDel`` — JSAPI.md also lists list operations (``Push``, ``ArrayGet``, …) that the
  binding does not have, so a hook calling them fails in Yao; we offer what the binding offers
  (:data:`JS_METHODS`). ``Set``'s third argument is in **milliseconds** (``jsapi.go:824-829``), though
  JSAPI.md:1275 and :1329 say seconds; the code decides;
- ``Del("prefix*")`` deletes every key the pattern matches (``namespace.go:43-46``, the store's SQL
  ``LIKE``); ``Incr`` reads a non-number as 0, truncates a float, and drops any TTL (gou
  ``store/xun/xun.go`` ``Incr``/``toInt64``); its result is an int32, as the binding returns it
  (``jsapi.go:918-921``);
- the request's ``context`` namespace is cleared when the request's context is released
  (``agent/context/context.go:93-99``); user/team/chat persist — here, for the life of the
  :class:`MemoryStore` (a notebook session).

Differences, on purpose: an expired key is absent everywhere (upstream's ``Incr`` would count on from a
value the cache still held after expiry); ``Keys()`` lists keys in the order they were last set (the
store's order is a map's); values are stored as JSON copies, so a value that is not JSON is refused at
``Set`` (what the bridge would refuse too). The clock is injectable, so TTLs are testable without sleeping.
"""

from __future__ import annotations

import copy
import fnmatch
from dataclasses import dataclass
from typing import Any

from .clock import SYSTEM_CLOCK, Clock
from .values import YaoServiceError, js_int, js_int32, js_string, json_value

SPACES = ("user", "team", "chat", "context")
"""The namespaces of ``ctx.memory``, in Yao's order (``jsapi.go:757-779``)."""

DEFAULT_TTL_MS = {"user": 0, "team": 0, "chat": 24 * 3600 * 1000, "context": 30 * 60 * 1000}
"""Each space's default TTL in milliseconds, 0 = none (``agent/memory/memory.go:11-16``)."""

JS_METHODS = ("Get", "Set", "Del", "Has", "Keys", "Len", "Clear", "Incr", "Decr", "GetDel")
"""What Yao's JavaScript binding puts on a namespace object (``jsapi.go:790-970``), in its order."""

@dataclass
class _Entry:
    value: Any
    expires_at: int | None  # the wall clock in ms, None = never


class MemoryStore:
    """Every namespace's keys for one session: ``"<space>:<id>:<key>"`` → value and expiry.

    One store plays the four stores Yao configures; what keeps namespaces apart is the prefix, as
    upstream. ``clock`` (:class:`~.clock.Clock`) gives the wall clock the TTLs run on.
    """

    def __init__(self, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self._entries: dict[str, _Entry] = {}
        self.clock = clock

    def memory(self, *, user_id: str = "", team_id: str = "", chat_id: str = "", context_id: str = "") -> Memory:
        """The ``ctx.memory`` of one request: a namespace for each non-empty id (``memory.go:18-69``)."""
        ids = {"user": user_id, "team": team_id, "chat": chat_id, "context": context_id}
        for space, value in ids.items():
            if not isinstance(value, str):
                raise TypeError(f"memory {space}_id: expected a string, got {type(value).__name__}")
        return Memory({space: MemoryNamespace(self, space, value) if value else None for space, value in ids.items()})

    # -- the store, by full key ------------------------------------------------------------
    def _live(self, key: str) -> _Entry | None:
        entry = self._entries.get(key)
        if entry is not None and entry.expires_at is not None and self.clock.wall_ms() >= entry.expires_at:
            del self._entries[key]
            return None
        return entry

    def _keys(self, prefix: str) -> list[str]:
        return [key for key in list(self._entries) if key.startswith(prefix) and self._live(key) is not None]


def _namespace(space: str) -> property:
    """The read-only ``Memory`` attribute of one space: its :class:`MemoryNamespace`, or None."""
    return property(lambda self: self._namespaces[space])


class Memory:
    """``ctx.memory``: the namespaces that exist for this request (an empty id leaves one out)."""

    def __init__(self, namespaces: dict[str, MemoryNamespace | None]) -> None:
        self._namespaces = namespaces

    # the namespaces, read-only: user, team, chat, context (None when that id is empty)
    user, team, chat, context = (_namespace(space) for space in SPACES)

    def present(self) -> tuple[str, ...]:
        """The spaces a hook's ``ctx.memory`` has, for the JavaScript binding to mount."""
        return tuple(space for space in SPACES if self._namespaces[space] is not None)

    def release(self) -> None:
        """End of the request: clear the ``context`` namespace only (``agent/context/context.go:93-99``)."""
        if self.context is not None:
            self.context.Clear()


class MemoryNamespace:
    """One namespace (``user:<id>:`` …) with the methods Yao's JavaScript binding offers.

    Every method takes and returns plain JSON values. Argument errors are Yao's exception texts
    (``jsapi.go:793``, ``815``, ``843``, …); keys are converted with JavaScript's ``String()``,
    as the binding does (``info.Args()[0].String()``).
    """

    def __init__(self, store: MemoryStore, space: str, namespace_id: str) -> None:
        self._store = store
        self.space = space
        self.id = namespace_id
        self._prefix = f"{space}:{namespace_id}:"

    def __repr__(self) -> str:
        return f"MemoryNamespace({self._prefix!r})"

    def _full(self, method: str, args: tuple, needs: str = "a key argument") -> str:
        if not args:
            raise YaoServiceError(f"{method} requires {needs}")
        return self._prefix + js_string(args[0])

    def Get(self, *args: Any) -> Any:  # noqa: N802 - Yao's method names
        """The value, or ``None`` (JavaScript ``null``) when absent or expired."""
        entry = self._store._live(self._full("Get", args))
        return None if entry is None else copy.deepcopy(entry.value)

    def Set(self, *args: Any) -> None:  # noqa: N802
        """``Set(key, value, ttl_ms?)``; a missing or zero TTL is the space's default."""
        if len(args) < 2:
            raise YaoServiceError("Set requires key and value arguments")
        key = self._full("Set", args)
        value = json_value(args[1], "Failed to convert value")
        ttl_ms = 0
        if len(args) >= 3 and _is_number(args[2]):
            ttl_ms = js_int(args[2])
        if ttl_ms == 0:
            ttl_ms = DEFAULT_TTL_MS[self.space]
        expires = self._store.clock.wall_ms() + ttl_ms if ttl_ms > 0 else None
        self._store._entries.pop(key, None)  # a re-set key moves to the end, like a fresh one
        self._store._entries[key] = _Entry(value, expires)

    def Del(self, *args: Any) -> None:  # noqa: N802
        """Delete a key, or every key a ``*`` pattern matches (``Del("cache:*")``)."""
        key = self._full("Del", args)
        if "*" in key:
            for full in self._store._keys(self._prefix):
                if fnmatch.fnmatchcase(full, key):
                    del self._store._entries[full]
        else:
            self._store._entries.pop(key, None)

    def Has(self, *args: Any) -> bool:  # noqa: N802
        return self._store._live(self._full("Has", args)) is not None

    def Keys(self, *args: Any) -> list[str]:  # noqa: N802
        """This namespace's live keys, without the prefix (``namespace.go:48-70``)."""
        return [key[len(self._prefix):] for key in self._store._keys(self._prefix)]

    def Len(self, *args: Any) -> int:  # noqa: N802
        return len(self._store._keys(self._prefix))

    def Clear(self, *args: Any) -> None:  # noqa: N802
        """Delete every key of this namespace only (``namespace.go:91-94``)."""
        for full in self._store._keys(self._prefix):
            del self._store._entries[full]

    def Incr(self, *args: Any) -> int:  # noqa: N802
        """Add ``delta`` (default 1) to the number at ``key`` (absent or not a number: 0); no TTL after."""
        key = self._full("Incr", args)
        return self._add(key, _delta(args))

    def Decr(self, *args: Any) -> int:  # noqa: N802
        key = self._full("Decr", args)
        return self._add(key, -_delta(args))

    def GetDel(self, *args: Any) -> Any:  # noqa: N802
        """The value (or ``None``), deleted."""
        key = self._full("GetDel", args)
        entry = self._store._live(key)
        if entry is None:
            return None
        del self._store._entries[key]
        return entry.value

    def _add(self, key: str, delta: int) -> int:
        entry = self._store._live(key)
        current = entry.value if entry is not None else 0
        current = int(current) if _is_number(current) else 0
        value = current + delta
        self._store._entries.pop(key, None)
        self._store._entries[key] = _Entry(value, None)
        return js_int32(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _delta(args: tuple) -> int:
    return js_int(args[1]) if len(args) >= 2 and _is_number(args[1]) else 1

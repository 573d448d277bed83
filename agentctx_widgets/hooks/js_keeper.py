"""A hook set's worker process, kept loaded: started with the source, replaced after a limit or a kill.

:class:`WorkerKeeper` holds the hook set's engine thread and its current worker (``js_engine``), and
loads the source into each new worker through the :class:`~.js_bridge.Bridge` (the top-level code
runs under the same limits as a call). A worker that hit a limit is dropped and a fresh one is loaded
right after the call, on the engine thread, so the next call finds it ready.
"""

from __future__ import annotations

import orjson

from .errors import HookError, HookLoadError
from .js_bridge import Bridge, Conversation, Overrun, TurnTally
from .js_engine import EngineThread, WorkerDied, WorkerProcess, WorkerSlot
from .js_failures import INTERNAL, load_error
from .js_limits import Limits


class WorkerKeeper:
    """The engine thread of one hook set and its worker, loaded with ``source`` and ``global_specs``."""

    def __init__(self, source: str, global_specs: dict[str, str | None], limits: Limits, bridge: Bridge) -> None:
        self.source, self.global_specs, self.limits, self.bridge = source, global_specs, limits, bridge
        self.engine = EngineThread()
        self.slot = WorkerSlot()
        self.rebuilds = 0  # times the engine was rebuilt after a limit was hit

    def close(self) -> None:
        """Stop the worker once the queued work is done, and the thread with it."""
        self.engine.close(self.slot.close)

    def close_now(self) -> None:
        """Stop the worker at once (a failed load, a KeyboardInterrupt while loading), then the thread."""
        self.slot.close()
        self.engine.close(self.slot.close)

    # -- on the engine thread -------------------------------------------------------------------

    def start(self) -> dict:
        """A fresh worker with the source loaded (in the slot): what the load found. Raises HookLoadError."""
        self.slot.close()
        try:
            worker = WorkerProcess(**self.limits.worker_config())
        except OSError as error:
            raise HookLoadError(f"could not start the JavaScript engine's process: {error}", code=INTERNAL) from None
        self.slot.worker = worker
        request = {"source": self.source, "globals": self.global_specs, **self.limits.load_request(),
                   "caps": self.limits.caps_left(0, 0, 0)}
        call = Conversation(self.limits, None, None, TurnTally(self))
        try:
            result, _ = self.bridge.converse(worker, b"L" + orjson.dumps(request), call)
        except Exception as error:
            self.slot.close()
            raise _load_failure(error) from None
        tripped = result.get("tripped")
        if "load_error" in result or tripped is not None:
            self.slot.close()
            problem = result.get("load_error") or {}
            raise load_error(problem.get("text", ""), tripped, problem.get("phase", "source"),
                             bool(problem.get("internal")))
        return result["loaded"]

    def ready(self) -> WorkerProcess:
        """The current worker, started first when there is none (or it was killed)."""
        worker = self.slot.worker
        if worker is None or worker.killed:
            self.start()
            worker = self.slot.worker
        assert worker is not None
        return worker

    def replace(self, worker: WorkerProcess | None) -> None:
        """After a limit, a kill or an internal failure: drop ``worker``; a fresh one is loaded right after
        this call (on the engine thread, before the next call). Once per worker."""
        if worker is None or self.slot.worker is not worker:
            if worker is not None:
                worker.close()
            return
        self.rebuilds += 1
        self.slot.close()
        try:
            self.engine.submit(self._rebuild_quietly)
        except RuntimeError:  # closed
            pass

    def _rebuild_quietly(self) -> None:
        if self.slot.worker is None:
            try:
                self.start()
            except HookError:
                pass  # the next call tries again and reports it


def _load_failure(error: Exception) -> HookLoadError:
    """A load that did not come back: past its limits in native code, a dead worker, or ours."""
    if isinstance(error, Overrun):
        return HookLoadError("the top-level code ran past the time limit in code that does not yield (a "
                             "built-in on a huge array-like?); its engine process was stopped", code="HOOK_TIMEOUT")
    if isinstance(error, WorkerDied):
        return HookLoadError(f"its JavaScript engine process ended while loading the source ({error})", code=INTERNAL)
    return HookLoadError(f"internal error in the JavaScript bridge while loading: {type(error).__name__}: "
                         f"{error}", code=INTERNAL)


__all__ = ["WorkerKeeper"]

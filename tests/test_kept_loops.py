"""The kept event loops turns run on (hooks/caller.py): a lone turn always gets the same one (so one turn's
model clients and connections serve the next), turns running at once from several threads (a suite's
cases) each get a kept loop of their own instead of a fresh ``asyncio.run`` each, up to MAX_KEPT_LOOPS."""

from __future__ import annotations

import asyncio
import threading

from agentctx_widgets.hooks import caller


def where() -> tuple[str, int]:
    async def main() -> tuple[str, int]:
        return threading.current_thread().name, id(asyncio.get_running_loop())
    return caller.run_on_worker(main, lambda: None)


def at_once(count: int) -> list[tuple[str, int]]:
    """``count`` turns that are all running before any ends (a barrier inside each turn)."""
    barrier = threading.Barrier(count, timeout=60)
    seen: list[tuple[str, int]] = []

    async def main() -> None:
        await asyncio.to_thread(barrier.wait)
        seen.append((threading.current_thread().name, id(asyncio.get_running_loop())))

    threads = [threading.Thread(target=caller.run_on_worker, args=(main, lambda: None)) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not any(thread.is_alive() for thread in threads)
    return seen


def test_a_lone_turn_gets_the_same_kept_loop_each_time():
    first, second = where(), where()
    assert first == second and first[0] == "agentctx-turn-loop"


def test_turns_at_once_each_get_a_kept_loop_of_their_own():
    seen = at_once(3)
    assert len(seen) == 3 and {name for name, _ in seen} == {"agentctx-turn-loop"}
    assert len({loop for _, loop in seen}) == 3


def test_beyond_the_cap_a_turn_runs_on_a_fresh_loop(monkeypatch):
    monkeypatch.setattr(caller, "MAX_KEPT_LOOPS", 1)
    monkeypatch.setattr(caller, "_kept", [])
    seen = at_once(2)
    assert sorted(name for name, _ in seen) == ["agentctx-run-turn", "agentctx-turn-loop"]

"""The kept event loops turns run on (hooks/caller.py): a lone turn always gets the same one (so one turn's
model clients and connections serve the next), turns running at once from several threads (a suite's
cases) each get a kept loop of their own instead of a fresh ``asyncio.run`` each, up to MAX_KEPT_LOOPS."""

from __future__ import annotations

import asyncio
import threading

import pytest

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


def test_a_kept_loop_is_held_until_its_turns_task_ends_even_after_the_wait_gives_up(monkeypatch):
    """Ctrl-C waits at most STOP_GRACE for the task; one that outlives it keeps its loop, so the next turn
    gets another loop rather than the one whose old task, ending, would cancel the new turn's."""
    import signal

    monkeypatch.setattr(caller, "STOP_GRACE", 0.05)
    release = threading.Event()
    entered = threading.Event()
    held: list[int] = []

    async def stubborn() -> None:
        held.append(id(asyncio.get_running_loop()))
        entered.set()
        while not release.is_set():  # ignores its cancellation until told
            try:
                await asyncio.sleep(0.01)
            except asyncio.CancelledError:
                continue

    def interrupt() -> None:
        entered.wait(60)
        signal.raise_signal(signal.SIGINT)

    threading.Thread(target=interrupt).start()
    with pytest.raises(KeyboardInterrupt):
        caller.run_on_worker(stubborn, lambda: None)
    try:
        name, loop = where()
        assert name == "agentctx-turn-loop" and loop != held[0]  # the stubborn task still holds its loop
    finally:
        release.set()


def test_a_ctrl_c_before_the_task_started_gives_the_loop_back_and_the_late_task_does_nothing(monkeypatch):
    """Ctrl-C while the task waits to start (its loop busy): the calling thread gives the loop back as it
    raises, and the task, when the loop comes to it (another turn may hold the loop by then), does not run."""
    import signal

    monkeypatch.setattr(caller, "_kept", [])
    kept = caller._claim_kept_loop()
    kept.release()
    unblock, blocked, scheduled = threading.Event(), threading.Event(), threading.Event()
    kept.loop.call_soon_threadsafe(lambda: (blocked.set(), unblock.wait(60)))  # the loop is busy
    assert blocked.wait(60)
    real = asyncio.run_coroutine_threadsafe

    def schedule(coroutine, loop):
        future = real(coroutine, loop)
        scheduled.set()
        return future

    monkeypatch.setattr(caller.asyncio, "run_coroutine_threadsafe", schedule)
    ran: list[bool] = []

    async def main() -> None:
        ran.append(True)

    def interrupt() -> None:
        scheduled.wait(60)
        signal.raise_signal(signal.SIGINT)

    threading.Thread(target=interrupt).start()
    try:
        with pytest.raises(KeyboardInterrupt):
            caller.run_on_worker(main, lambda: None)
        assert not kept.busy  # given back at once, though the task is still queued
    finally:
        unblock.set()
    monkeypatch.setattr(caller.asyncio, "run_coroutine_threadsafe", real)
    name, loop = where()  # runs after the queued task on the same loop
    assert loop == id(kept.loop) and ran == []

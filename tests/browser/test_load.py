"""Load, reloads and a kernel restart, through the real stack (JupyterLab + Chromium).

Sizes come from the environment so CI stays fast and bench/load.py can run the full figures:
AGENTCTX_LOAD_DELTAS (default 100,000 deltas, over AGENTCTX_LOAD_MESSAGES = deltas / 1,000 messages)
and AGENTCTX_RELOADS (default 3 page reloads during one stream).
"""

from __future__ import annotations

import pytest

from hardening_helpers import env_int, run_load_in_browser, run_reloads

pytestmark = pytest.mark.browser

MB = 1024 * 1024


def test_many_deltas_over_many_messages_lose_nothing_and_memory_comes_back(lab):
    deltas = env_int("AGENTCTX_LOAD_DELTAS", 100_000)
    messages = env_int("AGENTCTX_LOAD_MESSAGES", max(1, deltas // 1_000))
    figures = run_load_in_browser(lab, deltas, messages)
    assert figures["lost"] == []                               # the kernel's own state is exact
    assert len(figures["expected"]) == messages
    assert figures["rendered"] == figures["expected"]          # the page shows exactly the kernel's state
    # kernel: the view holds the text (5 bytes a delta) and a few copies of it, not a record per delta
    assert figures["rss_growth"] < 32 * MB + 10 * figures["text_bytes"], figures["rss_growth"]
    # page: clearing the outputs gives back what they took (within a quarter of it, or 4 MB)
    taken = figures["heap_full"] - figures["heap_start"]
    assert figures["heap_cleared"] - figures["heap_start"] < max(4 * MB, taken // 4), figures
    assert figures["heap_closed"] - figures["heap_start"] < max(4 * MB, taken // 4), figures
    print({k: v for k, v in figures.items() if k not in ("rendered", "expected")})


def test_page_reloads_during_a_stream_always_end_on_the_kernels_state(lab):
    rounds = env_int("AGENTCTX_RELOADS", 3)
    results = run_reloads(lab, rounds)
    assert len(results) == rounds
    for result in results:
        assert result["rendered"] == result["expected"], result["round"]
    # every round added its deltas: the last state holds them all (10 ids, 5 characters a delta)
    assert results[-1]["chars"] == 5 * 10_000 * rounds - 10  # each id's text is stripped of its final space
    print("reloads:", [(r["round"], r["mid_stream"], r["equal"]) for r in results])

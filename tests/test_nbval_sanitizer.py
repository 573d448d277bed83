"""The shipped nbval sanitizer (agentctx_widgets/nbval_sanitize.cfg) and this repository's copy."""

from __future__ import annotations

import configparser
import re
from pathlib import Path

import agentctx_widgets

REPO = Path(__file__).resolve().parent.parent


def _rules(path: Path) -> list[tuple[str, str]]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(path)
    return [(parser[s]["regex"], parser[s]["replace"]) for s in parser.sections()]


def test_shipped_sanitizer_masks_only_what_changes_between_runs() -> None:
    shipped = Path(agentctx_widgets.__file__).with_name("nbval_sanitize.cfg")
    rules = _rules(shipped)
    assert rules == _rules(REPO / "notebooks" / "sanitize.cfg")

    def sanitize(text: str) -> str:
        for regex, replace in rules:
            text = re.sub(regex, replace, text)
        return text

    assert sanitize('{"model_id": "3f2a9c0e5b7d4e1f8a6b2c9d0e1f2a3b"}') == '{"model_id": "WIDGET-MODEL-ID"}'
    # a standard client's chunk: the epoch seconds of "created" change on every run (issue 12)
    assert sanitize("{'id': 'x', 'object': 'chat.completion.chunk', 'created': 1796171073, 'model': 'yao-agent'}") == (
        "{'id': 'x', 'object': 'chat.completion.chunk', 'created': EPOCH-S, 'model': 'yao-agent'}")
    assert sanitize('"created": 1796171073') == '"created": EPOCH-S' and sanitize("created 1796171073") == "created 1796171073"
    assert sanitize("turn done: 4 in + 2 out = 6 tokens (estimate), 35 ms, hooks: Create") == (
        "turn done: 4 in + 2 out = 6 tokens (estimate), N ms, hooks: Create"
    )
    assert sanitize("at 2026-11-29T14:05:00.123Z id 1764424800123") == "at TIMESTAMP id EPOCH-MS"
    assert sanitize('"id": "progress_1795961220148"') == '"id": "progress_EPOCH-MS"'  # JS Date.now() in an id
    assert sanitize("<Foo object at 0x7f3a2b1c0d90>") == "<Foo object at 0xADDRESS>"
    assert sanitize("chatcmpl-abc123 9b2f6d1e-4c3a-4f8e-9d7b-1a2b3c4d5e6f") == "chatcmpl-ID UUID"
    pinned = "total: 51 tokens (estimate) = 0.03% of 200,000\nhook set greet (JavaScript): Create, Done"
    assert sanitize(pinned) == pinned

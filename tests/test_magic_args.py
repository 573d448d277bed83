"""``_magic_args``: the argument parsers behind ``%agentctx`` (the magics themselves: test_magics.py)."""

from __future__ import annotations

import math

import pytest

from agentctx_widgets._magic_args import MagicError, parse_magic


def test_parse_magic_keeps_quoted_text_whole() -> None:
    parsed = parse_magic("run chat 'hello there, \"friend\"' --hooks h --no-stream --accept standard")
    assert parsed.name == "run"
    assert parsed.args.text == 'hello there, "friend"'
    assert (parsed.args.hooks, parsed.args.stream, parsed.args.accept) == ("h", False, "standard")
    assert parse_magic("replay s.jsonl --speed inf").args.speed == math.inf
    with pytest.raises(MagicError, match="--speed"):
        parse_magic("replay s.jsonl --speed nan")

"""Duration chips in the static document (html/outputs.py) for tests/vectors/durations.json, the cases
the live view draws the same way (js/test/render-durations.test.js): a Yao message or block with no
measured time (``duration_ms`` 0) carries no chip, under a millisecond reads ``<1 ms``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_html import parse

from agentctx_widgets.html.outputs import Options, render_outputs
from agentctx_widgets.output.delta import apply_message, new_state

VECTORS = json.loads((Path(__file__).parent / "vectors" / "durations.json").read_text())


def rendered(message: dict):
    return parse(render_outputs(apply_message(new_state(), message), Options()))


def chip_text(tree, testid: str):
    chips = [span for span in tree.find_all("span") if span.attrs.get("data-testid") == testid]
    assert len(chips) <= 1
    return chips[0].text() if chips else None


@pytest.mark.parametrize("case", VECTORS["messages"], ids=lambda c: json.dumps(c["metadata"]))
def test_message_duration_chip(case):
    tree = rendered({"id": "m", "type": "text", "props": {"content": "hi"}, "done": True, "metadata": case["metadata"]})
    assert chip_text(tree, "actx-duration") == case["chip"]


@pytest.mark.parametrize("case", VECTORS["blocks"], ids=lambda c: json.dumps(c["block"]))
def test_block_duration_chip(case):
    tree = rendered({"id": "m", "type": "text", "props": {"content": "hi"}, "done": True, "group_id": "B1",
                     "metadata": {"block": case["block"]}})
    assert "Block B1" in tree.find("div", "actxd-group-title").text()
    assert chip_text(tree, "actx-block-duration") == case["chip"]


def test_nbval_compares_a_document_with_a_chip_and_one_without_alike():
    """A reply replayed in 0 ms has no chip, in 1 ms one: the shipped sanitizer masks the chip whole."""
    import configparser
    import re

    import agentctx_widgets

    parser = configparser.ConfigParser(interpolation=None)
    parser.read(Path(agentctx_widgets.__file__).with_name("nbval_sanitize.cfg"))
    rules = [(parser[s]["regex"], parser[s]["replace"]) for s in parser.sections()]

    def sanitized(metadata: dict) -> str:
        text = render_outputs(apply_message(new_state(), {"id": "m", "type": "text", "props": {"content": "hi"},
                                                          "done": True, "group_id": "B1", "metadata": metadata}),
                              Options())
        for regex, replace in rules:
            text = re.sub(regex, replace, text)
        return text

    block = {"id": "B1", "type": "llm"}
    none = sanitized({"duration_ms": 0, "chunk_count": 3, "block": {**block, "duration_ms": 0}})
    some = sanitized({"duration_ms": 1, "chunk_count": 3, "block": {**block, "duration_ms": 2}})
    assert "actxd-duration" in render_outputs(apply_message(new_state(), {
        "id": "m", "type": "text", "props": {"content": "hi"}, "metadata": {"duration_ms": 1, "chunk_count": 3}}), Options())
    assert none == some and "actxd-duration" not in some

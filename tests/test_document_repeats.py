"""Output messages that repeat a block of a reply shown above fold into one line, in the static
document's HTML and in its text (widget/document.py, html/outputs.py): tests/vectors/repeats.json,
the cases the live view folds alike (js/test/render-repeats.test.js); docs/decisions.md has the rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_html import parse

from agentctx_widgets.output.delta import apply_message, new_state
from agentctx_widgets.widget.document import TurnPart

VECTORS = json.loads((Path(__file__).parent / "vectors" / "repeats.json").read_text())["cases"]


def part(case: dict, *, start: int = 0) -> TurnPart:
    state = new_state()
    for message in case["outputs"]:
        state = apply_message(state, message)
    context = [m for m in case["entries"] if not m.get("pending")]
    pending = next(({k: v for k, v in m.items() if k != "pending"} for m in case["entries"] if m.get("pending")), None)
    return TurnPart(title="t", context=context, outputs=state, pending=pending, start=start)


@pytest.mark.parametrize("case", VECTORS, ids=[c["name"] for c in VECTORS])
def test_the_html_folds_what_repeats_the_reply_and_keeps_it_reachable(case):
    tree = parse(part(case).html(css=False))
    outs = tree.find_all("div", "actxd-out")
    folded = [o for o in outs if o.attrs.get("data-repeats") == "reply"]
    assert [o.attrs["data-output-id"] for o in folded] == case["folded"]
    assert [o.find("summary", "actxd-repeat-line").text() for o in folded] == case["lines"]
    for out in folded:
        details = out.find("details", "actxd-repeat")
        assert "open" not in details.attrs  # one line, opening to the whole message
    assert {o.attrs["data-output-id"] for o in outs} == {m["id"] for m in case["outputs"]}  # nothing dropped
    for message in case["outputs"]:
        content = message["props"].get("content") or message["props"].get("message")
        if content:
            assert content in tree.find("div", data_output_id=message["id"]).text()


@pytest.mark.parametrize("case", VECTORS, ids=[c["name"] for c in VECTORS])
def test_the_text_says_each_thing_once(case):
    lines = part(case).text().splitlines()
    for message in case["outputs"]:
        [line] = [line for line in lines if line.startswith(f"({message['type']} {message['id']}")]
        if message["id"] in case["folded"]:
            assert line.endswith(") as in the reply above"), line
        else:
            assert "as in the reply above" not in line


def test_a_reply_among_the_earlier_messages_is_not_shown_so_its_output_stays_whole():
    case = VECTORS[0]
    tree = parse(part(case, start=len(case["entries"]) - 1).html(css=False))  # only the last reply is shown
    folded = [o.attrs["data-output-id"] for o in tree.find_all("div", "actxd-out") if o.attrs.get("data-repeats")]
    assert folded == ["r2_0"]

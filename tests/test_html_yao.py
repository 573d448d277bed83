"""The static document of a Yao turn (html/outputs.py): blocks titled from ``metadata.block``, duration
chips, the ``execute`` family as the CUI 66cb383f shows it (chatbox/messages/Execute and the semantic
views). Labels are worked out by hand from the CUI source; the stream comes from YaoOutput through
SeedViewBridge with a fake clock, folded as the view folds it.
"""

from __future__ import annotations

from fakes import FakeClock
from test_html import HOSTILE, parse

from agentctx_widgets.html.outputs import EXECUTE_RENDERERS, Options, format_duration, render_outputs
from agentctx_widgets.output import message_types as mt
from agentctx_widgets.output.delta import apply_message, new_state
from agentctx_widgets.yao.output import YaoOutput
from agentctx_widgets.yao.view_bridge import SeedViewBridge


def folded(messages: list[dict]) -> dict:
    state = new_state()
    for message in messages:
        state = apply_message(state, message)
    return state


def yao_turn() -> dict:
    """Block B1: a Send'd text and an execute streamed for 1,530 ms; the block ends at 2,000 ms; then a
    text reply streamed in three chunks over 250 ms, outside any block."""
    sent: list[dict] = []
    clock = FakeClock()
    out = YaoOutput([SeedViewBridge(sent.extend)], clock=clock)
    block = out.BlockID()
    out.Send({"type": "text", "props": {"content": "Listing files"}}, block)
    run = out.SendStream({"type": "execute", "props": {"tool": "Bash", "tool_id": "toolu_1",
                                                       "input": {"command": "ls -la"}, "status": "running"}}, block)
    clock.advance(1.530)
    out.Merge(run, {"type": "execute", "props": {"output": "a.txt\nb.txt", "status": "completed", "exit_code": 0}})
    out.End(run)
    clock.advance(0.470)
    out.EndBlock(block)
    reply = out.SendStream({"type": "text", "props": {"content": "Two "}})
    out.Append(reply, "files")
    clock.advance(0.250)
    out.Append(reply, ".")
    out.End(reply)
    return folded(sent)


def test_the_block_is_one_box_titled_with_its_type_and_duration():
    """block_start type "mixed" (output.go:95-122), block_end duration_ms 2000 (types.go:390-401)."""
    tree = parse(render_outputs(yao_turn(), Options()))
    box = tree.find("div", "actxd-group")
    assert box.attrs["data-group-id"] == "1:B1" and box.attrs["data-block-id"] == "B1"
    title = box.find("div", "actxd-block-title")
    assert title.find("span", "actxd-block-name").text() == "Block B1"
    assert title.find("span", "actxd-block-type").text() == "mixed"
    assert title.find("span", data_testid="actx-block-duration").text() == "2.0 s"
    assert title.find_all("span", "actxd-block-status") == []  # completed says nothing
    assert [n.attrs["data-output-id"] for n in box.find_all("div", "actxd-out")] == ["1:M1", "1:M2"]
    assert len(tree.find_all("div", "actxd-group")) == 1


def test_durations_on_streamed_messages_only():
    """The execute (SendStream + a merge: two chunks) 1,530 ms; the reply (three chunks) 250 ms; the Send'd
    text is one chunk, 0 ms, and shows none."""
    tree = parse(render_outputs(yao_turn(), Options()))
    chips = {n.attrs["data-output-id"]: [c.text() for c in n.find_all("span", "actxd-duration")]
             for n in tree.find_all("div", "actxd-out")}
    assert chips == {"1:M1": [], "1:M2": ["1.5 s"], "1:M3": ["250 ms"]}


def test_execute_is_one_status_line_with_input_and_output_folded():
    """Execute/index.tsx: label ``tool summary`` (:26-27), the input then the output in the detail
    (:57-67), folded at first (:32); the exit code from ExecuteProps (types.go:240)."""
    tree = parse(render_outputs(yao_turn(), Options()))
    node = tree.find("div", "actxd-exec")
    assert node.attrs["data-status"] == "completed" and node.attrs["data-exec-type"] == "execute"
    details = node.find("details")
    assert "open" not in details.attrs
    assert details.find("span", "actxd-exec-label").text() == "Bash ls -la"
    assert details.find("span", "actxd-exec-icon").text() == "✓"
    assert [f.text() for f in details.find_all("span", "actxd-exec-fact")] == ["exit 0"]
    assert details.find("pre", "actxd-exec-detail").text() == '{\n  "command": "ls -la"\n}\na.txt\nb.txt'


def test_the_semantic_sub_types():
    """TodoView (label ``Todo (done/all)``, the list open), JobView (``Job: Create``), PlanView, AgentView,
    QuestionView (one card per question with its options)."""
    state = folded([
        {"id": "t", "type": "todo", "props": {"input": {"todos": [{"content": "read", "status": "completed"},
                                                                  {"content": "<b>write</b>", "status": "in_progress"}]},
                                               "status": "completed"}},
        {"id": "j", "type": "job", "props": {"action": "create", "status": "running"}},
        {"id": "p", "type": "plan", "props": {"action": "exit", "status": "completed"}},
        {"id": "a", "type": "agent", "props": {"input": {"subagent_type": "general-purpose", "description": "review"},
                                                "status": "error"}},
        {"id": "q", "type": "question", "props": {"input": {"questions": [{"question": "Proceed?", "options": [
            {"label": "yes"}, {"label": "no"}]}]}, "status": "completed"}},
    ])
    tree = parse(render_outputs(state, Options()))
    labels = {n.attrs["data-output-id"]: n.find("span", "actxd-exec-label").text() for n in tree.find_all("div", "actxd-out")}
    assert labels == {"t": "Todo (1/2)", "j": "Job: Create", "p": "Exit Plan Mode", "a": "Agent: review", "q": "Proceed?"}
    todo = tree.find("div", data_output_id="t").find("details")
    assert "open" in todo.attrs
    assert [li.attrs["data-status"] for li in todo.find_all("li")] == ["completed", "in_progress"]
    assert todo.find_all("b") == [] and "<b>write</b>" in todo.text()
    assert tree.find("div", data_output_id="a").find("div", "actxd-exec").attrs["data-status"] == "error"
    assert [o.text() for o in tree.find("div", data_output_id="q").find_all("span", "actxd-exec-option")] == ["yes", "no"]
    assert tree.find("div", data_output_id="p").find_all("details") == []  # nothing to fold


def test_hostile_execute_text_is_escaped():
    for payload in HOSTILE[:20]:
        state = folded([{"id": "x", "type": "execute", "props": {"tool": payload, "input": {"command": payload},
                                                                  "output": payload, "status": payload},
                         "group_id": "g", "metadata": {"block": {"id": payload, "label": payload}}}])
        tree = parse(render_outputs(state, Options()))
        assert tree.find_all("script") == [] and tree.find_all("img") == [] and tree.find_all("iframe") == []
        assert tree.find("span", "actxd-block-name").text() == payload


def test_renderers_cover_the_execute_family_and_a_seed_group_keeps_its_title():
    assert list(EXECUTE_RENDERERS) == list(mt.YAO_TYPES)
    tree = parse(render_outputs(folded([{"id": "g.0", "type": "text", "props": {"content": "x"}, "group_id": "g"}]),
                                Options()))
    assert tree.find("div", "actxd-group-title").text() == "group g"
    assert [format_duration(v) for v in (1, 999, 1000, 1530, 59949, 60000, 125400)] == \
        ["1 ms", "999 ms", "1.0 s", "1.5 s", "59.9 s", "1m 00s", "2m 05s"]

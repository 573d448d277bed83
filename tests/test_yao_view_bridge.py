"""What the view learns from a Yao stream (yao/view_bridge.py) and the execute family's table entries
(output/message_types.py, output/execute_family.py).

Expected values are written by hand from YaoApp/yao 5a3f9a6a (agent/output/message/types.go: the
event data structs, ExecuteProps; agent/context/output.go: block_start type "mixed", message_end's
duration) and CUI 66cb383f chatbox/messages/Execute/index.tsx (the label); times come from a fake clock.
"""

from __future__ import annotations

import pytest
from fakes import FakeClock

from agentctx_widgets.output import message_types as mt
from agentctx_widgets.output.delta import apply_message, new_state
from agentctx_widgets.output.execute_family import EXECUTE_FAMILY, label_of, transcript_line
from agentctx_widgets.widget.transcript import output_line
from agentctx_widgets.yao.cui_state import CuiState
from agentctx_widgets.yao.output import YaoOutput
from agentctx_widgets.yao.view_bridge import SeedViewBridge
from agentctx_widgets.yao.writers import convert


def fold(messages: list[dict]) -> dict:
    state = new_state()
    for message in messages:
        state = apply_message(state, message)
    return state


def scenario():
    """A block holding a Send (text) and a SendStream'd execute that completes by a merge 1,530 ms later;
    the block ends 470 ms after that; then one message outside any block."""
    sent: list[dict] = []
    clock = FakeClock()
    client = CuiState(clock=FakeClock(wall_ms=0))
    bridge = SeedViewBridge(sent.extend)
    out = YaoOutput([client, bridge], clock=clock)
    block = out.BlockID()
    out.Send({"type": "text", "props": {"content": "Listing files"}}, block)
    run = out.SendStream({"type": "execute", "props": {"tool": "Bash", "tool_id": "toolu_1",
                                                       "input": {"command": "ls -la"}, "status": "running"}}, block)
    clock.advance(1.530)
    out.Merge(run, {"type": "execute", "props": {"output": "a.txt\n", "status": "completed", "exit_code": 0}})
    out.End(run)
    clock.advance(0.470)
    out.EndBlock(block)
    out.Send({"type": "text", "props": {"content": "Done."}})
    return sent, bridge, client


def test_a_block_is_one_group_with_the_block_start_and_block_end_facts():
    """block_start {block_id B1, type "mixed"} (output.go:95-122, EventBlockStartData types.go:381-388);
    block_end {duration_ms 2000, message_count 2, status "completed"} (types.go:390-401): on the block's
    first message, as metadata.block; the group id is scoped by stream like message ids."""
    sent, _, _ = scenario()
    state = fold(sent)
    assert state["order"] == ["1:M1", "1:M2", "1:M3"]
    messages = state["messages"]
    assert [messages[k].get("group_id") for k in state["order"]] == ["1:B1", "1:B1", None]
    assert messages["1:M1"]["metadata"]["block"] == {"id": "B1", "type": "mixed", "duration_ms": 2000,
                                                     "message_count": 2, "status": "completed"}
    assert "block" not in messages["1:M2"].get("metadata", {})


def test_message_end_duration_reaches_the_message_metadata():
    """message_end's duration_ms and chunk_count (EventMessageEndData, types.go:366-377): a Send ends at once
    (0 ms, one chunk), the SendStream'd execute 1,530 ms after its start; status "completed"."""
    sent, _, _ = scenario()
    messages = fold(sent)["messages"]
    assert messages["1:M1"]["metadata"]["duration_ms"] == 0
    assert messages["1:M1"]["metadata"]["chunk_count"] == 1
    # SendStream's message counts 1 chunk, the Merge delta one more (output.go:52-73)
    assert messages["1:M2"]["metadata"] == {"duration_ms": 1530, "chunk_count": 2, "status": "completed"}
    assert messages["1:M3"]["metadata"] == {"duration_ms": 0, "chunk_count": 1, "status": "completed"}


def test_execute_props_pass_through_and_the_annotations_change_no_props():
    """The execute message is the client's: ExecuteProps merged (the props-less metadata merges leave every
    message's props as the CUI client's fold has them)."""
    sent, _, client = scenario()
    state = fold(sent)
    assert state["messages"]["1:M2"]["props"] == {"tool": "Bash", "tool_id": "toolu_1", "input": {"command": "ls -la"},
                                                  "status": "completed", "output": "a.txt\n", "exit_code": 0}
    assert [(state["messages"][k]["type"], state["messages"][k]["props"]) for k in state["order"]] == \
        [(m["type"], m["props"]) for m in client.messages]
    annotations = [m for m in sent if m.get("delta") and m["props"] == {}]
    assert {m["delta_action"] for m in annotations} == {"merge"} and all("metadata" in m for m in annotations)


def test_events_are_kept_and_a_second_stream_scopes_its_blocks():
    """Each stream_start starts a new id scope (the client's stream ids; the bridge's first scope is for
    messages before any stream_start): both requests' B1 stay apart."""
    sent: list[dict] = []
    bridge = SeedViewBridge(sent.extend)
    for _ in range(2):
        out = YaoOutput([bridge], clock=FakeClock())
        bridge.write([{"type": "event", "props": {"event": "stream_start", "data": {}}}])
        out.Send({"type": "text", "props": {"content": "x"}}, out.BlockID())
    assert sorted({m["group_id"] for m in sent if "group_id" in m}) == ["2:B1", "3:B1"]
    assert [e["props"]["event"] for e in bridge.events][:2] == ["stream_start", "block_start"]


def test_events_about_unseen_messages_or_blocks_send_nothing():
    sent: list[dict] = []
    bridge = SeedViewBridge(sent.extend)
    bridge.write([{"type": "event", "props": {"event": "message_end", "data": {"message_id": "M9", "duration_ms": 5}}},
                  {"type": "event", "props": {"event": "block_end", "data": {"block_id": "B9", "duration_ms": 5}}},
                  {"type": "event", "props": {"event": "message_end", "data": {"message_id": "M9", "duration_ms": True}}}])
    assert sent == []
    assert len(bridge.events) == 3


# ---- the table -------------------------------------------------------------------------------------

def test_the_execute_family_is_in_the_table_beside_the_seed_types():
    """types.go:78-86 at 5a3f9a6a; ExecuteProps (types.go:232-244): tool, tool_id, status required
    (no omitempty), the rest optional. The seed's eleven stay as they are."""
    assert tuple(mt.YAO_TYPES) == EXECUTE_FAMILY == ("execute", "agent", "todo", "plan", "job", "question")
    assert "execute" not in mt.TYPES and len(mt.MESSAGE_TYPES) == 11
    spec = mt.lookup("execute")
    assert spec is mt.YAO_TYPES["execute"]
    assert [p.name for p in spec.props] == ["tool", "tool_id", "input", "output", "status", "is_error",
                                            "exit_code", "runner", "metadata"]
    assert [p.name for p in spec.props if p.required] == ["tool", "tool_id", "status"]
    assert mt.lookup("my_widget") is mt.GENERIC


@pytest.mark.parametrize("kind", EXECUTE_FAMILY)
def test_standard_clients_get_yaos_fallback_link_for_the_family(kind):
    """No converter is registered for the family (converter.go:17-32), so convertToLink with the fallback
    template "📎 [View %s](" + type + ")" (converter.go:308-315): the view link in the label. The table and
    yao/writers.py write the same."""
    message = {"type": kind, "id": "M4", "message_id": "M4", "props": {"tool": "Bash", "status": "running"}}
    config = mt.StandardConfig(base_url=mt.YAO_BASE_URL)
    expected = {"content": f"📎 [View http://localhost:8000/__yao_admin_root/agent/view/{kind}/M4]({kind})"}
    assert [e.body for e in mt.to_standard(message, config)] == [expected]
    assert [e.body for e in convert(message, config)] == [expected]
    assert mt.to_standard(message, mt.StandardConfig()) == []  # no Yao server: nothing to link to


def test_the_transcript_line_says_what_the_cui_header_says():
    """Execute/index.tsx:23-27 (tool + summary), :75-78 (command | file_path | path); status and facts."""
    props = {"tool": "Bash", "tool_id": "t", "input": {"command": "ls -la"}, "status": "completed", "exit_code": 0}
    assert output_line({"type": "execute", "id": "1:M2", "props": props}) == \
        "(execute 1:M2) Bash ls -la · completed · exit 0"
    assert transcript_line("execute", {"execute": {"tool": "Read", "input": {"file_path": "/a"}}}) == "Read /a · running"
    assert transcript_line("execute", {"tool": "Bash", "status": "completed", "is_error": True}) == "Bash · error"
    assert transcript_line("todo", {"input": {"todos": [{"content": "a", "status": "completed"}, {"content": "b"}]},
                                    "status": "completed"}) == "Todo (1/2) · completed"
    assert label_of("job", {"action": "stop"}) == "Job: Stop"
    assert label_of("plan", {"action": "exit"}) == "Exit Plan Mode"
    assert label_of("agent", {"input": {"subagent_type": "a2a", "description": "ask"}}) == "AI Expert: ask"
    assert label_of("question", {"input": '{"questions": [{"question": "Q?", "options": ["y", "n"]}]}'}) == "Q?"
    assert label_of("execute", {"tool": "Grep", "input_delta": '{"query": "needle'}) == "Grep needle"

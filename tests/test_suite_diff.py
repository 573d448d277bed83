"""agentctx_widgets.diff: two runs compared turn by turn (issue 22's turn-level diffs).

Every expected text below was written by hand from what the two runs differ in, not copied from output.
"""

from __future__ import annotations

import re

import pytest

import agentctx_widgets
from agentctx_widgets import Context, ScriptedModel, diff, run_turn
from agentctx_widgets.suite import MISSING, Normalizer, turn_records


def double(x: int) -> int:
    """Doubles a number."""
    return x * 2


def two_turns(first_call: dict, first_reply: str, second_reply: str) -> tuple[Context, list]:
    context = Context()
    one = run_turn(context, "hi", model=ScriptedModel([{"tool_calls": [first_call]}, first_reply]), tools=[double])
    two = run_turn(context, "and now?", model=ScriptedModel([second_reply]))
    return context, [one, two]


OLD = two_turns({"id": "c1", "name": "double", "arguments": {"x": 1}}, "done, it is two", "The answer is 4.")


def test_the_same_conversation_run_again_is_the_same_though_every_id_differs():
    context, results = two_turns({"id": "other-id", "name": "double", "arguments": {"x": 1}}, "done, it is two",
                                 "The answer is 4.")
    for old, new in ((OLD[0], context), (OLD[1], results)):
        result = diff(old, new)
        assert result.same and result.changed == []
        assert str(result) == "same: turns 1-2"


def test_a_changed_reply_and_tool_argument_read_as_a_unified_diff_with_words_marked():
    context, _ = two_turns({"id": "zz", "name": "double", "arguments": {"x": 2}}, "done, it is four",
                           "The answer is 4.")
    result = diff(OLD[0], context)
    assert [turn.status for turn in result.turns] == ["changed", "same"]
    assert str(result).splitlines() == [
        "turn 1 'hi': changed",
        "  text:",
        "    - done, it is two",
        "    + done, it is four",
        "    ~ done, it is [-two-]{+four+}",
        "  tool_calls[0].arguments:",
        '    - {"x":1}',
        '    + {"x":2}',
        "  tool_results[0].text:",
        "    - 2",
        "    + 4",
        "    ~ [-2-]{+4+}",
        "same: turn 2",
    ]


def test_results_compare_their_outputs_but_say_the_reply_once():
    _, results = two_turns({"id": "zz", "name": "double", "arguments": {"x": 2}}, "done, it is four",
                           "The answer is 4.")
    result = diff(OLD[1], results)
    paths = [change.path for change in result.turns[0].changes]
    assert paths == ["text", "tool_calls[0].arguments"]  # the text and tool_call outputs repeat these
    assert result.turns[1].status == "same"


def test_an_output_a_hook_adds_is_an_added_output_with_its_props():
    plain = run_turn(Context(), "hi", model=ScriptedModel(["Hello"]))
    hooks = agentctx_widgets.hooks_from_python({"create": lambda ctx, messages: ctx.send(
        {"type": "loading", "props": {"message": "thinking hard"}})})
    loud = run_turn(Context(), "hi", model=ScriptedModel(["Hello"]), hooks=hooks)
    result = diff(plain, loud)
    added = [change for change in result.turns[0].changes if change.kind == "added"]
    assert [(change.path, change.old, change.new) for change in added] == [
        ("outputs[1]", MISSING, {"type": "loading", "props": {"message": "thinking hard"}})]
    assert list(result.turns[0].changes) == added  # the reply's output, now second, is not a change
    assert str(result).splitlines()[1] == '  + outputs[1]: {"props":{"message":"thinking hard"},"type":"loading"}'


def test_deltas_are_applied_before_outputs_compare():
    whole = {"outputs": [{"id": "m1", "type": "text", "props": {"content": "Hello there"}}]}
    streamed = {"outputs": [
        {"id": "x9", "type": "text", "props": {"content": "Hello"}},
        {"id": "x9", "type": "text", "props": {"content": " there"}, "delta": True, "delta_path": "content",
         "delta_action": "append"}]}
    assert diff(whole, streamed).same
    other = {"outputs": [{"id": "m1", "type": "text", "props": {"content": "Hello here"}}]}
    assert [change.path for change in diff(whole, other).turns[0].changes] == ["text"]


def test_volatile_values_are_left_out_and_the_rules_extend():
    a = {"outputs": [{"id": "m1", "type": "loading", "props": {"message": "x", "seed": 1}},
                     ], "diagnostics": [], "usage": {"inputTokens": 3, "rateLimits": {"remaining": 1}}}
    b = {"outputs": [{"id": "m7", "type": "loading", "props": {"message": "x", "seed": 2}},
                     ], "diagnostics": [], "usage": {"inputTokens": 3, "rateLimits": {"remaining": 9}}}
    assert [change.path for change in diff(a, b).turns[0].changes] == ["outputs[1].props.seed"]
    assert diff(a, b, normalizer=Normalizer().extend(volatile={"seed"})).same


def test_usage_changes_show_both_numbers_and_the_difference():
    a = {"messages": [{"type": 2, "content": "q"}], "usage": {"inputTokens": 10, "outputTokens": 4}}
    b = {"messages": [{"type": 2, "content": "q"}], "usage": {"inputTokens": 10, "outputTokens": 7}}
    assert str(diff(a, b)).splitlines() == ["turn 1 'q': changed", "  usage.outputTokens: 4 -> 7 (+3)"]


def test_a_turn_only_one_side_has_is_added_or_removed_with_its_text():
    longer = Context(OLD[0].messages())
    run_turn(longer, "one more", model=ScriptedModel(["Sure."]))
    added = diff(OLD[0], longer)
    assert [turn.status for turn in added.turns] == ["same", "same", "added"]
    assert str(added).splitlines() == ["turn 3 'one more': added", "  + Sure.", "same: turns 1-2"]
    assert [turn.status for turn in diff(longer, OLD[0]).turns][-1] == "removed"


def test_a_session_file_compares_like_the_context_it_holds(tmp_path):
    path = Context(OLD[0].messages(), dir=tmp_path).save()
    assert diff(path, OLD[0]).same
    assert diff(str(path), OLD[0]).same


def test_turns_split_at_each_user_message_with_the_system_prompt_in_the_first():
    records = turn_records([{"type": 1, "content": "Be brief."}, {"type": 2, "content": "a"},
                            {"type": 3, "content": [{"type": "text", "text": "A"}]}, {"type": 2, "content": "b"}])
    assert [(record.input, record.text) for record in records] == [("a", "A"), ("b", "")]


def test_something_it_cannot_compare_says_what_it_takes():
    with pytest.raises(TypeError, match=r"cannot compare a int: give a Context, a session file's path"):
        diff(3, OLD[0])
    with pytest.raises(TypeError, match=r"'turns' is a list of turns, not a str"):
        diff({"turns": "x"}, OLD[0])


def test_an_output_the_delta_engine_refuses_is_kept_not_dropped():
    bad = {"outputs": [{"id": "m1", "type": "text", "props": "not an object"}]}
    (record,) = turn_records(bad)
    assert record.outputs == [{"type": "refused", "props": {
        "position": 0, "message": bad["outputs"][0], "error": "message.props must be an object, got string"}}]


def test_the_html_shows_old_and_new_side_by_side_with_the_words_marked_and_nothing_runs():
    context, _ = two_turns({"id": "zz", "name": "double", "arguments": {"x": 2}}, "done, it is <script>four",
                           "The answer is 4.")
    page = diff(OLD[0], context).to_html(standalone=True)
    assert "<del>two</del>" in page and "<ins>&lt;script&gt;four</ins>" in page
    assert "<script" not in page.replace("&lt;script", "")
    assert re.search(r"<th>before</th><th>after</th>", page)
    bundle = diff(OLD[0], context)._repr_mimebundle_()
    assert bundle["text/plain"].startswith("turn 1 'hi': changed") and 'class="actx-diff"' in bundle["text/html"]


def test_a_usage_change_shows_both_numbers_and_the_difference_in_the_html_too():
    old = {"messages": [], "usage": {"inputTokens": 1000, "outputTokens": 100}}
    new = {"messages": [], "usage": {"inputTokens": 1000, "outputTokens": 250}}
    html = diff(old, new).to_html()
    assert '<del>100</del></td><td class="actx-diff-side"><ins>250</ins> <span class="actx-diff-delta">(+150)</span>' in html
    assert str(diff(old, new)).splitlines()[1] == "  usage.outputTokens: 100 -> 250 (+150)"
    assert "cost" not in html  # neither side kept a cost: no cost line

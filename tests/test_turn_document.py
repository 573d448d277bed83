"""Turns that settle into documents: ``TurnDocument`` / ``TurnDisplay``, ``agentctx_widgets.run``.

The document is checked against text written out by hand; the notebook behaviour against a real
kernel driven by nbclient (what ``jupyter nbconvert --execute`` and CI use).
"""

from __future__ import annotations

import json
import re

import nbformat
import pytest

from agentctx_widgets import TurnError
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from agentctx_widgets import Context, ContextView, Output, ScriptedModel, TurnDisplay, TurnDocument, run
from agentctx_widgets.widget.document import TurnPart

KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


def chat_with_history() -> Context:
    return Context([{"type": 2, "content": [{"type": "text", "text": "Earlier question"}]},
                    {"type": 3, "content": [{"type": "text", "text": "Earlier answer"}]}], name="chat")


def test_the_document_of_a_turn_shows_only_the_turn_and_counts_the_rest():
    ctx = chat_with_history()
    view = ContextView(ctx)
    out = Output(sinks=[view])
    ctx.append({"type": 2, "content": [{"type": "text", "text": "What is **2+2**?"}]})
    ctx.append({"type": 3, "content": [{"type": "text", "text": "It is *4*."}]})
    out.send({"type": "loading", "props": {"message": "Thinking..."}, "id": "l1"})
    out.send({"type": "text", "props": {"content": "Done."}, "id": "t1"})
    out.flush()
    part = TurnPart.of_state(view.state(), start=2, usage={"inputTokens": 12, "outputTokens": 3})
    view.close()
    text = part.text().splitlines()
    assert text[:4] == ['"chat" · 4 messages', "… 2 earlier messages", "[user] What is **2+2**?", "[assistant] It is *4*."]
    assert text[4].startswith("(loading l1) ") and "Thinking..." in text[4]
    assert text[5] == "(text t1) Done."
    assert text[6].startswith("≈ ") and text[6].endswith("usage: input 12 · output 3 · total 15 tokens")
    html = part.html()
    assert "2 earlier messages" in html
    assert "<strong>2+2</strong>" in html and "<em>4</em>" in html  # Markdown rendered
    assert "Earlier question" not in html and "Earlier answer" not in html  # not repeated
    assert "<script" not in html.lower() and html.count("<style") == 1


def test_a_side_by_side_document_has_one_stylesheet_and_both_parts():
    def user(text):
        return {"type": 2, "content": [{"type": "text", "text": text}]}

    parts = [TurnPart(title="JavaScript", context=[user("hi from js")]),
             TurnPart(title="Python", context=[user("hi from py")])]
    doc = TurnDocument(parts)
    bundle = doc._repr_mimebundle_()
    assert set(bundle) == {"text/html", "text/plain"}
    assert bundle["text/html"].count("<style") == 1
    assert "hi from js" in bundle["text/html"] and "hi from py" in bundle["text/html"]
    # three words at TOKENS_PER_WORD = 4/3 tokens each
    assert bundle["text/plain"] == '"JavaScript" · 1 message\n[user] hi from js\n≈ 4 tokens in context (estimate)\n\n' \
                                   '"Python" · 1 message\n[user] hi from py\n≈ 4 tokens in context (estimate)'
    with pytest.raises(ValueError, match="at least one part"):
        TurnDocument([])


def test_turn_display_outside_a_kernel_still_settles_into_a_document():
    ctx = Context(name="plain")
    turn = TurnDisplay(ctx).show()  # no kernel: nothing displayed
    ctx.append({"type": 2, "content": [{"type": "text", "text": "hello"}]})
    doc = turn.settle()
    assert turn.settle() is doc
    assert doc.text().splitlines()[:2] == ['"plain" · 1 message', "[user] hello"]
    assert turn.view.comm is None  # closed
    with pytest.raises(ValueError, match="2 contexts but 1 titles"):
        TurnDisplay(Context(), Context(), titles=["one"])


def test_run_returns_the_result_and_puts_the_context_back_when_the_turn_fails():
    ctx = chat_with_history()
    result = run(ctx, "Hello", model=ScriptedModel(["Hi there"]))
    assert result.ok and len(ctx) == 4 and ctx.at(-1)["content"][0]["text"] == "Hi there"

    class Broken:
        model_id = "broken"

        def stream(self, *args, **kwargs):
            raise ConnectionError("the server hung up")

    before = ctx.messages()
    with pytest.raises(TurnError, match="the server hung up") as raised:  # a failed turn fails like a call
        run(ctx, "Again", model=Broken())
    assert not raised.value.result.ok and ctx.messages() == before
    failed = run(ctx, "Again", model=Broken(), check=False)  # a model failure is the turn's error
    assert not failed.ok and "the server hung up" in failed.error["message"]
    assert ctx.messages() == before
    kept = run(ctx, "Once more", model=Broken(), restore=False, check=False)
    assert not kept.ok and ctx.messages()[: len(before)] == before and len(ctx) > len(before)
    with pytest.raises(TypeError, match="must be a Context"):
        run([], "hi")


# ---- in a real kernel ----------------------------------------------------------------------------

def execute(cells: list[str], tmp_path) -> nbformat.NotebookNode:
    nb = new_notebook(cells=[new_code_cell(source) for source in cells], metadata={"kernelspec": KERNELSPEC})
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    return nb


SETUP = "%load_ext agentctx_widgets\nfrom agentctx_widgets import Context, ScriptedModel, run\nchat = Context(name='chat')"


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("turns")
    return execute([
        SETUP,
        '%agentctx run chat "What is **two** plus two?"',
        '%agentctx run chat "And three?"',
        "%agentctx usage chat\nprint('after the table')",
        "%agentctx usage chat",
        "report = %agentctx usage chat\nprint(type(report).__name__)",
        "result = run(chat, 'Plain Python', model=ScriptedModel(['From *run()*']))\nprint(result.ok, len(chat))",
        "%agentctx show chat\nprint('after the view')",
    ], tmp)


def outputs(nb, index):
    return nb.cells[index].outputs


def kinds(output) -> set[str]:
    return set(output.get("data", {}))


def test_each_run_cell_keeps_its_turn_as_html_and_text_not_a_widget(executed):
    for index in (1, 2, 6):
        live, document, *_ = outputs(executed, index)
        # the live view's output, emptied when the turn ended (nothing of the widget is kept), then the document
        assert live.output_type == "display_data" and live.data == {} and "display_id" not in live.get("metadata", {})
        assert document.output_type == "display_data" and kinds(document) == {"text/html", "text/plain"}, index
    first = outputs(executed, 1)[1].data["text/plain"].splitlines()
    assert first[:3] == ['"chat" · 2 messages', "[user] What is **two** plus two?",
                         "[assistant] Scripted reply to: What is **two** plus two?"]
    second = outputs(executed, 2)[1].data["text/plain"].splitlines()
    assert second[:4] == ['"chat" · 4 messages', "… 2 earlier messages", "[user] And three?",
                          "[assistant] Scripted reply to: And three?"]
    assert "<strong>two</strong>" in outputs(executed, 1)[1].data["text/html"]
    assert "What is" not in outputs(executed, 2)[1].data["text/html"]  # the earlier turn is one line
    plain_run = outputs(executed, 6)
    assert "[assistant] From *run()*" in plain_run[1].data["text/plain"]
    assert plain_run[2].text == "True 6\n"


def test_the_stylesheet_is_stored_once_per_notebook(executed):
    styles = sum(o.get("data", {}).get("text/html", "").count("<style") for cell in executed.cells
                 for o in cell.get("outputs", []) if "actx-doc" in o.get("data", {}).get("text/html", ""))
    assert styles == 1


def test_the_closed_turn_views_store_no_transcript(executed):
    state = executed.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    snapshots = [model["state"].get("_snapshot") for model in state.values() if "_snapshot" in model["state"]]
    # three turn views (closed, emptied) and the view %agentctx show left open
    assert sorted(bool(s) for s in snapshots) == [False, False, False, True]


def test_usage_shows_where_it_stands_once(executed):
    mid = outputs(executed, 3)
    assert [o.output_type for o in mid] == ["display_data", "stream"] and mid[1].text == "after the table\n"
    assert mid[0].data["text/plain"].startswith("Context usage")
    last = outputs(executed, 4)
    assert [o.output_type for o in last] == ["execute_result"]
    assigned = outputs(executed, 5)
    assert [o.output_type for o in assigned] == ["display_data", "stream"] and assigned[1].text == "UsageReport\n"


def test_show_displays_where_it_stands(executed):
    shown = outputs(executed, 7)
    assert [o.output_type for o in shown] == ["display_data", "stream"]
    assert "application/vnd.jupyter.widget-view+json" in shown[0].data
    assert shown[1].text == "after the view\n"


def test_the_same_magic_twice_in_a_cell_shows_twice(tmp_path):
    nb = execute([SETUP, '%agentctx run chat "hi"', "%agentctx usage chat\n%agentctx usage chat"], tmp_path)
    assert [o.output_type for o in nb.cells[2].outputs] == ["display_data", "execute_result"]


def test_twenty_turns_make_a_small_notebook(tmp_path):
    cells = [SETUP] + [f'%agentctx run chat "Question {i}: what is {i} squared, and why?"' for i in range(20)]
    nb = execute(cells, tmp_path)
    size = len(nbformat.writes(nb).encode())
    own_text = sum(len(cell.source.encode()) for cell in nb.cells)
    assert size - own_text < 200_000, f"{size:,} bytes for 20 turns"
    # the front end is not stored at all: every view settled, so the last one closed the bundle, emptied
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    bundles = [model["state"] for model in state.values() if model["model_name"] == "WidgetModel" and "esm" in model["state"]]
    assert bundles and all(bundle["esm"] == "" and bundle["css"] == "" for bundle in bundles)
    print(f"20 turns: {size:,} bytes, {size - own_text:,} beyond the cells' own text")
    answers = [o.data["text/plain"] for cell in nb.cells[1:] for o in cell.outputs if "text/plain" in o.get("data", {})]
    assert len(answers) == 20 and all(f"Question {i}:" in text for i, text in enumerate(answers))
    assert not re.search(r"Question 0:", answers[5])  # earlier turns are counted, not repeated
    json.dumps(nb)  # plain JSON throughout


def test_a_cut_off_reply_says_so_in_the_document_of_a_turn_that_succeeded(monkeypatch):
    """Issue 20: a reply cut at the token limit read as complete; other diagnostics stay off a good turn's page."""
    documents = []
    settle = TurnDisplay.settle
    monkeypatch.setattr(TurnDisplay, "settle", lambda self, **kw: documents.append(settle(self, **kw)) or documents[-1])
    ctx = Context(name="story")
    result = run(ctx, "Tell me a story", model=ScriptedModel([{"text": "Once upon a", "stop": "length"}]))
    assert result.ok
    [document] = documents
    assert document.text().splitlines()[-1] == ("diagnostic reply_cut_off (response): the reply was cut off: the model "
                                                "stopped at its token limit ('length'), so it is incomplete")
    assert "the reply was cut off" in document.html()
    ctx2 = Context(name="fine")
    run(ctx2, "hi", model=ScriptedModel(["Hello"]))
    assert "diagnostic" not in documents[-1].text()


# ---- cost (issue 23) -------------------------------------------------------------------------------

def test_the_document_shows_what_the_turn_cost_beside_its_usage():
    from agentctx_widgets.context.cost import cost

    usage = {"prompt_tokens": 1000, "completion_tokens": 100}  # gpt-4o, $2.50 / $10.00 per million: $0.0035
    ctx = Context(name="priced")
    turn = TurnDisplay(ctx, model="gpt-4o")
    ctx.append({"type": 2, "content": [{"type": "text", "text": "hello"}]})
    doc = turn.settle(usage=usage, cost=cost(usage, "gpt-4o"))
    assert doc.text().splitlines()[-1].endswith("usage: input 1,000 · output 100 · total 1,100 tokens · cost $0.0035")
    assert 'data-testid="actx-cost"' in doc.html() and ">cost $0.0035</span>" in doc.html()
    assert "priced by genai-prices" in doc.html()
    # without cost=, the cost a turn run with view= gave the view; an unknown model is unpriced, never $0
    ctx = Context(name="local")
    turn = TurnDisplay(ctx)
    ctx.append({"type": 2, "content": [{"type": "text", "text": "hello"}]})
    turn.view.set_turn_cost(cost(usage, "my-local"))
    text = turn.settle(usage=usage).text()
    assert text.endswith("· cost unpriced (my-local)") and "$0" not in text
    part = TurnPart(title="t", context=[], cost=cost({**usage, "source": "estimate"}, "gpt-4o").to_dict())
    assert part.text().endswith("· cost ≈ $0.0035") and "estimated: some of the usage" in part.html()
    with pytest.raises(ValueError, match="1 views but 2 costs"):
        TurnDisplay(Context()).settle(cost=[None, None])

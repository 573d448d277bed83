"""The README's Python examples run as written (so the tour a user copies stays true)."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_every_python_block_in_the_readme_runs(monkeypatch):
    monkeypatch.chdir(README.parent)  # the README's paths are relative to a clone's root
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    assert blocks, "the README has no Python example"
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 - our own README
    # the tour's turn really ran: the scripted reply was committed and its usage finalized
    result = namespace["result"]
    assert result.response["content"] == "Hi!"
    assert result.hooks_called == ["Create", "Done"]
    assert result.usage["totalTokens"] == result.usage["inputTokens"] + result.usage["outputTokens"] > 0
    assert namespace["out"].state["messages"]["m1"]["props"]["content"] == "Hi there"
    # the models example replayed its tool round trip from the shipped recording
    answer = namespace["answer"]
    assert answer.ok and answer.response["content"] == "It is 18 °C and partly cloudy in Paris right now."
    assert answer.usage["totalTokens"] == 1068 and [m["type"] for m in namespace["weather"].messages()] == [2, 3, 4, 3]


def test_the_readme_lists_every_diagnostic_code():
    from agentctx_widgets.output import DIAGNOSTICS

    text = README.read_text(encoding="utf-8")
    table = text[text.index("## Behaving like Yao"):text.index("### Where we differ from Yao")]
    listed = re.findall(r"^\| `([a-z_]+)` \|", table, flags=re.M)
    assert listed == list(DIAGNOSTICS)  # every code, once, in the table's order


def test_the_readme_shows_the_magics_help_as_the_parsers_print_it():
    from agentctx_widgets._magic_args import overview

    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Magics"):text.index("### Notebooks as regression checks")]
    shown = re.search(r"```text\n(.*?)\n```", section, flags=re.S).group(1)
    assert shown == overview()

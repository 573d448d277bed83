"""The README's Python examples run as written, and the manual in docs/ stays true to the code.

The README is the front page (at most 250 lines, linking every page of docs/); the tables that name the
code's own values (diagnostic codes, the magics' help) live in docs/ and are checked there."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"
MAX_README_LINES = 250


def test_every_python_block_in_the_readme_runs(monkeypatch):
    monkeypatch.chdir(REPO / "notebooks")  # the tour is pasted into a notebook beside tour.ipynb, as it says
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
    # its cost, by hand from Anthropic's price page for Claude Sonnet 4.5 ($3 / $15 per million in / out):
    # two calls, 412 + 541 = 953 in and 96 + 19 = 115 out: $0.002859 + $0.001725 = $0.004584
    from decimal import Decimal
    assert [(c["usage"]["inputTokens"], c["usage"]["outputTokens"]) for c in answer.calls] == [(412, 96), (541, 19)]
    assert answer.cost.total == Decimal("0.004584") and not answer.cost.estimated
    assert namespace["weather"].cost.total == Decimal("0.004584")
    # the suite example recorded two cases and checked them offline, both passing
    report = namespace["report"]
    assert (report.passed, report.changed, report.model_changed, report.failed) == (["case-1", "case-2"], [], [], [])
    assert [len(case.turns) for case in namespace["suite"].cases] == [1, 2]


def test_the_readme_lists_every_diagnostic_code():
    from agentctx_widgets.output import DIAGNOSTICS

    text = (DOCS / "diagnostics.md").read_text(encoding="utf-8")
    start = text.index("| code | for example |")
    table = text[start:text.index("\n\n", start)]
    listed = re.findall(r"^\| `([a-z_]+)` \|", table, flags=re.M)
    assert listed == list(DIAGNOSTICS)  # every code, once, in the table's order


def test_the_readme_shows_the_magics_help_as_the_parsers_print_it():
    from agentctx_widgets._magic_args import overview

    text = (DOCS / "api.md").read_text(encoding="utf-8")
    section = text[text.index("## Magics"):text.index("## The Python API")]
    shown = re.search(r"```text\n(.*?)\n```", section, flags=re.S).group(1)
    assert shown == overview()


def test_the_readme_is_a_front_page_that_links_every_page_of_the_manual():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_README_LINES
    assert text.index("make demo") < text.index("## ") and text.index("make test") < text.index("## ")
    pages = sorted(path.name for path in DOCS.glob("*.md"))
    assert pages, "docs/ has no pages"
    assert [page for page in pages if f"](docs/{page}" not in text] == []

"""Diagnostics speak a notebook user's words: Yao's client by its name, no commit hashes, no "seed"
(issue 18 §7: the README's first hook example raised one that spoke of "the seed" and "9c35de9")."""

from __future__ import annotations

import re

import pytest

from agentctx_widgets import Output
from agentctx_widgets.output.diagnostics import DIAGNOSTICS, diagnostic

_JARGON = re.compile(r"\bseed\b|\b[0-9a-f]{7,40}\b|\bthe client\b", re.I)


@pytest.mark.parametrize("code", sorted(DIAGNOSTICS))
def test_no_diagnostic_text_names_a_commit_or_the_seed(code):
    message, hint = DIAGNOSTICS[code]
    for text in (message, hint):
        assert not _JARGON.search(text), (code, text)


def test_every_mention_of_cui_names_it_as_yaos_chat_client():
    mentions = [(code, text) for code, texts in DIAGNOSTICS.items() for text in texts if "CUI" in text]
    assert len(mentions) >= 15  # the delta engine's cases all say whose client behaves so
    for code, text in mentions:
        assert "Yao's chat client (CUI)" in text, (code, text)


def test_the_readme_first_example_bare_done_reads_plainly():
    out = Output()
    out.send({"type": "text", "props": {"content": "Hello"}, "id": "m1"})
    out.send({"type": "text", "props": {}, "id": "m1", "done": True})
    [item] = [d for d in out.diagnostics if d["code"] == "bare_done_kept"]
    assert item["message"] == ("done with empty props for 'm1': this view keeps the text, but Yao's chat client "
                               "(CUI) blanks the message")
    assert item["hint"] == ("send the final content with done: true, or a delta with done: true, so Yao's chat "
                            "client keeps the text too")


def test_templates_fill_without_leftover_braces():
    item = diagnostic("unknown_id", "message 'x'", id="x")
    assert item["message"] == "delta for 'x', which was never sent: Yao's chat client (CUI) shows it as a new message"

"""``_usage_report``: the table ``%agentctx usage`` shows, read through the magic in a real IPython shell.

The magic's own error paths are in test_magics.py; the offline tiktoken lookup in test_tiktoken_offline.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from agentctx_widgets import _usage_report
from agentctx_widgets.context import Context, user_message

from magic_shell import ip, line, sample_context, shell  # noqa: F401 - ip and shell are fixtures


def test_usage_reports_estimates_window_and_share(ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_usage_report, "try_exact_counter", lambda model: None)
    ctx = sample_context()
    ctx.append({"type": "note", "text": "a record, never sent"})
    # 30 words -> 40 tokens
    ctx.append({"type": 3, "content": [{"type": "text", "text": " ".join(["word"] * 30)}]})
    ip.user_ns["ctx"] = ctx
    report, out = line(ip, "usage ctx --model o3")
    assert out.stderr == ""
    assert [(row.role, row.estimate) for row in report.rows] == [
        ("system", 7),
        ("user", 4),
        ("note", None),
        ("assistant", 40),
    ]
    assert report.total == 51 and report.window == 200_000  # o-series: 200K (seed 001)
    text = repr(report)
    assert text.splitlines()[0] == "Context usage, model o3 (context window 200,000 tokens)"
    assert "total: 51 tokens (estimate) = 0.03% of 200,000" in text  # 51 / 200000 = 0.0255 %
    assert "exact" not in text
    html = report._repr_html_()
    assert "var(--jp-ui-font-color1" in html and "var(--jp-border-color2" in html
    assert 'aria-valuenow="51"' in html


def test_usage_without_a_model_says_how_to_get_the_window(ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_usage_report, "try_exact_counter", lambda model: None)
    ip.user_ns["ctx"] = sample_context()
    report, _ = line(ip, "usage ctx")
    assert report.window is None and report.share is None
    assert "pass --model NAME" in repr(report)
    assert "total: 11 tokens (estimate)\n" in repr(report)


def test_usage_shows_exact_counts_beside_estimates_when_an_encoding_is_available(
    ip: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[Any] = []

    def fake_counter(model: str | None) -> tuple[str, Any]:
        asked.append(model)
        return "fake_base", lambda text: len(text.split()) * 10

    monkeypatch.setattr(_usage_report, "try_exact_counter", fake_counter)
    ip.user_ns["ctx"] = sample_context()
    report, _ = line(ip, "usage ctx --model gpt-4o")
    assert asked == ["gpt-4o"]
    assert [row.exact for row in report.rows] == [50, 30]
    text = repr(report)
    assert "  #  role    est.  exact  preview" in text
    assert "11 tokens (estimate), 80 exact (fake_base, text only)" in text
    assert "exact (fake_base)" in report._repr_html_()
    report, _ = line(ip, "usage ctx --model gpt-4o --no-exact")
    assert asked == ["gpt-4o"] and report.encoding is None


def test_usage_escapes_message_text_in_html(ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_usage_report, "try_exact_counter", lambda model: None)
    ip.user_ns["ctx"] = Context([user_message('<img src=x onerror="alert(1)">')])
    report, _ = line(ip, "usage ctx")
    html = report._repr_html_()
    assert "<img" not in html and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html


def test_usage_report_is_displayed_as_html_and_text(shell: InteractiveShell) -> None:
    shell.user_ns["usage_ctx"] = sample_context()
    try:
        with capture_output():
            executed = shell.run_cell("%agentctx usage usage_ctx --no-exact", store_history=False)
    finally:
        del shell.user_ns["usage_ctx"]
    data, _ = shell.display_formatter.format(executed.result)  # what the kernel would publish
    assert data["text/plain"].startswith("Context usage (no model")
    assert data["text/html"].startswith('<div class="agentctx-usage"')

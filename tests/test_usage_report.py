"""``_usage_report``: the table ``%agentctx usage`` shows, read through the magic in a real IPython shell.

The magic's own error paths are in test_magics.py; the offline tiktoken lookup in test_tiktoken_offline.py.
"""

from __future__ import annotations

from decimal import Decimal
from importlib.metadata import version
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from agentctx_widgets import _usage_report
from agentctx_widgets.context import Context, user_message

from magic_shell import ip, line, sample_context, shell  # noqa: F401 - ip and shell are fixtures

# the installed table names itself; which 0.2.x a fresh install gets is not ours to fix
TABLE = f"genai-prices {version('genai-prices')} (bundled data)"


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


# -- the cost section (issue 23) --------------------------------------------------------------------
# Hand-computed from the price pages: gpt-4o $2.50 / $10.00 per million input / output tokens, so 1000 in +
# 100 out = $0.0035 a call; claude-sonnet-4 $3 / $15, cache read $0.30, cache write $3.75: 500 uncached +
# 200 read + 300 written in, 100 out = $0.0015 + $0.00006 + $0.001125 + $0.0015 = $0.004185; gpt-4o-mini
# $0.15 / $0.60: 1000 in + 100 out = $0.00021.

GPT_4O_CALL = {"prompt_tokens": 1000, "completion_tokens": 100}
SONNET_CALL = {"input_tokens": 500, "cache_read_input_tokens": 200, "cache_creation_input_tokens": 300,
               "output_tokens": 100}


@pytest.fixture
def ledger() -> Any:
    from agentctx_widgets.hooks import usage_log

    usage_log.reset_session_usage()
    yield usage_log
    usage_log.reset_session_usage()


def _costed_context(ledger: Any) -> Context:
    context = Context([user_message("hi there")])
    ledger.record_usage(GPT_4O_CALL, context, call={"model": "gpt-4o", "provider": "openai"})
    ledger.record_usage(GPT_4O_CALL, context, call={"model": "gpt-4o", "provider": "openai"})
    ledger.record_usage(SONNET_CALL, context, call={"model": "claude-sonnet-4-20250514", "provider": "anthropic"})
    return context


def _report(context: Context, **options: Any) -> _usage_report.UsageReport:
    return _usage_report.build_usage_report(context.messages(), model="gpt-4o", exact=False, context=context,
                                            **options)


def test_the_cost_section_has_the_total_a_row_a_model_and_the_price_source(ledger: Any) -> None:
    report = _report(_costed_context(ledger))
    cost_lines = report.to_text().splitlines()[-4:]
    # 2 * 0.0035 + 0.004185 = 0.011185 -> $0.0112 (four decimals from a cent); $0.007; $0.004185 -> $0.00419
    assert cost_lines == [
        f"cost of this context's turns (3 model calls): $0.0112; priced by {TABLE}",
        "  model                     calls  tokens  cost",
        "  gpt-4o                        2   2,200  $0.007",
        "  claude-sonnet-4-20250514      1   1,100  $0.00419",
    ]
    assert report.spend is not None and report.spend.cost.total == Decimal("0.011185")


def test_an_unpriced_model_says_unpriced_and_how_to_price_it_and_estimates_are_marked(ledger: Any) -> None:
    context = Context([user_message("hi")])
    ledger.record_usage(GPT_4O_CALL, context, call={"model": "gpt-4o"})
    ledger.record_usage({"inputTokens": 1000, "outputTokens": 100, "source": "estimate"}, context,
                        call={"model": "gpt-4o-mini"})
    ledger.record_usage(GPT_4O_CALL, context, call={"model": "my-finetune"})
    text = _report(context).to_text()
    # 0.0035 + 0.00021 = 0.00371, estimated because one call's usage was
    assert ("cost of this context's turns (3 model calls): ≈$0.00371 (estimated) + unpriced: my-finetune; "
            f"priced by {TABLE}") in text
    assert "  gpt-4o-mini      1   1,100  ≈$0.00021 (estimated)\n" in text
    assert "  my-finetune      1   1,100  unpriced\n" in text and "$0 " not in text
    assert text.endswith("give one in USD per million tokens: prices={'my-finetune': {'input': ..., 'output': ...}}, "
                         "or prices={'my-finetune': 'free'} for a local model")


def test_a_context_whose_only_model_is_unpriced_shows_no_dollar_figure(ledger: Any) -> None:
    context = Context([user_message("hi")])
    ledger.record_usage(GPT_4O_CALL, context, call={"model": "scripted"})
    lines = _report(context).to_text().splitlines()
    assert lines[-4:-1] == ["cost of this context's turns (1 model call): unpriced",
                            "  model     calls  tokens  cost",
                            "  scripted      1   1,100  unpriced"]
    assert lines[-1].startswith("  unpriced: scripted — genai-prices")


def test_the_cost_section_in_html_is_escaped_and_marks_unpriced(ledger: Any) -> None:
    context = _costed_context(ledger)
    ledger.record_usage(GPT_4O_CALL, context, call={"model": "<b>evil</b>"})
    html = _report(context)._repr_html_()
    section = html[html.index('<div class="agentctx-usage-cost"'):]
    assert "cost of this context&#x27;s turns (4 model calls): $0.0112 + unpriced: &lt;b&gt;evil&lt;/b&gt;" in section
    assert "<b>" not in html and ">$0.00419</td>" in section and ">2,200</td>" in section
    assert "var(--jp-warn-color0,#b26a00);\">unpriced</td>" in section


def test_a_context_no_turn_ran_on_keeps_the_report_as_it_was(ledger: Any) -> None:
    context = Context([user_message("hi")])
    with_context = _report(context)
    assert with_context.spend is None
    assert with_context.to_text() == _usage_report.build_usage_report(context.messages(), model="gpt-4o",
                                                                      exact=False).to_text()
    assert "agentctx-usage-cost" not in with_context._repr_html_()


def test_free_models_show_zero_as_free(ledger: Any) -> None:
    context = Context([user_message("hi")])
    ledger.record_usage(GPT_4O_CALL, context, call={"model": "llama3.2"}, prices={"llama3.2": "free"})
    assert "  llama3.2      1   1,100  $0 (free)" in _report(context).to_text()


def test_the_magic_shows_the_contexts_cost(ip: Any, monkeypatch: pytest.MonkeyPatch, ledger: Any) -> None:
    monkeypatch.setattr(_usage_report, "try_exact_counter", lambda model: None)
    ip.user_ns["ctx"] = _costed_context(ledger)
    report, _ = line(ip, "usage ctx --model gpt-4o")
    assert "cost of this context's turns (3 model calls): $0.0112" in repr(report)
    assert "agentctx-usage-cost" in report._repr_html_()

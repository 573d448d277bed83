"""Exact counts never wait on the network: tiktoken's encoding is had offline or not at all
(context/tiktoken_offline.py, through ``_usage_report.try_exact_counter``)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from agentctx_widgets import _usage_report


def test_exact_counter_never_downloads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pytest.importorskip("tiktoken")
    from tiktoken import registry

    monkeypatch.setattr(registry, "ENCODINGS", {})  # nothing loaded in memory
    from agentctx_widgets.context import tiktoken_offline

    monkeypatch.setattr(tiktoken_offline, "packaged_encoding_file", lambda name: None)  # no bpe-openai copy
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # and nothing on disk
    assert _usage_report.try_exact_counter("gpt-4o") is None
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # caching disabled: it would always download
    assert _usage_report.try_exact_counter(None) is None
    assert _usage_report.try_exact_counter("claude-sonnet-4") is None  # not an OpenAI tokenizer


def test_exact_counter_loads_the_encoding_bpe_openai_ships(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pytest.importorskip("tiktoken")
    from agentctx_widgets.context.tiktoken_offline import packaged_encoding_file

    if packaged_encoding_file("o200k_base") is None:
        pytest.skip("bpe-openai (the tiktoken extra) is not installed")
    from tiktoken import registry

    monkeypatch.setattr(registry, "ENCODINGS", {})
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # tiktoken's own cache is empty
    scratch = tmp_path.parent / f"{tmp_path.name}-scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    found = _usage_report.try_exact_counter("gpt-4o")
    assert found is not None
    name, count = found
    assert name == "o200k_base"
    assert count("hello world") == 2 and count("") == 0
    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(tmp_path)  # the user's setting is back
    assert list(tmp_path.iterdir()) == []  # and nothing was written into their cache
    assert list(scratch.iterdir()) == []  # nor left in the temporary folder (3.6 MB a kernel, before)

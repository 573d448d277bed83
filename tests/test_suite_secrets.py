"""Secrets never reach a suite file (issue 22): API keys from the environment or the model, Authorization
headers in the recorded requests, keys in error texts and in ctx fields. The file's bytes are searched
for each key; the redacted suite must still check offline (a redacted value replays as ***)."""

from __future__ import annotations

import os

import pytest

from agentctx_widgets import hooks_from_python
from agentctx_widgets.suite import Suite

ENV_KEY = "sk-env-0123456789abcdefENVKEY"
MODEL_KEY = "sk-model-9876543210fedcbaMODELKEY"
CTX_KEY = "tok-ctx-5555555555CTXKEY"
BEARER = "abc123def456ghi789BEARER"


class KeyedModel:
    """A custom model holding its key as ``api_key``; it quotes the environment's key in one answer and
    fails naming its own key (an ``error`` event, which ReplayModel records) when asked to "fail"."""

    def __init__(self) -> None:
        self.api_key = MODEL_KEY
        self.requests: list[dict] = []

    def stream(self, messages, *, options=None):
        self.requests.append(options or {})
        last = messages[-1]["content"][0]["text"]
        yield {"type": "start", "model": "keyed"}
        if last == "fail":
            yield {"type": "error", "error": {"message": f"upstream refused key {self.api_key}", "code": "BAD_REQUEST"}}
            return
        text = f"Your key is {os.environ['OPENAI_API_KEY']}" if last == "quote" else f"You said: {last}"
        yield {"type": "text_start", "contentIndex": 0}
        yield {"type": "text_delta", "contentIndex": 0, "delta": text}
        yield {"type": "text_end", "contentIndex": 0}
        yield {"type": "done", "reason": "stop"}


def create(ctx, messages):
    if messages[-1]["content"] == "leak":
        raise ValueError(f"this hook saw {os.environ['OPENAI_API_KEY']}")
    secret = (ctx.metadata or {}).get("api_key", "")
    return {"messages": [{"role": "system", "content": f"Be brief (key {secret})."}, *messages]}


HOOKS = hooks_from_python({"create": create})
OPTIONS = {"extra_headers": {"Authorization": f"Bearer {BEARER}"}}
CASES = [["hi", "quote"], {"id": "fails", "turns": ["fail"]}, {"id": "leaks", "turns": ["hello", "leak"]},
         {"id": "ctx", "turns": ["meta"], "ctx": {"metadata": {"api_key": CTX_KEY, "note": f"sent {CTX_KEY}"}}}]


@pytest.fixture
def recorded(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    model = KeyedModel()
    suite = Suite.record(tmp_path / "suite.jsonl", CASES, model=model, hooks=HOOKS, options=OPTIONS, concurrency=2)
    assert all(request == OPTIONS for request in model.requests)  # the real model got the real header
    return suite


def assert_no_secret(data: bytes) -> None:
    for secret in (ENV_KEY, MODEL_KEY, CTX_KEY, BEARER):
        assert secret.encode() not in data, secret


def test_no_key_is_in_the_file_and_each_place_it_stood_reads_redacted(recorded):
    data = recorded.path.read_bytes()
    assert_no_secret(data)
    cases = {case.id: case for case in recorded.cases}
    first = cases["case-1"]
    assert first.calls[0]["request"]["options"] == {"extra_headers": {"Authorization": "***"}}
    assert first.results[1]["messages"][1]["content"][0]["text"] == "Your key is ***"
    assert cases["fails"].calls[0]["events"][-1]["error"]["message"] == "upstream refused key ***"
    assert "***" in cases["fails"].results[0]["error"]["message"]
    assert cases["leaks"].results[1]["error"]["message"].endswith("this hook saw ***")
    assert cases["ctx"].ctx == {"metadata": {"api_key": "***", "note": "sent ***"}}
    assert cases["ctx"].calls[0]["request"]["messages"][0]["content"] == [
        {"type": "text", "text": "Be brief (key ***)."}]


def test_the_redacted_suite_still_checks_offline_with_the_same_hooks_and_options(recorded, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    report = Suite(recorded.path).check(hooks=HOOKS, options=OPTIONS)
    assert report.passed == ["case-1", "fails", "leaks", "ctx"], str(report)
    assert_no_secret(str(report).encode() + report.to_html().encode())


def test_re_recording_with_update_writes_no_key_either(recorded, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    other = hooks_from_python({"create": lambda ctx, messages: {"messages": [
        {"role": "system", "content": f"Be very brief ({os.environ['OPENAI_API_KEY']})."}, *messages]}})
    report = Suite(recorded.path).check(hooks=other, options=OPTIONS, update=True, model=KeyedModel())
    assert set(report.model_changed) == {"case-1", "fails", "leaks", "ctx"}
    assert_no_secret(recorded.path.read_bytes())
    assert Suite(recorded.path).check(hooks=other, options=OPTIONS).ok


def test_recording_through_a_real_sdk_connector_keeps_its_authorization_header_off_the_file(tmp_path, monkeypatch):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from wire_server import Reply, WireServer, capture

    from agentctx_widgets.models import OpenAIChatModel

    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    with WireServer(Reply(capture("openai_chat/text.sse"))) as server:
        for name, model in (("own-key", OpenAIChatModel("gpt-4.1-mini", base_url=server.url, api_key=MODEL_KEY)),
                            ("env-key", OpenAIChatModel("gpt-4.1-mini", base_url=server.url))):
            suite = Suite.record(tmp_path / f"{name}.jsonl", ["hi"], model=model)
            assert_no_secret(suite.path.read_bytes())
            assert suite.cases[0].results[0]["error"] is None
    sent = [request.headers.get("authorization") for request in server.requests]
    assert sent == [f"Bearer {MODEL_KEY}", f"Bearer {ENV_KEY}"]  # the keys were on the wire, not in the files

"""A custom model's errors lose the keys they carry (issue 21, "secrets redacted from every error, output
message and repr"): the built-in connectors blank their call's key themselves (models/connector.py); a
user's own ``Model`` that raises, or yields an ``error`` event, with ``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY``
or the key it was given in the text had it shown verbatim in ``result.error``, the error output, the view,
``TurnError`` and ``repr(result)``. hooks/turn_core.stream_reply, shared by both lifecycles, blanks them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentctx_widgets import Context, ContextView, ModelError, OpenAIChatModel, TurnError, hooks_from_python, run_turn
from agentctx_widgets.hooks import turn_core
from agentctx_widgets.models import hints

OPENAI = "sk-openai-0123456789abcdef"
ANTHROPIC = "sk-ant-fedcba9876543210"
OWN = "own-key-5555aaaa7777"


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC)


class Raising:
    """Raises, as a hand-written HTTP client does with the server's 401 body in the message."""

    def __init__(self, api_key: str | None = None) -> None:
        self.api_key = api_key

    def stream(self, messages: list[dict], *, options: dict | None = None):
        raise RuntimeError(f"401 from server: key {OPENAI} / {ANTHROPIC} / {OWN} refused")


class Yielding:
    """Yields a start, some text, then an error event carrying the keys."""

    def __init__(self, api_key: str | None = None) -> None:
        self._api_key = api_key

    def stream(self, messages: list[dict], *, options: dict | None = None):
        yield {"type": "start", "model": "mine"}
        yield {"type": "error", "error": {"message": f"denied for {OPENAI}, {ANTHROPIC} and {OWN}",
                                          "code": "AUTHENTICATION", "hint": f"check {OWN}"}}


class OwnStr(Exception):
    def __str__(self) -> str:  # text of its own, not from args: nothing can be blanked in place
        return f"the server echoed {OPENAI}"


class RaisingOwnStr:
    def stream(self, messages: list[dict], *, options: dict | None = None):
        raise OwnStr()


SECRETS = (OPENAI, ANTHROPIC, OWN)


def assert_clean(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, text


def seed_turn(model, **kwargs):
    seen = []
    hooks = hooks_from_python({"Error": lambda ctx, messages, error: seen.append(error)})
    context = Context(name="seed")
    view = ContextView(context)
    result = run_turn(context, "hello", model=model, hooks=hooks, view=view, check=False, **kwargs)
    return result, seen, view


@pytest.mark.parametrize("model", [Raising, Yielding])
def test_the_seed_lifecycle_blanks_the_keys_of_a_custom_models_failure(model) -> None:
    result, seen, view = seed_turn(model(api_key=OWN))
    assert not result.ok
    assert result.error["message"].count("***") == 3, result.error
    assert_clean(json.dumps(result.error), json.dumps(seen, default=str), json.dumps(result.output, default=str),
                 repr(result), json.dumps(view.state(), default=str))
    assert any("***" in json.dumps(message) for message in result.output)  # the error output says it, blanked
    view.close()


def test_what_stays_of_a_raised_error_is_its_type_and_the_rest_of_its_text() -> None:
    result, _, view = seed_turn(Raising(api_key=OWN))
    assert result.error == {"message": "RuntimeError: 401 from server: key *** / *** / *** refused",
                            "code": "TURN_ERROR", "name": "RuntimeError", "hook": None}
    view.close()
    result, _, view = seed_turn(Yielding(api_key=OWN))
    assert result.error == {"message": "denied for ***, *** and ***", "code": "AUTHENTICATION", "name": "ModelError",
                            "hook": None}
    view.close()


def test_turn_error_shows_no_key() -> None:
    with pytest.raises(TurnError) as raised:
        run_turn(Context(), "hello", model=Raising(api_key=OWN))
    assert_clean(str(raised.value), repr(raised.value.result))
    assert "***" in str(raised.value)


def test_an_exception_with_its_own_str_is_replaced_by_a_model_error_without_the_key() -> None:
    result, _, view = seed_turn(RaisingOwnStr())
    assert result.error["message"] == "OwnStr: the server echoed ***"
    assert result.error["name"] == "ModelError"
    assert_clean(repr(result), json.dumps(result.output, default=str))
    view.close()


# -- Yao's request (run_turn(assistant=...)) -------------------------------------------------------------


@pytest.fixture
def assistant(tmp_path: Path) -> Path:
    directory = tmp_path / "assistants" / "tests" / "keys"
    directory.mkdir(parents=True)
    (directory / "package.yao").write_text('{"name": "Keys", "connector": "custom"}')
    (directory / "prompts.yml").write_text("- role: system\n  content: You answer.\n")
    return directory


@pytest.mark.parametrize("model", [Raising, Yielding])
def test_a_yao_request_blanks_the_keys_of_a_custom_models_failure(model, assistant: Path) -> None:
    context = Context(name="yao")
    view = ContextView(context)
    result = run_turn(context, "hello", assistant=assistant, model=model(api_key=OWN), view=view, check=False)
    assert not result.ok
    assert "***" in result.error["message"], result.error
    assert_clean(json.dumps(result.error, default=str), json.dumps(result.messages, default=str), result.client,
                 repr(result), json.dumps(view.state(), default=str), json.dumps(context.messages(), default=str))
    assert any("***" in json.dumps(message) for message in result.messages)  # the client is told, blanked
    view.close()


# -- what is read, and what is left alone ------------------------------------------------------------------


def test_the_key_variables_are_those_the_built_in_connectors_read() -> None:
    from agentctx_widgets.models.anthropic import ANTHROPIC as anthropic_provider
    from agentctx_widgets.models.openai_chat import CHAT
    from agentctx_widgets.models.openai_responses import RESPONSES

    assert {provider.key_env for provider in (CHAT, RESPONSES, anthropic_provider)} <= set(hints.KEY_ENVS)


def test_model_secrets_reads_attributes_without_running_properties(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    built = []

    class Client:
        def __init__(self) -> None:
            self.api_key = "client-key-12345678"

    class Wrapper:
        token = "class-token-87654321"
        short = "abc"

        def __init__(self) -> None:
            self._client = Client()
            self.api_key = "abc"  # too short to be a key: blanking it would blank words

        @property
        def client(self):
            built.append(1)
            return Client()

    assert hints.model_secrets(Wrapper()) == (OPENAI, "class-token-87654321", "client-key-12345678")
    assert built == []


def test_the_built_in_connectors_are_left_to_their_own_redaction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(turn_core, "model_secrets", lambda model: pytest.fail("read for a built-in connector"))
    failure = ModelError(f"kept as the connector made it: {ANTHROPIC}")
    model = OpenAIChatModel("gpt-4.1-mini", api_key="sk-unused-00000000", base_url="http://127.0.0.1:9/v1")
    assert turn_core._redacted(model, failure) is failure
    assert failure.message.endswith(ANTHROPIC)

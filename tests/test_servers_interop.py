"""The servers people run locally, replayed on a loopback socket: their request validation, their chunk
shapes, their error bodies — each written from the server's own source (docs/servers.md cites the file
and line of every rule below) — driven through ``OpenAIChatModel`` + ``run_turn`` and the real ``openai``
SDK, never a mock of it. Every quirk in docs/servers.md's table has one test here (its name is in the
table's last column).

One replay is checked against the real thing: llama-cpp-python's 500 for ``content: null`` is compared
byte for byte with the body its own FastAPI route answered (tests/vectors/wire/servers/).
"""

from __future__ import annotations

import functools
import http.server
import json
import threading
import urllib.request
from pathlib import Path
from typing import Any, Callable

import pytest

import agentctx_widgets
from agentctx_widgets import Context
from agentctx_widgets.models import OpenAIChatModel
from agentctx_widgets.models.compat import PROFILES
from agentctx_widgets.models.convert import RequestError

run = functools.partial(agentctx_widgets.run_turn, check=False)
pytestmark = pytest.mark.timeout(300)  # a hang guard only: a loaded machine is slow, not failing

VECTORS = Path(__file__).parent / "vectors" / "wire" / "servers"
CREATED = 1767225600


def get_weather(city: str, unit: str = "c") -> str:
    """Weather for a city."""
    return f"18 {unit.upper()}, cloudy in {city}"


def get_time(tz: str) -> str:
    """The local time in a time zone."""
    return "14:05"


# -- the loopback server ---------------------------------------------------------------------------------


class Answer:
    """One HTTP response: JSON (``body`` a dict/str) or an SSE stream (``events``: dicts or raw strings,
    each sent as ``data: ...``; ``cut`` closes the socket after the events without the final chunk)."""

    def __init__(self, status: int = 200, body: Any = None, events: list | None = None, cut: bool = False,
                 content_type: str | None = None) -> None:
        self.status, self.body, self.events, self.cut = status, body, events, cut
        self.content_type = content_type


class Emulator(http.server.ThreadingHTTPServer):
    """A server on 127.0.0.1 that answers each request with ``handle(path, headers, body)``; every
    request body is kept (``self.bodies``)."""

    daemon_threads = True

    def __init__(self, handle: Callable[[str, dict, Any], Answer]) -> None:
        self.handle = handle
        self.bodies: list[Any] = []
        self.paths: list[str] = []
        super().__init__(("127.0.0.1", 0), _Handler)

    @property
    def root(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> Emulator:
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()
        self.server_close()


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw
        server: Emulator = self.server  # type: ignore[assignment]
        server.bodies.append(body)
        server.paths.append(self.path)
        answer = server.handle(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        self.send_response(answer.status)
        if answer.events is None:
            data = answer.body if isinstance(answer.body, (str, bytes)) else json.dumps(answer.body)
            data = data.encode() if isinstance(data, str) else data
            self.send_header("content-type", answer.content_type or "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_header("content-type", answer.content_type or "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for event in answer.events:
            piece = (event if isinstance(event, str) else "data: " + json.dumps(event) + "\n\n").encode()
            self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.flush()
        if answer.cut:
            self.close_connection = True
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def model_on(server: Emulator, path: str = "/v1", name: str = "smollm2", **kwargs: Any) -> OpenAIChatModel:
    return OpenAIChatModel(name, base_url=server.root + path, **({"api_key": "sk-local"} | kwargs))


def user_sees(result: Any) -> str:
    return result.error["message"]


# -- what each server answers, from its source -----------------------------------------------------------
# A script is what "the model" says, round by round: {"text": "..."} or {"calls": [(name, arguments)]}.


class Ollama:
    """ollama@fb30760: openai/openai.go (types, FromChatRequest, toChunk, FinishChunk, NewError) and
    middleware/openai.go (ChatMiddleware, ChatWriter, writeError)."""

    models = ("llama3.2",)

    def __init__(self, script: list[dict], midstream_error: str | None = None) -> None:
        self.script, self.midstream_error, self.round = script, midstream_error, 0

    @staticmethod
    def error(status: int, message: str) -> Answer:
        kind = {400: "invalid_request_error", 404: "not_found_error"}.get(status, "api_error")
        return Answer(status, {"error": {"message": message, "type": kind, "param": None, "code": None}})

    def __call__(self, path: str, headers: dict, body: Any) -> Answer:
        if path != "/v1/chat/completions":
            return Answer(404, "404 page not found", content_type="text/plain")  # gin's NoRoute
        if not body.get("messages"):
            return self.error(400, "[] is too short - 'messages'")
        for message in body["messages"]:
            content, calls = message.get("content"), message.get("tool_calls")
            if content is None and calls is None:
                return self.error(400, "invalid message content type: <nil>")
            for call in calls or []:
                try:
                    json.loads(call["function"]["arguments"])
                except ValueError:
                    return self.error(400, "invalid tool call arguments")
        if body["model"] not in self.models:  # routes.go ChatHandler, through writeError
            return self.error(404, f"model '{body['model']}' not found")
        answer = self.script[min(self.round, len(self.script) - 1)]
        self.round += 1
        base = {"id": "chatcmpl-412", "object": "chat.completion.chunk", "created": CREATED, "model": body["model"],
                "system_fingerprint": "fp_ollama"}

        def chunk(delta: dict, finish: str | None = None) -> dict:
            return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        events: list = []
        if "text" in answer:
            for n, piece in enumerate(_pieces(answer["text"])):
                events.append(chunk({"role": "assistant", "content": piece} if n == 0 else {"content": piece}))
            finish = "stop"
        else:  # a whole call per chunk, index from the model's function index, content "" kept
            calls = [{"id": f"call_{n}8kq2", "index": n, "type": "function",
                      "function": {"name": name, "arguments": arguments}} for n, (name, arguments) in enumerate(answer["calls"])]
            events.append(chunk({"role": "assistant", "content": "", "tool_calls": calls}))
            finish = "tool_calls"
        if self.midstream_error:  # streamResponse writes {"error": ...}; ChatWriter decodes it as an empty response
            events.append(chunk({"content": ""}))
            return Answer(events=events, cut=False)
        events.append(chunk({}, finish))
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append({**base, "choices": [], "usage": {"prompt_tokens": 31, "completion_tokens": 7, "total_tokens": 38}})
        events.append("data: [DONE]\n\n")
        return Answer(events=events)


class LlamaServer:
    """llama.cpp@aa6192d tools/server: server-common.cpp (format_error_response, oaicompat_chat_params_parse),
    server-task.cpp (to_json_oaicompat_chat_stream, result_timings::to_json), common/chat.cpp
    (common_chat_msgs_parse_oaicompat); routes /chat/completions and /v1/chat/completions."""

    def __init__(self, script: list[dict], api_key: str | None = None, midstream_error: str | None = None) -> None:
        self.script, self.api_key, self.midstream_error, self.round = script, api_key, midstream_error, 0

    @staticmethod
    def error(status: int, message: str, kind: str) -> Answer:
        return Answer(status, {"error": {"code": status, "message": message, "type": kind}})

    def __call__(self, path: str, headers: dict, body: Any) -> Answer:
        if self.api_key and headers.get("authorization") != f"Bearer {self.api_key}":
            return self.error(401, "Invalid API Key", "authentication_error")
        if path not in ("/v1/chat/completions", "/chat/completions"):
            return self.error(404, "File Not Found", "not_found_error")
        for message in body["messages"]:
            if message.get("role") == "assistant" and "content" not in message and "tool_calls" not in message:
                return self.error(500, "Assistant message must contain either 'content' or 'tool_calls'!", "server_error")
            content = message.get("content")
            if content is not None and not isinstance(content, (str, list)):
                return self.error(500, "Expected 'content' to be a string or an array", "server_error")
        answer = self.script[min(self.round, len(self.script) - 1)]
        self.round += 1
        base = {"created": CREATED, "id": "chatcmpl-Hq2XbV9sKp3LmN8rT4wYcZ1aDfGe", "model": body["model"],
                "system_fingerprint": "b6550-aa6192d3", "object": "chat.completion.chunk"}

        def chunk(delta: dict, finish: str | None = None) -> dict:
            return {"choices": [{"finish_reason": finish, "index": 0, "delta": delta}], **base}

        events: list = [chunk({"role": "assistant", "content": None})]
        if "text" in answer:
            events += [chunk({"content": piece}) for piece in _pieces(answer["text"])]
            finish = "stop"
        else:
            calls = answer["calls"] if body.get("parallel_tool_calls") else answer["calls"][:1]
            for n, (name, arguments) in enumerate(calls):
                events.append(chunk({"tool_calls": [{"index": n, "id": f"Rk{n}fZt8uJ2mQw", "type": "function",
                                                     "function": {"name": name, "arguments": ""}}]}))
                events += [chunk({"tool_calls": [{"index": n, "function": {"arguments": piece}}]}) for piece in _pieces(arguments)]
            finish = "tool_calls"
        if self.midstream_error:  # the result is an error: data: {"error": ...}, then the stream ends
            events.append({"error": {"code": 500, "message": self.midstream_error, "type": "server_error"}})
            return Answer(events=events)
        events.append(chunk({}, finish))
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append({"choices": [], **base, "usage": {"completion_tokens": 9, "prompt_tokens": 35, "total_tokens": 44}})
        events[-1]["timings"] = {"cache_n": 0, "prompt_n": 35, "prompt_ms": 21.4, "prompt_per_token_ms": 0.61,
                                 "prompt_per_second": 1635.5, "predicted_n": 9, "predicted_ms": 48.2,
                                 "predicted_per_token_ms": 5.36, "predicted_per_second": 186.7}
        events.append("data: [DONE]\n\n")
        return Answer(events=events)


SITE = "/tmp/srvenv/lib/python3.11/site-packages"  # where the captured 500 (tests/vectors/wire/servers/) was made


class LlamaCppPython:
    """llama-cpp-python@3691546: llama_cpp/server/app.py (routes, authenticate, EventSourceResponse),
    errors.py (RouteErrorHandler: every exception → 500 {"error": {...}}), types.py and llama_types.py
    (the pydantic request), llama_chat_format.py (chunks; tool calls only for a named tool_choice)."""

    def __init__(self, script: list[dict], api_key: str | None = None) -> None:
        self.script, self.api_key, self.round = script, api_key, 0

    def __call__(self, path: str, headers: dict, body: Any) -> Answer:
        if path != "/v1/chat/completions":
            return Answer(404, {"detail": "Not Found"})
        if self.api_key and headers.get("authorization") != f"Bearer {self.api_key}":
            return Answer(401, {"detail": "Invalid API key"})
        for index, message in enumerate(body["messages"]):
            if message.get("role") == "assistant" and "content" in message and not isinstance(message["content"], str):
                return Answer(500, {"error": {"message": _pydantic_assistant_errors(index, message), "type": "internal_server_error",
                                              "param": None, "code": None}})
        answer = self.script[min(self.round, len(self.script) - 1)]
        self.round += 1
        forced = body.get("tool_choice") if isinstance(body.get("tool_choice"), dict) else None
        cmpl = "cmpl-7d2b1c4e-5f8a-4a39-9e61-2b0c8d3f4a17"
        base = {"id": "chat" + cmpl, "model": body.get("model"), "created": CREATED, "object": "chat.completion.chunk"}
        if forced and "calls" in answer:  # _stream_response_to_function_stream: every chunk repeats the call
            name, arguments = next(call for call in answer["calls"] if call[0] == forced["function"]["name"])
            call_id = f"call__0_{name}_{cmpl}"
            events: list = [{**base, "choices": [{"index": 0, "finish_reason": None, "logprobs": None, "delta": {
                "role": "assistant", "content": None, "function_call": None, "tool_calls": None}}]}]
            for piece in _pieces(arguments):
                events.append({**base, "choices": [{"index": 0, "finish_reason": None, "logprobs": None, "delta": {
                    "role": None, "content": None, "function_call": {"name": name, "arguments": piece},
                    "tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                    "function": {"name": name, "arguments": piece}}]}}]})
            events.append({**base, "choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": None, "delta": {
                "role": None, "content": None, "function_call": None, "tool_calls": None}}]})
        else:  # _convert_text_completion_chunks_to_chat: role, text, then {} with the finish reason; no usage
            text = answer.get("text") or "I would call a tool, but nothing parses my calls."
            events = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant"}, "logprobs": None, "finish_reason": None}]}]
            events += [{**base, "choices": [{"index": 0, "delta": {"content": piece}, "logprobs": None, "finish_reason": None}]}
                       for piece in _pieces(text)]
            events.append({**base, "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}]})
        events.append("data: [DONE]\n\n")
        return Answer(events=events)


def _pydantic_assistant_errors(index: int, message: dict) -> str:
    """FastAPI's str(RequestValidationError) for an assistant message whose content is not a string: the
    message fails every member of llama_types.ChatCompletionRequestMessage (System, User, Assistant, Tool,
    Function), in that order, then the endpoint's place (FastAPI >= 0.11x adds it)."""
    loc = ("body", "messages", index)
    expected = lambda role: {"expected": f"'{role}'"}  # noqa: E731
    errors = [
        {"type": "literal_error", "loc": (*loc, "ChatCompletionRequestSystemMessage", "role"), "msg": "Input should be 'system'",
         "input": "assistant", "ctx": expected("system")},
        {"type": "literal_error", "loc": (*loc, "ChatCompletionRequestUserMessage", "role"), "msg": "Input should be 'user'",
         "input": "assistant", "ctx": expected("user")},
        {"type": "string_type", "loc": (*loc, "ChatCompletionRequestAssistantMessage", "content"),
         "msg": "Input should be a valid string", "input": message["content"]},
        {"type": "literal_error", "loc": (*loc, "ChatCompletionRequestToolMessage", "role"), "msg": "Input should be 'tool'",
         "input": "assistant", "ctx": expected("tool")},
        {"type": "missing", "loc": (*loc, "ChatCompletionRequestToolMessage", "tool_call_id"), "msg": "Field required", "input": message},
        {"type": "literal_error", "loc": (*loc, "ChatCompletionRequestFunctionMessage", "role"), "msg": "Input should be 'function'",
         "input": "assistant", "ctx": expected("function")},
        {"type": "missing", "loc": (*loc, "ChatCompletionRequestFunctionMessage", "name"), "msg": "Field required", "input": message},
    ]
    lines = "\n".join(f"  {error}" for error in errors)
    return (f"{len(errors)} validation errors:\n{lines}\n\n  File \"{SITE}/llama_cpp/server/app.py\", line 376, in "
            "create_chat_completion\n    POST /v1/chat/completions")


class VLLM:
    """vLLM@d5dba2d: entrypoints/openai/chat_completion/protocol.py (ChatCompletionRequest and its
    validators), engine/protocol.py (ErrorInfo: code is the HTTP status), serving (_check_model, the
    auto-tool-choice check, the usage chunk)."""

    def __init__(self, script: list[dict], served: str = "Qwen/Qwen3-0.6B", auto_tool_choice: bool = True) -> None:
        self.script, self.served, self.auto_tool_choice, self.round = script, served, auto_tool_choice, 0

    @staticmethod
    def error(status: int, message: str, kind: str) -> Answer:
        return Answer(status, {"error": {"message": message, "type": kind, "param": None, "code": status}})

    def __call__(self, path: str, headers: dict, body: Any) -> Answer:
        if path != "/v1/chat/completions":
            return Answer(404, {"detail": "Not Found"})
        if body.get("model") != self.served:
            return self.error(404, f"The model `{body.get('model')}` does not exist.", "NotFoundError")
        tool_choice = body.get("tool_choice", "auto" if body.get("tools") else "none")
        if tool_choice == "auto" and not self.auto_tool_choice:
            return self.error(400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
                              "BadRequestError")
        answer = self.script[min(self.round, len(self.script) - 1)]
        self.round += 1
        base = {"id": "chatcmpl-b1f0c2d3e4f5a6b7", "object": "chat.completion.chunk", "created": CREATED, "model": self.served}

        def chunk(delta: dict, finish: str | None = None) -> dict:
            return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

        events: list = [chunk({"role": "assistant", "content": ""})]
        if "reasoning" in answer:
            events += [chunk({"reasoning": piece}) for piece in _pieces(answer["reasoning"])]
        if "text" in answer:
            events += [chunk({"content": piece}) for piece in _pieces(answer["text"])]
            finish = "stop"
        else:
            for n, (name, arguments) in enumerate(answer["calls"]):
                events.append(chunk({"tool_calls": [{"id": f"chatcmpl-tool-{n}a7c", "type": "function", "index": n,
                                                     "function": {"name": name, "arguments": ""}}]}))
                events += [chunk({"tool_calls": [{"index": n, "function": {"arguments": piece}}]}) for piece in _pieces(arguments)]
            finish = "tool_calls"
        events.append(chunk({}, finish))
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append({**base, "choices": [], "usage": {"prompt_tokens": 24, "total_tokens": 33, "completion_tokens": 9}})
        events.append("data: [DONE]\n\n")
        return Answer(events=events)


class LiteLLMProxy:
    """LiteLLM proxy@0bf90f0: proxy/_types.py ProxyException (code sent as a string), the auth error of
    user_api_key_auth; routes with and without /v1; chunks passed through in OpenAI's shape."""

    def __init__(self, script: list[dict], key: str = "sk-1234") -> None:
        self.script, self.key, self.round = script, key, 0

    def __call__(self, path: str, headers: dict, body: Any) -> Answer:
        if path not in ("/v1/chat/completions", "/chat/completions"):
            return Answer(404, {"detail": "Not Found"})
        given = (headers.get("authorization") or "").removeprefix("Bearer ")
        if given != self.key:
            return Answer(401, {"error": {"message": f"Authentication Error, Invalid proxy server token passed. Received API "
                                                     f"Key = sk-...{given[-4:]}, Key Hash (Token) =e3b0c44298fc1c149afbf4c8996fb924",
                                          "type": "auth_error", "param": "None", "code": "401"}})
        answer = self.script[min(self.round, len(self.script) - 1)]
        self.round += 1
        base = {"id": "chatcmpl-3c1d", "created": CREATED, "model": body["model"], "object": "chat.completion.chunk"}
        events = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": piece}}]} for piece in _pieces(answer["text"])]
        events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append({**base, "choices": [], "usage": {"completion_tokens": 6, "prompt_tokens": 20, "total_tokens": 26}})
        events.append("data: [DONE]\n\n")
        return Answer(events=events)


def _pieces(text: str) -> list[str]:
    """Split a reply into the small deltas a server streams."""
    size = max(1, len(text) // 3)
    return [text[i:i + size] for i in range(0, len(text), size)]


WEATHER = {"calls": [("get_weather", '{"city": "Paris"}')]}
TWO_CALLS = {"calls": [("get_weather", '{"city": "Paris"}'), ("get_time", '{"tz": "Europe/Paris"}')]}
SUNNY = {"text": "It is 18 C and cloudy in Paris."}


# -- llama-cpp-python ------------------------------------------------------------------------------------


def test_llama_cpp_python_replay_answers_content_null_exactly_as_its_fastapi_route_did():
    captured = json.loads((VECTORS / "llama_cpp_python_content_null.json").read_text(encoding="utf-8"))
    with Emulator(LlamaCppPython([SUNNY])) as server:
        request = urllib.request.Request(server.root + "/v1/chat/completions", data=json.dumps(captured["request"]).encode(),
                                         headers={"content-type": "application/json"}, method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=5)  # noqa: S310 - loopback
    assert refused.value.code == captured["status"] == 500
    assert json.loads(refused.value.read()) == captured["response"]


def test_llama_cpp_python_tool_round_trip_completes_because_content_goes_out_as_empty_string():
    """Tool calls come only for a named tool_choice (the generic handler parses nothing else); each chunk
    repeats the call's index, id and name; the second round's assistant message carries content ""."""
    with Emulator(LlamaCppPython([WEATHER, SUNNY])) as server:
        context = Context()
        result = run(context, "Weather in Paris?", model=model_on(server), tools=[get_weather],
                     options={"tool_choice": {"type": "function", "function": {"name": "get_weather"}}})
    assert result.error is None
    assert result.response["content"] == "It is 18 C and cloudy in Paris."
    first, second = server.bodies
    assert first["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert "tool_choice" not in second  # the first round only: repeated, it would force a call every round
    call_id = "call__0_get_weather_cmpl-7d2b1c4e-5f8a-4a39-9e61-2b0c8d3f4a17"
    assert second["messages"][1:] == [
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]},
        {"role": "tool", "tool_call_id": call_id, "content": "18 C, cloudy in Paris"}]
    assert [m["type"] for m in context.messages()] == [2, 3, 4, 3]


def test_llama_cpp_python_sends_no_usage_so_the_turn_says_estimate():
    with Emulator(LlamaCppPython([SUNNY])) as server:
        result = run(Context(), "hi", model=model_on(server))
    assert result.error is None and result.response["content"] == "It is 18 C and cloudy in Paris."
    assert server.bodies[0]["stream_options"] == {"include_usage": True}  # sent, and ignored (pydantic extra)
    assert result.usage["source"] == "estimate"


def test_llama_cpp_python_accepts_any_model_name_and_echoes_it():
    with Emulator(LlamaCppPython([SUNNY])) as server:
        result = run(Context(), "hi", model=model_on(server, name="gpt-4o"))
    assert result.error is None  # llama_proxy() falls back to the default model: nothing says so


def test_llama_cpp_python_401_detail_is_the_message_with_the_url():
    with Emulator(LlamaCppPython([SUNNY], api_key="sk-right")) as server:
        result = run(Context(), "hi", model=model_on(server, api_key="sk-wrong"))
    url = f"POST {server.root}/v1/chat/completions"
    assert user_sees(result) == (f"openai answered HTTP 401: Invalid API key ({url}, model 'smollm2'; "
                                 "the API key came from api_key=)")


def test_llama_cpp_python_without_v1_is_a_fastapi_404_with_the_hint():
    with Emulator(LlamaCppPython([SUNNY])) as server:
        result = run(Context(), "hi", model=model_on(server, path=""))
    assert user_sees(result).startswith(f"openai answered HTTP 404: Not Found (POST {server.root}/chat/completions, "
                                        f"model 'smollm2'). Hint: base_url {server.root} has no /v1")


def test_llama_cpp_python_profile_sends_max_tokens_the_only_name_it_reads():
    with Emulator(LlamaCppPython([SUNNY, SUNNY])) as server:
        run(Context(), "hi", model=model_on(server, max_completion_tokens=64))
        run(Context(), "hi", model=model_on(server, max_completion_tokens=64, compat="llama-cpp-python"))
    plain, profiled = server.bodies
    assert plain["max_completion_tokens"] == 64 and "max_tokens" not in plain  # dropped by its pydantic model
    assert profiled["max_tokens"] == 64 and "max_completion_tokens" not in profiled and "compat" not in profiled


# -- llama-server ----------------------------------------------------------------------------------------


def test_llama_server_usage_chunk_is_the_provider_usage_and_carries_timings():
    with Emulator(LlamaServer([SUNNY])) as server:
        result = run(Context(), "hi", model=model_on(server))
    assert result.error is None and result.response["content"] == "It is 18 C and cloudy in Paris."
    assert (result.usage["inputTokens"], result.usage["outputTokens"], result.usage["source"]) == (35, 9, "provider")
    # the chunk's timings are the server's own figures, kept on the call's record (docs/servers.md)
    [call] = result.calls
    assert call["serverTimings"]["prompt_n"] == 35 and call["serverTimings"]["predicted_per_second"] == 186.7
    assert "timings" not in result.usage


def test_llama_server_tool_round_trip_with_content_null_first_delta():
    with Emulator(LlamaServer([WEATHER, SUNNY])) as server:
        context = Context()
        result = run(context, "Weather in Paris?", model=model_on(server), tools=[get_weather])
    assert result.error is None and result.response["content"] == "It is 18 C and cloudy in Paris."
    assert server.bodies[1]["messages"][1] == {"role": "assistant", "content": "", "tool_calls": [
        {"id": "Rk0fZt8uJ2mQw", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]}
    assert [m["type"] for m in context.messages()] == [2, 3, 4, 3]


def test_llama_server_makes_one_call_per_round_unless_parallel_tool_calls_is_sent():
    """It reads parallel_tool_calls with a default of false; the llama-server profile sends true."""
    for compat, calls in ((None, 1), ("llama-server", 2)):
        with Emulator(LlamaServer([TWO_CALLS, SUNNY])) as server:
            context = Context()
            extra = {"compat": compat} if compat else {}
            result = run(context, "Weather and time in Paris?", model=model_on(server, **extra), tools=[get_weather, get_time])
        assert result.error is None
        assert server.bodies[0].get("parallel_tool_calls") is (True if compat else None)
        assert len([b for b in context.messages()[1]["content"] if b["type"] == "toolCall"]) == calls


def test_llama_server_serves_chat_completions_without_v1_too():
    with Emulator(LlamaServer([SUNNY])) as server:
        result = run(Context(), "hi", model=model_on(server, path=""))
    assert result.error is None and server.paths == ["/chat/completions"]


def test_llama_server_401_and_midstream_error_give_its_own_message():
    with Emulator(LlamaServer([SUNNY], api_key="sk-right")) as server:
        result = run(Context(), "hi", model=model_on(server, api_key="sk-wrong"))
    assert user_sees(result) == (f"openai answered HTTP 401: Invalid API Key (POST {server.root}/v1/chat/completions, "
                                 "model 'smollm2'; the API key came from api_key=)")
    assert result.error["code"] == "AUTHENTICATION"
    with Emulator(LlamaServer([SUNNY], midstream_error="the request exceeds the available context size")) as server:
        context = Context()
        result = run(context, "hi", model=model_on(server))
    assert user_sees(result) == "openai stream error: the request exceeds the available context size"
    assert [m["type"] for m in context.messages()] == [2]  # nothing half-written was committed


# -- Ollama ----------------------------------------------------------------------------------------------


def test_ollama_plain_turn_usage_comes_after_the_finish_chunk():
    with Emulator(Ollama([SUNNY])) as server:
        result = run(Context(), "hi", model=model_on(server, name="llama3.2", api_key="ollama"))
    assert result.error is None and result.response["content"] == "It is 18 C and cloudy in Paris."
    assert (result.usage["inputTokens"], result.usage["outputTokens"], result.usage["source"]) == (31, 7, "provider")


def test_ollama_whole_tool_calls_in_one_chunk_round_trip():
    with Emulator(Ollama([TWO_CALLS, SUNNY])) as server:
        context = Context()
        result = run(context, "Weather and time?", model=model_on(server, name="llama3.2"), tools=[get_weather, get_time])
    assert result.error is None and result.response["content"] == "It is 18 C and cloudy in Paris."
    assert [m["role"] for m in server.bodies[1]["messages"]] == ["user", "assistant", "tool", "tool"]
    assert [m["type"] for m in context.messages()] == [2, 3, 4, 4, 3]


def test_ollama_unknown_model_is_a_404_naming_it_with_the_hint():
    with Emulator(Ollama([SUNNY])) as server:
        result = run(Context(), "hi", model=model_on(server, name="llama3.3"))
    base = f"{server.root}/v1"
    assert user_sees(result) == (f"openai answered HTTP 404: model 'llama3.3' not found (POST {base}/chat/completions, "
                                 f"model 'llama3.3'). Hint: is 'llama3.3' a model this server serves? {base}/models lists them")
    assert result.error["code"] == "NOT_FOUND"


def test_ollama_without_v1_is_gins_plain_text_404_with_the_hint():
    with Emulator(Ollama([SUNNY])) as server:
        result = run(Context(), "hi", model=model_on(server, path="", name="llama3.2"))
    assert user_sees(result).startswith(f"openai answered HTTP 404: 404 page not found (POST {server.root}/chat/completions")
    assert f"base_url {server.root} has no /v1" in user_sees(result)


def test_ollama_error_after_the_first_chunk_is_lost_so_the_turn_says_incomplete():
    """streamResponse writes {"error": ...} into a 200 stream; the OpenAI layer decodes it as an empty
    response and stops: no finish chunk, no [DONE], the server's message is not on the wire."""
    with Emulator(Ollama([SUNNY], midstream_error="model runner has unexpectedly stopped")) as server:
        context = Context()
        result = run(context, "hi", model=model_on(server, name="llama3.2"))
    assert result.error["code"] == "INCOMPLETE"
    assert user_sees(result) == "openai: the stream ended without a finish_reason (the response is incomplete)"
    assert [m["type"] for m in context.messages()] == [2]


def test_ollama_profile_sends_max_tokens_the_only_name_it_reads():
    with Emulator(Ollama([SUNNY, SUNNY])) as server:
        run(Context(), "hi", model=model_on(server, name="llama3.2", max_completion_tokens=32))
        run(Context(), "hi", model=model_on(server, name="llama3.2", max_completion_tokens=32, compat="ollama"))
    assert "max_tokens" not in server.bodies[0]  # ChatCompletionRequest has only max_tokens: the limit is dropped
    assert server.bodies[1]["max_tokens"] == 32 and "max_completion_tokens" not in server.bodies[1]


# -- vLLM ------------------------------------------------------------------------------------------------


def test_vllm_reasoning_deltas_and_usage():
    with Emulator(VLLM([{"reasoning": "The user greets.", "text": "Hello!"}])) as server:
        context = Context()
        result = run(context, "hi", model=model_on(server, name="Qwen/Qwen3-0.6B", api_key="EMPTY"))
    assert result.error is None and result.response["content"] == "Hello!"
    assert result.response["thinking"] == "The user greets."
    assert (result.usage["inputTokens"], result.usage["source"]) == (24, "provider")


def test_vllm_tool_round_trip():
    with Emulator(VLLM([WEATHER, SUNNY])) as server:
        result = run(Context(), "Weather?", model=model_on(server, name="Qwen/Qwen3-0.6B"), tools=[get_weather])
    assert result.error is None and result.response["content"] == "It is 18 C and cloudy in Paris."
    assert server.bodies[1]["messages"][2] == {"role": "tool", "tool_call_id": "chatcmpl-tool-0a7c",
                                               "content": "18 C, cloudy in Paris"}


def test_vllm_refuses_a_model_it_does_not_serve():
    with Emulator(VLLM([SUNNY])) as server:
        result = run(Context(), "hi", model=model_on(server, name="qwen3"))
    assert user_sees(result).startswith(f"openai answered HTTP 404: The model `qwen3` does not exist. "
                                        f"(POST {server.root}/v1/chat/completions, model 'qwen3')")


def test_vllm_without_auto_tool_choice_says_which_flags_the_server_needs():
    with Emulator(VLLM([WEATHER], auto_tool_choice=False)) as server:
        result = run(Context(), "Weather?", model=model_on(server, name="Qwen/Qwen3-0.6B"), tools=[get_weather])
    assert user_sees(result) == ('openai answered HTTP 400: "auto" tool choice requires --enable-auto-tool-choice and '
                                 f"--tool-call-parser to be set (POST {server.root}/v1/chat/completions, model "
                                 "'Qwen/Qwen3-0.6B')")
    assert result.error["code"] == "BAD_REQUEST"


# -- LiteLLM proxy ---------------------------------------------------------------------------------------


def test_litellm_proxy_plain_turn_and_its_string_code_auth_error():
    with Emulator(LiteLLMProxy([SUNNY])) as server:
        ok = run(Context(), "hi", model=model_on(server, name="gpt-4o-mini", api_key="sk-1234"))
        bad = run(Context(), "hi", model=model_on(server, name="gpt-4o-mini", api_key="sk-wrongkey9876"))
    assert ok.error is None and ok.usage["source"] == "provider"
    assert bad.error["code"] == "AUTHENTICATION"
    assert user_sees(bad).startswith("openai answered HTTP 401: Authentication Error, Invalid proxy server token passed. "
                                     "Received API Key = sk-...9876")
    assert "sk-wrongkey9876" not in user_sees(bad)
    assert f"(POST {server.root}/v1/chat/completions, model 'gpt-4o-mini'; the API key came from api_key=)" in user_sees(bad)


# -- LM Studio (closed source: only what its documentation says) ------------------------------------------


def test_lm_studio_default_port_is_in_the_connection_refused_hint():
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = run(Context(), "hi", model=OpenAIChatModel("qwen2.5-7b-instruct", base_url=f"http://127.0.0.1:{port}/v1",
                                                        api_key="lm-studio"))
    assert result.error["code"] == "CONNECTION"
    assert user_sees(result).endswith(f"Hint: nothing accepted the connection at http://127.0.0.1:{port}/v1: is the "
                                      "server running, on this host and port? (default ports: Ollama 11434, "
                                      "llama-server 8080, llama-cpp-python 8000, vLLM 8000, LM Studio 1234, LiteLLM proxy 4000)")


# -- profiles --------------------------------------------------------------------------------------------


def test_an_unknown_profile_is_refused_naming_the_known_ones():
    with pytest.raises(RequestError, match=r"compat='olama': expected one of 'ollama', 'llama-cpp-python', 'llama-server'"):
        OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1", api_key="k", compat="olama").request(
            [{"type": 2, "content": [{"type": "text", "text": "hi"}]}])
    assert set(PROFILES) == {"ollama", "llama-cpp-python", "llama-server"}

"""Re-record notebooks/recordings/models.jsonl and re-execute notebooks/models.ipynb (a maintainer's tool).

The shipped recordings were made through the real SDKs and our connectors against loopback servers
that speak each provider's wire format, replaying the streams written out below by hand from the
providers' documented event formats (we have no API keys here). To record against the real APIs
instead, run the notebook yourself with your keys and ``AGENTCTX_REPLAY=record``.

Run: ``.venv/bin/python notebooks/recordings/record_models.py``
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests"))

from wire_server import Reply, WireServer  # noqa: E402

LIMITS_OPENAI = {"x-ratelimit-limit-requests": "5000", "x-ratelimit-remaining-requests": "4999",
                 "x-ratelimit-limit-tokens": "2000000", "x-ratelimit-remaining-tokens": "1999920"}
LIMITS_ANTHROPIC = {"anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "49",
                    "anthropic-ratelimit-tokens-limit": "30000", "anthropic-ratelimit-tokens-remaining": "29000"}


def sse(events: list[tuple[str | None, dict | str]]) -> list[str]:
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
        out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    return out


def words(text: str) -> list[str]:
    parts = text.split(" ")
    return [part + (" " if i < len(parts) - 1 else "") for i, part in enumerate(parts)]


# -- OpenAI Chat Completions -------------------------------------------------------------------------
def chat(text: str, usage: dict) -> Reply:
    base = {"id": "chatcmpl-Bx1notebook", "object": "chat.completion.chunk", "created": 1764547200,
            "model": "gpt-4.1-mini-2025-04-14", "system_fingerprint": "fp_notebook"}
    events = [(None, {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]})]
    events += [(None, {**base, "choices": [{"index": 0, "delta": {"content": w}, "finish_reason": None}]}) for w in words(text)]
    events += [(None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
               (None, {**base, "choices": [], "usage": usage}), (None, "[DONE]")]
    return Reply(sse(events), headers=LIMITS_OPENAI)


# -- OpenAI Responses ----------------------------------------------------------------------------------
def responses(summary: str, text: str, usage: dict) -> Reply:
    rid, rs, msg = "resp_68notebook0001", "rs_68notebook0001", "msg_68notebook0001"
    shell = {"id": rid, "object": "response", "created_at": 1764547200, "status": "in_progress", "model": "o4-mini-2025-04-16",
             "output": [], "usage": None}
    n = iter(range(1000))
    events = [("response.created", {"type": "response.created", "sequence_number": next(n), "response": shell}),
              ("response.output_item.added", {"type": "response.output_item.added", "sequence_number": next(n), "output_index": 0,
                                              "item": {"id": rs, "type": "reasoning", "summary": []}}),
              ("response.reasoning_summary_part.added", {"type": "response.reasoning_summary_part.added", "sequence_number": next(n),
                                                         "item_id": rs, "output_index": 0, "summary_index": 0,
                                                         "part": {"type": "summary_text", "text": ""}})]
    events += [("response.reasoning_summary_text.delta", {"type": "response.reasoning_summary_text.delta", "sequence_number": next(n),
                                                          "item_id": rs, "output_index": 0, "summary_index": 0, "delta": w})
               for w in words(summary)]
    events += [("response.reasoning_summary_text.done", {"type": "response.reasoning_summary_text.done", "sequence_number": next(n),
                                                         "item_id": rs, "output_index": 0, "summary_index": 0, "text": summary}),
               ("response.output_item.done", {"type": "response.output_item.done", "sequence_number": next(n), "output_index": 0,
                                              "item": {"id": rs, "type": "reasoning",
                                                       "summary": [{"type": "summary_text", "text": summary}]}}),
               ("response.output_item.added", {"type": "response.output_item.added", "sequence_number": next(n), "output_index": 1,
                                               "item": {"id": msg, "type": "message", "status": "in_progress", "role": "assistant",
                                                        "content": []}}),
               ("response.content_part.added", {"type": "response.content_part.added", "sequence_number": next(n), "item_id": msg,
                                                "output_index": 1, "content_index": 0,
                                                "part": {"type": "output_text", "annotations": [], "text": ""}})]
    events += [("response.output_text.delta", {"type": "response.output_text.delta", "sequence_number": next(n), "item_id": msg,
                                               "output_index": 1, "content_index": 0, "delta": w}) for w in words(text)]
    item = {"id": msg, "type": "message", "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "annotations": [], "text": text}]}
    events += [("response.output_text.done", {"type": "response.output_text.done", "sequence_number": next(n), "item_id": msg,
                                              "output_index": 1, "content_index": 0, "text": text}),
               ("response.output_item.done", {"type": "response.output_item.done", "sequence_number": next(n), "output_index": 1,
                                              "item": item}),
               ("response.completed", {"type": "response.completed", "sequence_number": next(n),
                                       "response": {**shell, "status": "completed", "usage": usage,
                                                    "output": [{"id": rs, "type": "reasoning",
                                                                "summary": [{"type": "summary_text", "text": summary}]}, item]}})]
    return Reply(sse(events), headers=LIMITS_OPENAI)


# -- Anthropic Messages ------------------------------------------------------------------------------------
def anthropic(blocks: list[dict], stop: str, usage_start: dict, output_tokens: int) -> Reply:
    events = [("message_start", {"type": "message_start", "message": {
        "id": "msg_01Notebook", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5-20250929",
        "stop_reason": None, "stop_sequence": None, "usage": usage_start}})]
    for index, block in enumerate(blocks):
        kind = block["type"]
        if kind == "thinking":
            events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {"type": "thinking", "thinking": "", "signature": ""}}))
            events += [("content_block_delta", {"type": "content_block_delta", "index": index,
                                                "delta": {"type": "thinking_delta", "thinking": w}}) for w in words(block["thinking"])]
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                   "delta": {"type": "signature_delta", "signature": block["signature"]}}))
        elif kind == "text":
            events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {"type": "text", "text": ""}}))
            events += [("content_block_delta", {"type": "content_block_delta", "index": index,
                                                "delta": {"type": "text_delta", "text": w}}) for w in words(block["text"])]
        else:
            events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}))
            raw = json.dumps(block["input"])
            events += [("content_block_delta", {"type": "content_block_delta", "index": index,
                                                "delta": {"type": "input_json_delta", "partial_json": raw[i:i + 8]}})
                       for i in range(0, len(raw), 8)]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        if index == 0:
            events.append(("ping", {"type": "ping"}))
    events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                  "usage": {"output_tokens": output_tokens}}),
               ("message_stop", {"type": "message_stop"})]
    return Reply(sse(events), headers=LIMITS_ANTHROPIC)


OPENAI_REPLIES = [  # in the order models.ipynb sends them: Chat first, then Responses
    chat("Because a notebook keeps the hook, the model's reply and your notes side by side, "
         "so every change is one cell away from its result.",
         {"prompt_tokens": 27, "completion_tokens": 26, "total_tokens": 53,
          "prompt_tokens_details": {"cached_tokens": 0}, "completion_tokens_details": {"reasoning_tokens": 0}}),
    responses("**Answering briefly**\n\nOne sentence on notebooks and fast feedback.",
              "Notebooks make agent prototyping a loop of edit, run and look, with the evidence kept in place.",
              {"input_tokens": 26, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 84,
               "output_tokens_details": {"reasoning_tokens": 64}, "total_tokens": 110}),
]
ANTHROPIC_REPLIES = [
    anthropic([{"type": "text", "text": "A notebook shows each hook change next to the exact reply it produced, "
                                        "which makes agent behaviour easy to inspect and pin down."}],
              "end_turn", {"input_tokens": 25, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 1}, 29),
    anthropic([{"type": "thinking", "thinking": "The user wants Paris weather. I should call get_weather with city Paris.",
                "signature": "EqQBCgIYAhIMnotebookSig01GgxBdjrkzLoky3dl1pkiMOYds"},
               {"type": "text", "text": "Let me check the weather in Paris."},
               {"type": "tool_use", "id": "toolu_01NotebookParis", "name": "get_weather", "input": {"city": "Paris", "unit": "c"}}],
              "tool_use", {"input_tokens": 412, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 1}, 96),
    anthropic([{"type": "text", "text": "It is 18 °C and partly cloudy in Paris right now."}],
              "end_turn", {"input_tokens": 541, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 1}, 19),
]


def main() -> None:
    recordings = HERE / "models.jsonl"
    recordings.unlink(missing_ok=True)
    with WireServer(OPENAI_REPLIES, prefix="/v1") as openai_server, WireServer(ANTHROPIC_REPLIES, prefix="") as anthropic_server:
        env = {**os.environ, "AGENTCTX_REPLAY": "record", "OPENAI_BASE_URL": openai_server.url, "OPENAI_API_KEY": "recorded-locally",
               "ANTHROPIC_BASE_URL": anthropic_server.url, "ANTHROPIC_API_KEY": "recorded-locally"}
        subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--inplace",
                        str(REPO / "notebooks" / "models.ipynb")], check=True, env=env, cwd=REPO / "notebooks")
        print(f"OpenAI-compatible requests: {len(openai_server.requests)}; Anthropic requests: {len(anthropic_server.requests)}")
    print(f"wrote {recordings.relative_to(REPO)} ({len(recordings.read_text().splitlines())} recordings)")


if __name__ == "__main__":
    main()

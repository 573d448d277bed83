import pytest

from agentctx_widgets.context import (FALLBACK_CONTEXT_WINDOWS, TOKENS_PER_WORD, estimate_context_tokens,
                                      estimate_tokens, estimate_usage, fallback_context_window, finalize_usage,
                                      usage_headers, word_count)


def user(text):
    return {"type": 2, "content": [{"type": "text", "text": text}]}


def test_tokens_per_word():
    assert TOKENS_PER_WORD == 4 / 3


def test_word_count():
    assert word_count("  one two\tthree\nfour  ") == 4
    assert word_count("") == 0
    assert word_count(None) == 0
    assert word_count(12) == 0


@pytest.mark.parametrize("text, tokens", [("", 0), ("one", 2), ("a b c", 4), ("a b c d e f", 8), ("a b", 3)])
def test_estimate_tokens_rounds_up(text, tokens):
    # 1 word -> 4/3 -> 2; 3 words -> 4; 6 words -> 8; 2 words -> 8/3 -> 3
    assert estimate_tokens(text) == tokens


def test_estimate_tokens_non_string():
    assert estimate_tokens(["a", "b"]) == 0


def test_estimate_context_counts_text_thinking_and_arguments():
    ctx = [
        user("one two three"),                                              # 3 words
        {"type": "checkpoint"},                                             # record: skipped
        {"type": 3, "content": [{"type": "thinking", "text": "hmm ok"},     # 2 words
                                {"type": "toolCall", "callId": "c", "name": "f", "arguments": '{"q": "a b"}'},  # 3
                                {"type": "binary", "content": "AAAA"}]},   # not counted
    ]
    assert estimate_context_tokens(ctx) == 11  # 8 words * 4/3 = 10.67 -> 11
    assert estimate_context_tokens() == 0
    assert estimate_context_tokens([]) == 0


def test_parsed_arguments_count_as_compact_json():
    ctx = [{"type": 3, "content": [{"type": "toolCall", "callId": "c", "name": "f", "arguments": {"q": "a b"}}]}]
    assert estimate_context_tokens(ctx) == 3  # '{"q":"a b"}' has 2 words


def test_estimate_context_rejects_non_iterables():
    with pytest.raises(TypeError):
        estimate_context_tokens(5)
    with pytest.raises(TypeError):
        estimate_usage(5)


def test_in_place_mutation_is_noticed_and_appends_are_counted():
    ctx = [user("a b c") for _ in range(50)]
    assert estimate_context_tokens(ctx) == 200  # 150 words
    ctx[10]["content"][0]["text"] += " d e f"
    assert estimate_context_tokens(ctx) == 204  # 153 words
    ctx.append(user("x y x"))
    assert estimate_context_tokens(ctx) == 208  # 156 words
    ctx[0]["content"].append({"type": "text", "text": "p q r"})
    assert estimate_context_tokens(ctx) == 212  # 159 words
    del ctx[0]
    assert estimate_context_tokens(ctx) == 204  # 153 words


def test_cache_is_reused_after_an_append(monkeypatch):
    import agentctx_widgets.context.usage as usage

    ctx = [user(f"message number {i}") for i in range(2000)]
    estimate_context_tokens(ctx)
    ctx.append(user("one more"))
    splits = []

    class Counting(str):
        def split(self, *args):
            splits.append(self)
            return str.split(self, *args)

    ctx.append({"type": 2, "content": [{"type": "text", "text": Counting("counted here")}]})
    before = len(usage._cache)
    assert estimate_context_tokens(ctx) == -(-(2000 * 3 + 2 + 2) * 4 // 3)
    assert len(splits) == 1  # only the new, never-seen string was scanned
    assert len(usage._cache) >= before


def test_estimate_usage_uses_the_message_text():
    usage = estimate_usage([user("a b c")], {"type": 3, "content": [{"type": "text", "text": "x y"},
                                                                   {"type": "text", "text": "z"}]})
    assert usage == {"inputTokens": 4, "outputTokens": 4, "totalTokens": 8, "source": "estimate"}
    assert estimate_usage() == {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0, "source": "estimate"}


def test_finalize_prefers_a_complete_provider_pair():
    reported = {"prompt_tokens": 100, "completion_tokens": 20, "cost": 0.01,
                "prompt_tokens_details": {"cached_tokens": 40}}
    result = finalize_usage(reported, [user("a")], None)
    assert result == {"inputTokens": 100, "outputTokens": 20, "totalTokens": 120, "cacheReadTokens": 40,
                      "cost": 0.01, "source": "provider"}
    assert reported["prompt_tokens"] == 100 and "inputTokens" not in reported


def test_finalize_estimates_both_counts_when_the_pair_is_incomplete():
    result = finalize_usage({"prompt_tokens": 100, "cost": 0.5, "cache_read_input_tokens": 3},
                            [user("a b c")], {"type": 3, "content": [{"type": "text", "text": "ok"}]})
    assert result["inputTokens"] == 4 and result["outputTokens"] == 2  # no mixed sources
    assert result["totalTokens"] == 6 and result["source"] == "estimate"
    assert result["cost"] == 0.5 and result["cacheReadTokens"] == 3


def test_finalize_bad_reports_and_idempotence():
    for bad in (None, "x", {"inputTokens": -1, "outputTokens": 2}, {"inputTokens": float("nan"), "outputTokens": 1}):
        assert finalize_usage(bad, [user("a")])["source"] == "estimate"
    once = finalize_usage({"input_tokens": 5, "output_tokens": 1}, [], None)
    assert finalize_usage({"input_tokens": 5, "output_tokens": 1}, [], None) == once
    assert finalize_usage(once) == once
    with pytest.raises(TypeError):
        finalize_usage(None, 5)


def test_usage_headers_keeps_rate_limit_headers_only():
    headers = {"X-RateLimit-Remaining-Requests": "99", "content-type": "application/json",
               "anthropic-ratelimit-tokens-reset": "2026-01-01T00:00:00Z", "Retry-After": 3,
               "x-ratelimit-limit-tokens": "1000"}
    assert usage_headers(headers, exclude=["X-RATELIMIT-LIMIT-TOKENS"]) == {
        "x-ratelimit-remaining-requests": "99",
        "anthropic-ratelimit-tokens-reset": "2026-01-01T00:00:00Z",
        "retry-after": "3",
    }
    assert usage_headers(None) == {}
    assert usage_headers([("x-ratelimit-reset", "1s"), ("bad",)]) == {"x-ratelimit-reset": "1s"}
    many = {f"x-ratelimit-h{i}": "v" * 5000 for i in range(100)}
    bounded = usage_headers(many)
    assert len(bounded) == 32 and all(len(v) == 1024 for v in bounded.values())


@pytest.mark.parametrize("exclude", ["x-ratelimit", [1], None])
def test_usage_headers_rejects_bad_exclude(exclude):
    with pytest.raises(TypeError):
        usage_headers({}, exclude=exclude)


def test_fallback_context_windows():
    assert FALLBACK_CONTEXT_WINDOWS["gpt-6"] == 1_050_000
    assert fallback_context_window("gpt-6") == 1_050_000
    assert fallback_context_window("gpt-6-sol") == 1_050_000
    assert fallback_context_window("o3-2025-04-16") == 200_000
    assert fallback_context_window("o4-mini-high") == 200_000
    assert fallback_context_window("gpt-4o-mini") == 128_000
    assert fallback_context_window("gpt-4.1-nano") == 1_047_576
    assert fallback_context_window("claude-x") is None
    assert fallback_context_window("") is None
    assert fallback_context_window(None) is None
    with pytest.raises(TypeError):
        FALLBACK_CONTEXT_WINDOWS["x"] = 1  # type: ignore[index]


def test_in_place_edit_of_parsed_arguments_is_noticed():
    args = {"q": "a b"}
    ctx = [{"type": 3, "content": [{"type": "toolCall", "callId": "c", "name": "f", "arguments": args}]}]
    assert estimate_context_tokens(ctx) == 3  # '{"q":"a b"}': 2 words
    args["q"] = "a b c d e"
    assert estimate_context_tokens(ctx) == 7  # 5 words


def test_fast_path_matches_the_reference_walk():
    import agentctx_widgets.context.usage as usage

    ctx = [user("x y"), {"type": "rec"}, {"type": 3, "content": [{"type": "image", "url": "u"},
                                                               {"type": "thinking", "text": " a  b c "},
                                                               {"type": "toolCall", "arguments": [1, "two three"]}]},
           {"type": 2, "content": "not a list"}, 5]
    reference = sum(len(text.split()) for text in usage._strings(ctx))
    assert estimate_context_tokens(ctx) == -(-reference * 4 // 3) == 10  # 2 + 3 + 2 ('[1,"two', 'three"]') = 7 words


# -- a Context keeps a running word count: its estimate is the walk's, after any change ----------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from agentctx_widgets import Context  # noqa: E402

_WORDS = st.text(alphabet="ab \n", max_size=12)
_BLOCKS = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _WORDS),
    st.builds(lambda t: {"type": "thinking", "text": t}, _WORDS),
    st.builds(lambda a: {"type": "toolCall", "callId": "c", "name": "f", "arguments": a},
              st.one_of(_WORDS, st.dictionaries(st.sampled_from(["q", "n"]), _WORDS, max_size=2))),
    st.just({"type": "image", "url": "https://x.invalid/a.png"}),
)
_MESSAGES = st.one_of(
    st.builds(lambda kind, blocks: {"type": kind, "content": blocks}, st.sampled_from([1, 2, 3]),
              st.lists(_BLOCKS, min_size=1, max_size=3)),
    st.just({"type": "note", "text": "a record is never counted"}),
)
_OPS = st.lists(st.one_of(
    st.tuples(st.just("append"), _MESSAGES),
    st.tuples(st.just("append_no_merge"), _MESSAGES),
    st.tuples(st.just("replace"), _MESSAGES),
    st.tuples(st.just("remove"), st.integers(0, 10)),
    st.tuples(st.just("truncate"), st.integers(0, 10)),
), max_size=25)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(_OPS)
def test_a_contexts_running_estimate_equals_the_walk_after_any_change(ops):
    context = Context()
    for op, arg in ops:
        if op == "append":
            context.append(arg)
        elif op == "append_no_merge":
            context.append(arg, merge=False)
        elif op == "replace" and len(context):
            context.replace(len(context) - 1, arg)
        elif op == "remove" and len(context):
            context.remove(arg % len(context))
        elif op == "truncate":
            context.truncate(min(arg, len(context)))
        assert estimate_context_tokens(context) == estimate_context_tokens(list(context.messages()))


def test_a_loaded_context_estimates_like_the_walk(tmp_path):
    context = Context(name="s", dir=tmp_path)
    context.append({"type": 2, "content": [{"type": "text", "text": "one two three"}]})
    context.append({"type": 3, "content": [{"type": "toolCall", "callId": "c", "name": "f", "arguments": {"a": "b c"}}]})
    context.save()
    loaded = Context.load(context.path)
    # 3 words + the compact JSON {"a":"b c"} split on spaces = 2 words -> 5 words -> ceil(5 * 4 / 3) = 7
    assert estimate_context_tokens(loaded) == estimate_context_tokens(list(loaded.messages())) == 7

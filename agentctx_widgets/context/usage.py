"""Token estimation, provider-usage finalisation, rate-limit headers and context-window fallbacks.

Estimation: tokens ~= words x 4/3, rounded up once per estimate. A word is a run of non-whitespace
(Python's ``str.split()`` whitespace, which is what the C fast path counts). Counted per context:
the ``text`` of text/thinking blocks and the ``arguments`` of toolCall blocks (a string as it is, a
parsed value as its compact JSON).

Caching: ``estimate_context_tokens`` remembers the word count of every string it scanned, keyed by
``id(string)`` and holding the string itself, so a hit is confirmed with ``is``. Strings are
immutable, so an in-place edit (``block["text"] += "x"``) puts a new string object in the block and is
noticed on the next call; re-estimating after one append scans one message's strings and only
looks up the others (every call still walks every block to check identities: that walk is what
makes in-place edits visible). Parsed (dict/list) arguments are re-serialised with orjson on every
call and their word count is reused while the JSON bytes are equal. The cache is module-wide (several
contexts share it) and is pruned to the latest call's strings when it holds more than four times
that many entries plus 65,536.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

import orjson

from .usage_data import usage_normalize

__all__ = [
    "FALLBACK_CONTEXT_WINDOWS",
    "TOKENS_PER_WORD",
    "estimate_context_tokens",
    "estimate_tokens",
    "estimate_usage",
    "fallback_context_window",
    "finalize_usage",
    "usage_headers",
    "word_count",
]

TOKENS_PER_WORD = 4 / 3

# Curated windows for current OpenAI models (the seed: gpt-6 family 1.05M, o-series 200K). Any
# provider-published or looked-up value outranks this table; review it when a new tier ships.
FALLBACK_CONTEXT_WINDOWS = MappingProxyType({
    "gpt-6": 1_050_000,
    "gpt-5": 400_000,
    "gpt-5-chat-latest": 128_000,
    "gpt-5.1": 400_000,
    "gpt-5.2": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "chatgpt-4o-latest": 128_000,
    "o1": 200_000,
    "o1-mini": 128_000,
    "o3": 200_000,
    "o3-mini": 200_000,
    "o3-pro": 200_000,
    "o4-mini": 200_000,
})


def fallback_context_window(model: Any) -> int | None:
    """The curated window for ``model``: an exact key, then the longest key ``model`` starts with."""
    if not isinstance(model, str) or not model:
        return None
    if model in FALLBACK_CONTEXT_WINDOWS:
        return FALLBACK_CONTEXT_WINDOWS[model]
    best = max((key for key in FALLBACK_CONTEXT_WINDOWS if model.startswith(key)), key=len, default=None)
    return None if best is None else FALLBACK_CONTEXT_WINDOWS[best]


def word_count(text: Any) -> int:
    """The number of whitespace-separated words in ``text``; 0 for non-strings."""
    return len(text.split()) if isinstance(text, str) else 0


def _tokens_for_words(words: int) -> int:
    return -(-words * 4 // 3)  # ceil(words * 4 / 3) without float error


def estimate_tokens(text: Any) -> int:
    """``ceil(word_count(text) * 4/3)``; 0 for non-strings."""
    return _tokens_for_words(word_count(text))


_TEXT_BLOCKS = frozenset({"text", "thinking"})
# id(string) -> (string, words); id(parsed arguments) -> (arguments, their JSON bytes, words)
_cache: dict[int, tuple] = {}
_cache_lock = threading.Lock()


def _block_string(block: Any) -> str | None:
    """The countable string of one block (see the module docstring), or ``None``."""
    if not isinstance(block, Mapping):
        return None
    kind = block.get("type")
    if kind in _TEXT_BLOCKS:
        text = block.get("text")
        return text if isinstance(text, str) else None
    if kind == "toolCall":
        arguments = block.get("arguments")
        if isinstance(arguments, str):
            return arguments
        if arguments is not None:
            try:
                return orjson.dumps(arguments).decode()
            except TypeError:
                return None
    return None


def _strings(context: Iterable) -> Iterable[str]:
    """Every countable string of ``context``, in order (the reference the fast path must match)."""
    for message in context:
        if not isinstance(message, Mapping):
            continue
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            text = _block_string(block)
            if text:
                yield text


def _parsed_argument_words(arguments: Any, cache: dict) -> int:
    """Words in the compact JSON of parsed arguments; cached per object while its JSON is unchanged."""
    try:
        encoded = orjson.dumps(arguments)
    except TypeError:
        return 0
    hit = cache.get(id(arguments))
    if hit is not None and hit[0] is arguments and hit[1] == encoded:
        return hit[2]
    words = len(encoded.split())  # JSON is ASCII-whitespace separated: bytes.split agrees with str.split
    cache[id(arguments)] = (arguments, encoded, words)
    return words


def message_words(message: Any) -> int:
    """Words in one message's countable strings, counted exactly as :func:`estimate_context_tokens` walks
    them (a ``Context`` keeps these per entry, so its estimate after one append costs one message)."""
    return _walk((message,), {})[0]  # a cache of its own: one message's strings are scanned once anyway


def estimate_context_tokens(context: Iterable | None = None) -> int:
    """Estimated input tokens of a whole context, with per-string caching (module docstring).

    A ``Context`` keeps a running word count of its own entries (it owns copies of them and sees every
    change), so its estimate costs one message after an append; a plain list gets the cached walk.
    """
    if context is None:
        context = []
    word_count = getattr(context, "word_count", None)  # a Context (store.py, which imports this module)
    if callable(word_count):
        return _tokens_for_words(word_count())
    if not isinstance(context, Iterable) or isinstance(context, (str, bytes, Mapping)):
        raise TypeError(f"estimate_context_tokens: context must be an iterable of messages, got {type(context).__name__}")
    words, seen = _walk(context, _cache)
    if len(_cache) > 4 * seen + 65536:
        _prune(context)
    return _tokens_for_words(words)


def _walk(context: Iterable, cache: dict) -> tuple[int, int]:
    """The words in ``context``'s countable strings and how many strings were counted, each string's count
    taken from ``cache`` when it holds that very string (and put there when not)."""
    get = cache.get
    words = 0
    seen = 0
    # One flat loop with exact-type fast paths: this runs over every block of a long context per call.
    for message in context:
        if message.__class__ is not dict:
            if not isinstance(message, Mapping):
                continue
        content = message.get("content")
        if content.__class__ is not list and not isinstance(content, list):
            continue
        for block in content:
            if block.__class__ is not dict and not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            if kind == "text" or kind == "thinking":
                text = block.get("text")
            elif kind == "toolCall":
                text = block.get("arguments")
                if text is not None and not isinstance(text, str):
                    seen += 1
                    words += _parsed_argument_words(text, cache)
                    continue
            else:
                continue
            if not text or not isinstance(text, str):
                continue
            seen += 1
            hit = get(id(text))
            if hit is not None and hit[0] is text:
                words += hit[1]
            else:
                count = len(text.split())
                cache[id(text)] = (text, count)
                words += count
    return words, seen


def _prune(context: Iterable) -> None:
    """Keep only the cache entries of the strings and arguments still in ``context``."""
    with _cache_lock:
        live: dict[int, tuple] = {}
        for message in context:
            content = message.get("content") if isinstance(message, Mapping) else None
            for block in content if isinstance(content, list) else ():
                if isinstance(block, Mapping):
                    for key in ("text", "arguments"):
                        value = block.get(key)
                        if value is not None and id(value) in _cache and _cache[id(value)][0] is value:
                            live[id(value)] = _cache[id(value)]
        _cache.clear()
        _cache.update(live)


def _message_text(message: Any) -> str:
    if not isinstance(message, Mapping) or not isinstance(message.get("content"), list):
        return ""
    return "\n".join(text for block in message["content"] if (text := _block_string(block)))


def estimate_usage(context: Iterable | None = None, message: Any = None) -> dict:
    """Estimated usage: the context as input, the assembled ``message`` (all its text) as output."""
    input_tokens = estimate_context_tokens(context)
    output_tokens = estimate_tokens(_message_text(message))
    return {"inputTokens": input_tokens, "outputTokens": output_tokens,
            "totalTokens": input_tokens + output_tokens, "source": "estimate"}


def finalize_usage(reported: Any, context: Iterable | None = None, message: Any = None) -> dict:
    """Provider usage when it has a complete input/output pair, otherwise an estimate.

    The estimate keeps the report's other normalised counters, cost and details (never mixing token
    sources: both ``inputTokens`` and ``outputTokens`` come from the estimate).
    """
    normalized = usage_normalize(reported)
    if "inputTokens" in normalized and "outputTokens" in normalized:
        normalized.setdefault("source", "provider")
        return normalized
    estimate = estimate_usage(context, message)
    normalized.update(estimate)
    return normalized


_RATE_LIMIT_PREFIXES = ("x-ratelimit-", "ratelimit-", "anthropic-ratelimit-", "x-rate-limit-")
_RATE_LIMIT_NAMES = frozenset({"retry-after", "retry-after-ms", "ratelimit", "ratelimit-policy"})
MAX_HEADERS = 32
MAX_HEADER_VALUE = 1024


def _header_pairs(headers: Any) -> list[tuple[Any, Any]]:
    if headers is None:
        return []
    if isinstance(headers, Mapping) or hasattr(headers, "items"):
        return list(headers.items())
    if isinstance(headers, Iterable) and not isinstance(headers, (str, bytes)):
        return [pair for pair in headers if isinstance(pair, (tuple, list)) and len(pair) == 2]
    return []


def usage_headers(headers: Any, *, exclude: Iterable[str] = ()) -> dict[str, str]:
    """Rate-limit headers (``x-ratelimit-*``, ``anthropic-ratelimit-*``, ``retry-after``, ...) not in ``exclude``.

    Names are lower-cased; at most 32 headers, 128-character names and 1024-character values.
    ``headers`` may be a mapping, an object with ``items()``, or ``(name, value)`` pairs.
    """
    if isinstance(exclude, (str, bytes)) or not isinstance(exclude, (list, tuple, set, frozenset)):
        raise TypeError(f"usage_headers: exclude must be a list of header names, got {type(exclude).__name__}")
    if not all(isinstance(name, str) for name in exclude):
        raise TypeError("usage_headers: every excluded header name must be a string")
    skip = {name.lower() for name in exclude}
    captured: dict[str, str] = {}
    for name, value in _header_pairs(headers):
        if len(captured) >= MAX_HEADERS:
            break
        if not isinstance(name, str) or not isinstance(value, (str, int, float)) or isinstance(value, bool):
            continue
        lower = name.lower()
        if len(lower) > 128 or lower in skip:
            continue
        if lower in _RATE_LIMIT_NAMES or lower.startswith(_RATE_LIMIT_PREFIXES):
            captured[lower] = str(value)[:MAX_HEADER_VALUE]
    return captured



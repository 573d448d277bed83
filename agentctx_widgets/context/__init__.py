"""The Agent.Context library (seed 001) in Python: messages, validation, merging, the response-event
assembler, usage estimation and normalisation, and the ``Context`` class.

Pure Python with no Jupyter imports. Function names are the seed's in snake_case; data keeps the seed's
JSON shapes and camelCase keys (``contentIndex``, ``inputTokens``, ``callId``).
"""

from .assemble import assembly_callbacks, content_indexer, create_assembler
from .edit import rebuild_message
from .events import (EventType, callback_name, dispatch, is_response_event, normalize_callbacks,
                     validate_response_event)
from .merge import append_message
from .mime import MIME_BY_EXTENSION, binary_content, detect_mime, file_message
from .parse import parse_context
from .store import Context
from .types import (ContentType, MessageType, assistant_message, mimetype_of, system_message,
                    text_content, user_message)
from .usage import (FALLBACK_CONTEXT_WINDOWS, TOKENS_PER_WORD, estimate_context_tokens, estimate_tokens,
                    estimate_usage, fallback_context_window, finalize_usage, usage_headers, word_count)
from .usage_data import usage_add, usage_details, usage_normalize
from .validate import (error_text, has_content, has_error, is_context, is_message, is_record,
                       validate_context, validate_message)

__all__ = [
    "Context",
    "ContentType",
    "EventType",
    "MessageType",
    "MIME_BY_EXTENSION",
    "FALLBACK_CONTEXT_WINDOWS",
    "TOKENS_PER_WORD",
    "assembly_callbacks",
    "create_assembler",
    "normalize_callbacks",
    "binary_content",
    "content_indexer",
    "text_content",
    "callback_name",
    "dispatch",
    "is_response_event",
    "validate_response_event",
    "fallback_context_window",
    "append_message",
    "assistant_message",
    "error_text",
    "file_message",
    "has_content",
    "has_error",
    "is_record",
    "rebuild_message",
    "system_message",
    "user_message",
    "is_message",
    "validate_message",
    "parse_context",
    "is_context",
    "validate_context",
    "detect_mime",
    "mimetype_of",
    "estimate_tokens",
    "estimate_context_tokens",
    "usage_add",
    "usage_details",
    "estimate_usage",
    "finalize_usage",
    "usage_headers",
    "usage_normalize",
    "word_count",
]

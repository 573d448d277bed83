"""Media types for content blocks: an extension table, leading-byte detection, binary blocks.

Detection order (seed 001): the file extension first, then recognised leading bytes, else
``application/octet-stream``. Only the basename of a path is ever stored in a block.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .types import MessageType

__all__ = ["MIME_BY_EXTENSION", "binary_content", "detect_mime", "file_message"]

OCTET_STREAM = "application/octet-stream"

MIME_BY_EXTENSION = MappingProxyType({
    # images
    "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
    "webp": "image/webp", "svg": "image/svg+xml", "bmp": "image/bmp", "ico": "image/x-icon",
    "tif": "image/tiff", "tiff": "image/tiff", "heic": "image/heic", "heif": "image/heif",
    "avif": "image/avif",
    # documents and text
    "pdf": "application/pdf", "txt": "text/plain", "md": "text/markdown", "markdown": "text/markdown",
    "csv": "text/csv", "tsv": "text/tab-separated-values", "html": "text/html", "htm": "text/html",
    "css": "text/css", "xml": "application/xml", "json": "application/json",
    "jsonl": "application/jsonl", "ndjson": "application/x-ndjson", "yaml": "application/yaml",
    "yml": "application/yaml", "toml": "application/toml", "rtf": "application/rtf",
    "doc": "application/msword", "xls": "application/vnd.ms-excel",
    "ppt": "application/vnd.ms-powerpoint",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "epub": "application/epub+zip",
    # code
    "js": "text/javascript", "mjs": "text/javascript", "ts": "text/x-typescript",
    "py": "text/x-python", "sh": "application/x-sh", "ipynb": "application/x-ipynb+json",
    # archives
    "zip": "application/zip", "gz": "application/gzip", "tar": "application/x-tar",
    "7z": "application/x-7z-compressed",
    # audio and video
    "mp3": "audio/mpeg", "wav": "audio/wav", "ogg": "audio/ogg", "oga": "audio/ogg",
    "flac": "audio/flac", "m4a": "audio/mp4", "aac": "audio/aac", "opus": "audio/opus",
    "mp4": "video/mp4", "m4v": "video/mp4", "webm": "video/webm", "mov": "video/quicktime",
    "mkv": "video/x-matroska", "avi": "video/x-msvideo",
})

_MP4_BRANDS = {b"heic": "image/heic", b"heix": "image/heic", b"mif1": "image/heif",
               b"avif": "image/avif", b"M4A ": "audio/mp4", b"qt  ": "video/quicktime"}


def _sniff(data: bytes) -> str | None:
    """The media type announced by ``data``'s leading bytes, or ``None``."""
    head = bytes(data[:16])
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"RIFF") and head[8:12] == b"WAVE":
        return "audio/wav"
    if head.startswith(b"%PDF-"):
        return "application/pdf"
    if head.startswith(b"PK\x03\x04"):
        return "application/zip"
    if head.startswith(b"\x1f\x8b"):
        return "application/gzip"
    if head.startswith(b"OggS"):
        return "audio/ogg"
    if head.startswith(b"fLaC"):
        return "audio/flac"
    if head.startswith(b"ID3") or head[:2] in (b"\xff\xfb", b"\xff\xf3", b"\xff\xf2"):
        return "audio/mpeg"
    if head[4:8] == b"ftyp":
        return _MP4_BRANDS.get(head[8:12], "video/mp4")
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return "video/webm"
    if head.startswith((b"II*\x00", b"MM\x00*")):
        return "image/tiff"
    if head.startswith(b"BM"):
        return "image/bmp"
    return None


def _basename(path: str) -> str:
    return re.split(r"[\\/]", path)[-1]


def _by_extension(path: str) -> str | None:
    name = _basename(path)
    if "." not in name.strip("."):
        return None
    return MIME_BY_EXTENSION.get(name.rsplit(".", 1)[-1].lower())


def detect_mime(options: Mapping | None = None, *, path: Any = None, buffer: Any = None) -> str:
    """A media type from ``path``'s extension, then ``buffer``'s leading bytes, else octet-stream.

    Takes keywords (``detect_mime(path=..., buffer=...)``) or, like the seed, one options dict
    (``detect_mime({"path": ..., "buffer": ...})``). Values of the wrong type are treated as absent.
    """
    if options is not None:
        if not isinstance(options, Mapping):
            raise TypeError(f"detect_mime: options must be a dict, got {type(options).__name__}")
        path = options.get("path", path)
        buffer = options.get("buffer", buffer)
    if isinstance(path, str) and path:
        found = _by_extension(path)
        if found:
            return found
    if isinstance(buffer, (bytes, bytearray, memoryview)):
        found = _sniff(bytes(buffer[:16]))
        if found:
            return found
    return OCTET_STREAM


def binary_content(path: str, buffer: bytes | bytearray | memoryview) -> dict:
    """A ``binary`` block: the path's basename, the detected media type and base64 data."""
    if not isinstance(path, str) or not path:
        raise TypeError(f"binary_content: path must be a non-empty string, got {path!r}")
    if not isinstance(buffer, (bytes, bytearray, memoryview)):
        raise TypeError(f"binary_content: buffer must be bytes-like, got {type(buffer).__name__}")
    return {
        "type": "binary",
        "mimetype": detect_mime(path=path, buffer=buffer),
        "filename": _basename(path),
        "content": base64.b64encode(bytes(buffer)).decode("ascii"),
    }


def file_message(path: str, buffer: bytes | bytearray | memoryview) -> dict:
    """A user message holding one file as a ``binary`` block."""
    return {"type": int(MessageType.USER), "content": [binary_content(path, buffer)]}

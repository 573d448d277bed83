"""Which URLs the static rendering may put where: the front end's ``js/src/render/urls.js``, for HTML
that runs no script and, in a standalone page, sits under a CSP that lets nothing load but ``data:``
images.

The remote-resource policy (DESIGN.md "Front end"), field by field:

- Text written by a model or a tool (Markdown in text and thinking, tool arguments and results) never
  makes the browser fetch anything by itself: a Markdown or raw-HTML image with an http(s) source
  becomes a **link** to it; only an inline ``data:image/...`` image stays an ``<img>``.
- Image content blocks: base64 content of an ``image/*`` type, or a ``data:image/...`` URL, is an
  ``<img>``; an http(s) URL is a link.
- Binary blocks: ``image/*`` content is an ``<img>`` (``data:``); audio, video and anything else is a
  file chip (name, type, size): a static page plays nothing.
- ``image`` output messages (sent on purpose by hook code): ``data:image/...`` is an ``<img>``; an
  http(s) URL is a link (it loads on a click), in a notebook cell's settled document as in a standalone
  page: a document opened later fetches nothing by itself (issue 21: a hook could plant a beacon in a
  saved notebook). ``render(remote_media=True)`` makes it an ``<img>`` (the live view shows a click-to-load button).
- ``audio`` / ``video`` output messages: a link to an http(s) URL; anything else is shown as text.
- Links (Markdown and raw HTML ``<a>``): only ``http:``, ``https:`` and ``mailto:``, with
  ``rel="noopener noreferrer nofollow"`` and ``target="_blank"``.

The checks run on the raw string, so white space or control characters before or inside the scheme
make a URL fail rather than slip through a lenient parser.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

__all__ = ["is_inline_image", "is_link_url", "is_remote_url", "try_data_url", "host_of", "base64_size"]

_REMOTE = re.compile(r"https?://[^\s]", re.IGNORECASE)
_LINK = re.compile(r"(?:https?://[^\s]|mailto:[^\s])", re.IGNORECASE)
_DATA_IMAGE = re.compile(r"data:image/[a-z0-9.+-]+(?:;[a-z0-9=.+-]+)*,", re.IGNORECASE)
_MIME = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*", re.IGNORECASE)
_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")
_SPACE = re.compile(r"\s+")


def is_remote_url(url: Any) -> bool:
    """An http(s) URL (one a link may point at, or a hook-sent image may load)."""
    return isinstance(url, str) and _REMOTE.match(url) is not None


def is_link_url(url: Any) -> bool:
    """An ``href`` the rendering keeps: http(s) or mailto."""
    return isinstance(url, str) and _LINK.match(url) is not None


def is_inline_image(url: Any) -> bool:
    """A ``data:image/...`` URL: an ``<img>`` of it fetches nothing (and an image runs no script)."""
    return isinstance(url, str) and _DATA_IMAGE.match(url) is not None


def try_data_url(mimetype: Any, base64: Any, kind: str) -> str | None:
    """A ``data:`` URL for base64 content of a ``kind/...`` type, or None (so ``text/html`` never
    becomes one, nor content that is not base64)."""
    if not isinstance(mimetype, str) or not isinstance(base64, str):
        return None
    if _MIME.fullmatch(mimetype) is None or not mimetype.lower().startswith(f"{kind}/"):
        return None
    if _BASE64.fullmatch(base64) is None:
        return None
    return f"data:{mimetype.lower()};base64,{_SPACE.sub('', base64)}"


def base64_size(base64: str) -> int:
    """Decoded size of a base64 string, in bytes."""
    clean = _SPACE.sub("", base64)
    padding = 2 if clean.endswith("==") else 1 if clean.endswith("=") else 0
    return max(0, len(clean) * 3 // 4 - padding)


def host_of(url: str) -> str:
    """The host of a URL for a link's label (the URL itself, clipped, when it has none)."""
    try:
        host = urlsplit(url).netloc
    except ValueError:
        host = ""
    return host or url[:60]

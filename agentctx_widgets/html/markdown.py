"""Markdown → sanitised HTML for the static rendering: markdown-it-py (CommonMark, plus GFM tables and
strikethrough) and nh3 (ammonia).

Raw HTML inside Markdown is escaped, so it shows as the text the model wrote (``<script>`` reads as
``<script>``; the live view drops such tags instead). Whatever the parser makes still goes through the
sanitiser, which keeps an allow-list of tags (no script, style, iframe, object, embed, form, input,
button, svg, math, media or meta elements), no event or style attributes (a table cell's
``text-align`` excepted), links only to http(s) and mailto with ``rel="noopener noreferrer nofollow"``
and ``target="_blank"``, and ``<img>`` only of an inline ``data:image/...`` source: every other image
(a Markdown image with an http(s) URL) is rewritten into a link to it, so the page
never fetches it by itself (see ``urls.py`` for the policy).

Plain text (no character that could start Markdown or HTML) skips the parser: paragraphs of escaped
text, the same HTML markdown-it would give. Results for short texts are cached, so a transcript that
repeats itself costs one rendering per distinct text.
"""

from __future__ import annotations

import html
import re
from typing import Any

import nh3
from markdown_it import MarkdownIt

from .urls import host_of, is_inline_image, is_link_url, is_remote_url

__all__ = ["render_markdown", "sanitize_html", "scrub"]

# Raw HTML in Markdown is shown as text (html=False): an export is a record of what the model wrote, and a
# `<script>` in a reply reads as the text it is. The sanitiser still checks everything the parser makes.
_md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])

_TAGS = {
    "a", "abbr", "b", "bdi", "bdo", "blockquote", "br", "caption", "cite", "code", "col", "colgroup", "data",
    "dd", "del", "details", "dfn", "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4",
    "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "rp", "rt", "ruby", "s",
    "samp", "small", "span", "strike", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot",
    "th", "thead", "time", "tr", "tt", "u", "ul", "var", "wbr",
}
_CELL = {"colspan", "rowspan", "style"}
_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "width", "height"},
    "th": _CELL,
    "td": _CELL,
    "ol": {"start"},
    "abbr": {"title"},
    "time": {"datetime"},
    "data": {"value"},
}


def _attribute_filter(tag: str, attribute: str, value: str) -> str | None:
    """Runs after nh3's own scheme check (http, https, mailto, data): narrows ``data:`` to images."""
    if attribute == "href":
        return value if is_link_url(value) else None
    if attribute == "src":
        return value if is_inline_image(value) or is_remote_url(value) else None
    return value


_cleaner = nh3.Cleaner(
    tags=_TAGS,
    clean_content_tags={"script", "style", "template"},
    attributes=_ATTRIBUTES,
    attribute_filter=_attribute_filter,
    strip_comments=True,
    link_rel="noopener noreferrer nofollow",
    set_tag_attribute_values={"a": {"target": "_blank"}},
    url_schemes={"http", "https", "mailto", "data"},
    url_relative="deny",
    filter_style_properties={"text-align"},
)

# nh3 serialises every attribute as name="value" (a `"` inside written &quot;), so this finds every image.
_IMG = re.compile(r'<img((?:\s+[^\s="<>/]+="[^"]*")*)\s*/?>')
_ATTR = re.compile(r'([^\s="<>/]+)="([^"]*)"')


def _image(match: re.Match[str]) -> str:
    attrs = {name: html.unescape(value) for name, value in _ATTR.findall(match[1])}
    src = attrs.get("src", "")
    alt = attrs.get("alt", "")
    if is_inline_image(src):
        return match[0].replace("<img", '<img class="actxd-img"', 1)
    if is_remote_url(src):
        label = f"Image{': ' + alt if alt else ''} ↗ {host_of(src)}"
        return (f'<a class="actxd-img-link" href="{html.escape(src)}" title="{html.escape(src)}" '
                f'target="_blank" rel="noopener noreferrer nofollow">{html.escape(label)}</a>')
    return f'<span class="actxd-img-missing">[image{": " + html.escape(alt) if alt else ""}]</span>'


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def scrub(text: str) -> str:
    """``text`` without lone surrogates (U+FFFD instead) or NUL, which no UTF-8 page can carry."""
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = _SURROGATE.sub("\ufffd", text)
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


def sanitize_html(markup: str) -> str:
    """HTML from a renderer of untrusted text → what may reach the page."""
    clean = _cleaner.clean(markup)
    return _IMG.sub(_image, clean) if "<img" in clean else clean


# Characters that can start Markdown or HTML anywhere in a line; the rest only matter at a line's start
# (lists, headings, quotes, setext underlines, indented code) or end (hard breaks).
_SPECIAL = re.compile(r"[`*_\[\]<>&!#|~\\\t\r\x00\x0b\x0c\u00a0]")
_LINE_START = frozenset(" -+=>0123456789")


def _plain(text: str) -> str | None:
    """Paragraphs of escaped text when ``text`` has no Markdown in it at all, else None."""
    if _SPECIAL.search(text) is not None:
        return None
    out: list[str] = []
    paragraph: list[str] = []
    for line in [*text.split("\n"), ""]:  # the empty line at the end closes the last paragraph
        if not line:
            if paragraph:
                out.append("<p>" + "\n".join(paragraph) + "</p>\n")
                paragraph = []
            continue
        if line[0] in _LINE_START or line[0].isspace() or line[-1].isspace():
            return None
        paragraph.append(html.escape(line, quote=False).replace('"', "&quot;"))
    return "".join(out)


def _render(text: str) -> str:
    plain = _plain(text)
    if plain is not None:
        return plain
    try:
        markup = _md.render(text)
    except Exception:  # noqa: BLE001 - a parser bug must not lose the text: show it as it is
        return f'<pre class="actxd-pre">{html.escape(text)}</pre>'
    return sanitize_html(markup)


_CACHE: dict[str, str] = {}
_CACHE_TEXT = 4096  # texts up to this long are cached
_CACHE_SIZE = 8192


def render_markdown(text: Any) -> str:
    """Sanitised HTML for a Markdown string (anything else is shown as its ``str``)."""
    text = scrub(text if isinstance(text, str) else str(text))
    if len(text) > _CACHE_TEXT:
        return _render(text)
    hit = _CACHE.get(text)
    if hit is None:
        hit = _render(text)
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.clear()
        _CACHE[text] = hit
    return hit

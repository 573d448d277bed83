"""The static rendering (agentctx_widgets.html) and the export command.

Assertions are on the parsed HTML (html.parser into a small tree: elements, attributes, text), never
regexes on the markup.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

import agentctx_widgets
from agentctx_widgets import Context, Output
from agentctx_widgets.context import estimate_context_tokens
from agentctx_widgets.html import CSP, ROOT_CLASS, render, to_html
from agentctx_widgets.html import markdown as md
from agentctx_widgets.html.outputs import OUTPUT_RENDERERS
from agentctx_widgets.output import message_types

REPO = Path(__file__).resolve().parents[1]
CORPUS = json.loads((REPO / "tests" / "vectors" / "xss_payloads.json").read_text())
HOSTILE = CORPUS["payloads"] + CORPUS["urls"]
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16).decode()

# ---- a tiny DOM ------------------------------------------------------------------------------------

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Node:
    def __init__(self, tag: str, attrs: dict[str, str | None], parent: Node | None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node | str] = []

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self):
        for child in self.children:
            if isinstance(child, Node):
                yield child
                yield from child.iter()

    def find_all(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> list[Node]:
        return [n for n in self.iter() if (tag is None or n.tag == tag) and (cls is None or cls in n.classes)
                and all(n.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())]

    def find(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> Node:
        found = self.find_all(tag, cls, **attrs)
        assert found, f"no <{tag or '*'} class={cls} {attrs}>"
        return found[0]

    def ancestors(self):
        node = self.parent
        while node is not None:
            yield node
            node = node.parent


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {}, None)
        self.current = self.root
        self.decl: list[str] = []

    def handle_decl(self, decl: str) -> None:
        self.decl.append(decl)

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_startendtag(self, tag, attrs):
        self.current.children.append(Node(tag, dict(attrs), self.current))

    def handle_endtag(self, tag):
        node = self.current
        while node is not self.root and node.tag != tag:
            node = node.parent
        assert node is not self.root or tag in VOID, f"stray </{tag}>"
        if node is not self.root:
            self.current = node.parent

    def handle_data(self, data):
        self.current.children.append(data)


def parse(markup: str) -> Node:
    builder = _Builder()
    builder.feed(markup)
    builder.close()
    assert builder.current is builder.root, f"unclosed <{builder.current.tag}>"
    builder.root.decl = builder.decl  # type: ignore[attr-defined]
    return builder.root


def doc_root(tree: Node) -> Node:
    roots = tree.find_all("div", "actx-doc")
    assert len(roots) == 1
    return roots[0]


# ---- a context with everything -------------------------------------------------------------------

def tour_context() -> Context:
    return Context([
        {"type": 1, "content": [{"type": "text", "text": "You are **terse**."}]},
        {"type": 2, "content": [{"type": "text", "text": "Weather in Paris?"},
                                {"type": "image", "mimetype": "image/png", "content": PNG, "filename": "map.png"},
                                {"type": "image", "url": "https://img.example.com/cat.png", "alt": "cat"}]},
        {"type": 3, "content": [
            {"type": "thinking", "text": "Call the *tool*."},
            {"type": "toolCall", "callId": "c1", "name": "get_weather", "arguments": {"city": "Paris", "n": [1, 2]}},
            {"type": "toolCall", "callId": "c2", "name": "broken", "arguments": '{"city": "Par'},
        ]},
        {"type": 4, "callId": "c1", "content": [{"type": "text", "text": '{"temp": 21}'}]},
        {"type": 4, "callId": "c2", "error": True, "content": [{"type": "text", "text": "boom"}]},
        {"type": 4, "callId": "c1", "content": [{"type": "text", "text": "second result"}]},
        {"type": 4, "callId": "nowhere", "content": [{"type": "text", "text": "orphan"}]},
        {"type": "checkpoint", "turn": 1},
        {"type": 3, "content": [{"type": "text", "text": "It is **sunny**, `21`.\n\n```\ncode block\n```\n\n"
                                                         "| a | b |\n|---|---|\n| 1 | 2 |\n\n~~old~~ [docs](https://x.org)"}],
         "model": "m-1"},
        {"type": 3, "content": [], "error": {"message": "overloaded", "retry": True}},
        {"type": 3, "content": [], "error": "plain failure"},
        {"type": 2, "content": [{"type": "binary", "mimetype": "audio/mpeg", "filename": "a.mp3", "content": PNG},
                                {"type": "binary", "mimetype": "image/png", "filename": "b.png", "content": PNG},
                                {"type": "mystery", "x": 1}]},
    ], name="tour")


@pytest.fixture(scope="module")
def tour():
    return doc_root(parse(render(tour_context())))


# ---- structure -----------------------------------------------------------------------------------

def test_roles_are_articles_with_labels_and_records_are_a_line(tour):
    kinds = [a.attrs["data-kind"] for a in tour.find_all("article")]
    # 12 entries: two results sit beneath their calls, the record is a <details> line
    assert kinds == ["system", "user", "assistant", "tool", "tool", "assistant", "assistant", "assistant", "user"]
    assert [a.find("div", "actxd-role").text() for a in tour.find_all("article")][:4] == [
        "System", "User", "Assistant", "Tool result"]
    record = tour.find("details", "actxd-record")
    assert record.attrs["data-index"] == "7"
    assert "checkpoint" in record.find("summary").text() and '{"turn":1}' in record.find("summary").text()
    assert tour.find("b", "actxd-name").text() == "tour"
    assert tour.find("span", "actxd-count").text() == "12 messages"


def test_markdown_is_rendered(tour):
    text = tour.find("article", data_index="8")
    assert text.find("strong").text() == "sunny"
    assert text.find("code").text() == "21"
    assert text.find("pre").find("code").text() == "code block\n"
    table = text.find("table")
    assert [th.text() for th in table.find_all("th")] == ["a", "b"]
    assert [td.text() for td in table.find_all("td")] == ["1", "2"]
    assert text.find("s").text() == "old"
    link = text.find("a")
    assert link.attrs == {"href": "https://x.org", "target": "_blank", "rel": "noopener noreferrer nofollow"}
    assert tour.find("article", data_index="0").find("strong").text() == "terse"


def test_thinking_and_tool_calls_fold_in_details_with_results_beneath(tour):
    assistant = tour.find("article", data_index="2")
    thinking = assistant.find("details", "actxd-thinking")
    assert thinking.find("summary").text() == "Thinking" and thinking.find("em").text() == "tool"
    assert "open" not in thinking.attrs
    call = assistant.find("div", data_call_id="c1")
    details = call.find("details", "actxd-tool-call")
    assert details.find("span", "actxd-tool-name").text() == "get_weather"
    assert details.find("span", "actxd-call-id").text() == "c1"
    assert details.find("pre").text() == json.dumps({"city": "Paris", "n": [1, 2]}, indent=2)
    result = call.find("div", "actxd-tool-result")
    assert result.attrs["data-index"] == "3" and result.find("pre").text() == '{"temp": 21}'
    assert result not in details.iter()  # the result is visible while the call is folded
    broken = assistant.find("div", data_call_id="c2")
    assert broken.find("pre", data_args="raw").text() == '{"city": "Par'
    failed = broken.find("div", "actxd-tool-failed")
    assert failed.find("div", "actxd-tool-result-head").text() == "✖ Tool failed" and failed.find("pre").text() == "boom"
    # a second result for c1 and a result for an unknown call stand alone, naming their call
    alone = [a for a in tour.find_all("article") if a.attrs["data-kind"] == "tool"]
    assert [a.find("div", "actxd-tool-result-head").text() for a in alone] == ["Result of call c1", "Result of call nowhere"]


def test_errors_and_metadata(tour):
    errors = tour.find_all("div", data_testid="actx-response-error")
    assert [e.find("span", "actxd-error-message").text() for e in errors] == ["overloaded", "plain failure"]
    assert errors[0].find("div", "actxd-retry").text() == "Retry hint: true"
    assert "actxd-msg-failed" in tour.find("article", data_index="9").classes
    meta = tour.find("article", data_index="8").find("details", "actxd-meta")
    assert json.loads(meta.find("pre").text()) == {"model": "m-1"}


def test_media_follow_the_remote_resource_policy(tour):
    user = tour.find("article", data_index="1")
    img = user.find("img")
    assert img.attrs["src"] == f"data:image/png;base64,{PNG}"
    link = user.find("a", "actxd-img-link")
    assert link.attrs["href"] == "https://img.example.com/cat.png" and link.attrs["rel"] == "noopener noreferrer nofollow"
    assert len(user.find_all("img")) == 1
    files = tour.find("article", data_index="11")
    assert [i.attrs["src"][:22] for i in files.find_all("img")] == ["data:image/png;base64,"]  # b.png only
    assert files.find_all("audio") == [] and "a.mp3" in files.text()
    assert files.find("div", "actxd-block-unknown").find("pre").text() == json.dumps({"type": "mystery", "x": 1}, indent=2)


def test_markdown_images_are_links_unless_inline_data():
    tree = parse(render([{"type": 3, "content": [{"type": "text", "text":
        f"![remote](https://e.com/x.png) ![inline](data:image/png;base64,{PNG}) ![bad](javascript:alert(1))"}]}]))
    imgs = tree.find_all("img")
    assert [i.attrs["src"] for i in imgs] == [f"data:image/png;base64,{PNG}"]
    assert tree.find("a", "actxd-img-link").attrs["href"] == "https://e.com/x.png"
    assert "javascript" not in "".join(str(a.attrs) for a in tree.iter())


def test_image_blocks_refuse_other_types_and_bad_base64():
    tree = parse(render([{"type": 2, "content": [
        {"type": "image", "mimetype": "text/html", "content": PNG},
        {"type": "image", "mimetype": "image/png", "content": "<script>"},
        {"type": "binary", "mimetype": "image/svg+xml;x", "content": PNG},
        {"type": "image", "url": "data:text/html,<b>x</b>"},
    ]}]))
    assert tree.find_all("img") == []
    assert len(tree.find_all("span", "actxd-file")) == 4


def test_message_text_with_script_shows_as_text():
    payload = "<script>alert(1)</script> and <b>bold?</b>"
    tree = parse(render([{"type": 2, "content": [{"type": "text", "text": payload}]}]))
    body = tree.find("div", "actxd-md")
    assert tree.find_all("script") == [] and body.find_all("b") == []  # (our own labels are <b>)
    assert body.text().strip() == payload


def test_usage_line_counts_the_context_and_a_usage_dict():
    ctx = tour_context()
    tree = parse(render(ctx, usage={"prompt_tokens": 1200, "completion_tokens": 34, "cost": 0.01, "source": "provider"},
                        model="gpt-4o"))
    line = tree.find(data_testid="actx-usage").text()
    tokens = estimate_context_tokens(ctx.messages())
    assert f"≈ {tokens:,}" in line and "128K" in line
    # a provider-reported cost (seed 001's usage.cost) is shown as money, and said to be the provider's
    assert "input 1,200 · output 34 · total 1,234 tokens (provider) · cost $0.01 (provider-reported)" in line
    plain = parse(render(ctx)).find(data_testid="actx-usage").text()
    assert plain == f"≈ {tokens:,} tokens in context (estimate)"


def test_start_renders_later_entries_after_a_count():
    entries = [{"type": 2, "content": [{"type": "text", "text": f"m{i}"}]} for i in range(5)]
    tree = parse(render(entries, start=3))
    assert tree.find(data_testid="actx-earlier").text() == "3 earlier messages"
    assert [a.attrs["data-index"] for a in tree.find_all("article")] == ["3", "4"]
    with pytest.raises(ValueError):
        render(entries, start=-1)


# ---- output messages -----------------------------------------------------------------------------

def test_every_built_in_output_type_has_a_renderer():
    assert set(OUTPUT_RENDERERS) == set(message_types.TYPES)


OUTPUTS = [
    {"id": "u", "type": "user_input", "props": {"content": "hi there"}},
    {"id": "t", "type": "text", "props": {"content": "**bold**"}},
    {"id": "t", "type": "text", "props": {"content": " more"}, "delta": True, "delta_path": "content"},
    {"id": "th", "type": "thinking", "props": {"content": "hmm"}},
    {"id": "l", "type": "loading", "props": {"message": "working"}},
    {"id": "ld", "type": "loading", "props": {"message": "gone"}, "done": True},
    {"id": "tc", "type": "tool_call", "props": {"id": "c9", "name": "lookup", "arguments": '{"q": 1}'}},
    {"id": "e", "type": "error", "props": {"message": "bad", "code": "E1", "details": "trace"}},
    {"id": "i", "type": "image", "props": {"url": f"data:image/png;base64,{PNG}", "alt": "dot", "width": 10}},
    {"id": "ri", "type": "image", "props": {"url": "https://e.com/a.png", "alt": "remote"}},
    {"id": "ji", "type": "image", "props": {"url": "javascript:alert(1)"}},
    {"id": "a", "type": "audio", "props": {"url": "https://e.com/a.mp3", "duration": 2, "transcript": "words"}},
    {"id": "v", "type": "video", "props": {"url": "data:video/mp4;base64,AAAA"}},
    {"id": "ac", "type": "action", "props": {"name": "open", "payload": {"x": 1}}},
    {"id": "ev", "type": "event", "props": {"event": "stream_end"}},
    {"id": "g", "messages": [{"id": "g1", "type": "text", "props": {"content": "in group"}},
                             {"id": "g2", "type": "text", "props": {"content": "also"}}]},
    {"id": "cu", "type": "custom_card", "props": {"k": "v"}},
]


def outputs_of(markup: str) -> dict[str, Node]:
    return {n.attrs["data-output-id"]: n for n in parse(markup).find_all("div", "actxd-out")}


def test_output_messages_render_by_type_with_a_generic_fallback():
    outs = outputs_of(render([], OUTPUTS, remote_media=True))
    assert list(outs) == ["u", "t", "th", "l", "tc", "e", "i", "ri", "ji", "a", "v", "ac", "ev", "g1", "g2", "cu"]
    assert "ld" not in outs  # a finished loading message is not shown, as in the view
    assert outs["u"].find("div", "actxd-plain").text() == "hi there"
    assert outs["t"].find("strong").text() == "bold" and outs["t"].text().strip() == "bold more"
    assert outs["th"].find("details", "actxd-thinking")
    assert outs["l"].text() == "… working"
    assert outs["tc"].find("pre").text() == '{\n  "q": 1\n}' and outs["tc"].find("span", "actxd-tool-name").text() == "lookup"
    assert outs["e"].find("span", "actxd-error-code").text() == "E1" and outs["e"].find("pre").text() == "trace"
    assert outs["i"].find("img").attrs["src"].startswith("data:image/png") and outs["i"].find("img").attrs["width"] == "10"
    assert outs["ri"].find("img").attrs == {"class": "actxd-img", "src": "https://e.com/a.png", "alt": "remote",
                                           "loading": "lazy", "referrerpolicy": "no-referrer"}  # asked for
    assert outs["ji"].find_all("img") == [] and outs["ji"].find("code").text() == "javascript:alert(1)"
    assert outs["a"].find("a").attrs["href"] == "https://e.com/a.mp3" and "2.0 s" in outs["a"].text()
    assert outs["a"].find("details").text() == "Transcriptwords"
    assert outs["v"].find_all("video") == [] and "inline video" in outs["v"].text()
    assert outs["ac"].find("span", "actxd-chip-text").text() == "open"
    assert outs["ev"].find("span", "actxd-chip-text").text() == "stream_end"
    group = outs["g1"].parent
    assert group.attrs["data-group-id"] == "g" and outs["g2"].parent is group
    assert json.loads(outs["cu"].find("pre").text()) == {"k": "v"}


def test_hook_sent_remote_images_are_links_in_a_standalone_page():
    outs = outputs_of(to_html([], OUTPUTS))
    assert outs["ri"].find_all("img") == [] and outs["ri"].find("a").attrs["href"] == "https://e.com/a.png"


def test_a_settled_document_fetches_no_remote_image_until_a_click():
    """Issue 21: a hook-sent http(s) image loaded when a saved notebook's turn document was opened."""
    from agentctx_widgets.widget.document import TurnPart

    state = {"order": ["ri"], "messages": {"ri": OUTPUTS[[m.get("id") for m in OUTPUTS].index("ri")]}}
    for markup in (render([], OUTPUTS), to_html([], OUTPUTS, standalone=False),
                   TurnPart(title="t", context=[], outputs=state).html()):
        tree = parse(markup)
        assert [img.attrs.get("src") for img in tree.find_all("img")
                if img.attrs.get("src", "").startswith("http")] == []
        [link] = [a for a in tree.find_all("a") if a.attrs.get("href") == "https://e.com/a.png"]
        assert link.attrs["rel"] == "noopener noreferrer nofollow"


REMOTE_MEDIA_URLS = ["http://127.0.0.1:9/leak.mp4", "https://e.com/v.mp4", "HTTP://E.COM/V.MP4", "//e.com/v.mp4"]


def test_a_settled_document_fetches_no_remote_audio_video_or_thumbnail():
    """Issue 21, the static twin of the live view's click-to-load media: an audio/video source or a video
    thumbnail that is http(s) or protocol-relative is never a src/poster, whatever remote_media says; an
    http(s) source is a link (it loads on a click), a protocol-relative one is refused as text."""
    from agentctx_widgets.widget.document import TurnPart

    messages = [
        {"id": f"{kind}-{i}", "type": kind, "props": {"url": url, "thumbnail": url if kind == "video" else None}}
        for i, url in enumerate(REMOTE_MEDIA_URLS) for kind in ("audio", "video")
    ] + [{"id": "thumb-only", "type": "video",
          "props": {"url": "data:video/mp4;base64,AAAA", "thumbnail": "https://e.com/t.jpg"}}]
    state = {"order": [m["id"] for m in messages], "messages": {m["id"]: m for m in messages}}
    for markup in (render([], messages), render([], messages, remote_media=True), to_html([], messages),
                   TurnPart(title="t", context=[], outputs=state).html()):
        tree = parse(markup)
        assert tree.find_all("audio") == tree.find_all("video") == tree.find_all("source") == []
        fetching = [(n.tag, name, value) for n in tree.iter() for name, value in n.attrs.items()
                    if name in ("src", "poster", "srcset", "background", "data") and value and "e.com" in value.lower()
                    or name in ("src", "poster") and value and "127.0.0.1" in value]
        assert fetching == []
        outs = {n.attrs["data-output-id"]: n for n in tree.find_all("div", "actxd-out")}
        for i, url in enumerate(REMOTE_MEDIA_URLS):
            for kind in ("audio", "video"):
                out = outs[f"{kind}-{i}"]
                if url.startswith("//"):
                    assert out.find_all("a") == [] and url in out.find("div", "actxd-blocked-url").text()
                else:
                    link = out.find("a", "actxd-media-link")
                    assert link.attrs["href"] == url and link.attrs["rel"] == "noopener noreferrer nofollow"
        assert "https://e.com/t.jpg" not in markup
        assert "inline video does not play" in outs["thumb-only"].text()


def test_output_accepts_an_output_its_state_and_names_refused_messages():
    out = Output()
    out.send({"id": "m", "type": "text", "props": {"content": "from Output"}})
    out.flush()
    assert outputs_of(render([], out))["m"].text().strip() == "from Output"
    assert outputs_of(render([], out.state))["m"].text().strip() == "from Output"
    tree = parse(render([], [{"id": "x", "props": {}}, {"id": "ok", "type": "text", "props": {"content": "fine"}}]))
    assert "Output message not shown: output[0]" in tree.find("div", data_kind="output-refused").text()
    assert tree.find("div", "actxd-out", data_output_id="ok")
    with pytest.raises(TypeError, match="output must be"):
        render([], 42)


# ---- pages and fragments -------------------------------------------------------------------------

def test_standalone_page_has_doctype_charset_and_a_strict_csp():
    tree = parse(to_html(tour_context()))
    assert tree.decl == ["doctype html"]
    metas = tree.find_all("meta")
    assert {"charset": "utf-8"} in [m.attrs for m in metas]
    csp = [m.attrs["content"] for m in metas if m.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert csp == ["default-src 'none'; img-src data:; style-src 'unsafe-inline'"] == [CSP]
    assert tree.find("title").text() == "tour · agentctx"
    assert tree.find_all("script") == []
    head = tree.find("head")
    assert head.find("meta", http_equiv="Content-Security-Policy") in head.iter()
    assert doc_root(tree).parent.tag == "body"


def test_fragment_is_one_root_with_its_own_scoped_style():
    markup = to_html(tour_context(), standalone=False)
    tree = parse(markup)
    assert [c.tag for c in tree.children if isinstance(c, Node)] == ["div"]
    root = doc_root(tree)
    assert ROOT_CLASS in root.classes and root.children[0].tag == "style"
    css = root.children[0].text()
    selectors = 0
    for rule in css.replace("}", "}\n").splitlines():
        head = rule.split("{")
        selector = (head[1] if rule.lstrip().startswith("@") else head[0]).strip()  # @media (...) { sel {
        if not selector or selector == "}":
            continue
        parts, depth, part = [], 0, ""
        for ch in selector:  # top-level commas only (:is(a, b) is one part)
            depth += (ch == "(") - (ch == ")")
            if ch == "," and depth == 0:
                parts.append(part)
                part = ""
            else:
                part += ch
        parts.append(part)
        for part in parts:
            words = part.split()
            assert f".{ROOT_CLASS}" in words[:2], selector  # `.root …` or `[data-jp-theme-light] .root …`
            selectors += 1
    assert selectors > 80
    assert "var(--jp-layout-color1," in css and "prefers-color-scheme: dark" in css
    assert '[data-jp-theme-light="false"]' in css and "/*" not in css
    assert css.count("{") == css.count("}")
    assert markup == render(tour_context(), remote_media=True)


def test_a_session_file_path_is_loaded(tmp_path):
    ctx = Context([{"type": 2, "content": [{"type": "text", "text": "saved **text**"}]}], name="saved", dir=tmp_path)
    ctx.save()
    path = next(tmp_path.glob("*.jsonl"))
    for given in (path, str(path)):
        tree = parse(to_html(given))
        assert tree.find("strong").text() == "text" and tree.find("title").text() == "saved · agentctx"
    assert parse(to_html(path, title="Mine")).find("b", "actxd-name").text() == "Mine"
    with pytest.raises(TypeError, match="expected a Context"):
        to_html(3.5)


def test_to_html_is_the_front_door():
    assert agentctx_widgets.to_html is to_html


# ---- hostile content -----------------------------------------------------------------------------

BAD_URL = ("javascript:", "vbscript:", "data:text", "data:application")
URL_ATTRS = {"href", "src", "action", "formaction", "poster", "srcset", "xlink:href", "background", "data", "cite"}
FORBIDDEN = {"script", "iframe", "frame", "object", "embed", "svg", "math", "form", "input", "button", "textarea",
             "select", "link", "base", "audio", "video", "source", "picture", "template", "noscript", "marquee",
             "applet", "portal", "frameset", "isindex", "xmp", "image"}


def hostile_context() -> tuple[list, list]:
    entries = []
    for i, p in enumerate(HOSTILE):
        entries += [
            {"type": 1, "content": [{"type": "text", "text": p}]},
            {"type": 2, "content": [{"type": "text", "text": p},
                                    {"type": "image", "url": p, "alt": p, "filename": p},
                                    {"type": "image", "mimetype": p, "content": PNG},
                                    {"type": "binary", "mimetype": p, "filename": p, "content": PNG}], "meta": p},
            {"type": 3, "content": [{"type": "thinking", "text": p}, {"type": "text", "text": p},
                                    {"type": "toolCall", "callId": f"c{i}", "name": p, "arguments": p},
                                    {"type": "toolCall", "callId": p, "name": p, "arguments": {p: p, "l": [p]}},
                                    {"type": p, "text": p}]},
            {"type": 4, "callId": f"c{i}", "content": [{"type": "text", "text": p}, {"type": "image", "url": p}]},
            {"type": 4, "callId": p, "error": True, "content": [{"type": "text", "text": p}]},
            {"type": 3, "content": [], "error": {"message": p, "retry": p}},
            {"type": 3, "content": [], "error": p},
            {"type": p, p: p, "html": p},
        ]
    outputs = []
    for i, p in enumerate(HOSTILE):
        outputs += [
            {"id": f"t{i}", "type": "text", "props": {"content": p}},
            {"id": f"th{i}", "type": "thinking", "props": {"content": p}},
            {"id": f"l{i}", "type": "loading", "props": {"message": p}},
            {"id": f"tc{i}", "type": "tool_call", "props": {"id": p, "name": p, "arguments": p}},
            {"id": f"to{i}", "type": "tool_call", "props": {"id": p, "name": p, "arguments": {p: p}}},
            {"id": f"e{i}", "type": "error", "props": {"message": p, "code": p, "details": p}},
            {"id": f"i{i}", "type": "image", "props": {"url": p, "alt": p, "width": p, "height": p}},
            {"id": f"a{i}", "type": "audio", "props": {"url": p, "transcript": p, "format": p}},
            {"id": f"v{i}", "type": "video", "props": {"url": p, "thumbnail": p, "transcript": p}},
            {"id": f"ac{i}", "type": "action", "props": {"name": p, "payload": p}},
            {"id": f"ev{i}", "type": "event", "props": {"event": p, "data": {"html": p}}},
            {"id": f"u{i}", "type": "user_input", "props": {"content": p}},
            {"id": f"x{i}", "type": "x-hostile", "props": {"html": p, p: p}},
            {"id": p, "type": p, "props": {"content": p}},
            {"id": p + "#g", "messages": [{"id": f"g{i}", "type": "text", "props": {"content": p}}]},
        ]
    return entries, outputs


def assert_inert(tree: Node, *, page: bool) -> None:
    for node in tree.iter():
        assert node.tag not in FORBIDDEN, node.tag
        if node.tag == "style":
            assert not node.attrs and node.parent.tag in (("head",) if page else ()) + ("div",)
            assert "actx-doc" in node.parent.classes or node.parent.tag == "head"
        if node.tag == "meta":
            assert page and node.parent.tag == "head"
        for name, value in node.attrs.items():
            assert not name.startswith("on"), (node.tag, name, value)
            assert name != "style" or (node.tag in ("th", "td") and value.replace(" ", "").startswith("text-align:")
                                       and "url" not in value.lower()), value
            if name in URL_ATTRS:
                low = "".join(ch for ch in (value or "") if ch > " ").lower()
                assert not low.startswith(BAD_URL), (node.tag, name, value)
                if name == "href":
                    assert low.startswith(("http://", "https://", "mailto:")), value
                    assert node.attrs.get("rel") == "noopener noreferrer nofollow"
                if name == "src":
                    assert node.tag == "img" and low.startswith("data:image/"), (node.tag, value)
            assert name not in ("srcset", "formaction", "action", "poster", "xlink:href", "srcdoc", "background")


@pytest.fixture(scope="module")
def hostile():
    entries, outputs = hostile_context()
    return entries, outputs, to_html(Context(entries, name=" | ".join(HOSTILE)), outputs, title=" | ".join(HOSTILE))


def test_the_whole_hostile_corpus_in_every_field_is_inert(hostile):
    entries, outputs, page = hostile
    tree = parse(page)
    assert_inert(tree, page=True)
    root = doc_root(tree)
    assert len(root.find_all("style")) == 1
    assert len(root.find_all("article")) == 5 * len(HOSTILE)   # 8 entries each: 2 results beneath their calls, 1 record
    assert len(root.find_all("details", "actxd-record")) == len(HOSTILE)
    # every output message reached the page (done loading messages aside: none here)
    assert len(root.find_all("div", "actxd-out")) == len(outputs)


def test_the_hostile_corpus_in_a_fragment_is_inert_too(hostile):
    entries, outputs, _ = hostile
    tree = parse(render(entries, outputs))  # remote_media=True: still no image URL in the corpus is http(s)
    assert_inert(tree, page=False)


def test_hostile_strings_still_show_as_text(hostile):
    entries, outputs, page = hostile
    root = doc_root(parse(page))
    shown = lambda text: text.replace("\x00", "\ufffd")  # noqa: E731 - NUL cannot reach a page
    raw_args = [n.text() for n in root.find_all("pre", data_args="raw")]
    outputs_pre = root.find_all("pre", "actxd-tool-output")
    assert len(raw_args) == 2 * len(HOSTILE) and len(outputs_pre) == 2 * len(HOSTILE)
    for i, p in enumerate(HOSTILE):
        assert raw_args[i] == shown(p)                  # context toolCall arguments (a string) ...
        assert raw_args[len(HOSTILE) + i] == shown(p)   # ... and the tool_call outputs' (not JSON either)
        assert outputs_pre[2 * i].text() == shown(p) and outputs_pre[2 * i + 1].text() == shown(p)  # tool results
    errors = [n.text() for n in root.find_all("span", "actxd-error-message")]
    assert errors[:2] == [shown(HOSTILE[0])] * 2
    assert root.find("b", "actxd-name").text() == shown(" | ".join(HOSTILE))
    # Markdown fields: a <script> payload is text, code stays code
    first = root.find("article", data_index="0").find("div", "actxd-md")
    assert first.text().strip() == HOSTILE[0]


def test_lone_surrogates_and_nul_do_not_break_the_page():
    page = to_html([{"type": 2, "content": [{"type": "text", "text": "bad \ud800 and \x00 here **b**"},
                                            {"type": "thinking", "text": "\udfff"}]}, {"type": "r\ud800", "x": "\x00"}])
    page.encode("utf-8")
    tree = parse(page)
    assert "bad \ufffd and \ufffd here" in tree.find("div", "actxd-md").text()


def test_plain_text_fast_path_matches_the_parser():
    texts = ["Hello world.", "Two\nlines here", "Para one.\n\nPara two, with \"quotes\" and 'apostrophes'.",
             "Ünïcödé text: 東京 — ok?", "a/b (c) {d} $e% @f ^g", "ends with period.", "x\n\n\n\ny"]
    for text in texts:
        fast = md._plain(text)
        assert fast is not None, text
        slow = md.sanitize_html(md._md.render(text))
        assert parse(fast).text() == parse(slow).text(), text
        assert [n.tag for n in parse(fast).iter()] == [n.tag for n in parse(slow).iter()], text
    for text in ["- list", "1. one", "# h", "a *b*", "x  \ny", " lead", "tail ", "a\n===", "> q", "&amp;", "a|b"]:
        assert md._plain(text) is None, text


def test_ten_thousand_messages_render_linearly():
    entries = []
    for i in range(2500):
        entries += [
            {"type": 2, "content": [{"type": "text", "text": f"Question {i}: what now?"}]},
            {"type": 3, "content": [{"type": "thinking", "text": f"think {i}"},
                                    {"type": "toolCall", "callId": f"c{i}", "name": "tool", "arguments": {"i": i}}]},
            {"type": 4, "callId": f"c{i}", "content": [{"type": "text", "text": f"result {i}"}]},
            {"type": 3, "content": [{"type": "text", "text": f"Answer **{i}** with `code` and\n\n- a list {i}"}]},
        ]
    page = to_html(entries)
    tree = parse(page)
    root = doc_root(tree)
    assert len(root.find_all("article")) == 7500
    assert len(root.find_all("div", "actxd-tool-result")) == 2500
    assert len(root.find_all("div", "actxd-chunk")) == 150
    lazy = [chunk for chunk in root.find_all("div", "actxd-chunk") if "actxd-lazy" in chunk.classes]
    assert len(lazy) == 149  # every full chunk but the first may be skipped off screen

    assert root.find_all("strong")[-1].text() == "2499"
    assert root.find("span", "actxd-count").text() == "10,000 messages"
    assert len(page) < 6_000_000


def test_a_short_document_has_no_chunk_skipped_off_screen():
    """Issue 18 §6: a 3,000-px placeholder stood where a turn's last messages were, in nbconvert's HTML."""
    page = to_html([{"type": 2, "content": [{"type": "text", "text": f"Q{i}"}]} for i in range(60)])
    assert "actxd-lazy" not in page.split("</style>")[-1]  # 50 + 10 entries: the second chunk is not full
    chunk_rule = page[page.index(".actxd-chunk {"):].split("}")[0]
    assert "content-visibility" not in chunk_rule  # only .actxd-lazy chunks are skipped off screen


# ---- the export command --------------------------------------------------------------------------

def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentctx_widgets", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


@pytest.fixture
def session(tmp_path) -> Path:
    ctx = Context([{"type": 2, "content": [{"type": "text", "text": "exported **bold**"}]},
                   {"type": 3, "content": [{"type": "text", "text": "reply"}]}], name="cli", dir=tmp_path)
    ctx.save()
    return next(tmp_path.glob("*.jsonl"))


def test_export_writes_a_standalone_page(session, tmp_path):
    target = tmp_path / "out.html"
    done = run_cli("export", str(session), "-o", str(target), "--title", "CLI export")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote {target} (2 entries") and done.stderr == ""
    tree = parse(target.read_text(encoding="utf-8"))
    assert tree.find("strong").text() == "bold" and tree.find("b", "actxd-name").text() == "CLI export"
    assert tree.find("meta", http_equiv="Content-Security-Policy").attrs["content"] == CSP


def test_export_defaults_next_to_the_session_and_writes_stdout(session, tmp_path):
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps([{"id": "o", "type": "text", "props": {"content": "an output"}}]))
    done = run_cli("export", str(session), "--outputs", str(outputs))
    assert done.returncode == 0, done.stderr
    page = session.with_suffix(".html").read_text(encoding="utf-8")
    assert parse(page).find("div", "actxd-out").text().strip() == "an output"
    done = run_cli("export", str(session), "-o", "-")
    assert done.returncode == 0 and parse(done.stdout).find("strong").text() == "bold"


def test_export_reports_skipped_lines_in_one_line(session):
    with session.open("a") as stream:
        stream.write("not json\n{\"nope\": 1}\n")
    done = run_cli("export", str(session), "-o", "-")
    assert done.returncode == 0
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("agentctx: export: skipped 2 unreadable lines: ")
    assert "line 4 is not valid JSON" in lines[0]


@pytest.mark.parametrize("content, message", [
    (None, "no such file"),
    (b"", "the file is empty"),
    (b"garbage\n\x00\x01 binary\n", "no valid line in the file"),
    ("dir", "is a directory"),
])
def test_export_refuses_bad_input_with_one_line_and_exit_2(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    if content == "dir":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    done = run_cli("export", str(path), "-o", str(tmp_path / "x.html"))
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("agentctx: export: ") and message in lines[0], done.stderr
    assert not (tmp_path / "x.html").exists()


def test_export_refuses_bad_targets_and_outputs(session, tmp_path):
    done = run_cli("export", str(session), "-o", str(tmp_path / "missing" / "x.html"))
    assert done.returncode == 2 and done.stderr.startswith("agentctx: export: ") and "cannot write" in done.stderr
    done = run_cli("export", str(session), "-o", str(tmp_path))
    assert done.returncode == 2 and "is a directory" in done.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    done = run_cli("export", str(session), "--outputs", str(bad))
    assert done.returncode == 2 and "not JSON" in done.stderr and len(done.stderr.splitlines()) == 1
    done = run_cli("export", str(session), "--outputs", str(tmp_path / "absent.json"))
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1


def test_export_usage_errors_exit_2():
    assert run_cli().returncode == 2
    assert run_cli("export").returncode == 2
    assert run_cli("frobnicate").returncode == 2
    assert "export" in run_cli("--help").stdout


def test_html_imports_only_context_and_output():
    """DESIGN.md "Layout": html uses context and output; no Jupyter, no hooks or widget."""
    import ast

    for path in (REPO / "agentctx_widgets" / "html").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                assert node.level == 1 or (node.module or "").split(".")[0] in ("context", "output"), (path, node.module)
    code = ("import sys, agentctx_widgets.html\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('IPython', 'anywidget', 'ipywidgets', 'traitlets')"
            " or m.startswith(('agentctx_widgets.hooks', 'agentctx_widgets.widget', 'agentctx_widgets.models'))]\n"
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_export_never_writes_through_a_symlink(session, tmp_path):
    """Issue 21: run as root, an export through a symlink overwrote the file it pointed to."""
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me")
    link = tmp_path / "out.html"
    link.symlink_to(precious)
    done = run_cli("export", str(session), "-o", str(link))
    assert done.returncode == 2
    assert done.stderr == (f"agentctx: export: {link} is a symlink ('{precious}'); refusing to write through it "
                           "(write to the file itself)\n".replace("('", "(to '"))
    assert precious.read_text() == "keep me" and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []  # no temporary left


# ---- cost (issue 23) -------------------------------------------------------------------------------

from agentctx_widgets.context.cost import Cost, cost as price_of  # noqa: E402
from agentctx_widgets.html.cost import cost_from_json, cost_json, entries_cost  # noqa: E402

GPT_4O_CALL = {"prompt_tokens": 1000, "completion_tokens": 100}
"""$2.50 / $10.00 per million (OpenAI's price page): 1000 x 2.5e-6 + 100 x 1e-5 = $0.0025 + $0.001 = $0.0035."""


def test_the_usage_line_shows_the_cost_with_where_it_came_from():
    spent = price_of(GPT_4O_CALL, "gpt-4o")
    tree = parse(render(Context(name="c"), usage=GPT_4O_CALL, model="gpt-4o", cost=spent))
    shown = tree.find(data_testid="actx-cost")
    assert shown.text() == "cost $0.0035"
    assert tree.find(data_testid="actx-usage").text().endswith("total 1,100 tokens · cost $0.0035")
    title = shown.attrs["title"]
    assert title.startswith("$0.0035 USD: input $0.0025 · output $0.001\npriced by genai-prices ")
    assert "estimated" not in title and shown.attrs["data-unpriced"] == "0"
    assert parse(render(Context(), cost=spent.to_dict())).find(data_testid="actx-cost").text() == "cost $0.0035"


def test_an_unknown_model_reads_unpriced_never_zero_and_an_estimate_is_marked():
    unknown = price_of(GPT_4O_CALL, "my-local-model")
    shown = parse(render(Context(), cost=unknown)).find(data_testid="actx-cost")
    assert shown.text() == "cost unpriced (my-local-model)" and "$" not in shown.text()
    assert shown.attrs["data-unpriced"] == "1" and "prices={'my-local-model'" in shown.attrs["title"]
    both = price_of(GPT_4O_CALL, "gpt-4o") + unknown
    assert parse(render(Context(), cost=both)).find(data_testid="actx-cost").text() == \
        "cost $0.0035 + unpriced (my-local-model)"
    estimated = price_of({**GPT_4O_CALL, "source": "estimate"}, "gpt-4o")
    shown = parse(render(Context(), cost=estimated)).find(data_testid="actx-cost")
    assert shown.text() == "cost ≈ $0.0035" and shown.attrs["data-estimated"] == "1"
    assert "estimated: some of the usage was estimated" in shown.attrs["title"]
    free = price_of(GPT_4O_CALL, "llama3.2", prices={"llama3.2": "free"})
    assert parse(render(Context(), cost=free)).find(data_testid="actx-cost").text() == "cost $0 (free)"
    with pytest.raises(TypeError, match="cost must be a Cost"):
        render(Context(), cost=0.0035)


def test_the_export_prices_only_messages_that_carry_usage_and_a_model(tmp_path):
    def reply(text, **meta):
        return {"type": 3, "content": [{"type": "text", "text": text}], **meta}

    plain = Context([{"type": 2, "content": [{"type": "text", "text": "hi"}]}, reply("hello")])
    assert entries_cost(plain.messages()) is None  # the kit's own contexts carry no usage: no cost line
    assert parse(to_html(plain)).find_all(data_testid="actx-cost") == []
    ask = {"type": 2, "content": [{"type": "text", "text": "q"}]}
    priced = Context([ask, reply("a", usage=GPT_4O_CALL, model="gpt-4o"), ask, reply("b", usage=GPT_4O_CALL,
                                                                                  model="gpt-4o")],
                     name="priced", dir=tmp_path)
    assert parse(to_html(priced)).find(data_testid="actx-cost").text() == "cost $0.007"  # two calls of $0.0035
    # usage with no model, or in a shape the kit does not read: unpriced, never $0
    unnamed = Context([reply("a", usage=GPT_4O_CALL)])
    assert parse(to_html(unnamed)).find(data_testid="actx-cost").text() == "cost unpriced ((no model named))"
    foreign = entries_cost([reply("a", usage={"input": 10, "output": 5}, model="gpt-4o")])
    assert foreign.total is None and foreign.unpriced == ("(usage without token counts)",)
    path = priced.save()
    done = run_cli("export", str(path), "-o", str(tmp_path / "p.html"))
    assert done.returncode == 0, done.stderr
    page = parse((tmp_path / "p.html").read_text())
    assert page.find(data_testid="actx-cost").text() == "cost $0.007"


def test_the_front_end_gets_amounts_as_decimal_strings():
    spent = price_of(GPT_4O_CALL, "gpt-4o")
    value = cost_json(spent)
    assert value["total"] == "0.0035" and value["parts"] == {"input": "0.0025", "output": "0.001"}
    assert json.loads(json.dumps(value)) == value and value["message"] is None
    back = cost_from_json(value)
    assert back.total == spent.total and back.parts == spent.parts
    unknown = cost_json(price_of(GPT_4O_CALL, "nope"))
    assert unknown["total"] is None and unknown["unpriced"] == ["nope"] and "prices=" in unknown["message"]
    assert cost_json(Cost.zero())["total"] == "0"
    with pytest.raises(ValueError, match="total must be a decimal string"):
        cost_from_json({"total": 0.5})

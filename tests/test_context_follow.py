"""``SessionFollower`` driven poll by poll (no thread): the line rules that tests/test_watch.py does not
reach through a writer process — chunked reads, over-long lines, control lines that do not fit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentctx_widgets.context import Context, follow
from agentctx_widgets.context.follow import SessionFollower

HEADER = {"type": "context", "id": "f", "name": "f", "version": 1}


def user(text: str) -> dict:
    return {"type": 2, "content": [{"type": "text", "text": text}]}


def write(path: Path, *lines: object, raw: str = "") -> None:
    with open(path, "a") as stream:
        stream.write("".join(json.dumps(line) + "\n" for line in lines) + raw)


def reasons(found: list[dict]) -> list[tuple[str, str]]:
    return [(item["code"], item["message"]) for item in found]


@pytest.fixture
def follower(tmp_path):
    follower = SessionFollower(tmp_path / "f.jsonl", Context())
    yield follower
    follower.close()


def test_lines_split_across_many_small_reads_are_applied_whole(follower, monkeypatch):
    monkeypatch.setattr(follow, "READ_CHUNK", 7)
    write(follower.path, HEADER, user("one"), user("two"), raw='{"type": 3, "content": [{"type": "te')
    assert follower.poll() == []
    assert follower.context.messages() == [user("one"), user("two")]
    assert (follower.lines_read, follower.partial_bytes, follower.header) == (3, 36, HEADER)
    write(follower.path, raw='xt", "text": "three"}]}\n')
    assert follower.poll() == []
    assert follower.context.messages()[-1] == {"type": 3, "content": [{"type": "text", "text": "three"}]}
    assert (follower.lines_read, follower.partial_bytes) == (4, 0)


def test_a_line_over_the_limit_is_reported_once_and_the_next_line_applies(follower, monkeypatch):
    monkeypatch.setattr(follow, "MAX_LINE_BYTES", 40)
    write(follower.path, HEADER, raw='{"type": 2, "content": [{"type": "text", "text": "' + "x" * 60)
    path = follower.path
    assert reasons(follower.poll()) == [
        ("watch_bad_line", f"{path} line 2 is longer than 40 bytes (MAX_LINE_BYTES); skipped")]
    write(path, raw="y" * 50)
    assert follower.poll() == [] and follower.partial_bytes == 0  # still inside the long line: dropped
    write(path, raw='"}]}\n')
    write(path, user("next"))
    assert follower.poll() == []
    assert follower.context.messages() == [user("next")]
    assert follower.lines_read == 3


def test_lines_that_do_not_fit_the_context_are_reported_and_change_nothing(follower):
    path = follower.path
    write(path, HEADER, user("kept"),
          {"type": "context.replace", "index": 5, "message": user("nope")},
          {"type": "context.remove", "index": -1},
          {"type": "context.truncate", "length": "2"},
          {"type": 2, "content": []},
          HEADER,
          {"type": "context.record", "record": {"type": "context.note", "text": "wrapped"}},
          {"type": "note", "text": "a record"},
          {"type": "context.replace", "index": 0, "message": user("replaced")})
    assert reasons(follower.poll()) == [
        ("watch_bad_line", f"{path} line 3 is a malformed context.replace line (index 5, 1 entries); skipped"),
        ("watch_bad_line", f"{path} line 4 is a malformed context.remove line (index -1, 1 entries); skipped"),
        ("watch_bad_line", f"{path} line 5 is a malformed context.truncate line; skipped"),
        ("watch_bad_line", f"{path} line 6 is an empty message, which a Context does not keep; skipped"),
        ("watch_bad_line", f"{path} line 7 is a second header; skipped"),
    ]
    assert follower.context.messages() == [
        user("replaced"), {"type": "context.note", "text": "wrapped"}, {"type": "note", "text": "a record"}]


def test_the_mirror_equals_what_context_load_reads_from_the_same_file(follower):
    writer = Context(id="f", dir=follower.path.parent)
    for text in ("a", "b"):
        writer.append(user(text))  # the second merges into the first: a context.replace once saved
        writer.save()
    writer.append({"type": 3, "content": [{"type": "text", "text": "c"}]})
    writer.remove(0)
    writer.save()
    assert follower.poll() == []
    assert follower.context.messages() == Context.load(follower.path).messages() == [
        {"type": 3, "content": [{"type": "text", "text": "c"}]}]

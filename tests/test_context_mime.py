import base64

import pytest

from agentctx_widgets.context import MIME_BY_EXTENSION, binary_content, detect_mime, file_message

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


def test_table_is_read_only():
    assert MIME_BY_EXTENSION["png"] == "image/png"
    with pytest.raises(TypeError):
        MIME_BY_EXTENSION["png"] = "x"  # type: ignore[index]


@pytest.mark.parametrize("path, mime", [
    ("a/b/photo.JPG", "image/jpeg"), ("doc.pdf", "application/pdf"), ("notes.md", "text/markdown"),
    ("C:\\data\\x.csv", "text/csv"), ("clip.webm", "video/webm"),
])
def test_extension_first(path, mime):
    assert detect_mime(path=path, buffer=PNG) == mime


@pytest.mark.parametrize("head, mime", [
    (PNG, "image/png"), (b"\xff\xd8\xff\xe0" + b"\x00" * 8, "image/jpeg"), (b"GIF89a....", "image/gif"),
    (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"), (b"RIFF\x00\x00\x00\x00WAVEfmt ", "audio/wav"),
    (b"%PDF-1.7\n", "application/pdf"), (b"PK\x03\x04rest", "application/zip"), (b"ID3\x04", "audio/mpeg"),
    (b"\x00\x00\x00\x18ftypisom", "video/mp4"), (b"\x00\x00\x00\x18ftypheic", "image/heic"),
    (b"hello world", "application/octet-stream"), (b"", "application/octet-stream"),
])
def test_leading_bytes_when_extension_unknown(head, mime):
    assert detect_mime(path="upload.bin", buffer=head) == mime
    assert detect_mime(buffer=bytearray(head)) == mime


def test_nothing_known():
    assert detect_mime() == "application/octet-stream"
    assert detect_mime(path="README") == "application/octet-stream"
    assert detect_mime(path=".bashrc") == "application/octet-stream"


def test_binary_content_keeps_only_the_basename():
    block = binary_content("/home/me/secret/dir/pic.png", b"abc")
    assert block == {"type": "binary", "mimetype": "image/png", "filename": "pic.png",
                     "content": base64.b64encode(b"abc").decode()}
    assert "secret" not in str(block)


@pytest.mark.parametrize("path, buffer", [("", b"x"), (None, b"x"), ("a.txt", "text"), ("a.txt", [1, 2])])
def test_binary_content_type_errors(path, buffer):
    with pytest.raises(TypeError):
        binary_content(path, buffer)


def test_file_message_is_a_user_message_with_one_binary_block():
    msg = file_message("x/y.pdf", b"%PDF-1.4")
    assert msg["type"] == 2
    assert msg["content"] == [{"type": "binary", "mimetype": "application/pdf", "filename": "y.pdf",
                               "content": "JVBERi0xLjQ="}]
    with pytest.raises(TypeError):
        file_message("", b"")


def test_options_dict_like_the_seed():
    assert detect_mime({"path": "a.gif"}) == "image/gif"
    assert detect_mime({"buffer": PNG}) == "image/png"
    with pytest.raises(TypeError):
        detect_mime("a.gif")

"""``ctx.workspace`` on a directory that came from outside: every probe of issue 21.

Nothing outside the workspace is read (Copy included), only regular files are opened (a FIFO never
blocks the engine thread, so the next turn works), and reads are bounded by size before they start.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from bounded_child import run_child

from agentctx_widgets import Context, ScriptedModel, run_turn
from agentctx_widgets.yao import workspace as workspace_module
from agentctx_widgets.yao.values import YaoServiceError
from agentctx_widgets.yao.workspace import Workspace

pytestmark = pytest.mark.timeout(120)

RUNNER_ECHO = Path(__file__).parent / "fixtures" / "yao_runner" / "assistants" / "tests" / "runner-echo"


@pytest.fixture
def tree(tmp_path):
    """A workspace ``ws`` beside a host file ``secret.txt`` it must never reach."""
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("host secret")
    return root


def test_read_file_of_a_fifo_is_refused_without_blocking(tree):
    os.mkfifo(tree / "pipe")
    with pytest.raises(YaoServiceError) as info:
        Workspace(tree).ReadFile("pipe")
    assert str(info.value) == (f"ReadFile failed: {tree / 'pipe'} is a FIFO (named pipe), not a regular file; "
                               f"refusing to open it")


def test_read_file_through_a_symlink_to_a_device_is_an_escape(tree):
    (tree / "zero").symlink_to("/dev/zero")
    with pytest.raises(YaoServiceError, match=r"^ReadFile failed: path escapes the workspace: zero$"):
        Workspace(tree).ReadFile("zero")


def test_read_file_over_the_cap_is_refused_by_its_size(tree, monkeypatch):
    monkeypatch.setattr(workspace_module, "MAX_READ_BYTES", 100)
    (tree / "big.txt").write_bytes(b"x" * 101)
    (tree / "fits.txt").write_bytes(b"x" * 100)
    ws = Workspace(tree)
    assert ws.ReadFile("fits.txt") == "x" * 100
    with pytest.raises(YaoServiceError) as info:
        ws.ReadFile("big.txt")
    assert str(info.value) == (f"ReadFile failed: {tree / 'big.txt'} is 101 bytes, over the 100-byte limit; "
                               f"refusing to read it")


def test_read_file_of_3_gb_never_reads_it(tree):
    # the probe: 3.1 GB went into the kernel before time_limit could fire; a sparse file costs no disk
    with open(tree / "huge.bin", "wb") as file:
        file.truncate(3 * 1024**3)
    child = run_child(f"""
        from agentctx_widgets.yao.workspace import Workspace
        from agentctx_widgets.yao.values import YaoServiceError
        limit_memory(32)
        try:
            Workspace({str(tree)!r}).ReadFile("huge.bin")
        except YaoServiceError as error:
            print(error)
    """)
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip().endswith(f"huge.bin is {3 * 1024**3} bytes, over the 67108864-byte limit; "
                                         f"refusing to read it")


def test_write_file_into_a_fifo_is_refused_without_blocking(tree):
    os.mkfifo(tree / "pipe")
    with pytest.raises(YaoServiceError, match=r"^WriteFile failed: .*pipe is a FIFO \(named pipe\), not a regular file"):
        Workspace(tree).WriteFile("pipe", "hello")


def test_write_file_replaces_the_file_whole(tree):
    ws = Workspace(tree)
    ws.WriteFile("a.txt", "first, longer text")
    ws.WriteFile("a.txt", "second")
    assert (tree / "a.txt").read_text() == "second"
    assert sorted(os.listdir(tree)) == ["a.txt"]  # no temporary file left beside it


def test_copy_refuses_a_symlink_inside_that_points_outside(tree):
    # the probe: Copy("d", "d2") followed d/link.txt out, and ReadFile("d2/link.txt") returned the host file
    (tree / "d").mkdir()
    (tree / "d" / "ok.txt").write_text("fine")
    (tree / "d" / "link.txt").symlink_to(tree.parent / "secret.txt")
    ws = Workspace(tree)
    with pytest.raises(YaoServiceError) as info:
        ws.Copy("d", "d2")
    assert str(info.value) == (f"Copy failed: path escapes the workspace: d/link.txt "
                               f"(a symlink to {tree.parent / 'secret.txt'})")
    assert not (tree / "d2").exists()  # refused before anything was copied
    with pytest.raises(YaoServiceError):
        ws.ReadFile("d2/link.txt")
    with pytest.raises(YaoServiceError, match=r"path escapes the workspace: d/link.txt$"):
        ws.ReadFile("d/link.txt")


def test_copy_of_a_single_symlink_out_is_an_escape(tree):
    (tree / "link.txt").symlink_to(tree.parent / "secret.txt")
    with pytest.raises(YaoServiceError, match=r"^Copy failed: path escapes the workspace: link.txt$"):
        Workspace(tree).Copy("link.txt", "copy.txt")
    assert not (tree / "copy.txt").exists()


def test_copy_follows_a_symlink_that_stays_inside(tree):
    (tree / "d").mkdir()
    (tree / "d" / "sub").mkdir()
    (tree / "real.txt").write_text("inside")
    (tree / "d" / "sub" / "alias.txt").symlink_to(tree / "real.txt")
    ws = Workspace(tree)
    ws.Copy("d", "d2")
    copied = tree / "d2" / "sub" / "alias.txt"
    assert copied.read_text() == "inside" and not copied.is_symlink()


def test_copy_refuses_a_fifo_in_the_tree_before_copying_anything(tree):
    (tree / "d").mkdir()
    (tree / "d" / "a.txt").write_text("a")
    os.mkfifo(tree / "d" / "z.pipe")
    with pytest.raises(YaoServiceError, match=r"^Copy failed: .*z\.pipe is a FIFO \(named pipe\), not a regular file"):
        Workspace(tree).Copy("d", "d2")
    assert not (tree / "d2").exists()


def test_copy_into_itself_is_refused(tree):
    (tree / "d").mkdir()
    with pytest.raises(YaoServiceError, match=r"^Copy failed: cannot copy d into itself$"):
        Workspace(tree).Copy("d", "d/inner")


def test_a_fifo_read_by_a_hook_fails_that_call_and_the_next_turn_works(tmp_path):
    # the probe: Ctrl-C ended the turn, but the hook set's engine thread stayed blocked and every later
    # turn hung; now the read is refused at once and the same loaded assistant answers the next turn
    from agentctx_widgets.yao import load_assistant

    directory = tmp_path / "runner-echo"
    shutil.copytree(RUNNER_ECHO, directory)
    script = directory / "src" / "index.ts"
    script.write_text(script.read_text().replace(
        "function Next(ctx: agent.Context, payload: any, options: any): any {\n  return {\n    data: {",
        "function Next(ctx: agent.Context, payload: any, options: any): any {\n"
        "  let read = \"\";\n"
        "  try { read = ctx.workspace.ReadFile(\"pipe\"); } catch (e) { read = String(e.message || e); }\n"
        "  return {\n    data: {\n      read,"))
    work = tmp_path / "work"
    work.mkdir()
    os.mkfifo(work / "pipe")
    loaded = load_assistant(directory, id="tests.runner-echo", workspace=work)
    first = run_turn(Context(), "hello", assistant=loaded, model=ScriptedModel(["Hi"]))
    assert first.ok, first.error
    assert "is a FIFO (named pipe), not a regular file" in first.next["read"]
    (work / "pipe").unlink()
    (work / "pipe").write_text("now a file")
    second = run_turn(Context(), "hello", assistant=loaded, model=ScriptedModel(["Hi again"]))
    assert second.ok, second.error
    assert second.next["read"] == "now a file" and second.next["answer"] == "Hi again"


def test_read_dir_over_the_entry_cap_is_refused(tree, monkeypatch):
    monkeypatch.setattr(workspace_module, "MAX_DIR_ENTRIES", 3)
    (tree / "d").mkdir()
    for name in "abc":
        (tree / "d" / name).write_text(name)
    ws = Workspace(tree)
    assert [item["name"] for item in ws.ReadDir("d")] == ["a", "b", "c"]
    (tree / "d" / "e").write_text("e")
    with pytest.raises(YaoServiceError) as info:
        ws.ReadDir("d")
    assert str(info.value) == (f"ReadDir failed: {tree / 'd'} holds more than 3 entries (MAX_DIR_ENTRIES); "
                               f"refusing to list it")


def test_copy_of_a_tree_over_the_entry_cap_is_refused_before_copying(tree, monkeypatch):
    monkeypatch.setattr(workspace_module, "MAX_DIR_ENTRIES", 2)
    (tree / "d" / "sub").mkdir(parents=True)
    (tree / "d" / "a").write_text("a")
    ws = Workspace(tree)
    ws.Copy("d", "ok")  # a and sub: 2 entries
    assert (tree / "ok" / "a").read_text() == "a" and (tree / "ok" / "sub").is_dir()
    (tree / "d" / "sub" / "b").write_text("b")
    with pytest.raises(YaoServiceError) as info:
        ws.Copy("d", "d2")
    assert str(info.value) == "Copy failed: d holds more than 2 entries (MAX_DIR_ENTRIES); refusing to copy it"
    assert not (tree / "d2").exists()


def test_copy_of_a_file_over_the_byte_cap_is_refused_by_its_size_unread(tree):
    # the probe: a multi-GB copy held the engine thread; a sparse 3 GB file is refused by its stat in a
    # 32 MB-capped child, and nothing is created
    with open(tree / "huge.bin", "wb") as file:
        file.truncate(3 * 1024**3)
    child = run_child(f"""
        import os
        from agentctx_widgets.yao.workspace import Workspace
        from agentctx_widgets.yao.values import YaoServiceError
        limit_memory(32)
        try:
            Workspace({str(tree)!r}).Copy("huge.bin", "copy.bin")
        except YaoServiceError as error:
            print(error)
        print(os.path.exists({str(tree / 'copy.bin')!r}))
    """)
    assert child.returncode == 0, child.stderr
    assert child.stdout.split("\n")[:2] == [
        f"Copy failed: {tree / 'huge.bin'} is {3 * 1024**3} bytes, over the 268435456-byte limit (MAX_COPY_BYTES); "
        f"refusing to copy it", "False"]


def test_copy_of_a_tree_over_the_byte_cap_together_is_refused_before_copying(tree, monkeypatch):
    monkeypatch.setattr(workspace_module, "MAX_COPY_BYTES", 100)
    (tree / "d").mkdir()
    (tree / "d" / "a").write_bytes(b"x" * 60)
    ws = Workspace(tree)
    ws.Copy("d", "fits")
    assert (tree / "fits" / "a").read_bytes() == b"x" * 60
    (tree / "d" / "b").write_bytes(b"y" * 60)
    with pytest.raises(YaoServiceError) as info:
        ws.Copy("d", "d2")
    assert str(info.value) == (f"Copy failed: {tree / 'd'} holds 120 bytes or more, over the 100-byte limit "
                               f"(MAX_COPY_BYTES); refusing to copy it")
    assert not (tree / "d2").exists()


def test_copy_never_writes_more_than_it_stated(tree, monkeypatch):
    (tree / "a").write_bytes(b"x" * 10)
    real_stat = os.stat
    monkeypatch.setattr(workspace_module.os, "stat",  # the file grows between the size check and the copy
                        lambda path, *a, **k: os.stat_result((*real_stat(path)[:6], 4, *real_stat(path)[7:]))
                        if str(path) == str(tree / "a") else real_stat(path, *a, **k))
    with pytest.raises(YaoServiceError) as info:
        Workspace(tree).Copy("a", "b")
    assert str(info.value) == (f"Copy failed: {tree / 'a'} grew while being copied, past the size stated "
                               f"before copying; refusing it")

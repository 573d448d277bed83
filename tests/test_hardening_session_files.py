"""Session files that cannot be confused or block (issue 11).

Garbled lines: Context.load never raises for them, warns once per bad line naming it, and everything it
keeps is a valid message or a record (what the rest of the package assumes). Hostile files: one id is
one file name; a file of another context is refused by name; FIFOs, devices, directories and symlinks
to them are refused before anything blocks; lines over the size or depth limit or with a key twice are
refused naming the line; two writers keep every message of both; a file replaced or cut short is
noticed and rewritten whole. Whatever could hang or bloat runs in a child with a timeout and a memory
limit.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentctx_widgets import Context
from agentctx_widgets.context import is_record, validate_message
from agentctx_widgets.context import store
from agentctx_widgets.context.store import MAX_DEPTH, MAX_LINE_BYTES, MAX_STEM_BYTES, SessionFileError, file_stem

ROOT = Path(__file__).resolve().parents[1]

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
BLOCK = st.fixed_dictionaries({"type": st.sampled_from(["text", "thinking"]), "text": st.text(max_size=10)})
MESSAGE = st.fixed_dictionaries({"type": st.sampled_from([1, 2, 3, 4]), "content": st.lists(BLOCK, max_size=2)})
RECORD = st.fixed_dictionaries({"type": st.sampled_from(["note", "usage", "x"]), "value": JSON})
INDEX = st.integers(-2, 6) | JSON
# What a control line may carry: a good replacement, or something that is not an object at all.
REPLACEMENT = MESSAGE | RECORD | st.fixed_dictionaries({"type": st.just("context.record"), "record": RECORD | JSON}) \
    | st.none() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=5) | st.lists(JSON, max_size=2)
CONTROL = st.one_of(
    st.fixed_dictionaries({"type": st.just("context.truncate"), "length": INDEX}),
    st.fixed_dictionaries({"type": st.just("context.remove"), "index": INDEX}),
    st.fixed_dictionaries({"type": st.just("context.replace"), "index": INDEX, "message": REPLACEMENT}),
    st.fixed_dictionaries({"type": st.just("context.record"), "record": RECORD | JSON}),
    st.fixed_dictionaries({"type": st.just("context"), "id": JSON, "name": JSON}),
)
GARBLED_MESSAGE = st.fixed_dictionaries({"type": JSON | st.sampled_from([1, 2, 3]), "content": JSON})
LINE = st.one_of(
    MESSAGE.map(orjson.dumps), RECORD.map(orjson.dumps), CONTROL.map(orjson.dumps),
    GARBLED_MESSAGE.map(orjson.dumps), JSON.map(orjson.dumps),
    st.binary(max_size=20).map(lambda b: b.replace(b"\n", b"")),          # not JSON (or, by chance, JSON)
    MESSAGE.map(lambda m: orjson.dumps(m)[: max(1, len(orjson.dumps(m)) // 2)]),  # a save cut short
)
HEADER = st.just(b'{"type":"context","id":"c1","name":"garbled","version":1}') | st.binary(max_size=10).map(
    lambda b: b.replace(b"\n", b""))


def load_with_warnings(path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        context = Context.load(path)
    return context, caught


@given(HEADER, st.lists(LINE, max_size=12), st.booleans())
@settings(max_examples=300, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
def test_garbled_session_files_load_with_one_warning_per_bad_line(tmp_path, header, lines, final_newline):
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\n".join([header, *lines]) + (b"\n" if final_newline else b""))
    context, caught = load_with_warnings(path)
    raw = path.read_bytes().split(b"\n")
    named = []
    for warning in caught:
        assert issubclass(warning.category, RuntimeWarning)
        match = re.search(r"line (\d+)", str(warning.message))
        assert match, str(warning.message)
        number = int(match.group(1))
        assert 1 <= number <= len(raw) and raw[number - 1].strip(), (number, str(warning.message))
        named.append(number)
    assert len(named) == len(set(named))  # one warning per bad line
    for index, entry in enumerate(context.messages()):
        if not is_record(entry):
            validate_message(entry, f"context[{index}]")
    again, _ = load_with_warnings(path)
    assert again.messages() == context.messages()  # loading is deterministic


def test_a_file_that_is_not_there_raises_the_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        Context.load(tmp_path / "missing.jsonl")


def test_a_replace_line_with_an_invalid_message_is_skipped_with_a_warning(tmp_path):
    path = tmp_path / "session.jsonl"
    lines = [{"type": "context", "id": "c1", "name": "n", "version": 1},
             {"type": 2, "content": [{"type": "text", "text": "hi"}]},
             {"type": "context.replace", "index": 0, "message": {"type": 2, "content": "not a list"}}]
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    context, caught = load_with_warnings(path)
    assert context.messages() == [lines[1]]
    assert any("line 3" in str(w.message) for w in caught)


# -- helpers ---------------------------------------------------------------------------------------

def user(text, **meta):
    return {"type": 2, "content": [{"type": "text", "text": text}], **meta}


def header(context_id="c1", name=None):
    return {"type": "context", "id": context_id, "name": name, "version": 1}


def write_lines(path, *lines):
    """A session file of ``lines`` (dicts are encoded with orjson, bytes are written as they are)."""
    path.write_bytes(b"".join((line if isinstance(line, bytes) else orjson.dumps(line)) + b"\n" for line in lines))
    return path


def refused(match, fn, *args):
    with pytest.raises(SessionFileError, match=match) as caught:
        fn(*args)
    return str(caught.value)


# The children import agentctx_widgets.context without the package __init__ (which pulls in Jupyter),
# limit their own address space, and are run with a timeout: a regression hangs or bloats only them.
CHILD_PRELUDE = f"""
import resource, sys, types
limit = int(sys.argv[1]) * 1024 * 1024
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
package = types.ModuleType("agentctx_widgets")
package.__path__ = [{str(ROOT / "agentctx_widgets")!r}]
sys.modules["agentctx_widgets"] = package
from agentctx_widgets.context import Context
from agentctx_widgets.context.store import SessionFileError
"""


def run_child(script, *args, memory_mb=1024, timeout=60, stdin=None):
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", CHILD_PRELUDE + script, str(memory_mb), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, input=stdin)
    assert done.returncode == 0, done.stderr
    return done.stdout, time.monotonic() - started


# -- one id, one file ------------------------------------------------------------------------------

def test_ids_the_old_naming_folded_together_write_different_files(tmp_path):
    pairs = [("team/alpha", "team_alpha"), ("a b", "a_b"), (".x", "x"), ("a%2Fb", "a/b"), ("é", "_"),
             ("a//b", "a/b"), ("x" * 300 + "1", "x" * 300 + "2")]
    for first, second in pairs:
        one = Context([user(f"from {first}")], id=first, dir=tmp_path)
        two = Context([user(f"from {second}")], id=second, dir=tmp_path)
        assert one.save() != two.save(), (first, second)
        assert Context.load(one.path).messages() == [user(f"from {first}")]
        assert Context.load(two.path).messages() == [user(f"from {second}")]
        assert Context.load(one.path).id == first and Context.load(two.path).id == second
    assert Context(id="team/alpha", dir=tmp_path).path.name == "team%2Falpha.jsonl"


def test_plain_ids_keep_their_readable_file_names(tmp_path):
    for plain in ("abc-1", "sess_2024.v1", "A-Z_09", "x"):
        assert Context(id=plain, dir=tmp_path).path.name == f"{plain}.jsonl"
        assert file_stem(plain) == plain
    assert file_stem("café") == "caf%C3%A9" and file_stem(".hidden") == "%2Ehidden"
    assert file_stem("..") == "%2E." and file_stem("a.b") == "a.b"


@given(st.lists(st.text(max_size=300) | st.text(alphabet="a/_%~.", min_size=130, max_size=260), min_size=2,
                max_size=8, unique=True).filter(lambda texts: all(texts)))
@settings(max_examples=300, derandomize=True, deadline=None)
def test_file_stems_are_injective_safe_and_short(texts):
    stems = [file_stem(text) for text in texts]
    assert len(set(stems)) == len(stems)  # one text, one stem
    for text, stem in zip(texts, stems):
        assert re.fullmatch(r"[A-Za-z0-9._%~-]+", stem) and not stem.startswith(".")
        assert len(stem) <= MAX_STEM_BYTES
        if re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9._-]*", text) and len(text) <= MAX_STEM_BYTES:
            assert stem == text


def test_a_file_under_the_current_naming_still_loads_and_is_saved_into(tmp_path):
    # Written as the previous naming did for a plain id: same name, same lines.
    path = write_lines(tmp_path / "abc-1.jsonl", header("abc-1", "Demo"), user("before"))
    loaded = Context.load(path)
    assert loaded.messages() == [user("before")] and loaded.id == "abc-1"
    loaded.append(user("after", n=1))
    assert loaded.save() == path
    assert Context.load(path).messages() == [user("before"), user("after", n=1)]
    assert Context(id="abc-1", dir=tmp_path).path == path  # a new context of that id finds it


def test_a_file_that_holds_another_context_is_refused_by_name(tmp_path):
    # What the old naming did: `team/alpha` wrote team_alpha.jsonl. `team_alpha` must not write into it.
    path = write_lines(tmp_path / "team_alpha.jsonl", header("team/alpha"), user("alpha's"))
    before = path.read_bytes()
    intruder = Context([user("mine")], id="team_alpha", dir=tmp_path)
    message = refused(r"holds context id 'team/alpha', not this one \(context id 'team_alpha'\)", intruder.save)
    assert "refusing to write into another context's file" in message
    assert path.read_bytes() == before
    assert Context.load(path).id == "team/alpha"  # load says whose file it is
    # An id-less context named like an id, and an id meeting a name-only file, are other contexts too.
    refused(r"holds context id 'team/alpha', not this one \(the context named 'team_alpha' \(no id\)\)",
            Context(name="team_alpha", dir=tmp_path).save)
    write_lines(tmp_path / "named.jsonl", header(None, "named"))
    refused(r"holds the context named 'named' \(no id\)", Context(id="named", dir=tmp_path).save)
    Context([user("same name")], name="named", dir=tmp_path).save()  # the same name-only context: its own
    assert Context.load(tmp_path / "named.jsonl").messages() == [user("same name")]


def test_two_names_a_file_system_folds_together_are_refused(tmp_path):
    """On a case-insensitive file system `Team` and `team` are one file; a hard link plays that here."""
    Context([user("upper")], id="Team", dir=tmp_path).save()
    os.link(tmp_path / "Team.jsonl", tmp_path / "team.jsonl")
    refused(r"holds context id 'Team', not this one \(context id 'team'\)",
            Context([user("lower")], id="team", dir=tmp_path).save)
    assert Context.load(tmp_path / "Team.jsonl").messages() == [user("upper")]


def test_a_file_that_is_not_a_session_file_is_not_written_into(tmp_path):
    path = tmp_path / "notes.jsonl"
    path.write_bytes(b'{"some": "other tool"}\n')
    refused(r"notes.jsonl is not a session file \(line 1 is not a context header\)",
            Context(id="notes", dir=tmp_path).save)
    assert path.read_bytes() == b'{"some": "other tool"}\n'


def test_a_symlink_to_a_session_file_is_read_but_never_written_through(tmp_path):
    """Issue 21: save refuses any symlink at the session path; load still reads through one."""
    real = Context([user("a")], id="real", dir=tmp_path / "store")
    real.save()
    before = real.path.read_bytes()
    link = tmp_path / "link.jsonl"
    link.symlink_to(real.path)
    loaded = Context.load(link)
    assert loaded.messages() == [user("a")]
    loaded.append(user("b", n=1))
    refused(rf"Context.save: {re.escape(str(link))} is a symlink \(to '{re.escape(str(real.path))}'\); refusing to "
            r"write through a symlink this process did not create \(to keep the session elsewhere, give that folder",
            loaded.save)
    assert real.path.read_bytes() == before and link.is_symlink()
    moved = Context(loaded.messages(), id="real", dir=real.path.parent)  # the way the message points to
    moved.save()
    assert Context.load(real.path).messages() == [user("a"), user("b", n=1)]


@pytest.mark.parametrize("target", ["empty", "other", "dangling"])
def test_a_planted_symlink_at_a_session_path_is_refused(tmp_path, target):
    """A `<id>.jsonl` planted as a symlink to a foreign file (empty: the first save writes whole into it)."""
    foreign = tmp_path / "foreign.txt"
    if target != "dangling":
        foreign.write_bytes(b"" if target == "empty" else b"precious\n")
        os.chmod(foreign, 0o600)
    store_dir = tmp_path / "store"
    store_dir.mkdir()
    (store_dir / "victim.jsonl").symlink_to(foreign)
    refused(r"victim.jsonl is a symlink \(to '.*foreign.txt'\); refusing to write through",
            Context([user("x")], id="victim", dir=store_dir).save)
    assert (foreign.read_bytes() == (b"" if target == "empty" else b"precious\n")) if target != "dangling" \
        else not foreign.exists()
    assert (store_dir / "victim.jsonl").is_symlink() and not list(store_dir.glob(".agentctx-*"))


def test_a_symlink_planted_between_the_check_and_the_open_is_refused_by_o_nofollow(tmp_path, monkeypatch):
    """The stat check and the open are two steps: a symlink put in place between them is not followed."""
    foreign = tmp_path / "foreign.txt"
    foreign.write_bytes(b"")
    path = tmp_path / "store" / "race.jsonl"
    check = store._check_regular

    def check_then_plant(where, what, *, creating):
        check(where, what, creating=creating)
        if creating and not where.is_symlink():
            where.symlink_to(foreign)

    monkeypatch.setattr(store, "_check_regular", check_then_plant)
    refused(r"race.jsonl is a symlink \(to '.*foreign.txt'\); refusing to write through",
            Context([user("x")], id="race", dir=path.parent).save)
    assert foreign.read_bytes() == b""


def test_a_saved_file_replaced_by_a_symlink_is_not_rewritten_through_it(tmp_path):
    """The rewrite-whole path (file replaced since the last save) used to resolve the symlink and replace
    its target; now the symlink is refused before anything is written."""
    context = Context([user("a")], id="swap", dir=tmp_path / "store")
    context.save()
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_bytes(context.path.read_bytes())
    context.path.unlink()
    context.path.symlink_to(foreign)
    before = foreign.read_bytes()
    context.append(user("b", n=1))
    refused(r"swap.jsonl is a symlink .*refusing to write through", context.save)
    assert foreign.read_bytes() == before and context.path.is_symlink()


# -- only regular files, refused before anything blocks ---------------------------------------------

IRREGULAR_CHILD = """
import json, os, time
folder = sys.argv[2]
os.mkfifo(os.path.join(folder, "fifo.jsonl"))
os.symlink("/dev/zero", os.path.join(folder, "zero.jsonl"))
os.mkdir(os.path.join(folder, "dir.jsonl"))
os.symlink(os.path.join(folder, "fifo.jsonl"), os.path.join(folder, "to-fifo.jsonl"))
os.symlink(os.path.join(folder, "dir.jsonl"), os.path.join(folder, "to-dir.jsonl"))
os.symlink(os.path.join(folder, "nowhere"), os.path.join(folder, "dangling.jsonl"))
probes = [("load", p) for p in ("fifo.jsonl", "zero.jsonl", "dir.jsonl", "to-fifo.jsonl", "to-dir.jsonl",
                                "/dev/zero", "/dev/null")]
probes += [("save", p) for p in ("fifo", "zero", "dir", "to-fifo", "to-dir", "dangling")]
for what, name in probes:
    print(json.dumps({"probe": what + " " + name, "started": True}), flush=True)
    started = time.monotonic()
    try:
        if what == "load":
            Context.load(os.path.join(folder, name))
            outcome = "loaded"
        else:
            Context([{"type": 2, "content": [{"type": "text", "text": "x"}]}], id=name, dir=folder).save()
            outcome = "saved"
    except SessionFileError as error:
        outcome = str(error)
    print(json.dumps({"probe": what + " " + name, "outcome": outcome, "seconds": time.monotonic() - started}),
          flush=True)
"""


def test_fifos_devices_directories_and_symlinks_to_them_are_refused_at_once(tmp_path):
    out, seconds = run_child(IRREGULAR_CHILD, tmp_path, memory_mb=512, timeout=60)
    results = {r["probe"]: r for r in map(json.loads, out.splitlines()) if "outcome" in r}
    expected = {
        "load fifo.jsonl": "fifo.jsonl is a FIFO (named pipe), not a regular file; refusing to open it",
        "load zero.jsonl": "zero.jsonl is a symlink to /dev/zero, which is a character device, not a regular file",
        "load dir.jsonl": "dir.jsonl is a directory, not a regular file",
        "load to-fifo.jsonl": "which is a FIFO (named pipe), not a regular file",
        "load to-dir.jsonl": "which is a directory, not a regular file",
        "load /dev/zero": "Context.load: /dev/zero is a character device, not a regular file",
        "load /dev/null": "Context.load: /dev/null is a character device, not a regular file",
        "save fifo": "Context.save: ", "save zero": "zero.jsonl is a symlink (to '/dev/zero'); refusing to write",
        "save dir": "dir.jsonl is a directory", "save to-fifo": "to-fifo.jsonl is a symlink (to ",
        "save to-dir": "to-dir.jsonl is a symlink (to ", "save dangling": "dangling.jsonl is a symlink (to ",
    }
    assert set(results) == set(expected), out
    for probe, fragment in expected.items():
        assert fragment in results[probe]["outcome"], (probe, results[probe])
    assert stat.S_ISFIFO(os.lstat(tmp_path / "fifo.jsonl").st_mode)
    assert not (tmp_path / "nowhere").exists() and not list(tmp_path.glob(".agentctx-*"))
    print(f"13 probes in one child: {seconds:.2f} s, slowest probe "
          f"{max(r['seconds'] for r in results.values()) * 1000:.1f} ms")


# -- lines: size, depth, duplicate keys --------------------------------------------------------------

HUGE_LINE_CHILD = """
import os, resource, time
path = sys.argv[2]
started = time.monotonic()
try:
    Context.load(path)
    print("loaded")
except SessionFileError as error:
    print(error)
print(time.monotonic() - started)
# VmHWM: this process's own peak (ru_maxrss keeps the forking parent's peak across exec on Linux)
print(next(int(line.split()[1]) // 1024 for line in open("/proc/self/status") if line.startswith("VmHWM:")))
"""


def test_a_500_mb_line_is_refused_naming_it_without_reading_it_whole(tmp_path):
    path = tmp_path / "huge.jsonl"
    try:
        with open(path, "wb") as handle:  # sparse: 500 MB long, a few KB on disk
            handle.write(orjson.dumps(header("huge")) + b'\n{"type":2,"content":[{"type":"text","text":"')
            handle.truncate(500 * 1024 * 1024)
            handle.seek(0, os.SEEK_END)
            handle.write(b'"}]}\n')
        assert path.stat().st_blocks * 512 < 10 * 1024 * 1024
        out, seconds = run_child(HUGE_LINE_CHILD, path, memory_mb=600, timeout=60)
    finally:
        path.unlink(missing_ok=True)
    error, load_seconds, peak_mb = out.splitlines()
    assert error == (f"Context.load: {path} (context id 'huge') line 2 is longer than {MAX_LINE_BYTES} bytes "
                     f"(MAX_LINE_BYTES); refusing to read it")
    assert int(peak_mb) < 2.5 * MAX_LINE_BYTES / 2**20 + 60  # the bounded read, not the 500 MB line
    print(f"500 MB line refused in {float(load_seconds):.2f} s, child peak RSS {peak_mb} MB, "
          f"child {seconds:.2f} s")


def test_the_line_limit_is_exact_and_save_never_writes_a_line_load_refuses(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "MAX_LINE_BYTES", 1000)
    prefix = b'{"type":2,"content":[{"type":"text","text":"'
    fits = prefix + b"x" * (1000 - len(prefix) - 4) + b'"}]}'
    assert len(fits) == 1000
    path = write_lines(tmp_path / "limit.jsonl", header("limit"), fits)
    assert len(Context.load(path)) == 1
    over = fits[:-4] + b'x"}]}'
    write_lines(path, header("limit"), over, user("after"))
    message = refused(r"line 2 is longer than 1000 bytes \(MAX_LINE_BYTES\); refusing to read it", Context.load, path)
    assert "not valid JSON" not in message
    # A cut last line over the limit is refused too (it is not read to its end either).
    path.write_bytes(orjson.dumps(header("limit")) + b"\n" + over)
    refused(r"line 2 is longer than 1000 bytes", Context.load, path)
    ctx = Context([user("x" * 2000)], id="big-entry", dir=tmp_path)
    refused(r"entry 0 is \d+ bytes as a line, over the 1000-byte limit \(MAX_LINE_BYTES\); nothing written",
            ctx.save)
    assert not ctx.path.exists() or ctx.path.stat().st_size == 0


def nested(depth):
    """A message line whose arrays and objects nest ``depth`` deep (the line's own object is 1)."""
    arguments = "[" * (depth - 3) + "1" + "]" * (depth - 3)
    return (b'{"type":3,"content":[{"type":"toolCall","callId":"c","name":"f","arguments":'
            + arguments.encode() + b"}]}")


def test_deep_nesting_is_refused_naming_the_line(tmp_path):
    path = tmp_path / "deep.jsonl"
    write_lines(path, header("deep"), user("q"), nested(MAX_DEPTH))
    assert len(Context.load(path)) == 2  # exactly the limit loads
    for depth in (MAX_DEPTH + 1, 500, 5000):  # 5000: past orjson's own limit, still "too deep"
        write_lines(path, header("deep"), user("q"), nested(depth))
        message = refused(rf"deep.jsonl \(context id 'deep'\) line 3 nests deeper than {MAX_DEPTH} levels "
                          rf"\(MAX_DEPTH\); refusing to load it", Context.load, path)
        assert "not valid JSON" not in message
    # Brackets inside strings are text, not nesting.
    write_lines(path, header("deep"), user("[" * 10_000 + "{" * 10_000 + '\\"]'))
    assert len(Context.load(path)) == 1
    too_deep = orjson.loads(nested(MAX_DEPTH + 1))
    ctx = Context([too_deep], id="deep-save", dir=tmp_path)
    refused(rf"entry 0 nests deeper than {MAX_DEPTH} levels as a line \(MAX_DEPTH\); nothing written", ctx.save)


def test_duplicate_keys_are_refused_naming_the_line(tmp_path):
    path = tmp_path / "dup.jsonl"
    kept = [user("one"), user("two", n=2)]
    cases = [
        (b'{"type": 2, "type": "context.truncate", "length": 0}', "type"),  # would empty the context
        (b'{"type":"context.remove","index":0,"index":1}', "index"),
        (b'{"type":2,"content":[{"type":"text","text":"a","text":"b"}]}', "text"),  # nested, in a message
    ]
    for line, key in cases:
        write_lines(path, header("dup"), *kept, line)
        message = refused(rf"dup.jsonl \(context id 'dup'\) line 4 has the key '{key}' twice in one object",
                          Context.load, path)
        assert "refusing to load it" in message
    write_lines(path, b'{"type":"context","id":"dup","id":"other","version":1}', *kept)
    refused(r"line 1 has the key 'id' twice", Context.load, path)
    # No false alarm for files other tools wrote (spaces, escapes, floats written differently).
    lines = [header("dup"), *kept, {"type": "note", "x": 1.5e3, "s": "é\u2028"}]
    path.write_text("".join(json.dumps(line, ensure_ascii=True, indent=None) + "\r\n" for line in lines))
    assert Context.load(path).messages() == [*kept, {"type": "note", "x": 1500.0, "s": "é\u2028"}]


def test_refusing_is_not_skipping_the_garbled_lines_still_only_warn(tmp_path):
    path = write_lines(tmp_path / "mixed.jsonl", header("mixed"), user("a"), b"{not json", user("b", n=1))
    with pytest.warns(RuntimeWarning, match=r"line 3 is not valid JSON; skipped"):
        assert len(Context.load(path)) == 2


# -- the lock: two writers ---------------------------------------------------------------------------

WRITER_CHILD = """
import random, warnings
path, who, count = sys.argv[2], sys.argv[3], int(sys.argv[4])
rng = random.Random(who)
warnings.simplefilter("error")  # a rewrite warning would mean a writer saw the other as tampering
ctx = Context.load(path)
sys.stdin.readline()  # both writers start at once
for n in range(count):
    # Sizes from 10 bytes to 30 KB, so that writes span pages and a reader can catch one half done.
    text = f"{who}{n} " + "x" * rng.choice([10, 100, 1000, 5000, 30_000])
    ctx.append({"type": 2, "content": [{"type": "text", "text": text}], "who": who, "n": n})
    ctx.save()
print("done")
"""


def test_two_processes_saving_one_file_keep_every_message_of_both(tmp_path):
    count = 2000
    path = Context(id="shared", dir=tmp_path).save()
    started = time.monotonic()
    writers = [subprocess.Popen([sys.executable, "-c", CHILD_PRELUDE + WRITER_CHILD, "1024", str(path), who,
                                 str(count)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for who in "AB"]
    try:
        time.sleep(0.5)  # both have loaded the file
        for writer in writers:
            writer.stdin.write("go\n")
            writer.stdin.flush()
        results = [writer.communicate(timeout=120) for writer in writers]
    finally:
        for writer in writers:
            writer.kill()
            writer.wait(timeout=30)
    seconds = time.monotonic() - started
    for writer, (out, err) in zip(writers, results):
        assert writer.returncode == 0 and out == "done\n", err
    data = path.read_bytes()
    assert b"\n\n" not in data and data.endswith(b"\n")
    raw_lines = data.splitlines()
    assert all(orjson.loads(line) for line in raw_lines)  # every line whole
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        entries = Context.load(path).messages()
    assert len(entries) == 2 * count
    for who in "AB":
        assert [e["n"] for e in entries if e["who"] == who] == list(range(count))
        assert [e["content"][0]["text"].split(" ")[0] for e in entries if e["who"] == who] == [
            f"{who}{n}" for n in range(count)]
    switches = sum(1 for a, b in zip(entries, entries[1:]) if a["who"] != b["who"])
    print(f"2 writers x {count} saves: {seconds:.2f} s, {switches} switches between writers")


def hold_lock(path):
    fd = os.open(path, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_a_save_waits_for_another_writers_lock(tmp_path):
    ctx = Context([user("a")], id="wait", dir=tmp_path)
    ctx.save()
    fd = hold_lock(ctx.path)
    threading.Timer(0.3, os.close, (fd,)).start()  # the other writer finishes after 0.3 s
    ctx.append(user("b", n=1))
    started = time.monotonic()
    ctx.save()
    assert time.monotonic() - started >= 0.25
    assert Context.load(ctx.path).messages() == [user("a"), user("b", n=1)]


def test_a_save_gives_up_on_a_lock_held_past_the_timeout(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "LOCK_TIMEOUT", 0.2)
    ctx = Context([user("a")], id="stuck", dir=tmp_path)
    ctx.save()
    before = ctx.path.read_bytes()
    fd = hold_lock(ctx.path)
    try:
        ctx.append(user("b", n=1))
        refused(r"stuck.jsonl is locked by another writer for more than 0.2 s \(LOCK_TIMEOUT\); nothing written",
                ctx.save)
        refused(r"is locked by another writer for more than 0.2 s \(LOCK_TIMEOUT\); nothing read",
                Context.load, ctx.path)
        assert ctx.path.read_bytes() == before
    finally:
        os.close(fd)
    ctx.save()  # the unsaved append is still pending and goes out now
    assert Context.load(ctx.path).messages() == [user("a"), user("b", n=1)]


def test_after_another_writer_appended_an_edit_of_saved_entries_is_refused(tmp_path):
    Context([user("base")], id="both", dir=tmp_path).save()
    first, second = Context.load(tmp_path / "both.jsonl"), Context.load(tmp_path / "both.jsonl")
    first.append(user("from first", n=1))
    first.save()
    second.append(user("from second", n=2))
    second.save()  # appends after the first writer's line: both kept
    assert Context.load(second.path).messages() == [user("base"), user("from first", n=1), user("from second", n=2)]
    second.replace(0, user("edited"))
    before = second.path.read_bytes()
    refused(r"also holds lines another writer appended since this context read it.*nothing written",
            second.save)
    assert second.path.read_bytes() == before
    again = Context.load(second.path)
    again.replace(0, user("edited"))
    again.save()
    assert Context.load(second.path).messages()[0] == user("edited")


# -- files replaced or cut short behind our back --------------------------------------------------------

def saved(tmp_path, n=3, context_id="mine"):
    ctx = Context([user(f"m{i}", n=i) for i in range(n)], id=context_id, dir=tmp_path)
    ctx.save()
    return ctx


def assert_whole(ctx):
    """The file holds exactly this context: a header and one line per entry, nothing else."""
    lines = ctx.path.read_bytes().splitlines()
    assert orjson.loads(lines[0]) == header(ctx.id, ctx.name) and len(lines) == len(ctx) + 1
    assert Context.load(ctx.path).messages() == ctx.messages()
    assert not list(ctx.path.parent.glob(".agentctx-*"))


def test_a_file_replaced_by_another_contexts_file_is_refused_by_name(tmp_path):
    ctx = saved(tmp_path)
    other = saved(tmp_path / "elsewhere", context_id="theirs")
    os.replace(other.path, ctx.path)
    before = ctx.path.read_bytes()
    ctx.append(user("more", n=9))
    refused(r"holds context id 'theirs', not this one \(context id 'mine'\)", ctx.save)
    assert ctx.path.read_bytes() == before  # theirs, untouched and never mixed with ours
    assert Context.load(ctx.path).id == "theirs"


def test_a_file_replaced_by_an_older_copy_is_rewritten_whole_with_a_warning(tmp_path):
    ctx = saved(tmp_path)
    older = ctx.path.read_bytes()
    ctx.append(user("m3", n=3))
    ctx.save()
    copy = tmp_path / "restored"
    copy.write_bytes(older)
    os.chmod(copy, 0o600)
    os.replace(copy, ctx.path)  # a new inode, our id, fewer lines
    ctx.append(user("m4", n=4))
    with pytest.warns(RuntimeWarning, match=r"mine.jsonl was replaced \(or removed\) since this context last read "
                                            r"or wrote it; rewriting it whole from this context \(5 entries\)"):
        ctx.save()
    assert_whole(ctx)
    assert stat.S_IMODE(ctx.path.stat().st_mode) == 0o600  # the file's mode is kept
    ctx.append(user("m5", n=5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ctx.save()  # and from there on, plain appends again
    assert Context.load(ctx.path).messages() == ctx.messages()


@pytest.mark.parametrize("keep", [0, 10, "half", "all but one byte"])
def test_a_file_cut_short_is_rewritten_whole_with_a_warning(tmp_path, keep):
    ctx = saved(tmp_path)
    size = ctx.path.stat().st_size
    cut = {"half": size // 2, "all but one byte": size - 1}.get(keep, keep)
    os.truncate(ctx.path, cut)
    with pytest.warns(RuntimeWarning, match=rf"was cut short since this context last read or wrote it "
                                            rf"\({cut} bytes, {size} expected\); rewriting it whole"):
        ctx.save()  # noticed even with nothing new to write
    assert_whole(ctx)


def test_a_file_changed_in_place_is_rewritten_whole_with_a_warning(tmp_path):
    ctx = saved(tmp_path)
    data = bytearray(ctx.path.read_bytes())
    data[-4:-1] = b"XYZ"  # same size, same inode, other last bytes
    with open(ctx.path, "r+b") as handle:
        handle.write(data)
    ctx.append(user("m3", n=3))
    with pytest.warns(RuntimeWarning, match=r"was changed in place since this context last read or wrote it"):
        ctx.save()
    assert_whole(ctx)


def test_a_removed_file_is_written_again_whole_with_a_warning(tmp_path):
    ctx = saved(tmp_path)
    ctx.path.unlink()
    ctx.append(user("m3", n=3))
    # The new file may get the removed one's inode number back (ext4 reuses them at once): then the
    # size tells, and the warning says "cut short".
    with pytest.warns(RuntimeWarning, match=r"(was replaced \(or removed\)|was cut short).*rewriting it whole"):
        ctx.save()
    assert_whole(ctx)


def test_a_loaded_file_replaced_before_the_first_save_is_noticed_too(tmp_path):
    ctx = saved(tmp_path)
    loaded = Context.load(ctx.path)
    other = saved(tmp_path / "x", context_id="theirs")
    shutil.copyfile(other.path, tmp_path / "swap")
    os.replace(tmp_path / "swap", ctx.path)
    loaded.append(user("m3", n=3))
    refused(r"holds context id 'theirs'", loaded.save)


def test_a_first_save_killed_inside_the_header_is_rewritten(tmp_path):
    ctx = Context([user("a")], id="cut-header", dir=tmp_path)
    ctx.path.write_bytes(orjson.dumps(header("cut-header"))[:20])  # the header, cut short
    with pytest.warns(RuntimeWarning, match=r"holds only a header cut short"):
        ctx.save()
    assert_whole(ctx)


# -- many bad lines: reported in bounded memory (issue 21) ---------------------------------------------

BAD_LINES_CHILD = """
import json, time, warnings
from agentctx_widgets.context.store import MAX_REPORTED_LINES
path, via = sys.argv[2], sys.argv[3]
started = time.monotonic()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    if via == "notebook":
        from agentctx_widgets.notebook import load_session
        context, skipped = load_session(path)
        reported, total = list(skipped), skipped.total
    else:
        context = Context.load(path)
        reported = [str(w.message) for w in caught]
        total = sum(w.message.lines for w in caught)
with open("/proc/self/status") as status:  # VmHWM: this image's own peak (ru_maxrss keeps the forked parent's)
    peak_kb = next(int(row.split()[1]) for row in status if row.startswith("VmHWM:"))
print(json.dumps({"entries": len(context), "reported": reported, "total": total,
                  "seconds": time.monotonic() - started, "peak_mb": peak_kb / 1024}))
"""


@pytest.mark.parametrize("via", ["load", "notebook"])
def test_two_hundred_thousand_bad_lines_are_counted_not_kept(tmp_path, via):
    """Before: one warning kept per bad line, 200,000 `x` lines (400 KB) peaked at 114 MB in 7.4 s."""
    path = tmp_path / "bad.jsonl"
    path.write_bytes(orjson.dumps(header("c1", "bad")) + b"\n" + orjson.dumps(user("kept")) + b"\n"
                     + b"x\n" * 200_000)
    out, seconds = run_child(BAD_LINES_CHILD, path, via, memory_mb=1024, timeout=120)
    result = json.loads(out)
    assert result["entries"] == 1 and result["total"] == 200_000
    reported = result["reported"]
    assert len(reported) == store.MAX_REPORTED_LINES + 1 == 21
    assert all(re.search(rf"bad.jsonl line {n + 3} is not valid JSON; skipped$", line)
               for n, line in enumerate(reported[:-1])), reported[:3]
    assert reported[-1].endswith("bad.jsonl: 199980 more bad lines skipped (lines 23–200002; 200000 in all)")
    assert result["peak_mb"] < 80, result  # the child's own peak RSS, interpreter and imports included (≈ 40 MB)
    print(f"200,000 bad lines via {via}: {result['seconds']:.2f} s, peak RSS {result['peak_mb']:.0f} MB")


def test_a_few_bad_lines_are_each_named_and_no_count_is_added(tmp_path):
    path = tmp_path / "few.jsonl"
    path.write_bytes(orjson.dumps(header("c1", "few")) + b"\n" + b"x\n" * store.MAX_REPORTED_LINES)
    _, caught = load_with_warnings(path)
    assert [type(w.message) for w in caught] == [store.SkippedLinesWarning] * store.MAX_REPORTED_LINES
    assert all(w.message.lines == 1 and f"line {n + 2} is not valid JSON" in str(w.message)
               for n, w in enumerate(caught))
    assert all(w.filename == __file__ for w in caught)  # attributed to the caller of Context.load

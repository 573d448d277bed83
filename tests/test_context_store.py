import os
import random
import signal
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentctx_widgets.context import Context

ROOT = Path(__file__).resolve().parents[1]


def user(text, **meta):
    return {"type": 2, "content": [{"type": "text", "text": text}], **meta}


def bot(text):
    return {"type": 3, "content": [{"type": "text", "text": text}]}


def record_changes(ctx):
    changes = []
    ctx.subscribe(changes.append)
    return changes


# -- the in-memory contract --------------------------------------------------------------------

def test_constructor_reading_and_iteration():
    first, second = user("a"), bot("b")
    ctx = Context([first, second], id="c1", name="demo")
    assert len(ctx) == 2 and ctx.id == "c1" and ctx.name == "demo"
    assert ctx.at(0) == first and ctx.at(-1) == second and ctx.at(2) is None and ctx.at(-3) is None
    assert ctx.at(0) is not first  # the context keeps its own copy
    first["content"][0]["text"] = "changed by the caller"
    assert ctx.at(0)["content"][0]["text"] == "a"
    first["content"][0]["text"] = "a"
    listed = ctx.messages()
    listed.append("x")
    assert len(ctx) == 2
    assert list(ctx) == [first, second]


def test_constructor_validates():
    with pytest.raises(TypeError, match=r"context\[1\]\.content"):
        Context([user("a"), {"type": 2}])
    with pytest.raises(TypeError):
        Context(id="")
    with pytest.raises(ValueError, match="dir"):
        Context(flush_on_exit=True)


def test_append_adds_and_merges_with_changes():
    ctx = Context()
    changes = record_changes(ctx)
    stored = ctx.append(user("hi"))
    merged = ctx.append(user("again"))
    assert merged is ctx.at(0) and len(ctx) == 1
    assert merged["content"] == [{"type": "text", "text": "hi\n\nagain"}]
    assert stored["content"] == [{"type": "text", "text": "hi"}]  # a merge stores a new dict
    ctx.append(user("separate"), merge=False)
    assert changes == [{"action": "added", "index": 0, "message": user("hi")},
                       {"action": "updated", "index": 0, "message": merged},
                       {"action": "added", "index": 1, "message": ctx.at(1)}]


def test_append_drops_empty_messages_and_appends_records():
    ctx = Context()
    changes = record_changes(ctx)
    with pytest.warns(UserWarning):
        assert ctx.append(user("")) is None
    ctx.append({"type": "checkpoint"})
    assert len(ctx) == 1 and changes[0]["action"] == "added"


def test_append_error_changes_nothing():
    ctx = Context([user("a")])
    changes = record_changes(ctx)
    with pytest.raises(TypeError, match=r"context\[1\]\.content\[0\]"):
        ctx.append({"type": 2, "content": [7]})
    assert ctx.messages() == [user("a")] and changes == []


def test_extend_validates_everything_first():
    ctx = Context()
    with pytest.raises(TypeError, match=r"context\[1\]"):
        ctx.extend([bot("ok"), {"type": 3}])
    assert len(ctx) == 0
    ctx.extend([user("a"), bot("b"), bot("c")])
    assert [m["content"][0]["text"] for m in ctx] == ["a", "b\n\nc"]
    with pytest.raises(TypeError):
        ctx.extend(user("not a list"))


def test_replace_remove_truncate_clear():
    ctx = Context([user("0"), bot("1"), user("2"), bot("3")])
    changes = record_changes(ctx)
    new = user("two")
    assert ctx.replace(2, new) == new and ctx.at(2) == new and ctx.at(2) is not new
    removed = ctx.remove(1)
    assert removed["content"][0]["text"] == "1"
    assert changes == [{"action": "updated", "index": 2, "message": new},
                       {"action": "removed", "index": 1, "message": removed}]
    changes.clear()
    tail = ctx.truncate(1)
    assert [c["index"] for c in changes] == [2, 1] and all(c["action"] == "removed" for c in changes)
    assert [m["content"][0]["text"] for m in tail] == ["two", "3"]
    assert ctx.truncate(5) == []
    changes.clear()
    ctx.clear()
    assert len(ctx) == 0 and [c["index"] for c in changes] == [0]


def test_bad_indexes_and_values_change_nothing():
    ctx = Context([user("a")])
    with pytest.raises(IndexError):
        ctx.replace(3, user("b"))
    with pytest.raises(TypeError, match=r"context\[0\]\.type"):
        ctx.replace(0, {"type": None, "content": []})
    with pytest.raises(TypeError):
        ctx.remove("0")
    with pytest.raises(IndexError):
        ctx.remove(-2)
    with pytest.raises(ValueError):
        ctx.truncate(-1)
    with pytest.raises(TypeError):
        ctx.truncate(1.5)
    assert ctx.messages() == [user("a")]


def test_observer_errors_warn_and_do_not_undo():
    ctx = Context()
    calls = []

    def broken(change):
        raise RuntimeError("observer bug")

    ctx.subscribe(broken)
    unsubscribe = ctx.subscribe(calls.append)
    with pytest.warns(RuntimeWarning, match="observer bug"):
        ctx.append(user("kept"))
    assert len(ctx) == 1 and len(calls) == 1
    unsubscribe()
    with pytest.warns(RuntimeWarning):
        ctx.append(bot("x"))
    assert len(calls) == 1
    with pytest.raises(TypeError):
        ctx.subscribe("nope")


# -- the session file --------------------------------------------------------------------------

def lines_of(path):
    return [orjson.loads(line) for line in Path(path).read_bytes().splitlines()]


def test_save_names_the_file_and_writes_a_header(tmp_path):
    by_id = Context([user("a")], id="sess-1", name="Demo", dir=tmp_path)
    assert by_id.save() == tmp_path / "sess-1.jsonl"
    assert lines_of(tmp_path / "sess-1.jsonl") == [
        {"type": "context", "id": "sess-1", "name": "Demo", "version": 1}, user("a")]
    assert Context(name="my chat/1", dir=tmp_path).save() == tmp_path / "my%20chat%2F1.jsonl"  # escaped, injective
    generated = Context(dir=tmp_path).save()
    assert generated.parent == tmp_path and generated.suffix == ".jsonl"
    with pytest.raises(ValueError):
        Context().save()


def test_save_after_append_costs_what_was_appended(tmp_path):
    ctx = Context([user(f"m{i}", n=i) for i in range(1000)], id="big", dir=tmp_path)
    path = ctx.save()
    size = path.stat().st_size
    extra = bot("one more")
    ctx.append(extra)
    ctx.save()
    assert path.stat().st_size - size == len(orjson.dumps(extra)) + 1
    size = path.stat().st_size
    ctx.save()  # nothing changed: nothing written
    assert path.stat().st_size == size


def test_edits_to_saved_entries_are_journaled(tmp_path):
    ctx = Context(id="j", dir=tmp_path)
    ctx.extend([user("q"), bot("a"), user("q2", n=1)])
    path = ctx.save()
    before = len(lines_of(path))
    ctx.append(user("merged", n=1))    # merge into saved index 2
    ctx.append(user("merged again", n=1))
    ctx.remove(0)
    ctx.append(bot("new"))
    ctx.save()
    written = lines_of(path)[before:]
    assert [line["type"] for line in written] == ["context.replace", "context.remove", 3]
    assert written[0]["index"] == 2
    loaded = Context.load(path)
    assert loaded.messages() == ctx.messages()
    assert loaded.id == "j"


def test_user_records_that_look_like_control_lines_round_trip(tmp_path):
    ctx = Context([{"type": "context.truncate", "length": 0}, {"type": "context", "id": "x"}, user("a")],
                  id="r", dir=tmp_path)
    ctx.save()
    assert Context.load(ctx.path).messages() == ctx.messages()


def test_a_fresh_context_resets_an_existing_file(tmp_path):
    Context([user("old")], id="same", dir=tmp_path).save()
    Context([bot("new")], id="same", dir=tmp_path).save()
    assert Context.load(tmp_path / "same.jsonl").messages() == [bot("new")]


def test_a_cut_last_line_loads_with_a_warning_and_later_saves_still_load(tmp_path):
    ctx = Context([user("a"), bot("b")], id="cut", dir=tmp_path)
    path = ctx.save()
    with open(path, "ab") as handle:
        handle.write(b'{"type": 2, "content": [{"type": "te')  # a save killed mid-write
    with pytest.warns(RuntimeWarning, match=r"line 4 was cut short"):
        loaded = Context.load(path)
    assert loaded.messages() == [user("a"), bot("b")]
    loaded.append(user("c"))
    loaded.save()
    with pytest.warns(RuntimeWarning, match=r"line 4 is not valid JSON"):
        again = Context.load(path)
    assert again.messages() == [user("a"), bot("b"), user("c")]


def test_flush_on_exit_saves_in_a_child_process(tmp_path):
    script = CHILD_PRELUDE + f"""
ctx = Context(id="atexit", dir={str(tmp_path)!r}, flush_on_exit=True)
ctx.append({{"type": 2, "content": [{{"type": "text", "text": "bye"}}]}})
"""
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    assert Context.load(tmp_path / "atexit.jsonl").messages() == [user("bye")]


ops = st.lists(st.one_of(
    st.tuples(st.just("append"), st.sampled_from([1, 2, 3, 4]), st.text(max_size=8), st.booleans()),
    st.tuples(st.just("record")),
    st.tuples(st.just("replace"), st.integers(0, 50), st.text(max_size=8)),
    st.tuples(st.just("remove"), st.integers(0, 50)),
    st.tuples(st.just("truncate"), st.integers(0, 50)),
    st.tuples(st.just("save")),
), max_size=30)


@settings(max_examples=60, deadline=None)
@given(ops)
def test_session_round_trip(operations):
    with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ctx = Context(id="prop", dir=folder)
        for op in operations:
            if op[0] == "append":
                ctx.append({"type": op[1], "content": [{"type": "text", "text": op[2]}]}, merge=op[3])
            elif op[0] == "record":
                ctx.append({"type": "context.note", "n": len(ctx)})
            elif op[0] == "replace" and len(ctx):
                ctx.replace(op[1] % len(ctx), user(op[2] or "r"))
            elif op[0] == "remove" and len(ctx):
                ctx.remove(op[1] % len(ctx))
            elif op[0] == "truncate":
                ctx.truncate(op[1] % (len(ctx) + 1))
            elif op[0] == "save":
                ctx.save()
                assert Context.load(ctx.path).messages() == ctx.messages()
        ctx.save()
        loaded = Context.load(ctx.path)
        assert loaded.messages() == ctx.messages()
        loaded.append(bot("after load"))
        loaded.save()
        assert Context.load(ctx.path).messages() == loaded.messages()


# -- crash safety ------------------------------------------------------------------------------

# The child imports agentctx_widgets.context without running the top-level package __init__ (which
# pulls in the Jupyter side), to keep each of the many child starts light.
CHILD_PRELUDE = f"""
import sys, types
package = types.ModuleType("agentctx_widgets")
package.__path__ = [{str(ROOT / "agentctx_widgets")!r}]
sys.modules["agentctx_widgets"] = package
from agentctx_widgets.context import Context
"""

CRASH_CHILD = CHILD_PRELUDE + """
import random
folder, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)
ctx = Context(id="crash", dir=folder)
i = 0
while True:
    text = f"m{i} " + "x" * rng.randrange(10, 200_000)
    ctx.append({"type": 2 + i % 2, "content": [{"type": "text", "text": text}], "n": i}, merge=False)
    if i % 5 == 4:
        ctx.replace(i - 2, {"type": 2, "content": [{"type": "text", "text": f"r{i - 2}"}], "n": i - 2})
    ctx.save()
    i += 1
    print(i, flush=True)
"""


def expected_after(iterations):
    """Entry n's two allowed texts: its own, or the replacement written by a later iteration."""
    return [(f"m{n} ", f"r{n}") for n in range(iterations)]


def test_saves_survive_sigkill_at_random_points(tmp_path):
    runs = int(os.environ.get("AGENTCTX_CRASH_RUNS", "20"))
    rng = random.Random(1234)
    cut_lines = 0
    for run in range(runs):
        folder = tmp_path / f"run{run}"
        child = subprocess.Popen([sys.executable, "-c", CRASH_CHILD, str(folder), str(run)],
                                 stdout=subprocess.PIPE, text=True)
        target = rng.randrange(1, 12)
        completed = 0
        try:
            for line in child.stdout:
                completed = int(line)
                if completed >= target:
                    break
            child.send_signal(signal.SIGKILL)
        finally:
            child.kill()
            child.wait(timeout=30)
            child.stdout.close()
        assert completed >= target, f"run {run}: the child stopped early"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loaded = Context.load(folder / "crash.jsonl")
        cut_lines += sum("cut short" in str(w.message) for w in caught)
        entries = loaded.messages()
        assert len(entries) >= completed, f"run {run}: {len(entries)} entries, {completed} saves completed"
        for n, (original, replaced) in enumerate(expected_after(len(entries))):
            text = entries[n]["content"][0]["text"]
            assert entries[n]["n"] == n and (text.startswith(original) or text == replaced), (run, n)
    print(f"{runs} kills, {cut_lines} files with a cut last line")


def test_append_neither_edits_the_callers_dict_nor_an_entry_read_earlier():
    """A merge stores a new dict: the message passed in and the entry read before stay as they were."""
    incoming = {"type": 2, "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    ctx = Context([user("x")])
    earlier, listed = ctx.at(0), ctx.messages()
    ctx.append(incoming)  # folds its own blocks, then merges into the last user message
    assert ctx.at(0)["content"] == [{"type": "text", "text": "x\n\na\n\nb"}]
    assert incoming["content"] == [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    assert earlier["content"] == [{"type": "text", "text": "x"}] and listed[0] is earlier


def test_a_failed_append_leaves_the_last_entry_the_same_object():
    ctx = Context([user("x")])
    last = ctx.at(-1)
    with pytest.raises(TypeError):
        ctx.append({"type": 2, "content": "not a list"})
    assert ctx.at(-1) is last and len(ctx) == 1

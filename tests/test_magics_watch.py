"""``%agentctx watch PATH`` in a real IPython shell, stopped by a real SIGINT (as the stop button sends)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from agentctx_widgets import Context, assistant_message, user_message

SCRIPT = textwrap.dedent("""
    import os, signal, sys, threading, time
    from IPython.core.interactiveshell import InteractiveShell
    from agentctx_widgets.widget import watch as watch_module

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "agentctx_widgets")
    started = []
    original = watch_module.Watcher.__init__

    def record(self, *args, **kwargs):
        original(self, *args, **kwargs)
        started.append(self)

    watch_module.Watcher.__init__ = record

    def interrupt_once_read():
        while not started or len(started[0].context) < 2:
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt_once_read, daemon=True).start()
    shell.run_line_magic("agentctx", sys.argv[1])
    print("alive", started[0].alive)
""")


def run(line: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SCRIPT, line], capture_output=True, text=True, timeout=60)


def test_watch_follows_the_file_until_ctrl_c_and_says_what_it_read(tmp_path):
    path = Context([user_message("Is it running?"), assistant_message([{"type": "text", "text": "Yes."}])],
                   id="agent", dir=tmp_path).save()
    assert path.name == "agent.jsonl"
    done = run(f"watch {path} --interval 0.05")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # the file's header line and one line per message
    assert lines[-2] == "stopped watching agent.jsonl: 2 messages, 3 lines read, 0 restarts, 0 bad lines"
    assert lines[-1] == "alive False"  # the thread stopped with the magic


def test_watch_rejects_a_bad_interval_and_a_directory(tmp_path):
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "agentctx_widgets")
    with capture_output() as out:
        shell.run_line_magic("agentctx", f"watch {tmp_path}")
        shell.run_line_magic("agentctx", f"watch {tmp_path}/x.jsonl --interval -1")
    first, second = out.stderr.splitlines()
    assert first == f"agentctx: watch: '{tmp_path}' is a directory; give the session file (.jsonl)"
    assert second.startswith("agentctx: watch: argument --interval: interval must be a positive number of seconds")

"""``%agentctx watch PATH`` says so when its watcher dies on its own (issue 21: a watcher that died said
nothing; ``Watcher.error`` is set by widget/watch.py, the magic's summary now names it), in a real IPython
shell. A thread that dies ends ``watch(block=True)`` by itself: no SIGINT is needed here."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from agentctx_widgets import Context, assistant_message, user_message

SCRIPT = textwrap.dedent("""
    import sys
    from IPython.core.interactiveshell import InteractiveShell
    from agentctx_widgets.context.follow import SessionFollower

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "agentctx_widgets")
    real_poll = SessionFollower.poll

    def poll_then_die(self):
        if self.lines_read < 3:  # the header and both messages first, so the summary has something to count
            return real_poll(self)
        raise SystemExit("the thread was told to exit")  # not an Exception: the poll's own guard lets it through

    SessionFollower.poll = poll_then_die
    shell.run_line_magic("agentctx", sys.argv[1])
""")


def test_watch_names_the_error_of_a_watcher_that_died(tmp_path):
    path = Context([user_message("Is it running?"), assistant_message([{"type": "text", "text": "Yes."}])],
                   id="agent", dir=tmp_path).save()
    done = subprocess.run([sys.executable, "-c", SCRIPT, f"watch {path} --interval 0.05"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-2] == "stopped watching agent.jsonl: 2 messages, 3 lines read, 0 restarts, 0 bad lines"
    assert lines[-1] == "watcher stopped: SystemExit: the thread was told to exit"

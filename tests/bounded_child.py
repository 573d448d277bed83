"""Run a hostile case in a child Python whose address space is capped, with a timeout: a failure ends the
child (``MemoryError``, a kill), never the shared machine.

The child's code calls ``limit_memory(extra_mb)`` after its imports and setup: from there on it may map
at most ``extra_mb`` MB more than it already has (``RLIMIT_AS``), so a reader that gathers a whole
hostile input fails there instead of succeeding slowly.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

PRELUDE = '''
import resource

def limit_memory(extra_mb):
    with open("/proc/self/status") as status:
        size_kb = next(int(line.split()[1]) for line in status if line.startswith("VmSize:"))
    cap = size_kb * 1024 + extra_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
'''


def run_child(code: str, *, timeout: float = 120, cwd: str | None = None) -> subprocess.CompletedProcess:
    """Run ``code`` (dedented) in a fresh interpreter; returns the finished process (text output)."""
    return subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout, cwd=cwd, check=False)

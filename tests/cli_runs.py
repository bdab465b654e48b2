"""`python -m fgraph ...` in a subprocess, each command run once per test session.

The docs quote what examples print (tests/test_docs.py) and the command line
must stay quiet without a terminal (tests/test_cli.py); both read the same
runs. The subprocess starts in the repository root, so it imports this
checkout's fgraph, and its stdout and stderr are pipes, not a terminal.
"""
from __future__ import annotations

import atexit
import functools
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def fgraph_command(command: str) -> subprocess.CompletedProcess:
    """Run ``command`` (``"fgraph run <example> [--quick]"``) with ``--out`` a temporary directory.

    Returns the completed process (text ``stdout`` and ``stderr``); the
    caller checks ``returncode``.
    """
    words = command.split()
    if words[:2] != ["fgraph", "run"]:
        raise ValueError(f"expected 'fgraph run <example> [...]', got {command!r}")
    out = tempfile.mkdtemp(prefix="fgraph-docs-")
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    return subprocess.run(
        [sys.executable, "-m", "fgraph", *words[1:], "--out", out],
        cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600,
    )

"""The first run raises glibc's mmap threshold (:mod:`fgraph.memory`): the large arrays of later sweeps reuse
freed memory instead of faulting in new pages.

Counted, not timed: the minor page faults of a loop that makes four 4 MB arrays and drops them, ten times (as the
sweeps over a plate of 10^5 × 5 do), in a fresh process, after a first ``fg.infer`` with the threshold raised and with it
left alone (``FGRAPH_RAISE_MMAP_THRESHOLD=0``).
"""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
glibc = pytest.mark.skipif(not (hasattr(os, "confstr") and str(os.confstr("CS_GNU_LIBC_VERSION") or "").startswith(
    "glibc")), reason="the thresholds are glibc's")

SCRIPT = textwrap.dedent("""
    import resource
    import numpy as np
    import fgraph as fg
    from fgraph.nodes import Normal
    with fg.Model() as model:
        x = Normal("x", mean=0.0, var=1.0)
        Normal("y", mean=x, var=1.0, observed=0.5)
    fg.infer(model)  # the first run
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        arrays = [np.ones(500_000) for _ in range(4)]  # 4 MB each, every page written
        del arrays
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
""")


def _faults(raise_threshold: bool) -> int:
    environment = dict(os.environ, PYTHONPATH=str(ROOT), FGRAPH_RAISE_MMAP_THRESHOLD="1" if raise_threshold else "0")
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=environment, cwd=ROOT,
                          check=True)
    return int(done.stdout.strip())


@glibc
def test_after_the_first_run_large_arrays_reuse_freed_memory():
    pages = 4 * 4_000_000 // 4096  # about 3,900 pages per round of four arrays
    raised, left = _faults(True), _faults(False)
    assert left >= 5 * pages  # the freed arrays returned to the system, and faulted in again, round after round
    assert raised <= 2 * pages  # the first round's pages, then the same memory again

"""Large arrays reused rather than faulted in again: glibc's mmap threshold raised once, at the first run.

glibc's ``malloc`` serves a block of 128 KiB or more with a fresh mapping from the system and unmaps it
when it is freed; it raises that threshold (to at most 32 MiB) only once a larger block has been freed, and
it returns the memory freed at the top of its heap beyond twice the threshold. A sweep over a plate of
10^5 × 5 makes a dozen arrays of 4 MB and drops those of the sweep before: until something has raised the
threshold above 4 MB, every one of them is new memory, and the first write to each of its pages is a page
fault. Measured (2026-11-28, a GMM of N = 10^5, K = 5, D = 2, 100 sweeps, in a fresh process): 1.30 s, of
which about half are those faults; 0.66 s once the threshold is raised (scikit-learn's
``BayesianGaussianMixture`` on the same data: 4.15 s and 3.06 s).

:func:`raise_mmap_threshold` allocates and frees one block of 30 MiB without writing to it (no page is
touched), as a program's first large array does: arrays up to that size are then reused from the heap, and
up to twice that much freed memory stays with the process instead of going back to the system. fgraph calls
it once, at the first run of a plan (:func:`fgraph.run`); it does nothing on other C libraries, and
``FGRAPH_RAISE_MMAP_THRESHOLD=0`` in the environment turns it off.
"""
from __future__ import annotations

import os

import numpy as np

#: The block allocated and freed once: under glibc's largest dynamic threshold (32 MiB on 64-bit systems).
BLOCK_BYTES = 30 * 2**20

#: Whether :func:`raise_mmap_threshold` has been called in this process (read by every run: a plain global).
prepared = False


def raise_mmap_threshold() -> bool:
    """Raise glibc's mmap threshold once per process (see the module docstring); whether it was done now."""
    global prepared
    if prepared:
        return False
    prepared = True
    if os.environ.get("FGRAPH_RAISE_MMAP_THRESHOLD", "1") == "0" or not _glibc():
        return False
    block = np.empty(BLOCK_BYTES // 8)  # malloc'ed, mapped, never written
    del block  # freed: glibc raises its thresholds to this block's size
    return True


def _glibc() -> bool:
    try:
        return os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")
    except (ValueError, OSError, AttributeError):
        return False

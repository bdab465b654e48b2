"""Worker processes for the independent parts of one computation: blocks of restarts of a fit, blocks of
restarts of a predictive.

The parts run in joblib's worker processes (loky: fresh interpreters, kept alive between calls, so a
second call starts at once). ``n_jobs`` follows scikit-learn: ``None`` is this process, −1 one worker
per CPU.
"""
from __future__ import annotations

import numbers
import os

import numpy as np

from fgraph.errors import ModelError


def worker_count(n_jobs, parts: int, owner: str) -> int:
    """Workers for ``n_jobs`` over ``parts`` independent parts: at most one per part, 1 for ``None``."""
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0 or n_jobs < -1:
        raise ModelError(f"{owner}: n_jobs must be None, -1 or an integer >= 1, got {n_jobs!r}")
    jobs = (os.cpu_count() or 1) if n_jobs == -1 else int(n_jobs)
    return max(1, min(jobs, parts))


def blocks(count: int, jobs: int) -> list:
    """``range(count)`` as ``jobs`` blocks of consecutive indices, as equal as they come."""
    return np.array_split(np.arange(count), jobs)


def run_in_workers(function, calls: list) -> list:
    """``[function(*arguments) for arguments in calls]``, one worker process per call."""
    from joblib import Parallel, delayed  # not at import: workers are an option

    return Parallel(n_jobs=len(calls))(delayed(function)(*arguments) for arguments in calls)

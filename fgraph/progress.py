"""Progress bars for long runs: the sweeps of ``fg.infer(..., progress=True)``, the observations of a stream.

A tqdm bar when tqdm is installed (the ``examples`` extra), else a line on
stderr every 10% of the total, so that asking for progress never fails; a
disabled bar does nothing at all.
"""
from __future__ import annotations

import math
import sys


class ProgressBar:
    """``total`` steps of ``unit``, labelled ``description``; ``update`` after each, ``close`` at the end.

    Usable as a context manager (closed on exit, also on an interrupt).
    """

    def __init__(self, total: int, description: str, unit: str, enabled: bool = True):
        self.total, self.description, self.unit, self.enabled = total, description, unit, enabled
        self.done = 0
        self.bar = None
        self.next_report = 0.1
        if enabled:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                return
            self.bar = tqdm(total=total, desc=description, unit=unit)

    def update(self, count: int = 1, **status) -> None:
        """Advance by ``count`` steps; ``status`` (e.g. ``free_energy="3.21"``) is shown beside the bar."""
        if not self.enabled:
            return
        self.done += count
        if self.bar is not None:
            if status:
                self.bar.set_postfix(status, refresh=False)
            self.bar.update(count)
        elif self.done >= self.next_report * self.total:
            shown = "".join(f", {key}={value}" for key, value in status.items())
            print(f"{self.description}: {self.done}/{self.total} {self.unit}{shown}", file=sys.stderr)
            self.next_report = math.floor(self.done / self.total * 10 + 1) / 10

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> "ProgressBar":
        return self

    def __exit__(self, *exception) -> None:
        self.close()

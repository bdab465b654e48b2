"""Runnable examples, shipped with the package so that ``fgraph run <name>`` works anywhere.

Each module in this package is one example. It defines

* ``DESCRIPTION``: one line saying what it shows;
* ``run(quick: bool, out: pathlib.Path, progress: bool = False) -> dict``:
  runs the example, prints what it finds, writes its files (at least
  ``summary.json``) into ``out`` and returns the summary (JSON-serialisable).
  With ``progress=True`` its long steps show progress bars on stderr
  (:func:`progress_bar`); ``fgraph run`` asks for them when stderr is a
  terminal, so runs under CI or into a pipe print only their results.

An example's name is its module name with underscores written as hyphens
(``model_comparison.py`` runs as ``fgraph run model-comparison``; the
underscore spelling is accepted too).

``quick=True`` must finish in seconds (smaller data, fewer iterations); it is
what the tests and ``fgraph run <name> --quick`` use. Bundled data sets live
in ``fgraph/examples/data/`` with their provenance. Examples are applications:
unlike the engine, they import concrete nodes from ``nodes``.
"""
from __future__ import annotations

import importlib
import json
import pkgutil
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["available", "load", "progress_bar", "pyplot", "write_summary"]


def available() -> dict:
    """Map example name -> one-line description, in alphabetical order."""
    found = {}
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if module_info.name.startswith("_") or module_info.ispkg:
            continue
        name = module_info.name.replace("_", "-")
        try:
            module = load(module_info.name)
        except Exception as error:  # a broken example must not hide the others from `fgraph list`
            found[name] = f"(cannot be imported: {type(error).__name__}: {error})"
            continue
        found[name] = getattr(module, "DESCRIPTION", "").strip()
    return found


def load(name: str) -> ModuleType:
    """Import the example ``name`` (hyphens or underscores); ``KeyError`` listing the examples if it does not exist."""
    names = [m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_") and not m.ispkg]
    module_name = name.replace("-", "_")
    if module_name not in names:
        listed = sorted(n.replace("_", "-") for n in names)
        raise KeyError(f"unknown example {name!r}; available: {', '.join(listed) or '(none)'}")
    module = importlib.import_module(f"{__name__}.{module_name}")
    if not callable(getattr(module, "run", None)):
        raise KeyError(f"example module {name!r} has no run(quick, out) function")
    return module


def write_summary(out: Path, summary: dict) -> Path:
    """Write ``summary`` as ``out/summary.json`` (numpy scalars and arrays converted) and return the path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "summary.json"
    path.write_text(json.dumps(summary, indent=2, default=_to_json) + "\n")
    return path


def progress_bar(total: int, description: str, enabled: bool):
    """A progress bar on stderr over ``total`` steps, or a stand-in that shows nothing.

    The bar is shown only when ``enabled`` and tqdm is installed (the
    ``examples`` extra); without tqdm the run is simply silent. It is cleared
    when closed, so what the example prints stays as it is. Use it as a
    context manager and call ``update()`` once per step; ``set_postfix_str``
    adds a short note after the bar.
    """
    if enabled:
        try:
            from tqdm.auto import tqdm
        except ImportError:
            pass
        else:
            return tqdm(total=total, desc=description, leave=False, file=sys.stderr)
    return _NoProgress()


class _NoProgress:
    """What :func:`progress_bar` returns when nothing is shown: the bar's methods, doing nothing."""

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        return False

    def update(self, steps: int = 1) -> None:
        pass

    def set_postfix_str(self, text: str) -> None:
        pass

    def close(self) -> None:
        pass


def pyplot():
    """matplotlib's pyplot on the non-interactive Agg backend (figures go to files), or None without matplotlib
    (the ``examples`` extra): an example then writes its numbers and no figures."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def _to_json(value):
    """JSON fallback for numpy values (``tolist`` covers both scalars and arrays)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot write {type(value).__name__} to JSON")

"""Runnable examples, shipped with the package so that ``fgraph run <name>`` works anywhere.

Each module in this package is one example. It defines

* ``DESCRIPTION``: one line saying what it shows;
* ``run(quick: bool, out: pathlib.Path) -> dict``: runs the example, prints
  what it finds, writes its files (at least ``summary.json``) into ``out``
  and returns the summary (JSON-serialisable).

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
from pathlib import Path
from types import ModuleType

__all__ = ["available", "load", "write_summary"]


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


def _to_json(value):
    """JSON fallback for numpy values (``tolist`` covers both scalars and arrays)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot write {type(value).__name__} to JSON")

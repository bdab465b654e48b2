"""Runnable examples, shipped with the package so that ``fgraph run <name>`` works anywhere.

The package holds the small teaching examples; other distributions add theirs through the entry-point group
``fgraph.examples`` (:data:`ENTRY_POINT_GROUP`) — the repository's ``examples/`` registers the paper
reproductions that way. Each module in this package is one example. It defines

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

* optionally ``add_arguments(parser)``: adds the example's own options to the
  argparse ``parser`` of ``fgraph run <name>`` (which has ``--quick``,
  ``--out``, ``--progress`` already); their values reach ``run`` as keywords.
  A value the run cannot use is refused there, before the run starts: a
  ``type`` that raises ``argparse.ArgumentTypeError`` (:func:`whole_number`, :func:`positive_number`,
  :func:`worker_processes`), or :class:`Distinct` for values that
  must not repeat. Checks that need several options together go at the start of
  ``run`` and raise :class:`OptionError`. Either way ``fgraph run`` says the
  mistake in one line, exit status 2.

``quick=True`` must finish in seconds (smaller data, fewer iterations); it is
what the tests and ``fgraph run <name> --quick`` use. Bundled data sets live
in ``fgraph/examples/data/`` with their provenance. Examples are applications:
unlike the engine, they import concrete nodes from ``nodes``.
"""
from __future__ import annotations

import argparse
import importlib
import json
import math
import pkgutil
import sys
from pathlib import Path
from types import ModuleType

from fgraph.errors import FgraphError
from fgraph.store import write_json

__all__ = ["ENTRY_POINT_GROUP", "available", "load", "registered", "progress_bar", "pyplot", "write_summary",
           "OptionError", "whole_number", "positive_number", "worker_processes", "Distinct", "to_json",
           "missing_package", "say_figures_skipped", "FIGURES_SKIPPED", "OPTIONAL_PACKAGES"]


class OptionError(FgraphError, ValueError):
    """An option of an example has a value its run cannot use (``fgraph run`` says it in one line, exit status 2)."""


def whole_number(least: int):
    """An argparse ``type``: a whole number ``>= least``, refused with a message naming the bound otherwise."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < least:
            raise argparse.ArgumentTypeError(f"must be a whole number >= {least}, got {text!r}")
        return value

    return parse


def positive_number(text: str) -> float:
    """An argparse ``type``: a finite number > 0, refused with a message otherwise."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def worker_processes(text: str) -> int:
    """An argparse ``type`` for ``--jobs``: -1 (one worker process per CPU) or a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value != -1 and value < 1:
        raise argparse.ArgumentTypeError(f"must be -1 (one worker process per CPU) or a whole number >= 1, got "
                                         f"{text!r}")
    return value


class Distinct(argparse.Action):
    """An argparse action storing an option's values, a value given twice refused: two equal sizes or SNRs would be
    run twice and counted twice. With ``nargs`` the values of one use are kept (the last use, as argparse's
    ``store``); without, every use is appended (as ``append``)."""

    def __call__(self, parser, namespace, values, option_string=None):
        if isinstance(values, list):
            kept, new = [], values
        else:
            kept, new = list(getattr(namespace, self.dest, None) or []), [values]
        for value in new:
            if value in kept:
                shown = format(value, "g") if isinstance(value, float) else value
                raise argparse.ArgumentError(self, f"{shown} is given twice; give each value once")
            kept.append(value)
        setattr(namespace, self.dest, kept)


#: The entry-point group through which other distributions add examples to ``fgraph run``: each entry point is
#: ``name = "package.module"`` (the paper reproductions of the repository's ``examples/`` register theirs).
ENTRY_POINT_GROUP = "fgraph.examples"
#: What ``fgraph list`` says of the paper reproductions when they are not installed.
EXPERIMENTS_HINT = ("The paper reproductions (CMN, the TVB studies, likelihood approximations, online learning, "
                    "VAD) are in the repository's examples/: from a checkout, pip install -e examples")


def _builtin() -> dict:
    """{name: module path} of the examples in this package."""
    return {info.name.replace("_", "-"): f"{__name__}.{info.name}" for info in pkgutil.iter_modules(__path__)
            if not info.name.startswith("_") and not info.ispkg}


def registered() -> dict:
    """{name: module path} of the examples other installed distributions register (:data:`ENTRY_POINT_GROUP`)."""
    from importlib.metadata import entry_points

    return {entry.name.replace("_", "-"): entry.value for entry in entry_points(group=ENTRY_POINT_GROUP)}


def _all() -> dict:
    return {**registered(), **_builtin()}  # a built-in example keeps its name


def available() -> dict:
    """Map example name -> one-line description, in alphabetical order (the built-in examples and those other
    installed distributions register)."""
    found = {}
    for name in sorted(_all()):
        try:
            module = load(name)
        except Exception as error:  # a broken example must not hide the others from `fgraph list`
            missing = missing_package(error, "it") if isinstance(error, ImportError) else None
            found[name] = f"({missing})" if missing else f"(cannot be imported: {type(error).__name__}: {error})"
            continue
        found[name] = getattr(module, "DESCRIPTION", "").strip()
    return found


def load(name: str) -> ModuleType:
    """Import the example ``name`` (hyphens or underscores); ``KeyError`` listing the examples if it does not exist."""
    examples = _all()
    key = name.replace("_", "-")
    if key not in examples:
        listed = ", ".join(sorted(examples)) or "(none)"
        hint = "" if registered() else f". {EXPERIMENTS_HINT}"
        raise KeyError(f"unknown example {name!r}; available: {listed}{hint}")
    module = importlib.import_module(examples[key])
    if not callable(getattr(module, "run", None)):
        raise KeyError(f"example module {name!r} has no run(quick, out) function")
    return module


def write_summary(out: Path, summary: dict) -> Path:
    """Write ``summary`` as ``out/summary.json`` (numpy scalars and arrays converted) and return the path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "summary.json"
    write_json(path, json.loads(json.dumps(summary, default=to_json)))  # atomically: a whole summary or none
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
    (the ``examples`` extra): an example then writes its numbers and no figures, and the run says so once
    (:func:`say_figures_skipped`)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        say_figures_skipped()
        return None
    return plt


#: what a run without matplotlib says, once, instead of drawing its figures
FIGURES_SKIPPED = ('matplotlib is not installed: the figures are skipped (pip install "fgraph-mp[examples]" to '
                   'draw them)')
_figures_skipped_said = False


def say_figures_skipped() -> None:
    """Print :data:`FIGURES_SKIPPED` on stdout, the first time in this process: an example without matplotlib
    writes its numbers, and says that its figures are missing and how to get them, rather than leaving them out
    silently."""
    global _figures_skipped_said
    if not _figures_skipped_said:
        _figures_skipped_said = True
        print(FIGURES_SKIPPED)


#: import name -> (what pip installs, the extra of fgraph-mp that brings it, or None) for every optional package an
#: example or a model of the library may import
OPTIONAL_PACKAGES = {
    "sklearn": ("scikit-learn", "examples"),
    "matplotlib": ("matplotlib", "examples"),
    "tqdm": ("tqdm", "examples"),
    "numba": ("numba", "fast"),
    "dask": ("dask[distributed]", "distributed"),
    "distributed": ("dask[distributed]", "distributed"),
    "graphviz": ("graphviz", "draw"),
    "bayespy": ("bayespy", "test"),
    "hmmlearn": ("hmmlearn", "benchmarks"),
    "webrtcvad": ("webrtcvad-wheels", None),
    "jax": ("jax", None),
    "optax": ("optax", None),
    "numpyro": ("numpyro", None),
    "arviz": ("arviz", "arviz"),
}


def missing_package(error: BaseException, needed_by: str) -> str | None:
    """The line saying which optional package ``needed_by`` (``"example 'vad'"``) lacks and how to install it, if
    ``error`` (an ImportError, or one raised while handling it) is a package outside fgraph that is not
    installed; None otherwise (a module of fgraph itself that is missing is a bug, not a missing extra)."""
    seen = set()
    while error is not None and id(error) not in seen:  # the error, then what it was raised from or while handling
        seen.add(id(error))
        if isinstance(error, ModuleNotFoundError) and error.name:
            top = error.name.split(".")[0]
            if top in ("fgraph", "fgraph_experiments"):
                return None
            package, extra = OPTIONAL_PACKAGES.get(top, (top, None))
            how = f'pip install "fgraph-mp[{extra}]" (or pip install {package})' if extra else f"pip install {package}"
            lab = " or pip install -e examples from a checkout" if needed_by.startswith("example") and extra is None \
                else ""
            return f"{needed_by} needs {package} (the module {top!r}), which is not installed: {how}{lab}"
        error = error.__cause__ or error.__context__
    return None


def to_json(value):
    """JSON fallback for numpy values (``tolist`` covers both scalars and arrays)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot write {type(value).__name__} to JSON")

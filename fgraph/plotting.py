"""Figures of results: a run's free energy per iteration and a classifier's reliability diagram.

* :func:`plot_free_energy` (``result.plot_free_energy()``) — the Bethe free energy F after each iteration, one line
  per copy in a model with copies. Under VMP F never increases and −F bounds the log evidence from below; for exact
  BP (sum-product on a tree, run with ``free_energy=True``) a dashed line marks −log p(data), which F equals to
  rounding. ``relative=True`` plots F − min F on a log scale instead, which shows how fast a run settles: the
  iteration that reaches the minimum is left out (its 0 has no logarithm). A dotted vertical line marks how the
  run ended: converged (green), not converged (red), interrupted (grey); a run not judged (``iterations=`` without
  ``tol=``) has none.
* :func:`plot_reliability_diagram` (``ReliabilityDiagram.plot()``, :mod:`fgraph.metrics`) — per confidence bin,
  the accuracy (bars, and points at the bin's mean confidence) against the diagonal of perfect calibration, each
  bin's number of predictions written in its bar, and the expected calibration error in the title.

matplotlib is optional (the ``plot`` extra) and imported only when a figure is drawn. Each function draws on
the Axes it is given, or on a new figure (``matplotlib.pyplot.subplots``, so it shows in a notebook; close it with
``plt.close(ax.figure)`` in a loop), returns the Axes, and with ``path=`` also writes the whole figure there,
atomically, in the format the suffix names (:func:`fgraph.store.write_figure`).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from fgraph.errors import ModelError

__all__ = ["pyplot", "plot_free_energy", "plot_reliability_diagram"]


def pyplot():
    """matplotlib's pyplot, or an ImportError naming the extra that installs it (every figure of the library is
    drawn through it)."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("drawing a figure needs matplotlib, which is not installed; install the plot extra: "
                          "pip install 'fgraph-mp[plot]' (or pip install matplotlib)") from None
    return plt


def _axes_and_path(ax, path):
    """The Axes to draw on (a new figure's when ``ax`` is None) and the checked ``path`` (or None)."""
    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 3.6), layout="constrained")
    if path is not None:
        path = Path(path)
        formats = ax.figure.canvas.get_supported_filetypes()
        if path.suffix.lstrip(".").lower() not in formats:
            raise ModelError(f"path={str(path)!r}: a figure is written in the format its suffix names, one of "
                             f"{', '.join('.' + name for name in sorted(formats))}")
    return ax, path


def _written(ax, path):
    """``ax``, after writing its figure to ``path`` when one is given."""
    if path is not None:
        from fgraph.store import StoreError, write_figure

        try:
            write_figure(path, ax.figure, dpi=120)
        except OSError as error:
            raise StoreError(f"cannot write the figure to {str(path)!r}: {error.strerror or error}") from None
    return ax


def plot_free_energy(result, ax=None, path=None, relative: bool = False):
    """The free energy of ``result`` (a :class:`fgraph.result.Result`) per iteration, on ``ax`` or a new figure;
    returns the Axes (module docstring). ``result.free_energy`` (iterations,) or (iterations, *copies) are the
    y-values of the line labelled ``"free energy"`` (``"F − min F"`` with ``relative=True``), at iterations 1, 2, ….
    """
    if not isinstance(relative, bool):
        raise ModelError(f"relative must be True or False, got {relative!r}")
    trace = np.asarray(result.free_energy, dtype=np.float64)
    if trace.size == 0:
        raise ModelError("this result recorded no free energy: an exact BP run (a tree) records it only when asked, "
                         "and free_energy=False skips it; run fg.infer(..., free_energy=True) to plot it")
    trace = trace.reshape(len(trace), -1)  # one column per copy
    iterations = np.arange(1, len(trace) + 1)
    values = trace
    if relative:
        with np.errstate(invalid="ignore"):
            values = np.where(trace - trace.min(axis=0) > 0, trace - trace.min(axis=0), np.nan)
        if np.all(np.isnan(values)):
            raise ModelError(f"relative=True plots F − min F on a log scale, and it is 0 at each of the "
                             f"{len(trace)} iteration(s) here; use relative=False")
    ax, path = _axes_and_path(ax, path)
    from matplotlib.ticker import MaxNLocator

    label = "F − min F" if relative else "free energy"
    for copy in range(values.shape[1]):
        ax.plot(iterations, values[:, copy], marker="o", markersize=3, color="C0",
                label=label if copy == 0 else "_nolegend_")
    if relative:
        ax.set_yscale("log")
        ax.set_ylabel("F − min F (nats)")
    else:
        ax.ticklabel_format(axis="y", useOffset=False)  # the last changes are small: show the values themselves
        ax.set_ylabel("free energy F (nats)")
        if result.plan.exact:
            for copy, evidence in enumerate(np.ravel(result.log_evidence)):
                ax.axhline(-evidence, color="C1", linestyle="--",
                           label="−log p(data) (exact)" if copy == 0 else "_nolegend_")
    _mark_the_end(ax, result, iterations[-1])
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("iteration")
    copies = f", {values.shape[1]} copies" if values.shape[1] > 1 else ""
    algorithm = {"bp": "BP", "vmp": "VMP"}.get(result.plan.algorithm, result.plan.algorithm)
    ax.set_title(f"{algorithm}: free energy per iteration{copies}")
    ax.legend(fontsize=8)
    return _written(ax, path)


def _mark_the_end(ax, result, last: int) -> None:
    """A dotted vertical line at the last iteration saying how the run ended (none when it was not judged)."""
    if result.interrupted:
        ax.axvline(last, color="gray", linestyle=":", label=f"interrupted after {last}")
    elif result.plan.exact:
        ax.axvline(last, color="green", linestyle=":", label="exact (tree)")
    elif result.converged:
        ax.axvline(last, color="green", linestyle=":",
                   label=f"converged: change {result.last_change:.2g} < tol {result.tolerance:.2g}")
    elif result.converged is False:
        ax.axvline(last, color="red", linestyle=":", label=f"not converged after {last}")


def plot_reliability_diagram(diagram, ax=None, path=None):
    """``diagram`` (a :class:`fgraph.metrics.ReliabilityDiagram`) on ``ax`` or a new figure; returns the Axes
    (module docstring). The line labelled ``"observed accuracy"`` has the non-empty bins' ``confidence`` as x and
    ``accuracy`` as y; the bars span the bins (``edges``) with the accuracy as height."""
    ax, path = _axes_and_path(ax, path)
    edges = np.asarray(diagram.edges, dtype=np.float64)
    count = np.asarray(diagram.count)
    filled = count > 0
    widths = np.diff(edges)
    ax.bar(edges[:-1][filled], diagram.accuracy[filled], width=widths[filled], align="edge", color="C0", alpha=0.3,
           edgecolor="C0", label="accuracy per bin")
    ax.plot([0.0, 1.0], [0.0, 1.0], linestyle="--", color="gray", label="perfect calibration")
    ax.plot(diagram.confidence[filled], diagram.accuracy[filled], marker="o", color="C0",
            label="observed accuracy")
    vertical = filled.sum() > 10  # many narrow bins: the counts stand upright
    for left, width, number in zip(edges[:-1][filled], widths[filled], count[filled]):
        ax.text(left + width / 2, 0.01, str(int(number)), ha="center", va="bottom", fontsize=7, color="C0",
                rotation=90 if vertical else 0)
    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(0.0, 1.0)
    ax.set_xlabel("confidence: probability of the predicted class")
    ax.set_ylabel("accuracy: fraction predicted right")
    ax.set_title(f"ECE {diagram.expected_calibration_error:.3f} ({len(count)} bins, {int(count.sum())} predictions; "
                 "counts in the bars)", fontsize=9)
    ax.legend(fontsize=8, loc="upper left")
    return _written(ax, path)

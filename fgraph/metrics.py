"""Scores of probabilistic classifiers: accuracy, log predictive density, calibration.

Every function takes ``probabilities`` (N, L), each row a predictive distribution over the
classes 0..L−1 (rows are not renormalised: a row that does not sum to 1 within 1e-6 is an error),
and ``y`` (N,) the true labels 0..L−1.

* :func:`accuracy` — the fraction of points whose most probable class (the first one on ties) is y.
* :func:`log_predictive_density` — (1/N) Σ_n log p(y_n | x_n). Probabilities are clipped below
  at ``floor`` (default 1e-12, so one confidently wrong prediction costs log(1e-12) ≈ −27.6
  instead of −∞) before the logarithm; pass ``floor=0`` for the unclipped value.
* :func:`expected_calibration_error` — Guo et al. (2017): with the confidence
  conf_n = max_j p_nj and n_bins equal-width bins on [0, 1] (bin b holds (b/B, (b+1)/B], the first
  bin also 0), ECE = Σ_b (|B_b| / N) · |acc(B_b) − conf(B_b)|, acc and conf the mean correctness
  and mean confidence of the points in the bin; empty bins contribute nothing. 20 bins by default.
* :func:`reliability_diagram` — the per-bin data behind the ECE (bin edges, mean confidence,
  accuracy and count per bin; NaN for the means of an empty bin); ``.plot()`` draws it
  (:func:`fgraph.plotting.plot_reliability_diagram`, with matplotlib).

Calibration is judged on the top label, for two classes as for more: a point's confidence is the
probability of its predicted class and it counts as right when that class is y, so with two
classes every confidence is at least 1/2 and the bins below are empty. (The calibration of one
class's probability, p(y = 1) against the frequency of y = 1, is another diagram, not this one.)

The engine does not use this module; experiments and estimators do.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fgraph.errors import DataError

__all__ = [
    "ReliabilityDiagram",
    "accuracy",
    "expected_calibration_error",
    "log_predictive_density",
    "reliability_diagram",
]


def _checked(probabilities, y) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(probabilities, dtype=np.float64)
    labels = np.asarray(y)
    if p.ndim != 2 or p.shape[0] == 0 or p.shape[1] == 0:
        raise DataError(f"probabilities must be a non-empty 2-D array (N, L), got shape {p.shape}")
    if labels.shape != (p.shape[0],):
        raise DataError(f"y must have shape ({p.shape[0]},) to match probabilities {p.shape}, got {labels.shape}")
    if not np.all(np.isfinite(p)) or p.min() < 0:
        raise DataError("probabilities must be finite and non-negative")
    if not np.allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-6):
        worst = int(np.argmax(np.abs(p.sum(axis=1) - 1.0)))
        raise DataError(f"each row of probabilities must sum to 1; row {worst} sums to {p[worst].sum()!r}")
    if not (np.issubdtype(labels.dtype, np.integer) or np.all(np.mod(labels, 1) == 0)):
        raise DataError("y must hold whole-number class labels 0..L−1")
    labels = labels.astype(np.int64)
    if labels.min() < 0 or labels.max() >= p.shape[1]:
        raise DataError(f"y must lie in 0..{p.shape[1] - 1} (the columns of probabilities), got {labels.min()}..{labels.max()}")
    return p, labels


def accuracy(probabilities, y) -> float:
    """Fraction of rows whose arg-max class (first one on ties) equals y."""
    p, labels = _checked(probabilities, y)
    return float(np.mean(np.argmax(p, axis=1) == labels))


def log_predictive_density(probabilities, y, floor: float = 1e-12) -> float:
    """Mean over points of log max(p(y_n | x_n), floor)."""
    p, labels = _checked(probabilities, y)
    if not (0.0 <= floor < 1.0):
        raise DataError(f"floor must lie in [0, 1), got {floor!r}")
    chosen = p[np.arange(labels.size), labels]
    with np.errstate(divide="ignore"):
        return float(np.mean(np.log(np.maximum(chosen, floor))))


@dataclass(frozen=True)
class ReliabilityDiagram:
    """Per-bin calibration data: ``edges`` (B+1,), ``confidence``, ``accuracy`` (B,) means per bin
    (NaN where empty) and ``count`` (B,) points per bin."""

    edges: np.ndarray
    confidence: np.ndarray
    accuracy: np.ndarray
    count: np.ndarray

    @property
    def expected_calibration_error(self) -> float:
        filled = self.count > 0
        weights = self.count[filled] / self.count.sum()
        return float(np.sum(weights * np.abs(self.accuracy[filled] - self.confidence[filled])))

    def plot(self, ax=None, path=None):
        """Accuracy against confidence per bin, the diagonal, the bins' counts and the ECE, on ``ax`` or a new
        figure; returns the matplotlib Axes and with ``path=`` writes the figure (needs matplotlib)."""
        from fgraph.plotting import plot_reliability_diagram

        return plot_reliability_diagram(self, ax=ax, path=path)


def reliability_diagram(probabilities, y, n_bins: int = 20) -> ReliabilityDiagram:
    """Bin the top-class confidence into ``n_bins`` equal-width bins on [0, 1]; see the module doc."""
    p, labels = _checked(probabilities, y)
    if not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise DataError(f"n_bins must be a positive whole number, got {n_bins!r}")
    confidence = p.max(axis=1)
    correct = (np.argmax(p, axis=1) == labels).astype(np.float64)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    # bin b is (edges[b], edges[b+1]] (compared with the edges themselves, so a confidence equal to
    # an edge lands where the reported edges say); a confidence of 0 goes to the first bin
    which = np.clip(np.digitize(confidence, edges, right=True) - 1, 0, n_bins - 1)
    count = np.bincount(which, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_confidence = np.bincount(which, weights=confidence, minlength=n_bins) / count
        mean_correct = np.bincount(which, weights=correct, minlength=n_bins) / count
    return ReliabilityDiagram(edges=edges, confidence=mean_confidence, accuracy=mean_correct, count=count)


def expected_calibration_error(probabilities, y, n_bins: int = 20) -> float:
    """ECE of Guo et al. (2017) with ``n_bins`` equal-width confidence bins (20 by default)."""
    return reliability_diagram(probabilities, y, n_bins).expected_calibration_error

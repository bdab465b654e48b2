"""Stratified train/test splits with nested training sets of doubling size (CAVI-CMN, Appendix C).

Appendix C: "each next training set was twice as large as the previous. For each training size,
we used the same test-set ... The test set was ensured to have the same relative class
frequencies as in the training set(s)." :func:`train_test_splits` draws one stratified test set,
then the largest training set stratified from the rest, then each smaller training set as a
stratified subset of the next larger one, so the training sets are nested. Every training set is
z-scored with its own mean and standard deviation, and the test set with the same statistics.
"""
from __future__ import annotations

import itertools
import numbers
from dataclasses import dataclass

import numpy as np

from fgraph.errors import DatasetError


@dataclass(frozen=True)
class SplitSizes:
    """Training sizes ``smallest, 2·smallest, …`` up to ``largest`` and one test size."""

    smallest: int
    largest: int
    test_size: int

    @property
    def train_sizes(self) -> tuple:
        return doubling_sizes(self.smallest, self.largest)


# The paper's sizes, Appendix C (train sizes "ranging from a to b", doubling; held-out test size).
# Vehicle: the paper says 20 to 650; doubling from 20 gives 640, and 650 + 205 exceeds the 846 rows,
# so the largest training set is 640. Banknote and iris have no sizes in the paper: see DEFAULT_SPLITS.
PAPER_SPLITS = {
    "pinwheels": SplitSizes(50, 1600, 500),
    "waveform": SplitSizes(60, 3840, 1160),
    "vehicle": SplitSizes(20, 650, 205),
    "rice": SplitSizes(40, 2560, 1250),
    "breast_cancer": SplitSizes(25, 400, 169),
    "sonar": SplitSizes(8, 128, 80),
}

# PAPER_SPLITS, plus choices of ours for the two data sets the paper gives no sizes for
# (doubling ranges that leave a test set of a few hundred points, resp. a third of iris).
DEFAULT_SPLITS = {
    **PAPER_SPLITS,
    "banknote": SplitSizes(15, 960, 300),
    "iris": SplitSizes(6, 96, 50),
}


def doubling_sizes(smallest: int, largest: int) -> tuple:
    """``smallest · 2^i`` for i = 0, 1, … while ≤ ``largest`` (e.g. 25 … 400 → 25, 50, 100, 200, 400)."""
    if not isinstance(smallest, numbers.Integral) or not isinstance(largest, numbers.Integral) or smallest < 1:
        raise DatasetError(f"doubling_sizes: need whole numbers smallest ≥ 1, largest; got {smallest!r}, {largest!r}")
    if largest < smallest:
        raise DatasetError(f"doubling_sizes: largest ({largest}) is below smallest ({smallest})")
    sizes, size = [], int(smallest)
    while size <= largest:
        sizes.append(size)
        size *= 2
    return tuple(sizes)


@dataclass(frozen=True)
class Split:
    """One training set with the shared test set, both z-scored by the training statistics.

    ``train_index`` / ``test_index`` index the rows of the ``X`` given to :func:`train_test_splits`;
    ``mean`` and ``scale`` (d,) are the training set's feature means and standard deviations
    (a feature constant on the training set gets scale 1, so it maps to 0 instead of NaN).
    """

    train_index: np.ndarray
    test_index: np.ndarray
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    mean: np.ndarray
    scale: np.ndarray

    @property
    def train_size(self) -> int:
        return int(self.train_index.size)


def _stratified_counts(available: np.ndarray, n: int) -> np.ndarray:
    """How many of ``n`` points to take from each class, in proportion to ``available``.

    Largest-remainder rounding of n·p_c; every class gets at least one point when n ≥ the number
    of classes present; no class more than it has.
    """
    present = available > 0
    quotas = n * available / available.sum()
    counts = np.floor(quotas).astype(np.int64)
    if n >= present.sum():
        counts = np.where(present, np.maximum(counts, 1), 0)
    counts = np.minimum(counts, available)
    # add or remove single points by the largest / smallest remainder until the total is n
    remainder = quotas - counts
    while counts.sum() < n:
        room = counts < available
        order = np.argsort(-np.where(room, remainder, -np.inf), kind="stable")
        counts[order[0]] += 1
        remainder[order[0]] -= 1.0
    while counts.sum() > n:
        # only shrink classes with more than one point, so small classes stay represented
        shrinkable = counts > (1 if n >= present.sum() else 0)
        order = np.argsort(np.where(shrinkable, remainder, np.inf), kind="stable")
        counts[order[0]] -= 1
        remainder[order[0]] += 1.0
    return counts


def _stratified_subset(index: np.ndarray, y: np.ndarray, n: int, n_classes: int, rng) -> np.ndarray:
    """A random stratified subset of ``index`` of size ``n`` (sorted)."""
    labels = y[index]
    counts = _stratified_counts(np.bincount(labels, minlength=n_classes), n)
    chosen = [rng.choice(index[labels == c], size=counts[c], replace=False) for c in range(n_classes)]
    return np.sort(np.concatenate(chosen))


def train_test_splits(X, y, train_sizes, test_size: int, random_state=None) -> list:
    """Nested stratified training sets of the given sizes and one shared stratified test set.

    ``X`` (N, d) finite numbers, ``y`` (N,) int labels 0..L−1; ``train_sizes`` increasing whole
    numbers (e.g. ``PAPER_SPLITS["breast_cancer"].train_sizes``); ``test_size`` whole number.
    Returns one :class:`Split` per training size, in the order given; the smaller training sets
    are subsets of the larger ones and all share the test set.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if X.ndim != 2:
        raise DatasetError(f"train_test_splits: X must be 2-D (N, d), got shape {X.shape}")
    if y.shape != (X.shape[0],):
        raise DatasetError(f"train_test_splits: y must have shape ({X.shape[0]},) to match X, got {y.shape}")
    if not np.all(np.isfinite(X)):
        raise DatasetError("train_test_splits: X contains NaN or infinite values")
    if not np.issubdtype(y.dtype, np.integer) or (y.size and y.min() < 0):
        raise DatasetError("train_test_splits: y must hold whole-number labels 0..L−1 (use load_dataset's y)")
    sizes = [int(s) for s in np.atleast_1d(train_sizes)]
    if not sizes or any(s < 1 for s in sizes) or any(b <= a for a, b in itertools.pairwise(sizes)):
        raise DatasetError(f"train_test_splits: train_sizes must be positive and increasing, got {list(train_sizes)}")
    if not isinstance(test_size, numbers.Integral) or test_size < 1:
        raise DatasetError(f"train_test_splits: test_size must be a positive whole number, got {test_size!r}")
    n_rows = X.shape[0]
    if sizes[-1] + test_size > n_rows:
        raise DatasetError(
            f"train_test_splits: the largest training set ({sizes[-1]}) plus the test set ({test_size}) "
            f"need {sizes[-1] + test_size} rows, but the data set has {n_rows}"
        )
    n_classes = int(y.max()) + 1
    rng = np.random.default_rng(random_state)
    everything = np.arange(n_rows)
    test_index = _stratified_subset(everything, y, test_size, n_classes, rng)
    pool = np.setdiff1d(everything, test_index)
    nested = [_stratified_subset(pool, y, sizes[-1], n_classes, rng)]
    for size in reversed(sizes[:-1]):
        nested.append(_stratified_subset(nested[-1], y, size, n_classes, rng))
    splits = []
    for train_index in reversed(nested):
        mean = X[train_index].mean(axis=0)
        scale = X[train_index].std(axis=0)
        scale = np.where(scale > 0, scale, 1.0)
        splits.append(Split(
            train_index=train_index, test_index=test_index,
            X_train=(X[train_index] - mean) / scale, y_train=y[train_index].astype(np.int64),
            X_test=(X[test_index] - mean) / scale, y_test=y[test_index].astype(np.int64),
            mean=mean, scale=scale,
        ))
    return splits

"""k-means on many data sets at once: the centres of R data sets of equal size, each the best of S random starts,
by Lloyd's iterations run on all R × S starts together as arrays.

This is how Liu & Li's code starts every fractional VB fit of a TVB table (R's ``kmeans(data, K, nstart = 25)``:
the K initial centres of a start are K distinct points of the data drawn at random, and the start of least
within-cluster sum of squares is kept); a TVB table has thousands of small fits, so their k-means run as one
array computation rather than one scikit-learn call per fit. R's default algorithm is Hartigan–Wong, this one
Lloyd's: from the same centres both stop at a local minimum of the within-cluster sum of squares, and with 25
starts on data of well-separated clusters both find the same one.
"""
from __future__ import annotations

import numbers

import numpy as np

from fgraph.errors import DataError, ModelError

__all__ = ["kmeans_centres"]


def kmeans_centres(data, n_clusters: int, n_starts: int, seeds, max_iterations: int = 100) -> np.ndarray:
    """The k-means centres (R, K, d) of each of the R data sets ``data`` (R, n, d).

    Every data set gets ``n_starts`` S starts, each at K distinct points drawn at random — data set r's from
    ``np.random.default_rng(seeds[r])``, so that its centres do not depend on the other data sets —; Lloyd's
    iterations — assign every point to its nearest centre, move every centre to the mean of its points (a centre
    left without points stays where it is) — run on all R × S starts together until no assignment changes or
    ``max_iterations``; per data set the start of least within-cluster sum of squares is returned.
    """
    data = np.asarray(data, dtype=float)
    if data.ndim != 3:
        raise DataError(f"k-means: data must be R data sets of shape (R, n, d), got shape {data.shape}")
    for name, value in (("n_clusters", n_clusters), ("n_starts", n_starts), ("max_iterations", max_iterations)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ModelError(f"k-means: {name} must be an integer >= 1, got {value!r}")
    R, n, d = data.shape
    K, S = int(n_clusters), int(n_starts)
    if n < K:
        raise DataError(f"k-means: {n} points cannot seed K = {K} distinct centres")
    if len(seeds) != R:
        raise ModelError(f"k-means: one seed per data set, R = {R}; got {len(seeds)}")
    # K distinct points per (data set, start): the first K of a random permutation
    uniforms = np.stack([np.random.default_rng(seed).random((S, n)) for seed in seeds])
    chosen = np.argsort(uniforms, axis=-1)[..., :K]  # (R, S, K)
    centres = np.take_along_axis(data[:, None, :, :], chosen[..., None], axis=2)  # (R, S, K, d)
    norms = np.sum(data * data, axis=-1)[:, None, :, None]  # (R, 1, n, 1)

    def squared_distances(centres):  # (R, S, n, K): ‖x‖² − 2 xᵀc + ‖c‖², without an (R, S, n, K, d) array
        cross = data[:, None] @ np.swapaxes(centres, -1, -2)  # (R, S, n, K), batched matrix products
        return norms - 2.0 * cross + np.sum(centres * centres, -1)[:, :, None]

    labels = None
    for _ in range(int(max_iterations)):
        new = np.argmin(squared_distances(centres), axis=-1)  # (R, S, n)
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        members = (labels[..., None] == np.arange(K)).astype(float)  # (R, S, n, K)
        counts = members.sum(axis=2)  # (R, S, K)
        sums = np.swapaxes(members, -1, -2) @ data[:, None]  # (R, S, K, d)
        centres = np.where(counts[..., None] > 0, sums / np.maximum(counts, 1)[..., None], centres)
    inertia = squared_distances(centres).min(axis=-1).sum(axis=-1)  # (R, S)
    best = np.argmin(inertia, axis=1)
    return centres[np.arange(R), best]

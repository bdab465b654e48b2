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
    centres = np.take_along_axis(data[:, None, :, :], chosen[..., None], axis=2).reshape(R * S, K, d)
    # the live starts, flattened: start p of data set cell[p]; a start leaves when its assignment no longer changes
    # (Lloyd's iterations would keep it where it is) or when it assigns as an earlier start of its data set does
    # (it follows that start's path from here on): neither changes what any start converges to
    cell = np.repeat(np.arange(R), S)
    final = np.empty((R * S, K, d))
    inertia = np.full(R * S, np.inf)
    live = np.arange(R * S)
    labels = np.full((R * S, n), -1)
    for _ in range(int(max_iterations)):
        points = data[cell[live]]  # (P, n, d)
        distances = _squared_distances(points, centres[live])  # (P, n, K)
        new = np.argmin(distances, axis=-1)  # (P, n)
        settled = np.all(new == labels[live], axis=1)
        if settled.any():
            done = live[settled]
            final[done] = centres[done]
            inertia[done] = np.take_along_axis(distances[settled], new[settled][..., None], -1).sum((1, 2))
        labels[live] = new
        keep = ~settled & _first_of_alike(cell[live], new)
        live = live[keep]
        if live.size == 0:
            break
        members = labels[live][..., None] == np.arange(K)  # (P, n, K)
        counts = members.sum(axis=1)  # (P, K)
        points = points[keep]
        sums = np.stack([(members * points[:, :, None, j]).sum(axis=1) for j in range(d)], axis=-1)  # (P, K, d)
        centres[live] = np.where(counts[..., None] > 0, sums / np.maximum(counts, 1)[..., None], centres[live])
    if live.size:  # max_iterations reached
        final[live] = centres[live]
        distances = _squared_distances(data[cell[live]], centres[live])
        inertia[live] = distances.min(axis=-1).sum(axis=-1)
    # per data set the start of least within-cluster sum of squares (the first of equals); a start that left as
    # another's duplicate has inertia ∞ and its twin, earlier, stands for it
    best = np.argmin(inertia.reshape(R, S), axis=1)
    return final.reshape(R, S, K, d)[np.arange(R), best]


def _squared_distances(points: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """‖x − c‖² of every point (P, n, d) to every centre (P, K, d) of its set, (P, n, K), one coordinate at a
    time (d is small)."""
    total = np.sum(points * points, -1)[..., None] + np.sum(centres * centres, -1)[:, None, :]
    for j in range(points.shape[-1]):
        total -= 2.0 * points[:, :, None, j] * centres[:, None, :, j]
    return total


def _first_of_alike(cells: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """True for every row of ``labels`` (P, n) that no earlier row of the same cell equals."""
    keys = np.concatenate([cells[:, None], labels], axis=1)
    _, first = np.unique(keys, axis=0, return_index=True)
    mask = np.zeros(len(labels), dtype=bool)
    mask[first] = True
    return mask

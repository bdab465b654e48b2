"""k-means on many data sets at once: the centres of R data sets of equal size, each the best of S random starts,
by Lloyd's iterations run on all R × S starts together as arrays.

This is how Liu & Li's code starts every fractional VB fit of a TVB table (R's ``kmeans(data, K, nstart = 25)``:
the K initial centres of a start are K distinct points of the data drawn at random, and the start of least
within-cluster sum of squares is kept); a TVB table has thousands of small fits, so their k-means run as one
array computation rather than one scikit-learn call per fit. R's default algorithm is Hartigan–Wong, this one
Lloyd's: from the same centres both stop at a local minimum of the within-cluster sum of squares, and with 25
starts on data of well-separated clusters both find the same one.

With numba (the ``fast`` extra, :mod:`fgraph.jit`) the starts run one by one as compiled loops
(:mod:`fgraph.models.mixtures.kmeans_loops`); the tests hold the two paths to the same centres.
"""
from __future__ import annotations

import numbers

import numpy as np

from fgraph import jit
from fgraph.errors import DataError, ModelError
from fgraph.models.mixtures.kmeans_loops import lloyd_loops

__all__ = ["kmeans_centres"]

#: seeds the weights of the hash that finds starts assigning alike (any fixed seed: the hash only groups rows)
_HASH_SEED = 0x6B6D65616E73


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
    cell = np.repeat(np.arange(R), S)
    # every start by compiled loops (fgraph.models.mixtures.kmeans_loops) or as arrays: the same centres
    run = lloyd_loops if jit.enabled() else _lloyd_arrays
    final, inertia = run(data, cell, centres, int(max_iterations))
    # per data set the start of least within-cluster sum of squares (the first of equals); a start that left the
    # array path as another's duplicate has inertia ∞ and its twin, earlier, stands for it
    best = np.argmin(inertia.reshape(R, S), axis=1)
    return final.reshape(R, S, K, d)[np.arange(R), best]


def _lloyd_arrays(data: np.ndarray, cell: np.ndarray, centres: np.ndarray, max_iterations: int) -> tuple:
    """Lloyd's iterations of every start together as arrays: ``data`` (R, n, d), ``cell`` (P,) the data set of each
    start, ``centres`` (P, K, d) -> (final centres (P, K, d), within-cluster sums of squares (P,))."""
    n, d = data.shape[1:]
    K = centres.shape[1]
    centres = centres.copy()
    # the live starts, flattened: start p of data set cell[p]; a start leaves when its assignment no longer changes
    # (Lloyd's iterations would keep it where it is) or when it assigns as an earlier start of its data set does
    # (it follows that start's path from here on): neither changes what any start converges to
    final = np.empty(centres.shape)
    inertia = np.full(len(centres), np.inf)
    live = np.arange(len(centres))
    labels = np.full((len(centres), n), -1, dtype=np.intp)
    squared_norms = np.einsum("rni,rni->rn", data, data)  # ‖x‖², the part of every distance no centre moves
    # the live starts' points one coordinate at a time, (P, n) each: contiguous rows for the products below
    coordinates = [np.ascontiguousarray(data[cell, :, j]) for j in range(d)]
    hash_weights = np.random.default_rng(_HASH_SEED).integers(1, 2 ** 63, size=n, dtype=np.uint64)
    for _ in range(int(max_iterations)):
        nearest, new = _nearest_centres(coordinates, centres[live])
        settled = np.all(new == labels[live], axis=1)
        if settled.any():
            done = live[settled]
            final[done] = centres[done]
            inertia[done] = (nearest[settled] + squared_norms[cell[done]]).sum(axis=1)
        labels[live] = new
        keep = ~settled & _first_of_alike(cell[live], new, hash_weights)
        live = live[keep]
        if live.size == 0:
            break
        coordinates = [x[keep] for x in coordinates]
        # every centre to the mean of its points: sums and counts by (start, label) bins
        P = live.size
        bins = (np.arange(P)[:, None] * K + labels[live]).ravel()
        counts = np.bincount(bins, minlength=P * K).reshape(P, K)
        sums = np.stack([np.bincount(bins, weights=x.ravel(), minlength=P * K) for x in coordinates],
                        axis=-1).reshape(P, K, d)
        centres[live] = np.where(counts[..., None] > 0, sums / np.maximum(counts, 1)[..., None], centres[live])
    if live.size:  # max_iterations reached
        final[live] = centres[live]
        inertia[live] = (_nearest_centres(coordinates, centres[live])[0] + squared_norms[cell[live]]).sum(axis=-1)
    return final, inertia


def _nearest_centres(coordinates: list, centres: np.ndarray) -> tuple:
    """Per point of every start, its nearest centre's label (P, n) and ‖c‖² − 2 x·c to it (P, n) (the squared
    distance less ‖x‖²), from the points' d coordinates (P, n) each and the starts' centres (P, K, d); the first
    of equally near centres, as ``argmin``."""
    K = centres.shape[1]
    centre_norms = np.einsum("pki,pki->pk", centres, centres)
    labels = np.zeros(coordinates[0].shape, dtype=np.intp)
    term = np.empty(coordinates[0].shape)
    for k in range(K):
        score = coordinates[0] * (-2.0 * centres[:, k, 0])[:, None]
        for j in range(1, len(coordinates)):
            score += np.multiply(coordinates[j], (-2.0 * centres[:, k, j])[:, None], out=term)
        score += centre_norms[:, k, None]
        if k == 0:
            nearest = score
        else:
            np.copyto(labels, k, where=score < nearest)
            np.minimum(nearest, score, out=nearest)
    return nearest, labels


def _first_of_alike(cells: np.ndarray, labels: np.ndarray, hash_weights: np.ndarray) -> np.ndarray:
    """True for every row of ``labels`` (P, n) that no earlier row of the same cell equals.

    Rows are grouped by (cell, a 64-bit hash of the row, Σ labels·weights mod 2⁶⁴); a row is dropped only if it
    equals the first row of its group, so that a hash collision keeps a row (a start run twice, which changes
    nothing) and never drops one."""
    hashes = (labels.astype(np.uint64) * hash_weights).sum(axis=1)
    order = np.lexsort((np.arange(len(cells)), hashes, cells))  # by cell, then hash, then position
    sorted_cells, sorted_hashes = cells[order], hashes[order]
    opens = np.ones(len(order), dtype=bool)
    opens[1:] = (sorted_cells[1:] != sorted_cells[:-1]) | (sorted_hashes[1:] != sorted_hashes[:-1])
    group_first = np.empty(len(order), dtype=np.intp)
    group_first[order] = order[np.maximum.accumulate(np.where(opens, np.arange(len(order)), 0))]
    mask = np.zeros(len(cells), dtype=bool)
    mask[order[opens]] = True
    later = np.flatnonzero(~mask)
    mask[later[np.any(labels[later] != labels[group_first[later]], axis=1)]] = True
    return mask

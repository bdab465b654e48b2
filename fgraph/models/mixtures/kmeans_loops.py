"""Lloyd's iterations start by start as compiled loops (:mod:`fgraph.jit`), for :func:`~fgraph.models.mixtures.kmeans
.kmeans_centres`.

Each start runs on its own — assign every point to its nearest centre (‖c‖² − 2 x·c, the first of equals), stop
when no assignment changed, else move every centre to the mean of its points (a centre left without points stays)
— with the arithmetic of the array path in the same order, so both reach the same centres; the array path's
early exit of starts that assign alike is not needed here (a start costs microseconds).
"""
import numpy as np

from fgraph.jit import compiled

__all__ = ["lloyd_loops"]


def _lloyd_loops(data, cells, centres, max_iterations):
    """``data`` (R, n, d), ``cells`` (P,) the data set of each start, ``centres`` (P, K, d) its initial centres ->
    (final centres (P, K, d), within-cluster sums of squares (P,))."""
    P, K, d = centres.shape
    n = data.shape[1]
    final = centres.copy()
    inertia = np.empty(P)
    labels = np.empty(n, dtype=np.int64)
    sums = np.empty((K, d))
    counts = np.empty(K, dtype=np.int64)
    norms = np.empty(K)
    for p in range(P):
        x = data[cells[p]]
        c = final[p]
        labels[:] = -1
        # assign; stop when nothing changed (or, after max_iterations moves, to score the last centres); move
        for iteration in range(max_iterations + 1):
            for k in range(K):
                total = 0.0
                for j in range(d):
                    total += c[k, j] * c[k, j]
                norms[k] = total
            changed = False
            for i in range(n):
                best, nearest = 0.0, 0
                for k in range(K):
                    score = x[i, 0] * (-2.0 * c[k, 0])
                    for j in range(1, d):
                        score += x[i, j] * (-2.0 * c[k, j])
                    score += norms[k]
                    if k == 0 or score < best:
                        best, nearest = score, k
                if nearest != labels[i]:
                    changed = True
                    labels[i] = nearest
            if not changed or iteration == max_iterations:
                break
            sums[:] = 0.0
            counts[:] = 0
            for i in range(n):
                counts[labels[i]] += 1
                for j in range(d):
                    sums[labels[i], j] += x[i, j]
            for k in range(K):
                if counts[k] > 0:
                    for j in range(d):
                        c[k, j] = sums[k, j] / counts[k]
        # Σ_i ‖x_i − c_{label i}‖² as ‖c‖² − 2 x·c + ‖x‖², the array path's form
        total = 0.0
        for i in range(n):
            k = labels[i]
            score = x[i, 0] * (-2.0 * c[k, 0])
            for j in range(1, d):
                score += x[i, j] * (-2.0 * c[k, j])
            squared = 0.0
            for j in range(d):
                squared += x[i, j] * x[i, j]
            total += score + norms[k] + squared
        inertia[p] = total
    return final, inertia


_compiled = compiled(_lloyd_loops)


def lloyd_loops(data, cells, centres, max_iterations: int) -> tuple:
    """The compiled :func:`_lloyd_loops` (numba), or the same Python loops without numba (slow: tests)."""
    function = _compiled if _compiled is not None else _lloyd_loops
    return function(np.ascontiguousarray(data, dtype=float), np.ascontiguousarray(cells, dtype=np.int64),
                    np.array(centres, dtype=float), int(max_iterations))

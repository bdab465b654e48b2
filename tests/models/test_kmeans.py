"""The batched k-means of ``fgraph.models.mixtures.kmeans`` against Lloyd's iterations written out start by start."""
import numpy as np
import pytest

from fgraph import jit
from fgraph.models.mixtures.kmeans import kmeans_centres

#: the array path, and the compiled loops where numba is installed (the "fast" extra)
PATHS = [False] + ([True] if jit.AVAILABLE else [])


def lloyd_one_start(X, centres, max_iterations=100):
    """Lloyd's iterations from ``centres`` (K, d) on ``X`` (n, d), a loop per point: (centres, within-cluster sum of
    squares) at the first assignment that repeats the previous one."""
    centres = centres.copy()
    previous = None
    for _ in range(max_iterations):
        distances = np.array([[np.sum((x - c) ** 2) for c in centres] for x in X])
        labels = np.argmin(distances, axis=1)
        if previous is not None and np.array_equal(labels, previous):
            break
        previous = labels
        for k in range(len(centres)):
            if np.any(labels == k):
                centres[k] = X[labels == k].mean(axis=0)
    return centres, distances[np.arange(len(X)), labels].sum()


def reference_centres(X, K, n_starts, seed):
    """The best of ``n_starts`` starts, each at the K distinct points the first K of a random permutation picks
    (``default_rng(seed)``, one row of uniforms per start)."""
    uniforms = np.random.default_rng(seed).random((n_starts, len(X)))
    fits = [lloyd_one_start(X, X[np.argsort(row)[:K]]) for row in uniforms]
    return fits[int(np.argmin([inertia for _, inertia in fits]))][0]


@pytest.mark.parametrize("compiled", PATHS)
@pytest.mark.parametrize("K, d", [(2, 2), (3, 3), (4, 1)])
def test_batched_kmeans_is_the_best_start_of_lloyds_iterations_start_by_start(K, d, compiled):
    """Every data set's centres are those of the best of its starts run alone (overlapping clusters, so that starts
    end in different local minima and some assign alike and leave early), for several K and d."""
    rng = np.random.default_rng(K * 10 + d)
    R, n, S = 5, 60, 7
    data = rng.normal(size=(R, n, d)) + rng.integers(0, K, size=(R, n, 1)) * 1.5
    seeds = [[3, r] for r in range(R)]
    with jit.compiled_loops(compiled):
        centres = kmeans_centres(data, K, S, seeds)
    for r in range(R):
        np.testing.assert_allclose(centres[r], reference_centres(data[r], K, S, seeds[r]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("compiled", PATHS)
def test_a_start_stopped_by_max_iterations_keeps_its_last_centres(compiled):
    """With one iteration a start's centres are the means of its first assignment."""
    rng = np.random.default_rng(0)
    data = rng.normal(size=(2, 30, 2))
    with jit.compiled_loops(compiled):
        centres = kmeans_centres(data, 2, 1, seeds=[1, 2], max_iterations=1)
    for r in range(2):
        start = data[r][np.argsort(np.random.default_rng([1, 2][r]).random((1, 30))[0])[:2]]
        labels = np.argmin(((data[r][:, None, :] - start[None]) ** 2).sum(-1), axis=1)
        expected = np.stack([data[r][labels == k].mean(0) for k in range(2)])
        np.testing.assert_allclose(centres[r], expected, rtol=1e-12)


@pytest.mark.skipif(not jit.AVAILABLE, reason="numba (the fast extra) is not installed")
def test_the_compiled_loops_and_the_array_path_find_the_same_centres():
    """On the TVB study's design (two clusters, 25 starts, many data sets of 500 points) and on overlapping
    clusters with one iteration short of settling, both paths return the same centres."""
    rng = np.random.default_rng(4)
    first = rng.random((40, 500)) < 0.65
    data = np.where(first[..., None], 0.0, 2.0) + rng.normal(size=(40, 500, 2))
    seeds = [[9, r] for r in range(40)]
    for iterations in (100, 3):
        with jit.compiled_loops(False):
            arrays = kmeans_centres(data, 2, 25, seeds, max_iterations=iterations)
        with jit.compiled_loops(True):
            loops = kmeans_centres(data, 2, 25, seeds, max_iterations=iterations)
        np.testing.assert_allclose(loops, arrays, rtol=1e-12, atol=1e-12)

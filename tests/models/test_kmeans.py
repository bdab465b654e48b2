"""The batched k-means of ``fgraph.models.mixtures.kmeans`` against Lloyd's iterations written out start by start."""
import numpy as np
import pytest

from fgraph.models.mixtures.kmeans import kmeans_centres


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


@pytest.mark.parametrize("K, d", [(2, 2), (3, 3), (4, 1)])
def test_batched_kmeans_is_the_best_start_of_lloyds_iterations_start_by_start(K, d):
    """Every data set's centres are those of the best of its starts run alone (overlapping clusters, so that starts
    end in different local minima and some assign alike and leave early), for several K and d."""
    rng = np.random.default_rng(K * 10 + d)
    R, n, S = 5, 60, 7
    data = rng.normal(size=(R, n, d)) + rng.integers(0, K, size=(R, n, 1)) * 1.5
    seeds = [[3, r] for r in range(R)]
    centres = kmeans_centres(data, K, S, seeds)
    for r in range(R):
        np.testing.assert_allclose(centres[r], reference_centres(data[r], K, S, seeds[r]), rtol=1e-12, atol=1e-12)


def test_a_start_stopped_by_max_iterations_keeps_its_last_centres():
    """With one iteration a start's centres are the means of its first assignment."""
    rng = np.random.default_rng(0)
    data = rng.normal(size=(2, 30, 2))
    centres = kmeans_centres(data, 2, 1, seeds=[1, 2], max_iterations=1)
    for r in range(2):
        start = data[r][np.argsort(np.random.default_rng([1, 2][r]).random((1, 30))[0])[:2]]
        labels = np.argmin(((data[r][:, None, :] - start[None]) ** 2).sum(-1), axis=1)
        expected = np.stack([data[r][labels == k].mean(0) for k in range(2)])
        np.testing.assert_allclose(centres[r], expected, rtol=1e-12)

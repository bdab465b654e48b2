"""Variational Bayesian Gaussian mixture, 100 iterations from the same start: the engine against scikit-learn and BayesPy.

Data: N = 10^5 points (quick: 10^4) in D = 2 from a mixture of K = 5 Gaussians (numpy ``default_rng``,
seed 20240601); K = 5 components, scikit-learn's default priors (α₀ = 1/K, m₀ the data mean, β₀ = 1,
W₀ the inverse data covariance, ν₀ = D).

- **Ours** (``ours_s``): :func:`fgraph.models.mixtures.gmm.build_gmm`, then :func:`~fgraph.models.mixtures.gmm.fit_gmm` — compile
  and 100 VMP sweeps with the free energy after each, from the k-means responsibilities — and reading the
  posteriors (q(π), q(μ, Λ), q(Z)). ``ours_run_s``: the 100 sweeps and the reading alone, on a compiled plan
  (``fg.run``).
- **scikit-learn** (``sklearn_s``): ``BayesianGaussianMixture`` (Dirichlet-distribution prior, full covariances,
  ``reg_covar=0``, ``max_iter=100``, ``tol=0`` so that it runs all 100 iterations) from the same k-means start
  (the same ``random_state``); its lower bound after every iteration, like ours.
- **BayesPy** (``bayespy_s``): its Gaussian mixture (``Dirichlet``, ``Categorical``, ``Gaussian`` means and
  ``Wishart`` precisions, ``Mixture``), 100 VB iterations from the same responsibilities. BayesPy's
  ``GaussianWishart`` cannot be the component of a ``Mixture`` (it raises a NameError inside BayesPy 0.6.6), so
  its posterior is q(μ) q(Λ), not the joint q(μ, Λ) of the other two: timed for its cost per iteration; its
  result is not compared.

``ratio`` = ours / the faster of scikit-learn and BayesPy (target ≤ 0.25). Agreement (exit status 1 otherwise):
our responsibilities equal scikit-learn's to 1e-6 after the 100 iterations, and our ELBO equals its lower bound
plus the constant of :func:`fgraph.models.mixtures.gmm.sklearn_lower_bound_offset` to 1e-8 relative.

Run from the repository root::

    python -m benchmarks.gmm            # N = 10^5
    python -m benchmarks.gmm --quick    # N = 10^4
    python -m benchmarks.gmm --dim 10   # D = 10 (the other coordinates: see ``simulate``)

Timing: ``time.perf_counter``; ours, ours on a compiled plan, scikit-learn and BayesPy alternate within each
repeat (3 repeats, quick 2), medians, after one untimed warm-up of each. The last line is one JSON object.

**The TVB table** (``--tvb``, :func:`fgraph.models.tvb.gmm.build_tvb_table`): the §6.1 data of the TVB paper
(:func:`fgraph_experiments.gmm_tvb.simulate`, N = 3000; quick: 400), K = 2, a grid of 100 ω log-spaced in
[0.001, 1] (quick: 10) and B = 100 resamples (quick: 10), that is m (B + 2) fits. Built four ways, each once,
in this order: batched (``block_size=64``: cells of equal size are copies of one graph) on 1 and on 2 worker
processes, and one fit at a time (``block_size=1``) on 1 and on 2 workers (``--single-fraction f`` builds the
one-at-a-time tables on every (1/f)-th ω of the grid only and scales their times up by the grid's size over
theirs: said in ``params``). ``ratio`` = batched / one at a time, both on 1 worker. Agreement (exit status 1 otherwise): every
cell of the batched table equals the one-at-a-time table's (every posterior parameter to 1e-8 relative) — each
cell stops after the same sweeps alone or batched (:func:`fgraph.models.mixtures.gmm.fit_gmm_copies`).

    python -m benchmarks.gmm --tvb            # N = 3000, 100 ω, B = 100 (tens of minutes)
    python -m benchmarks.gmm --tvb --quick    # N = 400, 10 ω, B = 10
"""
from __future__ import annotations

import argparse
import json
import sys
import warnings

import numpy as np

import fgraph as fg
from benchmarks.timing import alternating_medians
from fgraph.models.mixtures import (build_gmm, fit_gmm, gmm_schedule, initial_responsibilities,
                                    sklearn_lower_bound_offset)

SEED = 20240601
K, D, ITERATIONS = 5, 2, 100
RESPONSIBILITY_TOLERANCE = 1e-6
BOUND_TOLERANCE = 1e-8


def simulate(n: int, dim: int = D) -> np.ndarray:
    """N points in ``dim`` dimensions: the first two as described above; for ``dim`` > 2 each component has
    its own mean in the other coordinates, drawn from N(0, 2²) (a second generator, seed + 1), and unit
    variance there, independent of the first two."""
    rng = np.random.default_rng(SEED)
    means = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0], [4.0, 4.0], [2.0, 2.0]])
    labels = rng.choice(K, size=n, p=[0.3, 0.2, 0.2, 0.15, 0.15])
    covariances = np.array([[[1.0, 0.3], [0.3, 0.5]], [[0.5, 0.0], [0.0, 0.5]], [[0.8, -0.2], [-0.2, 0.6]],
                            [[0.4, 0.1], [0.1, 0.9]], [[0.3, 0.0], [0.0, 0.3]]])
    noise = np.einsum("nij,nj->ni", np.linalg.cholesky(covariances[labels]), rng.standard_normal((n, 2)))
    points = means[labels] + noise
    if dim > 2:
        more = np.random.default_rng(SEED + 1)
        extra_means = more.normal(0.0, 2.0, size=(K, dim - 2))
        points = np.column_stack([points, extra_means[labels] + more.standard_normal((n, dim - 2))])
    return points


def ours(X, start) -> dict:
    """What a user pays: build, compile, 100 sweeps, read."""
    fit = fit_gmm(build_gmm(X, K), start, iterations=ITERATIONS, tol=None)
    return {"responsibilities": fit.posteriors()["responsibilities"][0], "elbo": fit.elbo[:, 0]}


def ours_run(plan) -> dict:
    result = fg.run(plan, iterations=ITERATIONS)
    return {"responsibilities": np.asarray(result.marginal("z").probabilities),
            "elbo": -np.asarray(result.free_energy, dtype=float)}


def sklearn_fit(X) -> dict:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.mixture import BayesianGaussianMixture

    model = BayesianGaussianMixture(n_components=K, weight_concentration_prior_type="dirichlet_distribution",
                                    covariance_type="full", reg_covar=0.0, max_iter=ITERATIONS, tol=0.0,
                                    init_params="kmeans", random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X)
    return {"responsibilities": model.predict_proba(X), "lower_bound": model.lower_bound_}


def bayespy_fit(X, start) -> float:
    """BayesPy's VB Gaussian mixture (mean field over means and precisions), 100 iterations; its lower bound."""
    from bayespy.inference import VB
    from bayespy.nodes import Categorical, Dirichlet, Gaussian, Mixture, Wishart

    n = len(X)
    alpha = Dirichlet(np.full(K, 1.0 / K))
    z = Categorical(alpha, plates=(n,))
    dim = X.shape[1]
    mu = Gaussian(X.mean(axis=0), np.eye(dim), plates=(K,))
    precision = Wishart(dim, np.cov(X.T), plates=(K,))
    y = Mixture(z, Gaussian, mu, precision)
    y.observe(X)
    z.initialize_from_value(start.argmax(axis=1))
    vb = VB(y, mu, precision, z, alpha)
    vb.update(mu, precision, alpha, repeat=1, verbose=False)
    vb.update(repeat=ITERATIONS - 1, verbose=False, tol=0.0)
    return float(vb.compute_lowerbound())


TABLE_PARAMETERS = {"full": {"N": 3000, "grid": 100, "B": 100}, "quick": {"N": 400, "grid": 10, "B": 10}}
TABLE_BLOCK = 64
TABLE_TOLERANCE = 1e-8
TABLE_FIELDS = ("alpha", "mean", "precision_scale", "scale", "df")


def tvb_table_timings(quick: bool, single_fraction: float = 1.0) -> dict:
    """The TVB table built batched and one fit at a time, on 1 and 2 workers (module docstring); the JSON fields."""
    import time

    from fgraph_experiments.gmm_tvb import simulate
    from fgraph.models.tvb import build_tvb_table, omega_grid

    size = TABLE_PARAMETERS["quick" if quick else "full"]
    X = simulate(size["N"], 0, 0)
    grid = omega_grid(size["grid"], 0.001)
    stride = max(1, int(round(1.0 / single_fraction)))
    rows = np.arange(0, grid.size, stride)  # every stride-th ω: small and large powers alike
    single_grid = grid[rows]
    scale_up = grid.size / single_grid.size

    def build(values, block_size, jobs):
        started = time.perf_counter()
        table = build_tvb_table(X, 2, grid=values, n_bootstrap=size["B"], seed=1, block_size=block_size, n_jobs=jobs,
                                progress=False)
        return time.perf_counter() - started, table

    build(grid[:2], TABLE_BLOCK, 1)  # warm-up: imports, the first compiles
    times, tables = {}, {}
    for name, values, block, jobs in (("batched_1", grid, TABLE_BLOCK, 1), ("batched_2", grid, TABLE_BLOCK, 2),
                                      ("single_1", single_grid, 1, 1), ("single_2", single_grid, 1, 2)):
        times[name], tables[name] = build(values, block, jobs)
        if name.startswith("single"):
            times[name] *= scale_up
    difference = max(float(np.max(np.abs(getattr(tables[batched], key)[rows] - getattr(tables[single], key))
                                  / np.maximum(np.abs(getattr(tables[single], key)), 1e-300)))
                     for key in TABLE_FIELDS for batched, single in (("batched_1", "single_1"), ("batched_2", "single_2")))
    same_workers = max(float(np.max(np.abs(getattr(tables["batched_1"], key) - getattr(tables["batched_2"], key))))
                       for key in TABLE_FIELDS)
    cells = grid.size * (size["B"] + 2)
    return {
        "benchmark": "gmm_tvb_table", "ours_s": times["batched_1"], "peer": "one fit at a time, 1 worker",
        "peer_s": times["single_1"], "ratio": times["batched_1"] / times["single_1"],
        "batched_1_worker_s": times["batched_1"], "batched_2_workers_s": times["batched_2"],
        "one_at_a_time_1_worker_s": times["single_1"], "one_at_a_time_2_workers_s": times["single_2"],
        "ms_per_cell": {name: 1000 * value / cells for name, value in times.items()},
        "agree": bool(difference <= TABLE_TOLERANCE and same_workers == 0.0),
        "max_rel_difference_batched_vs_single": difference, "max_difference_1_vs_2_workers": same_workers,
        "sweeps_per_cell_mean": float(np.mean(tables["batched_1"].iterations)),
        "params": {**size, "cells": cells, "block_size": TABLE_BLOCK, "quick": quick,
                   "one_at_a_time_on": f"{single_grid.size} of {grid.size} ω values, times scaled by {scale_up:g}"},
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 10^4, 2 repeats (with --tvb: N = 400, 10 ω, B = 10)")
    parser.add_argument("--size", type=int, default=None, help="another number of points")
    parser.add_argument("--dim", type=int, default=D, help="dimensions D of the points (default 2)")
    parser.add_argument("--repeats", type=int, default=None, help="timed repeats (default 3, quick 2)")
    parser.add_argument("--tvb", action="store_true", help="time the TVB table's construction instead")
    parser.add_argument("--single-fraction", type=float, default=1.0,
                        help="with --tvb: build the one-at-a-time tables on every (1/f)-th ω of the grid, times scaled")
    arguments = parser.parse_args(argv)
    if arguments.tvb:
        line = tvb_table_timings(arguments.quick, arguments.single_fraction)
        print(json.dumps(line))
        return 0 if line["agree"] else 1
    n = arguments.size or (10**4 if arguments.quick else 10**5)
    repeats = arguments.repeats or (2 if arguments.quick else 3)
    if arguments.dim < 2:
        parser.error(f"--dim must be at least 2, got {arguments.dim}")
    X = simulate(n, arguments.dim)
    start = initial_responsibilities(X, K, "kmeans", random_state=0)[0]  # scikit-learn's start for random_state=0
    network = build_gmm(X, K)
    plan = fg.compile(network.model, algorithm="vmp", schedule=gmm_schedule(), init={"z": fg.Categorical(start)})
    calls = {"ours": lambda: ours(X, start), "ours_run": lambda: ours_run(plan), "sklearn": lambda: sklearn_fit(X),
             "bayespy": lambda: bayespy_fit(X, start)}
    for call in calls.values():
        call()  # warm-up
    times, results = alternating_medians(calls, repeats)
    responsibility_difference = float(np.max(np.abs(results["ours"]["responsibilities"]
                                                    - results["sklearn"]["responsibilities"])))
    offset = sklearn_lower_bound_offset(network.priors, n)
    expected = results["sklearn"]["lower_bound"] + offset
    bound_difference = float(abs(results["ours"]["elbo"][-1] - expected) / abs(expected))
    run_difference = float(np.max(np.abs(results["ours_run"]["responsibilities"] - results["ours"]["responsibilities"])))
    agree = bool(responsibility_difference <= RESPONSIBILITY_TOLERANCE and bound_difference <= BOUND_TOLERANCE
             and run_difference <= RESPONSIBILITY_TOLERANCE)
    fastest = min(("sklearn", "bayespy"), key=lambda name: times[name])
    line = {
        "benchmark": "gmm", "ours_s": times["ours"], "ours_run_s": times["ours_run"], "peer": fastest,
        "peer_s": times[fastest], "ratio": times["ours"] / times[fastest],
        "ratio_run_only": times["ours_run"] / times[fastest], "sklearn_s": times["sklearn"],
        "bayespy_s": times["bayespy"], "agree": agree,
        "max_responsibility_difference": responsibility_difference, "rel_lower_bound_difference": bound_difference,
        "ms_per_iteration": {name: 1000 * times[name] / ITERATIONS for name in calls},
        "params": {"N": n, "K": K, "D": arguments.dim, "iterations": ITERATIONS, "repeats": repeats, "quick": arguments.quick,
                   "bayespy_posterior": "mean field q(mu) q(Lambda), not compared"},
    }
    print(json.dumps(line))
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())

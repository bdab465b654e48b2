"""Bayesian linear regression with known precisions: ours (exact BP) against scikit-learn's ``BayesianRidge``.

    w ~ N(0, λ⁻¹ I),   y_n ~ N(x_nᵀ w, α⁻¹),   n = 1..N,

posterior N(μ, Σ), Σ = (λ I + α XᵀX)⁻¹, μ = α Σ Xᵀy. The peer is the estimator a user picks for this model:
``BayesianRidge(fit_intercept=False, max_iter=1)``, whose ``coef_`` and ``sigma_`` are the posterior at its own
final ``alpha_`` (noise precision α) and ``lambda_`` (prior precision λ) — one SVD of X and two solves; ours is
given the same α and λ and must give the same mean and covariance (relative difference ≤ 1e-9).

Ours, what a user pays (the model built from the data, compiled, run, the marginal of w read):

* ``default``: ``fg.infer(model)`` — the sweep computes what the evidence needs (the N likelihood messages
  into w, summed as ``Xᵀ(y α)`` and ``α XᵀX``); the N marginals of the plate f_n = x_nᵀ w would be computed
  only if read;
* ``marginals=["w"]``: ``fg.run(fg.compile(model, marginals=["w"]))`` — the same sweep, asked for by name.

The numpy closed form (``np.linalg.solve`` on λ I + α XᵀX, one pass over X) is timed too, as the floor.
``ratio`` is the default against the peer. Timing: ``time.perf_counter``; the calls alternate within each
repeat (3 repeats, quick 2) after one untimed call of each, medians. The last line is one JSON object (``docs/benchmarks.md``).

    python -m benchmarks.linear_regression            # N = 10^5, d = 20
    python -m benchmarks.linear_regression --quick    # N = 10^4, d = 20
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np

import fgraph as fg
from benchmarks.timing import alternating_medians
from fgraph.nodes import MvNormal, Normal
from fgraph.nodes.dot import Dot

AGREEMENT = 1e-9  # relative difference of the posterior mean and covariance


def simulate(N: int, d: int, seed: int = 0) -> tuple:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, d))
    y = X @ rng.normal(size=d) + rng.normal(0.0, 0.5, N)
    return X, y


def peer(X, y) -> dict:
    """scikit-learn's BayesianRidge: the posterior at its final α (``alpha_``) and λ (``lambda_``)."""
    from sklearn.linear_model import BayesianRidge

    fitted = BayesianRidge(fit_intercept=False, max_iter=1).fit(X, y)
    return {"mean": fitted.coef_, "cov": fitted.sigma_, "alpha": float(fitted.alpha_),
            "lambda": float(fitted.lambda_)}


def model(X, y, alpha: float, lam: float) -> fg.Model:
    d = X.shape[1]
    with fg.Model() as built:
        w = MvNormal("w", mean=np.zeros(d), cov=np.eye(d) / lam)
        f = Dot("f", X, w)
        Normal("y", mean=f, var=1.0 / alpha, observed=y)
    return built


def ours(X, y, alpha: float, lam: float, marginals=None) -> dict:
    """Build, compile, run, read q(w): ``marginals=None`` is the default ``fg.infer``."""
    built = model(X, y, alpha, lam)
    if marginals is None:
        result = fg.infer(built)
    else:
        result = fg.run(fg.compile(built, marginals=marginals))
    q = result.marginal("w")
    return {"mean": np.asarray(q.mean), "cov": np.asarray(q.cov)}


def closed_form(X, y, alpha: float, lam: float) -> dict:
    precision = lam * np.eye(X.shape[1]) + alpha * (X.T @ X)
    cov = np.linalg.inv(precision)
    return {"mean": cov @ (alpha * (X.T @ y)), "cov": cov}


def relative_difference(a: dict, b: dict) -> float:
    return max(float(np.max(np.abs(a[key] - b[key])) / np.max(np.abs(b[key]))) for key in ("mean", "cov"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 10^4")
    parser.add_argument("--size", type=int, default=None, help="N (default 10^5; quick 10^4)")
    parser.add_argument("--dim", type=int, default=20, help="d")
    parser.add_argument("--repeats", type=int, default=None)
    arguments = parser.parse_args(argv)
    N = arguments.size or (10_000 if arguments.quick else 100_000)
    d, repeats = arguments.dim, arguments.repeats or (2 if arguments.quick else 3)
    X, y = simulate(N, d)
    reference = peer(X, y)
    alpha, lam = reference["alpha"], reference["lambda"]
    calls = {"peer": lambda: peer(X, y), "default": lambda: ours(X, y, alpha, lam),
             "marginals_w": lambda: ours(X, y, alpha, lam, marginals=["w"]),
             "numpy": lambda: closed_form(X, y, alpha, lam)}
    for call in calls.values():  # imports, the registry's rules, BLAS threads: not what a fit costs
        call()
    times, results = alternating_medians(calls, repeats)
    differences = {name: relative_difference(results[name], results["peer"])
                   for name in ("default", "marginals_w", "numpy")}
    agree = all(value <= AGREEMENT for value in differences.values())
    line = {"benchmark": "linear_regression", "ours_s": times["default"], "peer": "sklearn BayesianRidge",
            "peer_s": times["peer"], "ratio": times["default"] / times["peer"], "agree": agree,
            "marginals_w_s": times["marginals_w"], "ratio_marginals_w": times["marginals_w"] / times["peer"],
            "numpy_closed_form_s": times["numpy"], "relative_difference": differences,
            "params": {"N": N, "d": d, "alpha": alpha, "lambda": lam, "repeats": repeats}}
    print(json.dumps(line))
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())

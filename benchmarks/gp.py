"""Binary GP classification with fixed hyperparameters: ours (the ``moment`` likelihood approximation, exact GP
regression on the graph) against scikit-learn's ``GaussianProcessClassifier`` (Laplace), and one evaluation of the
sparse GP's bound and gradient at N = 10^5.

Data: N training and 1,000 test points in d = 10 dimensions, x ~ N(0, I), labels from a smooth latent function
(``y = 1[sin(x₁) + x₂ x₃ / 2 + 0.3 ε > 0]``). Both classifiers use an exponentiated-quadratic kernel
``σ² exp(−r²/2ℓ²)``, and what is timed is the fit at fixed hyperparameters (``optimizer=None``) plus
``predict_proba`` on the test points. The hyperparameters are set once, untimed, the way each model's user would
set them: each classifier maximises its own evidence on 1,000 other points of the same distribution (quick: 300)
— the approximate model's evidence for ours, the Laplace evidence for the peer — so that neither runs at the
other's optimum.

* Ours: ``GPClassifier(method="moment", optimizer=None, learn_mean=False)`` at those values (the prior mean is the
  pseudo-observations' mean) — the labels' pseudo-observations, one Cholesky factorisation of ``K + diag(ṽ)`` for the exact posterior and evidence, and
  the predictive by quadrature.
* Peer: ``GaussianProcessClassifier(kernel, optimizer=None)`` at its values — Newton iterations of the Laplace
  approximation, one N × N Cholesky factorisation each.

The models differ (a Gaussian likelihood approximation against the logistic likelihood's Laplace approximation),
so ``agree`` compares what a user judges them by: the test NLL of ours within 2 % of the peer's (or lower), and
the accuracy within 1 point. ``ratio`` is ours / peer at the largest N. ``--method`` runs another approximation.

The sparse GP: one evaluation of Titsias' bound and its gradient (:mod:`fgraph.models.gp.sparse`) with M = 500
inducing inputs at N = 10^5 (``sparse_s``), the pseudo-observations of the same kind of labels.

Timing: ``time.perf_counter``; one untimed call of each, then the calls alternate within each repeat (3, quick 2),
medians. The last line is one JSON object (``docs/benchmarks.md``).

    python -m benchmarks.gp            # N = 2,000 and 5,000; sparse N = 10^5, M = 500
    python -m benchmarks.gp --quick    # N = 500 and 1,000; sparse N = 10^4, M = 200
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from benchmarks.timing import alternating_medians
from fgraph.families.kernels import ExponentiatedQuadratic
from fgraph.metrics import accuracy, log_predictive_density

NLL_TOLERANCE = 0.02  # relative: ours may be at most 2 % worse than the peer
ACCURACY_TOLERANCE = 0.01
VARIANCE = 2.0


def simulate(N: int, d: int, seed: int = 0) -> tuple:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, d))
    latent = np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=N)
    return X, (latent > 0).astype(int)


def select_hyperparameters(X, y, method: str) -> dict:
    """Each model's own evidence-optimal hyperparameters on ``X``, ``y`` (untimed set-up, module docstring)."""
    from sklearn.gaussian_process import GaussianProcessClassifier
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel

    from fgraph.models.gp import GPClassifier

    start = np.sqrt(X.shape[1])
    fitted = GPClassifier(kernel=ExponentiatedQuadratic(VARIANCE, start), method=method, inducing_points=None).fit(X, y)
    reference = GaussianProcessClassifier(ConstantKernel(VARIANCE) * RBF(start), random_state=0).fit(X, y)
    return {"ours_kernel": fitted.kernel_, "peer_kernel": reference.kernel_}


def ours(X, y, X_test, setting: dict, method: str) -> np.ndarray:
    from fgraph.models.gp import GPClassifier

    fitted = GPClassifier(kernel=setting["ours_kernel"], method=method, optimizer=None, learn_mean=False,
                          inducing_points=None).fit(X, y)
    return fitted.predict_proba(X_test)


def peer(X, y, X_test, setting: dict) -> np.ndarray:
    from sklearn.gaussian_process import GaussianProcessClassifier

    return GaussianProcessClassifier(setting["peer_kernel"], optimizer=None).fit(X, y).predict_proba(X_test)


def sparse_evaluation(N: int, M: int, d: int) -> dict:
    """One bound-and-gradient evaluation of the sparse GP: seconds and the bound."""
    from fgraph.models.gp import pseudo_observations, sparse_gp_posterior, sparse_log_evidence_gradients

    X, y = simulate(N, d, seed=1)
    targets, variances = pseudo_observations(y, 2, "moment", 0.1)
    inducing = X[np.random.default_rng(2).choice(N, M, replace=False)]
    kernel = ExponentiatedQuadratic(VARIANCE, np.sqrt(d))
    started = time.perf_counter()
    posterior = sparse_gp_posterior(X, targets, variances, kernel, inducing, targets.mean(axis=1))
    gradients = sparse_log_evidence_gradients(posterior)
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "bound": posterior.log_evidence, "gradient": gradients.kernel.tolist()}


def compare(N: int, d: int, test_size: int, repeats: int, setting: dict, method: str) -> dict:
    X, y = simulate(N + test_size, d)
    X_train, y_train, X_test, y_test = X[:N], y[:N], X[N:], y[N:]
    calls = {"ours": lambda: ours(X_train, y_train, X_test, setting, method),
             "peer": lambda: peer(X_train, y_train, X_test, setting)}
    for call in calls.values():  # imports, BLAS threads: not what a fit costs
        call()
    times, results = alternating_medians(calls, repeats)
    nll = {name: -log_predictive_density(results[name], y_test) for name in calls}
    correct = {name: accuracy(results[name], y_test) for name in calls}
    agree = (nll["ours"] <= nll["peer"] * (1 + NLL_TOLERANCE)
             and correct["ours"] >= correct["peer"] - ACCURACY_TOLERANCE)
    return {"N": N, "ours_s": times["ours"], "peer_s": times["peer"], "ratio": times["ours"] / times["peer"],
            "nll": nll, "accuracy": correct, "agree": agree}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 500 and 1,000; sparse N = 10^4, M = 200")
    parser.add_argument("--sizes", type=int, nargs="+", default=None, help="training sizes N")
    parser.add_argument("--sparse-size", type=int, default=None, help="N of the sparse evaluation")
    parser.add_argument("--inducing", type=int, default=None, help="M of the sparse evaluation")
    parser.add_argument("--dim", type=int, default=10, help="d")
    parser.add_argument("--test-size", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--method", default="moment", help="the likelihood approximation (default moment)")
    parser.add_argument("--selection-size", type=int, default=None,
                        help="points on which the hyperparameters are set (default 1,000; quick 300)")
    arguments = parser.parse_args(argv)
    sizes = arguments.sizes or ([500, 1000] if arguments.quick else [2000, 5000])
    sparse_size = arguments.sparse_size or (10_000 if arguments.quick else 100_000)
    inducing = arguments.inducing or (200 if arguments.quick else 500)
    repeats = arguments.repeats or (2 if arguments.quick else 3)
    selection = arguments.selection_size or (300 if arguments.quick else 1000)
    X_select, y_select = simulate(selection, arguments.dim, seed=3)
    setting = select_hyperparameters(X_select, y_select, arguments.method)
    rows = [compare(N, arguments.dim, arguments.test_size, repeats, setting, arguments.method) for N in sizes]
    for row in rows:
        print(json.dumps({"size": row["N"], "ours_s": row["ours_s"], "peer_s": row["peer_s"],
                          "ratio": row["ratio"], "nll": row["nll"], "accuracy": row["accuracy"]}))
    sparse_evaluation(min(sparse_size, 2000), min(inducing, 50), arguments.dim)  # warm-up
    sparse = sparse_evaluation(sparse_size, inducing, arguments.dim)
    largest = rows[-1]
    agree = all(row["agree"] for row in rows) and bool(np.isfinite(sparse["bound"]))
    line = {"benchmark": "gp", "ours_s": largest["ours_s"], "peer": "sklearn GaussianProcessClassifier (Laplace)",
            "peer_s": largest["peer_s"], "ratio": largest["ratio"], "agree": agree,
            "sizes": {str(row["N"]): {key: row[key] for key in ("ours_s", "peer_s", "ratio", "nll", "accuracy")}
                      for row in rows},
            "sparse_s": sparse["seconds"], "sparse_bound": sparse["bound"],
            "params": {"sizes": sizes, "d": arguments.dim, "test_size": arguments.test_size, "repeats": repeats,
                       "sparse_N": sparse_size, "sparse_M": inducing, "method": arguments.method, "alpha_epsilon": 0.1,
                       "selection_size": selection, "ours_kernel": repr(setting["ours_kernel"]), "peer_kernel": repr(setting["peer_kernel"])}}
    print(json.dumps(line))
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())

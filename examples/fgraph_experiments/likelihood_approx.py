"""Gaussian likelihood approximations for classification (Bui, "Likelihood approximations via Gaussian approximate
inference", §3, §4 and Appendix A): how well the four Gaussians fit the transformed densities, and what they do to
Bayesian (multinomial) logistic regression against the exact model by Pólya-Gamma VMP.

Three parts:

1. **Densities** (the paper's Fig. 1). Gamma(α, 1) in the log basis for α = 1.1 and 10, and Beta(a, b) in the
   logit basis for (a, b) = (1.1, 0.1) and (10, 5), each approximated by the four Gaussians of
   :mod:`fgraph.families.basis_matching` (``laplace``, ``variational``, ``moment``, ``moment-original``).
   ``density.png`` is 2 × 4: columns the four shapes; the top row the original basis (the Gamma / Beta density
   and the approximations pushed back, i.e. log-normal / logit-normal densities, on a log y axis), the bottom row
   the transformed basis (the exact p_ψ and the four Gaussians). The table gives, per shape and method, the
   Gaussian's mean and variance and KL(p‖q), KL(q‖p), computed by ``scipy.integrate.quad`` on the transformed
   density in log space (log p_ψ and log q are evaluated in closed form; the integrals are split at the mode and at
   ±k standard deviations). The row "exact" gives the Appendix A moments of p_ψ (digamma / trigamma) next to the
   same moments by quadrature, a check of the quadrature.

2. **Classification.** Binary data sets (breast_cancer, banknote, sonar, rice) with
   :class:`~fgraph.models.logistic.binary.BayesianLogisticRegression`, multiclass ones (iris, vehicle,
   waveform) with :class:`~fgraph.models.logistic.multinomial.MultinomialLogisticRegression`
   (prior N(0, 25 I) on every coefficient and intercept, the estimators' default). Every split is a stratified
   train/test split with 30 % of the rows as the test set (:func:`fgraph.datasets.train_test_splits`, seeded by
   ``[seed, split, crc32(name)]``, stored in the summary), the features z-scored with the training statistics.
   Methods:

   * ``polya-gamma``: the exact model by VMP with Pólya-Gamma augmentation (stick-breaking for multiclass);
   * ``laplace``, ``variational``, ``moment``, ``moment-original``: the Gaussian likelihood approximations (exact
     Bayesian linear regression on the pseudo-observations; the multiclass predictive E[softmax] by 4000 common
     Monte Carlo draws). **α_ε is chosen** per split from the grid {0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0} by the
     training-set log-likelihood (the paper's choice, after Milios et al. 2018): the mean log predictive
     probability of the training labels, ``mean_n log p(y_n | x_n, D)`` under the fitted model's own predictive
     (the argmax; the first grid value on ties). Binary: β_ε = α_ε.
   * ``gauss``: Bayesian linear regression (same prior) on the one-hot labels — binary: on y ∈ {0, 1} — with a
     homoscedastic noise variance chosen from {0.01, 0.1, 1} by the same training log-likelihood. A regression
     is not a classifier, so **its class probabilities are a convention**: the predictive means (binary:
     (1 − m, m)) clipped to [1e-6, 1] and renormalised per row. They are not calibrated probabilities.
   * ``sklearn``: scikit-learn's ``LogisticRegression()`` (L2, C = 1, a point estimate; ``max_iter=1000`` so that
     lbfgs converges on every split), a reference.

   Test metrics: accuracy, NLL (mean −log p of the true class, probabilities floored at 1e-12 as
   :func:`fgraph.metrics.log_predictive_density` does), ECE with 20 bins, and the seconds of the one fit at the
   chosen hyper-parameter (the grid search costs about seven of those plus the predictions); mean ± sd (sample
   sd) over splits.

3. **Gap to Pólya-Gamma vs α_ε** on breast_cancer (binary) and iris (multiclass), whichever of the two are run:
   for each approximation and every α_ε of the grid, the test NLL and the mean absolute difference of the test
   predictive probabilities to those of the Pólya-Gamma fit on the same split (mean over test points and classes;
   for binary that is |p₁ − p₁^PG|), mean over splits; ``gap.png``. For multiclass the reference is the
   stick-breaking model, not the softmax one, so part of the gap is the difference of the models.

Options: ``--splits R`` (default 5; ``--quick``: 1), ``--datasets NAME …`` (a subset of the seven; an unknown
name is a :class:`fgraph.errors.DatasetError`), ``--seed`` (default 0).

``--quick``: breast_cancer and iris only, 1 split, the training set subsampled (stratified) to at most 200 points;
the test set is still 30 % of the data. Seconds on one core.

Outputs in ``out``: ``results.md`` (the three tables), ``summary.json`` (everything, including every split's
training log-likelihood over the grid), ``density.png``, ``gap.png`` (without matplotlib: no figures), and
``splits/``: every (data set, split) as JSON as soon as it finishes, so that an interrupted run resumes there and a
rerun with more splits or data sets fits only those (the settings that change a split's numbers are in
``splits/settings.json``; others there are a ``ReplicationsMismatchError``).
"""
from __future__ import annotations

import argparse
import itertools
import math
import time
import warnings
import zlib
from pathlib import Path

import numpy as np

from fgraph.datasets import load_dataset, train_test_splits
from fgraph.errors import DatasetError
from fgraph_experiments import _replications
from fgraph.examples import progress_bar, pyplot, whole_number, write_summary
from fgraph.families.basis_matching import METHODS, beta_logit_basis, gamma_log_basis
from fgraph.metrics import accuracy, expected_calibration_error, log_predictive_density
from fgraph.store import write_figure, write_text

__all__ = [
    "ALPHA_GRID",
    "BINARY",
    "DESCRIPTION",
    "MULTICLASS",
    "NOISE_GRID",
    "GaussLabelRegression",
    "add_arguments",
    "density_table",
    "fit_method",
    "make_split",
    "run",
    "select",
]

DESCRIPTION = ("Gaussian likelihood approximations (laplace, variational, moment, moment-original) of Gamma/Beta "
               "densities and of logistic/softmax classification vs Pólya-Gamma VMP on 7 UCI sets")

BINARY = ("breast_cancer", "banknote", "sonar", "rice")
MULTICLASS = ("iris", "vehicle", "waveform")
DATASETS = BINARY + MULTICLASS
QUICK_DATASETS = ("breast_cancer", "iris")
GAP_DATASETS = ("breast_cancer", "iris")
ALPHA_GRID = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
NOISE_GRID = (0.01, 0.1, 1.0)
CLASSIFIERS = ("polya-gamma",) + METHODS + ("gauss", "sklearn")
APPROXIMATIONS = METHODS
TEST_FRACTION = 0.3
QUICK_MAX_TRAIN = 200
PRIOR_VAR = 25.0
PROBABILITY_FLOOR = 1e-6
ECE_BINS = 20

GAMMA_SHAPES = (1.1, 10.0)
BETA_SHAPES = ((1.1, 0.1), (10.0, 5.0))
COLOURS = {"laplace": "tab:orange", "variational": "tab:green", "moment": "tab:red", "moment-original": "tab:purple",
           "polya-gamma": "black", "gauss": "tab:brown", "sklearn": "tab:gray"}


def add_arguments(parser) -> None:
    """The options of ``fgraph run likelihood-approx``, each refused before the run if the run could not use it."""
    parser.add_argument("--splits", type=whole_number(1), default=None, metavar="R",
                        help="train/test splits per data set (default 5; --quick: 1)")
    parser.add_argument("--datasets", type=dataset_name, nargs="+", default=None, metavar="NAME",
                        help=f"a subset of {', '.join(DATASETS)} (default all; --quick: {' '.join(QUICK_DATASETS)})")
    parser.add_argument("--seed", type=whole_number(0), default=0, help="seed of the splits (default 0)")


def dataset_name(text: str) -> str:
    """``type`` of --datasets: one of :data:`DATASETS` (any case, hyphens for underscores)."""
    try:
        return _check_datasets([text])[0]
    except DatasetError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("likelihood-approx: ")) from None


# ======================================================================== part 1: densities


def _log_density(kind: str, shape, psi):
    """log p_ψ(ψ) of the transformed Gamma(α, 1) (log basis) or Beta(a, b) (logit basis)."""
    from scipy.special import betaln, gammaln, log_expit

    psi = np.asarray(psi, dtype=float)
    if kind == "gamma":
        a = shape
        return a * psi - np.exp(psi) - gammaln(a)
    a, b = shape
    return a * log_expit(psi) + b * log_expit(-psi) - betaln(a, b)


def _exact_moments(kind: str, shape) -> tuple:
    """Appendix A: E[ψ], V[ψ] of p_ψ (digamma / trigamma)."""
    from scipy.special import digamma, polygamma

    if kind == "gamma":
        return float(digamma(shape)), float(polygamma(1, shape))
    a, b = shape
    return float(digamma(a) - digamma(b)), float(polygamma(1, a) + polygamma(1, b))


def _gaussian(kind: str, shape, method: str) -> tuple:
    if kind == "gamma":
        mean, variance = gamma_log_basis(shape, 1.0, method)
    else:
        mean, variance = beta_logit_basis(shape[0], shape[1], method)
    return float(mean), float(variance)


def _log_normal_pdf(psi, mean, variance):
    return -0.5 * np.log(2.0 * np.pi * variance) - 0.5 * (np.asarray(psi) - mean) ** 2 / variance


def _integrate(f, centre: float, scale: float) -> float:
    """∫ f over ℝ by ``quad``, split at ``centre`` and ``centre ± 10·scale``, ``± 60·scale`` (finite pieces where the
    mass is, infinite tails beyond)."""
    from scipy.integrate import quad

    cuts = [centre + k * scale for k in (-60.0, -10.0, 0.0, 10.0, 60.0)]
    total = quad(f, -np.inf, cuts[0], limit=200)[0] + quad(f, cuts[-1], np.inf, limit=200)[0]
    for low, high in itertools.pairwise(cuts):
        total += quad(f, low, high, limit=200)[0]
    return float(total)


def _kl_divergences(kind: str, shape, mean: float, variance: float) -> tuple:
    """KL(p‖q) and KL(q‖p) for p = p_ψ, q = N(mean, variance), by quadrature on ψ (integrands in log space)."""
    exact_mean, exact_variance = _exact_moments(kind, shape)

    def log_p(psi):
        return float(_log_density(kind, shape, psi))

    def log_q(psi):
        return float(_log_normal_pdf(psi, mean, variance))

    def p_term(psi):
        lp = log_p(psi)
        return 0.0 if lp < -745.0 else math.exp(lp) * (lp - log_q(psi))

    def q_term(psi):
        lq = log_q(psi)
        return 0.0 if lq < -745.0 else math.exp(lq) * (lq - log_p(psi))

    kl_pq = _integrate(p_term, exact_mean, math.sqrt(exact_variance))
    kl_qp = _integrate(q_term, mean, math.sqrt(variance))
    return kl_pq, kl_qp


def _quadrature_moments(kind: str, shape) -> tuple:
    """Mass, mean and variance of p_ψ by the same quadrature (a check of it against Appendix A)."""
    centre, variance = _exact_moments(kind, shape)
    scale = math.sqrt(variance)

    def density(psi):
        return math.exp(float(_log_density(kind, shape, psi)))

    mass = _integrate(density, centre, scale)
    mean = _integrate(lambda psi: psi * density(psi), centre, scale)
    second = _integrate(lambda psi: (psi - mean) ** 2 * density(psi), centre, scale)
    return mass, mean, second


def _shapes() -> list:
    return ([("gamma", a, f"Gamma({a:g}, 1)") for a in GAMMA_SHAPES] +
            [("beta", ab, f"Beta({ab[0]:g}, {ab[1]:g})") for ab in BETA_SHAPES])


def density_table() -> dict:
    """Per shape: the exact moments (Appendix A and by quadrature) and per method mean, variance, KL(p‖q), KL(q‖p)."""
    table = {}
    for kind, shape, label in _shapes():
        exact_mean, exact_variance = _exact_moments(kind, shape)
        mass, quad_mean, quad_variance = _quadrature_moments(kind, shape)
        entry = {"kind": kind, "shape": list(np.atleast_1d(shape).astype(float)),
                 "basis": "log" if kind == "gamma" else "logit",
                 "exact": {"mean": exact_mean, "variance": exact_variance, "mass_quadrature": mass,
                           "mean_quadrature": quad_mean, "variance_quadrature": quad_variance},
                 "methods": {}}
        for method in METHODS:
            mean, variance = _gaussian(kind, shape, method)
            kl_pq, kl_qp = _kl_divergences(kind, shape, mean, variance)
            entry["methods"][method] = {"mean": mean, "variance": variance, "kl_pq": kl_pq, "kl_qp": kl_qp}
        table[label] = entry
    return table


def _density_figure(plt, out: Path) -> str:
    from scipy import stats
    from scipy.special import logit

    fig, axes = plt.subplots(2, 4, figsize=(17, 7.5))
    for column, (kind, shape, label) in enumerate(_shapes()):
        gaussians = {m: _gaussian(kind, shape, m) for m in METHODS}
        top, bottom = axes[0, column], axes[1, column]
        # transformed basis: from the 1e-4 / 1 − 1e-4 quantiles of p_ψ, widened to hold every q within ±3 sd
        if kind == "gamma":
            low = math.log(stats.gamma.ppf(1e-4, shape))
            high = math.log(stats.gamma.isf(1e-4, shape))
        else:
            a, b = shape
            low = math.log(stats.beta.ppf(1e-4, a, b)) - math.log(stats.beta.isf(1e-4, b, a))
            high = math.log(stats.beta.isf(1e-4, a, b)) - math.log(stats.beta.ppf(1e-4, b, a))
        low = min([low] + [m - 3 * math.sqrt(v) for m, v in gaussians.values()])
        high = max([high] + [m + 3 * math.sqrt(v) for m, v in gaussians.values()])
        psi = np.linspace(low, high, 800)
        bottom.plot(psi, np.exp(_log_density(kind, shape, psi)), color="black", lw=2.2, label="exact p_ψ")
        for method, (mean, variance) in gaussians.items():
            bottom.plot(psi, np.exp(_log_normal_pdf(psi, mean, variance)), color=COLOURS[method], lw=1.3,
                        label=method)
        bottom.set_xlabel("ψ = log ω" if kind == "gamma" else "ψ = logit ω")
        bottom.set_title(f"{label}, {'log' if kind == 'gamma' else 'logit'} basis")
        # original basis: the density of ω and of g⁻¹(ψ) for ψ ~ q (log-normal / logit-normal)
        if kind == "gamma":
            omega = np.linspace(1e-4, stats.gamma.isf(1e-3, shape) * 1.3, 800)
            top.plot(omega, stats.gamma.pdf(omega, shape), color="black", lw=2.2, label="exact")
            transformed, jacobian = np.log(omega), 1.0 / omega
        else:
            omega = np.linspace(1e-4, 1 - 1e-4, 800)
            top.plot(omega, stats.beta.pdf(omega, *shape), color="black", lw=2.2, label="exact")
            transformed, jacobian = logit(omega), 1.0 / (omega * (1.0 - omega))
        for method, (mean, variance) in gaussians.items():
            top.plot(omega, np.exp(_log_normal_pdf(transformed, mean, variance)) * jacobian, color=COLOURS[method],
                     lw=1.3, label=method)
        top.set_yscale("log")
        exact_top = stats.gamma.pdf(omega, shape) if kind == "gamma" else stats.beta.pdf(omega, *shape)
        top.set_ylim(max(exact_top.max() * 1e-4, 1e-6), exact_top.max() * 5)
        top.set_xlabel("ω")
        top.set_title(f"{label}, original basis (log scale)")
    axes[0, 0].set_ylabel("density of ω")
    axes[1, 0].set_ylabel("density of ψ")
    axes[1, 0].legend(fontsize=8)
    fig.tight_layout()
    path = out / "density.png"
    write_figure(path, fig, dpi=110)
    plt.close(fig)
    return path.name


# ======================================================================== part 2: classification


class GaussLabelRegression:
    """Bayesian linear regression on the labels (one-hot; binary: y ∈ {0, 1}), prior N(0, prior_var I) on every
    coefficient and intercept, known noise variance; class probabilities = predictive means clipped to
    [1e-6, 1] and renormalised per row (binary: (1 − m, m)). Labels must be 0..K−1."""

    def __init__(self, noise_variance: float = 0.1, prior_var: float = PRIOR_VAR):
        self.noise_variance = noise_variance
        self.prior_var = prior_var

    def fit(self, X, y):
        from fgraph.models.logistic import observe_linear

        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=np.int64)
        self.n_classes_ = int(y.max()) + 1
        targets = y[:, None].astype(float) if self.n_classes_ == 2 else (y[:, None] == np.arange(self.n_classes_))
        rows = np.column_stack([X, np.ones(len(X))])
        dimension = rows.shape[1]
        variances = np.full(len(X), float(self.noise_variance))
        fits = [observe_linear(np.zeros(dimension), self.prior_var * np.eye(dimension), rows,
                               targets[:, k].astype(float), variances) for k in range(targets.shape[1])]
        self.means_ = np.array([f[0] for f in fits])  # (outputs, D); the covariances are shared and unused here
        return self

    def predictive_means(self, X):
        rows = np.column_stack([np.asarray(X, dtype=float), np.ones(len(X))])
        means = rows @ self.means_.T
        return np.column_stack([1.0 - means[:, 0], means[:, 0]]) if self.n_classes_ == 2 else means

    def predict_proba(self, X):
        clipped = np.clip(self.predictive_means(X), PROBABILITY_FLOOR, 1.0)
        return clipped / clipped.sum(axis=1, keepdims=True)


def _estimator(method: str, n_classes: int, parameter):
    """The estimator of ``method`` (one of :data:`CLASSIFIERS`) at its hyper-parameter (α_ε or the noise variance)."""
    if method == "gauss":
        return GaussLabelRegression(noise_variance=parameter)
    if method == "sklearn":
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(max_iter=1000)
    from fgraph.models.logistic import BayesianLogisticRegression, MultinomialLogisticRegression

    options = {} if method == "polya-gamma" else {"alpha_epsilon": parameter}
    if n_classes == 2:
        return BayesianLogisticRegression(prior_var=PRIOR_VAR, likelihood=method, **options)
    return MultinomialLogisticRegression(prior_var=PRIOR_VAR, likelihood=method, **options)


def fit_method(method: str, split, n_classes: int, parameter=None) -> dict:
    """Fit ``method`` at ``parameter`` on ``split``: the estimator, the training and test probabilities (N, K) and
    the seconds of the fit."""
    estimator = _estimator(method, n_classes, parameter)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings: recorded below (converged_) where the model has them
        estimator.fit(split.X_train, split.y_train)
    seconds = time.perf_counter() - start
    return {"estimator": estimator, "seconds": seconds,
            "train": estimator.predict_proba(split.X_train), "test": estimator.predict_proba(split.X_test)}


def select(log_likelihoods) -> int:
    """Index of the hyper-parameter of highest training log-likelihood (the first on ties)."""
    return int(np.argmax(np.asarray(log_likelihoods, dtype=float)))


def _scores(probabilities, y) -> dict:
    return {"accuracy": accuracy(probabilities, y),
            "nll": -log_predictive_density(probabilities, y),
            "ece": expected_calibration_error(probabilities, y, n_bins=ECE_BINS)}


def split_seed(name: str, seed: int, split: int) -> list:
    """The ``random_state`` of split ``split`` of data set ``name``."""
    return [int(seed), int(split), int(zlib.crc32(name.encode()))]


def make_split(name: str, seed: int, split: int, quick: bool, data=None):
    """The stratified split (z-scored by the training statistics) and its sizes and random state."""
    data = load_dataset(name) if data is None else data
    n = len(data.y)
    n_test = round(TEST_FRACTION * n)
    n_train = n - n_test
    if quick:
        n_train = min(n_train, QUICK_MAX_TRAIN)
    state = split_seed(name, seed, split)
    return train_test_splits(data.X, data.y, [n_train], n_test, random_state=state)[0], state


def _mean_sd(values) -> dict:
    values = np.asarray(values, dtype=float)
    return {"mean": float(values.mean()), "sd": float(values.std(ddof=1)) if values.size > 1 else None}


def _run_split(name: str, data, seed: int, split_index: int, quick: bool) -> dict:
    split, state = make_split(name, seed, split_index, quick, data)
    n_classes = data.n_classes
    record = {"random_state": state, "n_train": split.train_size, "n_test": int(split.test_index.size),
              "methods": {}, "gap": {}}
    reference = fit_method("polya-gamma", split, n_classes)
    record["methods"]["polya-gamma"] = {"parameter": None, **_scores(reference["test"], split.y_test),
                                        "fit_seconds": reference["seconds"],
                                        "converged": bool(reference["estimator"].converged_),
                                        "iterations": int(reference["estimator"].n_iter_)}
    for method in APPROXIMATIONS + ("gauss",):
        grid = NOISE_GRID if method == "gauss" else ALPHA_GRID
        runs = [fit_method(method, split, n_classes, value) for value in grid]
        train_ll = [log_predictive_density(run["train"], split.y_train) for run in runs]
        best = select(train_ll)
        chosen = runs[best]
        record["methods"][method] = {"parameter": grid[best], "grid": list(grid), "train_log_likelihood": train_ll,
                                     **_scores(chosen["test"], split.y_test), "fit_seconds": chosen["seconds"]}
        if method != "gauss":
            record["gap"][method] = {
                "test_nll": [-log_predictive_density(run["test"], split.y_test) for run in runs],
                "mean_abs_difference": [float(np.mean(np.abs(run["test"] - reference["test"]))) for run in runs]}
    sk = fit_method("sklearn", split, n_classes)
    record["methods"]["sklearn"] = {"parameter": None, **_scores(sk["test"], split.y_test),
                                    "fit_seconds": sk["seconds"]}
    return record


def _aggregate(name: str, data, records: list) -> dict:
    summary = {}
    for method in CLASSIFIERS:
        entries = [r["methods"][method] for r in records]
        summary[method] = {metric: _mean_sd([e[metric] for e in entries])
                           for metric in ("accuracy", "nll", "ece", "fit_seconds")}
        summary[method]["chosen"] = [e["parameter"] for e in entries]
    gap = {}
    for method in APPROXIMATIONS:
        nll = np.array([r["gap"][method]["test_nll"] for r in records])
        diff = np.array([r["gap"][method]["mean_abs_difference"] for r in records])
        gap[method] = {"alpha": list(ALPHA_GRID), "test_nll": nll.mean(axis=0).tolist(),
                       "mean_abs_difference": diff.mean(axis=0).tolist(),
                       "mean_abs_difference_sd": (diff.std(axis=0, ddof=1).tolist() if len(records) > 1 else None)}
    return {"dataset": name, "n_classes": int(data.n_classes), "n_features": int(data.X.shape[1]),
            "n_rows": len(data.y), "splits": records, "summary": summary, "gap": gap,
            "polya_gamma_test_nll": summary["polya-gamma"]["nll"]["mean"]}


def _check_datasets(datasets) -> tuple:
    if datasets is None:
        return None
    if isinstance(datasets, str):
        datasets = [datasets]
    names = []
    for name in datasets:
        key = str(name).strip().lower().replace("-", "_")
        if key not in DATASETS:
            raise DatasetError(f"likelihood-approx: unknown data set {name!r}; choose from {', '.join(DATASETS)}")
        if key not in names:
            names.append(key)
    if not names:
        raise DatasetError(f"likelihood-approx: give at least one data set of {', '.join(DATASETS)}")
    return tuple(names)


# ======================================================================== report


def _cell(entry: dict, digits: int = 3) -> str:
    if entry["sd"] is None:
        return f"{entry['mean']:.{digits}f}"
    return f"{entry['mean']:.{digits}f} ± {entry['sd']:.{digits}f}"


def _density_lines(table: dict) -> list:
    lines = ["## 1. Gaussian approximations of the transformed densities", "",
             ("Mean and variance of each Gaussian q in the transformed basis; KL by `scipy.integrate.quad` over ψ "
             "(integrands in log space). Row *exact*: the Appendix A moments of p_ψ, and in brackets the same "
             "moments by quadrature (a check of the quadrature)."), "",
             "| density | method | mean | variance | KL(p‖q) | KL(q‖p) |", "|---|---|---:|---:|---:|---:|"]
    for label, entry in table.items():
        e = entry["exact"]
        lines.append(f"| {label}, {entry['basis']} basis | exact | {e['mean']:.4f} ({e['mean_quadrature']:.4f}) | "
                     f"{e['variance']:.4f} ({e['variance_quadrature']:.4f}) | 0 | 0 |")
        for method, m in entry["methods"].items():
            lines.append(f"| | {method} | {m['mean']:.4f} | {m['variance']:.4f} | {m['kl_pq']:.4f} | "
                         f"{m['kl_qp']:.4f} |")
    return lines


def _classification_lines(results: dict) -> list:
    lines = ["## 2. Classification (test split, mean ± sd over splits)", "",
             ("α_ε (approximations) and the noise variance (gauss) chosen per split by the training log-likelihood; "
             "the chosen values are listed per split. gauss's probabilities are its predictive means clipped to "
             "[1e-6, 1] and renormalised. NLL = mean −log p(true class). ECE: 20 bins. fit s: one fit at the chosen "
             "value."), "",
             "| data set | method | accuracy | NLL | ECE | fit s | chosen α_ε / noise |",
             "|---|---|---:|---:|---:|---:|---|"]
    for name, result in results.items():
        r0 = result["splits"][0]
        head = f"{name} (N={r0['n_train']}+{r0['n_test']}, K={result['n_classes']})"
        for i, method in enumerate(CLASSIFIERS):
            s = result["summary"][method]
            chosen = ", ".join(f"{c:g}" for c in s["chosen"]) if s["chosen"][0] is not None else "–"
            lines.append(f"| {head if i == 0 else ''} | {method} | {_cell(s['accuracy'])} | {_cell(s['nll'])} | "
                         f"{_cell(s['ece'])} | {_cell(s['fit_seconds'], 3)} | {chosen} |")
    return lines


def _gap_lines(results: dict) -> list:
    lines = ["## 3. Gap to Pólya-Gamma VMP as a function of α_ε", ""]
    shown = [name for name in GAP_DATASETS if name in results]
    if not shown:
        return lines + ["(neither breast_cancer nor iris was run)"]
    lines += [("Mean absolute difference of the test predictive probabilities to the Pólya-Gamma fit on the same "
              "split (mean over points and classes), and test NLL, mean over splits. For iris the reference is "
              "the stick-breaking model (the approximations fit the softmax model)."), ""]
    header = "| data set | method | quantity | " + " | ".join(f"α_ε={a:g}" for a in ALPHA_GRID) + " |"
    lines += [header, "|---|---|---|" + "---:|" * len(ALPHA_GRID)]
    for name in shown:
        result = results[name]
        pg = result["polya_gamma_test_nll"]
        for method in APPROXIMATIONS:
            g = result["gap"][method]
            lines.append(f"| {name} | {method} | mean abs Δp | " +
                         " | ".join(f"{v:.4f}" for v in g["mean_abs_difference"]) + " |")
            lines.append("| | | test NLL | " + " | ".join(f"{v:.4f}" for v in g["test_nll"]) + " |")
        lines.append(f"| | polya-gamma | test NLL | {pg:.4f} (all α_ε) |" + " |" * (len(ALPHA_GRID) - 1))
    lines += ["", *_trend_lines(results, shown)]
    return lines


def _trend(values) -> str:
    values = np.asarray(values)
    steps = np.diff(values)
    if np.all(steps <= 0):
        return "decreases monotonically"
    if np.all(steps >= 0):
        return "increases monotonically"
    best = int(np.argmin(values))
    return f"is not monotone (smallest at α_ε = {ALPHA_GRID[best]:g})"


def _trend_lines(results: dict, shown: list) -> list:
    lines = ["Measured trend of the gap (mean abs Δp) from α_ε = 0.01 to 1:", ""]
    for name in shown:
        for method in APPROXIMATIONS:
            v = results[name]["gap"][method]["mean_abs_difference"]
            lines.append(f"* {name}, {method}: {v[0]:.4f} → {v[-1]:.4f}; it {_trend(v)}.")
    return lines


def _gap_figure(plt, out: Path, results: dict) -> str | None:
    shown = [name for name in GAP_DATASETS if name in results]
    if not shown:
        return None
    fig, axes = plt.subplots(2, len(shown), figsize=(5.5 * len(shown), 7.5), squeeze=False)
    for column, name in enumerate(shown):
        result = results[name]
        top, bottom = axes[0, column], axes[1, column]
        for method in APPROXIMATIONS:
            g = result["gap"][method]
            top.plot(ALPHA_GRID, g["mean_abs_difference"], "o-", color=COLOURS[method], label=method)
            bottom.plot(ALPHA_GRID, g["test_nll"], "o-", color=COLOURS[method], label=method)
        bottom.axhline(result["polya_gamma_test_nll"], color="black", ls="--", label="polya-gamma")
        for ax in (top, bottom):
            ax.set_xscale("log")
            ax.set_xlabel("α_ε")
        top.set_title(f"{name}: gap to Pólya-Gamma")
        top.set_ylabel("mean |p − p_PG| (test)")
        bottom.set_ylabel("test NLL")
        top.legend(fontsize=8)
        bottom.legend(fontsize=8)
    fig.tight_layout()
    path = out / "gap.png"
    write_figure(path, fig, dpi=110)
    plt.close(fig)
    return path.name


# ======================================================================== run


def run(quick: bool = False, out: Path = Path("out/likelihood-approx"), progress: bool = False,
        splits: int | None = None, datasets=None, seed: int = 0) -> dict:
    """Run the three parts (module docstring), print the tables and write the files into ``out``."""
    out = Path(out)
    chosen = _check_datasets(datasets) or (QUICK_DATASETS if quick else DATASETS)
    n_splits = (1 if quick else 5) if splits is None else int(splits)
    if n_splits < 1:
        raise DatasetError(f"likelihood-approx: --splits must be at least 1, got {n_splits}")
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()

    density = density_table()
    loaded = {name: load_dataset(name) for name in chosen}
    # every (data set, split) is kept as it finishes: an interrupted run resumes, a rerun with more splits or data
    # sets adds only those; the settings that change a split's numbers are stored beside them
    store = _replications.open_records(out / "splits", {
        "seed": int(seed), "quick": bool(quick), "alpha_grid": list(ALPHA_GRID), "noise_grid": list(NOISE_GRID),
        "prior_var": PRIOR_VAR, "test_fraction": TEST_FRACTION}, "likelihood-approx")
    records = {name: [] for name in chosen}
    with progress_bar(len(chosen) * n_splits, "likelihood-approx", progress) as bar:
        for name in chosen:
            for split_index in range(n_splits):
                bar.set_postfix_str(f"{name}, split {split_index + 1}/{n_splits}")
                records[name].append(store.compute_once(
                    f"{name}_s{split_index:02d}.json", [name, split_index],
                    lambda: _run_split(name, loaded[name], seed, split_index, quick)))
                bar.update()
    results = {name: _aggregate(name, loaded[name], records[name]) for name in chosen}
    seconds = time.perf_counter() - started

    settings = {"datasets": list(chosen), "splits": n_splits, "seed": int(seed), "test_fraction": TEST_FRACTION,
                "max_train": QUICK_MAX_TRAIN if quick else None, "alpha_grid": list(ALPHA_GRID),
                "noise_grid": list(NOISE_GRID), "prior_var": PRIOR_VAR, "ece_bins": ECE_BINS,
                "gamma_shapes": list(GAMMA_SHAPES), "beta_shapes": [list(s) for s in BETA_SHAPES],
                "selection": "argmax over the grid of the mean training log predictive probability",
                "gauss_probabilities": "predictive means clipped to [1e-6, 1], renormalised per row"}
    lines = [f"# Gaussian likelihood approximations{' (quick)' if quick else ''}", "",
             (f"Data sets: {', '.join(chosen)}; {n_splits} stratified split(s) (test {TEST_FRACTION:.0%})"
             f"{f', training subsampled to ≤ {QUICK_MAX_TRAIN}' if quick else ''}; seed {seed}; {seconds:.1f} s."), "",
             *_density_lines(density), "", *_classification_lines(results), "", *_gap_lines(results), ""]
    text = "\n".join(lines)
    write_text(out / "results.md", text)
    print(text)

    files = ["results.md", "summary.json"]
    plt = pyplot()
    if plt is not None:
        files.append(_density_figure(plt, out))
        gap_file = _gap_figure(plt, out, results)
        if gap_file:
            files.append(gap_file)
    summary = {"example": "likelihood-approx", "quick": bool(quick), "settings": settings, "seconds": seconds,
               "density": density, "classification": results, "files": files}
    write_summary(out, summary)
    return summary

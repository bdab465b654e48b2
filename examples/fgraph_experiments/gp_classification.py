"""Gaussian-process classification as heteroscedastic GP regression on the labels' Gaussian pseudo-observations
(Bui, "Likelihood approximations via Gaussian approximate inference", §3.2–3.3, §4.2, Appendix B and C.2): Table 3
and Figures 3, 8, 12, 13 and 17, with :class:`fgraph.models.gp.GPClassifier`.

Every GP here has the kernel ``k(x, z) = σ² exp(−‖x − z‖² / 2ℓ²)`` (one lengthscale, ``ExponentiatedQuadratic``),
started at σ² = 1, ℓ = 1 on z-scored features, and one constant prior mean per latent function. A label becomes a
Gaussian pseudo-observation ``N(f_bn; ỹ_bn, ṽ_bn)`` of the latent functions (B = 1 logit for two classes, logit
basis of ``Beta(α_ε + y, α_ε + 1 − y)``; B = K log-Gamma logits otherwise, log basis of ``Gamma(α_ε + c_k, 1)``),
so that classification is exact regression with a known noise per point. The four approximations (``method``):
``moment-original`` (MM-ori, Milios et al. 2018), ``moment`` (MM), ``laplace`` (LA), ``variational`` (VI).

Four parts:

1. **Table 3 / Figure 13** — test error, NLL (−mean log p(y | x)) and ECE (20 equal-width confidence bins) on the
   bundled banknote, breast_cancer, rice, sonar, iris, vehicle, waveform and scikit-learn's wine and digits. Per
   split r (seeded ``[seed, r, crc32(name)]``): a stratified 70/30 train/test split, the training part then
   subsampled (stratified) to at most ``max_train`` = 1000 points so that the exact GP (N³ per latent function;
   ``GPClassifier`` is exact below 5,000 points, no inducing inputs) stays affordable, features z-scored by the
   training statistics (:func:`fgraph.datasets.train_test_splits`).
   Per method and every α_ε of the grid {0.01, 0.03, 0.1, 0.3, 1}: the kernel's (log σ², log ℓ) and the means
   maximise the approximate model's log evidence ``Σ_b log N(ỹ_b | m_b 1, K + diag(ṽ_b))`` (``optimizer=
   "evidence"``, L-BFGS from the initial kernel). **α_ε is chosen on the training set** (C.2; §4, after Milios
   et al. 2018) as the grid value of highest training log-likelihood ``(1/N) Σ_n log p(y_n | x_n, D)`` under the
   fitted model's own predictive (first value on ties). The exact model's Appendix-B bound (ELBO) of every fit is
   recorded too, with the α_ε it would choose and that choice's test scores. Reference column: scikit-learn's
   ``GaussianProcessClassifier`` (Laplace; one-vs-rest for K > 2; kernel ``ConstantKernel(1) * RBF(1)``, the same
   initial kernel with a zero mean, its own L-BFGS), with its fit time. Mean ± sd (sample sd) over splits.
   ``table.png`` is Figure 13 (a panel per metric, data sets on the x axis, a marker per method, ± sd bars);
   ``alpha.png`` shows every method's training criterion and test scores over the α_ε grid, mean over splits
   (C.2 reads its Figure 12, test performance on UCI splits with a sparse GP, for the α_ε that work well). The
   report also counts the fits whose kernel ran to a bound of the optimiser (σ² → 1e-5 or ℓ → 1e5: one class
   predicted everywhere), ours over the grid and scikit-learn's per one-vs-rest classifier.
2. **Figure 3** — the approximate log evidence over (log ℓ, log σ²) ∈ [−2, 4] × [−2, 6] on a 25 × 25 grid, on
   iris (all 150 points, z-scored; the paper used ionosphere, which is not available offline), for each
   approximation at its α_ε chosen as in part 1 and for "gauss" (regression on the one-hot labels, noise 0.1).
   At every grid point the constant means are profiled out in closed form, ``m̂_b = 1ᵀS_b⁻¹ỹ_b / 1ᵀS_b⁻¹1``
   (``S_b = K + diag(ṽ_b)``), as ``learn_mean=True`` does in the fits. ``landscape.png``: the grid maximum (star)
   and the optimiser's fit (cross).
3. **Figure 8** — a toy four-class 2-D set (pinwheels, 4 arms, deterministic in the seed; 200 training and 500
   test points, z-scored): the predictive probabilities on a grid for each approximation, (a) with α_ε and the
   hyperparameters as in part 1, (b) with ``optimizer="elbo", alpha_epsilon="elbo"``: kernel, means and α_ε
   maximise the exact softmax model's bound (Appendix B; variational GP classification whose q is the
   regression posterior). ``toy.png``: colour = the class colours weighted by the probabilities; subtitles α_ε,
   ℓ, σ², test accuracy.
4. **Figure 17** — pool-based active learning on two moons (binary, 2-D, noise 0.25; a pool of 300 and a test set
   of 500 per seed): ``GPClassifier(method="variational", alpha_epsilon=0.1)`` (α_ε fixed at 0.1 as in C.3), the
   hyperparameters refitted by the evidence after every label. Start from 4 labelled pool points (2 per class),
   then 40 times label the pool point of maximum predictive entropy (first on ties), against random querying
   (same start); test accuracy and NLL after each step, mean ± sd over 10 seeds. ``active.png``: the curves and
   p(y = 1 | x) at a few steps of seed 0.

``--quick``: breast_cancer and iris, 1 split, ≤ 100 training points, the α_ε grid {0.01, 0.1, 1}, a 6 × 6
landscape, 60 toy points, 1 active-learning seed of 6 steps on a pool of 60.

Options: ``--splits R`` (default 10; ``--quick`` 1), ``--datasets NAME …`` (a subset of part 1's data sets; an
unknown name is refused in one line), ``--seed`` (default 0).

Linear algebra runs on one BLAS thread (``threadpoolctl``): the matrices are at most 1000 × 1000, and a
multithreaded BLAS on a machine whose cores are busy is many times slower for them.

Outputs in ``out``: ``results.md`` (every table, printed too), ``summary.json``, ``table.png``, ``alpha.png``,
``landscape.png``, ``toy.png``, ``active.png`` (no figures without matplotlib) and ``records/``, a results store
(:mod:`fgraph.store`): every (data set, split, method) cell, landscape, toy panel and active-learning run is
written as it finishes (JSON or npz), so that an interrupted run resumes there and a rerun with more splits or
data sets computes only those. The settings that change the numbers are the store's identity; other settings in
the same directory are a ``ReplicationsMismatchError``.
"""
from __future__ import annotations

import argparse
import time
import warnings
import zlib
from pathlib import Path

import numpy as np

from fgraph.datasets import Dataset, load_dataset, make_pinwheels, train_test_splits
from fgraph.examples import OptionError, progress_bar, pyplot, whole_number, write_summary
from fgraph.families.kernels import ExponentiatedQuadratic
from fgraph.metrics import accuracy, expected_calibration_error, log_predictive_density
from fgraph.store import write_figure, write_text
from fgraph_experiments import _replications

__all__ = [
    "DATASETS",
    "DESCRIPTION",
    "METHODS",
    "add_arguments",
    "active_learning_run",
    "fit_cell",
    "fit_sklearn",
    "initial_kernel",
    "landscape_panel",
    "load",
    "make_split",
    "moons_split",
    "profiled_log_evidence",
    "run",
    "select",
    "settings_for",
    "toy_data",
    "toy_panel",
]

DESCRIPTION = ("GP classification as heteroscedastic GP regression on Gaussian label approximations: Table 3 on 9 "
               "UCI/sklearn sets vs sklearn's GPC, evidence landscapes, toy predictions (ELBO) and active learning")

METHODS = ("moment-original", "moment", "laplace", "variational")
SHORT = {"moment-original": "MM-ori", "moment": "MM", "laplace": "LA", "variational": "VI", "sklearn": "sklearn",
         "gauss": "gauss"}
COLUMNS = METHODS + ("sklearn",)
BUNDLED = ("banknote", "breast_cancer", "iris", "rice", "sonar", "vehicle", "waveform")
FROM_SKLEARN = ("digits", "wine")
# binary first, then by the number of classes, as the paper's tables go from eeg (K = 2) to letter (K = 26)
DATASETS = ("banknote", "breast_cancer", "rice", "sonar", "iris", "wine", "vehicle", "waveform", "digits")
QUICK_DATASETS = ("breast_cancer", "iris")
#: the paper's Table 3 data sets that have no offline copy here
UNAVAILABLE = ("eeg", "htru2", "magic", "letter", "drive")

TEST_FRACTION = 0.3
ECE_BINS = 20
INITIAL_VARIANCE, INITIAL_LENGTHSCALE = 1.0, 1.0
LANDSCAPE_DATASET = "iris"
LANDSCAPE_LOG_LENGTHSCALE = (-2.0, 4.0)
LANDSCAPE_LOG_VARIANCE = (-2.0, 6.0)
GAUSS_NOISE = 0.1
TOY_CLASSES = 4
ACTIVE_ALPHA = 0.1
ACTIVE_NOISE = 0.25
BLAS_THREADS = 1

FULL = {"splits": 10, "max_train": 1000, "alpha_grid": [0.01, 0.03, 0.1, 0.3, 1.0], "landscape_grid": 25,
        "toy_train": 200, "toy_test": 500, "toy_plot_grid": 70, "toy_elbo_max_iter": 200,
        "active_seeds": 10, "active_steps": 40, "active_pool": 300, "active_test": 500, "active_initial": 4,
        "active_snapshots": [0, 5, 15, 40], "active_plot_grid": 50}
QUICK = {"splits": 1, "max_train": 100, "alpha_grid": [0.01, 0.1, 1.0], "landscape_grid": 6,
         "toy_train": 60, "toy_test": 200, "toy_plot_grid": 25, "toy_elbo_max_iter": 20,
         "active_seeds": 1, "active_steps": 6, "active_pool": 60, "active_test": 200, "active_initial": 4,
         "active_snapshots": [0, 3, 6], "active_plot_grid": 25}

COLOURS = {"moment-original": "tab:purple", "moment": "tab:red", "laplace": "tab:orange",
           "variational": "tab:green", "sklearn": "tab:gray", "gauss": "tab:brown"}
MARKERS = {"moment-original": "o", "moment": "s", "laplace": "^", "variational": "D", "sklearn": "x"}
CLASS_RGB = np.array([[0.12, 0.47, 0.71], [1.0, 0.50, 0.05], [0.17, 0.63, 0.17], [0.84, 0.15, 0.16]])


# ======================================================================== options


def add_arguments(parser) -> None:
    """The options of ``fgraph run gp-classification``, each refused before the run if the run could not use it."""
    parser.add_argument("--splits", type=whole_number(1), default=None, metavar="R",
                        help=f"train/test splits per data set (default {FULL['splits']}; --quick: 1)")
    parser.add_argument("--datasets", type=dataset_name, nargs="+", default=None, metavar="NAME",
                        help=f"a subset of {', '.join(DATASETS)} (default all; --quick: {' '.join(QUICK_DATASETS)})")
    parser.add_argument("--seed", type=whole_number(0), default=0, help="seed of the splits (default 0)")


def dataset_name(text: str) -> str:
    """``type`` of --datasets: one of :data:`DATASETS` (any case, hyphens for underscores)."""
    try:
        return _check_datasets([text])[0]
    except OptionError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("gp-classification: ")) from None


def _check_datasets(datasets) -> tuple | None:
    """The data sets asked for, normalised and without repeats; an unknown name is an :class:`OptionError`."""
    if datasets is None:
        return None
    if isinstance(datasets, str):
        datasets = [datasets]
    names = []
    for name in datasets:
        key = str(name).strip().lower().replace("-", "_")
        if key not in DATASETS:
            hint = " (the paper's, not available offline)" if key in UNAVAILABLE else ""
            raise OptionError(f"gp-classification: unknown data set {name!r}{hint}; choose from "
                              f"{', '.join(DATASETS)}")
        if key not in names:
            names.append(key)
    if not names:
        raise OptionError(f"gp-classification: give at least one data set of {', '.join(DATASETS)}")
    return tuple(names)


def settings_for(quick: bool, seed: int = 0) -> dict:
    """The sizes of every part (:data:`FULL` or :data:`QUICK`) with the constants the numbers depend on."""
    settings = dict(QUICK if quick else FULL)
    settings.update({"quick": bool(quick), "seed": int(seed), "test_fraction": TEST_FRACTION, "ece_bins": ECE_BINS,
                     "initial_kernel": {"variance": INITIAL_VARIANCE, "lengthscale": INITIAL_LENGTHSCALE},
                     "landscape_dataset": LANDSCAPE_DATASET,
                     "landscape_log_lengthscale": list(LANDSCAPE_LOG_LENGTHSCALE),
                     "landscape_log_variance": list(LANDSCAPE_LOG_VARIANCE), "gauss_noise": GAUSS_NOISE,
                     "toy_classes": TOY_CLASSES, "active_alpha": ACTIVE_ALPHA, "active_noise": ACTIVE_NOISE})
    return settings


# ======================================================================== data


def load(name: str) -> Dataset:
    """Data set ``name``: bundled (:func:`fgraph.datasets.load_dataset`) or scikit-learn's digits / wine."""
    if name in FROM_SKLEARN:
        from sklearn import datasets

        bunch = datasets.load_digits() if name == "digits" else datasets.load_wine()
        return Dataset(X=np.asarray(bunch.data, dtype=float), y=np.asarray(bunch.target, dtype=np.int64),
                       classes=np.asarray(bunch.target_names), feature_names=tuple(map(str, bunch.feature_names)),
                       name=name)
    return load_dataset(name)


def split_seed(name: str, seed: int, split: int) -> list:
    """The ``random_state`` of split ``split`` of data set ``name``."""
    return [int(seed), int(split), int(zlib.crc32(name.encode()))]


def make_split(name: str, data: Dataset, seed: int, split: int, max_train: int) -> tuple:
    """(the :class:`~fgraph.datasets.Split`, its random state): a stratified test set of ``round(0.3 N)`` rows,
    the training set a stratified sample of at most ``max_train`` of the other rows, both z-scored by the
    training statistics."""
    n = len(data.y)
    n_test = round(TEST_FRACTION * n)
    n_train = min(n - n_test, int(max_train))
    state = split_seed(name, seed, split)
    return train_test_splits(data.X, data.y, [n_train], n_test, random_state=state)[0], state


def initial_kernel() -> ExponentiatedQuadratic:
    """The kernel every fit starts from (σ² = 1, ℓ = 1)."""
    return ExponentiatedQuadratic(INITIAL_VARIANCE, INITIAL_LENGTHSCALE)


def _scores(probabilities, y) -> dict:
    return {"accuracy": accuracy(probabilities, y), "nll": -log_predictive_density(probabilities, y),
            "ece": expected_calibration_error(probabilities, y, n_bins=ECE_BINS)}


def select(values) -> int:
    """Index of the largest value (the first on ties; NaN never wins)."""
    values = np.asarray(values, dtype=float)
    return int(np.argmax(np.where(np.isnan(values), -np.inf, values)))


def _kernel_record(kernel) -> dict:
    return {"variance": float(kernel.variance), "lengthscale": float(kernel.lengthscale)}


# ======================================================================== part 1: Table 3


def fit_cell(split, method: str, alpha_grid) -> dict:
    """Fit ``method`` at every α_ε of ``alpha_grid`` on ``split`` (evidence-optimised kernel and means) and choose
    α_ε by the training log-likelihood. Per α_ε: the fitted σ², ℓ, means, approximate log evidence, the exact
    model's bound (ELBO), the training log-likelihood, the test scores and the seconds of the fit."""
    from fgraph.models.gp import GPClassifier, classification_bound

    fits = []
    for alpha in alpha_grid:
        model = GPClassifier(kernel=initial_kernel(), method=method, alpha_epsilon=float(alpha),
                             optimizer="evidence")
        start = time.perf_counter()
        model.fit(split.X_train, split.y_train)
        seconds = time.perf_counter() - start
        train = model.predict_proba(split.X_train)
        test = model.predict_proba(split.X_test)
        fits.append({"alpha": float(alpha), "fit_seconds": seconds, "iterations": int(model.n_iter_),
                     "kernel": _kernel_record(model.kernel_), "means": model.means_.tolist(),
                     "log_evidence": float(model.log_marginal_likelihood_value_),
                     "elbo": classification_bound(model.posterior_, split.y_train),
                     "train_log_likelihood": log_predictive_density(train, split.y_train),
                     "test": _scores(test, split.y_test)})
    return {"method": method, "fits": fits, "chosen": select([f["train_log_likelihood"] for f in fits]),
            "chosen_by_elbo": select([f["elbo"] for f in fits])}


def fit_sklearn(split) -> dict:
    """scikit-learn's ``GaussianProcessClassifier`` from the same initial kernel (``ConstantKernel(1) * RBF(1)``,
    bounds [1e-5, 1e5] as ours), its own optimiser: the test scores, the seconds of the fit, the fitted kernel."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.gaussian_process import GaussianProcessClassifier
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel

    kernel = ConstantKernel(INITIAL_VARIANCE, (1e-5, 1e5)) * RBF(INITIAL_LENGTHSCALE, (1e-5, 1e5))
    model = GaussianProcessClassifier(kernel=kernel, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        start = time.perf_counter()
        model.fit(split.X_train, split.y_train)
        seconds = time.perf_counter() - start
    probabilities = model.predict_proba(split.X_test)
    return {"method": "sklearn", "fit_seconds": seconds, "kernel": str(model.kernel_),
            "log_marginal_likelihood": float(model.log_marginal_likelihood_value_),
            "convergence_warnings": sum(issubclass(w.category, ConvergenceWarning) for w in caught),
            "test": _scores(probabilities, split.y_test)}


def _mean_sd(values) -> dict:
    values = np.asarray(values, dtype=float)
    return {"mean": float(values.mean()), "sd": float(values.std(ddof=1)) if values.size > 1 else None}


def _aggregate(name: str, data: Dataset, cells: dict, n_splits: int) -> dict:
    """Per method the mean ± sd over splits of the test error (%), NLL, ECE at the chosen α_ε, the fit seconds,
    the chosen α_ε per split, the same scores at the ELBO's α_ε, and the mean over splits per grid value."""
    summary, sweep = {}, {}
    for method in COLUMNS:
        entries = [cells[(split, method)] for split in range(n_splits)]
        if method == "sklearn":
            chosen = [e["test"] for e in entries]
            summary[method] = {"fit_seconds": _mean_sd([e["fit_seconds"] for e in entries]),
                               "convergence_warnings": int(sum(e["convergence_warnings"] for e in entries))}
        else:
            chosen = [e["fits"][e["chosen"]]["test"] for e in entries]
            by_elbo = [e["fits"][e["chosen_by_elbo"]]["test"] for e in entries]
            summary[method] = {
                "fit_seconds": _mean_sd([e["fits"][e["chosen"]]["fit_seconds"] for e in entries]),
                "grid_seconds": _mean_sd([sum(f["fit_seconds"] for f in e["fits"]) for e in entries]),
                "alpha": [e["fits"][e["chosen"]]["alpha"] for e in entries],
                "alpha_by_elbo": [e["fits"][e["chosen_by_elbo"]]["alpha"] for e in entries],
                "elbo_agrees": float(np.mean([e["chosen"] == e["chosen_by_elbo"] for e in entries])),
                "by_elbo": {"error": _mean_sd([100 * (1 - s["accuracy"]) for s in by_elbo]),
                            "nll": _mean_sd([s["nll"] for s in by_elbo]), "ece": _mean_sd([s["ece"] for s in by_elbo])},
            }
            grid = entries[0]["fits"]
            sweep[method] = {
                "alpha": [f["alpha"] for f in grid],
                "train_nll": np.mean([[-f["train_log_likelihood"] for f in e["fits"]] for e in entries], 0).tolist(),
                "error": np.mean([[100 * (1 - f["test"]["accuracy"]) for f in e["fits"]] for e in entries], 0).tolist(),
                "nll": np.mean([[f["test"]["nll"] for f in e["fits"]] for e in entries], 0).tolist(),
                "ece": np.mean([[f["test"]["ece"] for f in e["fits"]] for e in entries], 0).tolist(),
                "elbo": np.mean([[f["elbo"] for f in e["fits"]] for e in entries], 0).tolist()}
        summary[method].update({"error": _mean_sd([100 * (1 - s["accuracy"]) for s in chosen]),
                                "nll": _mean_sd([s["nll"] for s in chosen]),
                                "ece": _mean_sd([s["ece"] for s in chosen])})
    first = cells[(0, METHODS[0])]
    return {"dataset": name, "n_train": first["n_train"], "n_test": first["n_test"], "n_rows": len(data.y),
            "n_features": int(data.X.shape[1]), "n_classes": int(data.n_classes), "splits": n_splits,
            "random_states": [cells[(s, METHODS[0])]["random_state"] for s in range(n_splits)],
            "summary": summary, "alpha_sweep": sweep}


# ======================================================================== part 2: Figure 3


def profiled_log_evidence(X, targets, variances, kernel) -> tuple:
    """``(max_m Σ_b log N(ỹ_b | m_b 1, K + diag(ṽ_b)), m̂)``: the constant means profiled out in closed form,
    ``m̂_b = 1ᵀS_b⁻¹ỹ_b / 1ᵀS_b⁻¹1`` (the generalised least-squares mean), the evidence then read off the graph at
    ``m̂``. ``targets``, ``variances`` (B, N)."""
    from fgraph.models.gp import gp_posterior

    centred = gp_posterior(X, targets, variances, kernel, 0.0)
    ones = np.ones(centred.belief.weights.shape + (1,))
    means = centred.belief.weights.sum(axis=-1) / centred.belief.solve(ones)[..., 0].sum(axis=-1)
    return gp_posterior(X, targets, variances, kernel, means).log_evidence, means


def _landscape_data():
    data = load(LANDSCAPE_DATASET)
    scale = data.X.std(axis=0)
    return (data.X - data.X.mean(axis=0)) / np.where(scale > 0, scale, 1.0), data.y, data.n_classes


def landscape_panel(method: str, settings: dict) -> dict:
    """The log-evidence landscape of ``method`` (or ``"gauss"``) on :data:`LANDSCAPE_DATASET` (module docstring):
    arrays ``log_lengthscale`` (G,), ``log_variance`` (G,), ``log_evidence`` (G, G) (rows: variance), the α_ε
    (NaN for gauss), its training log-likelihoods over the grid, and the optimiser's (log σ², log ℓ)."""
    from fgraph.models.gp import GPClassifier, maximise_evidence, pseudo_observations

    X, y, n_classes = _landscape_data()
    alpha_grid = settings["alpha_grid"]
    if method == "gauss":
        targets = (y[None, :] == 1).astype(float) if n_classes == 2 else (y[None, :] == np.arange(n_classes)[:, None])
        targets = targets.astype(float)
        variances = np.full(targets.shape, GAUSS_NOISE)
        fit = maximise_evidence(X, targets, variances, initial_kernel(), targets.mean(axis=1))
        fitted, alpha, train_ll = fit.posterior.kernel.log_parameters, np.nan, np.full(len(alpha_grid), np.nan)
    else:
        models = [GPClassifier(kernel=initial_kernel(), method=method, alpha_epsilon=float(a)).fit(X, y)
                  for a in alpha_grid]
        train_ll = np.array([log_predictive_density(m.predict_proba(X), y) for m in models])
        best = models[select(train_ll)]
        alpha, fitted = best.alpha_epsilon_, best.kernel_.log_parameters
        targets, variances = pseudo_observations(y, n_classes, method, alpha)
    size = settings["landscape_grid"]
    log_lengthscale = np.linspace(*LANDSCAPE_LOG_LENGTHSCALE, size)
    log_variance = np.linspace(*LANDSCAPE_LOG_VARIANCE, size)
    surface = np.empty((size, size))
    for i, lv in enumerate(log_variance):
        for j, ll in enumerate(log_lengthscale):
            kernel = ExponentiatedQuadratic(float(np.exp(lv)), float(np.exp(ll)))
            surface[i, j] = profiled_log_evidence(X, targets, variances, kernel)[0]
    return {"log_lengthscale": log_lengthscale, "log_variance": log_variance, "log_evidence": surface,
            "alpha": np.array(alpha, dtype=float), "alpha_grid": np.array(alpha_grid, dtype=float),
            "train_log_likelihood": np.asarray(train_ll, dtype=float), "fitted_log_parameters": np.asarray(fitted)}


# ======================================================================== part 3: Figure 8


def toy_data(settings: dict) -> dict:
    """The four-class pinwheels (one draw of ``toy_train + toy_test`` points seeded by ``[seed, 8]``, the first
    ``toy_train`` for training), z-scored by the training statistics, and the plotting grid around them."""
    n_train, n_test = settings["toy_train"], settings["toy_test"]
    X, y = make_pinwheels(n_train + n_test, n_classes=TOY_CLASSES, random_state=[settings["seed"], 8])
    mean, scale = X[:n_train].mean(axis=0), X[:n_train].std(axis=0)
    X = (X - mean) / scale
    low, high = X[:n_train].min(axis=0) - 0.5, X[:n_train].max(axis=0) + 0.5
    size = settings["toy_plot_grid"]
    xs, ys = np.linspace(low[0], high[0], size), np.linspace(low[1], high[1], size)
    grid = np.column_stack([np.tile(xs, size), np.repeat(ys, size)])  # row-major: reshape(G, G) is [y, x]
    return {"X_train": X[:n_train], "y_train": y[:n_train], "X_test": X[n_train:], "y_test": y[n_train:],
            "xs": xs, "ys": ys, "grid": grid}


def toy_panel(method: str, fit: str, settings: dict) -> dict:
    """One panel of the toy figure: ``fit`` = ``"evidence"`` (α_ε chosen by the training log-likelihood over the
    grid, evidence-optimised kernel) or ``"elbo"`` (kernel, means and α_ε maximise the exact model's bound).
    Arrays: ``probabilities`` on the plotting grid (G², K), α_ε, (σ², ℓ), the bound, test accuracy and NLL."""
    from fgraph.models.gp import GPClassifier, classification_bound

    data = toy_data(settings)
    X, y = data["X_train"], data["y_train"]
    start = time.perf_counter()
    if fit == "elbo":
        model = GPClassifier(kernel=initial_kernel(), method=method, optimizer="elbo", alpha_epsilon="elbo",
                             max_iter=settings["toy_elbo_max_iter"]).fit(X, y)
    else:
        models = [GPClassifier(kernel=initial_kernel(), method=method, alpha_epsilon=float(a)).fit(X, y)
                  for a in settings["alpha_grid"]]
        model = models[select([log_predictive_density(m.predict_proba(X), y) for m in models])]
    seconds = time.perf_counter() - start
    scores = _scores(model.predict_proba(data["X_test"]), data["y_test"])
    return {"probabilities": model.predict_proba(data["grid"]), "alpha": np.array(model.alpha_epsilon_),
            "variance": np.array(float(model.kernel_.variance)),
            "lengthscale": np.array(float(model.kernel_.lengthscale)),
            "elbo": np.array(classification_bound(model.posterior_, y)),
            "train_log_likelihood": np.array(log_predictive_density(model.predict_proba(X), y)),
            "test_accuracy": np.array(scores["accuracy"]), "test_nll": np.array(scores["nll"]),
            "seconds": np.array(seconds)}


# ======================================================================== part 4: Figure 17


def moons_split(settings: dict, seed: int) -> tuple:
    """Two moons: (pool X, pool y, test X, test y), z-scored by the pool's statistics (the pool is unlabelled but
    known)."""
    from sklearn.datasets import make_moons

    pool, test = settings["active_pool"], settings["active_test"]
    X, y = make_moons(pool + test, noise=ACTIVE_NOISE, random_state=zlib.crc32(f"moons-{seed}".encode()))
    X = (X - X[:pool].mean(axis=0)) / X[:pool].std(axis=0)
    return X[:pool], y[:pool].astype(np.int64), X[pool:], y[pool:].astype(np.int64)


def _entropy(probabilities) -> np.ndarray:
    p = np.clip(probabilities, 1e-300, 1.0)
    return -np.sum(p * np.log(p), axis=1)


def active_learning_run(strategy: str, seed: int, settings: dict) -> dict:
    """One pool-based active-learning run (module docstring): ``strategy`` ``"entropy"`` or ``"random"``. Arrays:
    ``initial`` (n₀,) and ``queried`` (T,) pool indices, test ``accuracy`` and ``nll`` (T + 1,) after each step
    (step 0: the initial set), and for the steps ``snapshot_steps`` p(y = 1 | x) on a plotting grid."""
    from fgraph.models.gp import GPClassifier

    X, y, X_test, y_test = moons_split(settings, seed)
    rng = np.random.default_rng([int(settings["seed"]), seed])
    per_class = settings["active_initial"] // 2
    initial = np.sort(np.concatenate([rng.choice(np.flatnonzero(y == c), per_class, replace=False)
                                      for c in (0, 1)]))
    # the random strategy's own generator, so that both strategies share the initial set whatever the draws
    random_order = np.random.default_rng([int(settings["seed"]), seed, 1])
    size = settings["active_plot_grid"]
    low, high = X.min(axis=0) - 0.3, X.max(axis=0) + 0.3
    xs, ys = np.linspace(low[0], high[0], size), np.linspace(low[1], high[1], size)
    grid = np.column_stack([np.tile(xs, size), np.repeat(ys, size)])
    labelled = list(initial)
    accuracy_curve, nll_curve, queried, snapshots = [], [], [], []
    for step in range(settings["active_steps"] + 1):
        model = GPClassifier(kernel=initial_kernel(), method="variational", alpha_epsilon=ACTIVE_ALPHA)
        model.fit(X[labelled], y[labelled])
        scores = _scores(model.predict_proba(X_test), y_test)
        accuracy_curve.append(scores["accuracy"])
        nll_curve.append(scores["nll"])
        if step in settings["active_snapshots"]:
            snapshots.append(model.predict_proba(grid)[:, 1])
        if step == settings["active_steps"]:
            break
        unlabelled = np.setdiff1d(np.arange(len(y)), labelled)
        if strategy == "entropy":
            choice = unlabelled[int(np.argmax(_entropy(model.predict_proba(X[unlabelled]))))]
        else:
            choice = int(random_order.choice(unlabelled))
        queried.append(int(choice))
        labelled.append(int(choice))
    return {"initial": initial.astype(np.int64), "queried": np.array(queried, dtype=np.int64),
            "accuracy": np.array(accuracy_curve), "nll": np.array(nll_curve),
            "snapshot_steps": np.array(settings["active_snapshots"], dtype=np.int64),
            "snapshot_probability": np.array(snapshots), "xs": xs, "ys": ys}


# ======================================================================== report


def _cell(entry: dict, digits: int = 3) -> str:
    if entry["sd"] is None:
        return f"{entry['mean']:.{digits}f}"
    return f"{entry['mean']:.{digits}f} ± {entry['sd']:.{digits}f}"


def _shape(result: dict) -> str:
    return f"{result['n_train']}/{result['n_test']}/{result['n_features']}/{result['n_classes']}"


def _table_lines(results: dict) -> list:
    lines = ["## 1. Table 3: GP classification, test scores (mean ± sd over splits)", "",
             ("Error [%], NLL [nat] = −mean log p(y | x), ECE (20 bins), at the α_ε chosen per split by the "
              "training log-likelihood (listed per split). fit s: the one fit at the chosen α_ε (sklearn: its "
              "fit); grid s: all fits of the α_ε grid (the cost of the selection). N_train/N_test/D/K per data "
              "set."), "",
             "| data set | N_train/N_test/D/K | method | error % | NLL | ECE | fit s | grid s | α_ε per split |",
             "|---|---|---|---:|---:|---:|---:|---:|---|"]
    for name, result in results.items():
        for i, method in enumerate(COLUMNS):
            s = result["summary"][method]
            alphas = ", ".join(f"{a:g}" for a in s["alpha"]) if "alpha" in s else "–"
            grid = _cell(s["grid_seconds"], 2) if "grid_seconds" in s else "–"
            lines.append(f"| {name if i == 0 else ''} | {_shape(result) if i == 0 else ''} | {SHORT[method]} | "
                         f"{_cell(s['error'], 2)} | {_cell(s['nll'])} | {_cell(s['ece'])} | "
                         f"{_cell(s['fit_seconds'], 2)} | {grid} | {alphas} |")
    return lines


def _paper_layout_lines(results: dict) -> list:
    header = " | ".join(f"{m} {SHORT[c]}" for m in ("err%", "NLL", "ECE") for c in COLUMNS)
    lines = ["### Table 3 in the paper's layout (means; the lowest of the four approximations in bold)", "",
             f"| data set | N_train/N_test/D/K | {header} |", "|---|---|" + "---:|" * (3 * len(COLUMNS))]
    for name, result in results.items():
        cells = []
        for metric, digits in (("error", 2), ("nll", 3), ("ece", 3)):
            means = [result["summary"][c][metric]["mean"] for c in COLUMNS]
            best = min(means[:len(METHODS)])
            cells += [f"**{v:.{digits}f}**" if i < len(METHODS) and v == best else f"{v:.{digits}f}"
                      for i, v in enumerate(means)]
        lines.append(f"| {name} | {_shape(result)} | " + " | ".join(cells) + " |")
    return lines


def _ranking_lines(results: dict) -> list:
    """Where each approximation wins and loses: per data set and metric the best and worst of the four (by the
    mean), counted per method, and whether scikit-learn's GPC beats all four."""
    best = {m: 0 for m in METHODS}
    worst = {m: 0 for m in METHODS}
    lines = ["### Best and worst approximation per data set (by the mean over splits)", "",
             "| data set | metric | best | worst | worst − best | sklearn |", "|---|---|---|---|---:|---|"]
    beaten = 0
    total = 0
    for name, result in results.items():
        for metric in ("error", "nll", "ece"):
            means = {m: result["summary"][m][metric]["mean"] for m in METHODS}
            low, high = min(means, key=means.get), max(means, key=means.get)
            best[low] += 1
            worst[high] += 1
            reference = result["summary"]["sklearn"][metric]["mean"]
            below = reference < means[low]
            beaten += below
            total += 1
            lines.append(f"| {name} | {metric} | {SHORT[low]} | {SHORT[high]} | {means[high] - means[low]:.3f} | "
                         f"{'better than all four' if below else 'not better than the best'} |")
    lines += ["", "Counts over the (data set, metric) pairs: " + "; ".join(
        f"{SHORT[m]} best {best[m]}, worst {worst[m]}" for m in METHODS) +
        f". scikit-learn's GPC is better than all four approximations in {beaten} of {total} pairs."]
    return lines


def _elbo_lines(results: dict) -> list:
    lines = ["### α_ε by the training log-likelihood vs by the exact model's bound (same grid, same fits)", "",
             ("The ELBO column: α_ε of the largest Appendix-B bound of the fit on the training set; agreement: the "
              "fraction of splits where both criteria choose the same α_ε."), "",
             "| data set | method | NLL (train LL) | NLL (ELBO) | error % (train LL) | error % (ELBO) | agreement | "
             "α_ε by ELBO per split |", "|---|---|---:|---:|---:|---:|---:|---|"]
    for name, result in results.items():
        for i, method in enumerate(METHODS):
            s = result["summary"][method]
            lines.append(f"| {name if i == 0 else ''} | {SHORT[method]} | {_cell(s['nll'])} | "
                         f"{_cell(s['by_elbo']['nll'])} | {_cell(s['error'], 2)} | {_cell(s['by_elbo']['error'], 2)} "
                         f"| {s['elbo_agrees']:.2f} | {', '.join(f'{a:g}' for a in s['alpha_by_elbo'])} |")
    return lines


#: a fitted hyperparameter this close to the optimisers' bounds [1e-5, 1e5] has run off: the kernel is flat (ℓ) or
#: the latent functions are constants (σ²), and the fit predicts one class everywhere
RUN_OFF = 1e4


def _ran_off(kernel: dict) -> bool:
    return kernel["variance"] < 1.0 / RUN_OFF or kernel["lengthscale"] > RUN_OFF


def _sklearn_lengthscales(kernel: str) -> list:
    """The lengthscales of scikit-learn's fitted kernel from its text: ``a**2 * RBF(length_scale=b)`` for two
    classes, ``CompoundKernel(θ₁, …)`` (log constant, log lengthscale per one-vs-rest classifier) otherwise."""
    import re

    if kernel.startswith("CompoundKernel"):
        values = [float(v) for v in re.findall(r"-?[0-9.]+(?:e[-+]?[0-9]+)?", kernel)]
        return [float(np.exp(v)) for v in values[1::2]]
    return [float(v) for v in re.findall(r"length_scale=(-?[0-9.]+(?:e[-+]?[0-9]+)?)", kernel)]


def _run_off_lines(cells: dict, n_splits: int) -> list:
    """How often a fit ran to a bound (:data:`RUN_OFF`), over all grid fits and over the chosen ones, with the mean
    test error of those fits; and scikit-learn's splits with a one-vs-rest lengthscale at its bound."""
    lines = ["### Fits whose kernel ran to a bound (σ² < 1e-4 or ℓ > 1e4: a constant predictor)", "",
             "| method | grid fits run off | their mean test error % | chosen fits run off | where (chosen) |",
             "|---|---:|---:|---:|---|"]
    for method in METHODS:
        every, errors, chosen, where = 0, [], 0, []
        total, total_chosen = 0, 0
        for name, by_key in cells.items():
            for split in range(n_splits):
                cell = by_key[(split, method)]
                for index, fit in enumerate(cell["fits"]):
                    total += 1
                    if _ran_off(fit["kernel"]):
                        every += 1
                        errors.append(100 * (1 - fit["test"]["accuracy"]))
                        if index == cell["chosen"]:
                            chosen += 1
                            where.append(f"{name} s{split}")
                total_chosen += 1
        mean_error = f"{np.mean(errors):.1f}" if errors else "–"
        lines.append(f"| {SHORT[method]} | {every} of {total} | {mean_error} | {chosen} of {total_chosen} | "
                     f"{', '.join(where) or '–'} |")
    flagged = []
    for name, by_key in cells.items():
        for split in range(n_splits):
            lengthscales = _sklearn_lengthscales(by_key[(split, "sklearn")]["kernel"])
            if any(value > RUN_OFF for value in lengthscales):
                flagged.append(f"{name} s{split} ({sum(v > RUN_OFF for v in lengthscales)} of {len(lengthscales)})")
    lines += ["", f"scikit-learn's GPC: a lengthscale above {RUN_OFF:g} (of the one-vs-rest classifiers) in "
              f"{len(flagged)} of {len(cells) * n_splits} splits{': ' + ', '.join(flagged) if flagged else ''}."]
    return lines


def _landscape_lines(landscape: dict) -> list:
    lines = [f"## 2. Figure 3: approximate log evidence over (log ℓ, log σ²) on {LANDSCAPE_DATASET}", "",
             ("Constant means profiled out at every grid point. α_ε: chosen by the training log-likelihood (gauss: "
              f"one-hot targets, noise {GAUSS_NOISE:g}). Grid optimum vs the optimiser's fit from (σ², ℓ) = (1, 1)."),
             "", "| approximation | α_ε | grid max log evidence | grid argmax ℓ, σ² | fitted ℓ, σ² |",
             "|---|---:|---:|---|---|"]
    for method, panel in landscape.items():
        i, j = np.unravel_index(int(np.argmax(panel["log_evidence"])), panel["log_evidence"].shape)
        fitted = np.exp(panel["fitted_log_parameters"])
        alpha = "–" if np.isnan(panel["alpha"]) else f"{float(panel['alpha']):g}"
        lines.append(f"| {SHORT[method]} | {alpha} | {panel['log_evidence'][i, j]:.2f} | "
                     f"{np.exp(panel['log_lengthscale'][j]):.3g}, {np.exp(panel['log_variance'][i]):.3g} | "
                     f"{fitted[1]:.3g}, {fitted[0]:.3g} |")
    return lines


def _toy_lines(toy: dict) -> list:
    lines = ["## 3. Figure 8: toy four-class pinwheels", "",
             ("evidence: α_ε by the training log-likelihood over the grid, kernel by the approximate evidence; "
              "elbo: kernel, means and α_ε by the exact softmax model's bound (Appendix B). ELBO: that bound at "
              "the fit (training set)."), "",
             "| approximation | fit | α_ε | ℓ | σ² | ELBO | train LL | test accuracy | test NLL | s |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for (method, fit), panel in toy.items():
        lines.append(f"| {SHORT[method]} | {fit} | {float(panel['alpha']):.3g} | {float(panel['lengthscale']):.3g} | "
                     f"{float(panel['variance']):.3g} | {float(panel['elbo']):.2f} | "
                     f"{float(panel['train_log_likelihood']):.3f} | {float(panel['test_accuracy']):.3f} | "
                     f"{float(panel['test_nll']):.3f} | {float(panel['seconds']):.1f} |")
    return lines


def _active_summary(active: dict, settings: dict) -> dict:
    summary = {}
    for strategy in ("entropy", "random"):
        runs = [active[(strategy, seed)] for seed in range(settings["active_seeds"])]
        accuracy_runs = np.array([r["accuracy"] for r in runs])
        nll_runs = np.array([r["nll"] for r in runs])
        sd = (lambda a: a.std(axis=0, ddof=1).tolist() if len(runs) > 1 else None)
        summary[strategy] = {"accuracy_mean": accuracy_runs.mean(0).tolist(), "accuracy_sd": sd(accuracy_runs),
                             "nll_mean": nll_runs.mean(0).tolist(), "nll_sd": sd(nll_runs),
                             "accuracy_per_seed": accuracy_runs.tolist(), "nll_per_seed": nll_runs.tolist(),
                             "queried_per_seed": [r["queried"].tolist() for r in runs]}
    return summary


def _active_lines(summary: dict, settings: dict) -> list:
    steps = settings["active_steps"]
    shown = sorted({0, steps // 4, steps // 2, steps})
    n0 = settings["active_initial"]
    lines = ["## 4. Figure 17: active learning on two moons (GP, variational approximation, α_ε = "
             f"{ACTIVE_ALPHA:g})", "",
             (f"Test accuracy and NLL after n labels (start {n0}, one query per step), mean ± sd over "
              f"{settings['active_seeds']} seed(s); 'mean' is the average over all {steps + 1} steps."), "",
             "| strategy | metric | " + " | ".join(f"n = {n0 + s}" for s in shown) + " | mean |",
             "|---|---|" + "---:|" * (len(shown) + 1)]
    for strategy, s in summary.items():
        for metric in ("accuracy", "nll"):
            mean, sd = s[f"{metric}_mean"], s[f"{metric}_sd"]
            cells = [f"{mean[k]:.3f}" + (f" ± {sd[k]:.3f}" if sd is not None else "") for k in shown]
            lines.append(f"| {strategy} | {metric} | " + " | ".join(cells) + f" | {np.mean(mean):.3f} |")
    return lines


# ======================================================================== figures


def _table_figure(plt, out: Path, results: dict) -> str:
    names = list(results)
    fig, axes = plt.subplots(3, 1, figsize=(max(8.0, 1.2 * len(names)), 10), sharex=True)
    offsets = np.linspace(-0.24, 0.24, len(COLUMNS))
    for ax, (metric, label) in zip(axes, (("error", "test error [%]"), ("nll", "test NLL [nat]"), ("ece", "ECE"))):
        for method, offset in zip(COLUMNS, offsets):
            means = [results[n]["summary"][method][metric]["mean"] for n in names]
            sds = [results[n]["summary"][method][metric]["sd"] or 0.0 for n in names]
            ax.errorbar(np.arange(len(names)) + offset, means, yerr=sds, fmt=MARKERS[method], color=COLOURS[method],
                        capsize=2, label=SHORT[method])
        ax.set_xticks(np.arange(len(names)))
        ax.set_xticklabels(names, rotation=30, ha="right")
        ax.set_ylabel(label)
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("GP classification with Gaussian likelihood approximations (mean ± sd over splits)")
    fig.tight_layout()
    path = out / "table.png"
    write_figure(path, fig, dpi=110)
    plt.close(fig)
    return path.name


def _alpha_figure(plt, out: Path, results: dict) -> str:
    names = list(results)
    quantities = (("train_nll", "training NLL (criterion)"), ("error", "test error [%]"), ("nll", "test NLL"),
                  ("ece", "test ECE"))
    fig, axes = plt.subplots(len(names), len(quantities), figsize=(13, 2.4 * len(names)), squeeze=False)
    for row, name in enumerate(names):
        for column, (key, label) in enumerate(quantities):
            ax = axes[row, column]
            for method in METHODS:
                sweep = results[name]["alpha_sweep"][method]
                ax.plot(sweep["alpha"], sweep[key], MARKERS[method] + "-", color=COLOURS[method], ms=4,
                        label=SHORT[method])
            ax.set_xscale("log")
            ax.set_title(f"{name}: {label}", fontsize=9)
            if row == len(names) - 1:
                ax.set_xlabel("α_ε")
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    path = out / "alpha.png"
    write_figure(path, fig, dpi=100)
    plt.close(fig)
    return path.name


def _landscape_figure(plt, out: Path, landscape: dict) -> str:
    fig, axes = plt.subplots(1, len(landscape), figsize=(4.0 * len(landscape), 3.8), squeeze=False)
    for ax, (method, panel) in zip(axes[0], landscape.items()):
        surface = panel["log_evidence"]
        # the low tail of a log evidence runs to −10⁴ and would flatten the colours: clip it 3 × the spread of
        # the top half below the maximum
        top = surface.max()
        floor = top - 3 * (top - np.median(surface))
        image = ax.contourf(panel["log_lengthscale"], panel["log_variance"], np.maximum(surface, floor), levels=20,
                            cmap="viridis")
        fig.colorbar(image, ax=ax, fraction=0.046)
        i, j = np.unravel_index(int(np.argmax(surface)), surface.shape)
        ax.plot(panel["log_lengthscale"][j], panel["log_variance"][i], "*", color="white", ms=14, mec="black",
                label="grid max")
        fitted = panel["fitted_log_parameters"]
        ax.plot(np.clip(fitted[1], *LANDSCAPE_LOG_LENGTHSCALE), np.clip(fitted[0], *LANDSCAPE_LOG_VARIANCE), "x",
                color="red", ms=10, mew=2, label="optimiser")
        alpha = "" if np.isnan(panel["alpha"]) else f", α_ε = {float(panel['alpha']):g}"
        ax.set_title(f"{method}{alpha}" if method != "gauss" else f"gauss, noise = {GAUSS_NOISE:g}", fontsize=10)
        ax.set_xlabel("log lengthscale")
    axes[0, 0].set_ylabel("log variance")
    axes[0, 0].legend(fontsize=7, loc="lower right")
    fig.suptitle(f"Approximate log marginal likelihood on {LANDSCAPE_DATASET} (means profiled out)")
    fig.tight_layout()
    path = out / "landscape.png"
    write_figure(path, fig, dpi=110)
    plt.close(fig)
    return path.name


def _toy_figure(plt, out: Path, toy: dict, settings: dict) -> str:
    data = toy_data(settings)
    fits = [f for f in ("evidence", "elbo") if any(key[1] == f for key in toy)]
    fig, axes = plt.subplots(len(fits), len(METHODS), figsize=(3.8 * len(METHODS), 3.9 * len(fits)), squeeze=False)
    size = len(data["xs"])
    for row, fit in enumerate(fits):
        for column, method in enumerate(METHODS):
            ax = axes[row, column]
            panel = toy[(method, fit)]
            probabilities = panel["probabilities"]
            colour = (probabilities @ CLASS_RGB[:probabilities.shape[1]]).reshape(size, size, 3)
            ax.imshow(np.clip(colour, 0, 1), origin="lower", aspect="auto",
                      extent=(data["xs"][0], data["xs"][-1], data["ys"][0], data["ys"][-1]))
            ax.contour(data["xs"], data["ys"], probabilities.max(axis=1).reshape(size, size), levels=[0.5, 0.9],
                       colors="white", linewidths=0.7)
            ax.scatter(data["X_train"][:, 0], data["X_train"][:, 1], c=CLASS_RGB[data["y_train"]], s=9,
                       edgecolors="black", linewidths=0.4)
            ax.set_title(f"{method} [{fit}], α_ε = {float(panel['alpha']):.3g}\nℓ = "
                         f"{float(panel['lengthscale']):.2f}, σ² = {float(panel['variance']):.2f}, "
                         f"test acc {float(panel['test_accuracy']):.3f}", fontsize=9)
            ax.set_xticks([])
            ax.set_yticks([])
    fig.suptitle("GP classification on a four-class toy set: predictive probabilities (white: max p = 0.5, 0.9); "
                 "row 'elbo': variational GP classification (Appendix B)", fontsize=10)
    fig.tight_layout()
    path = out / "toy.png"
    write_figure(path, fig, dpi=100)
    plt.close(fig)
    return path.name


def _active_figure(plt, out: Path, active: dict, summary: dict, settings: dict) -> str:
    snapshots = settings["active_snapshots"]
    columns = max(2, len(snapshots))
    fig = plt.figure(figsize=(3.6 * columns, 10))
    layout = fig.add_gridspec(3, columns)
    n0 = settings["active_initial"]
    labels = n0 + np.arange(settings["active_steps"] + 1)
    halves = [fig.add_subplot(layout[0, : columns // 2]), fig.add_subplot(layout[0, columns // 2:])]
    for ax, metric in zip(halves, ("accuracy", "nll")):
        for strategy, colour in (("entropy", "tab:blue"), ("random", "tab:gray")):
            mean = np.array(summary[strategy][f"{metric}_mean"])
            ax.plot(labels, mean, color=colour, label=strategy)
            if summary[strategy][f"{metric}_sd"] is not None:
                sd = np.array(summary[strategy][f"{metric}_sd"])
                ax.fill_between(labels, mean - sd, mean + sd, color=colour, alpha=0.2)
        ax.set_xlabel("labelled points")
        ax.set_ylabel(f"test {metric}")
        ax.legend(fontsize=8)
    X, y, _, _ = moons_split(settings, 0)
    for row, strategy in ((1, "entropy"), (2, "random")):
        record = active[(strategy, 0)]
        xs, ys = record["xs"], record["ys"]
        for column, step in enumerate(snapshots):
            ax = fig.add_subplot(layout[row, column])
            probability = record["snapshot_probability"][column].reshape(len(ys), len(xs))
            ax.contourf(xs, ys, probability, levels=np.linspace(0, 1, 11), cmap="RdBu_r", alpha=0.8)
            ax.contour(xs, ys, probability, levels=[0.5], colors="black", linewidths=1)
            ax.scatter(X[:, 0], X[:, 1], c="lightgray", s=4)
            chosen = np.concatenate([record["initial"], record["queried"][:step]])
            ax.scatter(X[chosen, 0], X[chosen, 1], c=np.where(y[chosen] == 1, "tab:red", "tab:blue"), s=22,
                       edgecolors="black", linewidths=0.6)
            ax.set_title(f"{strategy}, seed 0: {n0 + step} labels, acc {record['accuracy'][step]:.3f}", fontsize=9)
            ax.set_xticks([])
            ax.set_yticks([])
    fig.suptitle("Active learning with GP classification (variational approximation): p(y = 1 | x)")
    fig.tight_layout()
    path = out / "active.png"
    write_figure(path, fig, dpi=100)
    plt.close(fig)
    return path.name


# ======================================================================== run


def run(quick: bool = False, out: Path = Path("out/gp-classification"), progress: bool = False,
        splits: int | None = None, datasets=None, seed: int = 0) -> dict:
    """Run the four parts (module docstring), print the tables and write the files into ``out``."""
    # threadpoolctl limits only the BLAS libraries already loaded: numpy's and scipy's (two copies of OpenBLAS here)
    import scipy.linalg  # noqa: F401
    import sklearn.gaussian_process  # noqa: F401
    from threadpoolctl import threadpool_limits

    out = Path(out)
    chosen = _check_datasets(datasets) or (QUICK_DATASETS if quick else DATASETS)
    settings = settings_for(quick, seed)
    n_splits = settings["splits"] if splits is None else int(splits)
    if n_splits < 1:
        raise OptionError(f"gp-classification: --splits must be at least 1, got {n_splits}")
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    identity = {key: value for key, value in settings.items() if key != "splits"}
    store = _replications.open_records(out / "records", identity, "gp-classification")
    loaded = {name: load(name) for name in chosen}
    landscape_methods = METHODS + ("gauss",)
    toy_keys = [(m, f) for f in ("evidence", "elbo") for m in METHODS]
    total = len(chosen) * n_splits * len(COLUMNS) + len(landscape_methods) + len(toy_keys) + 2 * settings[
        "active_seeds"]
    computed = []

    def once(name: str, key, compute):
        def counted():
            computed.append(name)
            return compute()
        return store.compute_once(name, key, counted)

    with threadpool_limits(limits=BLAS_THREADS, user_api="blas"), \
            progress_bar(total, "gp-classification", progress) as bar:
        cells = {name: {} for name in chosen}
        for name in chosen:
            for split_index in range(n_splits):
                split, state = make_split(name, loaded[name], seed, split_index, settings["max_train"])
                head = {"random_state": state, "n_train": split.train_size, "n_test": int(split.test_index.size)}
                for method in COLUMNS:
                    bar.set_postfix_str(f"{name} split {split_index + 1}/{n_splits} {method}")

                    def compute(split=split, method=method, head=head):
                        fitted = fit_sklearn(split) if method == "sklearn" else fit_cell(
                            split, method, settings["alpha_grid"])
                        return {**head, **fitted}

                    cells[name][(split_index, method)] = once(f"table/{name}_s{split_index:02d}_{method}.json",
                                                              [name, split_index, method], compute)
                    bar.update()
        results = {name: _aggregate(name, loaded[name], cells[name], n_splits) for name in chosen}

        landscape = {}
        for method in landscape_methods:
            bar.set_postfix_str(f"landscape {method}")
            landscape[method] = once(f"landscape/{method}.npz", ["landscape", method],
                                     lambda method=method: landscape_panel(method, settings))
            bar.update()
        toy = {}
        for method, fit in toy_keys:
            bar.set_postfix_str(f"toy {method} {fit}")
            toy[(method, fit)] = once(f"toy/{method}_{fit}.npz", ["toy", method, fit],
                                      lambda method=method, fit=fit: toy_panel(method, fit, settings))
            bar.update()
        active = {}
        for strategy in ("entropy", "random"):
            for active_seed in range(settings["active_seeds"]):
                bar.set_postfix_str(f"active learning {strategy} seed {active_seed}")
                active[(strategy, active_seed)] = once(
                    f"active/{strategy}_seed{active_seed:02d}.npz", ["active", strategy, active_seed],
                    lambda strategy=strategy, active_seed=active_seed: active_learning_run(strategy, active_seed,
                                                                                           settings))
                bar.update()
    store.clear_claims()  # every record is finished: the claim files have nothing left to guard
    active_summary = _active_summary(active, settings)
    seconds = time.perf_counter() - started

    lines = [f"# GP classification with Gaussian likelihood approximations{' (quick)' if quick else ''}", "",
             (f"Data sets: {', '.join(chosen)}; {n_splits} stratified 70/30 split(s) per data set, the training "
              f"part subsampled (stratified) to at most {settings['max_train']} points, features z-scored by the "
              f"training statistics; seed {seed}; kernel σ² exp(−r²/2ℓ²) from σ² = ℓ = 1 with one constant mean "
              f"per latent function; α_ε grid {', '.join(f'{a:g}' for a in settings['alpha_grid'])}, chosen per "
              f"split by the training log-likelihood. {len(computed)} of {total} records computed in this run, "
              f"{seconds:.1f} s (one BLAS thread)."),
             "",
             (f"Not available offline, so not run: the paper's {', '.join(UNAVAILABLE)} (Table 3) and ionosphere "
              f"(Figure 3, replaced by {LANDSCAPE_DATASET})."), "",
             *_table_lines(results), "", *_paper_layout_lines(results), "", *_ranking_lines(results), "",
             *_elbo_lines(results), "", *_run_off_lines(cells, n_splits), "", *_landscape_lines(landscape), "",
             *_toy_lines(toy), "",
             *_active_lines(active_summary, settings), ""]
    ours = sum(f["fit_seconds"] for by_key in cells.values() for key, cell in by_key.items() if key[1] != "sklearn"
               for f in cell["fits"])
    theirs = sum(cell["fit_seconds"] for by_key in cells.values() for key, cell in by_key.items()
                 if key[1] == "sklearn")
    lines[3:3] = ["", f"Seconds of the fits recorded in the table's cells (whichever run computed them): {ours:.0f} s "
                      f"for the α_ε grids of the four approximations, {theirs:.0f} s for scikit-learn's GPC."]
    text = "\n".join(lines)
    write_text(out / "results.md", text)
    print(text)

    files = ["results.md", "summary.json"]
    plt = pyplot()
    if plt is not None:
        files += [_table_figure(plt, out, results), _alpha_figure(plt, out, results),
                  _landscape_figure(plt, out, landscape), _toy_figure(plt, out, toy, settings),
                  _active_figure(plt, out, active, active_summary, settings)]
    summary = {
        "example": "gp-classification", "quick": bool(quick), "seconds": seconds, "computed_this_run": len(computed),
        "settings": {**settings, "splits": n_splits, "datasets": list(chosen), "methods": list(METHODS),
                     "selection": "argmax over the α_ε grid of the mean training log predictive probability",
                     "unavailable": list(UNAVAILABLE), "blas_threads": BLAS_THREADS},
        "table": results,
        "cells": {name: [cells[name][(s, m)] for s in range(n_splits) for m in COLUMNS] for name in chosen},
        "landscape": {method: {"alpha": None if np.isnan(p["alpha"]) else float(p["alpha"]),
                               "train_log_likelihood": [None if np.isnan(v) else float(v)
                                                        for v in p["train_log_likelihood"]],
                               "fitted_log_parameters": p["fitted_log_parameters"],
                               "grid_max": float(p["log_evidence"].max()),
                               "grid_argmax": [float(v) for v in _argmax_point(p)]}
                      for method, p in landscape.items()},
        "toy": {f"{method}/{fit}": {key: float(value) for key, value in panel.items() if key != "probabilities"}
                for (method, fit), panel in toy.items()},
        "active": active_summary,
        "files": files + ["records"],
    }
    write_summary(out, summary)
    return summary


def _argmax_point(panel) -> tuple:
    """(log ℓ, log σ²) of the grid maximum of a landscape."""
    i, j = np.unravel_index(int(np.argmax(panel["log_evidence"])), panel["log_evidence"].shape)
    return panel["log_lengthscale"][j], panel["log_variance"][i]

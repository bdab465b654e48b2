"""Neural networks trained with losses from Gaussian likelihood approximations of class labels (Bui, "Likelihood
approximations via Gaussian approximate inference", §3.2, eq. (3)–(4), Fig. 2, Appendix C.1 and Figs. 9–10).

The losses are those of :mod:`fgraph_experiments.baselines.approximated_losses`: ``exact`` (softmax
cross-entropy), ``gauss`` (mean squared error to the one-hot labels) and the heteroscedastic Gaussian negative log
likelihood Σ_k (f_k − ỹ_k)² / (2 ṽ_k) on the pseudo-observations (ỹ, ṽ) of each label under ``laplace``,
``variational``, ``moment`` and ``moment-original``
(:func:`fgraph.families.basis_matching.softmax_pseudo_observations`).
Every network is the same multilayer perceptron: two hidden layers of 64 rectified linear units and a linear
output of K logits (He-normal weights, zero biases), trained by Adam (optax) with no weight decay; a network's
class probabilities are the softmax of its logits, for every loss (the paper's point-estimate prediction). For
``gauss`` the softmax of outputs regressed onto {0, 1} is under-confident by construction, so its rows also give
the other convention, the outputs clipped to [1e-6, 1] and renormalised ("gauss, clipped"). Metrics on held-out
points (:mod:`fgraph.metrics`): accuracy, NLL = mean −log p(true class) with probabilities floored at 1e-12, and
ECE with 20 equal-width confidence bins.

Three parts:

1. **Fig. 2: a toy four-class problem.** Four isotropic Gaussian blobs in 2-D, centres (±1.5, ±1.5), standard
   deviation 0.75, 100 training and 500 test points per class, drawn from ``numpy.random.default_rng([seed, r,
   0])`` for seed r (the paper does not describe its toy data). Each loss trains a network from the same
   initialisation (seed r) by full-batch Adam (learning rate 3e-3, 1000 steps; ``--quick``: 300), the
   approximations at α_ε = ``--toy-alpha`` (default 0.1, inside the 0.1–0.2 the paper recommends).
   ``toy_regions.png``: the predictive probabilities of seed 0 over the plane per loss (colour: the
   probability-weighted mix of the class colours; contours of the top-class probability 0.5, 0.9, 0.99), with the
   training points. Table: test accuracy, NLL, ECE, mean ± sd over the seeds.

2. **Figs. 9–10 in miniature: scikit-learn's digits** (8 × 8 images, 10 classes, 64 features). Per seed r a
   stratified 70/30 split (1258 / 539, the test set round(0.3 N); :func:`fgraph.datasets.train_test_splits`
   with random state [seed, r], features z-scored with the training statistics); one initialisation and one
   minibatch order per seed, shared by all losses; Adam, learning rate 1e-3, minibatches of 128 (the last
   partial batch of each epoch's shuffle dropped), 100 epochs (``--quick``: 20). Every approximation is
   trained at every α_ε of the grid (default 0.001, 0.01, 0.03, 0.1, 0.3, 1; ``--quick``: 0.01, 0.1). Test
   accuracy, NLL and ECE after the last epoch, mean ± sd over the seeds (default 5; ``--quick``: 1), against α_ε
   (``digits_alpha.png``, the exact cross-entropy and gauss as horizontal references). As in the paper (and
   Milios et al. 2018), α_ε is then **chosen** per seed and approximation by the training log-likelihood (mean
   log softmax probability of the training labels after the last epoch; the first grid value on ties), and the
   test error and NLL after every epoch of the chosen networks are drawn in ``digits_curves.png`` (Fig. 10).

3. **A Bayesian last layer** on a fixed feature extractor: the last hidden layer φ(x) (64 units) of seed r's
   exact cross-entropy network, with a bias feature (D = 65). For each class k the last layer's weights
   β_k ~ N(0, σ² I) (σ² = ``--prior-var``, default 1, bias included) are updated with the pseudo-observations
   ỹ_nk ~ N(β_kᵀφ̃(x_n), ṽ_nk) of the training labels by the conjugate update
   :func:`fgraph.models.logistic.conjugate.observe_linear`: K independent Bayesian linear regressions, exact
   (eq. (4)). For a test point the logits are independent Gaussians N(m_k, s_k²), m_k = μ_kᵀφ̃, s_k² = φ̃ᵀΣ_kφ̃,
   and the predictive E[softmax(ψ)] is estimated by Monte Carlo
   (:func:`fgraph.nodes.softmax.predictive_probabilities`: 2000 common standard-normal draws, ``--quick``: 500;
   standard error ≤ 1/(2√S) per probability), the predictive the library's softmax estimators use: unbiased, with
   an error set by S, where a probit-style closed form (softmax of m_k / √(1 + π s_k²/8)) has an error for K > 2
   that nothing here would measure. Also reported: the plug-in softmax(m) of the posterior mean. α_ε is chosen
   per seed and approximation by the training log-likelihood of the MC predictive, over the same grid. The
   reference is the point-estimate exact network itself. ``bll.png``: the BLL's test metrics against α_ε.

Options: ``--seeds R``, ``--epochs E`` (digits), ``--alphas A …`` (the α_ε grid of parts 2 and 3, each > 0,
none twice), ``--toy-alpha``, ``--prior-var``, ``--seed`` (default 0). Needs JAX and optax (the examples'
``baselines`` extra); JAX runs in 64-bit floats (``jax_enable_x64``, as the lab's other JAX baselines).

Outputs in ``out``: ``results.md``, ``summary.json``, ``toy_regions.png``, ``digits_alpha.png``,
``digits_curves.png``, ``bll.png`` (no figures without matplotlib), and ``runs/``, a results store
(:mod:`fgraph.store`) with a record of every trained network and last layer as it finishes — toy networks as npz
(test logits; the plane's logits for seed 0), digits networks as npz (per-epoch curves, final metrics; the exact
network's parameters), last layers as JSON — so that a killed run continues where it stopped, and a rerun with
more seeds or α_ε values computes only those. The settings the records depend on are the store's identity; other
settings in the same ``runs/`` are refused (use another ``--out``).
"""
from __future__ import annotations

import functools
import math
import time
from pathlib import Path

import numpy as np

from fgraph import examples
from fgraph.examples import Distinct, positive_number, progress_bar, pyplot, whole_number, write_summary
from fgraph.metrics import accuracy, expected_calibration_error, log_predictive_density
from fgraph.store import write_figure, write_text
from fgraph_experiments import _replications

__all__ = [
    "ALPHA_GRID",
    "DESCRIPTION",
    "FULL",
    "LOSS_LABELS",
    "OptionError",
    "QUICK",
    "add_arguments",
    "bayesian_last_layer",
    "digits_split",
    "init_mlp",
    "mlp_features",
    "mlp_logits",
    "network_key",
    "run",
    "scores",
    "select",
    "stored_params",
    "toy_data",
    "train_network",
]

DESCRIPTION = ("Gaussian likelihood approximations paper Fig. 2 and Figs. 9–10: MLPs trained with softmax CE, "
               "one-hot MSE and the four approximated Gaussian losses (toy 4-class, digits vs α_ε), and a Bayesian "
               "last layer on the pseudo-observations")

APPROXIMATIONS = ("laplace", "variational", "moment", "moment-original")
LOSSES = ("exact", "gauss") + APPROXIMATIONS
LOSS_LABELS = {"exact": "exact", "gauss": "gauss", "gauss-clipped": "gauss, clipped", "laplace": "laplace",
               "variational": "variational", "moment": "moment", "moment-original": "moment-ori"}
COLOURS = {"exact": "black", "gauss": "tab:brown", "laplace": "tab:orange", "variational": "tab:green",
           "moment": "tab:red", "moment-original": "tab:purple"}
ALPHA_GRID = (0.001, 0.01, 0.03, 0.1, 0.3, 1.0)
HIDDEN = (64, 64)
TOY = {"centre": 1.5, "sd": 0.75, "train_per_class": 100, "test_per_class": 500, "learning_rate": 3e-3,
       "grid_size": 100, "grid_extent": 4.5}
DIGITS = {"test_fraction": 0.3, "batch_size": 128, "learning_rate": 1e-3}
ECE_BINS = 20
PROBABILITY_FLOOR = 1e-12  # fgraph.metrics.log_predictive_density's floor, also in the per-epoch curves
CLIP_FLOOR = 1e-6  # "gauss, clipped"

FULL = {"seeds": 5, "epochs": 100, "toy_steps": 1000, "alphas": ALPHA_GRID, "predictive_samples": 2000}
QUICK = {"seeds": 1, "epochs": 20, "toy_steps": 300, "alphas": (0.01, 0.1), "predictive_samples": 500}


class OptionError(examples.OptionError):
    """An option of ``fgraph run approximated-losses`` that the run cannot use (one line, exit status 2)."""


def add_arguments(parser) -> None:
    """The options of ``fgraph run approximated-losses``, each refused before the run if the run could not use it."""
    parser.add_argument("--seeds", type=whole_number(1), default=None, metavar="R",
                        help=f"seeds (splits and initialisations) of every part (default {FULL['seeds']}; --quick: "
                             f"{QUICK['seeds']})")
    parser.add_argument("--epochs", type=whole_number(1), default=None, metavar="E",
                        help=f"training epochs on digits (default {FULL['epochs']}; --quick: {QUICK['epochs']})")
    parser.add_argument("--alphas", type=positive_number, nargs="+", action=Distinct, default=None, metavar="A",
                        help="the α_ε grid of the digits networks and the last layer (default "
                             f"{' '.join(f'{a:g}' for a in ALPHA_GRID)}; --quick: "
                             f"{' '.join(f'{a:g}' for a in QUICK['alphas'])})")
    parser.add_argument("--toy-alpha", type=positive_number, default=0.1, metavar="A",
                        help="α_ε of the approximations on the toy problem (default 0.1)")
    parser.add_argument("--prior-var", type=positive_number, default=1.0, metavar="V",
                        help="prior variance σ² of the Bayesian last layer's weights (default 1)")
    parser.add_argument("--seed", type=whole_number(0), default=0, help="the seed everything derives from (default 0)")


# ================================================================================================ JAX


def _jax():
    """JAX (64-bit floats), optax and the loss module; an :class:`OptionError` saying how to install them."""
    try:
        import jax
        import optax
    except ImportError as error:
        raise OptionError(f"approximated-losses needs JAX and optax ({error}); install them with "
                          "pip install -e 'examples[baselines]'") from None
    jax.config.update("jax_enable_x64", True)
    from fgraph_experiments.baselines import approximated_losses

    return jax, optax, approximated_losses


def network_key(seed: int, replicate: int, part: int):
    """The JAX key of the initialisation and minibatch order of seed ``replicate`` in ``part`` (0 toy, 1 digits)."""
    jax = _jax()[0]
    # the 7 keeps these keys apart from the data's streams, default_rng([seed, replicate, 0])
    return jax.random.PRNGKey(int(np.random.SeedSequence([int(seed), int(replicate), 7, int(part)])
                                  .generate_state(1)[0]))


def init_mlp(key, sizes) -> list:
    """He-normal weights N(0, 2/fan_in) (the output layer N(0, 1/fan_in)) and zero biases of the perceptron with
    layer widths ``sizes`` (inputs, hidden…, K): a list of (W (a, b), b (b,))."""
    jax = _jax()[0]
    params = []
    for layer, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        key, sub = jax.random.split(key)
        gain = 2.0 if layer < len(sizes) - 2 else 1.0
        params.append((math.sqrt(gain / fan_in) * jax.random.normal(sub, (fan_in, fan_out)),
                       jax.numpy.zeros(fan_out)))
    return params


def mlp_features(params, X):
    """The last hidden layer φ(X) (N, 64) of the perceptron ``params``."""
    import jax.numpy as jnp

    h = X
    for weights, bias in params[:-1]:
        h = jnp.maximum(h @ weights + bias, 0.0)
    return h


def mlp_logits(params, X):
    """The logits f(X) (N, K) of the perceptron ``params``."""
    weights, bias = params[-1]
    return mlp_features(params, X) @ weights + bias


@functools.lru_cache(maxsize=None)
def _trainer(epochs: int, batch_size: int, learning_rate: float, evaluate: bool):
    """The jitted training loop: one program for every loss (the exact loss or the tables' Gaussian loss, chosen
    at run time by ``lax.cond``, so that a part compiles once), the test set scored after every epoch if
    ``evaluate``."""
    jax, optax, losses = _jax()
    jnp = jax.numpy
    optimiser = optax.adam(learning_rate)
    log_floor = math.log(PROBABILITY_FLOOR)

    def objective(params, X, y, exact, targets, variances):
        logits = mlp_logits(params, X)
        return jax.lax.cond(exact, lambda: losses.softmax_cross_entropy(logits, y),
                            lambda: losses.approximation_loss(logits, y, targets, variances))

    @jax.jit
    def train(params, key, exact, X, y, targets, variances, X_test, y_test):
        n = X.shape[0]
        size = min(batch_size, n)
        batches = n // size

        def step(carry, index):
            params, state = carry
            value, grads = jax.value_and_grad(objective)(params, X[index], y[index], exact, targets, variances)
            updates, state = optimiser.update(grads, state, params)
            return (optax.apply_updates(params, updates), state), value

        def epoch(carry, epoch_key):
            order = jax.random.permutation(epoch_key, n)[:batches * size].reshape(batches, size)
            carry, values = jax.lax.scan(step, carry, order)
            if not evaluate:
                return carry, (jnp.mean(values), jnp.nan, jnp.nan)
            log_p = jax.nn.log_softmax(mlp_logits(carry[0], X_test), axis=-1)
            correct = (jnp.argmax(log_p, axis=-1) == y_test).astype(log_p.dtype)
            chosen = jnp.take_along_axis(log_p, y_test[:, None], axis=-1)[:, 0]
            return carry, (jnp.mean(values), jnp.mean(correct), -jnp.mean(jnp.maximum(chosen, log_floor)))

        (params, _), (loss, test_accuracy, test_nll) = jax.lax.scan(
            epoch, (params, optimiser.init(params)), jax.random.split(key, epochs))
        return params, {"train_loss": loss, "test_accuracy": test_accuracy, "test_nll": test_nll}

    return train


def train_network(X, y, X_test, y_test, loss: str, n_classes: int, key, *, alpha_epsilon=None, epochs: int,
                  batch_size: int, learning_rate: float, evaluate: bool = True) -> tuple:
    """Train the perceptron (inputs X (N, d), labels y (N,)) under ``loss`` (one of exact, gauss and the four
    approximations, the latter at ``alpha_epsilon``) by Adam for ``epochs`` passes of minibatches of
    ``batch_size`` (a full batch if larger than N), from ``init_mlp(key)``, the epochs' shuffles from the same
    key. Returns (params, curves): curves the mean training loss, and (``evaluate``; NaN otherwise) the test
    accuracy and test NLL after every epoch (numpy arrays (epochs,))."""
    jax, _, losses = _jax()
    init_key, order_key = jax.random.split(key)
    params = init_mlp(init_key, (X.shape[1], *HIDDEN, n_classes))
    exact = loss == "exact"
    if exact:
        targets = variances = np.ones((n_classes, n_classes))  # not used
    else:
        targets, variances = losses.loss_tables(loss, n_classes, alpha_epsilon)
    train = _trainer(int(epochs), int(batch_size), float(learning_rate), bool(evaluate))
    params, curves = train(params, order_key, np.asarray(exact), np.asarray(X, float), np.asarray(y, np.int64),
                           np.asarray(targets), np.asarray(variances), np.asarray(X_test, float),
                           np.asarray(y_test, np.int64))
    return params, {name: np.asarray(value) for name, value in curves.items()}


def _softmax(logits) -> np.ndarray:
    z = np.asarray(logits, float)
    z = np.exp(z - z.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def _clipped(outputs) -> np.ndarray:
    p = np.clip(np.asarray(outputs, float), CLIP_FLOOR, 1.0)
    return p / p.sum(axis=1, keepdims=True)


def scores(probabilities, y) -> dict:
    """Accuracy, NLL (probabilities floored at 1e-12) and ECE (20 bins) by :mod:`fgraph.metrics`."""
    return {"accuracy": accuracy(probabilities, y), "nll": -log_predictive_density(probabilities, y),
            "ece": expected_calibration_error(probabilities, y, n_bins=ECE_BINS)}


def select(train_log_likelihoods) -> int:
    """The index of the largest training log-likelihood (the first on ties)."""
    return int(np.argmax(np.asarray(train_log_likelihoods, dtype=float)))


# ================================================================================================ data


def toy_data(seed: int, replicate: int) -> dict:
    """The four blobs of seed ``replicate``: ``X_train`` (400, 2), ``y_train``, ``X_test`` (2000, 2), ``y_test``
    (labels 0..3, class k centred at 1.5·(±1, ±1), going round the quadrants), from
    ``default_rng([seed, replicate, 0])``."""
    rng = np.random.default_rng([int(seed), int(replicate), 0])
    centres = TOY["centre"] * np.array([[1.0, 1.0], [-1.0, 1.0], [-1.0, -1.0], [1.0, -1.0]])

    def draw(per_class):
        y = np.repeat(np.arange(4), per_class)
        return centres[y] + TOY["sd"] * rng.standard_normal((y.size, 2)), y

    X_train, y_train = draw(TOY["train_per_class"])
    X_test, y_test = draw(TOY["test_per_class"])
    return {"X_train": X_train, "y_train": y_train, "X_test": X_test, "y_test": y_test}


def _grid() -> tuple:
    """The plane of the toy figure: (xs (G,), points (G², 2))."""
    xs = np.linspace(-TOY["grid_extent"], TOY["grid_extent"], TOY["grid_size"])
    xx, yy = np.meshgrid(xs, xs)
    return xs, np.column_stack([xx.ravel(), yy.ravel()])


@functools.lru_cache(maxsize=1)
def _digits_raw() -> tuple:
    from sklearn.datasets import load_digits

    digits = load_digits()
    return digits.data.astype(float), digits.target.astype(np.int64)


def digits_split(seed: int, replicate: int):
    """The stratified 70/30 split of seed ``replicate`` (z-scored with the training statistics; a
    :class:`fgraph.datasets.splits.Split`)."""
    from fgraph.datasets import train_test_splits

    X, y = _digits_raw()
    n_test = round(DIGITS["test_fraction"] * len(y))
    return train_test_splits(X, y, [len(y) - n_test], n_test, random_state=[int(seed), int(replicate)])[0]


# ================================================================================================ cells


def _alpha_name(alpha: float) -> str:
    return f"{alpha:g}"


def _toy_cell(seed: int, r: int, loss: str, settings: dict) -> dict:
    data = toy_data(seed, r)
    params, curves = train_network(data["X_train"], data["y_train"], data["X_test"], data["y_test"], loss, 4,
                                   network_key(seed, r, 0), alpha_epsilon=settings["toy_alpha"],
                                   epochs=settings["toy_steps"], batch_size=len(data["y_train"]),
                                   learning_rate=TOY["learning_rate"], evaluate=False)
    record = {"test_logits": np.asarray(mlp_logits(params, data["X_test"])),
              "train_loss": curves["train_loss"]}
    if r == 0:
        record["grid_logits"] = np.asarray(mlp_logits(params, _grid()[1]), dtype=np.float32)
    return record


def _digits_cell(seed: int, r: int, loss: str, alpha, settings: dict) -> dict:
    split = digits_split(seed, r)
    params, curves = train_network(split.X_train, split.y_train, split.X_test, split.y_test, loss, 10,
                                   network_key(seed, r, 1), alpha_epsilon=alpha, epochs=settings["epochs"],
                                   batch_size=DIGITS["batch_size"], learning_rate=DIGITS["learning_rate"])
    test_outputs = np.asarray(mlp_logits(params, split.X_test))
    train_probabilities = _softmax(mlp_logits(params, split.X_train))
    final = scores(_softmax(test_outputs), split.y_test)
    record = {**curves, "final": np.array([final["accuracy"], final["nll"], final["ece"]]),
              "train_log_likelihood": np.array(log_predictive_density(train_probabilities, split.y_train))}
    if loss == "gauss":
        clipped = scores(_clipped(test_outputs), split.y_test)
        record["final_clipped"] = np.array([clipped["accuracy"], clipped["nll"], clipped["ece"]])
    if loss == "exact":  # the feature extractor of the Bayesian last layer
        for layer, (weights, bias) in enumerate(params):
            record[f"W{layer}"], record[f"b{layer}"] = np.asarray(weights), np.asarray(bias)
    return record


def _final(record: dict, key: str = "final") -> dict:
    values = np.asarray(record[key], dtype=float)
    return {"accuracy": float(values[0]), "nll": float(values[1]), "ece": float(values[2])}


def stored_params(record: dict) -> list:
    """The perceptron's parameters from an exact digits cell (arrays ``W0, b0, W1, b1, W2, b2``)."""
    return [(record[f"W{layer}"], record[f"b{layer}"]) for layer in range(len(HIDDEN) + 1)]


def bayesian_last_layer(features_train, y_train, features_test, method: str, alpha_epsilon: float,
                        prior_var: float, n_classes: int, predictive_samples: int) -> dict:
    """The Gaussian posterior of the last layer's weights per class under the pseudo-observations, and its
    predictions.

    ``features_*`` (N, H) are the fixed features; a bias feature 1 is appended (D = H + 1). For each class k,
    β_k ~ N(0, prior_var·I_D) is updated by :func:`~fgraph.models.logistic.conjugate.observe_linear` with the
    rows [φ(x_n), 1], the targets ỹ_nk and variances ṽ_nk of
    :func:`~fgraph.families.basis_matching.softmax_pseudo_observations`. Returns the posterior ``means`` (K, D)
    and ``covs`` (K, D, D), and for the test and training features the logit means ``m`` (N, K), variances
    ``s2`` (N, K) and the MC predictive probabilities (:func:`fgraph.nodes.softmax.predictive_probabilities`,
    ``predictive_samples`` common draws, seed 0): ``test_mc``, ``train_mc``, and the plug-in ``test_plug_in`` =
    softmax(m)."""
    from fgraph.families.basis_matching import softmax_pseudo_observations
    from fgraph.models.logistic.conjugate import observe_linear
    from fgraph.nodes.softmax import predictive_probabilities

    rows = np.column_stack([features_train, np.ones(len(features_train))])
    test_rows = np.column_stack([features_test, np.ones(len(features_test))])
    targets, variances = softmax_pseudo_observations(y_train, n_classes, alpha_epsilon, method)
    dimension = rows.shape[1]
    prior_mean, prior_cov = np.zeros(dimension), prior_var * np.eye(dimension)
    posterior = [observe_linear(prior_mean, prior_cov, rows, targets[:, k], variances[:, k])
                 for k in range(n_classes)]
    means = np.array([p[0] for p in posterior])
    covs = np.array([p[1] for p in posterior])

    def moments(design):
        return design @ means.T, np.maximum(np.einsum("ni,kij,nj->nk", design, covs, design), 0.0)

    m_test, s2_test = moments(test_rows)
    m_train, s2_train = moments(rows)
    return {"means": means, "covs": covs, "m": m_test, "s2": s2_test,
            "test_mc": predictive_probabilities(m_test, s2_test, n_samples=predictive_samples, seed=0),
            "train_mc": predictive_probabilities(m_train, s2_train, n_samples=predictive_samples, seed=0),
            "test_plug_in": _softmax(m_test)}


def _bll_cell(seed: int, r: int, method: str, alpha: float, exact_record: dict, settings: dict) -> dict:
    from threadpoolctl import threadpool_limits

    split = digits_split(seed, r)
    params = stored_params(exact_record)
    # 65 × 65 systems: a multi-threaded BLAS only adds synchronisation, and stalls on a busy machine
    with threadpool_limits(1):
        fit = bayesian_last_layer(np.asarray(mlp_features(params, split.X_train)), split.y_train,
                                  np.asarray(mlp_features(params, split.X_test)), method, alpha,
                                  settings["prior_var"], 10, settings["predictive_samples"])
    return {"mc": scores(fit["test_mc"], split.y_test), "plug_in": scores(fit["test_plug_in"], split.y_test),
            "train_log_likelihood": log_predictive_density(fit["train_mc"], split.y_train)}


# ================================================================================================ aggregates


def _mean_sd(values) -> dict:
    values = np.asarray(values, dtype=float)
    return {"mean": float(values.mean()), "sd": float(values.std(ddof=1)) if values.size > 1 else None,
            "values": values.tolist()}


def _metrics(entries: list) -> dict:
    return {metric: _mean_sd([e[metric] for e in entries]) for metric in ("accuracy", "nll", "ece")}


def _toy_aggregate(records: dict, seeds: int, y_tests: list) -> dict:
    per_loss = {}
    for loss in LOSSES:
        entries = [scores(_softmax(records[r][loss]["test_logits"]), y_tests[r]) for r in range(seeds)]
        per_loss[loss] = _metrics(entries)
        if loss == "gauss":
            per_loss["gauss-clipped"] = _metrics([scores(_clipped(records[r][loss]["test_logits"]), y_tests[r])
                                                  for r in range(seeds)])
    return per_loss


def _digits_aggregate(cells: dict, seeds: int, alphas: tuple) -> dict:
    """cells[(r, loss, alpha)] → the grid of metrics, the chosen α_ε per seed and the chosen networks' curves."""
    result = {"exact": _metrics([_final(cells[(r, "exact", None)]) for r in range(seeds)]),
              "gauss": _metrics([_final(cells[(r, "gauss", None)]) for r in range(seeds)]),
              "gauss-clipped": _metrics([_final(cells[(r, "gauss", None)], "final_clipped") for r in range(seeds)]),
              "grid": {}, "chosen": {}, "curves": {}}
    result["train_log_likelihood"] = {loss: _mean_sd([float(cells[(r, loss, None)]["train_log_likelihood"])
                                                      for r in range(seeds)]) for loss in ("exact", "gauss")}
    for loss in ("exact", "gauss"):
        result["curves"][loss] = _curves([cells[(r, loss, None)] for r in range(seeds)])
    for method in APPROXIMATIONS:
        grid = {}
        for alpha in alphas:
            records = [cells[(r, method, alpha)] for r in range(seeds)]
            grid[_alpha_name(alpha)] = {**_metrics([_final(rec) for rec in records]),
                                        "train_log_likelihood": _mean_sd([float(rec["train_log_likelihood"])
                                                                          for rec in records])}
        result["grid"][method] = grid
        chosen, chosen_records, best_test = [], [], []
        for r in range(seeds):
            train_ll = [float(cells[(r, method, alpha)]["train_log_likelihood"]) for alpha in alphas]
            test_nll = [_final(cells[(r, method, alpha)])["nll"] for alpha in alphas]
            index = select(train_ll)
            chosen.append(alphas[index])
            best_test.append(alphas[int(np.argmin(test_nll))])
            chosen_records.append(cells[(r, method, alphas[index])])
        result["chosen"][method] = {"alphas": chosen, "test_nll_best_alphas": best_test,
                                    **_metrics([_final(rec) for rec in chosen_records])}
        result["curves"][method] = _curves(chosen_records)
    return result


def _curves(records: list) -> dict:
    error = np.array([1.0 - np.asarray(rec["test_accuracy"]) for rec in records])
    nll = np.array([np.asarray(rec["test_nll"]) for rec in records])
    return {"test_error": error.mean(axis=0).tolist(), "test_nll": nll.mean(axis=0).tolist()}


def _bll_aggregate(cells: dict, network: list, seeds: int, alphas: tuple) -> dict:
    result = {"network": _metrics(network), "grid": {}, "chosen": {}}
    for method in APPROXIMATIONS:
        grid = {}
        for alpha in alphas:
            records = [cells[(r, method, alpha)] for r in range(seeds)]
            grid[_alpha_name(alpha)] = {"mc": _metrics([rec["mc"] for rec in records]),
                                        "plug_in": _metrics([rec["plug_in"] for rec in records]),
                                        "train_log_likelihood": _mean_sd([rec["train_log_likelihood"]
                                                                          for rec in records])}
        result["grid"][method] = grid
        chosen = [alphas[select([cells[(r, method, a)]["train_log_likelihood"] for a in alphas])]
                  for r in range(seeds)]
        result["chosen"][method] = {"alphas": chosen,
                                    "mc": _metrics([cells[(r, method, a)]["mc"] for r, a in enumerate(chosen)]),
                                    "plug_in": _metrics([cells[(r, method, a)]["plug_in"]
                                                         for r, a in enumerate(chosen)])}
    return result


# ================================================================================================ report


def _cell(entry: dict, digits: int = 3) -> str:
    if entry["sd"] is None:
        return f"{entry['mean']:.{digits}f}"
    return f"{entry['mean']:.{digits}f} ± {entry['sd']:.{digits}f}"


def _row(label: str, alpha: str, metrics: dict, extra: str = "") -> str:
    return (f"| {label} | {alpha} | {_cell(metrics['accuracy'])} | {_cell(metrics['nll'])} | "
            f"{_cell(metrics['ece'])} |{extra}")


def _paired(values, reference) -> str:
    """'mean ± sd of the paired difference (lower in k/R)'."""
    difference = np.asarray(values, float) - np.asarray(reference, float)
    sd = f" ± {difference.std(ddof=1):.3f}" if difference.size > 1 else ""
    return f"{difference.mean():+.3f}{sd} (lower in {int(np.sum(difference < 0))}/{difference.size} seeds)"


def _edge_note(chosen: list, alphas) -> str:
    """Where the chosen α_ε lie at an end of the grid (the selection could not look beyond it), or ''."""
    notes = []
    for end, value in (("smallest", min(alphas)), ("largest", max(alphas))):
        count = sum(a == value for a in chosen)
        if count and len(alphas) > 1:
            notes.append(f"the grid's {end} value ({value:g}) in {count}/{len(chosen)} seeds")
    return f" The choice is {' and '.join(notes)}, so the grid does not bracket it." if notes else ""


def _toy_lines(toy: dict, settings: dict) -> list:
    lines = ["## 1. Toy four-class problem (Fig. 2)", "",
             (f"Four Gaussian blobs (centres (±{TOY['centre']:g}, ±{TOY['centre']:g}), sd {TOY['sd']:g}), "
              f"{TOY['train_per_class']} training and {TOY['test_per_class']} test points per class; full-batch "
              f"Adam, learning rate {TOY['learning_rate']:g}, {settings['toy_steps']} steps; approximations at "
              f"α_ε = {settings['toy_alpha']:g}. Test metrics, mean ± sd over {settings['seeds']} seed(s); "
              "probabilities = softmax of the logits (gauss, clipped: outputs clipped to [1e-6, 1] and "
              "renormalised). The figure `toy_regions.png` is seed 0."), "",
             "| loss | α_ε | accuracy | NLL | ECE |", "|---|---|---:|---:|---:|"]
    for loss in ("exact", "gauss", "gauss-clipped") + APPROXIMATIONS:
        alpha = f"{settings['toy_alpha']:g}" if loss in APPROXIMATIONS else "–"
        lines.append(_row(LOSS_LABELS[loss], alpha, toy[loss]))
    exact = toy["exact"]["nll"]["mean"]
    better = [LOSS_LABELS[m] for m in APPROXIMATIONS if toy[m]["nll"]["mean"] < exact]
    worse = [LOSS_LABELS[m] for m in APPROXIMATIONS if toy[m]["nll"]["mean"] >= exact]
    order = sorted(("exact", "gauss", "gauss-clipped") + APPROXIMATIONS, key=lambda m: toy[m]["nll"]["mean"])
    ranked = ", ".join(f"{LOSS_LABELS[m]} ({toy[m]['nll']['mean']:.3f})" for m in order)
    lines += ["", f"Measured: mean test NLL from lowest to highest: {ranked}. "
                  f"Approximations below exact: {', '.join(better) or 'none'}; at or above: "
                  f"{', '.join(worse) or 'none'}."]
    return lines


def _digits_lines(digits: dict, settings: dict) -> list:
    alphas = settings["alphas"]
    lines = ["## 2. Digits: test metrics against α_ε (Fig. 9)", "",
             (f"scikit-learn's digits, stratified 70/30 split per seed, z-scored; Adam, learning rate "
              f"{DIGITS['learning_rate']:g}, minibatches of {DIGITS['batch_size']}, {settings['epochs']} epochs. "
              f"Test metrics after the last epoch and the training log-likelihood (mean log p(y | x) of the training "
              f"labels), mean ± sd over {settings['seeds']} seed(s)."), "",
             "| loss | α_ε | accuracy | NLL | ECE | train log-lik. |", "|---|---|---:|---:|---:|---:|"]
    for loss in ("exact", "gauss"):
        lines.append(_row(LOSS_LABELS[loss], "–", digits[loss],
                          f" {_cell(digits['train_log_likelihood'][loss])} |"))
    lines.append(_row(LOSS_LABELS["gauss-clipped"], "–", digits["gauss-clipped"], " |"))
    for method in APPROXIMATIONS:
        for alpha in alphas:
            entry = digits["grid"][method][_alpha_name(alpha)]
            lines.append(_row(LOSS_LABELS[method], f"{alpha:g}", entry, f" {_cell(entry['train_log_likelihood'])} |"))
    lines += ["", "## 3. Digits: α_ε chosen by the training log-likelihood (Fig. 10)", "",
              ("Per seed and approximation, the α_ε of the grid with the largest training log-likelihood; "
               "`digits_curves.png` shows the test error and NLL of these networks after every epoch (mean over "
               "seeds). Paired differences to exact are per seed (approximation − exact)."), "",
              "| loss | chosen α_ε per seed | accuracy | NLL | ECE | Δ NLL to exact | Δ accuracy to exact |",
              "|---|---|---:|---:|---:|---|---|"]
    exact = digits["exact"]
    lines.append(f"| exact | – | {_cell(exact['accuracy'])} | {_cell(exact['nll'])} | {_cell(exact['ece'])} | | |")
    for method in APPROXIMATIONS:
        c = digits["chosen"][method]
        lines.append(f"| {LOSS_LABELS[method]} | {', '.join(f'{a:g}' for a in c['alphas'])} | "
                     f"{_cell(c['accuracy'])} | {_cell(c['nll'])} | {_cell(c['ece'])} | "
                     f"{_paired(c['nll']['values'], exact['nll']['values'])} | "
                     f"{_paired(c['accuracy']['values'], exact['accuracy']['values'])} |")
    lines += ["", "Measured:", ""]
    for method in APPROXIMATIONS:
        c = digits["chosen"][method]
        nll = [digits["grid"][method][_alpha_name(a)]["nll"]["mean"] for a in alphas]
        agree = sum(a == b for a, b in zip(c["alphas"], c["test_nll_best_alphas"]))
        relation = "below" if c["nll"]["mean"] < exact["nll"]["mean"] else "at or above"
        lines.append(f"* {LOSS_LABELS[method]}: at the chosen α_ε its mean test NLL {c['nll']['mean']:.3f} is "
                     f"{relation} exact's {exact['nll']['mean']:.3f}; over the grid its mean test NLL ranges "
                     f"{min(nll):.3f} (α_ε = {alphas[int(np.argmin(nll))]:g}) to {max(nll):.3f} "
                     f"(α_ε = {alphas[int(np.argmax(nll))]:g}); the training log-likelihood picked the "
                     f"test-NLL-best α_ε in {agree}/{len(c['alphas'])} seeds.{_edge_note(c['alphas'], alphas)}")
    curve = digits["curves"]["exact"]["test_nll"]
    lowest = int(np.argmin(curve))
    lines.append(f"* exact: the mean test NLL is lowest after epoch {lowest + 1} ({curve[lowest]:.3f}) and "
                 f"{curve[-1]:.3f} after the last ({len(curve)}).")
    return lines


def _bll_lines(bll: dict, settings: dict) -> list:
    alphas = settings["alphas"]
    network = bll["network"]
    lines = ["## 4. Bayesian last layer on the exact network's features", "",
             (f"The last hidden layer (64 units, + bias) of each seed's exact cross-entropy network is kept fixed; "
              f"per class the last layer's weights get the prior N(0, {settings['prior_var']:g} I) and the conjugate "
              f"update with the pseudo-observations (`observe_linear`). Predictive: E[softmax] over the Gaussian "
              f"logits by Monte Carlo ({settings['predictive_samples']} common draws); plug-in: softmax of the "
              f"posterior-mean logits. α_ε chosen per seed by the training log-likelihood of the MC predictive. "
              f"Δ: paired differences to the network (BLL − network)."), "",
             "| model | chosen α_ε per seed | accuracy | NLL | ECE | Δ NLL to network | Δ ECE to network |",
             "|---|---|---:|---:|---:|---|---|",
             f"| network (exact CE, point estimate) | – | {_cell(network['accuracy'])} | {_cell(network['nll'])} | "
             f"{_cell(network['ece'])} | | |"]
    for method in APPROXIMATIONS:
        c = bll["chosen"][method]
        for kind, label in (("mc", "BLL"), ("plug_in", "BLL plug-in")):
            m = c[kind]
            lines.append(f"| {label}, {LOSS_LABELS[method]} | {', '.join(f'{a:g}' for a in c['alphas'])} | "
                         f"{_cell(m['accuracy'])} | {_cell(m['nll'])} | {_cell(m['ece'])} | "
                         f"{_paired(m['nll']['values'], network['nll']['values'])} | "
                         f"{_paired(m['ece']['values'], network['ece']['values'])} |")
    lines += ["", "Every α_ε (MC predictive):", "", "| model | α_ε | accuracy | NLL | ECE | train log-lik. |",
              "|---|---|---:|---:|---:|---:|"]
    for method in APPROXIMATIONS:
        for alpha in alphas:
            entry = bll["grid"][method][_alpha_name(alpha)]
            lines.append(_row(f"BLL, {LOSS_LABELS[method]}", f"{alpha:g}", entry["mc"],
                              f" {_cell(entry['train_log_likelihood'])} |"))
    below = {m: bll["chosen"][m]["mc"]["nll"]["mean"] < network["nll"]["mean"] for m in APPROXIMATIONS}
    better = [LOSS_LABELS[m] for m in APPROXIMATIONS if below[m]]
    worse = [LOSS_LABELS[m] for m in APPROXIMATIONS if not below[m]]
    lines += ["", f"Measured: at the chosen α_ε the BLL's mean test NLL is below the network's "
                  f"({network['nll']['mean']:.3f}) for {', '.join(better) or 'none'}, and at or above it for "
                  f"{', '.join(worse) or 'none'}."]
    for method in APPROXIMATIONS:
        note = _edge_note(bll["chosen"][method]["alphas"], alphas)
        if note:
            lines.append(f"* BLL, {LOSS_LABELS[method]}: {note.strip()}")
    return lines


# ================================================================================================ figures


def _toy_figure(plt, out: Path, grid_logits: dict, data: dict, toy: dict) -> str:
    from matplotlib.colors import to_rgb

    xs, _ = _grid()
    colours = np.array([to_rgb(c) for c in ("tab:blue", "tab:orange", "tab:green", "tab:red")])
    fig, axes = plt.subplots(2, 3, figsize=(13.5, 9), sharex=True, sharey=True)
    for ax, loss in zip(axes.ravel(), LOSSES):
        p = _softmax(grid_logits[loss]).reshape(len(xs), len(xs), 4)
        ax.imshow(p @ colours, origin="lower", extent=(xs[0], xs[-1], xs[0], xs[-1]), interpolation="bilinear")
        contour = ax.contour(xs, xs, p.max(axis=-1), levels=[0.5, 0.9, 0.99], colors="k", linewidths=0.7)
        ax.clabel(contour, fontsize=7)
        for k in range(4):
            mine = data["y_train"] == k
            ax.scatter(data["X_train"][mine, 0], data["X_train"][mine, 1], s=9, color=colours[k], edgecolor="k",
                       linewidth=0.4)
        ax.set_xlim(xs[0], xs[-1])
        ax.set_ylim(xs[0], xs[-1])
        m = toy[loss]
        ax.set_title(f"{LOSS_LABELS[loss]}: acc {m['accuracy']['mean']:.3f}, NLL {m['nll']['mean']:.3f}, "
                     f"ECE {m['ece']['mean']:.3f}", fontsize=10)
    fig.suptitle("Predictive probabilities (colour mix by p; contours: top-class p = 0.5, 0.9, 0.99), seed 0")
    fig.tight_layout()
    path = out / "toy_regions.png"
    write_figure(path, fig, dpi=100)
    plt.close(fig)
    return path.name


def _reference(ax, entry: dict, colour: str, label: str, style: str) -> None:
    ax.axhline(entry["mean"], color=colour, ls=style, label=label)
    if entry["sd"] is not None:
        ax.axhspan(entry["mean"] - entry["sd"], entry["mean"] + entry["sd"], color=colour, alpha=0.08)


def _alpha_figure(plt, path: Path, alphas, series: dict, references: list, title: str) -> str:
    """Metrics against α_ε: ``series`` {method: {alpha name: metrics}}, ``references`` [(metrics, colour, label,
    style)] as horizontal lines with ±sd bands."""
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.3))
    for ax, metric, label in zip(axes, ("accuracy", "nll", "ece"), ("test accuracy", "test NLL", "test ECE")):
        for method in APPROXIMATIONS:
            mean = [series[method][_alpha_name(a)][metric]["mean"] for a in alphas]
            sd = [series[method][_alpha_name(a)][metric]["sd"] or 0.0 for a in alphas]
            ax.errorbar(alphas, mean, yerr=sd, marker="o", capsize=3, color=COLOURS[method],
                        label=LOSS_LABELS[method])
        for entry, colour, name, style in references:
            _reference(ax, entry[metric], colour, name, style)
        ax.set_xscale("log")
        ax.set_xlabel("α_ε")
        ax.set_ylabel(label)
        if metric == "nll":
            ax.set_yscale("log")
    axes[0].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    write_figure(path, fig, dpi=100)
    plt.close(fig)
    return path.name


def _curves_figure(plt, out: Path, digits: dict) -> str:
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.3))
    for loss in LOSSES:
        curves = digits["curves"][loss]
        epochs = np.arange(1, len(curves["test_error"]) + 1)
        label = LOSS_LABELS[loss]
        if loss in APPROXIMATIONS:
            chosen = sorted(set(digits["chosen"][loss]["alphas"]))
            label += " (α_ε " + ", ".join(f"{a:g}" for a in chosen) + ")"
        axes[0].plot(epochs, curves["test_error"], color=COLOURS[loss], label=label)
        axes[1].plot(epochs, curves["test_nll"], color=COLOURS[loss], label=label)
    axes[0].set_ylabel("test error")
    axes[1].set_ylabel("test NLL")
    axes[1].set_yscale("log")
    for ax in axes:
        ax.set_xlabel("epoch")
    axes[0].legend(fontsize=8)
    fig.suptitle("Digits: networks at the α_ε chosen by the training log-likelihood (mean over seeds)")
    fig.tight_layout()
    path = out / "digits_curves.png"
    write_figure(path, fig, dpi=100)
    plt.close(fig)
    return path.name


# ================================================================================================ run


def _settings(quick: bool, seeds, epochs, alphas, toy_alpha, prior_var, seed) -> dict:
    settings = dict(QUICK if quick else FULL)
    for name, value, least in (("seeds", seeds, 1), ("epochs", epochs, 1)):
        if value is not None:
            if int(value) != value or value < least:
                raise OptionError(f"approximated-losses: --{name} must be a whole number >= {least}, got {value!r}")
            settings[name] = int(value)
    if alphas is not None:
        alphas = [float(a) for a in np.atleast_1d(alphas)]
        if not alphas or not all(math.isfinite(a) and a > 0 for a in alphas):
            raise OptionError(f"approximated-losses: --alphas must be finite numbers > 0, got {alphas}")
        if len(set(alphas)) != len(alphas):
            raise OptionError(f"approximated-losses: --alphas has a value twice: {alphas}")
        settings["alphas"] = tuple(sorted(alphas))
    for name, value in (("toy-alpha", toy_alpha), ("prior-var", prior_var)):
        if not (math.isfinite(float(value)) and float(value) > 0):
            raise OptionError(f"approximated-losses: --{name} must be a finite number > 0, got {value!r}")
    if int(seed) != seed or seed < 0:
        raise OptionError(f"approximated-losses: --seed must be a whole number >= 0, got {seed!r}")
    settings.update(toy_alpha=float(toy_alpha), prior_var=float(prior_var), seed=int(seed), quick=bool(quick))
    settings["alphas"] = list(settings["alphas"])
    return settings


def run(quick: bool = False, out: Path = Path("out/approximated-losses"), progress: bool = False,
        seeds: int | None = None, epochs: int | None = None, alphas=None, toy_alpha: float = 0.1,
        prior_var: float = 1.0, seed: int = 0) -> dict:
    """Run the three parts (module docstring), print the report and write the files into ``out``."""
    out = Path(out)
    settings = _settings(quick, seeds, epochs, alphas, toy_alpha, prior_var, seed)
    _jax()  # before anything is written: a missing JAX is one line
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    R, grid = settings["seeds"], tuple(settings["alphas"])
    # every trained network and last layer is a record as soon as it finishes; the identity is every setting a
    # record's numbers depend on (the number of seeds and the α_ε grid only say which records there are)
    identity = dict(settings, toy=TOY, digits=DIGITS, hidden=list(HIDDEN), ece_bins=ECE_BINS)
    store = _replications.open_records(out / "runs", identity, "approximated-losses", ("seeds", "alphas"))

    computed = []

    def kept(name: str, key, compute):
        def counted():
            computed.append(name)
            return compute()

        return store.compute_once(name, key, counted)

    total = R * (len(LOSSES) + 2 + 2 * len(APPROXIMATIONS) * len(grid))
    toy_records, digits_cells, bll_cells = {}, {}, {}
    with progress_bar(total, "approximated-losses", progress) as bar:
        for r in range(R):
            toy_records[r] = {}
            for loss in LOSSES:
                bar.set_postfix_str(f"toy, seed {r}, {loss}")
                toy_records[r][loss] = kept(f"toy/s{r}_{loss}.npz", ["toy", r, loss],
                                            lambda: _toy_cell(seed, r, loss, settings))
                bar.update()
        for r in range(R):
            for loss in ("exact", "gauss"):
                bar.set_postfix_str(f"digits, seed {r}, {loss}")
                digits_cells[(r, loss, None)] = kept(f"digits/s{r}_{loss}.npz", ["digits", r, loss],
                                                     lambda: _digits_cell(seed, r, loss, None, settings))
                bar.update()
            for method in APPROXIMATIONS:
                for alpha in grid:
                    bar.set_postfix_str(f"digits, seed {r}, {method}, α_ε {alpha:g}")
                    digits_cells[(r, method, alpha)] = kept(
                        f"digits/s{r}_{method}_a{_alpha_name(alpha)}.npz", ["digits", r, method, alpha],
                        lambda: _digits_cell(seed, r, method, alpha, settings))
                    bar.update()
            for method in APPROXIMATIONS:
                for alpha in grid:
                    bar.set_postfix_str(f"last layer, seed {r}, {method}, α_ε {alpha:g}")
                    bll_cells[(r, method, alpha)] = kept(
                        f"bll/s{r}_{method}_a{_alpha_name(alpha)}.json", ["bll", r, method, alpha],
                        lambda: _bll_cell(seed, r, method, alpha, digits_cells[(r, "exact", None)], settings))
                    bar.update()
    store.clear_claims()

    toy = _toy_aggregate(toy_records, R, [toy_data(seed, r)["y_test"] for r in range(R)])
    digits = _digits_aggregate(digits_cells, R, grid)
    bll = _bll_aggregate(bll_cells, [_final(digits_cells[(r, "exact", None)]) for r in range(R)], R, grid)
    seconds = time.perf_counter() - started

    lines = [f"# Losses from Gaussian likelihood approximations{' (quick)' if quick else ''}", "",
             (f"Networks: two hidden layers of {HIDDEN[0]} ReLU units, Adam (optax), no weight decay; probabilities "
              f"= softmax of the logits for every loss. Metrics: accuracy, NLL (mean −log p(true class), floored at "
              f"1e-12), ECE ({ECE_BINS} bins). Seed {settings['seed']}, {R} seed(s); {len(computed)} of {total} "
              f"networks and last layers computed in this run ({seconds:.1f} s), the others read from `runs/`."),
             "",
             *_toy_lines(toy, settings), "", *_digits_lines(digits, settings), "", *_bll_lines(bll, settings), ""]
    text = "\n".join(lines)
    write_text(out / "results.md", text)
    print(text)

    files = ["results.md", "summary.json", "runs"]
    plt = pyplot()
    if plt is not None:
        files.append(_toy_figure(plt, out, {loss: toy_records[0][loss]["grid_logits"] for loss in LOSSES},
                                 toy_data(seed, 0), toy))
        files.append(_alpha_figure(
            plt, out / "digits_alpha.png", grid, digits["grid"],
            [(digits["exact"], COLOURS["exact"], "exact", "-"), (digits["gauss"], COLOURS["gauss"], "gauss", "--")],
            f"Digits: MLP test metrics against α_ε (mean ± sd over {R} seed(s), {settings['epochs']} epochs)"))
        files.append(_curves_figure(plt, out, digits))
        files.append(_alpha_figure(
            plt, out / "bll.png", grid, {m: {a: v["mc"] for a, v in g.items()} for m, g in bll["grid"].items()},
            [(bll["network"], COLOURS["exact"], "network (exact CE)", "-")],
            "Digits: Bayesian last layer (MC predictive) on the exact network's features against α_ε"))
    summary = {"example": "approximated-losses", "quick": bool(quick), "settings": settings, "seconds": seconds,
               "records": total, "computed_this_run": len(computed),
               "toy": toy, "digits": digits, "bll": bll, "files": files}
    write_summary(out, summary)
    return summary

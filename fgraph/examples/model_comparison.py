"""Bayesian model averaging, selection and combination with the mixture node (van Erp et al. 2023, §6.1).

Data: a stream of draws from the three-component mixture

    y_n ~ 0.2 N(-3, 1 + σ²) + 0.5 N(0, 1 + σ²) + 0.3 N(4, 1 + σ²),    σ² = 5,

of which the first N ∈ {1, 5, 10, 100, 1000} are used (the data sets are
nested prefixes of one stream). Model: three sub-models for a latent x_n,
joined by a mixture node, and a noisy observation,

    x_n | m ~ N(-3, 1)^{m_1} N(0, 1)^{m_2} N(4, 1)^{m_3},    y_n ~ N(x_n, σ²).

Four ways to compare the sub-models:

(a) averaging: one switch z ~ Cat(1/3, 1/3, 1/3) shared by all N
    observations; belief propagation gives the exact posterior p(z | y),
    checked against the closed form p(z = k | y) ∝ Π_n N(y_n | μ_k, 1 + σ²).
(b) selection: the same model with a point-mass form constraint on z, so
    q(z) = δ(z − argmax p(z | y)).
(c) online combination: a switch z_n per observation with z_n ~ Cat(π),
    π ~ Dir(α). The observations arrive one at a time; each is assigned by
    selection (point-mass q(z_n)) under the forward message Cat(α / Σα), and
    the assignment updates α ← α + z_n. The prior is strong while streaming
    (α_k = ONLINE_PRIOR ≫ 1, so early assignments do not dominate) and is
    swapped for the vague Dir(VAGUE_PRIOR) afterwards by Bayesian model
    reduction: q̃(π) = Dir(α̃ − α_0 + α_vague). Reported: E_q̃[π].
(d) variational combination: the same per-observation switches, all
    observations at once, by variational message passing with the mean-field
    q(π) Π_n q(z_n); the sub-models and the likelihood stay sum-product.
    Reported: E_q[π], checked against coordinate-ascent updates written out
    in numpy.

Expected (paper, Figure 6): averaging and selection concentrate on one
component as N grows (the most probable single model, component 2, which has
the largest weight); both combinations spread over the components, and the
variational one recovers the mixing weights (0.2, 0.5, 0.3) best.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from scipy.special import digamma, gammaln, logsumexp

import fgraph as fg
from fgraph.examples import progress_bar, write_summary
from fgraph.nodes import Categorical, Dirichlet, Mixture, Normal
from fgraph.store import write_figure

DESCRIPTION = "mixture node: model averaging, selection, online and variational combination on 3 Gaussian sub-models (paper §6.1, Fig. 6)"

MEANS = np.array([-3.0, 0.0, 4.0])  # μ_k of the sub-models N(x | μ_k, 1)
COMPONENT_VAR = 1.0
WEIGHTS = np.array([0.2, 0.5, 0.3])  # mixing weights of the data-generating distribution
NOISE_VAR = 5.0  # σ²
SIZES = (1, 5, 10, 100, 1000)
QUICK_SIZES = (1, 5, 10, 100)
ONLINE_PRIOR = 100.0  # α_k while streaming (≫ 1)
VAGUE_PRIOR = 1.0 / 3.0  # α_k of the vague Dirichlet: the prior of (d) and the reduced prior of (c)
SEED = 6
K = MEANS.size


def simulate(n: int, rng: np.random.Generator) -> tuple:
    """``n`` draws of the data-generating mixture: (labels 0..K-1, observations), shapes (n,)."""
    labels = rng.choice(K, size=n, p=WEIGHTS)
    return labels, rng.normal(MEANS[labels], np.sqrt(COMPONENT_VAR + NOISE_VAR))


def log_likelihoods(y: np.ndarray) -> np.ndarray:
    """log N(y_n | μ_k, 1 + σ²): x_n integrated out of sub-model k, shape (n, K)."""
    var = COMPONENT_VAR + NOISE_VAR
    return -0.5 * (np.log(2 * np.pi * var) + (y[:, None] - MEANS[None, :]) ** 2 / var)


def sub_models(batch_shape: tuple) -> list:
    """The K sub-models x_k ~ N(μ_k, 1), each over the plate of observations."""
    return [Normal(f"x{k + 1}", mean=MEANS[k], var=COMPONENT_VAR, batch_shape=batch_shape) for k in range(K)]


# ------------------------------------------------------------------ (a) averaging
def closed_form_averaging(y: np.ndarray) -> tuple:
    """p(z = k | y) ∝ (1/K) Π_n N(y_n | μ_k, 1 + σ²), and log p(y)."""
    joint = np.log(1.0 / K) + log_likelihoods(y).sum(axis=0)
    log_evidence = logsumexp(joint)
    return np.exp(joint - log_evidence), float(log_evidence)


def averaging_model(n: int) -> fg.Model:
    with fg.Model() as model:
        z = Categorical("z", p=np.full(K, 1.0 / K))  # one switch for all observations
        x = Mixture("x", z, sub_models((n,)))
        Normal("y", mean=x, var=NOISE_VAR, observed=True, batch_shape=(n,))
    return model


def averaging(y: np.ndarray) -> dict:
    result = fg.infer(averaging_model(y.size), data={"y": y}, algorithm="bp")
    posterior = result.marginal("z").probabilities
    exact, exact_log_evidence = closed_form_averaging(y)
    return {
        "posterior": posterior,
        "log_evidence": float(result.log_evidence),
        "closed_form_posterior": exact,
        "closed_form_log_evidence": exact_log_evidence,
        "max_abs_error_posterior": float(np.max(np.abs(posterior - exact))),
        "abs_error_log_evidence": float(abs(result.log_evidence - exact_log_evidence)),
    }


# ------------------------------------------------------------------ (b) selection
def selection(y: np.ndarray) -> dict:
    result = fg.infer(
        averaging_model(y.size), data={"y": y}, algorithm="bp",
        constraints={"form": {"z": "point_mass"}}, init={"z": fg.Categorical(np.full(K, 1.0 / K))}, iterations=2,
    )
    q_z = result.marginal("z").value
    exact, exact_log_evidence = closed_form_averaging(y)
    best = int(np.argmax(exact))
    return {
        "q": q_z,
        "selected": int(np.argmax(q_z)) + 1,
        "closed_form_selected": best + 1,
        # with q(z) = δ(z − k) the free energy is −log p(y, z = k)
        "free_energy": float(result.free_energy[-1]),
        "closed_form_free_energy": float(-(np.log(exact[best]) + exact_log_evidence)),
    }


# ------------------------------------------------------------------ (c) online combination
def online_model() -> fg.Model:
    """One observation; its switch has the prior Cat(p), p the forward message of Dir(α) bound per step."""
    with fg.Model() as model:
        p = fg.Data("p", np.full(K, 1.0 / K), event_ndim=1)
        z = Categorical("z", p=p)
        x = Mixture("x", z, sub_models(()))
        Normal("y", mean=x, var=NOISE_VAR, observed=True, batch_shape=())
    return model


def log_beta(alpha) -> float:
    return float(np.sum(gammaln(alpha)) - gammaln(np.sum(alpha)))


def reduce_dirichlet(posterior, prior, reduced_prior) -> tuple:
    """Bayesian model reduction of Dir(posterior) from Dir(prior) to Dir(reduced_prior).

    Returns the reduced posterior concentrations posterior − prior + reduced_prior
    and the change of log evidence log p̃(data) − log p(data)
    = log B(α̃_r) − log B(α̃) − log B(α_r) + log B(α_0).
    """
    reduced = posterior - prior + reduced_prior
    change = log_beta(reduced) - log_beta(posterior) - log_beta(reduced_prior) + log_beta(prior)
    return reduced, change


def online_combination(y: np.ndarray, checkpoints: tuple, progress: bool = False) -> dict:
    """Stream y once; at every N in ``checkpoints`` reduce the prior and record E[π].

    ``progress`` shows a bar over the observations on stderr.
    """
    plan = fg.compile(
        online_model(), algorithm="bp", constraints={"form": {"z": "point_mass"}},
        init={"z": fg.Categorical(np.full(K, 1.0 / K))},
    )
    prior = np.full(K, ONLINE_PRIOR)
    alpha = prior.copy()
    assignments = np.zeros(y.size, dtype=int)
    found = {}
    with progress_bar(y.size, "online combination", progress) as bar:
        for n, value in enumerate(y, start=1):
            # the sum-product message of Dir(α) through the Categorical node: Cat(α / Σα)
            result = fg.run(plan, data={"p": alpha / alpha.sum(), "y": value}, iterations=1)
            one_hot = result.marginal("z").value
            alpha = alpha + one_hot  # conjugate update by the message Dir(1 + z_n) of the selected assignment
            assignments[n - 1] = int(np.argmax(one_hot))
            if n in checkpoints:
                reduced, change = reduce_dirichlet(alpha, prior, np.full(K, VAGUE_PRIOR))
                found[n] = {
                    "expected_pi": reduced / reduced.sum(),
                    "counts": np.bincount(assignments[:n], minlength=K),
                    "alpha_streaming": alpha.copy(),
                    "alpha_reduced": reduced,
                    "reduction_log_evidence_change": change,
                }
            bar.update()
    return found


def reference_online_counts(y: np.ndarray) -> np.ndarray:
    """The same stream in numpy: z_n = argmax_k [log α_k + log N(y_n | μ_k, 1 + σ²)], α_k += 1."""
    alpha = np.full(K, ONLINE_PRIOR)
    for row in log_likelihoods(y):
        alpha[np.argmax(np.log(alpha) + row)] += 1.0
    return alpha - ONLINE_PRIOR


# ------------------------------------------------------------------ (d) variational combination
def combination_model(n: int) -> fg.Model:
    with fg.Model() as model:
        pi = Dirichlet("pi", np.full(K, VAGUE_PRIOR))
        z = Categorical("z", p=pi, batch_shape=(n,))  # one switch per observation
        x = Mixture("x", z, sub_models((n,)))
        Normal("y", mean=x, var=NOISE_VAR, observed=True, batch_shape=(n,))
    return model


# sub-models and likelihood sum-product; the Dirichlet/Categorical pair and the switch variational
SUM_PRODUCT = {"x1": "bp", "x2": "bp", "x3": "bp", "y": "bp"}


def variational_combination(y: np.ndarray, iterations: int, tol: float) -> dict:
    n = y.size
    result = fg.infer(
        combination_model(n), data={"y": y}, algorithm="vmp", constraints={"factorization": SUM_PRODUCT},
        init={"pi": fg.Dirichlet(np.full(K, VAGUE_PRIOR)), "z": fg.Categorical(np.full((n, K), 1.0 / K))},
        iterations=iterations, tol=tol,
    )
    q_pi = result.marginal("pi")
    trace = [float(f) for f in result.free_energy]
    return {
        "expected_pi": q_pi.mean,
        "alpha": q_pi.alpha,
        "iterations": int(result.iterations),
        "converged": bool(result.converged),
        "free_energy_first": trace[0],
        "free_energy_last": trace[-1],
        "free_energy_never_increased": all(b <= a + 1e-9 * abs(a) for a, b in zip(trace, trace[1:])),
    }


def reference_variational_combination(y: np.ndarray, iterations: int) -> np.ndarray:
    """Coordinate ascent on q(π) Π q(z_n) in numpy, in the engine's order (q(π) from q(z), then q(z)).

    Returns the concentrations of q(π) after ``iterations`` sweeps, starting from uniform q(z_n).
    """
    loglik = log_likelihoods(y)
    q_z = np.full(loglik.shape, 1.0 / K)
    alpha = np.full(K, VAGUE_PRIOR)
    for _ in range(iterations):
        alpha = VAGUE_PRIOR + q_z.sum(axis=0)
        logits = loglik + digamma(alpha) - digamma(alpha.sum())
        q_z = np.exp(logits - logsumexp(logits, axis=1, keepdims=True))
    return alpha


# ------------------------------------------------------------------ figure
def plot(rows: list, path: Path) -> bool:
    """The 5 x 4 grid of bar plots (rows N, columns methods) of the paper's Figure 6; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    columns = [
        ("averaging", "posterior", "Model averaging", r"$p(z=k\mid y_{1:N})$"),
        ("selection", "q", "Model selection", r"$q(z=k)$"),
        ("online_combination", "expected_pi", "Model combination\n(online)", r"$\mathbb{E}_{q(\pi)}[\pi_k]$"),
        ("variational_combination", "expected_pi", "Model combination\n(variational)", r"$\mathbb{E}_{q(\pi)}[\pi_k]$"),
    ]
    figure, axes = plt.subplots(len(rows), 4, figsize=(9.5, 1.75 * len(rows) + 0.6), squeeze=False)
    k = np.arange(1, K + 1)
    for i, row in enumerate(rows):
        for j, (method, key, title, label) in enumerate(columns):
            axis = axes[i, j]
            axis.bar(k, np.asarray(row[method][key]), width=0.6, color="tab:blue")
            if j >= 2:
                axis.plot(k, WEIGHTS, "_", color="tab:red", markersize=18, markeredgewidth=2,
                          label="true weights" if i == 0 else None)
            axis.set_ylim(0, 1.05)
            axis.set_xticks(k)
            axis.grid(axis="y", alpha=0.3)
            axis.tick_params(labelsize=7)
            if i == 0:
                axis.set_title(title, fontsize=9)
            if j == 0:
                axis.set_ylabel(f"N = {row['n']}\n{label}", fontsize=8)
            else:
                axis.set_ylabel(label, fontsize=7)
            if i == len(rows) - 1:
                axis.set_xlabel("k", fontsize=8)
    axes[0, 3].legend(fontsize=7, loc="upper left", frameon=False)
    figure.tight_layout()
    write_figure(path, figure, dpi=80)
    plt.close(figure)
    return True


# ------------------------------------------------------------------ run
def run(quick: bool = False, out: Path = Path("out/model-comparison"), progress: bool = False) -> dict:
    """Run the four methods for every N, print a table, write summary.json and model_comparison.png.

    ``progress`` shows bars on stderr: over the online stream, then over the data sizes.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    sizes = QUICK_SIZES if quick else SIZES
    rng = np.random.default_rng(SEED)
    labels, stream = simulate(max(SIZES), rng)  # the same stream in quick and full runs
    timings = {}

    start = time.perf_counter()
    online = online_combination(stream[: max(sizes)], sizes, progress)
    timings["online_combination"] = time.perf_counter() - start
    rows = []
    with progress_bar(len(sizes), "averaging, selection, variational combination", progress) as bar:
        for n in sizes:
            bar.set_postfix_str(f"N = {n}")
            rows.append(_compare_at(n, stream, labels, online, timings))
            bar.update()

    print(f"Model comparison with the mixture node: σ² = {NOISE_VAR}, sub-model means {MEANS.tolist()}, "
          f"true weights {WEIGHTS.tolist()}")
    print(f"{'N':>5}  {'averaging p(z|y)':>24}  {'selection':>9}  {'online E[π]':>20}  {'variational E[π]':>20}")
    for row in rows:
        print(f"{row['n']:>5}  {_vector(row['averaging']['posterior'], 24)}  "
              f"{'k = ' + str(row['selection']['selected']):>9}  {_vector(row['online_combination']['expected_pi'], 20)}  "
              f"{_vector(row['variational_combination']['expected_pi'], 20)}")
    print("\nChecks:")
    for row in rows:
        a, s, o, v = (row[m] for m in ("averaging", "selection", "online_combination", "variational_combination"))
        print(f"  N = {row['n']:>4}: averaging vs closed form: max |Δp| = {a['max_abs_error_posterior']:.1e}, "
              f"|Δ log p(y)| = {a['abs_error_log_evidence']:.1e}; selection k = {s['selected']} "
              f"(closed form {s['closed_form_selected']}), F = {s['free_energy']:.4f} "
              f"(−log p(y, z=k) = {s['closed_form_free_energy']:.4f})")
        print(f"            online counts {o['counts'].tolist()} (numpy {o['reference_counts'].astype(int).tolist()}); "
              f"variational: {v['iterations']} iterations, F {v['free_energy_first']:.3f} -> {v['free_energy_last']:.3f}, "
              f"max |ΔE[π]| vs numpy CAVI = {np.max(np.abs(v['expected_pi'] - v['reference_expected_pi'])):.1e}")
    last = rows[-1]
    errors = {m: float(np.abs(np.asarray(last[m][key]) - WEIGHTS).sum())
              for m, key in (("averaging", "posterior"), ("selection", "q"),
                             ("online_combination", "expected_pi"), ("variational_combination", "expected_pi"))}
    print(f"\nAt N = {last['n']}, L1 distance to the true weights {WEIGHTS.tolist()}: "
          + ", ".join(f"{m} {e:.3f}" for m, e in errors.items()))

    summary = {
        "example": "model-comparison",
        "quick": bool(quick),
        "noise_var": NOISE_VAR,
        "means": MEANS,
        "true_weights": WEIGHTS,
        "online_prior": ONLINE_PRIOR,
        "vague_prior": VAGUE_PRIOR,
        "seed": SEED,
        "sizes": list(sizes),
        "rows": rows,
        "l1_to_true_weights_at_largest_n": errors,
        "timings_seconds": timings,
    }
    files = ["summary.json"]
    if plot(rows, out / "model_comparison.png"):
        files.append("model_comparison.png")
    else:
        print("matplotlib is not installed: no figure (pip install matplotlib)")
    summary["files"] = files
    write_summary(out, summary)
    return summary


def _compare_at(n: int, stream: np.ndarray, labels: np.ndarray, online: dict, timings: dict) -> dict:
    """One row of the table: every method on the first ``n`` observations, with its reference computation."""
    y = stream[:n]
    row = {"n": n, "true_label_fractions": np.bincount(labels[:n], minlength=K) / n}
    start = time.perf_counter()
    row["averaging"] = averaging(y)
    row["selection"] = selection(y)
    timings[f"averaging_selection_{n}"] = time.perf_counter() - start
    row["online_combination"] = online[n]
    row["online_combination"]["reference_counts"] = reference_online_counts(y)
    start = time.perf_counter()
    row["variational_combination"] = variational = variational_combination(y, iterations=500, tol=1e-9)
    timings[f"variational_combination_{n}"] = time.perf_counter() - start
    reference = reference_variational_combination(y, variational["iterations"])
    variational["reference_expected_pi"] = reference / reference.sum()
    return row


def _vector(values, width: int) -> str:
    return f"{'(' + ', '.join(f'{v:.3f}' for v in np.asarray(values)) + ')':>{width}}"

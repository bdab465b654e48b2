"""A mixed model: a product of Gaussians shifted by a switched constant (van Erp et al. 2023, §6.2.1).

Every observation is modelled as

    a_n ~ N(0.5, 1),   b_n ~ N(0, 1),   c_n = shift selected by z ∈ {−0.2, −1.8, 0.9},   y_n = a_n b_n + c_n,

a mixture with fixed (non-Gaussian) components and unknown mixing weights,
fitted to N = 1500 draws of N(0, 1) (quick: the first 150), a distribution
the model does not contain. The mixture node connects the discrete switch
to the continuous shift; the product a·b is a ``Product`` node.

* Model averaging: one switch z ~ Cat(1/3, 1/3, 1/3) for all observations;
  belief propagation gives p(z | y), i.e. the posterior over the shift c.
* Model combination: a switch per observation, z_n ~ Cat(π), π ~ Dir(1/3),
  with the mean-field q(π) Π_n q(z_n) (variational message passing at the
  Dirichlet/Categorical pair); everything else stays sum-product. Reported:
  E_q(π)[Cat(c | π)] = E_q[π].

The message through the product is not Gaussian. The ``Product`` node's
default rule represents the density of a·b exactly up to numerical
integration, as a mixture of Gaussians on a quadrature grid over a (see
``nodes/product.py``); the run also repeats both methods with the
``moment_matching`` operator (a Gaussian with the exact mean and variance,
N(0, 1.25)) for comparison. The averaging posterior is checked against a
direct numpy computation with the same grid, and the grid density against
adaptive quadrature of the exact product density.

Expected (paper, Figure 7): averaging puts (almost) all mass on the one
shift that fits best, −0.2; combination spreads weight over the shifts to
widen the fit towards the standard normal data.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from scipy import integrate
from scipy.special import digamma, logsumexp

import fgraph as fg
from fgraph.examples import progress_bar, write_summary
from fgraph.nodes import Add, Categorical, Dirichlet, Mixture, Normal, Product
from fgraph.nodes.product import QUADRATURE_POINTS, product_moments, quadrature
from fgraph.store import write_figure

DESCRIPTION = "product of two Gaussians shifted by a switched constant: model averaging vs variational combination (paper §6.2.1, Fig. 7)"

MEAN_A, VAR_A = 0.5, 1.0
MEAN_B, VAR_B = 0.0, 1.0
SHIFTS = np.array([-0.2, -1.8, 0.9])
K = SHIFTS.size
DIRICHLET_PRIOR = 1.0 / 3.0  # α_k of π ~ Dir(α) in the combination model
SIZE, QUICK_SIZE = 1500, 150
ITERATIONS, QUICK_ITERATIONS = 150, 30
SEED = 7


def simulate(n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.standard_normal(n)


# ------------------------------------------------------------------ densities (numpy, for checks and plots)
def log_product_density_grid(w) -> np.ndarray:
    """log p_ab(w) with the Product node's default approximation: Σ_i w_i N(w | x_i μ_b, x_i² v_b) on its grid.

    The node integrates over a here (|μ_a|/σ_a ≥ |μ_b|/σ_b), as its rule does.
    """
    nodes, log_weights = quadrature(MEAN_A, VAR_A, QUADRATURE_POINTS)
    w = np.asarray(w, dtype=float)[..., None]
    mean, var = nodes * MEAN_B, nodes**2 * VAR_B
    return logsumexp(log_weights - 0.5 * (np.log(2 * np.pi * var) + (w - mean) ** 2 / var), axis=-1)


def log_product_density_exact(w: float) -> float:
    """log p_ab(w) = log ∫ N(a | μ_a, v_a) N(w | a μ_b, a² v_b) da by adaptive quadrature (split at a = 0)."""
    def integrand(a):
        return np.exp(-0.5 * ((a - MEAN_A) ** 2 / VAR_A + (w - a * MEAN_B) ** 2 / (a * a * VAR_B))) / (
            2 * np.pi * np.sqrt(VAR_A * VAR_B) * abs(a))

    lo, hi = MEAN_A - 12 * np.sqrt(VAR_A), MEAN_A + 12 * np.sqrt(VAR_A)
    pieces = [(lo, 0.0), (0.0, hi)] if lo < 0.0 < hi else [(lo, hi)]
    total = sum(integrate.quad(integrand, u, v, epsabs=0.0, epsrel=1e-10, limit=400)[0] for u, v in pieces)
    return float(np.log(total))


def log_product_density_moment_matched(w) -> np.ndarray:
    mean, var = product_moments(MEAN_A, VAR_A, MEAN_B, VAR_B)
    return -0.5 * (np.log(2 * np.pi * var) + (np.asarray(w) - mean) ** 2 / var)


def shifted_log_likelihoods(y: np.ndarray, log_density) -> np.ndarray:
    """log p(y_n | c = c_k) = log p_ab(y_n − c_k), shape (n, K)."""
    return log_density(y[:, None] - SHIFTS[None, :])


# ------------------------------------------------------------------ models
def averaging_model(n: int) -> fg.Model:
    with fg.Model() as model:
        z = Categorical("z", p=np.full(K, 1.0 / K))  # one switch for all observations
        c = Mixture("c", z, list(SHIFTS), batch_shape=(n,))
        a = Normal("a", mean=MEAN_A, var=VAR_A, batch_shape=(n,))
        b = Normal("b", mean=MEAN_B, var=VAR_B, batch_shape=(n,))
        ab = Product("ab", a, b)
        Add("y", ab, c, observed=True, batch_shape=(n,))
    return model


def combination_model(n: int) -> fg.Model:
    with fg.Model() as model:
        pi = Dirichlet("pi", np.full(K, DIRICHLET_PRIOR))
        z = Categorical("z", p=pi, batch_shape=(n,))  # one switch per observation
        c = Mixture("c", z, list(SHIFTS))
        a = Normal("a", mean=MEAN_A, var=VAR_A, batch_shape=(n,))
        b = Normal("b", mean=MEAN_B, var=VAR_B, batch_shape=(n,))
        ab = Product("ab", a, b)
        Add("y", ab, c, observed=True)
    return model


# the product, the priors of a and b and the addition stay sum-product; the Dirichlet/Categorical
# pair and the mixture node's switch are variational (its "mf" factorisation keeps out with the inputs)
SUM_PRODUCT = {"a": "bp", "b": "bp", "ab": "bp", "y": "bp"}


def averaging(y: np.ndarray, operator: str | None = None) -> dict:
    constraints = {"operator": {"ab": operator}} if operator else None
    start = time.perf_counter()
    result = fg.infer(averaging_model(y.size), data={"y": y}, algorithm="bp", constraints=constraints)
    seconds = time.perf_counter() - start
    return {"posterior": result.marginal("z").probabilities, "log_evidence": float(result.log_evidence),
            "seconds": seconds}


def combination(y: np.ndarray, iterations: int, operator: str | None = None, progress: bool = False) -> dict:
    n = y.size
    constraints = {"factorization": SUM_PRODUCT}
    if operator:
        constraints["operator"] = {"ab": operator}
    trace = []
    label = (operator or "grid density").replace("_", " ")
    start = time.perf_counter()
    # no free energy per iteration: it costs more than the sweep here (mixtures of ~1000 point masses
    # on a and b); convergence is judged from the change of E[π]
    with progress_bar(iterations, f"combination ({label})", progress) as bar:
        def record(iteration, so_far):
            trace.append(so_far.marginal("pi").mean.copy())
            bar.update()

        result = fg.infer(
            combination_model(n), data={"y": y}, algorithm="vmp", constraints=constraints,
            init={"pi": fg.Dirichlet(np.full(K, DIRICHLET_PRIOR)), "z": fg.Categorical(np.full((n, K), 1.0 / K))},
            iterations=iterations, free_energy=False, callback=record,
        )
    seconds = time.perf_counter() - start
    q_pi = result.marginal("pi")
    return {"expected_pi": q_pi.mean, "alpha": q_pi.alpha, "iterations": int(result.iterations),
            "last_change": float(np.max(np.abs(trace[-1] - trace[-2]))) if len(trace) > 1 else float("nan"),
            "seconds": seconds}


# ------------------------------------------------------------------ independent computations
def direct_averaging(loglik: np.ndarray) -> tuple:
    """p(z = k | y) ∝ (1/K) Π_n p(y_n | c_k) and log p(y), from a table of log-likelihoods (n, K)."""
    joint = np.log(1.0 / K) + loglik.sum(axis=0)
    total = logsumexp(joint)
    return np.exp(joint - total), float(total)


def direct_combination(loglik: np.ndarray, iterations: int) -> np.ndarray:
    """Coordinate ascent on q(π) Π q(z_n) in numpy, in the engine's order, from uniform q(z_n): E_q[π]."""
    q_z = np.full(loglik.shape, 1.0 / K)
    alpha = np.full(K, DIRICHLET_PRIOR)
    for _ in range(iterations):
        alpha = DIRICHLET_PRIOR + q_z.sum(axis=0)
        logits = loglik + digamma(alpha) - digamma(alpha.sum())
        q_z = np.exp(logits - logsumexp(logits, axis=1, keepdims=True))
    return alpha / alpha.sum()


def mean_log_predictive(y: np.ndarray, weights: np.ndarray, loglik: np.ndarray) -> float:
    """(1/N) Σ_n log Σ_k w_k p(y_n | c_k): in-sample fit of the predictive mixture."""
    return float(np.mean(logsumexp(np.log(np.maximum(weights, 1e-300)) + loglik, axis=1)))


# ------------------------------------------------------------------ figure
def plot(y: np.ndarray, averaged: np.ndarray, combined: np.ndarray, path: Path) -> bool:
    """The paper's Figure 7: p(c | y) and E_q[Cat(c | π)] (top), predictive densities vs data (bottom)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    grid = np.linspace(-3.5, 3.5, 701)
    component = np.exp(log_product_density_grid(grid[:, None] - SHIFTS[None, :]))  # (grid, K)
    figure, axes = plt.subplots(2, 2, figsize=(8.5, 6.2))
    panels = [(averaged, "Model averaging", r"$p(c\mid y_{1:N})$"),
              (combined, "Model combination (variational)", r"$\mathbb{E}_{q(\pi)}[\mathrm{Cat}(c\mid\pi)]$")]
    for column, (weights, title, label) in enumerate(panels):
        top, bottom = axes[0, column], axes[1, column]
        top.bar(SHIFTS, weights, width=0.25, color="tab:blue")
        top.set_xlim(-2.5, 2.5)
        top.set_ylim(0, 1.05)
        top.set_xticks(SHIFTS)
        top.set_xlabel("c")
        top.set_ylabel(label)
        top.set_title(title, fontsize=10)
        top.grid(axis="y", alpha=0.3)
        bottom.hist(y, bins=60, density=True, color="tab:blue", alpha=0.35, label=f"data (N = {y.size})")
        for k in range(K):
            bottom.plot(grid, weights[k] * component[:, k], "--", color="tab:red", linewidth=1,
                        label="weighted components" if k == 0 else None)
        bottom.plot(grid, component @ weights, color="tab:blue", linewidth=2, label="predictive")
        bottom.plot(grid, np.exp(-0.5 * grid**2) / np.sqrt(2 * np.pi), ":", color="black", linewidth=1,
                    label="N(0, 1)")
        bottom.set_xlim(-3.5, 3.5)
        bottom.set_ylim(0, 1.0)
        bottom.set_xlabel(r"$y_{N+1}$")
        bottom.set_ylabel(r"$p(y_{N+1}\mid y_{1:N})$")
        bottom.legend(fontsize=7, frameon=False)
    figure.tight_layout()
    write_figure(path, figure, dpi=80)
    plt.close(figure)
    return True


# ------------------------------------------------------------------ run
def run(quick: bool = False, out: Path = Path("out/mixed-model"), progress: bool = False) -> dict:
    """Fit the model by averaging and combination, print the results, write summary.json and mixed_model.png.

    ``progress`` shows bars on stderr over the density check and the combination's iterations.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(SEED)
    stream = simulate(SIZE, rng)  # the quick run uses the first QUICK_SIZE draws of the same stream
    y = stream[:QUICK_SIZE] if quick else stream
    iterations = QUICK_ITERATIONS if quick else ITERATIONS

    loglik_grid = shifted_log_likelihoods(y, log_product_density_grid)
    loglik_moment = shifted_log_likelihoods(y, log_product_density_moment_matched)
    # the grid density against adaptive quadrature of the exact density, on a subset of the data
    check_points = y[: min(y.size, 100)]
    exact = np.empty((check_points.size, K))
    with progress_bar(check_points.size, "density check (adaptive quadrature)", progress) as bar:
        for i, v in enumerate(check_points):
            exact[i] = [log_product_density_exact(v - c) for c in SHIFTS]
            bar.update()
    grid_error = float(np.max(np.abs(exact - loglik_grid[: check_points.size])))

    averaged = averaging(y)
    averaged_mm = averaging(y, "moment_matching")
    combined = combination(y, iterations, progress=progress)
    combined_mm = combination(y, iterations, "moment_matching", progress=progress)
    direct, direct_log_evidence = direct_averaging(loglik_grid)
    direct_mm, direct_mm_log_evidence = direct_averaging(loglik_moment)
    direct_combined = direct_combination(loglik_grid, combined["iterations"])
    direct_combined_mm = direct_combination(loglik_moment, combined_mm["iterations"])
    true_fit = float(np.mean(-0.5 * (np.log(2 * np.pi) + y**2)))

    results = {
        "grid": {
            "averaging": {**averaged, "direct_posterior": direct, "direct_log_evidence": direct_log_evidence,
                          "mean_log_predictive": mean_log_predictive(y, averaged["posterior"], loglik_grid)},
            "combination": {**combined, "direct_expected_pi": direct_combined,
                            "mean_log_predictive": mean_log_predictive(y, combined["expected_pi"], loglik_grid)},
        },
        "moment_matching": {
            "averaging": {**averaged_mm, "direct_posterior": direct_mm, "direct_log_evidence": direct_mm_log_evidence,
                          "mean_log_predictive": mean_log_predictive(y, averaged_mm["posterior"], loglik_moment)},
            "combination": {**combined_mm, "direct_expected_pi": direct_combined_mm,
                            "mean_log_predictive": mean_log_predictive(y, combined_mm["expected_pi"], loglik_moment)},
        },
    }

    print(f"Mixed model y = a·b + c, c ∈ {SHIFTS.tolist()}, fitted to N = {y.size} draws of N(0, 1)")
    print(f"  product density on the quadrature grid ({QUADRATURE_POINTS} nodes) vs adaptive quadrature: "
          f"max |Δ log p| = {grid_error:.1e} over {check_points.size}×{K} points")
    for name, label in (("grid", "grid density (default)"), ("moment_matching", "moment matching N(0, 1.25)")):
        a, c = results[name]["averaging"], results[name]["combination"]
        print(f"  {label}:")
        print(f"    averaging   p(c | y)  = {_vector(a['posterior'])}   log p(y) = {a['log_evidence']:.4f}   "
              f"[direct numpy: {_vector(a['direct_posterior'])}, log p(y) = {a['direct_log_evidence']:.4f}]")
        print(f"    combination E_q[π]    = {_vector(c['expected_pi'])}   after {c['iterations']} iterations "
              f"(last change {c['last_change']:.1e}) [numpy CAVI: {_vector(c['direct_expected_pi'])}]")
        print(f"    mean log predictive density of the data: averaging {a['mean_log_predictive']:.4f}, "
              f"combination {c['mean_log_predictive']:.4f} (true N(0, 1): {true_fit:.4f})")
    print(f"  time: averaging {averaged['seconds']:.2f} s, combination {combined['seconds']:.2f} s "
          f"({combined['iterations']} iterations)")

    summary = {
        "example": "mixed-model",
        "quick": bool(quick),
        "n": int(y.size),
        "shifts": SHIFTS,
        "prior_a": [MEAN_A, VAR_A],
        "prior_b": [MEAN_B, VAR_B],
        "dirichlet_prior": DIRICHLET_PRIOR,
        "seed": SEED,
        "quadrature": {"points": QUADRATURE_POINTS,
                       "max_abs_log_density_error": grid_error, "checked_points": int(check_points.size * K)},
        "true_mean_log_density": true_fit,
        "results": results,
    }
    files = ["summary.json"]
    if plot(y, averaged["posterior"], combined["expected_pi"], out / "mixed_model.png"):
        files.append("mixed_model.png")
    else:
        print("matplotlib is not installed: no figure (pip install matplotlib)")
    summary["files"] = files
    write_summary(out, summary)
    return summary


def _vector(values) -> str:
    """Four decimals; a positive value below 1e-4 in two significant digits, so that it does not print as 0."""
    return "(" + ", ".join(f"{v:.1e}" if 0 < v < 1e-4 else f"{v:.4f}" for v in np.asarray(values)) + ")"

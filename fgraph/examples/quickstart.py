"""Quickstart: posterior marginals, exact log evidence (BP) and the free energy (VMP).

Part 1, belief propagation. An unknown mean with a normal prior and a plate of
N observations with known variance,

    mu ~ N(m0, v0),    y_i ~ N(mu, v),    i = 1..N.

The graph is a tree, so one sweep of sum-product gives the exact posterior
q(mu) and, from the scale factors of the messages, the exact log evidence
log p(y). Both are printed next to the conjugate closed forms.

Part 2, variational message passing. The precision is unknown too,

    mu ~ N(m0, v0),    tau ~ Gamma(a, b),    y_i ~ N(mu, 1/tau),

and q(mu) q(tau) is found by mean-field VMP. The Bethe free energy F is
printed per iteration (it never increases) and -F, a lower bound on log p(y),
is compared with log p(y) from one-dimensional quadrature over mu (tau
integrates out in closed form).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy import integrate
from scipy.special import gammaln

import fgraph as fg
from fgraph.examples import progress_bar, say_figures_skipped, write_summary
from fgraph.nodes import Gamma, Normal
from fgraph.store import write_figure

DESCRIPTION = "unknown mean: BP posterior and exact log evidence vs closed form; unknown precision too: VMP free energy per iteration"

PRIOR_MEAN, PRIOR_VAR = 0.0, 10.0  # m0, v0
NOISE_VAR = 0.25  # v, known in part 1
PRECISION_SHAPE, PRECISION_RATE = 2.0, 0.5  # a, b of the Gamma prior in part 2
TRUE_MEAN, TRUE_STD = 2.0, 0.5
SIZE, SEED = 50, 2023  # the data: SIZE draws from default_rng(SEED), also the README's example


def simulate(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` observations from N(TRUE_MEAN, TRUE_STD**2), shape (n,)."""
    return rng.normal(TRUE_MEAN, TRUE_STD, size=n)


# --------------------------------------------------------------------- part 1
def closed_form_mean_posterior(y: np.ndarray) -> tuple:
    """Conjugate posterior N(mu | mean, var) of the known-variance model."""
    precision = 1.0 / PRIOR_VAR + y.size / NOISE_VAR
    mean = (PRIOR_MEAN / PRIOR_VAR + y.sum() / NOISE_VAR) / precision
    return float(mean), float(1.0 / precision)


def closed_form_log_evidence(y: np.ndarray) -> float:
    """log N(y | m0 1, v I + v0 1 1^T), using det = v^N (1 + N v0 / v) and Sherman-Morrison."""
    n, v, v0 = y.size, NOISE_VAR, PRIOR_VAR
    d = y - PRIOR_MEAN
    quadratic = (d @ d - v0 * d.sum() ** 2 / (v + n * v0)) / v
    return float(-0.5 * (n * np.log(2 * np.pi * v) + np.log1p(n * v0 / v) + quadratic))


def unknown_mean(y: np.ndarray) -> dict:
    with fg.Model() as model:
        mu = Normal("mu", mean=PRIOR_MEAN, var=PRIOR_VAR)
        Normal("y", mean=mu, var=NOISE_VAR, observed=y)  # a plate: the batch shape comes from y
    result = fg.infer(model, algorithm="bp")
    q_mu = result.marginal("mu")
    exact_mean, exact_var = closed_form_mean_posterior(y)
    exact_log_evidence = closed_form_log_evidence(y)

    print(f"Part 1: unknown mean, known variance, N = {y.size}, belief propagation")
    print(f"  schedule:\n{result.schedule}")
    print(f"  {'':22s} {'fgraph (BP)':>20s} {'closed form':>20s}")
    print(f"  {'posterior mean of mu':22s} {float(q_mu.mean):20.12f} {exact_mean:20.12f}")
    print(f"  {'posterior var of mu':22s} {float(q_mu.var):20.12f} {exact_var:20.12f}")
    print(f"  {'log evidence (nats)':22s} {result.log_evidence:20.12f} {exact_log_evidence:20.12f}")
    error = abs(result.log_evidence - exact_log_evidence)
    print(f"  |log evidence difference| = {error:.2e}\n")
    return {
        "n": int(y.size),
        "posterior_mean": float(q_mu.mean),
        "posterior_var": float(q_mu.var),
        "closed_form_posterior_mean": exact_mean,
        "closed_form_posterior_var": exact_var,
        "log_evidence": float(result.log_evidence),
        "closed_form_log_evidence": exact_log_evidence,
        "log_evidence_abs_error": float(error),
    }


# --------------------------------------------------------------------- part 2
def log_likelihood_given_mean(y: np.ndarray, mean) -> np.ndarray:
    """log ∫ Gamma(tau | a, b) Π N(y_i | mean, 1/tau) dtau, the precision integrated out."""
    a, b, n = PRECISION_SHAPE, PRECISION_RATE, y.size
    squares = ((y[:, None] - np.atleast_1d(mean)[None, :]) ** 2).sum(axis=0)
    return (
        -0.5 * n * np.log(2 * np.pi) + a * np.log(b) + gammaln(a + 0.5 * n) - gammaln(a)
        - (a + 0.5 * n) * np.log(b + 0.5 * squares)
    )


def quadrature_log_evidence(y: np.ndarray) -> float:
    """log p(y) = log ∫ N(mu | m0, v0) p(y | mu) dmu by adaptive quadrature around the sample mean."""
    centre = float(y.mean())
    peak = float(log_likelihood_given_mean(y, centre)[0])  # factor out the peak to avoid underflow

    def integrand(mean):
        prior = -0.5 * (np.log(2 * np.pi * PRIOR_VAR) + (mean - PRIOR_MEAN) ** 2 / PRIOR_VAR)
        return np.exp(prior + log_likelihood_given_mean(y, mean)[0] - peak)

    width = 20.0 * max(float(y.std()), 1e-3) / np.sqrt(y.size) + 1e-3
    value, _ = integrate.quad(integrand, centre - width, centre + width, epsabs=0.0, epsrel=1e-12, limit=200)
    return float(np.log(value) + peak)


def unknown_mean_and_precision(y: np.ndarray, iterations: int, progress: bool = False) -> dict:
    with fg.Model() as model:
        mu = Normal("mu", mean=PRIOR_MEAN, var=PRIOR_VAR)
        tau = Gamma("tau", shape=PRECISION_SHAPE, rate=PRECISION_RATE)
        Normal("y", mean=mu, precision=tau, observed=y)
    # The first update of q(mu) reads q(tau), so q(tau) needs a starting value: the prior.
    with progress_bar(iterations, "VMP sweeps", progress) as bar:
        result = fg.infer(
            model, algorithm="vmp", iterations=iterations, tol=1e-12,
            init={"tau": fg.Gamma(PRECISION_SHAPE, PRECISION_RATE)},
            callback=lambda iteration, so_far: bar.update(),
        )
    q_mu, q_tau = result.marginal("mu"), result.marginal("tau")
    trace = [float(f) for f in result.free_energy]
    log_evidence = quadrature_log_evidence(y)
    increases = [i + 1 for i in range(len(trace) - 1) if trace[i + 1] > trace[i] + 1e-9 * abs(trace[i])]

    print(f"Part 2: unknown mean and precision, N = {y.size}, mean-field VMP")
    print(f"  schedule:\n{result.schedule}")
    print("  iteration   free energy F (nats)")
    for iteration, value in enumerate(trace, start=1):
        print(f"  {iteration:9d}   {value:.12f}")
    print(f"  converged: {result.converged} after {result.iterations} iteration(s); F never increased: {not increases}")
    print(f"  q(mu)  = N(mean {float(q_mu.mean):.6f}, var {float(q_mu.var):.3e})")
    print(f"  q(tau) = Gamma(shape {float(q_tau.shape):.4f}, rate {float(q_tau.rate):.4f}), "
          f"mean {float(q_tau.mean):.4f} (true precision {1 / TRUE_STD**2:.4f})")
    print(f"  -F = {-trace[-1]:.6f} <= log p(y) = {log_evidence:.6f} (quadrature); gap {log_evidence + trace[-1]:.2e} nats")
    return {
        "n": int(y.size),
        "iterations": int(result.iterations),
        "converged": bool(result.converged),
        "free_energy": trace,
        "free_energy_never_increased": not increases,
        "q_mu_mean": float(q_mu.mean),
        "q_mu_var": float(q_mu.var),
        "q_tau_shape": float(q_tau.shape),
        "q_tau_rate": float(q_tau.rate),
        "quadrature_log_evidence": log_evidence,
        "bound_gap": float(log_evidence + trace[-1]),
    }


def plot_free_energy(trace: list, path: Path) -> bool:
    """Save the free-energy trace as a PNG; returns False when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        return False
    figure, axis = plt.subplots(figsize=(5, 3.2))
    iterations = np.arange(1, len(trace) + 1)
    axis.plot(iterations, trace, marker="o")
    axis.ticklabel_format(axis="y", useOffset=False)  # the changes are small; show the values themselves
    axis.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%.6f"))
    axis.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    axis.set_xlabel("iteration")
    axis.set_ylabel("free energy F (nats)")
    axis.set_title("VMP: unknown mean and precision")
    figure.tight_layout()
    write_figure(path, figure, dpi=120)
    plt.close(figure)
    return True


def run(quick: bool = False, out: Path = Path("out/quickstart"), progress: bool = False) -> dict:
    """Run both parts, print them, write ``summary.json`` (and ``free_energy.png``) to ``out``.

    ``progress`` shows a bar over the VMP sweeps on stderr (with tqdm installed).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    y = simulate(SIZE, np.random.default_rng(SEED))
    summary = {
        "example": "quickstart",
        "quick": bool(quick),
        "bp_unknown_mean": unknown_mean(y),
        "vmp_unknown_mean_and_precision": unknown_mean_and_precision(
            y, iterations=10 if quick else 50, progress=progress),
    }
    files = ["summary.json"]
    if plot_free_energy(summary["vmp_unknown_mean_and_precision"]["free_energy"], out / "free_energy.png"):
        files.append("free_energy.png")
    else:
        say_figures_skipped()  # one line: free_energy.png is missing, and what to install
    summary["files"] = files
    write_summary(out, summary)
    return summary

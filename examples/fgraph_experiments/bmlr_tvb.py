"""The TVB paper's §6.2 coverage study: VB against grid-search trustworthy VB for the sum of the regression
coefficients of a Bayesian mixture linear regression (BMLR).

Data (§6.2): N = 500 data sets (y_i, X_i), J_n ∈ {1000, 1500, 2000, 2500, 3000} responses each, p = 2, K = 2,
π = 0.65 (data set i in cluster 1 with probability 0.65), β_k ~ N(0, I) (τ_k = 1), X_i with N(0, 1) entries, one
noise vector ε_k ~ N(0, I_J) per cluster, and y_i = X_iβ_k + ε̃ with ε̃ = (‖X_iβ_k‖² / SNR) · ε_k / ‖ε_k‖², SNR = 0.1,
exactly as the paper writes it. That noise has norm ‖X_iβ_k‖² / (SNR ‖ε_k‖) ≈ 10 √J ‖β_k‖², so a per-response
standard deviation of about 10 ‖β_k‖² (20 for a typical ‖β_k‖² = 2), different in the two clusters; the usual
signal-to-noise ratio ‖X_iβ_k‖² / ‖ε̃‖² is about 0.01 / ‖β_k‖², not 0.1. (As X_i is drawn afresh for every data
set and is rotation invariant, the data sets of one cluster are independent given ε_k although they share it.)
``--noise snr`` simulates the usual reading instead, ε̃ = (‖X_iβ_k‖ / √SNR) · ε_k / ‖ε_k‖, so that
‖X_iβ_k‖² / ‖ε̃‖² = SNR exactly (a per-response standard deviation of about ‖β_k‖ / √SNR ≈ 3.2 ‖β_k‖).

The model is the BMLR of :mod:`fgraph.models.mixtures.bmlr` (α₀ = a₀ = b₀ = 1) with a known noise precision λ:
``--noise-precision estimated`` (default) fixes λ before the fit at the pooled least-squares estimate
λ̂ = Σ_n (J − p) / Σ_n RSS_n of the whole data (:func:`~fgraph.models.mixtures.bmlr.pooled_noise_precision`, shared by
every cell of the table); ``true`` at the simulated noise's own 1 / (mean squared noise per response); a number
at that number (``1``: λ = 1). Every replication:

* **VB**: plain mean-field VB (ω = 1) on the whole data;
* **TVB, grid** (Algorithm 2): the table of :func:`fgraph.models.tvb.bmlr.build_bmlr_tvb_table` over the grid of ω
  and B resamples of the data sets of the second half, ω chosen by eq. (6) (``rule="closest"``).

The quantity is h = Σ_k Σ_j β_kj (invariant to the labels), its 95 % interval the Gaussian one of §6.2,
Σm ∓ z_{0.975} (ΣS)^{1/2}. Every replication records whether the interval covers the true sum of the simulated
β, its length and the selected ω; the frequentist coverage (with a 95 % Wilson interval), the mean length and the
mean selected ω per J and method are the results.

Full run: 500 replications per J, 100 ω log-spaced in [0.001, 1], B = 100 (the paper does not give B).
``--quick``: N = 40 data sets, J ∈ {50, 100}, 3 replications, 6 ω log-spaced in [0.1, 1], B = 6.

**Resumable** (as ``gmm-tvb``): every replication's row is written to ``out/replications/j<J>_r<rep>.json``
(atomically) as soon as it finishes; a rerun with the same settings fits only the missing ones; the settings are in
``out/replications/settings.json`` and other settings there are a :class:`ReplicationsMismatchError`.
**Parallel**: replications are tasks of a local process pool (``--jobs``, default one per CPU; ``--quick``: 1).

Outputs in ``out``: ``results.md``, ``coverage.png`` (coverage vs J with the nominal line, mean length vs J,
selected ω), ``summary.json`` and ``replications/``.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from fgraph_experiments import _replications

from fgraph.examples import Distinct, OptionError, whole_number, worker_processes
from fgraph_experiments._replications import ReplicationsMismatchError, wilson
from fgraph.models.mixtures import BMLRPriors, RegressionStatistics, pooled_noise_precision
from fgraph.models.tvb import FULL, build_bmlr_tvb_table, omega_grid
from fgraph.store import write_figure

__all__ = ["ReplicationsMismatchError", "add_arguments", "simulate", "table_seed", "noise_precision", "replicate",
           "run_replications", "wilson", "aggregate", "run"]

DESCRIPTION = ("TVB paper §6.2: frequentist coverage of the 95% interval for the sum of the coefficients of a "
               "K = 2 Bayesian mixture linear regression by VB and grid-search TVB over replications")

K, P = 2, 2
WEIGHT = 0.65
SNR = 0.1
NOISE_READINGS = ("as-printed", "snr")
LEVEL = 0.95
FUNCTIONAL = "coefficient_sum"
METHODS = ("vb", "tvb_grid")
LABELS = {"vb": "VB (ω = 1)", "tvb_grid": "TVB, grid search"}

FULL_SETTINGS = {"sizes": [1000, 1500, 2000, 2500, 3000], "replications": 500, "n_data_sets": 500,
                 "grid_size": 100, "grid_low": 0.001, "n_bootstrap": 100}
QUICK_SETTINGS = {"sizes": [50, 100], "replications": 3, "n_data_sets": 40, "grid_size": 6, "grid_low": 0.1,
                  "n_bootstrap": 6}


def add_arguments(parser) -> None:
    """The options of ``fgraph run bmlr-tvb``, each refused before the run if the run could not use it."""
    parser.add_argument("--replications", type=whole_number(1), default=None,
                        help="replications per J (default 500; --quick: 3)")
    parser.add_argument("--sizes", type=whole_number(P + 1), nargs="+", action=Distinct, default=None, metavar="J",
                        help=f"responses per data set, each > p = {P} (default 1000 1500 2000 2500 3000; --quick: "
                             "50 100)")
    parser.add_argument("--data-sets", dest="data_sets", type=whole_number(2 * K), default=None, metavar="N",
                        help=f"data sets per replication, at least {2 * K} (default 500; --quick: 40)")
    parser.add_argument("--noise", choices=NOISE_READINGS, default="as-printed",
                        help="the noise of §6.2: 'as-printed' (‖Xβ‖²/SNR · ε/‖ε‖², default) or 'snr' "
                             "(‖Xβ‖/√SNR · ε/‖ε‖, the usual signal-to-noise ratio)")
    parser.add_argument("--noise-precision", dest="noise_precision", type=noise_precision_option,
                        default="estimated",
                        help="the known λ of the model: 'estimated' (pooled least squares, default), 'true' (the "
                             "simulated noise's) or a positive number")
    parser.add_argument("--jobs", type=worker_processes, default=None,
                        help="worker processes over replications (-1 or default: one per CPU; --quick: 1)")
    parser.add_argument("--seed", type=whole_number(0), default=0,
                        help="the seed every replication's seeds derive from")


def noise_precision_option(text: str):
    """``type`` of --noise-precision: 'estimated', 'true' or a positive number (as the run checks it)."""
    try:
        return _check_noise_setting(text)
    except ReplicationsMismatchError:
        raise argparse.ArgumentTypeError(f"must be 'estimated', 'true' or a positive number, got {text!r}") from None


def simulate(N: int, J: int, seed: int, replication: int, noise: str = "as-printed") -> dict:
    """One replication's data (module docstring; ``noise`` one of :data:`NOISE_READINGS`), from
    ``np.random.default_rng([seed, N, J, replication])``:
    ``statistics`` (the N data sets' X_nᵀX_n, X_nᵀy_n, y_nᵀy_n and J; X and y themselves are not kept), the true
    ``beta`` (K, p) and ``labels`` (N,), the ``noise_variance`` Σ_n ‖ε̃_n‖² / (N J) (the mean squared noise per
    response) and per cluster (``cluster_noise_variance``, NaN for an empty cluster)."""
    rng = np.random.default_rng([int(seed), int(N), int(J), int(replication)])
    beta = rng.standard_normal((K, P))
    labels = np.where(rng.random(N) < WEIGHT, 0, 1)
    epsilon = rng.standard_normal((K, J))  # ε_k, one noise vector per cluster (§6.2)
    X = rng.standard_normal((N, J, P))
    signal = np.einsum("njp,np->nj", X, beta[labels])
    signal_power, noise_power = np.sum(signal ** 2, axis=1), np.sum(epsilon ** 2, axis=1)[labels]
    if noise == "as-printed":
        scale = signal_power / SNR / noise_power  # ‖X_iβ_k‖²/SNR / ‖ε_k‖²
    elif noise == "snr":
        scale = np.sqrt(signal_power / SNR / noise_power)  # ‖X_iβ_k‖/√SNR / ‖ε_k‖
    else:
        raise ReplicationsMismatchError(f"bmlr-tvb: --noise must be one of {NOISE_READINGS}, got {noise!r}")
    noise = scale[:, None] * epsilon[labels]
    y = signal + noise
    statistics = RegressionStatistics.from_data(X, y)
    squared = np.sum(noise ** 2, axis=1) / J
    per_cluster = [float(squared[labels == k].mean()) if np.any(labels == k) else float("nan") for k in range(K)]
    return {"statistics": statistics, "beta": beta, "labels": labels, "noise_variance": float(squared.mean()),
            "cluster_noise_variance": per_cluster}


def table_seed(N: int, J: int, seed: int, replication: int) -> int:
    """The seed of the split and the resamples of one replication (an integer, as the table stores it)."""
    return int(np.random.SeedSequence([int(seed), int(N), int(J), int(replication), 1]).generate_state(1)[0])


def noise_precision(setting, statistics: RegressionStatistics, noise_variance: float) -> float:
    """λ for the model from the ``--noise-precision`` setting (module docstring)."""
    if setting == "estimated":
        return pooled_noise_precision(statistics)
    if setting == "true":
        return 1.0 / noise_variance
    return float(setting)


def _check_noise_setting(value):
    if value in ("estimated", "true"):
        return value
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if not (np.isfinite(number) and number > 0.0):
        raise ReplicationsMismatchError(f"bmlr-tvb: --noise-precision must be 'estimated', 'true' or a positive "
                                        f"number, got {value!r}")
    return number


def _interval(lower, upper, truth: float) -> dict:
    lower, upper = float(lower), float(upper)
    return {"lower": lower, "upper": upper, "length": upper - lower, "covers": bool(lower <= truth <= upper)}


def replicate(J: int, replication: int, settings: dict) -> dict:
    """Fit one replication (module docstring) and return its row."""
    start = time.perf_counter()
    seed, N = settings["seed"], settings["n_data_sets"]
    data = simulate(N, J, seed, replication, settings.get("noise", "as-printed"))
    truth = float(data["beta"].sum())
    lam = noise_precision(settings["noise_precision"], data["statistics"], data["noise_variance"])
    split_seed = table_seed(N, J, seed, replication)
    grid = omega_grid(settings["grid_size"], settings["grid_low"])
    table = build_bmlr_tvb_table(data["statistics"], K, grid=grid, n_bootstrap=settings["n_bootstrap"],
                                 priors=BMLRPriors(noise_precision=lam), seed=split_seed, n_jobs=1, progress=False)
    s = table.select(FUNCTIONAL, LEVEL)

    def fitted(index: int) -> dict:
        return {"coefficient_mean": table.coefficient_mean[index, FULL].tolist(),
                "coefficient_cov": table.coefficient_cov[index, FULL].tolist(),
                "alpha": table.alpha[index, FULL].tolist()}

    row = {"j": int(J), "replication": int(replication), "n_data_sets": int(N),
           "data_seed": [int(seed), int(N), int(J), int(replication)], "split_seed": split_seed,
           "truth": truth, "beta": data["beta"].tolist(), "first_cluster_share": float(np.mean(data["labels"] == 0)),
           "noise_variance": data["noise_variance"], "cluster_noise_variance": data["cluster_noise_variance"],
           "noise_precision": lam,
           "vb": dict(_interval(s.vb.lower, s.vb.upper, truth), omega=1.0, point=float(s.vb.point),
                      bootstrap_coverage=float(s.coverage[-1]), **fitted(len(grid) - 1)),
           "tvb_grid": dict(_interval(s.interval.lower, s.interval.upper, truth), omega=float(s.omega),
                            point=float(s.interval.point), reached=bool(s.reached),
                            bootstrap_coverage=float(s.coverage[s.index]), **fitted(s.index)),
           "converged": bool(np.all(table.converged)), "max_iterations": int(table.iterations.max())}
    row["seconds"] = time.perf_counter() - start
    return row


def _row_name(J: int, replication: int) -> str:
    return f"j{J}_r{replication:04d}.json"


def run_replications(directory: Path, settings: dict, jobs: int = 1, progress: bool = False) -> tuple:
    """Every (J, replication) row of ``settings``: the finished ones read from ``directory``, the others fitted
    (``jobs`` processes) and each written there as it finishes. Returns (rows, the number fitted now)."""
    return _replications.run_replications(directory, settings, replicate, _row_name, "sizes", "bmlr-tvb", jobs,
                                          progress)


def aggregate(rows: list, sizes: list) -> list:
    """Coverage (with its Wilson interval), mean and sd of the interval length, mean and median selected ω, per J
    and method."""
    return _replications.aggregate(rows, sizes, METHODS, "j")


def run(quick: bool = False, out: Path = Path("out/bmlr-tvb"), progress: bool = False,
        replications: int | None = None, sizes: list | None = None, data_sets: int | None = None,
        noise_precision="estimated", noise: str = "as-printed", jobs: int | None = None, seed: int = 0) -> dict:
    """Run the study (module docstring) and write its files into ``out``."""
    out = Path(out)
    settings = _replications.study_settings(QUICK_SETTINGS if quick else FULL_SETTINGS, replications, sizes)
    if data_sets is not None:
        settings["n_data_sets"] = int(data_sets)
    if settings["replications"] < 1 or any(J <= P for J in settings["sizes"]) or settings["n_data_sets"] < 2 * K:
        raise ReplicationsMismatchError(f"bmlr-tvb: give at least one replication, sizes J > p = {P} and at least "
                                        f"{2 * K} data sets")
    if noise not in NOISE_READINGS:
        raise ReplicationsMismatchError(f"bmlr-tvb: --noise must be one of {NOISE_READINGS}, got {noise!r}")
    if len(set(settings["sizes"])) < len(settings["sizes"]):
        raise OptionError(f"bmlr-tvb: every size must be given once, got {settings['sizes']}")
    settings.update(noise=noise, noise_precision=_check_noise_setting(noise_precision), seed=int(seed), level=LEVEL,
                    weight=WEIGHT, snr=SNR, functional=FUNCTIONAL)
    n_jobs = _replications.worker_jobs(quick, jobs, "bmlr-tvb")
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    rows, fitted = run_replications(out / "replications", settings, jobs=n_jobs, progress=progress)
    seconds = time.perf_counter() - start
    results = aggregate(rows, settings["sizes"])

    lam = settings["noise_precision"]
    lam_text = ("λ fixed at the pooled least-squares estimate of each replication" if lam == "estimated" else
                "λ fixed at the simulated noise's 1 / (mean squared noise)" if lam == "true" else f"λ = {lam:g}")
    noise_text = ("noise as §6.2 writes it, ‖Xβ‖²/SNR · ε/‖ε‖²" if noise == "as-printed" else
                  "noise ‖Xβ‖/√SNR · ε/‖ε‖ (the usual signal-to-noise ratio)")
    lines = [f"# TVB paper §6.2: coverage of the {LEVEL:.0%} interval for Σ_k Σ_j β_kj", "",
             (f"N = {settings['n_data_sets']} data sets, K = 2, p = 2, π = {WEIGHT}, β_k ~ N(0, I), SNR = {SNR}, "
              f"{noise_text}; {lam_text}; {settings['replications']} replications per J; grid of "
              f"{settings['grid_size']} ω log-spaced in [{settings['grid_low']:g}, 1], B = {settings['n_bootstrap']} "
              f"resamples of data sets. {fitted} replications fitted in this run ({len(rows) - fitted} read back), "
              f"{seconds:.1f} s. Coverage: the fraction of replications whose interval covers the true sum, with its "
              "95% Wilson interval."), "",
             *_replications.results_table(results, "j", LABELS)]
    return _replications.write_report(out, "bmlr-tvb", quick, settings, n_jobs, fitted, seconds, results, lines,
                                      lambda plt: _figure(plt, out, results, rows, settings["sizes"]))


def _figure(plt, out: Path, results: list, rows: list, sizes: list) -> str:
    fig, (left, middle, right) = plt.subplots(1, 3, figsize=(14, 4))
    _replications.coverage_panels(left, middle, results, sizes, METHODS, LABELS, "j", LEVEL, "Σ β")
    left.set_xlabel("J (responses per data set)")
    middle.set_xlabel("J")
    middle.set_yscale("log")
    middle.set_title("Mean length of the 95% interval")
    omegas = [[row["tvb_grid"]["omega"] for row in rows if row["j"] == J] for J in sizes]
    right.boxplot(omegas)
    right.set_xticks(range(1, len(sizes) + 1), [str(J) for J in sizes])
    right.set_yscale("log")
    right.set_xlabel("J")
    right.set_ylabel("selected ω (TVB)")
    right.set_title("Selected ω")
    fig.tight_layout()
    write_figure(out / "coverage.png", fig, dpi=120)
    plt.close(fig)
    return "coverage.png"

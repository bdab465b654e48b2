"""The TVB paper's §6.1 coverage study: VB against trustworthy VB for the weight of a two-component mixture.

Data: p = 2, K = 2, μ₁ = (0, 0), μ₂ = (2, 2), Σ₁ = Σ₂ = I, π = 0.65 (the weight of the first, larger cluster),
N ∈ {1000, 1500, 2000, 2500, 3000} (the paper's sizes). For every size and replication the data are simulated
afresh and the K = 2 Bayesian GMM of :mod:`fgraph.models.mixtures.gmm` (scikit-learn's default priors) is fitted by

* **VB**: plain mean-field VB, ω = 1 on the whole data;
* **TVB, grid** (Algorithm 2): the TVB table of :func:`fgraph.models.tvb.gmm.build_tvb_table` over the grid of ω and B
  bootstrap resamples of the second half, ω chosen by eq. (6) (``rule="closest"``);
* **TVB, sequential** (Algorithm 1): :func:`fgraph.models.tvb.gmm.sequential_tvb` (Robbins–Monro on log ω, κ₀ = 2,
  Ω = [the grid's low end, 1], the same B, a new split every iteration, at most 50 iterations), unless
  ``--no-sequential``.

The quantity is π, the weight of the larger cluster (``weight[largest]``: π̂ = max(π̂₁, π̂₂) against label
switching, as the paper), its 95 % interval the equal-tailed Beta marginal of the Dirichlet posterior. Every
replication records whether the interval covers the true 0.65, its length and the selected ω; the frequentist
coverage (with a 95 % Wilson interval), the mean length and the mean selected ω per N and method are the results.

Full run: 500 replications per N, 100 ω log-spaced in [0.001, 1], B = 100 (the paper does not give B for §6.1).
``--quick``: N ∈ {200, 400}, 3 replications, 6 ω log-spaced in [0.1, 1] (smaller ω can empty a component at these
N), B = 6, sequential with at most 5 iterations.

**Resumable.** Every replication's row is written to ``out/replications/n<N>_r<rep>.json`` (atomically) as soon as
it finishes; a rerun with the same settings reads the finished rows and fits only the others. The settings are in
``out/replications/settings.json``; a directory of other settings is a :class:`ReplicationsMismatchError`.
**Parallel.** Replications are independent tasks of a local process pool (joblib's reusable executor, as
:func:`~fgraph.models.tvb.gmm.build_tvb_table` uses; ``--jobs``, default one per CPU;
``--quick``: 1, in this process); each table is built in its worker's process (``n_jobs=1``).

Outputs in ``out``: ``results.md`` (the table), ``coverage.png`` (coverage vs N with the nominal line, mean length
vs N), ``summary.json`` and ``replications/``.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from fgraph_experiments import _replications

from fgraph.examples import Distinct, OptionError, whole_number, worker_processes
from fgraph_experiments._replications import ReplicationsMismatchError, wilson
from fgraph.models.tvb import FULL, build_tvb_table, omega_grid, sequential_tvb

__all__ = ["ReplicationsMismatchError", "add_arguments", "simulate", "table_seed", "replicate", "run_replications",
           "wilson", "aggregate", "run"]

DESCRIPTION = ("TVB paper §6.1: frequentist coverage of the 95% interval for the mixing weight pi = 0.65 of a "
               "2-D, K = 2 Gaussian mixture by VB and by TVB (grid search and sequential) over replications")

MEANS = np.array([[0.0, 0.0], [2.0, 2.0]])
WEIGHT = 0.65
LEVEL = 0.95
FUNCTIONAL = "weight[largest]"
METHODS = ("vb", "tvb_grid", "tvb_sequential")
LABELS = {"vb": "VB (ω = 1)", "tvb_grid": "TVB, grid search", "tvb_sequential": "TVB, sequential"}

FULL_SETTINGS = {"sizes": [1000, 1500, 2000, 2500, 3000], "replications": 500, "grid_size": 100,
                 "grid_low": 0.001, "n_bootstrap": 100, "max_iter": 50}
QUICK_SETTINGS = {"sizes": [200, 400], "replications": 3, "grid_size": 6, "grid_low": 0.1, "n_bootstrap": 6,
                  "max_iter": 5}


#: the smallest sample size: each half of the split needs points for the K = 2 components
MIN_SIZE = 4


def add_arguments(parser) -> None:
    """The options of ``fgraph run gmm-tvb``, each refused before the run if the run could not use it."""
    parser.add_argument("--replications", type=whole_number(1), default=None,
                        help="replications per N (default 500; --quick: 3)")
    parser.add_argument("--sizes", type=whole_number(MIN_SIZE), nargs="+", action=Distinct, default=None,
                        metavar="N", help=f"the sample sizes, each >= {MIN_SIZE} (default 1000 1500 2000 2500 3000; "
                                          "--quick: 200 400)")
    parser.add_argument("--jobs", type=worker_processes, default=None,
                        help="worker processes over replications (-1 or default: one per CPU; --quick: 1)")
    parser.add_argument("--no-sequential", dest="sequential", action="store_false",
                        help="skip the sequential TVB (Algorithm 1)")
    parser.add_argument("--seed", type=whole_number(0), default=0,
                        help="the seed every replication's seeds derive from")


def simulate(N: int, seed: int, replication: int) -> np.ndarray:
    """The data (N, 2) of one replication: cluster 1 (μ = (0, 0)) with probability 0.65, else cluster 2
    (μ = (2, 2)), unit covariances; from ``np.random.default_rng([seed, N, replication])``."""
    rng = np.random.default_rng([int(seed), int(N), int(replication)])
    first = rng.random(N) < WEIGHT
    return np.where(first[:, None], MEANS[0], MEANS[1]) + rng.standard_normal((N, 2))


def table_seed(N: int, seed: int, replication: int) -> int:
    """The seed of the split and the resamples of one replication (an integer, as the table stores it)."""
    return int(np.random.SeedSequence([int(seed), int(N), int(replication), 1]).generate_state(1)[0])


def _interval(lower, upper) -> dict:
    lower, upper = float(lower), float(upper)
    return {"lower": lower, "upper": upper, "length": upper - lower, "covers": bool(lower <= WEIGHT <= upper)}


def replicate(N: int, replication: int, settings: dict) -> dict:
    """Fit one replication (module docstring) and return its row."""
    start = time.perf_counter()
    seed = settings["seed"]
    X = simulate(N, seed, replication)
    split_seed = table_seed(N, seed, replication)
    grid = omega_grid(settings["grid_size"], settings["grid_low"])
    table = build_tvb_table(X, 2, grid=grid, n_bootstrap=settings["n_bootstrap"], seed=split_seed, n_jobs=1,
                            progress=False)
    s = table.select(FUNCTIONAL, LEVEL)
    alpha = table.alpha[-1, FULL]  # ω = 1 (the grid's last value) on the whole data: plain VB
    row = {"n": int(N), "replication": int(replication), "data_seed": [int(seed), int(N), int(replication)],
           "split_seed": split_seed,
           "vb": dict(_interval(s.vb.lower, s.vb.upper), omega=1.0, point=float(s.vb.point),
                      alpha=[float(a) for a in alpha], bootstrap_coverage=float(s.coverage[-1])),
           "tvb_grid": dict(_interval(s.interval.lower, s.interval.upper), omega=float(s.omega),
                            point=float(s.interval.point), reached=bool(s.reached),
                            bootstrap_coverage=float(s.coverage[s.index]),
                            alpha=[float(a) for a in table.alpha[s.index, FULL]])}
    if settings["sequential"]:
        q = sequential_tvb(X, 2, FUNCTIONAL, LEVEL, n_bootstrap=settings["n_bootstrap"],
                           max_iter=settings["max_iter"], lower=settings["grid_low"], seed=split_seed)
        row["tvb_sequential"] = dict(_interval(q.interval.lower, q.interval.upper), omega=float(q.omega),
                                     point=float(q.interval.point), reached=bool(q.reached),
                                     iterations=len(q.omegas),
                                     alpha=[float(a) for a in q.posteriors["alpha"]])
    row["seconds"] = time.perf_counter() - start
    return row


def _row_name(N: int, replication: int) -> str:
    return f"n{N}_r{replication:04d}.json"


def run_replications(directory: Path, settings: dict, jobs: int = 1, progress: bool = False) -> tuple:
    """Every (N, replication) row of ``settings``: the finished ones read from ``directory``, the others fitted
    (``jobs`` processes) and each written there as it finishes. Returns (rows, the number fitted now)."""
    return _replications.run_replications(directory, settings, replicate, _row_name, "sizes", "gmm-tvb", jobs,
                                          progress)


def aggregate(rows: list, sizes: list, methods: tuple) -> list:
    """Coverage (with its Wilson interval), mean and sd of the interval length, mean selected ω, per N and method."""
    return _replications.aggregate(rows, sizes, methods, "n")


def run(quick: bool = False, out: Path = Path("out/gmm-tvb"), progress: bool = False,
        replications: int | None = None, sizes: list | None = None, jobs: int | None = None,
        sequential: bool = True, seed: int = 0) -> dict:
    """Run the study (module docstring) and write its files into ``out``."""
    out = Path(out)
    settings = _replications.study_settings(QUICK_SETTINGS if quick else FULL_SETTINGS, replications, sizes)
    if settings["replications"] < 1 or any(N < MIN_SIZE for N in settings["sizes"]):
        raise ReplicationsMismatchError(f"gmm-tvb: give at least one replication and sizes N >= {MIN_SIZE}")
    if len(set(settings["sizes"])) < len(settings["sizes"]):
        raise OptionError(f"gmm-tvb: every size must be given once, got {settings['sizes']}")
    settings.update(sequential=bool(sequential), seed=int(seed), level=LEVEL, weight=WEIGHT,
                    means=MEANS.tolist(), functional=FUNCTIONAL)
    n_jobs = _replications.worker_jobs(quick, jobs, "gmm-tvb")
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    rows, fitted = run_replications(out / "replications", settings, jobs=n_jobs, progress=progress)
    seconds = time.perf_counter() - start
    methods = METHODS if sequential else METHODS[:2]
    results = aggregate(rows, settings["sizes"], methods)

    lines = [f"# TVB paper §6.1: coverage of the {LEVEL:.0%} interval for π = {WEIGHT}", "",
             (f"K = 2, p = 2, μ₁ = (0, 0), μ₂ = (2, 2), Σ = I; {settings['replications']} replications per N; "
              f"grid of {settings['grid_size']} ω log-spaced in [{settings['grid_low']:g}, 1], "
              f"B = {settings['n_bootstrap']} resamples{'' if sequential else '; sequential TVB skipped'}. "
              f"π is the larger weight. {fitted} replications fitted in this run ({len(rows) - fitted} read "
              f"back), {seconds:.1f} s. Coverage: the fraction of replications whose interval covers 0.65, with "
              "its 95% Wilson interval."), "",
             *_replications.results_table(results, "n", LABELS)]
    return _replications.write_report(out, "gmm-tvb", quick, settings, n_jobs, fitted, seconds, results, lines,
                                      lambda plt: _figure(plt, out, results, settings["sizes"], methods))


def _figure(plt, out: Path, results: list, sizes: list, methods: tuple) -> str:
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    _replications.coverage_panels(left, right, results, sizes, methods, LABELS, "n", LEVEL, f"π = {WEIGHT}")
    left.set_xlabel("N")
    right.set_xlabel("N")
    right.set_title("Mean length of the 95% interval for π")
    fig.tight_layout()
    fig.savefig(out / "coverage.png", dpi=120)
    plt.close(fig)
    return "coverage.png"

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

**Ours or the authors'.** Where Liu & Li's code for this study (``GMM/tvb_gmm.R`` of the repository the paper links)
chooses otherwise than our defaults, each choice is a named option of the study (:data:`OPTIONS`, ``ours`` or
``authors``), ``--setting`` takes all of one side at once, and B (``--bootstrap``) and the grid (``--grid-size``)
are options too:

* ``priors``: scikit-learn's (W₀ = cov(X)⁻¹, ν₀ = d) or the authors' (W₀ = cov(X), ν₀ = d + 2); α₀ = 1/K, β₀ = 1
  and m₀ = the data mean either way;
* ``resampling``: one split and one set of resamples for every ω (``common``) or new ones per ω (``per_omega``,
  as Algorithm 2 and the authors' code);
* ``start``: every fit from the E-step of one reference fit, or from its own k-means (25 starts), as the authors';
* ``stopping``: at most 1000 sweeps, ELBO change < 1e-8 over 10 sweeps; or at most 199 sweeps, ELBO change
  < 1e-4 in one sweep, as the authors';
* ``steps`` (Algorithm 1): κ_k = 2/(k + 1), 50 iterations, ε = 1e-6; or κ_k = (k + 1)^−0.51, 100, 1e-3;
* ``ties`` (eq. 6): coverage at or above the level first, then the largest ω; or the largest ω alone;
* B: 100 (ours) or 500 (the authors'; the paper gives none).

**Units.** ``--units C`` multiplies the simulated data by C, the same data in other units (π unchanged). Our
priors are set from the data's mean and covariance, so every fit, interval and coverage is the same in any units;
the authors' (W₀ = cov(X), a scale matrix of the precision set to a covariance) are not, and this option measures
what that does.

Every row keeps the whole coverage curve ĉ(ω) and the whole-data interval at every ω, so that a choice made on the
curve alone (``ties``) can be read off any row afterwards (:func:`grid_choice`).

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

from fgraph.examples import Distinct, OptionError, positive_number, whole_number, worker_processes
from fgraph_experiments._replications import ReplicationsMismatchError, wilson
from fgraph.models.mixtures import GMMPriors
from fgraph.models.tvb import FULL, build_tvb_table, choose_omega, omega_grid, sequential_tvb
from fgraph.store import write_figure

__all__ = ["ReplicationsMismatchError", "OPTIONS", "SETTINGS", "add_arguments", "simulate", "table_seed",
           "study_options", "study_settings", "table_arguments", "sequential_arguments", "grid_choice", "replicate",
           "run_replications", "report", "interval_entry",
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

#: Liu & Li's choices against ours (module docstring): option -> side -> what it sets
OPTIONS = {
    "priors": {"ours": {"priors": None},
               "authors": {"priors": {"scale": "covariance", "df": 4.0}}},  # W₀ = cov(X), ν₀ = d + 2 (d = 2)
    "resampling": {"ours": {"resampling": "common"}, "authors": {"resampling": "per_omega"}},
    "start": {"ours": {"start": "reference"}, "authors": {"start": "kmeans", "kmeans_starts": 25}},
    "stopping": {"ours": {"iterations": 1000, "tol": 1e-8, "check_every": 10},
                 "authors": {"iterations": 199, "tol": 1e-4, "check_every": 1}},
    "steps": {"ours": {"step": 2.0, "decay": 1.0, "max_iter": 50, "tolerance": 1e-6},
              "authors": {"step": 1.0, "decay": 0.51, "max_iter": 100, "tolerance": 1e-3}},
    "ties": {"ours": {"ties": "nominal"}, "authors": {"ties": "largest"}},
}
#: the sides every option takes at once (``--setting``), and the B of each
SETTINGS = {"ours": {"options": {name: "ours" for name in OPTIONS}, "n_bootstrap": 100},
            "authors": {"options": {name: "authors" for name in OPTIONS}, "n_bootstrap": 500}}
TABLE_KEYS = ("priors", "resampling", "start", "kmeans_starts", "iterations", "tol", "check_every")
SEQUENTIAL_KEYS = ("priors", "start", "kmeans_starts", "iterations", "tol", "check_every", "step", "decay",
                   "tolerance")  # and max_iter: the settings' (the quick run's is smaller)


def study_options(settings: dict) -> dict:
    """Every option's side (``ours`` unless ``settings["options"]`` says otherwise)."""
    return {name: settings.get("options", {}).get(name, "ours") for name in OPTIONS}


def _values(settings: dict) -> dict:
    values = {}
    for name, side in study_options(settings).items():
        values.update(OPTIONS[name][side])
    if values["priors"] is not None:
        values["priors"] = GMMPriors(**values["priors"])
    return values


def table_arguments(settings: dict) -> dict:
    """The keywords of :func:`~fgraph.models.tvb.build_tvb_table` that the study's options set."""
    values = _values(settings)
    return {key: values[key] for key in TABLE_KEYS if key in values}


def sequential_arguments(settings: dict) -> dict:
    """The keywords of :func:`~fgraph.models.tvb.sequential_tvb` that the study's options set (its Ω's low end is
    the grid's, ``lower``)."""
    values = _values(settings)
    return {key: values[key] for key in SEQUENTIAL_KEYS if key in values}


def grid_choice(curve: dict, ties: str) -> dict:
    """Grid-search TVB read off a row's ``curve`` (ω, the bootstrap coverage ĉ(ω) and the whole-data interval at
    every ω): eq. (6) with the ``ties`` rule, and the interval at the chosen ω (an entry as :func:`replicate`
    writes it)."""
    grid = np.asarray(curve["omega"])
    index, reached = choose_omega(grid, np.asarray(curve["coverage"]), LEVEL, "closest", ties=ties)
    return dict(interval_entry(curve["lower"][index], curve["upper"][index]), omega=float(grid[index]),
                point=float(curve["point"][index]), reached=bool(reached),
                bootstrap_coverage=float(curve["coverage"][index]))


def add_arguments(parser) -> None:
    """The options of ``fgraph run gmm-tvb``, each refused before the run if the run could not use it."""
    parser.add_argument("--setting", choices=tuple(SETTINGS), default="ours",
                        help="every option below on one side at once: ours (default) or the authors' code's "
                             "(and B = 500 unless --bootstrap is given)")
    for name in OPTIONS:
        parser.add_argument(f"--{name}", choices=("ours", "authors"), default=None,
                            help=f"the {name} of ours or of the authors' code (default: the --setting's)")
    parser.add_argument("--bootstrap", type=whole_number(1), default=None, metavar="B",
                        help="bootstrap resamples B (default 100; --setting authors: 500; --quick: 6)")
    parser.add_argument("--grid-size", dest="grid_size", type=whole_number(2), default=None, metavar="M",
                        help="values of ω log-spaced in [0.001, 1] (default 100; --quick: 6 in [0.1, 1])")
    parser.add_argument("--units", type=positive_number, default=None, metavar="C",
                        help="the simulated data times C, the same data in other units (default 1)")
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


def interval_entry(lower, upper) -> dict:
    """A row's entry for one interval of π: its ends, its length and whether it covers the true weight."""
    lower, upper = float(lower), float(upper)
    return {"lower": lower, "upper": upper, "length": upper - lower, "covers": bool(lower <= WEIGHT <= upper)}


def _grid_search(X, split_seed: int, settings: dict) -> dict:
    """Plain VB and grid-search TVB of one replication from its TVB table, and the table's coverage curve and
    whole-data intervals at every ω (``curve``)."""
    grid = omega_grid(settings["grid_size"], settings["grid_low"])
    table = build_tvb_table(X, 2, grid=grid, n_bootstrap=settings["n_bootstrap"], seed=split_seed, n_jobs=1,
                            progress=False, block_size=4096, **table_arguments(settings))  # in memory: few blocks
    intervals = table.intervals(FUNCTIONAL, LEVEL)
    curve = {"omega": grid.tolist(), "coverage": table.coverage(FUNCTIONAL, LEVEL).tolist(),
             **{part: getattr(intervals, part)[:, FULL].tolist() for part in ("lower", "upper", "point")},
             "split_point": intervals.point[:, 1].tolist(), "sweeps": table.iterations.mean(axis=1).tolist()}
    chosen = grid_choice(curve, _values(settings)["ties"])
    index = int(np.flatnonzero(grid == chosen["omega"])[0])
    alpha = table.alpha[-1, FULL]  # ω = 1 (the grid's last value) on the whole data: plain VB
    return {"vb": dict(interval_entry(curve["lower"][-1], curve["upper"][-1]), omega=1.0,
                       point=curve["point"][-1], alpha=[float(a) for a in alpha],
                       bootstrap_coverage=curve["coverage"][-1]),
            "tvb_grid": dict(chosen, alpha=[float(a) for a in table.alpha[index, FULL]]),
            "curve": curve}


def replicate(N: int, replication: int, settings: dict) -> dict:
    """Fit one replication (module docstring) and return its row."""
    start = time.perf_counter()
    seed = settings["seed"]
    X = simulate(N, seed, replication) * settings.get("units", 1.0)
    split_seed = table_seed(N, seed, replication)
    row = {"n": int(N), "replication": int(replication), "data_seed": [int(seed), int(N), int(replication)],
           "split_seed": split_seed}
    if settings.get("grid", True):
        row.update(_grid_search(X, split_seed, settings))
    if settings["sequential"]:
        q = sequential_tvb(X, 2, FUNCTIONAL, LEVEL, n_bootstrap=settings["n_bootstrap"], lower=settings["grid_low"],
                           max_iter=settings["max_iter"], seed=split_seed, **sequential_arguments(settings))
        row["tvb_sequential"] = dict(interval_entry(q.interval.lower, q.interval.upper), omega=float(q.omega),
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
        sequential: bool = True, seed: int = 0, setting: str = "ours", bootstrap: int | None = None,
        grid_size: int | None = None, units: float | None = None, **sides) -> dict:
    """Run the study (module docstring) and write its files into ``out``: every option on the side of ``setting``
    unless ``sides`` names another (``priors="authors"``, ...)."""
    out = Path(out)
    settings = study_settings(quick, replications, sizes, setting, bootstrap, grid_size, sides, units)
    if settings["replications"] < 1 or any(N < MIN_SIZE for N in settings["sizes"]):
        raise ReplicationsMismatchError(f"gmm-tvb: give at least one replication and sizes N >= {MIN_SIZE}")
    if len(set(settings["sizes"])) < len(settings["sizes"]):
        raise OptionError(f"gmm-tvb: every size must be given once, got {settings['sizes']}")
    settings.update(sequential=bool(sequential), seed=int(seed), level=LEVEL, weight=WEIGHT,
                    means=MEANS.tolist(), functional=FUNCTIONAL)
    return report(out, "gmm-tvb", quick, settings, jobs, progress)


def study_settings(quick: bool, replications: int | None = None, sizes: list | None = None, setting: str = "ours",
                   bootstrap: int | None = None, grid_size: int | None = None, sides: dict | None = None,
                   units: float | None = None) -> dict:
    """The settings of a run (before the seed and the sequential switch): the full or quick scope, then the
    ``setting``'s sides and B, then the options named in ``sides`` (option -> "ours" or "authors"), B and the
    grid size asked for, and the ``units`` (the data's factor). The options enter the settings — and so the
    identity of the rows' store — only when one of them is the authors', and the units only when they are not 1,
    so that the rows of a run of our defaults stay theirs."""
    if setting not in SETTINGS:
        raise OptionError(f"gmm-tvb: setting must be one of {', '.join(SETTINGS)}, got {setting!r}")
    settings = _replications.study_settings(QUICK_SETTINGS if quick else FULL_SETTINGS, replications, sizes)
    options = dict(SETTINGS[setting]["options"])
    for name, side in (sides or {}).items():
        if name not in OPTIONS:
            raise OptionError(f"gmm-tvb: unknown option {name!r}; the options are {', '.join(OPTIONS)}")
        if side is not None:
            if side not in ("ours", "authors"):
                raise OptionError(f"gmm-tvb: {name} must be 'ours' or 'authors', got {side!r}")
            options[name] = side
    if not quick:
        settings["n_bootstrap"] = SETTINGS[setting]["n_bootstrap"]
        settings["max_iter"] = OPTIONS["steps"][options["steps"]]["max_iter"]
    if bootstrap is not None:
        settings["n_bootstrap"] = int(bootstrap)
    if grid_size is not None:
        settings["grid_size"] = int(grid_size)
    if any(side != "ours" for side in options.values()):
        settings["options"] = options
    if units is not None and float(units) != 1.0:
        if not (np.isfinite(float(units)) and float(units) > 0):
            raise OptionError(f"gmm-tvb: units must be a finite number > 0, got {units!r}")
        settings["units"] = float(units)
    return settings


def report(out: Path, label: str, quick: bool, settings: dict, jobs: int | None, progress: bool) -> dict:
    """Fit (or read back) every replication of ``settings`` into ``out/replications`` and write the report."""
    sequential = settings["sequential"]
    n_jobs = _replications.worker_jobs(quick, jobs, label)
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    rows, fitted = run_replications(out / "replications", settings, jobs=n_jobs, progress=progress)
    seconds = time.perf_counter() - start
    methods = METHODS if sequential else METHODS[:2]
    results = aggregate(rows, settings["sizes"], methods)

    lines = [f"# TVB paper §6.1: coverage of the {LEVEL:.0%} interval for π = {WEIGHT}", "",
             (f"K = 2, p = 2, μ₁ = (0, 0), μ₂ = (2, 2), Σ = I; {settings['replications']} replications per N; "
              f"grid of {settings['grid_size']} ω log-spaced in [{settings['grid_low']:g}, 1], "
              f"B = {settings['n_bootstrap']} resamples{'' if sequential else '; sequential TVB skipped'}; "
              f"{_sides_text(settings)}{_units_text(settings)}. "
              f"π is the larger weight. {fitted} replications fitted in this run ({len(rows) - fitted} read "
              f"back), {seconds:.1f} s. Coverage: the fraction of replications whose interval covers 0.65, with "
              "its 95% Wilson interval."), "",
             *_replications.results_table(results, "n", LABELS)]
    return _replications.write_report(out, label, quick, settings, n_jobs, fitted, seconds, results, lines,
                                      lambda plt: _figure(plt, out, results, settings["sizes"], methods))


def _sides_text(settings: dict) -> str:
    options = study_options(settings)
    authors = [name for name, side in options.items() if side == "authors"]
    if not authors:
        return "every option ours"
    if len(authors) == len(options):
        return "every option the authors' code's"
    return "the authors' code's " + ", ".join(authors) + ", the other options ours"


def _units_text(settings: dict) -> str:
    return f"; the data times {settings['units']:g}" if "units" in settings else ""


def _figure(plt, out: Path, results: list, sizes: list, methods: tuple) -> str:
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    _replications.coverage_panels(left, right, results, sizes, methods, LABELS, "n", LEVEL, f"π = {WEIGHT}")
    left.set_xlabel("N")
    right.set_xlabel("N")
    right.set_title("Mean length of the 95% interval for π")
    fig.tight_layout()
    write_figure(out / "coverage.png", fig, dpi=120)
    plt.close(fig)
    return "coverage.png"

"""Trustworthy variational Bayes (TVB) for the Gaussian mixture: fractional VB fits over a grid of ω and bootstrap
resamples (the TVB table), and the calibration of ω by the sequential (Algorithm 1) and grid-search (Algorithm 2)
strategies of Liu & Li, "Bend to mend" (the TVB paper).

**The method.** Fractional VB with power ω ∈ (0, 1] (:func:`fgraph.models.mixtures.gmm.build_gmm`, Algorithm 3)
widens the posterior as ω falls. For a functional h and a level 1 − α, TVB splits the data X into halves X₁, X₂,
fits X₁ at ω to get the point estimate h(θ̂_ω^{X₁}) (θ̂ the posterior mean), fits B bootstrap resamples X₂^{(b)} of
X₂ at ω, and estimates the frequentist coverage of the (1 − α) credible interval by the fraction of bootstrap
intervals that cover that point estimate (eq. 5)::

    ĉ(ω) = (1/B) Σ_b 1{h(θ̂_ω^{X₁}) ∈ C_ω(X₂^{(b)}; α)}.

ω is then chosen so that ĉ(ω) is 1 − α, and the reported interval is the fractional posterior's on the whole data
at that ω.

**The TVB table** (:func:`build_tvb_table`, Algorithm 2's dictionary): for every ω of a grid (default 100 values
log-spaced in [0.001, 1], :func:`~fgraph.models.tvb.arguments.omega_grid`) the fit on the whole data, on X₁ and on
the B resamples — every cell's q(π) = Dir(α) and q(μ_k, Λ_k) = N(m_k, (β_k Λ_k)⁻¹) W(W_k, ν_k), arrays of shape
(m, B + 2, ...) with the roles ``FULL`` = 0, ``SPLIT`` = 1 and the resamples 2 … B + 1 on the second axis. Any
functional (:mod:`fgraph.models.tvb.intervals`) is queried from it afterwards without refitting
(:meth:`TVBTable.intervals`, :meth:`TVBTable.coverage`, :meth:`TVBTable.select`). The fits are batched: cells of
equal data size are copies of one graph (a leading copy axis carrying ω and the resampled data), ``batch_size``
cells at a time, refilled from their block (``block_size`` cells) as cells settle; the blocks run in a local
process pool (``n_jobs``) or on a Dask cluster (``client``: a
``distributed.Client`` or a scheduler address) — the same blocks either way, so the same numbers. With a ``path``
the directory is a results store (:mod:`fgraph.store`): every finished block is written at once, and a build
interrupted for any reason, kill -9 included, is resumed by calling it again with the same arguments. The finished
table is one npz and one JSON file holding the npz's hash (no pickle anywhere).

The blocks' machinery — the plan, the executors, the resumable, shared directory — is
:mod:`fgraph.models.tvb.build`, and the coverage and the rules that choose ω are :mod:`fgraph.models.tvb.table`'s,
shared with the Bayesian mixture linear regression's table (:mod:`fgraph.models.tvb.bmlr`). This module gives them
the GMM's block fit (:func:`_fit_block`, through :class:`_Setting`) and its table (:class:`TVBTable`).

**Starts and labels.** Every cell starts from the E-step, on its own data, of one reference fit: plain VB (ω = 1)
on the whole data from ``init`` starting responsibilities (``n_init`` restarts, the best ELBO kept), so all cells
start with the same labelling of the components; after the fit each cell's components are permuted to the closest
match of the reference means (in the metric of the prior scale W₀), so that component k means the same cluster in
every cell and a functional of component k can be compared across cells. The priors are resolved once, from the
whole data (:class:`fgraph.models.mixtures.gmm.GMMPriors`), and shared by every cell. The data are centred on their
mean for the fits (m₀ shifted with them, exactly) and the stored means are in the coordinates of the data.

**Choosing ω.** :meth:`TVBTable.select` is Algorithm 2 on the table (the rules ``"closest"``, eq. 6, and
``"sequential"``: :mod:`fgraph.models.tvb.table`). :func:`sequential_tvb` is Algorithm 1 itself: η = log ω from 0,
Robbins–Monro steps η ← η + κ_k (ĉ − (1 − α)), a new split and B new resamples at every step (``redraw=False``
keeps the first ones: the coverage curve of a table built with the same ``seed``).
"""
from __future__ import annotations

import hashlib
import numbers
from dataclasses import dataclass, field

import numpy as np

from fgraph.errors import ModelError
from fgraph.models.mixtures.gmm import GMMPriors, build_gmm, fit_gmm, fit_gmm_copies, initial_responsibilities, \
    log_responsibilities
from fgraph.models.mixtures.gmm import check_data as check_gmm_data
from fgraph.models.tvb.arguments import check_bootstrap, check_grid, check_level, check_positive_integer, \
    check_sampling, omega_grid
from fgraph.models.tvb.build import align_components, assemble_cells, build_table, cell_task, draw_resamples, \
    draw_split, job_count, plan_blocks
from fgraph.models.tvb.errors import PowerRangeError, TVBError
from fgraph.models.tvb.intervals import Functional, Intervals, MonteCarlo, functional
from fgraph.models.tvb.table import Table

__all__ = ["TVBTable", "build_tvb_table", "SequentialTVB", "sequential_tvb"]

FORMAT = "fgraph-tvb-table"
VERSION = 3  # 3: a cell settles on the ELBO's change over a round of CHECK_EVERY sweeps (2: over one sweep; 1: a block ran until all its cells settled)
# A cell has settled when its ELBO changed by less than tol over a round of this many sweeps (fit_gmm_copies).
CHECK_EVERY = 10
PARAMETERS = ("alpha", "mean", "precision_scale", "scale", "df")


def _check_data(X, n_components) -> np.ndarray:
    """The data as build_gmm checks it (named DataError / ModelError), and at least 2 K points so that both halves
    of a split can hold K components."""
    from fgraph.errors import DataError

    X, _, _ = check_gmm_data(X, n_components, 1)  # the GMM's own checks and messages
    if X.ndim != 2:
        raise DataError(f"TVB: X must be one data set of shape (N, d), got shape {X.shape}")
    if len(X) < 2 * n_components:
        raise DataError(f"TVB: N = {len(X)} points cannot be split into two halves of at least K = {n_components} "
                        "points each; give N >= 2 K")
    return X


def _fit_block(X, indices, omegas, priors: GMMPriors, start: dict, centre, iterations: int, tol, check_every: int,
               kmeans: tuple | None, batch_size: int) -> dict:
    """Fit the cells of one block as copies of one graph: cell r is the data ``X[indices[r]]`` (X centred) at power
    ``omegas[r]``, started from the E-step on it of the reference posteriors ``start`` (centred) — or, with
    ``kmeans`` = (S starts, seed), of the prior with the means at the cell's own k-means centres
    (:func:`_kmeans_responsibilities`) —; the posteriors, their components matched to the reference's, with the
    means in the data's coordinates. Each cell stops on its own (:func:`~fgraph.models.mixtures.gmm.fit_gmm_copies`,
    the ELBO compared every ``check_every`` sweeps; at most ``batch_size`` cells in the graph at once, the next
    joining as one settles), so a cell's numbers do not depend on the block it falls in."""
    indices = np.asarray(indices)
    K = start["alpha"].shape[-1]
    data = X[indices]  # (R, n, d)
    if kmeans is None:
        responsibilities = np.exp(log_responsibilities(start, data))
    else:
        responsibilities = _kmeans_responsibilities(data, indices, priors, K, *kmeans)
    fit = fit_gmm_copies(data, K, responsibilities, priors, power=np.asarray(omegas, dtype=float),
                         iterations=iterations, tol=tol, check_every=check_every, batch_size=batch_size)
    posteriors = {key: value for key, value in fit.posteriors.items() if key in PARAMETERS}
    posteriors = align_components(posteriors, start["mean"], priors.scale)
    posteriors["mean"] = posteriors["mean"] + centre
    posteriors["elbo"] = fit.elbo
    posteriors["iterations"] = fit.iterations
    posteriors["converged"] = fit.converged
    return posteriors


def _kmeans_responsibilities(data, indices, priors: GMMPriors, K: int, n_starts: int, seed: int) -> np.ndarray:
    """Every cell's starting responsibilities (R, n, K) as Liu & Li's code starts a fit: the E-step of q(π) = Dir(α₀)
    and q(μ_k, Λ_k) = the prior N(c_k, (β₀ Λ_k)⁻¹) W(W₀, ν₀) with its means at the cell's k-means centres c_k
    (best of ``n_starts`` starts, :func:`~fgraph.models.mixtures.kmeans.kmeans_centres`). A cell's k-means
    starts are seeded by ``seed`` and a hash of the cell's data indices, so that a cell starts alike in any
    block, and the cells of the same data (the whole data at every ω) start alike."""
    from fgraph.models.mixtures.kmeans import kmeans_centres

    # cells of the same data (one resample at every ω of a shared grid) share their k-means: run it once
    rows, first, cell_of = np.unique(np.asarray(indices, dtype=np.int64), axis=0, return_index=True,
                                     return_inverse=True)
    seeds = [[int(seed), int.from_bytes(hashlib.sha256(row.tobytes()).digest()[:8], "little")] for row in rows]
    centres = kmeans_centres(data[first], K, n_starts, seeds)[cell_of.reshape(-1)]
    prior = {"alpha": priors.weight_concentration, "precision_scale": np.full(K, priors.precision_scale),
             "scale": np.broadcast_to(priors.scale, (K,) + priors.scale.shape), "df": np.full(K, priors.df)}
    return np.stack([np.exp(log_responsibilities(dict(prior, mean=centres[r]), data[r]))
                     for r in range(len(data))])


@dataclass(frozen=True)
class _Setting:
    """What every cell shares: the centred data and priors, the reference start, the fit's stopping, and how the
    cells start (``kmeans``: None, from the reference; or (S starts, seed), from their own k-means)."""

    X: np.ndarray  # centred
    centre: np.ndarray
    priors: GMMPriors  # centred
    start: dict  # centred reference posteriors
    iterations: int
    tol: float | None
    check_every: int = CHECK_EVERY
    kmeans: tuple | None = None
    batch_size: int = 64

    @property
    def data(self):
        """What every block reads (scattered once to a Dask cluster): the first of :meth:`arguments`."""
        return self.X

    @property
    def function(self):
        """The block's fit, a module-level function (a process pool or a cluster pickles it by name), looked up
        when called."""
        return _fit_block

    def arguments(self, indices, omegas) -> tuple:
        return (self.X, indices, omegas, self.priors, self.start, self.centre, self.iterations, self.tol,
                self.check_every, self.kmeans, self.batch_size)

    def fit(self, indices, omegas) -> dict:
        return self.function(*self.arguments(indices, omegas))


def _reference(X, n_components: int, priors, init: str, n_init: int, random_state, iterations: int, tol) -> tuple:
    """The resolved priors and the reference fit (plain VB on the whole data, best of ``n_init`` restarts), in the
    data's coordinates."""
    K = int(n_components)
    resolved = (GMMPriors() if priors is None else priors)
    if not isinstance(resolved, GMMPriors):
        raise ModelError(f"GMM: priors must be a GMMPriors, got {type(resolved).__name__}")
    resolved = resolved.resolved(X, K)
    centre = X.mean(axis=0)
    centred = _centred(resolved, centre)
    starts = initial_responsibilities(X, K, init, random_state, n_copies=n_init)
    fit = fit_gmm(build_gmm(X - centre, K, centred, n_copies=n_init), starts, iterations=iterations, tol=tol)
    best = int(np.argmax(fit.elbo[-1]))
    reference = {key: value[best] for key, value in fit.posteriors().items() if key in PARAMETERS}
    reference["mean"] = reference["mean"] + centre
    return resolved, reference


def _centred(priors: GMMPriors, centre) -> GMMPriors:
    return GMMPriors(priors.weight_concentration, priors.mean - centre, priors.precision_scale, priors.scale,
                     priors.df)


def _setting(X, priors: GMMPriors, reference: dict, iterations: int, tol, check_every: int, start: str,
             kmeans_starts: int, random_state, batch_size: int) -> _Setting:
    centre = X.mean(axis=0)
    reference = dict(reference, mean=reference["mean"] - centre)
    kmeans = (int(kmeans_starts), 0 if random_state is None else int(random_state)) if start == "kmeans" else None
    return _Setting(X - centre, centre, _centred(priors, centre), reference, int(iterations), tol, int(check_every),
                    kmeans, int(batch_size))


STARTS = ("reference", "kmeans")


def _check_start(start: str) -> str:
    if start not in STARTS:
        raise TVBError(f"TVB: start must be 'reference' (every cell from the E-step of one reference fit) or "
                       f"'kmeans' (every cell from its own k-means, as Liu & Li's code), got {start!r}")
    return start



@dataclass
class TVBTable(Table):
    """The TVB table: fractional VB posteriors for every ω of ``grid`` (first axis, m values) and every role on the
    second axis (``FULL`` = 0: the whole data, ``SPLIT`` = 1: X₁, 2 .. B + 1: the bootstrap resamples of X₂):
    ``alpha`` (m, B + 2, K), ``mean`` (m, B + 2, K, d) (data coordinates), ``precision_scale`` (m, B + 2, K),
    ``scale`` (m, B + 2, K, d, d), ``df`` (m, B + 2, K); per cell the final ``elbo``, its ``iterations`` (sweeps)
    and whether it ``converged``; the indices into X of X₁ (``split``, (S, n₁)), X₂ (``holdout``, (S, n₂)) and
    the resamples (``bootstrap``, (S, B, n₂)) — S = 1 for ``resampling="common"``, m for ``"per_omega"`` —; the
    reference fit the cells started from (``start``); the settings (``metadata``)."""

    grid: np.ndarray
    alpha: np.ndarray
    mean: np.ndarray
    precision_scale: np.ndarray
    scale: np.ndarray
    df: np.ndarray
    elbo: np.ndarray
    iterations: np.ndarray
    converged: np.ndarray
    split: np.ndarray
    holdout: np.ndarray
    bootstrap: np.ndarray
    start: dict
    metadata: dict = field(default_factory=dict)

    parameters = PARAMETERS
    table_format, kind, builder = FORMAT, "TVB table", "build_tvb_table"

    @property
    def dim(self) -> int:
        return self.mean.shape[-1]

    def functional(self, spec) -> Functional:
        return functional(spec, self.dim)

    def intervals(self, spec, level: float = 0.95) -> Intervals:
        """The ``level`` credible intervals of a functional (:func:`functional`) in every cell, arrays (m, B + 2)."""
        level = check_level(level)
        h = functional(spec, self.dim)
        if not isinstance(h, MonteCarlo):
            return h.intervals(self.posteriors(), level)
        rows = [h.intervals({key: value[i] for key, value in self.posteriors().items()}, level)
                for i in range(len(self.grid))]  # one ω at a time: the draws of a whole table would not fit
        return Intervals(*(np.stack([getattr(row, part) for row in rows]) for part in ("lower", "upper", "point")))


def build_tvb_table(X, n_components: int, path=None, grid=None, n_bootstrap: int = 100, priors: GMMPriors | None = None,
                    seed: int = 0, resampling: str = "common", block_size: int = 512, batch_size: int = 64,
                    n_jobs=-1, client=None,
                    iterations: int = 1000, tol: float | None = 1e-8, check_every: int = CHECK_EVERY,
                    init: str = "kmeans", n_init: int = 1, random_state: int | None = 0, start: str = "reference",
                    kmeans_starts: int = 25, progress: bool | None = None) -> TVBTable:
    """The TVB table of the K-component mixture on data ``X`` (N, d) (module docstring).

    grid : the powers ω, default :func:`omega_grid` () (100 values log-spaced in [0.001, 1]).
    n_bootstrap : B >= 1 resamples of X₂.
    priors : :class:`~fgraph.models.mixtures.gmm.GMMPriors`, resolved from the whole data (scikit-learn's defaults).
    seed : the split and the resamples come from ``np.random.default_rng(seed)``.
    resampling : ``"common"`` (default) — one split and one set of B resamples for every ω, so that the coverage
        curve over ω changes with ω alone — or ``"per_omega"``, a new split and new resamples for every ω, as
        Algorithm 2 is written.
    block_size : cells per block, the unit of work: one task of the pool or the cluster, and one file of a
        resumable build.
    batch_size : cells in one graph at a time (copies of one fit); as cells settle, the block's next cells take
        their places (:func:`~fgraph.models.mixtures.gmm.fit_gmm_copies`). Neither changes any cell's numbers.
    n_jobs : workers of the local process pool (−1: one per CPU; 1 or None: this process).
    client : a ``dask.distributed.Client``, or a scheduler address (a client is opened and closed here): the
        blocks run on that cluster instead (the ``distributed`` extra).
    iterations, tol, check_every : the most sweeps of a cell and its stopping tolerance on the ELBO's change over
        a round of ``check_every`` sweeps (nats; None: exactly ``iterations``); a cell that settles leaves its
        block's graph. Liu & Li's code stops a fit after 199 sweeps or when its ELBO changed by less than 1e-4 in
        one sweep (``iterations=199, tol=1e-4, check_every=1``).
    init, n_init, random_state : the starting responsibilities of the reference fit (as ``BayesianGMM``'s).
    start : how every cell starts — ``"reference"`` (default): from the E-step, on the cell's data, of the
        reference fit, so that all cells start with one labelling; ``"kmeans"``: from the E-step of the prior with
        its means at the cell's own k-means centres (``kmeans_starts`` random starts, the best kept; seeded by
        ``random_state`` and the cell's data), as Liu & Li's code starts every fit. Either way the components are
        matched to the reference fit's after the fit.
    path : a directory: every finished block is written there at once, and the finished table as
        ``tvb_table.npz`` + ``tvb_table.json``; calling again with the same arguments loads the finished table, or
        resumes an interrupted build with the blocks not yet written. Other data or settings in a used directory
        are a :class:`TableMismatchError`.
    progress : a progress bar over the blocks on stderr (default: when stderr is a terminal).

    Bad input is named: an empty grid (:class:`GridError`), ω outside (0, 1] (:class:`PowerRangeError`), B < 1
    (:class:`BootstrapCountError`), and the GMM's own errors for the data and priors.
    """
    X = _check_data(X, n_components)
    K = int(n_components)
    grid = omega_grid() if grid is None else check_grid(grid)
    n_bootstrap = check_bootstrap(n_bootstrap)
    block_size = check_positive_integer("block_size", block_size)
    batch_size = check_positive_integer("batch_size", batch_size)
    iterations = check_positive_integer("iterations", iterations)
    n_init = check_positive_integer("n_init", n_init)
    check_every = check_positive_integer("check_every", check_every)
    kmeans_starts = check_positive_integer("kmeans_starts", kmeans_starts)
    start = _check_start(start)
    check_sampling(resampling, seed, random_state)
    N, d = X.shape
    m = grid.size
    n1 = N // 2
    sizes = (N, n1, N - n1)
    blocks = plan_blocks(m, n_bootstrap, sizes, block_size)
    jobs = 1 if client is not None else job_count(n_jobs, len(blocks), "build_tvb_table")
    metadata = {
        "format": FORMAT, "version": VERSION, "n_components": int(K), "n_samples": int(N), "dim": int(d),
        "data_sha256": hashlib.sha256(np.ascontiguousarray(X).tobytes()).hexdigest(),
        "grid": [float(value) for value in grid], "n_bootstrap": n_bootstrap, "seed": int(seed),
        "resampling": resampling, "block_size": block_size, "iterations": iterations,
        "tol": None if tol is None else float(tol), "check_every": check_every, "start": start,
        "kmeans_starts": kmeans_starts, "init": init, "n_init": n_init,
        "random_state": None if random_state is None else int(random_state),
        "priors": None if priors is None else _priors_json(priors),
    }

    def reference() -> dict:
        resolved, fit = _reference(X, K, priors, init, n_init, random_state, iterations, tol)
        return {"priors_alpha": resolved.weight_concentration, "priors_mean": resolved.mean,
                "priors_beta": np.array(resolved.precision_scale), "priors_scale": resolved.scale,
                "priors_df": np.array(resolved.df), **draw_resamples(seed, N, n_bootstrap, resampling, m),
                **{f"start_{key}": value for key, value in fit.items()}}

    def prepare(arrays: dict) -> tuple:
        resolved = GMMPriors(arrays["priors_alpha"], arrays["priors_mean"], float(arrays["priors_beta"]),
                             arrays["priors_scale"], float(arrays["priors_df"]))
        reference_fit = {key[len("start_"):]: value for key, value in arrays.items() if key.startswith("start_")}
        split, holdout, bootstrap = arrays["split"], arrays["holdout"], arrays["bootstrap"]

        def assemble(results: dict) -> TVBTable:
            return _assemble(grid, n_bootstrap, blocks, results, split, holdout, bootstrap, reference_fit, metadata)

        setting = _setting(X, resolved, reference_fit, iterations, tol, check_every, start, kmeans_starts,
                           random_state, batch_size)
        return setting, cell_task(N, grid, resampling, split, bootstrap), assemble

    return build_table(path, metadata, TVBTable, reference, prepare, blocks, jobs, client, progress)


def _priors_json(priors: GMMPriors) -> dict:
    if not isinstance(priors, GMMPriors):
        raise ModelError(f"GMM: priors must be a GMMPriors, got {type(priors).__name__}")
    return {key: value if value is None or isinstance(value, str) else np.asarray(value, dtype=float).tolist()
            for key, value in vars(priors).items()}


def _assemble(grid, n_bootstrap, blocks, results, split, holdout, bootstrap, start, metadata) -> TVBTable:
    arrays = assemble_cells(grid.size, n_bootstrap + 2, blocks, results,
                             (*PARAMETERS, "elbo", "iterations", "converged"))
    return TVBTable(grid, **arrays, split=split, holdout=holdout, bootstrap=bootstrap, start=start,
                    metadata=dict(metadata, complete=True))


# ------------------------------------------------------------------------------------------------ Algorithm 1
@dataclass(frozen=True)
class SequentialTVB:
    """The result of :func:`sequential_tvb`: the chosen ``omega``, whether the coverage reached the nominal level
    (``reached``), the ω and bootstrap coverage of every iteration (``omegas``, ``coverages``), the credible
    interval on the whole data at ``omega`` and that fit's posteriors."""

    functional: str
    level: float
    omega: float
    reached: bool
    omegas: np.ndarray
    coverages: np.ndarray
    interval: Intervals
    posteriors: dict


def sequential_tvb(X, n_components: int, spec, level: float = 0.95, n_bootstrap: int = 100, step=2.0,
                   decay: float = 1.0, max_iter: int = 50, tolerance: float = 1e-6, lower: float = 1e-3,
                   redraw: bool = True, seed: int = 0, priors: GMMPriors | None = None, iterations: int = 1000,
                   tol: float | None = 1e-8, check_every: int = CHECK_EVERY, init: str = "kmeans", n_init: int = 1,
                   random_state: int | None = 0, start: str = "reference", kmeans_starts: int = 25,
                   batch_size: int = 64) -> SequentialTVB:
    """Algorithm 1 (sequential update TVB) for the functional ``spec`` (:func:`functional`).

    From η = log ω = 0, every iteration splits X into halves (``np.random.default_rng(seed)``; with
    ``redraw=False`` the first split and resamples are kept: those of a table built with the same ``seed``), fits
    X₁ and B resamples of X₂ at ω = e^η (the resamples as copies of one graph), and computes the bootstrap coverage
    ĉ; it stops when ĉ > 1 − α or (1 − α) − ĉ < ``tolerance`` (ε), else steps
    η ← max(η + κ_k (ĉ − (1 − α)), log ``lower``) (Ω = [δ, 1]) with κ_k = ``step`` / (k + 1)^``decay``
    (Robbins–Monro, Σκ = ∞ and Σκ² < ∞, for a decay in (1/2, 1]; Liu & Li's code: step 1, decay 0.51, at most
    100 iterations, ε = 1e-3), or ``step(k)`` if ``step`` is callable. It returns the last ω, as the algorithm does
    (after ``max_iter`` iterations without reaching the level: the last updated ω, ``reached=False``), with the
    interval of the fit on the whole data at that ω. The starts, priors and stopping of every fit are the table's
    (:func:`build_tvb_table`'s ``start``, ``kmeans_starts``, ``iterations``, ``tol``, ``check_every``).
    """
    X = _check_data(X, n_components)
    K = int(n_components)
    level = check_level(level)
    n_bootstrap = check_bootstrap(n_bootstrap)
    max_iter = check_positive_integer("max_iter", max_iter)
    if not (isinstance(lower, numbers.Real) and 0.0 < lower <= 1.0):
        raise PowerRangeError(f"TVB: the lower end δ of Ω = [δ, 1] must be a power in (0, 1], got {lower!r}")
    if not callable(step) and not (isinstance(step, numbers.Real) and step > 0.0):
        raise TVBError(f"TVB: step must be a positive number κ₀ (κ_k = κ₀ / (k + 1)^decay) or a callable k -> κ_k, "
                       f"got {step!r}")
    if isinstance(decay, bool) or not isinstance(decay, numbers.Real) or not 0.5 < decay <= 1.0:
        raise TVBError(f"TVB: decay must lie in (1/2, 1] (κ_k = κ₀ / (k + 1)^decay: Σκ = ∞, Σκ² < ∞), got {decay!r}")
    h = functional(spec, X.shape[1])
    resolved, fit = _reference(X, K, priors, init, check_positive_integer("n_init", n_init), random_state,
                               iterations, tol)
    setting = _setting(X, resolved, fit, iterations, tol, check_positive_integer("check_every", check_every),
                       _check_start(start), check_positive_integer("kmeans_starts", kmeans_starts), random_state,
                       check_positive_integer("batch_size", batch_size))
    rng = np.random.default_rng(seed)
    split, _, bootstrap = draw_split(rng, len(X), n_bootstrap)
    eta, omegas, coverages, reached = 0.0, [], [], False
    for k in range(max_iter):
        omega = float(np.exp(eta))
        if redraw and k > 0:
            split, _, bootstrap = draw_split(rng, len(X), n_bootstrap)
        first = setting.fit(split[None], np.array([omega]))
        resamples = setting.fit(bootstrap, np.full(n_bootstrap, omega))
        point = h.intervals({key: first[key] for key in PARAMETERS}, level).point  # (1,)
        intervals = h.intervals({key: resamples[key] for key in PARAMETERS}, level)
        coverage = float(np.mean((intervals.lower <= point) & (point <= intervals.upper)))
        omegas.append(omega)
        coverages.append(coverage)
        if coverage > level or level - coverage < tolerance:
            reached = True
            break
        kappa = float(step(k)) if callable(step) else float(step) / (k + 1) ** float(decay)
        eta = max(eta + kappa * (coverage - level), float(np.log(lower)))
    omega = omegas[-1] if reached else float(np.exp(eta))
    whole = setting.fit(np.arange(len(X))[None], np.array([omega]))
    posteriors = {key: whole[key][0] for key in PARAMETERS}
    return SequentialTVB(h.name, level, omega, reached, np.array(omegas), np.array(coverages),
                         h.intervals(posteriors, level), posteriors)

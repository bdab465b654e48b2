"""Trustworthy VB (grid search, Algorithm 2 of Liu & Li, "Bend to mend") for the Bayesian mixture linear regression
of :mod:`fgraph.models.mixtures.bmlr`: the TVB table over a grid of ω × bootstrap resamples of data sets, credible
intervals of linear functionals of the coefficients, and the calibrated ω.

**The table** (:func:`build_bmlr_tvb_table`) is the Gaussian mixture's (:mod:`fgraph.models.tvb.gmm`) for this model:
the N data sets are split into halves (X₁: ⌊N/2⌋ data sets, X₂: the rest), X₂ is resampled B times **by data
sets** (a resample holds whole regressions (y_n, X_n), drawn with replacement; the responses of a data set are
never split), and for every ω of the grid (default :func:`~fgraph.models.tvb.arguments.omega_grid`: 100 values
log-spaced in [0.001, 1]) the fractional posterior (Algorithm 4) is fitted on the whole data (role ``FULL`` = 0), on X₁
(``SPLIT`` = 1) and on every resample (2 … B + 1). Every cell's q(π) = Dir(α), q(β_k) = N(m_k, S_k) and
q(τ_k) = Gamma(a_k, b_k) are stored as arrays (m, B + 2, ...); q(Z) is not (m (B + 2) N K numbers; it is one
E-step of the stored posteriors, :func:`~fgraph.models.mixtures.bmlr.log_responsibilities`).

**From the statistics.** The fits read the data only through G_n = X_nᵀX_n, c_n = X_nᵀy_n, s_n = y_nᵀy_n and J
(:func:`~fgraph.models.mixtures.bmlr.bmlr_statistics`): a block of R cells is one graph of R copies built from the
statistics indexed by the cells' data-set indices (:func:`~fgraph.models.mixtures.bmlr.build_bmlr_from_statistics`),
R n (p² + p + 1) numbers whatever J — copies of X would be R n J p. The same machinery as the GMM's table runs the
blocks (:mod:`fgraph.models.tvb.build`: the plan of blocks of equal data size, ``block_size`` cells per graph, a
local process pool (``n_jobs``) or a Dask cluster (``client``), every finished block written at once as npz, a build
interrupted for any reason resumed by calling again with the same arguments, the finished table one npz and one JSON
file).

**Starts and labels.** As for the GMM: one reference fit, plain VB (ω = 1) on the whole data from ``n_init``
random starting responsibilities (``random_state``; the best ELBO kept); every cell starts from that fit's E-step
on its own data sets and from its q(τ), and after the fit its components are permuted to the closest match of the
reference's coefficient means, so that component k is the same cluster in every cell. The priors (λ included) are
shared by every cell.

**Functionals** (:class:`CoefficientProjection`, or a string: :func:`coefficient_functional`): h = Σ_k a_kᵀβ_k
for fixed weights a (K, p) — the §6.2 sum Σ_k Σ_j β_kj (``"coefficient_sum"``, every a_kj = 1, invariant to the
labels), the sum of one component (``"coefficient_sum[k]"``), one coefficient (``"coefficient[k, j]"``). Under q
the β_k are independent Gaussians, so h ~ N(Σ_k a_kᵀm_k, Σ_k a_kᵀS_k a_k) and its interval is mean ∓ z_{1−α/2} sd
(:func:`~fgraph.models.mixtures.bmlr.coefficient_sum_interval` for the sums); the point estimate is the mean.

**Choosing ω** (:meth:`BMLRTVBTable.select`) is every table's rule (:meth:`fgraph.models.tvb.table.Table.select`):
ĉ(ω) = (1/B) Σ_b 1{h(θ̂_ω^{X₁}) ∈ C_ω(X₂^{(b)}; α)}, ω minimising |ĉ(ω) − (1 − α)| (``rule="closest"``, eq. 6; ties
to coverage at or above the level, then to the largest ω) or Algorithm 1's stopping rule on the grid
(``rule="sequential"``); the reported interval is the whole-data fit's at that ω.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

import numpy as np

from fgraph.errors import DataError
from fgraph.models.mixtures.bmlr import BMLRPriors, RegressionStatistics, bmlr_statistics, build_bmlr_from_statistics, \
    check_statistics, fit_bmlr, log_responsibilities, random_responsibilities
from fgraph.models.tvb.arguments import check_bootstrap, check_grid, check_level, check_positive_integer, \
    check_sampling, omega_grid
from fgraph.models.tvb.build import align_components, assemble_cells, build_table, cell_task, draw_resamples, \
    job_count, plan_blocks
from fgraph.models.tvb.errors import FunctionalError, TVBError, UnknownFunctionalError
from fgraph.models.tvb.intervals import Intervals
from fgraph.models.tvb.table import Table, TVBSelection

__all__ = ["BMLRTVBTable", "build_bmlr_tvb_table", "CoefficientProjection", "coefficient_functional",
           "bmlr_credible_intervals", "PARAMETERS"]

FORMAT = "fgraph-bmlr-tvb-table"
VERSION = 1
PARAMETERS = ("alpha", "coefficient_mean", "coefficient_cov", "tau_shape", "tau_rate")


# ------------------------------------------------------------------------------------------------ functionals
class CoefficientProjection:
    """h = Σ_k a_kᵀβ_k for fixed weights ``weights`` a (K, p) (None: every a_kj = 1, the §6.2 sum Σ_k Σ_j β_kj).
    Under q, h ~ N(Σ_k a_kᵀm_k, Σ_k a_kᵀS_k a_k) (the β_k independent Gaussians); its ``level`` interval is
    mean ∓ z_{1−α/2} sd and its point estimate the mean."""

    def __init__(self, weights=None, name: str | None = None):
        self.weights = None if weights is None else np.asarray(weights, dtype=float)
        if self.weights is not None and (self.weights.ndim != 2 or not np.all(np.isfinite(self.weights))):
            raise FunctionalError(f"TVB: the weights a of Σ_k a_kᵀβ_k must be a finite (K, p) array, got {weights!r}")
        self.name = name or ("coefficient_sum" if weights is None else f"coefficient_projection[{weights!r}]")

    def moments(self, posteriors: dict) -> tuple:
        """Mean and variance of h under q, of the posteriors' leading shape."""
        mean = np.asarray(posteriors["coefficient_mean"], dtype=float)
        cov = np.asarray(posteriors["coefficient_cov"], dtype=float)
        K, p = mean.shape[-2:]
        a = np.ones((K, p)) if self.weights is None else self.weights
        if a.shape != (K, p):
            raise FunctionalError(f"TVB: {self.name} has weights of shape {a.shape} for K = {K} components of p = {p} "
                                  "coefficients")
        return np.einsum("...kj,kj->...", mean, a), np.einsum("ki,...kij,kj->...", a, cov, a)

    def intervals(self, posteriors: dict, level: float) -> Intervals:
        from scipy.stats import norm

        mean, variance = self.moments(posteriors)
        half = norm.ppf(0.5 + 0.5 * level) * np.sqrt(variance)
        return Intervals(mean - half, mean + half, mean)

    def __repr__(self) -> str:
        return self.name


KNOWN_FUNCTIONALS = "'coefficient_sum', 'coefficient_sum[k]', 'coefficient[k, j]'"


def coefficient_functional(spec, n_components: int, dim: int) -> CoefficientProjection:
    """A :class:`CoefficientProjection` from ``spec``: one (returned as is), or a string — ``"coefficient_sum"``
    (Σ_k Σ_j β_kj), ``"coefficient_sum[k]"`` (Σ_j β_kj), ``"coefficient[k, j]"`` (β_kj) — for K = ``n_components``
    components of p = ``dim`` coefficients. Anything else is an
    :class:`~fgraph.models.tvb.errors.UnknownFunctionalError`; a component or coefficient that does not exist a
    :class:`~fgraph.models.tvb.errors.FunctionalError`."""
    if isinstance(spec, CoefficientProjection):
        return spec
    if not isinstance(spec, str):
        raise UnknownFunctionalError(f"TVB: unknown functional {spec!r} of the BMLR; give one of {KNOWN_FUNCTIONALS} "
                                     "or a CoefficientProjection")
    text = spec.strip()
    match = re.fullmatch(r"(\w+)\s*(?:\[\s*([^\]]*?)\s*\])?", text)
    name = match[1] if match else text
    arguments = [] if not match or match[2] is None else [a.strip() for a in match[2].split(",")]
    if not all(re.fullmatch(r"-?\d+", a) for a in arguments):
        raise UnknownFunctionalError(f"TVB: {spec!r}: components and coefficients are integers")
    numbers_ = [int(a) for a in arguments]

    def component(k: int) -> int:
        if not -n_components <= k < n_components:
            raise FunctionalError(f"TVB: component {k} does not exist in a mixture of K = {n_components} components")
        return k % n_components

    weights = np.zeros((n_components, dim))
    if name == "coefficient_sum" and not numbers_ and match and match[2] is None:
        return CoefficientProjection(None, name=text)
    if name == "coefficient_sum" and len(numbers_) == 1:
        weights[component(numbers_[0])] = 1.0
        return CoefficientProjection(weights, name=text)
    if name == "coefficient" and len(numbers_) == 2:
        if not 0 <= numbers_[1] < dim:
            raise FunctionalError(f"TVB: coefficient {numbers_[1]} does not exist for p = {dim} covariates")
        weights[component(numbers_[0]), numbers_[1]] = 1.0
        return CoefficientProjection(weights, name=text)
    raise UnknownFunctionalError(f"TVB: unknown functional {spec!r} of the BMLR; give one of {KNOWN_FUNCTIONALS} or a "
                                 "CoefficientProjection")


def bmlr_credible_intervals(posteriors: dict, spec="coefficient_sum", level: float = 0.95) -> Intervals:
    """The ``level`` credible intervals of a functional (:func:`coefficient_functional`) under BMLR posteriors
    (``coefficient_mean`` (..., K, p), ``coefficient_cov`` (..., K, p, p)), one per leading element."""
    level = check_level(level)
    K, p = np.shape(posteriors["coefficient_mean"])[-2:]
    return coefficient_functional(spec, K, p).intervals(posteriors, level)


# --------------------------------------------------------------------------------------------- fits of cells
def _pack(statistics: RegressionStatistics) -> np.ndarray:
    """(N, p² + p + 1): G_n flattened, c_n, s_n side by side (one array: what a Dask cluster receives once)."""
    N = statistics.square.shape[0]
    return np.concatenate([statistics.gram.reshape(N, -1), statistics.cross, statistics.square[:, None]], axis=1)


def _unpack(packed: np.ndarray, responses: int) -> RegressionStatistics:
    p = int(round((-1 + np.sqrt(1 + 4 * (packed.shape[1] - 1))) / 2))  # p² + p + 1 columns
    N = packed.shape[0]
    return RegressionStatistics(packed[:, :p * p].reshape(N, p, p), packed[:, p * p:p * p + p], packed[:, -1],
                                int(responses))


def _fit_block(packed, indices, omegas, responses: int, priors: BMLRPriors, start: dict, iterations: int,
               tol) -> dict:
    """Fit the cells of one block as copies of one graph: cell r is the data sets ``indices[r]`` at power
    ``omegas[r]``, started from the E-step of the reference posteriors ``start`` on them and from its q(τ); the
    posteriors, their components matched to the reference's coefficient means."""
    statistics = _unpack(np.asarray(packed, dtype=float), responses)
    indices = np.asarray(indices)
    R = indices.shape[0]
    K = start["alpha"].shape[-1]
    responsibilities = np.exp(log_responsibilities(start, statistics.take(indices), priors.noise_precision))
    network = build_bmlr_from_statistics(statistics, K, priors, n_copies=R, power=np.asarray(omegas, dtype=float),
                                         indices=indices)
    fit = fit_bmlr(network, responsibilities, iterations=iterations, tol=tol,
                   tau=(start["tau_shape"], start["tau_rate"]))
    posteriors = {key: value for key, value in fit.posteriors().items() if key in PARAMETERS}
    p = posteriors["coefficient_mean"].shape[-1]
    aligned = align_components(dict(posteriors, mean=posteriors["coefficient_mean"]), start["coefficient_mean"],
                               np.eye(p))
    posteriors = {key: aligned[key] for key in PARAMETERS}
    posteriors["elbo"] = fit.elbo[-1].copy()
    posteriors["iterations"] = np.full(R, fit.iterations)
    posteriors["converged"] = np.full(R, bool(fit.converged))
    return posteriors


@dataclass(frozen=True)
class _Setting:
    """What every cell shares (the setting :mod:`fgraph.models.tvb.build` runs blocks with): the packed
    statistics, J, the priors, the reference start, the fit's stopping."""

    packed: np.ndarray
    responses: int
    priors: BMLRPriors
    start: dict
    iterations: int
    tol: float | None

    @property
    def data(self) -> np.ndarray:
        return self.packed

    @property
    def function(self):
        return _fit_block

    def arguments(self, indices, omegas) -> tuple:
        return (self.packed, indices, omegas, self.responses, self.priors, self.start, self.iterations, self.tol)

    def fit(self, indices, omegas) -> dict:
        return self.function(*self.arguments(indices, omegas))


def _reference(statistics: RegressionStatistics, K: int, priors: BMLRPriors, n_init: int, random_state,
               iterations: int, tol) -> dict:
    """Plain VB (ω = 1) on the whole data from ``n_init`` random starts, the best ELBO kept (no copy axis)."""
    N = statistics.square.shape[0]
    starts = random_responsibilities(N, K, random_state=random_state, n_copies=n_init)
    fit = fit_bmlr(build_bmlr_from_statistics(statistics, K, priors, n_copies=n_init), starts, iterations=iterations,
                   tol=tol)
    best = int(np.argmax(fit.elbo[-1]))
    return {key: value[best] for key, value in fit.posteriors().items() if key in PARAMETERS}


# --------------------------------------------------------------------------------------------------- the table
@dataclass
class BMLRTVBTable(Table):
    """The BMLR's TVB table: fractional VB posteriors for every ω of ``grid`` (first axis, m values) and every role
    on the second axis (``FULL`` = 0: the whole data, ``SPLIT`` = 1: X₁, 2 .. B + 1: the resamples of X₂):
    ``alpha`` (m, B + 2, K), ``coefficient_mean`` (m, B + 2, K, p), ``coefficient_cov`` (m, B + 2, K, p, p),
    ``tau_shape``, ``tau_rate`` (m, B + 2, K); per cell the final ``elbo``, the ``iterations`` of its block and
    whether its block ``converged``; the data-set indices of X₁ (``split`` (S, n₁)), X₂ (``holdout`` (S, n₂)) and
    the resamples (``bootstrap`` (S, B, n₂)), S = 1 (``resampling="common"``) or m (``"per_omega"``); the
    reference fit (``start``); the settings (``metadata``: the priors, λ among them)."""

    grid: np.ndarray
    alpha: np.ndarray
    coefficient_mean: np.ndarray
    coefficient_cov: np.ndarray
    tau_shape: np.ndarray
    tau_rate: np.ndarray
    elbo: np.ndarray
    iterations: np.ndarray
    converged: np.ndarray
    split: np.ndarray
    holdout: np.ndarray
    bootstrap: np.ndarray
    start: dict
    metadata: dict = field(default_factory=dict)

    parameters = PARAMETERS
    table_format, kind, builder = FORMAT, "BMLR TVB table", "build_bmlr_tvb_table"

    @property
    def dim(self) -> int:
        return self.coefficient_mean.shape[-1]

    def functional(self, spec) -> CoefficientProjection:
        return coefficient_functional(spec, self.n_components, self.dim)

    def posteriors(self) -> dict:
        """Every cell's posterior parameters, arrays (m, B + 2, ...) — those of
        :meth:`fgraph.models.mixtures.bmlr.BMLRFit.posteriors` without the responsibilities."""
        return super().posteriors()

    def intervals(self, spec="coefficient_sum", level: float = 0.95) -> Intervals:
        """The ``level`` credible intervals of a functional (:func:`coefficient_functional`) in every cell,
        arrays (m, B + 2)."""
        level = check_level(level)
        return self.functional(spec).intervals(self.posteriors(), level)

    def coverage(self, spec="coefficient_sum", level: float = 0.95, point: str = "split") -> np.ndarray:
        """ĉ(ω) for every ω of the grid (eq. 9): the fraction of the B resamples whose ``level`` interval covers the
        point estimate of the fit on X₁ at the same ω (``point="split"``), or on the whole data (``"full"``)."""
        return super().coverage(spec, level, point)

    def select(self, spec="coefficient_sum", level: float = 0.95, rule: str = "closest", tolerance: float = 1e-6,
               point: str = "split") -> TVBSelection:
        """Algorithm 2's choice of ω for a functional, without refitting (the rules of
        :meth:`fgraph.models.tvb.table.Table.select`), and the credible interval on the whole data at that ω; ``vb``
        is the interval at ω = 1 when the grid has it."""
        return super().select(spec, level, rule, tolerance, point)


def _statistics(data) -> RegressionStatistics:
    if isinstance(data, RegressionStatistics):
        return check_statistics(data)
    if isinstance(data, tuple) and len(data) == 2:
        return bmlr_statistics(*data)
    raise DataError(f"TVB: the BMLR's data are its statistics (bmlr_statistics(X, y)) or the pair (X, y), got "
                    f"{type(data).__name__}")


def _priors_json(priors: BMLRPriors) -> dict:
    return {"weight_concentration": [float(a) for a in priors.weight_concentration], "shape": priors.shape,
            "rate": priors.rate, "noise_precision": priors.noise_precision}


def build_bmlr_tvb_table(data, n_components: int, path=None, grid=None, n_bootstrap: int = 100,
                         priors: BMLRPriors | None = None, seed: int = 0, resampling: str = "common",
                         block_size: int = 64, n_jobs=-1, client=None, iterations: int = 1000,
                         tol: float | None = 1e-6, n_init: int = 1, random_state: int | None = 0,
                         progress: bool | None = None) -> BMLRTVBTable:
    """The TVB table of the K-component BMLR (module docstring).

    data : the statistics of the N data sets (:func:`~fgraph.models.mixtures.bmlr.bmlr_statistics`), or the pair
        (X, y) of design matrices (N, J, p) and responses (N, J), reduced to them here.
    grid : the powers ω, default :func:`~fgraph.models.tvb.arguments.omega_grid` () (100 values log-spaced in
        [0.001, 1]).
    n_bootstrap : B >= 1 resamples of the data sets of X₂.
    priors : :class:`~fgraph.models.mixtures.bmlr.BMLRPriors` (α₀, a₀, b₀ and the known noise precision λ), shared by
        every cell.
    seed : the split and the resamples come from ``np.random.default_rng(seed)``.
    resampling : ``"common"`` (one split and one set of B resamples for every ω) or ``"per_omega"`` (new ones for
        every ω, as Algorithm 2 is written).
    block_size, n_jobs, client, path, progress : as :func:`fgraph.models.tvb.gmm.build_tvb_table` — cells per graph,
        the local process pool, a Dask client or scheduler address, the directory of a resumable build (other data
        or settings there: :class:`~fgraph.models.tvb.errors.TableMismatchError`), a progress bar.
    iterations, tol : the most sweeps of a block and its tolerance on the ELBO (nats; None: exactly ``iterations``).
    n_init, random_state : the random starting responsibilities of the reference fit.

    Bad input is named: :class:`~fgraph.models.tvb.errors.GridError`,
    :class:`~fgraph.models.tvb.errors.PowerRangeError`, :class:`~fgraph.models.tvb.errors.BootstrapCountError`,
    :class:`~fgraph.models.tvb.errors.TVBError` for the other settings, :class:`~fgraph.errors.DataError` for the data
    (fewer than 2 K data sets: the halves could not hold K clusters) and :class:`~fgraph.errors.ModelError` for the
    priors.
    """
    statistics = _statistics(data)
    K = check_positive_integer("n_components", n_components)
    N, p = statistics.square.shape[0], statistics.dimension
    if N < 2 * K:
        raise DataError(f"TVB: N = {N} data sets cannot be split into two halves of at least K = {K} data sets each; "
                        "give N >= 2 K")
    grid = omega_grid() if grid is None else check_grid(grid)
    n_bootstrap = check_bootstrap(n_bootstrap)
    block_size = check_positive_integer("block_size", block_size)
    iterations = check_positive_integer("iterations", iterations)
    n_init = check_positive_integer("n_init", n_init)
    check_sampling(resampling, seed, random_state)
    priors = BMLRPriors() if priors is None else priors
    if not isinstance(priors, BMLRPriors):
        raise TVBError(f"TVB: priors must be a BMLRPriors, got {type(priors).__name__}")
    priors = priors.resolved(K)
    m, n1 = grid.size, N // 2
    blocks = plan_blocks(m, n_bootstrap, (N, n1, N - n1), block_size)
    jobs = 1 if client is not None else job_count(n_jobs, len(blocks), "build_bmlr_tvb_table")
    packed = _pack(statistics)
    metadata = {
        "format": FORMAT, "version": VERSION, "n_components": K, "n_data_sets": int(N), "dim": int(p),
        "responses": int(statistics.responses),
        "data_sha256": hashlib.sha256(np.ascontiguousarray(packed).tobytes()).hexdigest(),
        "grid": [float(value) for value in grid], "n_bootstrap": n_bootstrap, "seed": int(seed),
        "resampling": resampling, "block_size": block_size, "iterations": iterations,
        "tol": None if tol is None else float(tol), "n_init": n_init,
        "random_state": None if random_state is None else int(random_state), "priors": _priors_json(priors),
    }

    def reference() -> dict:
        start = _reference(statistics, K, priors, n_init, random_state, iterations, tol)
        return {**draw_resamples(seed, N, n_bootstrap, resampling, m),
                **{f"start_{key}": value for key, value in start.items()}}

    def prepare(arrays: dict) -> tuple:
        start = {key[len("start_"):]: value for key, value in arrays.items() if key.startswith("start_")}
        split, holdout, bootstrap = arrays["split"], arrays["holdout"], arrays["bootstrap"]
        task = cell_task(N, grid, resampling, split, bootstrap)

        def assemble(results: dict) -> BMLRTVBTable:
            arrays = assemble_cells(m, n_bootstrap + 2, blocks, results,
                                         (*PARAMETERS, "elbo", "iterations", "converged"))
            return BMLRTVBTable(grid, **arrays, split=split, holdout=holdout, bootstrap=bootstrap, start=start,
                                metadata=dict(metadata, complete=True))

        return _Setting(packed, int(statistics.responses), priors, start, iterations, tol), task, assemble

    return build_table(path, metadata, BMLRTVBTable, reference, prepare, blocks, jobs, client, progress)

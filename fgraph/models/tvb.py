"""Trustworthy variational Bayes (TVB) for the Gaussian mixture: fractional VB fits over a grid of ω and bootstrap
resamples (the TVB table), credible intervals of functionals h(θ), and the calibration of ω by the sequential
(Algorithm 1) and grid-search (Algorithm 2) strategies of Liu & Li, "Bend to mend" (the TVB paper).

**The method.** Fractional VB with power ω ∈ (0, 1] (:func:`fgraph.models.gmm.build_gmm`, Algorithm 3) widens the
posterior as ω falls. For a functional h and a level 1 − α, TVB splits the data X into halves X₁, X₂, fits X₁ at ω
to get the point estimate h(θ̂_ω^{X₁}) (θ̂ the posterior mean), fits B bootstrap resamples X₂^{(b)} of X₂ at ω, and
estimates the frequentist coverage of the (1 − α) credible interval by the fraction of bootstrap intervals that
cover that point estimate (eq. 5)::

    ĉ(ω) = (1/B) Σ_b 1{h(θ̂_ω^{X₁}) ∈ C_ω(X₂^{(b)}; α)}.

ω is then chosen so that ĉ(ω) is 1 − α, and the reported interval is the fractional posterior's on the whole data
at that ω.

**The TVB table** (:func:`build_tvb_table`, Algorithm 2's dictionary): for every ω of a grid (default 100 values
log-spaced in [0.001, 1], :func:`omega_grid`) the fit on the whole data, on X₁ and on the B resamples — every
cell's q(π) = Dir(α) and q(μ_k, Λ_k) = N(m_k, (β_k Λ_k)⁻¹) W(W_k, ν_k), arrays of shape (m, B + 2, ...) with the
roles ``FULL`` = 0, ``SPLIT`` = 1 and the resamples 2 … B + 1 on the second axis. Any functional is queried from it
afterwards without refitting (:meth:`TVBTable.intervals`, :meth:`TVBTable.coverage`, :meth:`TVBTable.select`).
The fits are batched: cells of equal data size are copies of one graph (a leading copy axis carrying ω and the
resampled data), ``block_size`` cells per graph, the blocks run in a local process pool (``n_jobs``) or on a Dask
cluster (``client``: a ``distributed.Client`` or a scheduler address) — the same blocks either way, so the same
numbers. With a ``path`` the directory is a results store (:mod:`fgraph.store`): every finished block is written at
once (npz, atomically, its content hash and cells in the manifest, the settings its identity); a build interrupted
for any reason, kill -9 included, is resumed by calling it again with the same arguments, and recomputes only the
blocks that were not written, or that are damaged or foreign (reported by name); several processes may build one
directory at once and share its blocks. The finished table is one npz and one JSON file holding the npz's hash (no
pickle anywhere).

The blocks' machinery — the plan (:func:`_plan`), the executors (:func:`_execute`: any setting with a module-level
block ``function``, its shared ``data`` and ``arguments(indices, omegas)``), the resumable, shared directory
(:func:`_build`, :func:`_run_blocks`) and the coverage and rules
(:func:`_coverage`, :func:`_choose`) — is shared with the Bayesian mixture linear regression's table
(:mod:`fgraph.models.bmlr_tvb`).

**Starts and labels.** Every cell starts from the E-step, on its own data, of one reference fit: plain VB (ω = 1)
on the whole data from ``init`` starting responsibilities (``n_init`` restarts, the best ELBO kept), so all cells
start with the same labelling of the components; after the fit each cell's components are permuted to the closest
match of the reference means (in the metric of the prior scale W₀), so that component k means the same cluster in
every cell and a functional of component k can be compared across cells. The priors are resolved once, from the
whole data (:class:`fgraph.models.gmm.GMMPriors`), and shared by every cell. The data are centred on their mean for
the fits (m₀ shifted with them, exactly) and the stored means are in the coordinates of the data.

**Functionals** (:class:`Weight`, :class:`MeanProjection`, :class:`MonteCarlo`, or a string, :func:`functional`):
the marginal of a weight π_k under Dir(α) is Beta(α_k, Σα − α_k); the marginal of a mean μ_k under the
normal–Wishart is a multivariate t with ν_k − d + 1 degrees of freedom, location m_k and scale matrix
W_k⁻¹ / (β_k (ν_k − d + 1)), so a projection aᵀμ_k (a coordinate, the sum of the coordinates) is a t with
location aᵀm_k and scale (aᵀ W_k⁻¹ a / (β_k (ν_k − d + 1)))^{1/2}; any other h(θ) has equal-tailed Monte Carlo
intervals from draws of q. Intervals are equal-tailed; the point estimate is h at the posterior mean
(E[π], m, E[Λ] = ν W).

**Choosing ω.** :meth:`TVBTable.select` with ``rule="closest"`` is eq. (6): the grid ω minimising
|ĉ(ω) − (1 − α)|; ties — frequent, ĉ takes the values j/B — go to coverage at or above the nominal level, then to
the largest ω (the least bent posterior). ``rule="sequential"`` is Algorithm 1's stopping rule applied to the grid
from ω = 1 down: the largest ω with ĉ > 1 − α or (1 − α) − ĉ < ε. :func:`sequential_tvb` is Algorithm 1 itself:
η = log ω from 0, Robbins–Monro steps η ← η + κ_k (ĉ − (1 − α)), a new split and B new resamples at every step
(``redraw=False`` keeps the first ones: the coverage curve of a table built with the same ``seed``).
"""
from __future__ import annotations

import hashlib
import itertools
import json
import numbers
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fgraph.errors import ModelError
from fgraph.store import CorruptRecordWarning, Store, StoreMismatchError, directory_lock, prepare_directory, read_npz, \
    write_json, write_npz
from fgraph.models.gmm import GMMPriors, build_gmm, fit_gmm, fit_gmm_copies, initial_responsibilities, log_responsibilities
from fgraph.models.gmm import _check_data as _check_gmm_data

__all__ = ["TVBError", "GridError", "PowerRangeError", "BootstrapCountError", "FunctionalError",
           "UnknownFunctionalError", "TableMismatchError", "CorruptTableError", "omega_grid", "Intervals", "Functional", "Weight",
           "MeanProjection", "MonteCarlo", "functional", "credible_intervals", "TVBTable", "TVBSelection",
           "build_tvb_table", "SequentialTVB", "sequential_tvb", "FULL", "SPLIT"]

FULL, SPLIT = 0, 1  # roles on the second axis of a table; the resamples are 2 .. B + 1
FORMAT = "fgraph-tvb-table"
VERSION = 3  # 3: a cell settles on the ELBO's change over a round of CHECK_EVERY sweeps (2: over one sweep; 1: a block ran until all its cells settled)
# A cell has settled when its ELBO changed by less than tol over a round of this many sweeps (fit_gmm_copies).
CHECK_EVERY = 10
TABLE_JSON, TABLE_NPZ, START_NPZ, BLOCKS = "tvb_table.json", "tvb_table.npz", "start.npz", "blocks"
PARAMETERS = ("alpha", "mean", "precision_scale", "scale", "df")


# ----------------------------------------------------------------------------------------------------- errors
class TVBError(ModelError):
    """Bad input to Trustworthy VB (a :class:`~fgraph.errors.ModelError`, so also a ``ValueError``)."""


class GridError(TVBError):
    """The grid of ω is empty, not one-dimensional, or not finite."""


class PowerRangeError(TVBError):
    """A power ω outside (0, 1]."""


class BootstrapCountError(TVBError):
    """The number of bootstrap resamples B is not an integer >= 1."""


class FunctionalError(TVBError):
    """A functional that cannot be evaluated on these posteriors (a component that does not exist, a Monte Carlo
    h that returns the wrong shape, ...)."""


class UnknownFunctionalError(FunctionalError, LookupError):
    """A functional named by a string that is none of the known ones."""


class TableMismatchError(TVBError, StoreMismatchError):
    """A table on disk was built with other data or settings than the ones asked for."""


class CorruptTableError(TVBError):
    """A finished table's files on disk are truncated, altered or unreadable."""


# ------------------------------------------------------------------------------------------------ arguments
def omega_grid(size: int = 100, low: float = 1e-3, high: float = 1.0) -> np.ndarray:
    """``size`` values of ω evenly spaced in log ω from ``low`` to ``high`` (the paper's grid: 100 in
    [0.001, 1])."""
    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 1:
        raise GridError(f"TVB: the grid needs at least one value, got size={size!r}")
    for name, value in (("low", low), ("high", high)):
        if not (isinstance(value, numbers.Real) and 0.0 < value <= 1.0):
            raise PowerRangeError(f"TVB: the grid's {name} end must be a power in (0, 1], got {value!r}")
    if low > high:
        raise GridError(f"TVB: the grid's low end {low!r} is above its high end {high!r}")
    return np.exp(np.linspace(np.log(low), np.log(high), int(size)))


def _check_grid(grid) -> np.ndarray:
    try:
        values = np.asarray(grid, dtype=float)
    except (TypeError, ValueError):
        raise GridError(f"TVB: the grid must be numbers, got {grid!r}") from None
    if values.ndim != 1:
        raise GridError(f"TVB: the grid must be a one-dimensional array of ω, got shape {values.shape}")
    if values.size == 0:
        raise GridError("TVB: the grid of ω is empty; give at least one ω in (0, 1] (omega_grid() is the paper's)")
    bad = ~((values > 0.0) & (values <= 1.0))
    if np.any(bad):
        raise PowerRangeError(f"TVB: every ω must lie in (0, 1]; the grid has {values[bad][0]!r} "
                              f"(at index {int(np.argmax(bad))})")
    if np.unique(values).size != values.size:
        raise GridError("TVB: the grid has repeated values of ω")
    return values


def _check_bootstrap(n_bootstrap) -> int:
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, numbers.Integral) or n_bootstrap < 1:
        raise BootstrapCountError(f"TVB: the number of bootstrap resamples B must be an integer >= 1, got "
                                  f"{n_bootstrap!r}")
    return int(n_bootstrap)


def _check_level(level) -> float:
    if isinstance(level, bool) or not isinstance(level, numbers.Real) or not 0.0 < level < 1.0:
        raise TVBError(f"TVB: the credible level 1 − α must lie in (0, 1), got {level!r}")
    return float(level)


def _check_positive_integer(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise TVBError(f"TVB: {name} must be an integer >= 1, got {value!r}")
    return int(value)


def _check_data(X, n_components) -> np.ndarray:
    """The data as build_gmm checks it (named DataError / ModelError), and at least 2 K points so that both halves
    of a split can hold K components."""
    from fgraph.errors import DataError

    X, _, _ = _check_gmm_data(X, n_components, 1)  # the GMM's own checks and messages
    if X.ndim != 2:
        raise DataError(f"TVB: X must be one data set of shape (N, d), got shape {X.shape}")
    if len(X) < 2 * n_components:
        raise DataError(f"TVB: N = {len(X)} points cannot be split into two halves of at least K = {n_components} "
                        "points each; give N >= 2 K")
    return X


# ------------------------------------------------------------------------------------------ credible intervals
@dataclass(frozen=True)
class Intervals:
    """Equal-tailed credible intervals ``[lower, upper]`` of a functional and its point estimate (h at the
    posterior mean), arrays of the posteriors' leading shape."""

    lower: np.ndarray
    upper: np.ndarray
    point: np.ndarray

    @property
    def length(self) -> np.ndarray:
        return self.upper - self.lower

    def __getitem__(self, index) -> "Intervals":
        return Intervals(self.lower[index], self.upper[index], self.point[index])


def _component(posteriors: dict, component) -> np.ndarray:
    """Indices (leading shape) of the component: a fixed k, or ``"largest"``, the component of largest α."""
    alpha = np.asarray(posteriors["alpha"], dtype=float)
    K = alpha.shape[-1]
    if component == "largest":
        return np.argmax(alpha, axis=-1)
    if isinstance(component, bool) or not isinstance(component, numbers.Integral) or not -K <= component < K:
        raise FunctionalError(f"TVB: component {component!r} does not exist in a mixture of K = {K} components; "
                              "give 0 .. K − 1 or 'largest'")
    return np.full(alpha.shape[:-1], int(component) % K)


def _pick(array: np.ndarray, index: np.ndarray, event_ndim: int) -> np.ndarray:
    """``array[..., index, <event>]`` with one index per leading element."""
    expanded = index.reshape(index.shape + (1,) * (event_ndim + 1))
    return np.take_along_axis(array, expanded, axis=index.ndim)[(Ellipsis, 0) + (slice(None),) * event_ndim]


class Functional:
    """A real functional h(θ) of the mixture's parameters θ = (π, μ, Λ) with credible intervals under q."""

    name = "h"

    def intervals(self, posteriors: dict, level: float) -> Intervals:
        """Intervals at level ``level`` = 1 − α for posteriors with any leading shape."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.name


class Weight(Functional):
    """π_k, the weight of component k (or of the component of largest weight, ``"largest"``): under Dir(α) its
    marginal is Beta(α_k, Σ_j α_j − α_k); the point estimate is E[π_k] = α_k / Σ_j α_j."""

    def __init__(self, component=0):
        self.component = component
        self.name = f"weight[{component}]"

    def intervals(self, posteriors: dict, level: float) -> Intervals:
        from scipy.special import betaincinv

        alpha = np.asarray(posteriors["alpha"], dtype=float)
        a = _pick(alpha, _component(posteriors, self.component), 0)
        b = alpha.sum(axis=-1) - a
        tail = 0.5 * (1.0 - level)
        return Intervals(betaincinv(a, b, tail), betaincinv(a, b, 1.0 - tail), a / (a + b))


class MeanProjection(Functional):
    """aᵀμ_k for a fixed vector ``coefficients`` a (a coordinate, the sum of the coordinates, a contrast) of the mean
    of component k (or ``"largest"``): the marginal of μ_k is a multivariate t with ν_k − d + 1 degrees of freedom,
    location m_k and scale matrix W_k⁻¹ / (β_k (ν_k − d + 1)), so aᵀμ_k is a t with location aᵀm_k and scale
    (aᵀ W_k⁻¹ a / (β_k (ν_k − d + 1)))^{1/2}; the point estimate is aᵀm_k."""

    def __init__(self, component=0, coefficients=None, name: str | None = None):
        self.component = component
        self.coefficients = None if coefficients is None else np.asarray(coefficients, dtype=float)
        if self.coefficients is not None and (self.coefficients.ndim != 1 or not np.all(np.isfinite(
                self.coefficients))):
            raise FunctionalError(f"TVB: the coefficients a of aᵀμ_k must be a finite vector, got {coefficients!r}")
        self.name = name or f"mean_projection[{component}, {coefficients}]"

    @classmethod
    def coordinate(cls, component, coordinate: int, dim: int) -> "MeanProjection":
        """μ_kj, coordinate j of the mean of component k in d = ``dim`` dimensions."""
        if isinstance(coordinate, bool) or not isinstance(coordinate, numbers.Integral) or not 0 <= coordinate < dim:
            raise FunctionalError(f"TVB: coordinate {coordinate!r} does not exist in d = {dim} dimensions")
        return cls(component, np.eye(dim)[coordinate], name=f"mean[{component}, {coordinate}]")

    def intervals(self, posteriors: dict, level: float) -> Intervals:
        from scipy.special import stdtrit

        mean = np.asarray(posteriors["mean"], dtype=float)
        d = mean.shape[-1]
        a = np.ones(d) if self.coefficients is None else self.coefficients
        if a.shape != (d,):
            raise FunctionalError(f"TVB: {self.name} has {a.size} coefficients for means of d = {d} dimensions")
        k = _component(posteriors, self.component)
        m = _pick(mean, k, 1)
        scale = _pick(np.asarray(posteriors["scale"], dtype=float), k, 2)
        beta = _pick(np.asarray(posteriors["precision_scale"], dtype=float), k, 0)
        dof = _pick(np.asarray(posteriors["df"], dtype=float), k, 0) - d + 1.0
        projected = np.einsum("i,...ij,j->...", a, np.linalg.inv(scale), a) / (beta * dof)  # aᵀ W⁻¹ a / (β dof)
        location = m @ a
        half = stdtrit(dof, 0.5 * (1.0 + level)) * np.sqrt(projected)
        return Intervals(location - half, location + half, location)


class MonteCarlo(Functional):
    """Any h(θ): equal-tailed intervals from ``n_samples`` draws of q (π ~ Dir(α), (μ_k, Λ_k) from the
    normal–Wishart), the point estimate h at the posterior mean.

    ``h(theta)`` gets a dict of arrays with any leading shape — ``"weights"`` (..., K), ``"means"`` (..., K, d),
    ``"precisions"`` (..., K, d, d) — and returns an array of that leading shape (one value per draw), so it must
    be written with numpy over the leading axes (``lambda t: t["means"][..., 0, :].sum(-1)``). The draws come from
    ``np.random.default_rng(seed)``: the same posteriors, ``seed`` and ``n_samples`` give the same intervals.
    """

    def __init__(self, h, n_samples: int = 4000, seed: int = 0, name: str | None = None):
        if not callable(h):
            raise FunctionalError(f"TVB: a Monte Carlo functional needs a callable h(theta), got {h!r}")
        self.h = h
        self.n_samples = _check_positive_integer("n_samples", n_samples)
        self.seed = seed
        self.name = name or f"monte_carlo[{getattr(h, '__name__', 'h')}]"

    def _evaluate(self, theta: dict, shape: tuple) -> np.ndarray:
        value = np.asarray(self.h(theta), dtype=float)
        if value.shape != shape:
            raise FunctionalError(f"TVB: {self.name} returned shape {value.shape} for parameters of leading shape "
                                  f"{shape}; h must map each draw to one number (numpy over the leading axes)")
        return value

    def intervals(self, posteriors: dict, level: float) -> Intervals:
        from fgraph.families.normal_wishart import NormalWishart

        alpha = np.asarray(posteriors["alpha"], dtype=float)
        leading = alpha.shape[:-1]
        q = NormalWishart(np.asarray(posteriors["mean"], dtype=float), np.asarray(posteriors["precision_scale"]),
                          np.asarray(posteriors["scale"], dtype=float), np.asarray(posteriors["df"]), check=False)
        mean_theta = {"weights": alpha / alpha.sum(-1, keepdims=True), "means": q.location,
                      "precisions": np.asarray(posteriors["df"])[..., None, None] * q.scale}
        point = self._evaluate(mean_theta, leading)
        rng = np.random.default_rng(self.seed)
        gammas = rng.standard_gamma(np.broadcast_to(alpha, (self.n_samples,) + alpha.shape))
        means, precisions = q.sample(rng, self.n_samples)
        draws = {"weights": gammas / gammas.sum(-1, keepdims=True), "means": means, "precisions": precisions}
        values = self._evaluate(draws, (self.n_samples,) + leading)
        tail = 0.5 * (1.0 - level)
        lower, upper = np.quantile(values, [tail, 1.0 - tail], axis=0)
        return Intervals(lower, upper, point)


KNOWN_FUNCTIONALS = "'weight[k]', 'weight[largest]', 'mean[k, j]', 'mean_sum[k]' (k a component or 'largest')"


def functional(spec, dim: int | None = None) -> Functional:
    """A :class:`Functional` from ``spec``: a Functional (returned as is), a callable h(theta) (Monte Carlo), or a
    string — ``"weight[k]"`` (π_k), ``"mean[k, j]"`` (μ_kj; needs ``dim``), ``"mean_sum[k]"`` (Σ_j μ_kj), k an
    integer or ``largest``. Anything else is an :class:`UnknownFunctionalError`."""
    import re

    if isinstance(spec, Functional):
        return spec
    if callable(spec):
        return MonteCarlo(spec)
    if not isinstance(spec, str):
        raise UnknownFunctionalError(f"TVB: unknown functional {spec!r}; give one of {KNOWN_FUNCTIONALS}, a "
                                     "Functional or a callable h(theta)")
    match = re.fullmatch(r"\s*(\w+)\s*\[\s*([^\]]*?)\s*\]\s*", spec)
    name, arguments = (match[1], [a.strip() for a in match[2].split(",")]) if match else (spec, [])

    def component(text: str):
        if text == "largest":
            return "largest"
        if re.fullmatch(r"-?\d+", text):
            return int(text)
        raise UnknownFunctionalError(f"TVB: {spec!r}: the component must be an integer or 'largest', got {text!r}")

    if name == "weight" and len(arguments) == 1:
        return Weight(component(arguments[0]))
    if name == "mean_sum" and len(arguments) == 1:
        return MeanProjection(component(arguments[0]), None, name=spec.strip())
    if name == "mean" and len(arguments) == 2 and re.fullmatch(r"\d+", arguments[1]):
        if dim is None:
            return _LazyCoordinate(component(arguments[0]), int(arguments[1]), spec.strip())
        return MeanProjection.coordinate(component(arguments[0]), int(arguments[1]), dim)
    raise UnknownFunctionalError(f"TVB: unknown functional {spec!r}; give one of {KNOWN_FUNCTIONALS}, a Functional "
                                 "or a callable h(theta)")


class _LazyCoordinate(MeanProjection):
    """μ_kj whose dimension is read from the posteriors."""

    def __init__(self, component, coordinate: int, name: str):
        super().__init__(component, None, name=name)
        self.coordinate_index = coordinate

    def intervals(self, posteriors: dict, level: float) -> Intervals:
        d = np.shape(posteriors["mean"])[-1]
        return MeanProjection.coordinate(self.component, self.coordinate_index, d).intervals(posteriors, level)


def credible_intervals(posteriors: dict, spec, level: float = 0.95) -> Intervals:
    """The (``level``) credible intervals of a functional (``spec``: see :func:`functional`) under posteriors
    ``alpha`` (..., K), ``mean`` (..., K, d), ``precision_scale`` (..., K), ``scale`` (..., K, d, d), ``df`` (..., K)
    (e.g. :meth:`fgraph.models.gmm.GMMFit.posteriors`), one per leading element."""
    level = _check_level(level)
    return functional(spec, np.shape(posteriors["mean"])[-1]).intervals(posteriors, level)


# --------------------------------------------------------------------------------------------- fits of cells
def _draw_split(rng: np.random.Generator, N: int, n_bootstrap: int) -> tuple:
    """A random split into halves X₁ (⌊N/2⌋ points) and X₂ (the rest) and B resamples of X₂ with replacement, each
    of |X₂| points: (split (n₁,), holdout (n₂,), bootstrap (B, n₂)), indices into X."""
    order = rng.permutation(N)
    n1 = N // 2
    split, holdout = np.sort(order[:n1]), np.sort(order[n1:])
    bootstrap = holdout[rng.integers(0, holdout.size, size=(n_bootstrap, holdout.size))]
    return split, holdout, bootstrap


def _resamples(seed: int, N: int, n_bootstrap: int, resampling: str, m: int) -> dict:
    """The split and the resamples of a table (``split`` (S, n₁), ``holdout`` (S, n₂), ``bootstrap`` (S, B, n₂);
    S = 1 for ``resampling="common"``, m for ``"per_omega"``), drawn from ``np.random.default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    draws = [_draw_split(rng, N, n_bootstrap) for _ in range(1 if resampling == "common" else m)]
    return {key: np.stack([draw[j] for draw in draws]) for j, key in enumerate(("split", "holdout", "bootstrap"))}


def _cell_task(N: int, grid: np.ndarray, resampling: str, split: np.ndarray, bootstrap: np.ndarray):
    """``task(cells)`` → (indices (R, n), omegas (R,)) of a block's cells (ω index, role): the whole data, X₁ or a
    resample of X₂ (those of the cell's ω for ``"per_omega"``), at the cell's ω."""
    def cell_indices(i: int, role: int) -> np.ndarray:
        s = 0 if resampling == "common" else i
        if role == FULL:
            return np.arange(N)
        return split[s] if role == SPLIT else bootstrap[s, role - 2]

    def task(cells) -> tuple:
        return np.stack([cell_indices(i, role) for i, role in cells]), grid[cells[:, 0]]

    return task


def _align(posteriors: dict, reference_mean: np.ndarray, metric: np.ndarray) -> dict:
    """Permute the components of every fit (leading axis R) to the closest match of the reference means."""
    mean = posteriors["mean"]
    R, K, _ = mean.shape
    difference = mean[:, :, None, :] - reference_mean[None, None, :, :]  # (R, K fitted, K reference, d)
    cost = np.einsum("rkji,il,rkjl->rkj", difference, metric, difference)
    if K <= 6:
        permutations = np.array(list(itertools.permutations(range(K))))  # (P, K): reference j ← fitted perm[j]
        totals = cost[:, permutations, np.arange(K)].sum(-1)  # (R, P)
        order = permutations[np.argmin(totals, axis=1)]  # (R, K)
    else:
        from scipy.optimize import linear_sum_assignment

        order = np.empty((R, K), dtype=int)
        for r in range(R):
            fitted, matched = linear_sum_assignment(cost[r])
            order[r, matched] = fitted
    rows = np.arange(R)[:, None]
    return {key: value[rows, order] for key, value in posteriors.items()}


def _fit_block(X, indices, omegas, priors: GMMPriors, start: dict, centre, iterations: int, tol) -> dict:
    """Fit the cells of one block as copies of one graph: cell r is the data ``X[indices[r]]`` (X centred) at power
    ``omegas[r]``, started from the E-step of the reference posteriors ``start`` (centred) on it; the posteriors,
    their components matched to the reference's, with the means in the data's coordinates. Each cell stops on its
    own (:func:`~fgraph.models.gmm.fit_gmm_copies`, the ELBO compared every ``CHECK_EVERY`` sweeps), so a cell's
    numbers do not depend on the block it falls in."""
    indices = np.asarray(indices)
    K = start["alpha"].shape[-1]
    data = X[indices]  # (R, n, d)
    responsibilities = np.exp(log_responsibilities(start, data))
    fit = fit_gmm_copies(data, K, responsibilities, priors, power=np.asarray(omegas, dtype=float),
                         iterations=iterations, tol=tol, check_every=CHECK_EVERY)
    posteriors = {key: value for key, value in fit.posteriors.items() if key in PARAMETERS}
    posteriors = _align(posteriors, start["mean"], priors.scale)
    posteriors["mean"] = posteriors["mean"] + centre
    posteriors["elbo"] = fit.elbo
    posteriors["iterations"] = fit.iterations
    posteriors["converged"] = fit.converged
    return posteriors


@dataclass(frozen=True)
class _Setting:
    """What every cell shares: the centred data and priors, the reference start, the fit's stopping."""

    X: np.ndarray  # centred
    centre: np.ndarray
    priors: GMMPriors  # centred
    start: dict  # centred reference posteriors
    iterations: int
    tol: float | None

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
        return (self.X, indices, omegas, self.priors, self.start, self.centre, self.iterations, self.tol)

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


def _setting(X, priors: GMMPriors, reference: dict, iterations: int, tol) -> _Setting:
    centre = X.mean(axis=0)
    start = dict(reference, mean=reference["mean"] - centre)
    return _Setting(X - centre, centre, _centred(priors, centre), start, int(iterations), tol)


# --------------------------------------------------------------------------------------------------- the table
def _coverage(intervals: Intervals, point: np.ndarray) -> np.ndarray:
    """The fraction of the resamples' intervals (second axis 2 ..) that cover ``point`` (one per ω)."""
    inside = (intervals.lower[:, 2:] <= point[:, None]) & (point[:, None] <= intervals.upper[:, 2:])
    return inside.mean(axis=1)


def _point_role(point: str) -> int:
    """The role whose point estimates the resamples' intervals are to cover: ``"split"`` (the fit on X₁) or
    ``"full"`` (the whole data)."""
    if point not in ("split", "full"):
        raise TVBError(f"TVB: point must be 'split' (the fit on X₁) or 'full' (the whole data), got {point!r}")
    return SPLIT if point == "split" else FULL


def _choose(grid: np.ndarray, coverage: np.ndarray, level: float, rule: str, tolerance: float) -> tuple:
    """(index, reached) of the ω chosen by ``rule`` from the coverage curve (module docstring)."""
    if rule == "closest":
        distance = np.round(np.abs(coverage - level), 12)
        below = coverage < level - 1e-12
        order = np.lexsort((-grid, below, distance))  # the last key sorts first
        index = int(order[0])
        return index, bool(coverage[index] > level or level - coverage[index] < tolerance)
    if rule == "sequential":
        covered = (coverage > level) | (level - coverage < tolerance)
        candidates = np.flatnonzero(covered)
        if candidates.size == 0:
            return int(np.argmin(grid)), False
        return int(candidates[np.argmax(grid[candidates])]), True
    raise TVBError(f"TVB: unknown selection rule {rule!r}; use 'closest' (eq. 6) or 'sequential' (Algorithm 1's "
                   "stopping rule on the grid)")


@dataclass(frozen=True)
class TVBSelection:
    """The ω chosen for a functional: ``omega`` (= ``grid[index]``), the bootstrap coverage curve over the grid,
    whether the nominal level was reached, the credible interval on the whole data at ``omega`` and, when the grid
    has ω = 1, the plain VB interval (``vb``, else None)."""

    functional: str
    level: float
    rule: str
    grid: np.ndarray
    coverage: np.ndarray
    index: int
    omega: float
    reached: bool
    interval: Intervals
    vb: Intervals | None


class _Table:
    """What the TVB tables share (:class:`TVBTable`, :class:`fgraph.models.bmlr_tvb.BMLRTVBTable`): the sizes, the
    posteriors, the coverage curve and the choice of ω of any functional, and the files. A table is a dataclass
    with the fields ``grid`` (m,), ``alpha`` (m, B + 2, K), its posterior parameters (named by its class attribute
    ``_parameters``), ``elbo``, ``iterations``, ``converged``, ``split``, ``holdout``, ``bootstrap``, ``start`` and
    ``metadata``; it says what it is (``_format``, the ``format`` of its JSON file; ``_kind``, its name in messages;
    ``_builder``, the function that builds and resumes it), turns a spec into its functional (``_functional``) and
    gives that functional's ``intervals`` in every cell."""

    _parameters = PARAMETERS
    _format, _kind, _builder = FORMAT, "TVB table", "build_tvb_table"

    @property
    def n_bootstrap(self) -> int:
        return self.alpha.shape[1] - 2

    @property
    def n_components(self) -> int:
        return self.alpha.shape[-1]

    def posteriors(self) -> dict:
        """Every cell's posterior parameters, arrays (m, B + 2, ...)."""
        return {key: getattr(self, key) for key in self._parameters}

    def coverage(self, spec, level: float = 0.95, point: str = "split") -> np.ndarray:
        """ĉ(ω) for every ω of the grid (eq. 5/9): the fraction of the B resamples whose ``level`` interval covers
        the point estimate of the fit on X₁ at the same ω (``point="split"``, the paper's), or of the fit on the
        whole data (``point="full"``: no sample splitting, the "overconfident" variant of §3.3)."""
        intervals = self.intervals(spec, level)
        return _coverage(intervals, intervals.point[:, _point_role(point)])

    def select(self, spec, level: float = 0.95, rule: str = "closest", tolerance: float = 1e-6,
               point: str = "split") -> TVBSelection:
        """Algorithm 2's choice of ω for a functional from the table, without refitting (module docstring for
        the rules), and the credible interval on the whole data at that ω; ``vb`` is the interval at ω = 1 when
        the grid has it."""
        level = _check_level(level)
        h = self._functional(spec)
        intervals = self.intervals(h, level)
        coverage = _coverage(intervals, intervals.point[:, _point_role(point)])
        index, reached = _choose(self.grid, coverage, level, rule, tolerance)
        ones = np.flatnonzero(self.grid == 1.0)
        vb = intervals[ones[0], FULL] if ones.size else None
        return TVBSelection(h.name, level, rule, self.grid, coverage, index, float(self.grid[index]), reached,
                            intervals[index, FULL], vb)

    # ------------------------------------------------------------------------------------------------ disk
    def _arrays(self) -> dict:
        arrays = {key: getattr(self, key) for key in ("grid", *self._parameters, "elbo", "iterations",
                                                      "converged", "split", "holdout", "bootstrap")}
        arrays.update({f"start_{key}": value for key, value in self.start.items()})
        return arrays

    def save(self, path) -> Path:
        """Write the table into the directory ``path``: ``tvb_table.npz`` (the arrays), then ``tvb_table.json`` (the
        settings and the npz file's SHA-256, so that a truncated or replaced npz is never read); no pickle. Each
        file is written atomically."""
        path = prepare_directory(path, self._kind)
        digest = write_npz(path / TABLE_NPZ, self._arrays())
        write_json(path / TABLE_JSON, dict(self.metadata, complete=True, npz_sha256=digest))
        return path

    @classmethod
    def load(cls, path):
        """The table written by :meth:`save` (or by its build function with a ``path``). A directory without a
        finished table is a :class:`TVBError`; files that are truncated, altered or unreadable are a
        :class:`CorruptTableError` naming the file."""
        path = Path(path)
        rebuild = f"{cls._builder}(..., path={str(path)!r}) with the same arguments rebuilds it"
        try:
            content = (path / TABLE_JSON).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            raise TVBError(f"TVB: {path} holds no {cls._kind} (no {TABLE_JSON}); {cls._builder} with this path "
                           "builds one") from None
        try:
            metadata = json.loads(content.decode())
            if not isinstance(metadata, dict):
                raise ValueError("not a JSON object")
        except (UnicodeDecodeError, ValueError) as error:
            raise CorruptTableError(f"TVB: {path / TABLE_JSON} is not a table's settings (unreadable JSON: "
                                    f"{error}); {rebuild}") from None
        if metadata.get("format") != cls._format or not metadata.get("complete"):
            raise TVBError(f"TVB: {path} holds no finished {cls._kind} ({cls._builder} with this path resumes it)")
        try:
            content = (path / TABLE_NPZ).read_bytes()
        except FileNotFoundError:
            raise CorruptTableError(f"TVB: {path / TABLE_NPZ} is missing; {rebuild}") from None
        if hashlib.sha256(content).hexdigest() != metadata.get("npz_sha256"):
            raise CorruptTableError(f"TVB: {path / TABLE_NPZ} is truncated or altered (its content hash differs "
                                    f"from the one in {TABLE_JSON}); {rebuild}")
        try:
            arrays = read_npz(content)
            start = {key[len("start_"):]: arrays.pop(key) for key in list(arrays) if key.startswith("start_")}
            return cls(**arrays, start=start, metadata=metadata)
        except (ValueError, TypeError) as error:
            raise CorruptTableError(f"TVB: {path / TABLE_NPZ} does not hold a {cls._kind} ({error}); {rebuild}") \
                from None


@dataclass
class TVBTable(_Table):
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

    @property
    def dim(self) -> int:
        return self.mean.shape[-1]

    def _functional(self, spec) -> Functional:
        return functional(spec, self.dim)

    def intervals(self, spec, level: float = 0.95) -> Intervals:
        """The ``level`` credible intervals of a functional (:func:`functional`) in every cell, arrays (m, B + 2)."""
        level = _check_level(level)
        h = functional(spec, self.dim)
        if not isinstance(h, MonteCarlo):
            return h.intervals(self.posteriors(), level)
        rows = [h.intervals({key: value[i] for key, value in self.posteriors().items()}, level)
                for i in range(len(self.grid))]  # one ω at a time: the draws of a whole table would not fit
        return Intervals(*(np.stack([getattr(row, part) for row in rows]) for part in ("lower", "upper", "point")))


def _plan(m: int, n_bootstrap: int, sizes: tuple, block_size: int) -> list:
    """The blocks: lists of cells (ω index, role) of equal data size, ``block_size`` at most, in a fixed order
    (whole data, then X₁, then the resamples; X₁ and the resamples together when their sizes are equal)."""
    _, n1, n2 = sizes
    groups = [[(i, FULL) for i in range(m)]]
    split = [(i, SPLIT) for i in range(m)]
    resamples = [(i, 2 + b) for i in range(m) for b in range(n_bootstrap)]
    groups += [split + resamples] if n1 == n2 else [split, resamples]
    return [np.array(group[s:s + block_size]) for group in groups for s in range(0, len(group), block_size)]


def _execute(setting, tasks: list, jobs: int, client):
    """Yield (block number, result) as the blocks finish: in this process (``jobs`` = 1, no client), in a local
    process pool of ``jobs`` workers, or on a Dask cluster. ``setting`` is any object with ``function`` (a
    module-level block fit), ``data`` (its first argument, shared by every block) and ``arguments(indices, omegas)``
    (the whole argument tuple of one block): the GMM's :class:`_Setting` or another model's
    (:mod:`fgraph.models.bmlr_tvb`)."""
    if client is not None:
        yield from _execute_dask(setting, tasks, client)
        return
    if jobs == 1:
        for number, indices, omegas in tasks:
            yield number, setting.function(*setting.arguments(indices, omegas))
        return
    from concurrent.futures import as_completed

    # joblib's own reusable executor: loky's, taken directly, would replace the one joblib.Parallel shares
    # (fgraph.models.workers) with an instance joblib cannot use
    from joblib.executor import get_memmapping_executor

    executor = get_memmapping_executor(jobs)
    function = setting.function
    futures = {executor.submit(function, *setting.arguments(indices, omegas)): number
               for number, indices, omegas in tasks}
    try:
        for future in as_completed(futures):
            yield futures[future], future.result()
    finally:
        for future in futures:
            future.cancel()


def _execute_dask(setting, tasks: list, client):
    try:
        import distributed
    except ImportError:
        raise TVBError("TVB: a Dask client needs dask.distributed: pip install 'fgraph-mp[distributed]'") from None
    own = isinstance(client, str)
    if own:
        client = distributed.Client(client)
    elif not isinstance(client, distributed.Client):
        raise TVBError(f"TVB: client must be a dask.distributed Client or a scheduler address, got {client!r}")
    futures = {}
    try:
        data = client.scatter(setting.data, broadcast=True)
        function = setting.function
        for number, indices, omegas in tasks:
            arguments = (data,) + setting.arguments(indices, omegas)[1:]
            futures[client.submit(function, *arguments, pure=False)] = number
        for future in distributed.as_completed(list(futures)):
            yield futures[future], future.result()
    finally:
        if futures:
            client.cancel(list(futures))
        if own:
            client.close()


def _jobs(n_jobs, parts: int, caller: str = "build_tvb_table") -> int:
    from fgraph.models.workers import worker_count

    try:
        return worker_count(n_jobs, parts, caller)
    except ModelError as error:
        raise TVBError(str(error)) from None


# ------------------------------------------------------------ the generic build: a directory, blocks, resuming
def _block_name(number: int) -> str:
    return f"{BLOCKS}/block_{number:05d}.npz"


def _block_key(number: int, cells: np.ndarray, omegas: np.ndarray) -> dict:
    """What block ``number`` holds: its cells (ω index, role) and their powers — checked on every read, so a block
    of another grid or plan is never taken for this one."""
    return {"block": number, "cells": np.asarray(cells), "omegas": np.asarray(omegas, dtype=float)}


def _run_blocks(setting, blocks: list, task, store: Store | None, jobs: int, client, progress,
                description: str = "TVB table", finished=None) -> dict | None:
    """Every block's result {number: arrays}, or None if ``finished()`` says another process finished the table.

    Without a ``store`` every block is fitted by :func:`_execute`. With one (:class:`fgraph.store.Store`), the
    blocks it holds are read back (verified by content hash and by the cells and ω they hold) and the others
    fitted and written each as it finishes, shared with any other process building the same directory
    (:meth:`fgraph.store.Store.fill`). ``task(cells)`` gives a block's (indices, omegas)."""
    from fgraph.progress import ProgressBar

    arguments = [tuple(task(cells)) for cells in blocks]

    def execute(numbers):
        tasks = [(number,) + arguments[number] for number in numbers]
        for number, result in _execute(setting, tasks, jobs, client):
            yield number, dict(result, cells=blocks[number])

    enabled = sys.stderr.isatty() if progress is None else bool(progress)
    with ProgressBar(len(blocks), description, "block", enabled=enabled) as bar:
        if store is None:
            results = {}
            for number, result in execute(range(len(blocks))):
                results[number] = result
                bar.update(1)
            return results
        names = {_block_name(number): number for number in range(len(blocks))}
        wanted = {name: _block_key(number, blocks[number], arguments[number][1]) for name, number in names.items()}
        filled = store.fill(wanted, lambda chosen: ((_block_name(number), result) for number, result
                                                    in execute([names[name] for name in chosen])),
                            on_value=lambda *_: bar.update(1), stop=finished)
    return None if filled is None else {names[name]: value for name, value in filled.items()}


def _finished_table(directory: Path, table_class, metadata: dict):
    """The finished table in ``directory`` if it is one of these settings (None if there is none, or if its files
    are corrupted: reported, and rebuilt by the caller); a finished table of other settings is a
    :class:`TableMismatchError` naming the keys that differ."""
    if not (directory / TABLE_JSON).exists():
        return None
    try:
        table = table_class.load(directory)
    except CorruptTableError as error:
        import warnings

        warnings.warn(f"{error}; rebuilding it", CorruptRecordWarning, stacklevel=3)
        return None
    except TVBError:
        return None  # no finished table here (the settings file of an unfinished build of an older version)
    changed = sorted(key for key in metadata if table.metadata.get(key) != metadata[key])
    if changed:
        raise TableMismatchError(f"TVB: {directory} holds a {table_class._kind} of other data or settings "
                                 f"(differing: {', '.join(changed)}); give another path, or delete it to rebuild")
    return table


def _build(path, metadata: dict, table_class, reference, prepare, blocks: list, jobs: int, client, progress):
    """Build a TVB table, in memory or resumably in the directory ``path`` — the one procedure of every TVB table.

    reference() : the arrays every cell depends on besides the settings (the reference fit, the split and the
        resamples), computed once per directory (``start.npz``; deterministic in the settings).
    prepare(start) : (setting, task, assemble) from those arrays — the blocks' executor interface
        (:func:`_execute`), ``task(cells)`` → (indices, omegas) of a block, and ``assemble(results)`` → the table.

    In a directory (module docstring "on disk", :mod:`fgraph.store`): a finished table of these settings is loaded;
    otherwise the start and every block are read back when finished and fitted when not, by whichever of the
    processes building the same directory claims them first; the last one to finish writes the table."""
    label = table_class._kind
    if path is None:
        setting, task, assemble = prepare(reference())
        return assemble(_run_blocks(setting, blocks, task, None, jobs, client, progress, label))
    directory = prepare_directory(path, label)
    with directory_lock(directory):
        table = _finished_table(directory, table_class, metadata)
    if table is not None:
        return table
    store = Store(directory, metadata, label, mismatch_error=TableMismatchError)
    start = store.compute_once(START_NPZ, {"start": metadata}, reference)
    setting, task, assemble = prepare(start)

    def finished() -> bool:
        with directory_lock(directory):
            return _finished_table(directory, table_class, metadata) is not None

    results = _run_blocks(setting, blocks, task, store, jobs, client, progress, label, finished)
    if results is None:
        return table_class.load(directory)
    table = assemble(results)
    with store.locked():
        table.save(directory)
    store.remove([START_NPZ] + [_block_name(number) for number in range(len(blocks))])
    store.clear_claims()
    return table


def _assemble_cells(m: int, width: int, blocks: list, results: dict, keys) -> dict:
    """The blocks' per-cell arrays placed into (m, width, ...) arrays at their cells (ω index, role)."""
    first = results[0]
    arrays = {key: np.zeros((m, width) + first[key].shape[1:], dtype=first[key].dtype) for key in keys}
    for number, cells in enumerate(blocks):
        for key, array in arrays.items():
            array[cells[:, 0], cells[:, 1]] = results[number][key]
    return arrays


def build_tvb_table(X, n_components: int, path=None, grid=None, n_bootstrap: int = 100, priors: GMMPriors | None = None,
                    seed: int = 0, resampling: str = "common", block_size: int = 64, n_jobs=-1, client=None,
                    iterations: int = 1000, tol: float | None = 1e-8, init: str = "kmeans", n_init: int = 1,
                    random_state: int | None = 0, progress: bool | None = None) -> TVBTable:
    """The TVB table of the K-component mixture on data ``X`` (N, d) (module docstring).

    grid : the powers ω, default :func:`omega_grid` () (100 values log-spaced in [0.001, 1]).
    n_bootstrap : B >= 1 resamples of X₂.
    priors : :class:`~fgraph.models.gmm.GMMPriors`, resolved from the whole data (scikit-learn's defaults).
    seed : the split and the resamples come from ``np.random.default_rng(seed)``.
    resampling : ``"common"`` (default) — one split and one set of B resamples for every ω, so that the coverage
        curve over ω changes with ω alone — or ``"per_omega"``, a new split and new resamples for every ω, as
        Algorithm 2 is written.
    block_size : cells per graph (copies of one fit); every block is one task of the pool or the cluster.
    n_jobs : workers of the local process pool (−1: one per CPU; 1 or None: this process).
    client : a ``dask.distributed.Client``, or a scheduler address (a client is opened and closed here): the
        blocks run on that cluster instead (the ``distributed`` extra).
    iterations, tol : the most sweeps of a cell and its stopping tolerance on the ELBO's change over a round of
        ``CHECK_EVERY`` sweeps (nats; None: exactly ``iterations``); a cell that settles leaves its block's graph.
    init, n_init, random_state : the starting responsibilities of the reference fit (as ``BayesianGMM``'s).
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
    grid = omega_grid() if grid is None else _check_grid(grid)
    n_bootstrap = _check_bootstrap(n_bootstrap)
    block_size = _check_positive_integer("block_size", block_size)
    iterations = _check_positive_integer("iterations", iterations)
    n_init = _check_positive_integer("n_init", n_init)
    if resampling not in ("common", "per_omega"):
        raise TVBError(f"TVB: resampling must be 'common' or 'per_omega', got {resampling!r}")
    for name, value in (("seed", seed), ("random_state", random_state)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Integral)):
            raise TVBError(f"TVB: {name} must be an integer (it is stored with the table), got {value!r}")
    if seed is None:
        raise TVBError("TVB: seed must be an integer (it is stored with the table), got None")
    N, d = X.shape
    m = grid.size
    n1 = N // 2
    sizes = (N, n1, N - n1)
    blocks = _plan(m, n_bootstrap, sizes, block_size)
    jobs = 1 if client is not None else _jobs(n_jobs, len(blocks))
    metadata = {
        "format": FORMAT, "version": VERSION, "n_components": int(K), "n_samples": int(N), "dim": int(d),
        "data_sha256": hashlib.sha256(np.ascontiguousarray(X).tobytes()).hexdigest(),
        "grid": [float(value) for value in grid], "n_bootstrap": n_bootstrap, "seed": int(seed),
        "resampling": resampling, "block_size": block_size, "iterations": iterations,
        "tol": None if tol is None else float(tol), "init": init, "n_init": n_init,
        "random_state": None if random_state is None else int(random_state),
        "priors": None if priors is None else _priors_json(priors),
    }

    def reference() -> dict:
        resolved, start = _reference(X, K, priors, init, n_init, random_state, iterations, tol)
        return {"priors_alpha": resolved.weight_concentration, "priors_mean": resolved.mean,
                "priors_beta": np.array(resolved.precision_scale), "priors_scale": resolved.scale,
                "priors_df": np.array(resolved.df), **_resamples(seed, N, n_bootstrap, resampling, m),
                **{f"start_{key}": value for key, value in start.items()}}

    def prepare(arrays: dict) -> tuple:
        resolved = GMMPriors(arrays["priors_alpha"], arrays["priors_mean"], float(arrays["priors_beta"]),
                             arrays["priors_scale"], float(arrays["priors_df"]))
        start = {key[len("start_"):]: value for key, value in arrays.items() if key.startswith("start_")}
        split, holdout, bootstrap = arrays["split"], arrays["holdout"], arrays["bootstrap"]

        def assemble(results: dict) -> TVBTable:
            return _assemble(grid, n_bootstrap, blocks, results, split, holdout, bootstrap, start, metadata)

        return _setting(X, resolved, start, iterations, tol), _cell_task(N, grid, resampling, split, bootstrap), \
            assemble

    return _build(path, metadata, TVBTable, reference, prepare, blocks, jobs, client, progress)


def _priors_json(priors: GMMPriors) -> dict:
    if not isinstance(priors, GMMPriors):
        raise ModelError(f"GMM: priors must be a GMMPriors, got {type(priors).__name__}")
    return {key: None if value is None else np.asarray(value, dtype=float).tolist()
            for key, value in vars(priors).items()}


def _assemble(grid, n_bootstrap, blocks, results, split, holdout, bootstrap, start, metadata) -> TVBTable:
    arrays = _assemble_cells(grid.size, n_bootstrap + 2, blocks, results,
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
                   max_iter: int = 50, tolerance: float = 1e-6, lower: float = 1e-3, redraw: bool = True,
                   seed: int = 0, priors: GMMPriors | None = None, iterations: int = 1000, tol: float | None = 1e-8,
                   init: str = "kmeans", n_init: int = 1, random_state: int | None = 0) -> SequentialTVB:
    """Algorithm 1 (sequential update TVB) for the functional ``spec`` (:func:`functional`).

    From η = log ω = 0, every iteration splits X into halves (``np.random.default_rng(seed)``; with
    ``redraw=False`` the first split and resamples are kept: those of a table built with the same ``seed``), fits
    X₁ and B resamples of X₂ at ω = e^η (the resamples as copies of one graph), and computes the bootstrap coverage
    ĉ; it stops when ĉ > 1 − α or (1 − α) − ĉ < ``tolerance`` (ε), else steps
    η ← max(η + κ_k (ĉ − (1 − α)), log ``lower``) (Ω = [δ, 1]) with κ_k = ``step`` / (k + 1) (Robbins–Monro: Σκ = ∞,
    Σκ² < ∞), or ``step(k)`` if ``step`` is callable. It returns the last ω, as the algorithm does (after
    ``max_iter`` iterations without reaching the level: the last updated ω, ``reached=False``), with the interval
    of the fit on the whole data at that ω. The starts and priors are the table's (module docstring).
    """
    X = _check_data(X, n_components)
    K = int(n_components)
    level = _check_level(level)
    n_bootstrap = _check_bootstrap(n_bootstrap)
    max_iter = _check_positive_integer("max_iter", max_iter)
    if not (isinstance(lower, numbers.Real) and 0.0 < lower <= 1.0):
        raise PowerRangeError(f"TVB: the lower end δ of Ω = [δ, 1] must be a power in (0, 1], got {lower!r}")
    if not callable(step) and not (isinstance(step, numbers.Real) and step > 0.0):
        raise TVBError(f"TVB: step must be a positive number κ₀ (κ_k = κ₀ / (k + 1)) or a callable k -> κ_k, got "
                       f"{step!r}")
    h = functional(spec, X.shape[1])
    resolved, start = _reference(X, K, priors, init, _check_positive_integer("n_init", n_init), random_state,
                                 iterations, tol)
    setting = _setting(X, resolved, start, iterations, tol)
    rng = np.random.default_rng(seed)
    split, _, bootstrap = _draw_split(rng, len(X), n_bootstrap)
    eta, omegas, coverages, reached = 0.0, [], [], False
    for k in range(max_iter):
        omega = float(np.exp(eta))
        if redraw and k > 0:
            split, _, bootstrap = _draw_split(rng, len(X), n_bootstrap)
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
        kappa = float(step(k)) if callable(step) else float(step) / (k + 1)
        eta = max(eta + kappa * (coverage - level), float(np.log(lower)))
    omega = omegas[-1] if reached else float(np.exp(eta))
    whole = setting.fit(np.arange(len(X))[None], np.array([omega]))
    posteriors = {key: whole[key][0] for key in PARAMETERS}
    return SequentialTVB(h.name, level, omega, reached, np.array(omegas), np.array(coverages),
                         h.intervals(posteriors, level), posteriors)

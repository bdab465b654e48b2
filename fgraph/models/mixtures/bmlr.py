"""Bayesian mixture linear regression (BMLR) as a graph of nodes: the model of §5.2 of the TVB paper, fitted by VMP
with fractional VB (its Algorithm 4); fractional powers, restarts and resamples as copies of one model.

N data sets (y_n, X_n), y_n ∈ R^J and X_n ∈ R^{J × p} (a classical regression each), belong to K clusters, cluster
k with coefficients β_k (eq. 21):

    π ~ Dirichlet(α₀)                                           node ``"pi"``
    z_n | π ~ Categorical(π)                    (plate N)       node ``"z"``
    τ_k ~ Gamma(a₀, b₀)                          (batch (K, 1))  node ``"tau"``
    β_k | τ_k ~ N(0, τ_k⁻¹ I_p)                  (batch (K, 1))  node ``"beta"`` (an ``IsotropicNormalNode``)
    y_n | z_n = k ~ N(X_n β_k, λ⁻¹ I_J)          (plate N)       node ``"y"`` (a ``SwitchingRegressionNode``)

with the noise precision λ known. The Gamma is on the prior precision τ_k of the coefficients, not on the noise.
Under VMP the posterior is the paper's q(Z) q(π, β) q(τ) — q(π) q(β) q(τ), as it factorises by itself — with
q(β_k) = N(m_k, S_k) (full covariance) and q(τ_k) = Gamma(a_k, b_k); the engine's free energy F is minus the full
ELBO (every constant kept): ``−F = E[log p(Y, Z, π, β, τ | X)] − E[log q]``.

**Why not the linear-experts node.** :mod:`fgraph.nodes.linear_experts` has a matrix-normal–gamma pair (A_k, λ_k): a Gamma
*noise* precision per component whose posterior is joint with the coefficients (covariance V/λ_k), an intercept
and one row of coefficients per output. Here the noise is known and shared, the Gamma sits on the coefficients'
prior precision with q(β) q(τ) factorised, and the J responses of one data set share one β_k and one label. So
the graph uses :mod:`fgraph.nodes.switching_regression` (the likelihood, which carries ω) and
:mod:`fgraph.nodes.isotropic_normal` (N(β | 0, τ⁻¹ I) with a scalar Gamma τ).

**Schedule** (:func:`bmlr_schedule`): one sweep is

    the Dirichlet prior, z → π (α_k = α₀ + ω N_k),  the coefficient prior (E[τ_k]), y → β (the weighted sums),
    π → z, y → z (r_nk ∝ ρ_nk),  the Gamma prior, β → τ (a_k = a₀ + p/2, b_k = b₀ + ½ E[β_kᵀβ_k]),

starting from responsibilities and q(τ) (the prior by default). These are Algorithm 4's updates in its own cyclic
order (Z, τ, π, β) entered at π: after sweep t the state is (π_t, β_t) from (r_{t−1}, τ_{t−1}), then r_t and τ_t
from them, and the free energy is that state's.

**Fractional VB.** ``power=ω`` raises the likelihood node and the switch's prior to ω — p^ω(Y | Z, β, X) p^ω(Z | π),
eq. (22) — and weights the entropy of q(Z) by ω (:func:`fgraph.entropy_weight`), the q^ω(Z) of eq. (23), so
q(Z) ∝ (ρ^ω)^{1/ω} = ρ keeps its untempered step and every sweep is Algorithm 4: α_k = α₀ + ωN_k,
S_k = (E[τ_k] I + ωλ Σ_n r_nk X_nᵀX_n)⁻¹, m_k = ωλ S_k Σ_n r_nk X_nᵀy_n, a_k, b_k as above; −F is the ELBO of
eq. (58). As ω → 0, q(π) → Dir(α₀) and q(β) q(τ) → the mean-field approximation of the prior p(β | τ) p(τ)
(which the prior itself, β and τ being dependent, is not): m_k = 0, S_k = (b₀/a₀) I, a_k = a₀ + p/2,
b_k = b₀ (a₀ + p/2)/a₀ (E[τ_k] = a₀/b₀).

**Credible intervals.** q(β_k) is Gaussian, so any linear functional of the coefficients is Gaussian under q:
Σ_j β_kj ~ N(1ᵀm_k, 1ᵀS_k1), and the sum over components of §6.2, Σ_k Σ_j β_kj, ~ N(Σ_k 1ᵀm_k, Σ_k 1ᵀS_k1) (the
components are independent under q) — :func:`coefficient_sum_interval`. (No Student-t: the noise is known and
q(β) is independent of q(τ).)

**Copies.** ``n_copies=R`` builds ``fg.Model(copies=R)``: a leading copy axis on every variable, one compiled plan.
A power per copy (R numbers) fits R fractional posteriors at once; data of shape (R, N, J, p) and (R, N, J) gives
each copy its own data sets (bootstrap resamples of the N data sets).

**From the statistics.** Every update reads the data through G_n = X_nᵀX_n, c_n = X_nᵀy_n, s_n = y_nᵀy_n and J
alone, so :func:`build_bmlr_from_statistics` builds the same graph from :func:`bmlr_statistics` (N (p² + p + 1)
numbers instead of N J (p + 1)); resamples are ``indices`` (R, n) into the N data sets, one row per copy, and cost
R n (p² + p + 1) numbers. The fit is the raw arrays' fit (the same arithmetic on the same statistics).
"""
from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass

import numpy as np

import fgraph as fg
from fgraph.errors import ConvergenceWarning, DataError, ModelError
from fgraph.families.special import digamma
from fgraph.nodes.categorical import Categorical
from fgraph.nodes.dirichlet import Dirichlet
from fgraph.nodes.gamma import Gamma
from fgraph.nodes.isotropic_normal import IsotropicNormal
from fgraph.nodes.switching_regression import RegressionStatistics, SwitchingRegression

__all__ = ["BMLRPriors", "BMLRNetwork", "BMLRFit", "build_bmlr", "build_bmlr_from_statistics", "bmlr_statistics",
           "RegressionStatistics", "bmlr_schedule", "fit_bmlr", "random_responsibilities", "log_responsibilities",
           "pooled_noise_precision", "coefficient_sum", "coefficient_sum_interval", "expected_log_weights"]


def _positive(name: str, value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value) or value <= 0.0:
        raise ModelError(f"BMLR: {what} must be a positive number, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class BMLRPriors:
    """The hyper-parameters of eq. (21).

    weight_concentration : α₀ > 0, one number (every component) or K of them; default 1
    shape, rate : a₀, b₀ > 0 of the Gamma prior on each τ_k, the prior precision of β_k; default 1, 1 (E[τ_k] = 1)
    noise_precision : λ > 0, the known precision of the noise; default 1
    """

    weight_concentration: object = 1.0
    shape: object = 1.0
    rate: object = 1.0
    noise_precision: object = 1.0

    def resolved(self, n_components: int) -> "BMLRPriors":
        """Every hyper-parameter checked (named :class:`~fgraph.errors.ModelError` otherwise), α₀ as K numbers."""
        alpha = self.weight_concentration
        alpha = np.full(n_components, float(alpha)) if isinstance(alpha, numbers.Real) and not isinstance(alpha, bool) \
            else np.asarray(alpha, dtype=float)
        if alpha.shape != (n_components,) or not np.all(np.isfinite(alpha)) or np.any(alpha <= 0.0):
            raise ModelError(f"BMLR: weight_concentration α₀ must be one positive number or K = {n_components} of "
                             f"them, got {self.weight_concentration!r}")
        return BMLRPriors(alpha, _positive("shape", self.shape, "the Gamma shape a₀ of τ"),
                          _positive("rate", self.rate, "the Gamma rate b₀ of τ"),
                          _positive("noise_precision", self.noise_precision, "the noise precision λ"))


@dataclass(frozen=True)
class BMLRNetwork:
    """A built BMLR: the model, its design matrices (N, J, p) or (R, N, J, p) and responses (N, J) or (R, N, J),
    K components, R copies, the resolved priors and the power ω (a number, or R numbers); built from the
    statistics, X and y are None and ``statistics`` holds those the graph was given ((n, ...) or (R, n, ...))."""

    model: fg.Model
    X: np.ndarray | None
    y: np.ndarray | None
    n_components: int
    n_copies: int
    priors: BMLRPriors
    power: object
    statistics: RegressionStatistics | None = None

    @property
    def n_data_sets(self) -> int:
        """N (n: the data sets of every copy)."""
        return self.y.shape[-2] if self.statistics is None else np.shape(self.statistics.square)[-1]

    @property
    def dimension(self) -> int:
        """p."""
        return self.X.shape[-1] if self.statistics is None else self.statistics.dimension


def _integer(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ModelError(f"BMLR: {name} must be an integer >= 1, got {value!r}")
    return int(value)


def _check_data(X, y, n_components, n_copies) -> tuple:
    K, R = _integer("n_components", n_components), _integer("n_copies", n_copies)
    arrays = []
    for name, value, shape in (("X", X, "(N, J, p)"), ("y", y, "(N, J)")):
        try:
            arrays.append(np.asarray(value, dtype=float))
        except (TypeError, ValueError):
            raise DataError(f"BMLR: {name} must be a numeric array of shape {shape}") from None
    X, y = arrays
    if X.ndim not in (3, 4) or X.shape[-1] < 1 or X.shape[-2] < 1:
        raise DataError(f"BMLR: X must be the design matrices, shape (N, J, p) (or (R, N, J, p), per copy); got shape "
                        f"{X.shape}. For one response per data set give X[:, None, :]")
    if y.ndim not in (2, 3):
        raise DataError(f"BMLR: y must be the responses, shape (N, J) (or (R, N, J), per copy); got shape {y.shape}. "
                        "For one response per data set give y[:, None]")
    for name, array, per_copy_ndim in (("X", X, 4), ("y", y, 3)):
        if array.ndim == per_copy_ndim and array.shape[0] != R:
            raise DataError(f"BMLR: {name} per copy has the copies first with R = n_copies = {R}; got shape "
                            f"{array.shape}")
    if X.shape[-3:-1] != y.shape[-2:]:
        raise DataError(f"BMLR: X and y do not match: X has {X.shape[-3]} data sets of {X.shape[-2]} rows (shape "
                        f"{X.shape}), y {y.shape[-2]} data sets of {y.shape[-1]} responses (shape {y.shape}); give one "
                        "design row per response")
    for name, array, event in (("X", X, (-2, -1)), ("y", y, (-1,))):
        finite = np.all(np.isfinite(array), axis=event)
        if not np.all(finite):
            bad = np.argwhere(~finite)
            raise DataError(f"BMLR: {name} has NaN or infinite values in {len(bad)} data sets (first at index "
                            f"{tuple(int(i) for i in bad[0])}); impute or drop them")
    N = y.shape[-2]
    if N < K:
        raise DataError(f"BMLR: N = {N} data sets cannot fill K = {K} components; give N >= K")
    return X, y, K, R


def _check_power(power, R) -> tuple:
    omega = np.asarray(power, dtype=float)
    if omega.ndim == 0:
        if not 0.0 < float(omega) <= 1.0:
            raise ModelError(f"BMLR: the power ω must lie in (0, 1], got {power!r}")
        return float(omega), float(omega)
    if omega.shape != (R,) or not np.all((omega > 0.0) & (omega <= 1.0)):
        raise ModelError(f"BMLR: a power per copy is R = {R} numbers in (0, 1], got {power!r}")
    return fg.per_copy(omega), omega


def build_bmlr(X, y, n_components: int, priors: BMLRPriors | None = None, n_copies: int = 1,
               power=1.0) -> BMLRNetwork:
    """The BMLR graph (module docstring) for design matrices ``X`` (N, J, p) and responses ``y`` (N, J) — or
    (R, N, J, p) and (R, N, J), a data set per copy — with K components.

    ``priors`` (:class:`BMLRPriors`, α₀, a₀, b₀, λ); ``n_copies`` R copies of the model (one graph, a leading copy
    axis on every variable); ``power`` ω ∈ (0, 1] on the likelihood and the switch's prior with q^ω(Z) in the
    entropy (fractional VB, eq. 23; a number, or R numbers: one per copy). Bad input is a
    :class:`~fgraph.errors.ModelError` (K < 1, invalid priors or powers) or a :class:`~fgraph.errors.DataError`
    (N < K, NaN or infinite data, X and y that do not match, a wrong shape), raised before any graph is built.
    """
    X, y, K, R = _check_data(X, y, n_components, n_copies)
    priors = BMLRPriors() if priors is None else priors
    if not isinstance(priors, BMLRPriors):
        raise ModelError(f"BMLR: priors must be a BMLRPriors, got {type(priors).__name__}")
    priors = priors.resolved(K)
    node_power, omega = _check_power(power, R)
    N, p = y.shape[-2], X.shape[-1]
    with fg.Model(copies=R) as model:
        pi = Dirichlet("pi", priors.weight_concentration)
        z = Categorical("z", p=pi, batch_shape=(N,), power=node_power)
        tau = Gamma("tau", priors.shape, priors.rate, batch_shape=(K, 1))
        beta = IsotropicNormal("beta", np.zeros(p), tau, batch_shape=(K, 1))
        SwitchingRegression("y", switch=z, input=fg.per_copy(X) if X.ndim == 4 else X, coefficients=beta,
                            observed=fg.per_copy(y) if y.ndim == 3 else y, noise_precision=priors.noise_precision,
                            power=node_power)
    if np.ndim(omega) or omega != 1.0:
        fg.entropy_weight(z, node_power)
    return BMLRNetwork(model, X, y, K, R, priors, power if np.ndim(omega) else omega)


def bmlr_statistics(X, y) -> RegressionStatistics:
    """The statistics of the N data sets, X_nᵀX_n (N, p, p), X_nᵀy_n (N, p), y_nᵀy_n (N,) and J, from design
    matrices X (N, J, p) and responses y (N, J), checked as :func:`build_bmlr` checks them (named
    :class:`~fgraph.errors.DataError`)."""
    X, y, _, _ = _check_data(X, y, 1, 1)
    if X.ndim != 3 or y.ndim != 2:
        raise DataError(f"BMLR: the statistics are of one collection of data sets, X (N, J, p) and y (N, J); got "
                        f"shapes {X.shape} and {y.shape}")
    return RegressionStatistics.from_data(X, y)


def check_statistics(statistics) -> RegressionStatistics:
    """The statistics of :func:`bmlr_statistics` as a fit reads them, or a named :class:`~fgraph.errors.DataError`."""
    if not isinstance(statistics, RegressionStatistics):
        raise DataError(f"BMLR: statistics must be a RegressionStatistics (bmlr_statistics(X, y)), got "
                        f"{type(statistics).__name__}")
    gram, cross, square = (np.asarray(a, dtype=float) for a in (statistics.gram, statistics.cross, statistics.square))
    if gram.ndim != 3 or gram.shape[1] != gram.shape[2] or cross.shape != gram.shape[:2] or square.shape != gram.shape[:1]:
        raise DataError(f"BMLR: the statistics must be X_nᵀX_n (N, p, p), X_nᵀy_n (N, p) and y_nᵀy_n (N,); got "
                        f"shapes {gram.shape}, {cross.shape}, {square.shape}")
    finite = np.all(np.isfinite(gram), axis=(1, 2)) & np.all(np.isfinite(cross), axis=1) & np.isfinite(square)
    if not np.all(finite):
        raise DataError(f"BMLR: the statistics have NaN or infinite values in {int(np.sum(~finite))} data sets (first "
                        f"at index {int(np.argmin(finite))}); impute or drop them")
    J = statistics.responses
    if isinstance(J, bool) or not isinstance(J, numbers.Integral) or J < 1:
        raise DataError(f"BMLR: the statistics' number of responses J must be an integer >= 1, got {J!r}")
    return RegressionStatistics(gram, cross, square, int(J))


def build_bmlr_from_statistics(statistics: RegressionStatistics, n_components: int, priors: BMLRPriors | None = None,
                               n_copies: int = 1, power=1.0, indices=None) -> BMLRNetwork:
    """The BMLR graph of :func:`build_bmlr` from the statistics of the N data sets (:func:`bmlr_statistics`).

    ``indices`` selects the data sets of the fit: None (all N, shared by the copies), (n,) (those n, shared) or
    (R, n) with R = ``n_copies`` (copy r fits the data sets ``indices[r]``, repeats allowed: bootstrap resamples).
    The other arguments and the named errors are :func:`build_bmlr`'s; indices out of 0 .. N − 1, or of another
    shape, are a :class:`~fgraph.errors.DataError`.
    """
    statistics = check_statistics(statistics)
    K, R = _integer("n_components", n_components), _integer("n_copies", n_copies)
    N = statistics.square.shape[0]
    if indices is not None:
        chosen = np.asarray(indices)
        if not np.issubdtype(chosen.dtype, np.integer) or chosen.ndim not in (1, 2) or chosen.shape[-1] < 1 \
                or (chosen.ndim == 2 and chosen.shape[0] != R):
            raise DataError(f"BMLR: indices must be integers of shape (n,) or (R, n) with R = n_copies = {R}, got "
                            f"{chosen.dtype} of shape {chosen.shape}")
        if np.any((chosen < 0) | (chosen >= N)):
            raise DataError(f"BMLR: indices must lie in 0 .. N − 1 = {N - 1} (the data sets of the statistics)")
        statistics = statistics.take(chosen)
    n = statistics.square.shape[-1]
    if n < K:
        raise DataError(f"BMLR: N = {n} data sets cannot fill K = {K} components; give N >= K")
    priors = BMLRPriors() if priors is None else priors
    if not isinstance(priors, BMLRPriors):
        raise ModelError(f"BMLR: priors must be a BMLRPriors, got {type(priors).__name__}")
    priors = priors.resolved(K)
    node_power, omega = _check_power(power, R)
    p = statistics.dimension
    per_copy = statistics.square.ndim == 2
    with fg.Model(copies=R) as model:
        pi = Dirichlet("pi", priors.weight_concentration)
        z = Categorical("z", p=pi, batch_shape=(n,), power=node_power)
        tau = Gamma("tau", priors.shape, priors.rate, batch_shape=(K, 1))
        beta = IsotropicNormal("beta", np.zeros(p), tau, batch_shape=(K, 1))
        SwitchingRegression("y", switch=z, coefficients=beta, noise_precision=priors.noise_precision,
                            power=node_power, statistics=fg.per_copy(statistics) if per_copy else statistics)
    if np.ndim(omega) or omega != 1.0:
        fg.entropy_weight(z, node_power)
    return BMLRNetwork(model, None, None, K, R, priors, power if np.ndim(omega) else omega, statistics)


def pooled_noise_precision(statistics: RegressionStatistics) -> float:
    """The noise precision estimated from the data sets' own least-squares fits, pooled:
    λ̂ = Σ_n (J − p) / Σ_n RSS_n with RSS_n = s_n − c_nᵀ G_n⁻¹ c_n (the residual sum of squares of regression n) —
    the reciprocal of the pooled unbiased residual variance, from the statistics alone. Needs J > p and every
    X_n of full rank (:class:`~fgraph.errors.DataError` otherwise)."""
    statistics = check_statistics(statistics)
    N, p = statistics.square.shape[0], statistics.dimension
    if statistics.responses <= p:
        raise DataError(f"BMLR: a pooled noise precision needs more responses than covariates, J = "
                        f"{statistics.responses} <= p = {p}")
    try:
        solved = np.linalg.solve(statistics.gram, statistics.cross[..., None])[..., 0]
    except np.linalg.LinAlgError:
        raise DataError("BMLR: a pooled noise precision needs every X_nᵀX_n invertible (X_n of full rank)") from None
    residual = float(np.sum(statistics.square - np.sum(statistics.cross * solved, axis=-1)))
    if not residual > 0.0:
        raise DataError("BMLR: the data sets' least-squares fits leave no residual; the noise precision cannot be "
                        "estimated")
    return N * (statistics.responses - p) / residual


def log_responsibilities(posteriors: dict, statistics: RegressionStatistics, noise_precision: float) -> np.ndarray:
    """The E-step of Algorithm 4 from posteriors without a copy axis (``alpha`` (K,), ``coefficient_mean`` (K, p),
    ``coefficient_cov`` (K, p, p)) on data sets given by their statistics (leading shape L, e.g. (R, n)):
    log r_nk = log ρ_nk − log Σ_j ρ_nj with log ρ_nk = E[log π_k] + (J/2) log(λ/2π)
    − (λ/2)(s_n − 2 c_nᵀm_k + tr(G_n (S_k + m_k m_kᵀ))), shape L + (K,)."""
    mean = np.asarray(posteriors["coefficient_mean"], dtype=float)
    second = np.asarray(posteriors["coefficient_cov"], dtype=float) + mean[:, :, None] * mean[:, None, :]
    gram, cross = np.asarray(statistics.gram, dtype=float), np.asarray(statistics.cross, dtype=float)
    square = np.asarray(statistics.square, dtype=float)
    lam = float(noise_precision)
    quadratic = (square[..., None] - 2.0 * cross @ mean.T + np.einsum("...ij,kji->...k", gram, second))
    log_rho = (expected_log_weights(posteriors["alpha"]) + 0.5 * statistics.responses * (np.log(lam)
               - np.log(2.0 * np.pi)) - 0.5 * lam * quadratic)
    return log_rho - np.logaddexp.reduce(log_rho, axis=-1, keepdims=True)


def bmlr_schedule() -> list:
    """One sweep as (node, interface) pairs: q(π), q(β), q(Z), q(τ) (module docstring)."""
    return [("pi", "out"), ("z", "p"), ("beta", "out"), ("y", "coefficients"), ("z", "out"), ("y", "switch"),
            ("tau", "out"), ("beta", "precision")]


def random_responsibilities(n_data_sets: int, n_components: int, random_state=None, n_copies: int = 1) -> np.ndarray:
    """Starting responsibilities (R, N, K): uniform draws normalised per data set (scikit-learn's ``"random"``)."""
    rng = np.random.default_rng(random_state)
    resp = rng.uniform(size=(int(n_copies), int(n_data_sets), int(n_components)))
    return resp / resp.sum(axis=-1, keepdims=True)


@dataclass
class BMLRFit:
    """The result of :func:`fit_bmlr`: the engine's result, the ELBO −F per sweep and copy (iterations, R), whether
    every copy settled within ``tol`` and the number of sweeps."""

    network: BMLRNetwork
    result: object
    elbo: np.ndarray
    converged: bool | None
    iterations: int

    def posteriors(self) -> dict:
        """q per copy, the copy axis first: ``alpha`` (R, K) of q(π) = Dir(α); ``coefficient_mean`` m (R, K, p) and
        ``coefficient_cov`` S (R, K, p, p) of q(β_k) = N(m_k, S_k); ``tau_shape`` a and ``tau_rate`` b (R, K) of
        q(τ_k) = Gamma(a_k, b_k), the coefficients' prior precision; ``responsibilities`` r (R, N, K)."""
        q_pi, q_beta = self.result.marginal("pi"), self.result.marginal("beta")
        q_tau, q_z = self.result.marginal("tau"), self.result.marginal("z")
        R, K, p = self.network.n_copies, self.network.n_components, self.network.dimension
        return {
            "alpha": np.array(q_pi.alpha).reshape(R, K),
            "coefficient_mean": np.array(np.broadcast_to(q_beta.mean, (R, K, 1, p))).reshape(R, K, p),
            "coefficient_cov": np.array(np.broadcast_to(q_beta.cov, (R, K, 1, p, p))).reshape(R, K, p, p),
            "tau_shape": np.array(np.broadcast_to(q_tau.shape, (R, K, 1))).reshape(R, K),
            "tau_rate": np.array(np.broadcast_to(q_tau.rate, (R, K, 1))).reshape(R, K),
            "responsibilities": np.array(q_z.probabilities).reshape(R, -1, K),
        }


def fit_bmlr(network: BMLRNetwork, responsibilities, iterations: int = 100, tol: float | None = 1e-8,
             tau=None, callback=None) -> BMLRFit:
    """VMP from starting responsibilities (N, K) (shared) or (R, N, K) (one per copy) and a starting q(τ) —
    ``tau=(shape, rate)``, numbers or (K,) or (R, K) arrays, the prior Gamma(a₀, b₀) by default — at most
    ``iterations`` sweeps of :func:`bmlr_schedule`, stopping when every copy's ELBO changed by less than ``tol`` nats
    (``tol=None``: exactly ``iterations`` sweeps). ``callback(iteration, result)`` is called after every sweep
    (:func:`fgraph.infer`)."""
    R, K, N = network.n_copies, network.n_components, network.n_data_sets
    resp = np.asarray(responsibilities, dtype=float)
    if resp.shape not in ((N, K), (R, N, K)):
        raise DataError(f"BMLR: starting responsibilities must have shape (N, K) = {(N, K)} or (R, N, K) = "
                        f"{(R, N, K)}, got {resp.shape}")
    if not (np.all(np.isfinite(resp)) and np.all(resp >= 0.0) and np.allclose(resp.sum(-1), 1.0)):
        raise DataError("BMLR: starting responsibilities must be probabilities (rows >= 0 summing to one)")
    resp = np.broadcast_to(resp, (R, N, K))
    shape, rate = (network.priors.shape, network.priors.rate) if tau is None else tau
    try:
        shape, rate = (np.broadcast_to(np.asarray(value, dtype=float), (R, K)).reshape(R, K, 1)
                       for value in (shape, rate))
    except ValueError:
        raise DataError(f"BMLR: the starting q(τ) is (shape, rate), each a number or (K,) or (R, K) = {(R, K)} "
                        "numbers") from None
    if not (np.all(np.isfinite(shape)) and np.all(np.isfinite(rate)) and np.all(shape > 0) and np.all(rate > 0)):
        raise DataError("BMLR: the starting q(τ) needs a positive shape and rate")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the caller reads `converged`
        result = fg.infer(network.model, algorithm="vmp", schedule=bmlr_schedule(), iterations=int(iterations),
                          tol=tol, init={"z": fg.Categorical(resp, check=False), "tau": fg.Gamma(shape, rate)},
                          callback=callback)
    free_energy = np.array(result.free_energy, dtype=float).reshape(len(result.free_energy), R)
    return BMLRFit(network, result, -free_energy, result.converged, result.iterations)


# ------------------------------------------------------------------ from the posteriors (numpy, no graph)
def expected_log_weights(alpha) -> np.ndarray:
    """E[log π_k] = ψ(α_k) − ψ(Σ_j α_j), the shape of ``alpha`` (..., K)."""
    alpha = np.asarray(alpha, dtype=float)
    return digamma(alpha) - digamma(alpha.sum(axis=-1, keepdims=True))


def _components(K: int, components) -> np.ndarray:
    if components is None:
        return np.arange(K)
    chosen = np.atleast_1d(np.asarray(components))
    if not np.issubdtype(chosen.dtype, np.integer) or chosen.ndim != 1 or np.any((chosen < -K) | (chosen >= K)):
        raise ModelError(f"BMLR: components must be indices in 0..{K - 1} (or None: all), got {components!r}")
    return chosen


def coefficient_sum(posteriors: dict, components=None) -> tuple:
    """Mean and variance of h = Σ_{k ∈ components} Σ_j β_kj under q (Gaussian: Σ_k 1ᵀm_k and Σ_k 1ᵀS_k1), each of the
    posteriors' leading shape (R,) for :meth:`BMLRFit.posteriors`. ``components=None`` sums every component: the
    §6.2 functional Σ_k Σ_j β_kj, invariant to relabelling the components."""
    mean = np.asarray(posteriors["coefficient_mean"], dtype=float)
    cov = np.asarray(posteriors["coefficient_cov"], dtype=float)
    chosen = _components(mean.shape[-2], components)
    return (mean[..., chosen, :].sum(axis=(-2, -1)), cov[..., chosen, :, :].sum(axis=(-3, -2, -1)))


def coefficient_sum_interval(posteriors: dict, level: float = 0.95, components=None) -> tuple:
    """The equal-tailed ``level`` credible interval (lower, upper) of Σ_{k ∈ components} Σ_j β_kj under q: the
    Gaussian interval mean ∓ z_{1−α/2} sd of §6.2 (:func:`coefficient_sum`)."""
    from scipy.stats import norm

    if isinstance(level, bool) or not isinstance(level, numbers.Real) or not 0.0 < level < 1.0:
        raise ModelError(f"BMLR: level must lie in (0, 1), got {level!r}")
    mean, variance = coefficient_sum(posteriors, components)
    half = norm.ppf(0.5 + 0.5 * float(level)) * np.sqrt(variance)
    return mean - half, mean + half

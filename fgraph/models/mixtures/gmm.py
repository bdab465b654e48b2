"""The Bayesian Gaussian mixture as a graph of nodes; restarts, fractional powers and resamples as copies of one
model.

For N points x_n ∈ R^d and K components (Bishop 2006, §10.2):

    π ~ Dirichlet(α₀)                                           node ``"pi"``
    z_n | π ~ Categorical(π)                    (plate N)       node ``"z"``
    (μ_k, Λ_k) ~ N(μ_k | m₀, (β₀ Λ_k)⁻¹) W(Λ_k | W₀, ν₀)         node ``"theta"``, batch (K, 1)
    x_n | z_n = k ~ N(μ_k, Λ_k⁻¹)               (plate N)       node ``"x"`` (a ``GaussianMixtureNode``)

Under VMP the posterior is q(Z) q(π) Π_k q(μ_k, Λ_k) — the q(Z) q(π, μ, Λ) of the mixture, which factorises
further by itself — and the engine's free energy F is minus the full ELBO (every constant kept):
``−F = E[log p(X, Z, π, μ, Λ)] − E[log q]``.

**Schedule** (:func:`gmm_schedule`): one sweep is the M-step then the E-step of Bishop's algorithm,

    the Dirichlet prior, z → π (Σ_n r_nk),  the normal–Wishart prior, x → θ (the weighted sums),
    π → z (E[log π_k]),  x → z (E[log N(x_n | μ_k, Λ_k⁻¹)]),

so it starts from initial responsibilities (``init={"z": ...}``, :func:`initial_responsibilities`) as
scikit-learn's ``BayesianGaussianMixture`` does (an M-step from them, then E and M steps); after sweep t the
state is (θ_t = M(r_{t−1}), r_t = E(θ_t)), and the free energy is that state's.

**Fractional VB.** ``power=ω`` raises the likelihood node and the switch's prior to ω:
p^ω(X | Z, μ, Λ) p^ω(Z | π) (eq. 15 of the TVB paper); the engine scales their messages and energies by ω.
The paper's objective (16) also has q^ω(Z) in its denominator: with ``objective="fractional"`` (the default)
the entropy of q(Z) is weighted by ω as well (:func:`fgraph.entropy_weight`), so q(Z) ∝ (ρ^ω)^{1/ω} = ρ keeps
its untempered step and every sweep is Algorithm 3 (with the ω its derivation puts in the last term of W_k⁻¹,
docs/gmm.md); ``objective="tempered"`` leaves the entropy alone (q(Z) ∝ ρ^ω, another fractional objective).
ω = 1 is plain VB either way.

**Copies.** ``n_copies=R`` builds ``fg.Model(copies=R)``: every variable gets a leading axis of R, one
compiled plan runs them all; restart r is copy r. A power given per copy (an array of R values) fits R
fractional posteriors in one run; data of shape (R, N, d) gives each copy its own data set (resamples).

**Sizes of the data.** The priors are applied to the data as given; the natural parameters of q(μ, Λ)
hold Σ_n r_nk x_n x_nᵀ, so data far from the origin relative to its spread loses digits in W_k⁻¹ (about
log10((|x̄| / spread)²) of them): centre it first (the estimator :class:`fgraph.models.mixtures.bayesian_gmm.BayesianGMM`
does, exactly, by shifting m₀ with it).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

import fgraph as fg
from fgraph.errors import DataError, ModelError
from fgraph.families.normal_wishart import NormalWishart as NormalWishartFamily
from fgraph.families.special import digamma, gammaln
from fgraph.families.wishart import LOG_2, LOG_PI, log_multivariate_gamma
from fgraph.nodes.categorical import Categorical
from fgraph.nodes.dirichlet import Dirichlet
from fgraph.nodes.gaussian_mixture import GaussianMixture
from fgraph.nodes.normal_wishart import NormalWishart

__all__ = ["GMMPriors", "GMMNetwork", "build_gmm", "gmm_schedule", "initial_responsibilities", "fit_gmm", "GMMFit",
           "fit_gmm_copies", "GMMCopiesFit", "expected_log_weights", "log_responsibilities", "predictive_log_density", "sklearn_lower_bound_offset"]

LOG_2PI = float(np.log(2.0 * np.pi))


@dataclass(frozen=True)
class GMMPriors:
    """The hyper-parameters of the mixture; ``None`` takes scikit-learn's data-dependent default.

    weight_concentration : α₀, one number (every component) or K of them; default 1/K
    mean : m₀ (d,); default the data mean
    precision_scale : β₀ > 0; default 1
    scale : W₀ (d, d), symmetric positive definite (E[Λ_k] = ν₀ W₀ under the prior); default the inverse of the
        data's covariance (scikit-learn's ``covariance_prior`` is W₀⁻¹); ``"covariance"``: the data's covariance
        itself, W₀ = cov(X) (Liu & Li's code for the TVB paper, with ν₀ = d + 2)
    df : ν₀ > d − 1; default d
    """

    weight_concentration: object = None
    mean: object = None
    precision_scale: object = None
    scale: object = None
    df: object = None

    def resolved(self, X: np.ndarray, n_components: int) -> "GMMPriors":
        """Every hyper-parameter as an array, the defaults filled in from the data ``X`` (N, d) (a stack of
        data sets (R, N, d): from the first), checked (named :class:`~fgraph.errors.ModelError` otherwise)."""
        data = X[0] if X.ndim == 3 else X
        N, d = data.shape
        alpha = 1.0 / n_components if self.weight_concentration is None else self.weight_concentration
        alpha = np.broadcast_to(np.asarray(alpha, dtype=float), (n_components,)).copy() if np.ndim(alpha) == 0 \
            else np.asarray(alpha, dtype=float)
        if alpha.shape != (n_components,) or not np.all(np.isfinite(alpha)) or np.any(alpha <= 0.0):
            raise ModelError(f"GMM: weight_concentration α₀ must be one positive number or K = {n_components} of "
                             f"them, got {self.weight_concentration!r}")
        mean = data.mean(axis=0) if self.mean is None else np.asarray(self.mean, dtype=float)
        if mean.shape != (d,) or not np.all(np.isfinite(mean)):
            raise ModelError(f"GMM: the prior mean m₀ must be a finite vector of d = {d} numbers, got shape "
                             f"{mean.shape}")
        beta = 1.0 if self.precision_scale is None else self.precision_scale
        if not isinstance(beta, numbers.Real) or isinstance(beta, bool) or not np.isfinite(beta) or beta <= 0.0:
            raise ModelError(f"GMM: precision_scale β₀ must be a positive number, got {beta!r}")
        if self.scale is None:
            scale = _default_scale(data) if N > 1 else np.eye(d)
        elif isinstance(self.scale, str):
            if self.scale != "covariance":
                raise ModelError(f"GMM: the prior scale W₀ must be a matrix, None (the inverse of the data's "
                                 f"covariance) or 'covariance' (the data's covariance), got {self.scale!r}")
            scale = np.eye(d)
            if N > 1:
                _default_scale(data)  # raises its named errors for data that have no usable covariance
                scale = np.atleast_2d(np.cov(data.T))
        else:
            scale = np.asarray(self.scale, dtype=float)
        if scale.shape != (d, d) or not np.all(np.isfinite(scale)):
            raise ModelError(f"GMM: the prior scale W₀ must be a finite {d}x{d} matrix, got shape {scale.shape}")
        if np.max(np.abs(scale - scale.T)) > 1e-8 * np.max(np.abs(scale)):
            raise ModelError("GMM: the prior scale W₀ must be symmetric")
        eigenvalues = np.linalg.eigvalsh(scale)
        if not eigenvalues[0] > SINGULAR * max(eigenvalues[-1], 0.0):
            raise ModelError(f"GMM: the prior scale W₀ must be positive definite, but it is singular or indefinite "
                             f"(smallest eigenvalue {eigenvalues[0]:.3g}); E[Λ] = ν₀ W₀ would be a degenerate "
                             "precision")
        df = float(d) if self.df is None else self.df
        if not isinstance(df, numbers.Real) or isinstance(df, bool) or not np.isfinite(df) or df <= d - 1:
            raise ModelError(f"GMM: the prior degrees of freedom ν₀ must be greater than d − 1 = {d - 1}, got {df!r}")
        return GMMPriors(alpha, mean, float(beta), scale, float(df))


#: the smallest eigenvalue of W₀ over its largest below which :meth:`GMMPriors.resolved` calls it singular
SINGULAR = 1e-12


def _default_scale(data: np.ndarray) -> np.ndarray:
    """The default W₀, the inverse of the covariance of ``data`` (N > 1, d), or the named error of data that have
    none.

    The causes are told apart, since each has its own fix: variances that overflow or underflow float64 (data too
    large or too small: scale them), a constant feature or collinear ones (the correlations are singular), and
    features of magnitudes so different that the covariance is singular to float64 although the correlations are
    not (standardise them). Each was once "W₀ must be finite" or "W₀ must be positive definite", of a prior the user
    never gave."""
    with np.errstate(over="ignore", invalid="ignore"):
        covariance = np.atleast_2d(np.cov(data.T))
    variances = np.diag(covariance)
    if not np.all(np.isfinite(covariance)):
        columns = np.unique(np.argwhere(~np.isfinite(covariance)))
        raise DataError(f"GMM: X is too large: the covariance of its columns {', '.join(map(str, columns))} "
                        "overflows float64 (the default W₀ is its inverse); scale or standardise X first (e.g. a "
                        "StandardScaler in a pipeline)")
    singular = ModelError("GMM: the default W₀ is the inverse of the data's covariance, which is singular (a "
                          "constant feature, collinear features or fewer points than features); give the prior "
                          "scale W₀")
    if np.any(np.ptp(data, axis=0) == 0.0):
        raise singular
    tiny = np.flatnonzero(variances < np.finfo(float).tiny)  # zero too: the squares of the deviations underflowed
    if tiny.size:
        one = tiny.size == 1
        raise DataError(f"GMM: X is too small: the variance{'' if one else 's'} of its column{'' if one else 's'} "
                        f"{', '.join(map(str, tiny))} underflow{'s' if one else ''} float64 (to "
                        f"{variances[tiny[0]]:.3g}), so the "
                        "default W₀, the inverse of the data's covariance, cannot be formed; scale or standardise X "
                        "first (e.g. a StandardScaler in a pipeline)")
    spread = np.sqrt(variances)
    correlation = covariance / np.outer(spread, spread)
    correlation_eigenvalues = np.linalg.eigvalsh(correlation)
    if not correlation_eigenvalues[0] > SINGULAR * correlation_eigenvalues[-1]:
        raise singular
    try:
        scale = np.linalg.inv(covariance)
        eigenvalues = np.linalg.eigvalsh(scale) if np.all(np.isfinite(scale)) else np.zeros(2)
    except np.linalg.LinAlgError:
        eigenvalues = np.zeros(2)
    if not eigenvalues[0] > SINGULAR * max(eigenvalues[-1], 0.0):
        # the correlations are not singular: the magnitudes of the columns are
        wide, narrow = int(np.argmax(spread)), int(np.argmin(spread))
        raise DataError(f"GMM: the columns of X differ too much in magnitude for the default W₀, the inverse of the "
                        f"data's covariance, to be formed in float64 (column {wide} spreads over {spread[wide]:.3g}, "
                        f"column {narrow} over {spread[narrow]:.3g}); standardise X first (e.g. a StandardScaler in "
                        "a pipeline) or give the prior scale W₀ (covariance_prior, W₀⁻¹, of BayesianGMM)")
    return scale


@dataclass(frozen=True)
class GMMNetwork:
    """A built mixture: the model, its data (N, d) or (R, N, d), K components, R copies, the resolved priors and
    the power ω (a number, or R numbers)."""

    model: fg.Model
    X: np.ndarray
    n_components: int
    n_copies: int
    priors: GMMPriors
    power: object


def check_data(X, n_components, n_copies) -> tuple:
    """``(X, K, R)`` as :func:`build_gmm` takes them — X a float array (N, d), or (R, N, d) a data set per copy — or
    a named :class:`~fgraph.errors.DataError` / :class:`~fgraph.errors.ModelError`."""
    for name, value in (("n_components", n_components), ("n_copies", n_copies)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ModelError(f"GMM: {name} must be an integer >= 1, got {value!r}")
    try:
        X = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        raise DataError("GMM: X must be a numeric array of shape (N, d)") from None
    if X.ndim not in (2, 3) or X.shape[-1] < 1:
        raise DataError(f"GMM: X must be an array of shape (N, d) (or (R, N, d), a data set per copy), got shape "
                        f"{X.shape}")
    if X.ndim == 3 and X.shape[0] != n_copies:
        raise DataError(f"GMM: data per copy has the copies first, (R, N, d) with R = n_copies = {n_copies}; got "
                        f"shape {X.shape}")
    finite = np.all(np.isfinite(X), axis=-1)
    if not np.all(finite):
        bad = np.argwhere(~finite)
        first = tuple(int(i) for i in bad[0])
        raise DataError(f"GMM: X has NaN or infinite values in {len(bad)} rows (first at index {first}); "
                        "impute or drop them")
    N = X.shape[-2]
    if N < n_components:
        raise DataError(f"GMM: N = {N} points cannot fill K = {n_components} components; give N >= K")
    return X, int(n_components), int(n_copies)


def build_gmm(X, n_components: int, priors: GMMPriors | None = None, n_copies: int = 1, power=1.0,
              objective: str = "fractional") -> GMMNetwork:
    """The Bayesian GMM graph for data ``X`` (N, d) — or (R, N, d), a data set per copy — with K components.

    ``priors`` (:class:`GMMPriors`) default to scikit-learn's; ``n_copies`` R copies of the model (one graph,
    a leading copy axis on every variable); ``power`` ω ∈ (0, 1] on the likelihood and on the switch's prior
    (a number, or R numbers: one per copy). ``objective`` says what the power tempers: ``"fractional"`` (default)
    is the fractional VB of the TVB paper, eq. (16), the entropy of q(Z) weighted by ω too
    (:func:`fgraph.entropy_weight`), whose coordinate steps are its Algorithm 3; ``"tempered"`` is the node powers
    alone, the entropy of q(Z) unweighted and q(Z) ∝ ρ^ω (module docstring). Bad input is a
    :class:`~fgraph.errors.ModelError` (K < 1, a
    singular or indefinite W₀, ν₀ ≤ d − 1, other invalid priors or powers) or a
    :class:`~fgraph.errors.DataError` (N < K, NaN or infinite data, a wrong shape), raised before any graph
    is built.
    """
    X, K, R = check_data(X, n_components, n_copies)
    priors = (GMMPriors() if priors is None else priors)
    if not isinstance(priors, GMMPriors):
        raise ModelError(f"GMM: priors must be a GMMPriors, got {type(priors).__name__}")
    priors = priors.resolved(X, K)
    omega = np.asarray(power, dtype=float)
    if omega.ndim == 0:
        if not 0.0 < float(omega) <= 1.0:
            raise ModelError(f"GMM: the power ω must lie in (0, 1], got {power!r}")
        node_power = float(omega)
    else:
        if omega.shape != (R,) or not np.all((omega > 0.0) & (omega <= 1.0)):
            raise ModelError(f"GMM: a power per copy is R = {R} numbers in (0, 1], got {power!r}")
        node_power = fg.per_copy(omega)
    N, d = X.shape[-2:]
    data = fg.per_copy(X) if X.ndim == 3 else X
    with fg.Model(copies=R) as model:
        pi = Dirichlet("pi", priors.weight_concentration)
        z = Categorical("z", p=pi, batch_shape=(N,), power=node_power)
        theta = NormalWishart("theta", priors.mean, priors.precision_scale, priors.scale, priors.df,
                              batch_shape=(K, 1))
        GaussianMixture("x", switch=z, parameters=theta, observed=data, power=node_power)
    if objective == "fractional":
        if omega.ndim or float(omega) != 1.0:
            fg.entropy_weight(z, node_power)
    elif objective != "tempered":
        raise ModelError(f"GMM: objective must be 'fractional' or 'tempered', got {objective!r}")
    return GMMNetwork(model, X, K, R, priors, power if omega.ndim else float(omega))


def gmm_schedule() -> list:
    """One sweep as (node, interface) pairs: the M-step (q(π), q(θ)), then the E-step (q(Z)) (module docstring)."""
    return [("pi", "out"), ("z", "p"), ("theta", "out"), ("x", "parameters"), ("z", "out"), ("x", "switch")]


def initial_responsibilities(X, n_components: int, method: str = "kmeans", random_state=None,
                             n_copies: int = 1) -> np.ndarray:
    """Starting responsibilities (R, N, K) as scikit-learn's ``GaussianMixture`` makes them for ``init_params``:
    ``"kmeans"`` (one k-means run, one-hot), ``"k-means++"`` (one-hot at the seeds), ``"random"`` (uniform draws,
    normalised) or ``"random_from_data"`` (one-hot at K points drawn without replacement). The R copies take
    successive draws from one ``check_random_state(random_state)``, as its ``n_init`` restarts do, so that
    the same ``random_state`` gives the same starts."""
    from sklearn.cluster import KMeans, kmeans_plusplus
    from sklearn.utils import check_random_state

    X = np.asarray(X, dtype=float)
    rng = check_random_state(random_state)
    N, K = X.shape[0], int(n_components)
    starts = []
    for _ in range(int(n_copies)):
        resp = np.zeros((N, K))
        if method == "kmeans":
            labels = KMeans(n_clusters=K, n_init=1, random_state=rng).fit(X).labels_
            resp[np.arange(N), labels] = 1.0
        elif method == "random":
            resp = rng.uniform(size=(N, K))
            resp /= resp.sum(axis=1)[:, None]
        elif method == "random_from_data":
            indices = rng.choice(N, size=K, replace=False)
            resp[indices, np.arange(K)] = 1.0
        elif method == "k-means++":
            _, indices = kmeans_plusplus(X, K, random_state=rng)
            resp[indices, np.arange(K)] = 1.0
        else:
            raise ModelError(f"GMM: unknown initialisation {method!r}; use 'kmeans', 'k-means++', 'random' or "
                             "'random_from_data'")
        starts.append(resp)
    return np.stack(starts)


@dataclass
class GMMFit:
    """The result of :func:`fit_gmm`: the engine's result, the ELBO −F per sweep and copy (iterations, R), whether
    every copy settled within ``tol`` and the number of sweeps."""

    network: GMMNetwork
    result: object
    elbo: np.ndarray
    converged: bool | None
    iterations: int

    def posteriors(self) -> dict:
        """q per copy, the copy axis first: ``alpha`` (R, K), ``mean`` m (R, K, d), ``precision_scale`` β (R, K),
        ``scale`` W (R, K, d, d), ``df`` ν (R, K), ``responsibilities`` r (R, N, K)."""
        q_pi = self.result.marginal("pi")
        q_theta = self.result.marginal("theta")
        q_z = self.result.marginal("z")
        R, K = self.network.n_copies, self.network.n_components
        d = q_theta.dim
        return {
            "alpha": np.array(q_pi.alpha).reshape(R, K),
            "mean": np.array(q_theta.location).reshape(R, K, d),
            "precision_scale": np.array(q_theta.precision_scale).reshape(R, K),
            "scale": np.array(q_theta.scale).reshape(R, K, d, d),
            "df": np.array(q_theta.df).reshape(R, K),
            "responsibilities": np.array(q_z.probabilities).reshape(R, -1, K),
        }


def fit_gmm(network: GMMNetwork, responsibilities, iterations: int = 100, tol: float | None = 1e-8,
            last_only: bool = False) -> GMMFit:
    """VMP from starting responsibilities (N, K) (shared) or (R, N, K) (one per copy; they are read by the first
    M-step only, so rows of zeros — points that do not count in it — are allowed), at most ``iterations``
    sweeps of :func:`gmm_schedule`, stopping when every copy's ELBO changed by less than ``tol`` nats
    (``tol=None``: exactly ``iterations`` sweeps). ``last_only`` (with ``tol=None``): the ELBO after the last
    sweep only (``elbo`` of one row), not after each — a third of a sweep's time saved."""
    import warnings

    from fgraph.errors import ConvergenceWarning

    R, K = network.n_copies, network.n_components
    N = network.X.shape[-2]
    resp = np.asarray(responsibilities, dtype=float)
    if resp.shape not in ((N, K), (R, N, K)):
        raise DataError(f"GMM: starting responsibilities must have shape (N, K) = {(N, K)} or (R, N, K) = "
                        f"{(R, N, K)}, got {resp.shape}")
    totals = resp.sum(-1)
    if not (np.all(np.isfinite(resp)) and np.all(resp >= 0.0) and np.all(np.isclose(totals, 1.0) | (totals == 0.0))
            and np.any(totals > 0.0, axis=-1).all()):
        raise DataError("GMM: starting responsibilities must be probabilities (rows >= 0 summing to one; rows of zeros "
                        "are allowed, as scikit-learn's 'k-means++' and 'random_from_data' starts have them)")
    if resp.ndim == 2:
        resp = np.broadcast_to(resp, (R, N, K))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the caller reads `converged`
        result = fg.infer(network.model, algorithm="vmp", schedule=gmm_schedule(), iterations=int(iterations),
                          tol=tol, init={"z": fg.Categorical(resp, check=False)},  # rows of zeros allowed
                          **({"free_energy": "last"} if last_only else {}))
    free_energy = np.array(result.free_energy, dtype=float).reshape(len(result.free_energy), R)
    return GMMFit(network, result, -free_energy, result.converged, result.iterations)


@dataclass
class GMMCopiesFit:
    """The result of :func:`fit_gmm_copies`, per copy (the copy axis first): the posteriors (as
    :meth:`GMMFit.posteriors`), the last ELBO (R,), the sweeps each copy ran (R,) and whether it settled (R,)."""

    posteriors: dict
    elbo: np.ndarray
    iterations: np.ndarray
    converged: np.ndarray


def fit_gmm_copies(X, n_components: int, responsibilities, priors: GMMPriors | None = None, power=1.0,
                   iterations: int = 1000, tol: float | None = 1e-6, check_every: int = 10,
                   objective: str = "fractional", batch_size: int | None = None) -> GMMCopiesFit:
    """Fit R copies — restarts, powers ω, resamples: ``X`` (N, d) shared or (R, N, d), ``power`` one number or R,
    starting ``responsibilities`` (R, N, K) — each stopping on its own.

    The copies run as one graph (:func:`build_gmm` with ``n_copies``), ``check_every`` sweeps at a time, the
    ELBO computed after a round's last sweep only; after each round a copy whose ELBO changed by less than
    ``tol`` nats over the round has settled and leaves, and the others go on as a smaller graph, started from
    their current responsibilities. That is the state they were in, exactly: a sweep begins with the M-step,
    which reads q(Z) alone. So a copy stops after the same number of sweeps, with the same posteriors, whether it
    is fitted alone or among others, and a batch no longer runs until its slowest copy has settled (with ω on a
    grid down to 10⁻³ the sweeps a copy needs vary tenfold). ``tol=None`` runs every copy ``iterations`` sweeps.

    ``batch_size``: at most this many copies in the graph at once (default: all R); the others wait in order
    and join, from their starting responsibilities, as copies settle, so the graph stays full — a sweep of one
    copy costs about as much as a sweep of dozens, and copies that need many sweeps no longer run alone at the
    end. A copy joins at the start of a round and every round is ``check_every`` sweeps of its own count (a copy
    whose last round is shorter runs it in a graph of its own), so its numbers do not depend on ``batch_size``.
    """
    X = np.asarray(X, dtype=float)
    resp = np.array(responsibilities, dtype=float)
    if resp.ndim != 3:
        raise DataError(f"GMM: starting responsibilities per copy must have shape (R, N, K), got {resp.shape}")
    R = resp.shape[0]
    power = np.asarray(power, dtype=float)
    powers = np.broadcast_to(power, (R,)) if power.ndim == 0 else power
    if powers.shape != (R,):
        raise ModelError(f"GMM: a power per copy is R = {R} numbers, got shape {powers.shape}")
    check_every = int(check_every)
    if check_every < 1:
        raise ModelError(f"GMM: check_every must be >= 1 sweep, got {check_every}")
    capacity = R if batch_size is None else int(batch_size)
    if capacity < 1:
        raise ModelError(f"GMM: batch_size must be >= 1 copy, got {batch_size}")
    per_copy_data = X.ndim == 3
    K = int(n_components)
    results, elbo = {}, np.full(R, np.nan)
    swept, converged = np.zeros(R, dtype=int), np.zeros(R, dtype=bool)
    previous = np.full(R, np.nan)  # the ELBO after the previous round (none before the first: it never settles)
    waiting = list(range(R))
    active = np.array([], dtype=int)
    while True:
        joining, waiting = waiting[:capacity - active.size], waiting[capacity - active.size:]
        active = np.concatenate([active, np.array(joining, dtype=int)])
        if active.size == 0:
            break
        lengths = np.minimum(check_every, int(iterations) - swept[active])
        finished = []
        for length in np.unique(lengths):  # one graph per round length: the copies near `iterations` apart
            group = active[lengths == length]
            omega = powers[group]
            network = build_gmm(X[group] if per_copy_data else X, K, priors, n_copies=group.size,
                                power=omega if np.any(omega != omega[0]) else float(omega[0]), objective=objective)
            fit = fit_gmm(network, resp[group], iterations=int(length), tol=None, last_only=True)
            posteriors = fit.posteriors()
            last = fit.elbo[-1]  # (G,)
            swept[group] += int(length)
            elbo[group] = last
            settled = (np.abs(last - previous[group]) < tol) if tol is not None else np.zeros(group.size, dtype=bool)
            done = settled | (swept[group] >= int(iterations))
            converged[group] = settled
            for key, value in posteriors.items():
                if key not in results:
                    results[key] = np.empty((R,) + value.shape[1:])
                results[key][group[done]] = value[done]
            resp[group] = posteriors["responsibilities"]
            previous[group] = last
            finished.extend(group[done].tolist())
        active = active[~np.isin(active, finished)]
    return GMMCopiesFit(results, elbo, swept, converged)


# ------------------------------------------------------------------ from the posteriors (numpy, no graph)
def expected_log_weights(alpha: np.ndarray) -> np.ndarray:
    """E[log π_k] = ψ(α_k) − ψ(Σ_j α_j), the same shape as ``alpha`` (..., K)."""
    alpha = np.asarray(alpha, dtype=float)
    return digamma(alpha) - digamma(alpha.sum(axis=-1, keepdims=True))


def _family(posteriors: dict) -> NormalWishartFamily:
    return NormalWishartFamily(posteriors["mean"], posteriors["precision_scale"], posteriors["scale"],
                               posteriors["df"], check=False)


def log_responsibilities(posteriors: dict, X) -> np.ndarray:
    """log r_nk of new points ``X`` (M, d) under the posteriors of one fit (``alpha`` (K,), ...) or of R fits
    (leading axis R): the E-step, log ρ_nk = E[log π_k] + E[log N(x_n | μ_k, Λ_k⁻¹)], normalised; shape
    ``(..., M, K)``."""
    X = np.asarray(X, dtype=float)
    q = _family(posteriors)
    d = q.dim
    log_rho = (expected_log_weights(posteriors["alpha"])[..., None, :] + 0.5 * q.mean_logdet[..., None, :]
               - 0.5 * d * LOG_2PI - 0.5 * q.expected_quadratic_forms(X[..., :, None, :]))
    return log_rho - np.logaddexp.reduce(log_rho, axis=-1, keepdims=True)


def predictive_log_density(posteriors: dict, X) -> np.ndarray:
    """log p(x | data) of new points ``X`` (M, d): the posterior predictive, a mixture of Student-t's
    Σ_k (α_k / Σ_j α_j) St(x | m_k, L_k⁻¹, ν_k + 1 − d) with L_k = (ν_k + 1 − d) β_k / (1 + β_k) W_k
    (Bishop eq. 10.81); shape ``(..., M)`` for posteriors with leading axes."""
    X = np.asarray(X, dtype=float)
    alpha = np.asarray(posteriors["alpha"], dtype=float)
    beta = np.asarray(posteriors["precision_scale"], dtype=float)
    df = np.asarray(posteriors["df"], dtype=float)
    scale = np.asarray(posteriors["scale"], dtype=float)
    mean = np.asarray(posteriors["mean"], dtype=float)
    d = mean.shape[-1]
    dof = df + 1.0 - d  # (..., K)
    precision_factor = (dof * beta / (1.0 + beta))  # L_k = precision_factor W_k
    factor = np.linalg.cholesky(scale)  # W_k = F Fᵀ
    difference = X[..., :, None, :] - mean[..., None, :, :]  # (..., M, K, d)
    whitened = np.einsum("...mki,...kij->...mkj", difference, factor)
    quadratic = precision_factor[..., None, :] * np.sum(whitened * whitened, axis=-1)  # (..., M, K)
    log_det_precision = d * np.log(precision_factor) + 2.0 * np.sum(np.log(np.diagonal(factor, axis1=-2, axis2=-1)),
                                                                      axis=-1)
    log_t = (gammaln(0.5 * (dof + d)) - gammaln(0.5 * dof) - 0.5 * d * (np.log(dof) + LOG_PI)
             + 0.5 * log_det_precision)[..., None, :] \
        - 0.5 * (dof + d)[..., None, :] * np.log1p(quadratic / dof[..., None, :])
    log_weights = np.log(alpha) - np.log(alpha.sum(axis=-1, keepdims=True))
    return np.logaddexp.reduce(log_weights[..., None, :] + log_t, axis=-1)


def sklearn_lower_bound_offset(priors: GMMPriors, n_samples: int) -> float:
    """ELBO − scikit-learn's ``lower_bound_`` for ``BayesianGaussianMixture(weight_concentration_prior_type=
    "dirichlet_distribution", covariance_type="full")`` with the same (resolved) priors, at a state where q(π, μ, Λ)
    is optimal for q(Z) (after an M-step: every bound scikit-learn reports, and the fixed point):

        log C(α₀) + K ((d/2) log β₀ + log B(W₀, ν₀)) − (N d / 2) log 2π + K d (d − 1)/4 log π,

    log C(α) = log Γ(Σ_k α_k) − Σ_k log Γ(α_k) and log B(W, ν) = −(ν/2) log |W| − (ν d/2) log 2 − log Γ_d(ν/2)
    (Bishop B.23, B.79). scikit-learn keeps H[q(Z)] − Σ_k [log C(α) + (d/2) log β_k + log B(W_k, ν_k)] without the
    log π of Γ_d; the rest of the full ELBO at such a state is this constant (docs/gmm.md derives it).
    """
    alpha = np.asarray(priors.weight_concentration, dtype=float)
    K, d = alpha.shape[0], priors.mean.shape[0]
    nu, W = float(priors.df), np.asarray(priors.scale, dtype=float)
    log_c = gammaln(alpha.sum()) - gammaln(alpha).sum()
    log_b = -0.5 * nu * np.linalg.slogdet(W)[1] - 0.5 * nu * d * LOG_2 - log_multivariate_gamma(0.5 * nu, d)
    return float(log_c + K * (0.5 * d * np.log(priors.precision_scale) + log_b) - 0.5 * n_samples * d * LOG_2PI
                 + 0.25 * K * d * (d - 1) * LOG_PI)

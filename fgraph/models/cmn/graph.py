"""The conditional mixture network (CAVI-CMN) as a graph of nodes, random restarts as copies of one model.

For N points x0 (d inputs, x̃0 = [x0; 1], D = d + 1), labels y ∈ {0..L−1},
K experts and a latent dimension h (default L − 1; x̃1 = [x1; 1]):

    z  | x0  ~ StickBreakingLogistic(β0_0 … β0_{K−2}; x0)          the gate        (node ``"z"``)
    x1 | z=k ~ N(A_k x̃0, Λ_k⁻¹),  Λ_k = diag(λ_k)                  the experts     (node ``"x1"``)
    y  | x1  ~ StickBreakingLogistic(β1_0 … β1_{L−2}; x1)           the output      (node ``"y"``)
    β0_j ~ N(b_j, σ0² I_D),  β1_l ~ N(b_l, σ1² I_{h+1}),
    A_k | λ_k ~ MN(0, Λ_k⁻¹, v0 I_D),  λ_ki ~ Gamma(a0, rate b0)      (``"theta"``, batch (K, 1))

with the priors of eq. (4) of Heins et al. (:class:`CMNPriors`; the sticks' prior means b zero but for the
intercepts −log(J − j) of the authors' code, ``stick_bias``). Under VMP the
posterior is the paper's q(β0) q(β1) q(A, Λ) q(x1 | z) q(z) with the
Pólya-Gamma factors at their optimum (the tilts ``z_xi``, ``y_xi``).

**Restarts.** R restarts are ``fg.Model(copies=R)``: one compiled graph whose
every variable has a leading axis of R, run on arrays; restart r is copy r
(``result.copy(r)``), and the free energy is reported per restart, shape
``(iterations, R)``.

**Initial state** (:func:`initial_state`, from a seed, per restart). By default
(``initial="prior-mean"``) the authors' (VersesTech/cavi-cmn, ``sample_initial_betas=False`` and
``init_posterior_scale=100`` of ``MultinomialRegression``, ``LinearMNG.__init__``): every q(β0_j) and q(β1_l)
at its prior mean (with the sticks' bias where the priors have it, :class:`CMNPriors`) and covariance I/100,
the experts' M_k uniform in ±3/√D entrywise (their only draw, so the restarts differ in the experts alone),
V_k = I, shape a0 and rates b0. ``initial="draws"`` draws the coefficients too: q(β0_j) = N(m, I) with
m ~ N(0, I/D), q(β1_l) = N(m, I) with m ~ N(0, I/(h + 1)), M_k ~ N(0, 1/D) entrywise (D = d + 1: the variance
of a draw times the length of z-scored inputs stays about one, so no expert or gate starts saturated; with
N(0, 1) draws, the spread over restarts of breast cancer's test accuracy was fifteen times larger,
the history of docs/benchmarks.md), made in that order (β0 means, β1 means, M). Either way the draws come from
``numpy.random.default_rng(seed)``, each with the restart axis first, and the one local factor the first sweep
reads is q(x1) as the mixture Σ_k (1/K) N(M_k x̃0, diag(b_k / a_k)) (each expert's prediction at the mean of A
with its expected noise, q(z) uniform).

**Schedule** (:func:`cmn_schedule`): explicit, one coordinate-ascent iteration
in the order E-step then M-step,

    c1 (ξ of ``y``), the output's message to x1, c0 (ξ of ``z``), the gate's message to z,
    q(x1 | z) q(z) jointly (``x1`` → out, switch), c1, q(β1_l) for each l, q(β0_j) for each j,
    q(A, Λ), and the tilts c1, c0 at their optimum for the state the free energy is read at.

**The output under a Gaussian likelihood approximation** (``build_cmn(..., output="moment")``, or any of
:data:`fgraph.families.basis_matching.METHODS`): y | x1 ~ ``Softmax(β1_0 … β1_{L−1}; x1)`` with that operator —
each label becomes L Gaussian pseudo-observations of the logits (α_ε = ``alpha_epsilon``), so the output layer is
Gaussian regression on x1, with no tilts: the schedule drops c1's steps and updates the L output vectors.

The engine's default order is not used: it updates the gate's coefficients
before the experts (the M-step of β0 ahead of the E-step) and reads the
output's tilts from the previous sweep when it updates x1, so it is a
different coordinate ascent from the paper's (both decrease the free
energy). The one difference from the paper's CAVI in its usual statement
(eq. 10, one c1 refresh between q(x1 | z) and q(z)) is that q(x1 | z) and q(z)
are one cluster here, updated together at one c1: the exact coordinate step
on q(x1, z).

:func:`fit_cmn` runs it (``iterations``, ``tol``) and :func:`posteriors` reads
the posteriors per restart back as arrays with the restart axis first.
"""
from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass, field

import numpy as np

import fgraph as fg
from fgraph.errors import ConvergenceWarning, DataError, ModelError
from fgraph.families import MvNormalMeanCovariance
from fgraph.families.matrix_normal_gamma import MatrixNormalGamma as MatrixNormalGammaFamily
from fgraph.families.mixture import Mixture
from fgraph.models.cmn.priors import CMNPriors
from fgraph.models.workers import blocks, run_in_workers, worker_count
from fgraph.nodes.linear_experts import LinearExperts
from fgraph.nodes.matrix_normal_gamma import MatrixNormalGamma
from fgraph.nodes.mvnormal import MvNormal
from fgraph.nodes.softmax import APPROXIMATIONS, Softmax
from fgraph.nodes.stick_breaking_logistic import StickBreakingLogistic

__all__ = ["CMNNetwork", "build_cmn", "cmn_schedule", "initial_state", "fit_cmn", "posteriors"]


@dataclass(frozen=True)
class CMNNetwork:
    """A built CMN: the model, its data and its sizes (N points, d inputs, K experts, L classes, latent h,
    R restarts)."""

    model: fg.Model
    x0: np.ndarray
    y: np.ndarray
    n_experts: int
    n_classes: int
    latent_dim: int
    n_restarts: int
    priors: CMNPriors
    output: str = "stick-breaking"
    alpha_epsilon: float = 0.1

    @property
    def n_outputs(self) -> int:
        """The output coefficient vectors: L − 1 sticks, or L classes under a likelihood approximation."""
        return self.n_classes - (self.output == "stick-breaking")

    @property
    def augmented_inputs(self) -> np.ndarray:
        """x̃0 = [x0; 1], (N, D)."""
        return np.column_stack([self.x0, np.ones(len(self.x0))])


def _check_data(x0, y, n_experts, latent_dim, n_restarts, n_classes):
    x0 = np.asarray(x0, dtype=float) if not isinstance(x0, np.ndarray) else x0.astype(float, copy=False)
    if x0.ndim != 2 or x0.shape[0] < 1 or x0.shape[1] < 1:
        raise DataError(f"CMN: x0 must be an array of shape (N, d) with N, d >= 1, got shape {x0.shape}")
    if not np.all(np.isfinite(x0)):
        rows = np.flatnonzero(~np.all(np.isfinite(x0), axis=1))
        raise DataError(f"CMN: x0 has NaN or infinite features in {rows.size} rows (first row {rows[0]}); "
                        "impute or drop them")
    y = np.asarray(y)
    if y.shape != (x0.shape[0],):
        raise DataError(f"CMN: y must be a vector of N = {x0.shape[0]} labels, got shape {y.shape}")
    if not (np.issubdtype(y.dtype, np.integer) or (np.issubdtype(y.dtype, np.floating)
                                                    and np.all(np.isfinite(y)) and np.all(y == np.round(y)))):
        raise DataError(f"CMN: y must hold integer labels 0..L−1, got dtype {y.dtype}")
    y = y.astype(np.int64)
    for name, value, least in (("n_experts", n_experts, 1), ("n_restarts", n_restarts, 1)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
            raise ModelError(f"CMN: {name} must be an integer >= {least}, got {value!r}")
    if n_classes is None:
        n_classes = int(y.max()) + 1 if y.min() >= 0 else 0
    if isinstance(n_classes, bool) or not isinstance(n_classes, numbers.Integral) or n_classes < 2:
        raise DataError(f"CMN: a classifier needs L >= 2 classes, got n_classes={n_classes!r}")
    if y.min() < 0 or y.max() >= n_classes:
        bad = y[(y < 0) | (y >= n_classes)]
        raise DataError(f"CMN: labels must lie in 0..{n_classes - 1} (L = {n_classes} classes); found {bad[0]} "
                        f"({bad.size} labels out of range)")
    present = np.unique(y)
    if present.size < 2:
        raise DataError(f"CMN: the labels hold a single class ({present[0]}); a classifier needs at least 2")
    latent_dim = n_classes - 1 if latent_dim is None else latent_dim
    if isinstance(latent_dim, bool) or not isinstance(latent_dim, numbers.Integral) or latent_dim < 1:
        raise ModelError(f"CMN: latent_dim must be an integer >= 1, got {latent_dim!r}")
    return x0, y, int(n_experts), int(latent_dim), int(n_restarts), int(n_classes)


def build_cmn(x0, y, n_experts: int, latent_dim: int | None = None, n_restarts: int = 1,
              n_classes: int | None = None, priors: CMNPriors = CMNPriors(), output: str = "stick-breaking",
              alpha_epsilon: float = 0.1) -> CMNNetwork:
    """The CMN graph for inputs ``x0`` (N, d) and labels ``y`` (N,) in 0..L−1, K = ``n_experts`` experts.

    ``latent_dim`` h defaults to L − 1; ``n_classes`` L to max(y) + 1; ``n_restarts`` R copies of the model
    (one graph, a leading restart axis on every variable). Bad input is a :class:`~fgraph.errors.DataError`
    (labels outside 0..L−1, a single class, NaN features) or :class:`~fgraph.errors.ModelError`
    (``n_experts`` < 1, ``latent_dim`` < 1).
    With K = 1 the gate has no sticks: z is the one expert, a known one-hot switch. ``output``: the stick-breaking
    Pólya-Gamma output (default) or a Gaussian likelihood approximation of a softmax output (module docstring).
    """
    x0, y, K, h, R, L = _check_data(x0, y, n_experts, latent_dim, n_restarts, n_classes)
    if output != "stick-breaking" and output not in APPROXIMATIONS:
        raise ModelError(f"CMN: output must be 'stick-breaking' or one of {', '.join(APPROXIMATIONS)}, got {output!r}")
    if not isinstance(priors, CMNPriors):
        raise ModelError(f"CMN: priors must be a CMNPriors, got {type(priors).__name__}")
    N, d = x0.shape
    D, H = d + 1, h + 1
    gate_means = priors.stick_prior_means(K - 1, D)
    with fg.Model(copies=R) as model:
        if K > 1:
            gate = [MvNormal(f"beta0_{j}", mean=gate_means[j], cov=priors.sigma0 ** 2 * np.eye(D))
                    for j in range(K - 1)]
            z = StickBreakingLogistic("z", coefficients=gate, input=x0)
        else:
            z = np.ones((N, 1))
        theta = MatrixNormalGamma("theta", np.zeros((K, 1, h, D)), priors.v0, priors.a0, priors.b0,
                                  batch_shape=(K, 1))
        x1 = LinearExperts("x1", switch=z, input=x0, parameters=theta)
        count = L - 1 if output == "stick-breaking" else L
        out_means = priors.stick_prior_means(count, H) if output == "stick-breaking" else np.zeros((count, H))
        vectors = [MvNormal(f"beta1_{l}", mean=out_means[l], cov=priors.sigma1 ** 2 * np.eye(H))
                   for l in range(count)]
        if output == "stick-breaking":
            StickBreakingLogistic("y", coefficients=vectors, input=x1, observed=y)
        else:
            Softmax("y", vectors, x1, observed=y, operator=output, alpha_epsilon=alpha_epsilon)
    return CMNNetwork(model, x0, y, K, L, h, R, priors, output, float(alpha_epsilon))


def cmn_schedule(n_experts: int, n_classes: int, e_step_passes: int = 1, output: str = "stick-breaking") -> list:
    """One iteration as (node, interface) pairs: the E-step, then the M-step, then the tilts (module docstring).

    ``e_step_passes`` > 1 repeats the E-step (c1, the output's and the gate's messages, q(x1 | z) q(z)) that
    many times before the M-step: the local iterations of the paper's Appendix A (eq. 23).

    With one expert (no gate, a known switch) q(A, Λ) comes first instead: the experts' node then treats x1 by
    mean field, and its free-energy term is read off the scale of its message to x1, which is that of the
    current state only if q(A, Λ) was updated before that message (docs/linear-experts.md).
    """
    K, L = n_experts, n_classes
    tilts = output == "stick-breaking"  # an approximated output has no tilts c1: drop ("y", "xi")
    output = [step for l in range(L - 1 if tilts else L) for step in ((f"beta1_{l}", "out"),
                                                                      ("y", f"coefficients{l + 1}"))]
    c1 = [("y", "xi")] if tilts else []
    if isinstance(e_step_passes, bool) or not isinstance(e_step_passes, numbers.Integral) or e_step_passes < 1:
        raise ModelError(f"CMN: e_step_passes must be an integer >= 1, got {e_step_passes!r}")
    if K == 1:
        return ([("theta", "out"), ("x1", "parameters")] + (c1 + [("y", "input"), ("x1", "out")]) * e_step_passes
                + c1 + output + c1)
    gate = [step for j in range(K - 1) for step in ((f"beta0_{j}", "out"), ("z", f"coefficients{j + 1}"))]
    e_step = c1 + [("y", "input"), ("z", "xi"), ("z", "out"), ("x1", "out"), ("x1", "switch")]
    return (e_step * e_step_passes + c1
            + output + gate + [("theta", "out"), ("x1", "parameters")] + c1 + [("z", "xi")])


INITIAL_STATES = ("draws", "prior-mean")
#: the variance of the coefficients' initial posteriors (times I) of each kind of initial state
_COEFFICIENT_VARIANCE = {"draws": 1.0, "prior-mean": 0.01}


def initial_state(network: CMNNetwork, seed=None, initial: str = "prior-mean") -> dict:
    """A random initial state per restart, as ``init=`` for :func:`fgraph.infer` (module docstring): ``initial``
    ``"prior-mean"`` (the default, the authors') or ``"draws"``."""
    return _initial_state_from(network, *_initial_draws(network, seed, initial))


def _initial_draws(network: CMNNetwork, seed, initial: str = "prior-mean") -> tuple:
    """The random part of :func:`initial_state`: the means of q(β0), q(β1) and M and the coefficients' initial
    variance, the restart axis first."""
    if initial not in INITIAL_STATES:
        raise ModelError(f"CMN: initial must be one of {', '.join(map(repr, INITIAL_STATES))}, got {initial!r}")
    rng = np.random.default_rng(seed)
    R, K, h = network.n_restarts, network.n_experts, network.latent_dim
    D = network.x0.shape[1] + 1
    variance = np.full(R, _COEFFICIENT_VARIANCE[initial])
    if initial == "prior-mean":
        priors = network.priors
        gate_mean = np.broadcast_to(priors.stick_prior_means(K - 1, D), (R, K - 1, D))
        out_means = (priors.stick_prior_means(network.n_outputs, h + 1) if network.output == "stick-breaking"
                     else np.zeros((network.n_outputs, h + 1)))
        out_mean = np.broadcast_to(out_means, (R, network.n_outputs, h + 1))
        M = rng.uniform(-3.0 / np.sqrt(D), 3.0 / np.sqrt(D), size=(R, K, h, D))
        return gate_mean, out_mean, M, variance
    gate_mean = rng.standard_normal((R, K - 1, D)) / np.sqrt(D)
    out_mean = rng.standard_normal((R, network.n_outputs, h + 1)) / np.sqrt(h + 1)
    M = rng.standard_normal((R, K, h, D)) / np.sqrt(D)
    return gate_mean, out_mean, M, variance


def _initial_state_from(network: CMNNetwork, gate_mean, out_mean, M, variance) -> dict:
    """:func:`initial_state` from its draws (:func:`_initial_draws`)."""
    R, K, h = network.n_restarts, network.n_experts, network.latent_dim
    xt = network.augmented_inputs
    N, D = xt.shape
    H, p = h + 1, network.priors
    init = {"theta": MatrixNormalGammaFamily(M[:, :, None], np.eye(D), np.full((R, K, 1, 1), p.a0),
                                             np.full((R, K, 1, h), p.b0))}
    scale = variance[:, None, None]
    for j in range(K - 1):
        init[f"beta0_{j}"] = MvNormalMeanCovariance(gate_mean[:, j], scale * np.eye(D))
    for l in range(network.n_outputs):
        init[f"beta1_{l}"] = MvNormalMeanCovariance(out_mean[:, l], scale * np.eye(H))
    noise = (p.b0 / p.a0) * np.eye(h)  # 1 / E[λ] at the initial shape and rates
    predictions = np.einsum("rkid,nd->rnki", M, xt)  # (R, N, K, h)
    components = [MvNormalMeanCovariance(predictions[:, :, k], noise) for k in range(K)]
    init["x1"] = Mixture.create(np.full((R, N, K), -np.log(K)), components)
    return init


@dataclass
class CMNFit:
    """A fitted CMN: the network, the ELBO per iteration and restart ``(iterations, R)``, whether every restart
    converged, the sweeps run, and the engine's result (``None`` when the restarts ran in worker processes)."""

    network: CMNNetwork
    elbo: np.ndarray
    converged: bool
    iterations: int
    result: object = None
    _posteriors: dict | None = field(default=None, repr=False)

    @property
    def best_restart(self) -> int:
        """The restart of highest final ELBO (read it with ``posteriors()[key][r]``)."""
        return int(np.argmax(self.elbo[-1]))

    def posteriors(self) -> dict:
        """:func:`posteriors` of this fit, the restart axis first."""
        if self._posteriors is None:
            self._posteriors = posteriors(self.network, self.result)
        return self._posteriors


def fit_cmn(network: CMNNetwork, iterations: int = 200, tol: float | None = None, seed=None, init: dict | None = None,
            n_jobs: int | None = None, e_step_passes: int = 1, initial: str = "prior-mean", **infer_options) -> CMNFit:
    """Run the CMN's VMP: ``iterations`` sweeps at most, stopping once every restart's ELBO changed by less than
    ``tol`` (nats); from ``init`` (as :func:`initial_state` returns) or the random state of ``seed`` of kind
    ``initial`` (the authors' ``"prior-mean"``, the default, or ``"draws"``; module docstring); each sweep with
    ``e_step_passes`` E-steps (:func:`cmn_schedule`).

    ``n_jobs`` > 1 (−1: one per CPU; ``None``: 1) splits the R restarts into that many blocks of consecutive
    restarts, each a graph of its own fitted in a worker process (joblib), from the same initial states as one
    fit of all R. Without ``tol`` the result is that fit's; with ``tol`` a block stops once its own restarts
    have converged, and its ELBO is repeated to the last iteration of the slowest block.

    ``infer_options`` go to :func:`fgraph.infer`; ``free_energy="last"`` computes the ELBO once, after the last
    sweep (``elbo`` then has one row): the sweeps without the cost of an ELBO each (no ``tol`` then).
    """
    if isinstance(iterations, bool) or not isinstance(iterations, numbers.Integral) or iterations < 1:
        raise ModelError(f"fit_cmn: iterations must be an integer >= 1, got {iterations!r}")
    jobs = worker_count(n_jobs, network.n_restarts, "fit_cmn")
    schedule = cmn_schedule(network.n_experts, network.n_classes, e_step_passes, network.output)
    if jobs == 1:
        init = initial_state(network, seed, initial) if init is None else init
        return _fit_in_process(network, int(iterations), tol, init, schedule, infer_options)
    if init is not None:
        raise ModelError("fit_cmn: with n_jobs > 1 every block of restarts starts from the initial state of seed; "
                         "pass seed instead of init, or n_jobs=1")
    return _fit_in_workers(network, int(iterations), tol, seed, jobs, schedule, infer_options, initial)


def _fit_in_process(network: CMNNetwork, iterations: int, tol, init: dict, schedule: list,
                    infer_options: dict) -> CMNFit:
    result = fg.infer(network.model, algorithm="vmp", iterations=iterations, tol=tol, schedule=schedule, init=init,
                      **infer_options)
    elbo = -np.array(result.free_energy, dtype=float).reshape(len(result.free_energy), network.n_restarts)
    return CMNFit(network, elbo, bool(result.converged), int(result.iterations), result)


def _fit_in_workers(network: CMNNetwork, iterations: int, tol, seed, jobs: int, schedule: list,
                    infer_options: dict, initial: str = "prior-mean") -> CMNFit:
    """:func:`fit_cmn` with the restarts split into ``jobs`` blocks, one worker process each."""
    draws = _initial_draws(network, seed, initial)
    fits = run_in_workers(_fit_restart_block, [
        (network.x0, network.y, network.n_experts, network.latent_dim, network.n_classes, network.priors,
         (network.output, network.alpha_epsilon), [draw[block] for draw in draws], iterations, tol, schedule,
         infer_options)
        for block in blocks(network.n_restarts, jobs)])
    for message in dict.fromkeys(message for *_, said in fits for message in said):  # a worker's warnings, here
        warnings.warn(message, ConvergenceWarning, stacklevel=3)
    longest = max(len(elbo) for elbo, *_ in fits)
    elbo = np.concatenate([np.pad(elbo, ((0, longest - len(elbo)), (0, 0)), mode="edge") for elbo, *_ in fits],
                          axis=1)
    found = {key: np.concatenate([block[3][key] for block in fits]) for key in fits[0][3]}
    return CMNFit(network, elbo, all(block[1] for block in fits), longest, None, found)


def _fit_restart_block(x0, y, n_experts, latent_dim, n_classes, priors, output, draws, iterations, tol, schedule,
                       infer_options):
    """One worker's block of restarts (:func:`_fit_in_workers`): (ELBO, converged, iterations, posteriors, the
    convergence warnings' messages)."""
    network = build_cmn(x0, y, n_experts, latent_dim, len(draws[0]), n_classes, priors, *output)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", ConvergenceWarning)
        fit = _fit_in_process(network, iterations, tol, _initial_state_from(network, *draws), schedule,
                              infer_options)
    messages = [str(warning.message) for warning in said if issubclass(warning.category, ConvergenceWarning)]
    return fit.elbo, fit.converged, fit.iterations, fit.posteriors(), messages


def posteriors(network: CMNNetwork, result) -> dict:
    """The posteriors per restart, the restart axis first (R restarts, N points, K experts, L classes, D = d + 1,
    H = h + 1):

    ``gate_mean`` (R, K−1, D), ``gate_cov`` (R, K−1, D, D) — q(β0_j); ``out_mean`` (R, L−1, H), ``out_cov`` —
    q(β1_l) (L of them under an approximated output); ``M`` (R, K, h, D), ``V`` (R, K, D, D), ``a`` (R, K) (the shape of the first row; every row
    shares it under these priors), ``b`` (R, K, h) — q(A_k, Λ_k); ``x1_mean`` (R, N, K, h), ``x1_cov``
    (R, N, K, h, h) — q(x1 | z = k); ``gamma`` (R, N, K) — q(z).
    """
    R, K, h = network.n_restarts, network.n_experts, network.latent_dim
    N, D = network.x0.shape[0], network.x0.shape[1] + 1
    theta = result.marginal("theta")
    x1 = result.marginal("x1")
    components = x1.components if isinstance(x1, Mixture) else [x1]
    if K > 1:
        gamma = np.broadcast_to(result.marginal("z").probabilities, (R, N, K))
        gate = [result.marginal(f"beta0_{j}") for j in range(K - 1)]
        gate_mean = np.stack([q.mean for q in gate], axis=1)
        gate_cov = np.stack([np.broadcast_to(q.cov, (R, D, D)) for q in gate], axis=1)
    else:
        gamma = np.ones((R, N, 1))
        gate_mean, gate_cov = np.zeros((R, 0, D)), np.zeros((R, 0, D, D))
    output = [result.marginal(f"beta1_{l}") for l in range(network.n_outputs)]
    return {
        "gate_mean": gate_mean, "gate_cov": gate_cov,
        "out_mean": np.stack([q.mean for q in output], axis=1),
        "out_cov": np.stack([np.broadcast_to(q.cov, (R, h + 1, h + 1)) for q in output], axis=1),
        "M": np.broadcast_to(theta.matrix_mean, (R, K, 1, h, D))[:, :, 0],
        "V": np.broadcast_to(theta.column_covariance, (R, K, 1, D, D))[:, :, 0],
        "a": np.broadcast_to(theta.shape, (R, K, 1, h))[:, :, 0, 0],
        "b": np.broadcast_to(theta.rate, (R, K, 1, h))[:, :, 0],
        "x1_mean": np.stack([np.broadcast_to(c.mean, (R, N, h)) for c in components], axis=2),
        "x1_cov": np.stack([np.broadcast_to(c.cov, (R, N, h, h)) for c in components], axis=2),
        "gamma": np.array(gamma),
    }

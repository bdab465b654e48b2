"""Predictions of a fitted conditional mixture network (CMN) from its posteriors, in numpy.

The posteriors are the dict of :func:`fgraph.models.cmn.graph.posteriors` (restart axis first; R restarts,
K experts, L classes, h latent dimensions, D = d + 1, H = h + 1): ``gate_mean`` (R, K−1, D),
``gate_cov`` (R, K−1, D, D) — q(β0_j) = N; ``out_mean`` (R, L−1, H), ``out_cov`` (R, L−1, H, H) —
q(β1_l) = N; ``M`` (R, K, h, D), ``V`` (R, K, D, D), ``a`` (R, K), ``b`` (R, K, h) — q(A_k, Λ_k):
λ_ki ~ Gamma(a_k, rate b_ki), row i of A_k | λ_ki ~ N(m_ki, V_k / λ_ki). Other keys are ignored.

**The predictive** (:func:`predictive_log_proba`). For a new x0 (x̃0 = [x0; 1]),

    p(y | x0, data) ≈ E_q[p(y | x0, θ)] = Σ_k E_q(β0)[p(z = k | x0, β0)] · E_{x1 ~ T_k}[E_q(β1)[p(y | x1, β1)]],

because q factorises as q(β0) q(A, Λ) q(β1): the gate's term involves β0 only, the expert's
x1 | z = k involves (A_k, Λ_k) only, and the output given x1 involves β1 only. Within β0 (and within
β1) the sticks are independent under q, so each expectation of a stick-breaking product is the product
of the sticks' one-dimensional expectations E[σ(±ψ)], ψ ~ N(mean, std²), computed by quadrature
(:func:`expected_sigmoid`, :func:`stick_probabilities`: the quadratures of the logistic estimators'
:func:`fgraph.models.logistic.binary.predictive_log_probabilities` in probability space, to ~1e-14
relative and ~1e-17 absolute, several times faster):

* the gate: ψ0_j = β0_jᵀx̃0 ~ N(μ0_jᵀx̃0, x̃0ᵀΣ0_j x̃0), exact;
* the output given x1: ψ1_l = β1_lᵀx̃1 ~ N(μ1_lᵀx̃1, x̃1ᵀΣ1_l x̃1) (x̃1 = [x1; 1]), exact given x1;
* x1 | z = k under q(A_k, Λ_k), T_k, the only Monte Carlo. Row i: given λ_ki, a_ki ~ N(m_ki, V_k/λ_ki)
  and x1_i = a_kiᵀx̃0 + ε/√λ_ki with ε ~ N(0, 1), so x1_i | λ_ki ~ N(m_kiᵀx̃0, (1 + x̃0ᵀV_k x̃0)/λ_ki).
  A normal whose precision is Gamma(a, rate b) distributed, N(μ, s²/λ) with λ ~ Gamma(a, b), is a
  Student t with 2a degrees of freedom, location μ and scale² s² b/a (integrate
  λ^{a−1/2} e^{−λ(b + (x−μ)²/(2s²))} over λ: ∝ (1 + (x−μ)²/(2 b s²))^{−(a+1/2)}, the t kernel with
  ν = 2a and ν·scale² = 2bs²). So, independently over i (each row has its own λ_ki),

      x1_i | z = k ~ t_{2a_k}(m_kiᵀx̃0, b_ki (1 + x̃0ᵀV_k x̃0) / a_k).

  These are drawn, ``n_samples`` per (restart, expert) (shared by the points, below), and the output's exact
  probabilities averaged over them: p̂(y | x0) = Σ_k π_k (1/S) Σ_s P_out(y | x1_sk). The estimate is unbiased
  for the predictive above and sums to one over y exactly (each P_out does).

The draws are randomised quasi-Monte Carlo: S points u_s of a scrambled Sobol sequence in [0, 1]^h
(:class:`scipy.stats.qmc.Sobol`, seeded by ``random_state``), mapped to standard t variates by the inverse
distribution function, t_sk,i = F⁻¹_{2a_k}(u_s,i), and x1_sk,i = loc_k,i(x0) + scale_k,i(x0) t_sk,i for every
point and restart. Each u_s is uniform on [0, 1]^h, so the estimate stays unbiased; the points fill the cube
evenly, so its error falls faster than plain Monte Carlo's 1/√S (for h = 1 a scrambled Sobol set of S = 2^m
points holds one point in each of the S intervals of width 1/S). On a breast-cancer fit (h = 1, K = 20) 32
points come within 1.5e-3 of the predictive (largest difference of a class probability over 169 test
points, against 1024 points), where 256 plain Monte Carlo draws were 2e-2 off. The same points serve every
point x0, so each estimate depends on its own row alone (not on the other rows, their order or how they
are chunked): a prediction is a deterministic function of x0. Points and samples are chunked so that
memory stays at a few hundred MB whatever N*, K and R; the time is that of R · N* · K · S evaluations of the
output's quadrature, about 1 µs each per stick where the output's logit has std ≤ 1, 4 µs where it is wider.

**Posterior draws and pointwise log-likelihoods** (:func:`posterior_draws`,
:func:`pointwise_log_likelihood`): draws θ_m = (β0, A, λ, β1) from q, in the parameter format of
:mod:`fgraph_experiments.baselines.network` with a leading restart axis, and log p(y_n | x0_n, θ_m) of the
marginal network, exact in z and Monte Carlo in x1 with S fixed standard-normal draws ε_snk shared by
every draw and restart (x1 = A_k x̃0 + ε / √λ_k) — the definition of
``baselines.network.log_class_probabilities``, in numpy (no JAX needed), for WAIC with ArviZ.
"""
from __future__ import annotations

import numbers
import warnings
from functools import partial

import numpy as np
from scipy.special import expit, log_softmax, logsumexp, ndtr, stdtrit

from fgraph.errors import DataError
from fgraph.models.logistic.bound import stick_breaking_log_probabilities_at
from fgraph.models.workers import blocks, run_in_workers, worker_count
from fgraph.nodes.softmax import APPROXIMATIONS, predictive_probabilities

__all__ = ["predictive_log_proba", "standard_t_points", "posterior_draws", "pointwise_log_likelihood",
           "log_likelihood_given_draws", "gate_log_probabilities", "expert_t_parameters", "expected_sigmoid",
           "stick_probabilities"]

#: Points per chunk of :func:`log_likelihood_given_draws`.
POINT_BLOCK = 128
#: Most draws of x1 held at once (restarts × points × experts × samples × h); the output's quadrature
#: multiplies this by up to 321 nodes and L − 1 sticks (about 40 MB per stick at 2**14).
_DRAW_BUDGET = 2 ** 14
#: Common draws of the logits for a softmax output's E[softmax(ψ)] given x1 (a standard error of at most
#: 1/(2√256) ≈ 0.03 per probability and x1 point, averaged further over the x1 points).
SOFTMAX_DRAWS = 256

#: Nodes and weights of :func:`expected_sigmoid`: probabilists' Gauss–Hermite rules for std up to each bound
#: (the integrand is analytic in a strip of half-width π/s, so narrower Gaussians need fewer nodes: 8, 12 and
#: 32 nodes are within 1e-13 of a 64-node rule for s ≤ ¼, ≤ ½ and ≤ 1), and the trapezoid rule against σ'.
_HERMITE_RULES = [(bound, nodes, weights / np.sqrt(2.0 * np.pi)) for bound, (nodes, weights) in (
    (0.25, np.polynomial.hermite_e.hermegauss(8)), (0.5, np.polynomial.hermite_e.hermegauss(12)),
    (1.0, np.polynomial.hermite_e.hermegauss(32)))]
_LOGISTIC_NODES = np.arange(-40.0, 40.25, 0.5)
_LOGISTIC_WEIGHTS = 0.5 * expit(_LOGISTIC_NODES) * expit(-_LOGISTIC_NODES)
#: Σ of the trapezoid weights before node j, (len + 1,): the nodes far left of m, where Φ((m − t)/s) is 1
_LOGISTIC_WEIGHTS_BEFORE = np.concatenate([[0.0], np.cumsum(_LOGISTIC_WEIGHTS)])
#: Windows of the trapezoid rule: for s up to each bound, the nodes t ∈ [m − 9s, m + s² + 9s] (beyond them the
#: terms are below 1e-18 of the result, see expected_sigmoid) fit in that many consecutive nodes.
_TAIL_WIDTHS = 9.0
_LOGISTIC_WINDOWS = [(bound, int(np.ceil((bound ** 2 + 2 * _TAIL_WIDTHS * bound) / 0.5)) + 2) for bound in (1.5, 2.0, 2.5, 3.0)]

_PARAMETER_KEYS = ("gate_mean", "gate_cov", "out_mean", "out_cov", "M", "V", "a", "b")


def posterior_sizes(posteriors, output: str = "stick-breaking") -> tuple:
    """(R, K, L, h, D) of a posteriors dict, its shapes checked; ``output`` as :func:`fgraph.models.cmn.graph.build_cmn`
    (L − 1 output vectors for the stick-breaking output, L for a softmax one under an approximation)."""
    missing = [key for key in _PARAMETER_KEYS if key not in posteriors]
    if missing:
        raise DataError(f"CMN posteriors: missing {missing}; pass the dict of fgraph.models.cmn.graph.posteriors")
    if output != "stick-breaking" and output not in APPROXIMATIONS:
        raise DataError(f"CMN predictive: output must be 'stick-breaking' or one of {', '.join(APPROXIMATIONS)}, "
                        f"got {output!r}")
    R, K, h, D = np.shape(posteriors["M"])
    count = np.shape(posteriors["out_mean"])[1]
    L = count + 1 if output == "stick-breaking" else count
    expected = {"gate_mean": (R, K - 1, D), "gate_cov": (R, K - 1, D, D), "out_mean": (R, count, h + 1),
                "out_cov": (R, count, h + 1, h + 1), "V": (R, K, D, D), "a": (R, K), "b": (R, K, h)}
    for key, shape in expected.items():
        if np.shape(posteriors[key]) != shape:
            raise DataError(f"CMN posteriors: {key} has shape {np.shape(posteriors[key])}, expected {shape} "
                            f"(R={R} restarts, K={K} experts, L={L} classes, h={h}, D={D})")
    return R, K, L, h, D


def augmented_inputs(X, D: int) -> np.ndarray:
    """x̃ = [X, 1] (N, D) for X (N, D − 1) finite."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != D - 1:
        raise DataError(f"CMN predictive: X must have shape (N, {D - 1}) (the training features), got {X.shape}")
    if not np.all(np.isfinite(X)):
        raise DataError("CMN predictive: X has NaN or infinite values; impute or drop them")
    return np.column_stack([X, np.ones(len(X))])


def _seed_sequence(random_state) -> np.random.SeedSequence:
    if isinstance(random_state, np.random.SeedSequence):  # a copy: spawning children (scipy's qmc does) changes it
        return np.random.SeedSequence(random_state.entropy, spawn_key=random_state.spawn_key,
                                      pool_size=random_state.pool_size,
                                      n_children_spawned=random_state.n_children_spawned)
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(int(random_state.integers(2 ** 63)))
    if random_state is None or (isinstance(random_state, numbers.Integral) and random_state >= 0):
        return np.random.SeedSequence(random_state)
    raise DataError(f"random_state must be None, a non-negative integer, a SeedSequence or a Generator, "
                    f"got {random_state!r}")


def check_count(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise DataError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def gate_log_probabilities(posteriors, xt) -> np.ndarray:
    """log E_q(β0)[p(z = k | x0, β0)], (R, N, K), exact (sticks independent Gaussians; one expert: log 1)."""
    means = np.einsum("rjd,nd->rnj", posteriors["gate_mean"], xt)
    variances = np.einsum("nd,rjde,ne->rnj", xt, posteriors["gate_cov"], xt)
    with np.errstate(divide="ignore"):  # a probability that is 0 to double precision: log 0 = −∞
        return np.log(stick_probabilities(means, np.sqrt(np.maximum(variances, 0.0))))


def expert_t_parameters(posteriors, xt) -> tuple:
    """x1_i | z = k under q(A_k, Λ_k) is t_ν(loc, scale²): (ν (R, 1, K, 1), loc (R, N, K, h), scale (R, N, K, h)).

    ν = 2a_k, loc = m_kiᵀx̃0, scale² = b_ki (1 + x̃0ᵀV_k x̃0) / a_k (module docstring).
    """
    a, b = np.asarray(posteriors["a"], dtype=float), np.asarray(posteriors["b"], dtype=float)
    loc = np.einsum("rkid,nd->rnki", posteriors["M"], xt)
    spread = 1.0 + np.einsum("nd,rkde,ne->rnk", xt, posteriors["V"], xt)
    scale = np.sqrt(b[:, None] * spread[..., None] / a[:, None, :, None])
    return (2.0 * a)[:, None, :, None], loc, scale


def expected_sigmoid(mean, std) -> np.ndarray:
    """E[σ(ψ)], ψ ~ N(mean, std²), elementwise, to ~1e-14 relative and ~1e-17 absolute.

    The two quadratures of :func:`fgraph.models.logistic.binary.predictive_log_probabilities`, in
    probability space and without its search for the integrand's mode (which keeps relative accuracy in
    the far tails, e.g. 1e-26 at m = −60, s = 2, below what an average of probabilities resolves), about
    5× (s ≤ 1) and 20× (s > 1) faster (each value is a sum of positive terms, so it is never negative):
    s ≤ 1, Gauss–Hermite with 8, 12 or 32 nodes for s ≤ ¼, ½, 1 (the integrand is analytic in a strip of
    half-width π/s ≥ π, so the narrower the fewer nodes reach round-off); s > 1,
    E[σ(ψ)] = ∫ σ'(t) Φ((m − t)/s) dt by the trapezoid rule in steps of ½ over |t| ≤ 40 (σ' analytic in
    |Im t| < π, where |Φ((m − t)/s)| < e^{π²/2}: error below 1e-14; the tails beyond ±40 hold 2e^{−40}).
    """
    mean, std = np.broadcast_arrays(np.asarray(mean, dtype=float), np.asarray(std, dtype=float))
    result = np.empty(mean.shape)
    below = np.zeros(mean.shape, dtype=bool)
    for bound, nodes, weights in _HERMITE_RULES:
        band = (std <= bound) & ~below
        below |= band
        m, s = mean[band], std[band]
        result[band] = expit(m[:, None] + s[:, None] * nodes) @ weights
    for bound, count in _LOGISTIC_WINDOWS:
        band = (std <= bound) & ~below
        below |= band
        result[band] = _windowed_trapezoid(mean[band], std[band], count)
    m, s = mean[~below], std[~below]
    result[~below] = ndtr((m[:, None] - _LOGISTIC_NODES) / s[:, None]) @ _LOGISTIC_WEIGHTS
    return result


def _windowed_trapezoid(m, s, count: int) -> np.ndarray:
    """The trapezoid sum of :func:`expected_sigmoid` over ``count`` nodes from the first node t ≥ m − 9s on, its
    terms further left taken with Φ = 1 (their weights' sum, kept), those further right dropped.

    Left: Φ((m − t)/s) ≥ Φ(9) = 1 − 1e-19. Right, past t = m + s² + 9s: σ'(t) ≤ e^t and Φ(−u) ≤ e^{−u²/2} bound
    the terms by e^{m + s²/2} e^{−(t − m − s²)²/(2s²)}, whose tail is below 1e-18 e^{m + s²/2}, while the
    result is at least e^{m + s²/2}/4 when m + s² ≤ 0 (and of order one otherwise). So the sum is the
    whole rule's to ~1e-17 relative, on a window of 61, 82, 105 or 128 nodes for s ≤ 1.5, 2, 2.5 or 3 instead of 161.
    """
    nodes = len(_LOGISTIC_NODES)
    first = np.clip(np.ceil((m - _TAIL_WIDTHS * s - _LOGISTIC_NODES[0]) / 0.5), 0, nodes).astype(np.intp)
    index = first[:, None] + np.arange(count)  # past the last node: weight 0
    inside = index < nodes
    index = np.minimum(index, nodes - 1)
    weights = np.where(inside, _LOGISTIC_WEIGHTS[index], 0.0)
    terms = ndtr((m[:, None] - _LOGISTIC_NODES[index]) / s[:, None])
    return _LOGISTIC_WEIGHTS_BEFORE[first] + np.einsum("ij,ij->i", terms, weights)


def stick_probabilities(means, stds) -> np.ndarray:
    """p(class = j) for j = 0..C−1 under independent stick logits ψ_k ~ N(means[..., k], stds[..., k]²), (..., C−1)
    → (..., C): E[σ(ψ_j)] Π_{k<j} E[σ(−ψ_k)], the last class Π_k E[σ(−ψ_k)], by :func:`expected_sigmoid`.

    E[σ(−ψ_k)] is 1 − E[σ(ψ_k)] where that is at least ½, and integrated itself where it is small, so that both
    keep their relative accuracy (and neither leaves [0, 1] by rounding). No sticks (C = 1): probability 1.
    """
    means, stds = np.broadcast_arrays(np.asarray(means, dtype=float), np.asarray(stds, dtype=float))
    breaks = expected_sigmoid(means, stds)  # E[σ(ψ_k)]: stop at stick k
    stops = breaks > 0.5
    passing = 1.0 - breaks
    passing[stops] = expected_sigmoid(-means[stops], stds[stops])
    passes = np.cumprod(passing, axis=-1)  # Π_{k≤l} E[σ(−ψ_k)]: pass sticks 0..l
    ones = np.ones(breaks.shape[:-1] + (1,))
    return np.concatenate([breaks, ones], axis=-1) * np.concatenate([ones, passes], axis=-1)


def _output_probabilities(out_mean, out_cov, x1, output: str = "stick-breaking") -> np.ndarray:
    """E_q(β1)[p(y | x1, β1)] for x1 (…, R, N, K, h) → (…, R, N, K, L): exact given x1 (to ~1e-14) for the
    stick-breaking output; for a softmax output E[softmax(ψ)] over its independent Gaussian logits by Monte Carlo
    (:func:`fgraph.nodes.softmax.predictive_probabilities`, ``SOFTMAX_DRAWS`` common draws)."""
    xt1 = np.concatenate([x1, np.ones(x1.shape[:-1] + (1,))], axis=-1)
    means = np.einsum("rli,...rnki->...rnkl", out_mean, xt1)
    variances = np.einsum("...rnki,rlij,...rnkj->...rnkl", xt1, out_cov, xt1)
    if output == "stick-breaking":
        return stick_probabilities(means, np.sqrt(np.maximum(variances, 0.0)))
    return predictive_probabilities(means, np.maximum(variances, 0.0), n_samples=SOFTMAX_DRAWS, chunk=64)


def standard_t_points(dof, n_samples: int, dimension: int, random_state=0) -> np.ndarray:
    """Standard Student t variates at the points of a scrambled Sobol sequence, ``(S,) + dof.shape[:-1] + (h,)``.

    ``dof`` (..., 1) degrees of freedom; S = ``n_samples`` points u_s in [0, 1]^h, each uniform (randomised
    quasi-Monte Carlo), mapped by the inverse t distribution function of every ``dof``.
    """
    from scipy.stats import qmc  # not at import: scipy.stats takes half a second to load

    sobol = qmc.Sobol(dimension, scramble=True, seed=np.random.default_rng(_seed_sequence(random_state)))
    with warnings.catch_warnings():  # the balance of a Sobol set is best at a power of 2; other S are valid too
        warnings.simplefilter("ignore", UserWarning)
        uniform = sobol.random(n_samples)  # (S, h)
    return stdtrit(np.asarray(dof)[None], uniform.reshape((n_samples,) + (1,) * (np.ndim(dof) - 1) + (dimension,)))


def predictive_log_proba(posteriors, X, n_samples: int = 32, random_state=0, n_jobs=None,
                         output: str = "stick-breaking") -> np.ndarray:
    """log p(y | x0, data) per restart, (R, N*, L), for new inputs ``X`` (N*, d) (module docstring).

    Exact over the gate's and the output's coefficients, randomised quasi-Monte Carlo over x1 with
    ``n_samples`` standard Student t variates per (restart, expert) at scrambled Sobol points
    (:func:`standard_t_points`), shared by every point and reproducible from ``random_state``:
    x1 = loc + scale · t (so each row's value does not depend on the other rows). ``n_jobs`` > 1 computes
    blocks of restarts in worker processes (:mod:`fgraph.models.workers`), with the same result. ``output``: the
    network's (:func:`fgraph.models.cmn.graph.build_cmn`).
    """
    R, K, L, h, D = posterior_sizes(posteriors, output)
    n_samples = check_count("n_samples", n_samples)
    xt = augmented_inputs(X, D)
    jobs = worker_count(n_jobs, R, "CMN predictive")
    if jobs > 1:  # the same Sobol points in every block: one seed sequence, fixed here
        seed = _seed_sequence(random_state)
        parts = run_in_workers(predictive_log_proba, [
            ({key: np.asarray(posteriors[key])[block] for key in _PARAMETER_KEYS}, X, n_samples, seed, None, output)
            for block in blocks(R, jobs)])
        return np.concatenate(parts)
    N = len(xt)
    out_mean, out_cov = np.asarray(posteriors["out_mean"], float), np.asarray(posteriors["out_cov"], float)
    dof = 2.0 * np.asarray(posteriors["a"], dtype=float)[:, :, None]  # (R, K, 1)
    standard = standard_t_points(dof, n_samples, h, random_state)  # (S, R, K, h)
    points = max(1, min(N, _DRAW_BUDGET // (R * K * h)))
    samples = max(1, _DRAW_BUDGET // (R * points * K * h))
    result = np.empty((R, N, L))
    for start in range(0, N, points):
        rows = xt[start:start + points]
        log_gate = gate_log_probabilities(posteriors, rows)  # (R, n, K)
        _, loc, scale = expert_t_parameters(posteriors, rows)  # (R, n, K, h)
        total = np.zeros((R, len(rows), K, L))  # Σ_s P_out(y | x1_sk)
        for done in range(0, n_samples, samples):
            x1 = loc + scale * standard[done:done + samples, :, None]  # (S, R, n, K, h)
            total += _output_probabilities(out_mean, out_cov, x1, output).sum(axis=0)
        with np.errstate(divide="ignore"):  # a probability that is 0 to double precision: log 0 = −∞
            result[:, start:start + len(rows)] = (
                logsumexp(log_gate[..., None] + np.log(total), axis=2) - np.log(n_samples))
    return result


# ----------------------------------------------------------------------------- draws and WAIC
def posterior_draws(posteriors, n_draws: int, random_state=0) -> dict:
    """θ_m ~ q, m = 1..M = ``n_draws``, per restart: ``beta0`` (R, M, K−1, D), ``A`` (R, M, K, h, D),
    ``lam`` (R, M, K, h), ``beta1`` (R, M, L−1, H) — λ_ki ~ Gamma(a_k, rate b_ki), then row i of A_k
    ~ N(m_ki, V_k / λ_ki); β0_j, β1_l from their Gaussians (drawn in that order from one generator)."""
    R, K, h, D = np.shape(posteriors["M"])
    M = check_count("n_draws", n_draws)
    rng = np.random.default_rng(_seed_sequence(random_state))
    gate_chol = np.linalg.cholesky(posteriors["gate_cov"]) if K > 1 else np.zeros((R, 0, D, D))
    out_chol = np.linalg.cholesky(posteriors["out_cov"])
    V_chol = np.linalg.cholesky(posteriors["V"])
    a, b = np.asarray(posteriors["a"], dtype=float), np.asarray(posteriors["b"], dtype=float)
    lam = rng.standard_gamma(np.broadcast_to(a[:, None, :, None], (R, M, K, h))) / b[:, None]
    rows = np.einsum("rkde,rmkie->rmkid", V_chol, rng.standard_normal((R, M, K, h, D)))
    A = posteriors["M"][:, None] + rows / np.sqrt(lam)[..., None]
    beta0 = posteriors["gate_mean"][:, None] + np.einsum(
        "rjde,rmje->rmjd", gate_chol, rng.standard_normal((R, M, K - 1, D)))
    beta1 = posteriors["out_mean"][:, None] + np.einsum(
        "rlde,rmle->rmld", out_chol, rng.standard_normal((R, M, out_chol.shape[1], h + 1)))
    return {"beta0": beta0, "A": A, "lam": lam, "beta1": beta1}


def log_likelihood_given_draws(draws, X, y, noise, output: str = "stick-breaking") -> np.ndarray:
    """log p(y_n | x0_n, θ) for parameters ``draws`` with any leading axes B (``beta0`` (B, K−1, D), ``A``
    (B, K, h, D), ``lam`` (B, K, h), ``beta1`` (B, L−1, H)) → (B, N), by Monte Carlo over x1 with ``noise``
    (S, N, K, h) standard normals: log[(1/S) Σ_s Σ_k p(z = k | x0_n, β0) p(y_n | x1_snk, β1)],
    x1_snk = A_k x̃0_n + ε_snk / √λ_k — ``baselines.network.log_class_probabilities`` at the labels.
    Memory is bounded by working on chunks of draws and points. ``output``: the network's; for a softmax output
    ``beta1`` holds L vectors and p(y | x1, β1) is their softmax."""
    beta0, A, lam, beta1 = (np.asarray(draws[key], dtype=float) for key in ("beta0", "A", "lam", "beta1"))
    batch = A.shape[:-3]
    K, h, D = A.shape[-3:]
    xt = augmented_inputs(X, D)
    y = np.asarray(y)
    noise = np.asarray(noise, dtype=float)
    S, N, L = noise.shape[0], len(xt), beta1.shape[-2] + (output == "stick-breaking")
    output_log_probabilities = (stick_breaking_log_probabilities_at if output == "stick-breaking"
                                else partial(log_softmax, axis=-1))
    if noise.shape != (S, N, K, h):
        raise DataError(f"CMN log-likelihood: noise must have shape (S, {N}, {K}, {h}), got {noise.shape}")
    beta0, A = beta0.reshape((-1,) + beta0.shape[-2:]), A.reshape((-1, K, h, D))
    lam, beta1 = lam.reshape((-1, K, h)), beta1.reshape((-1,) + beta1.shape[-2:])
    B = len(A)
    points = min(N, POINT_BLOCK)
    per_draw = S * points * K * max(h, L)
    step = max(1, 8 * _DRAW_BUDGET // per_draw)
    result = np.empty((B, N))
    for first in range(0, B, step):
        draw = slice(first, first + step)
        log_gate = stick_breaking_log_probabilities_at(np.einsum("bjd,nd->bnj", beta0[draw], xt))  # (b, N, K)
        means = np.einsum("bkid,nd->bnki", A[draw], xt)  # (b, N, K, h)
        spread = 1.0 / np.sqrt(lam[draw])[:, None, None]  # (b, 1, 1, K, h)
        for start in range(0, N, points):
            part = slice(start, start + points)
            x1 = means[:, None, part] + noise[None, :, part] * spread  # (b, S, n, K, h)
            psi = np.einsum("bli,bsnki->bsnkl", beta1[draw, :, :-1], x1) + beta1[draw, None, None, None, :, -1]
            log_out = output_log_probabilities(psi)  # (b, S, n, K, L)
            labels = np.broadcast_to(y[part][None, None, :, None, None], log_out.shape[:-1] + (1,))
            at_label = np.take_along_axis(log_out, labels, axis=-1)[..., 0]  # (b, S, n, K)
            result[draw, part] = logsumexp(log_gate[:, None, part] + at_label, axis=(1, 3)) - np.log(S)
    return result.reshape(batch + (N,))


def pointwise_log_likelihood(posteriors, X, y, n_draws: int = 200, n_inner: int = 64, random_state=0,
                             output: str = "stick-breaking") -> np.ndarray:
    """log p(y_n | x0_n, θ_m), (R, M, N), for M = ``n_draws`` draws of q per restart, x1 integrated by Monte Carlo
    with ``n_inner`` standard-normal draws per (point, expert) shared by every θ_m and restart, z exactly.

    The draws are ``posterior_draws(posteriors, n_draws, children[0])`` and the noise (S, N, K, h) is
    ``default_rng(children[1]).standard_normal`` for ``children = SeedSequence(random_state).spawn(2)``, and the
    values :func:`log_likelihood_given_draws` of them. For WAIC / PSIS-LOO of restart r, e.g.
    ``arviz.waic(arviz.from_dict(log_likelihood={"y": values[r][None]}))``. The log of the Monte Carlo average
    is biased low by about Var/(2p²) per point; ``n_inner`` controls it.
    """
    R, K, L, h, D = posterior_sizes(posteriors, output)
    S = check_count("n_inner", n_inner)
    xt = augmented_inputs(X, D)
    y = np.asarray(y)
    if (y.shape != (len(xt),) or not np.issubdtype(y.dtype, np.integer)
            or (y.size and (y.min() < 0 or y.max() >= L))):
        raise DataError(f"CMN pointwise_log_likelihood: y must be {len(xt)} integer labels in 0..{L - 1}")
    draw_seed, noise_seed = _seed_sequence(random_state).spawn(2)
    draws = posterior_draws(posteriors, n_draws, draw_seed)
    noise = np.random.default_rng(noise_seed).standard_normal((S, len(xt), K, h))
    return log_likelihood_given_draws(draws, X, y, noise, output)

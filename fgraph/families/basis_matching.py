"""Gaussian approximations of Gamma and Beta densities in the log and logit bases, and the class labels they make.

A classification label is not Gaussian, but a Dirichlet (or Beta) posterior
over the class probabilities, written in the right basis, nearly is. This
module turns each label into a Gaussian pseudo-observation ``(mean, variance)``
on the logits, so that classification can be run as heteroscedastic Gaussian
regression (Bui, "Likelihood approximations via Gaussian approximate
inference", §3 and Appendix A; Milios et al. 2018; Hobbhahn and Hennig 2022).

Transformed densities
---------------------
For ``ω ~ Gamma(a, b)`` (shape ``a``, rate ``b``) the log ``ψ = log ω`` has

    log p_ψ(ψ) = a ψ − b e^ψ + a log b − log Γ(a),

and for ``ω ~ Beta(a, b)`` the logit ``ψ = logit ω = log(ω / (1 − ω))`` has

    log p_ψ(ψ) = a log σ(ψ) + b log σ(−ψ) − log B(a, b)
               = −b ψ − (a + b) log(1 + e^{−ψ}) − log B(a, b),

both bell-shaped on the whole real line (``σ`` is the logistic sigmoid). Each
is approximated by a Gaussian ``q(ψ) = N(μ, σ²)`` in one of four ways
(:data:`METHODS`):

``"laplace"``
    ``μ`` the mode of ``p_ψ``, ``σ² = −1 / (d²/dψ² log p_ψ)`` there:
    Gamma ``N(log(a/b), 1/a)``; Beta ``N(log(a/b), (a + b)/(a b))``.
``"variational"``
    ``q`` minimising ``KL(q ‖ p_ψ)``. Gamma: up to a constant
    ``F = −½ log σ² − a μ + b e^{μ + σ²/2}``, stationary at
    ``N(log(a/b) − 1/(2a), 1/a)``. Beta: up to a constant
    ``F = −½ log σ² + b μ + (a + b) E_q[log(1 + e^{−ψ})]``, which has no
    closed-form minimiser; it is found numerically (below).
``"moment"``
    ``q`` matching the mean and variance of ``p_ψ`` (``KL(p_ψ ‖ q)``):
    Gamma ``N(ψ(a) − log b, ψ₁(a))``; Beta ``N(ψ(a) − ψ(b), ψ₁(a) + ψ₁(b))``
    (``ψ`` digamma, ``ψ₁`` trigamma).
``"moment-original"``
    Gamma: the log-normal matching the Gamma's own mean ``a/b`` and variance
    ``a/b²`` in the original basis (Milios et al. 2018), i.e.
    ``σ² = log(1 + 1/a)``, ``μ = log(a/b) − σ²/2``. Beta: the paper gives the
    log-normal for the Gamma only; our reading of "moment matching in the
    original basis" for the logistic case writes ``Beta(a, b)`` as
    ``ω₁ / (ω₁ + ω₀)`` with independent ``ω₁ ~ Gamma(a, 1)`` and
    ``ω₀ ~ Gamma(b, 1)``, so that ``logit ω = log ω₁ − log ω₀``, approximates
    each ``log ωᵢ`` by the Gamma result and returns ``(μ₁ − μ₀, σ₁² + σ₀²)``.
    The same construction applied to ``"laplace"`` and ``"moment"`` gives back
    exactly the Beta formulas above, which is what makes it a natural reading
    (``"variational"`` does not decompose this way: the KL is not additive
    over the difference).

Pseudo-observations
-------------------
Multiclass (§3.2): a label ``y ∈ {0, …, K−1}`` with one-hot ``c`` turns the
prior ``Dir(α_ε)`` into the posterior ``Dir(α_ε + c)``, which is the softmax of
independent ``log ω_k``, ``ω_k ~ Gamma(α_ε,k + c_k, 1)``; the Gaussian
approximation of each ``log ω_k`` is a pseudo-observation of logit ``k``.
Binary (§3.3): ``y ∈ {0, 1}`` turns ``Beta(α_ε, β_ε)`` into
``Beta(α_ε + y, β_ε + 1 − y)``, and its logit-basis Gaussian is a
pseudo-observation of the single logit.

The variational Beta, numerically
---------------------------------
With ``ψ = μ + σ z``, ``z ~ N(0, 1)``, ``h(ψ) = log(1 + e^{−ψ})``,
``h′ = −σ(−ψ)``, ``h″ = σ′ = σ(ψ) σ(−ψ)`` and Stein's identity
``E[z f(μ + σz)] = σ E[f′]``, the gradient of ``F`` in ``(μ, s = log σ²)`` is

    ∂F/∂μ = (a + b) E_q[σ(ψ)] − a,
    ∂F/∂s = ½ ((a + b) σ² E_q[σ′(ψ)] − 1),

so the optimum has ``E_q[σ(ψ)] = a/(a + b)`` (the Beta's mean) and
``1/σ² = (a + b) E_q[σ′(ψ)]``; the Hessian is

    ∂²F/∂μ²  = (a + b) E_q[σ′],
    ∂²F/∂μ∂s = ½ (a + b) σ² E_q[σ″],
    ∂²F/∂s²  = ½ (a + b) σ² E_q[σ′] + ¼ (a + b) σ⁴ E_q[σ‴],

with ``σ″ = σ′ (1 − 2σ)`` and ``σ‴ = σ′ (1 − 6σ′)``. A safeguarded Newton
iteration (eigenvalue shift where the Hessian is not positive definite, a cap
on the step, backtracking on ``F``) runs over the whole array at once from the
moment solution. ``F`` is strictly convex in ``(μ, σ)`` because ``p_ψ`` is
log-concave, so its stationary point is unique and the iteration cannot stop
at a wrong one.

The expectations are Gaussian averages of functions that vary on a scale of
one in ``ψ``. Gauss–Hermite quadrature in ``z`` resolves them only while
``σ`` is small: its nodes are ``~π/√n`` apart in ``z``, so ``~σ π/√n`` in
``ψ``, and with 100 nodes it is accurate to ~1e-14 at ``σ = 1`` but only to
~1e-2 at ``σ = 10``, while small shapes (``a, b ~ 0.01``) put the variational
``σ`` above 100. Above :data:`HERMITE_BELOW_SIGMA` the logistic functions are
split at ``ψ = 0`` into a part with a Gaussian closed form
(``E[1{ψ > 0}] = Φ(μ/σ)``, ``E[max(−ψ, 0)] = σ φ_N(μ/σ) − μ Φ(−μ/σ)``) and
remainders that decay like ``e^{−|ψ|}`` on each half-line, which
Gauss–Laguerre quadrature in ``|ψ|`` integrates against the (now smooth)
Gaussian density. Both rules are accurate to ~1e-13 in absolute terms where
they are used, far below the Newton tolerance.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from fgraph.errors import DataError, DataTypeError, ModelError, ModelTypeError, NumericalError
from fgraph.families.base import as_float_array
from fgraph.families.special import digamma, expit, ndtr, trigamma

__all__ = [
    "METHODS",
    "beta_logit_basis",
    "expected_log_sigmoid",
    "gamma_log_basis",
    "logistic_pseudo_observations",
    "softmax_pseudo_observations",
]

METHODS = ("laplace", "variational", "moment", "moment-original")

#: Quadrature sizes of the variational Beta: 100 Hermite nodes reach ~1e-14 for σ ≤ 1.5, 100 Laguerre nodes
#: ~1e-13 above it (the Laguerre rule needs the Gaussian wider than its node spacing away from ψ = 0).
HERMITE_NODES = 100
LAGUERRE_NODES = 100
HERMITE_BELOW_SIGMA = 1.5

#: The Newton iteration stops when the gradient in the scaled coordinates (μ/σ, log σ²), where the Hessian at
#: the optimum is of order one, is below this: μ is then right to ~1e-10 σ and σ² to ~1e-10 relative.
NEWTON_TOLERANCE = 1e-10
NEWTON_MAX_ITERATIONS = 100
#: Backtracking halvings per Newton step before the step is given up as failed.
NEWTON_MAX_HALVINGS = 60
#: Largest step in log σ² (a factor e² in σ²) and in μ/σ: Newton's quadratic model is not trusted further.
NEWTON_MAX_STEP = 2.0

_SQRT_2PI = math.sqrt(2.0 * math.pi)
_rules = None


def _quadrature_rules():
    """Hermite nodes and weights normalised to N(0, 1), and Laguerre nodes and weights for the weight e^{−x}."""
    global _rules
    if _rules is None:
        from numpy.polynomial.hermite_e import hermegauss
        from numpy.polynomial.laguerre import laggauss

        z, wz = hermegauss(HERMITE_NODES)
        x, wx = laggauss(LAGUERRE_NODES)
        _rules = (z, wz / _SQRT_2PI, x, wx)
    return _rules


# ---- validation ----


def _check_method(method) -> str:
    if not isinstance(method, str):
        raise ModelTypeError(f"method must be one of {METHODS}, got {method!r}")
    if method not in METHODS:
        raise ModelError(f"unknown method {method!r}; known methods are {', '.join(METHODS)}")
    return method


def _positive_parameter(value, name: str):
    array = as_float_array(value, name)
    if not np.all(np.isfinite(array)):
        bad = _first_index(~np.isfinite(array))
        raise ModelError(f"{name} contains NaN or infinite values (first at index {bad}); pass finite numbers")
    if np.any(array <= 0):
        bad = _first_index(array <= 0)
        raise ModelError(f"{name} must be strictly positive, got {float(np.asarray(array)[bad])} at index {bad}")
    return array


def _first_index(mask) -> tuple:
    return tuple(int(i) for i in np.argwhere(mask)[0])


def _label_array(values, name: str) -> np.ndarray:
    """``values`` as an integer array; real numbers must be whole (``1.0`` is a label, ``1.5`` is not)."""
    array = np.asarray(values)
    if array.dtype == bool:
        return array.astype(np.int64)
    if np.issubdtype(array.dtype, np.integer):
        return array.astype(np.int64)
    if not np.issubdtype(array.dtype, np.floating):
        raise DataTypeError(f"{name} must be integers, got an array of dtype {array.dtype}")
    if not np.all(np.isfinite(array)):
        bad = _first_index(~np.isfinite(array))
        raise DataError(f"{name} contains NaN or infinite values (first at index {bad}); labels must be finite integers")
    if np.any(array != np.round(array)):
        bad = _first_index(array != np.round(array))
        raise DataError(f"{name} must be integers, got {float(array[bad])} at index {bad}")
    return array.astype(np.int64)


# ---- the closed forms ----


def gamma_log_basis(shape, rate=1.0, method="moment"):
    """Gaussian ``N(mean, variance)`` approximating ``ψ = log ω`` for ``ω ~ Gamma(shape, rate)``.

    Parameters
    ----------
    shape, rate : array_like
        Shape ``a`` and rate ``b`` (both > 0 and finite), broadcast together.
    method : str
        One of :data:`METHODS`:

        * ``"laplace"``: ``N(log(a/b), 1/a)``;
        * ``"variational"``: ``N(log(a/b) − 1/(2a), 1/a)``;
        * ``"moment"``: ``N(ψ(a) − log b, ψ₁(a))``;
        * ``"moment-original"``: ``N(log(a/b) − v/2, v)``, ``v = log(1 + 1/a)``.

    Returns
    -------
    (mean, variance) : float arrays of the broadcast shape of ``shape`` and ``rate``.
    """
    method = _check_method(method)
    a = _positive_parameter(shape, "shape")
    b = _positive_parameter(rate, "rate")
    if method == "laplace":
        mean, variance = np.log(a) - np.log(b), 1.0 / a
    elif method == "variational":
        mean, variance = np.log(a) - np.log(b) - 0.5 / a, 1.0 / a
    elif method == "moment":
        mean, variance = digamma(a) - np.log(b), trigamma(a)
    else:
        # log1p: for large shapes 1/a is far below the spacing of floats near one
        variance = np.log1p(1.0 / a)
        mean = np.log(a) - np.log(b) - 0.5 * variance
    mean, variance = np.broadcast_arrays(mean, variance)
    return mean.astype(float)[()], variance.astype(float)[()]


def beta_logit_basis(a, b, method="moment"):
    """Gaussian ``N(mean, variance)`` approximating ``ψ = logit ω`` for ``ω ~ Beta(a, b)``.

    Parameters
    ----------
    a, b : array_like
        The Beta's shapes (both > 0 and finite), broadcast together.
    method : str
        One of :data:`METHODS`:

        * ``"laplace"``: ``N(log(a/b), (a + b)/(a b))``;
        * ``"variational"``: the minimiser of ``KL(N(μ, σ²) ‖ p_ψ)``, found by a
          vectorised safeguarded Newton iteration (module docstring);
        * ``"moment"``: ``N(ψ(a) − ψ(b), ψ₁(a) + ψ₁(b))``;
        * ``"moment-original"``: ``(μ₁ − μ₀, σ₁² + σ₀²)`` from the log-normal
          moment matches of ``Gamma(a, 1)`` and ``Gamma(b, 1)``.

    Returns
    -------
    (mean, variance) : float arrays of the broadcast shape of ``a`` and ``b``.

    Raises
    ------
    NumericalError
        If the variational Newton iteration does not reach its tolerance.
    """
    method = _check_method(method)
    a = _positive_parameter(a, "a")
    b = _positive_parameter(b, "b")
    if method == "laplace":
        mean, variance = np.log(a) - np.log(b), (a + b) / (a * b)
    elif method == "moment":
        mean, variance = digamma(a) - digamma(b), trigamma(a) + trigamma(b)
    elif method == "moment-original":
        mean_1, variance_1 = gamma_log_basis(a, 1.0, "moment-original")
        mean_0, variance_0 = gamma_log_basis(b, 1.0, "moment-original")
        mean, variance = mean_1 - mean_0, variance_1 + variance_0
    else:
        a, b = np.broadcast_arrays(a, b)
        mean, variance = _variational_beta_logit(a.astype(float), b.astype(float))
    mean, variance = np.broadcast_arrays(mean, variance)
    return mean.astype(float)[()], variance.astype(float)[()]


# ---- the variational Beta ----


def _logistic_normal_expectations(mu, sigma):
    """``E[h], E[σ], E[σ′], E[σ″], E[σ‴]`` under ``ψ ~ N(mu, sigma²)``, ``h(ψ) = log(1 + e^{−ψ})`` (1-d arrays).

    Gauss–Hermite in z for ``sigma ≤ HERMITE_BELOW_SIGMA``, the split Gauss–Laguerre rule above it (module
    docstring): each where it is accurate to ~1e-13.
    """
    z, wz, x, wx = _quadrature_rules()
    out = np.empty((5,) + mu.shape)
    narrow = sigma <= HERMITE_BELOW_SIGMA
    if np.any(narrow):
        psi = mu[narrow, None] + sigma[narrow, None] * z
        p = expit(psi)
        d1 = p * expit(-psi)
        values = (np.logaddexp(0.0, -psi), p, d1, d1 * (1.0 - 2.0 * p), d1 * (1.0 - 6.0 * d1))
        for k, value in enumerate(values):
            out[k, narrow] = value @ wz
    wide = ~narrow
    if np.any(wide):
        m, s = mu[wide, None], sigma[wide, None]
        # on each half-line ψ = ±x a remainder r(ψ) is e^{−x} ρ(x) with ρ smooth and bounded; the Laguerre
        # weight carries the e^{−x}, the Gaussian density is the smooth factor
        t = np.exp(-x)
        p = 1.0 / (1.0 + t)  # σ(x); σ(−x) = t p
        density_plus = np.exp(-0.5 * ((x - m) / s) ** 2) / (s * _SQRT_2PI)
        density_minus = np.exp(-0.5 * ((x + m) / s) ** 2) / (s * _SQRT_2PI)
        log_term = np.where(t > 1e-8, np.log1p(t) / np.where(t > 0.0, t, 1.0), 1.0 - 0.5 * t)
        d1 = p * p  # σ′(±x) = t p²
        odd = d1 * (1.0 - 2.0 * p)  # σ″(x) = t p² (1 − 2p), σ″(−x) = −that
        even = d1 * (1.0 - 6.0 * t * d1)  # σ‴ is even

        def half_lines(rho_plus, rho_minus):
            return (rho_plus * density_plus + rho_minus * density_minus) @ wx

        ratio = mu[wide] / sigma[wide]
        gauss_pdf = np.exp(-0.5 * ratio**2) / _SQRT_2PI
        # h = max(−ψ, 0) + log(1 + e^{−|ψ|});  σ = 1{ψ > 0} + (σ(−x) on ψ = −x, −σ(−x) on ψ = x)
        out[0, wide] = sigma[wide] * gauss_pdf - mu[wide] * ndtr(-ratio) + half_lines(log_term, log_term)
        out[1, wide] = ndtr(ratio) + half_lines(-p, p)
        out[2, wide] = half_lines(d1, d1)
        out[3, wide] = half_lines(odd, -odd)
        out[4, wide] = half_lines(even, even)
    return out


def expected_log_sigmoid(mean, std):
    """``E[log σ(ψ)]`` for ``ψ ~ N(mean, std²)`` (arrays broadcast together; ``std >= 0``), accurate to ~1e-13 for
    every ``std`` (the quadrature of the variational Beta, :func:`_logistic_normal_expectations`): the expected
    log-likelihood of a label under a Gaussian logit, which the exact-model bound of Appendix B sums."""
    mean, std = np.broadcast_arrays(np.asarray(mean, dtype=float), np.asarray(std, dtype=float))
    if np.any(~np.isfinite(mean)) or np.any(~np.isfinite(std)) or np.any(std < 0):
        raise ModelError("expected_log_sigmoid: mean must be finite and std finite and >= 0")
    flat = _logistic_normal_expectations(mean.ravel(), std.ravel())[0]
    return -flat.reshape(mean.shape)[()]


def _variational_objective(a, b, mu, log_var, expected_h):
    return -0.5 * log_var + b * mu + (a + b) * expected_h


def _variational_derivatives(a, b, mu, log_var):
    """``F``, its gradient ``(∂F/∂μ, ∂F/∂s)`` and Hessian ``(∂²F/∂μ², ∂²F/∂μ∂s, ∂²F/∂s²)`` at ``(μ, s = log σ²)``.

    ``F`` is ``KL(N(μ, σ²) ‖ p_ψ)`` up to a constant, for ``p_ψ`` the logit-basis Beta(a, b) density; the
    formulas are those of the module docstring. All arguments are 1-d arrays of one length.
    """
    n = a + b
    var = np.exp(log_var)
    e_h, e_p, e_d1, e_d2, e_d3 = _logistic_normal_expectations(mu, np.sqrt(var))
    value = _variational_objective(a, b, mu, log_var, e_h)
    gradient = (n * e_p - a, 0.5 * (n * var * e_d1 - 1.0))
    hessian = (n * e_d1, 0.5 * n * var * e_d2, 0.5 * n * var * e_d1 + 0.25 * n * var * var * e_d3)
    return value, gradient, hessian


def _variational_beta_logit(a, b):
    """Minimise ``F(μ, s) = −½ s + b μ + (a + b) E[log(1 + e^{−ψ})]``, ``s = log σ²``, elementwise over arrays."""
    shape = a.shape
    a, b = a.ravel(), b.ravel()
    mu = digamma(a) - digamma(b)
    log_var = np.log(trigamma(a) + trigamma(b))
    converged = np.zeros(a.shape, dtype=bool)
    active = np.arange(a.size)
    for iteration in range(NEWTON_MAX_ITERATIONS + 1):
        aa, bb = a[active], b[active]
        m, s = mu[active], log_var[active]
        sd = np.exp(0.5 * s)
        f_old, (grad_mu, grad_s), (h_mm, h_ms, h_ss) = _variational_derivatives(aa, bb, m, s)
        done = np.maximum(np.abs(sd * grad_mu), np.abs(grad_s)) <= NEWTON_TOLERANCE
        converged[active[done]] = True
        keep = ~done
        if not np.any(keep) or iteration == NEWTON_MAX_ITERATIONS:
            break
        active, aa, bb, m, s, sd, f_old = (v[keep] for v in (active, aa, bb, m, s, sd, f_old))
        grad_mu, grad_s, h_mm, h_ms, h_ss = (v[keep] for v in (grad_mu, grad_s, h_mm, h_ms, h_ss))
        # Newton in the scaled coordinates (u = μ/σ, s), where the optimum's Hessian is of order one
        g_u = sd * grad_mu
        h_uu = sd * sd * h_mm
        h_us = sd * h_ms
        # log σ² is not a convex coordinate for F: where the Hessian is not safely positive definite, shift it
        half_trace, half_gap = 0.5 * (h_uu + h_ss), np.hypot(0.5 * (h_uu - h_ss), h_us)
        smallest, largest = half_trace - half_gap, half_trace + half_gap
        floor = 1e-6 * np.maximum(np.abs(largest), 1.0)
        shift = np.where(smallest < floor, floor - smallest, 0.0)
        h_uu, h_ss = h_uu + shift, h_ss + shift
        det = h_uu * h_ss - h_us * h_us
        step_u = -(h_ss * g_u - h_us * grad_s) / det
        step_s = -(h_uu * grad_s - h_us * g_u) / det
        scale = np.minimum(1.0, NEWTON_MAX_STEP / np.maximum(np.abs(step_u), np.abs(step_s)))
        step_mu, step_s = scale * step_u * sd, scale * step_s
        slope = grad_mu * step_mu + grad_s * step_s  # < 0: a descent direction of a positive definite model
        # quadrature noise (~1e-13 relative) would block the last, tiny decreases: tolerate it
        noise = 1e-12 * (np.abs(f_old) + 1.0)
        t = np.ones_like(m)
        pending = np.ones(m.shape, dtype=bool)
        for _halving in range(NEWTON_MAX_HALVINGS):
            idx = np.flatnonzero(pending)
            if idx.size == 0:
                break
            m_new, s_new = m[idx] + t[idx] * step_mu[idx], s[idx] + t[idx] * step_s[idx]
            e_h_new = _logistic_normal_expectations(m_new, np.exp(0.5 * s_new))[0]
            f_new = _variational_objective(aa[idx], bb[idx], m_new, s_new, e_h_new)
            ok = np.isfinite(f_new) & (f_new <= f_old[idx] + 1e-4 * t[idx] * slope[idx] + noise[idx])
            pending[idx[ok]] = False
            t[idx[~ok]] *= 0.5
        t[pending] = 0.0  # no acceptable step: stay, and be reported as not converged
        mu[active] = m + t * step_mu
        log_var[active] = s + t * step_s
    if not np.all(converged):
        bad = np.flatnonzero(~converged)[0]
        raise NumericalError(
            f"beta_logit_basis(method='variational'): the Newton iteration did not converge within "
            f"{NEWTON_MAX_ITERATIONS} iterations for {np.count_nonzero(~converged)} of {a.size} entries "
            f"(first: a={a[bad]!r}, b={b[bad]!r})"
        )
    return mu.reshape(shape), np.exp(log_var).reshape(shape)


# ---- pseudo-observations ----


def softmax_pseudo_observations(labels, n_classes, alpha_epsilon=0.1, method="moment"):
    """Gaussian pseudo-observations of K logits for multiclass labels (§3.2).

    The label ``y`` with one-hot ``c`` gives ``ω_k ~ Gamma(α_ε,k + c_k, 1)``,
    and :func:`gamma_log_basis` approximates each ``log ω_k`` by
    ``N(target_k, variance_k)``; the softmax of the ``log ω_k`` is distributed as
    the Dirichlet posterior ``Dir(α_ε + c)``.

    Parameters
    ----------
    labels : array_like of int, shape (N,)
        Class indices in ``0 … n_classes − 1`` (whole-valued floats are accepted).
        Any shape works; the class axis is appended.
    n_classes : int
        ``K >= 2``.
    alpha_epsilon : float or array_like of shape (K,)
        The Dirichlet prior's concentrations (> 0).
    method : str
        One of :data:`METHODS`.

    Returns
    -------
    targets, variances : float arrays of shape (N, K)
    """
    method = _check_method(method)
    if isinstance(n_classes, (bool, np.bool_)) or not isinstance(n_classes, (int, np.integer)):
        raise ModelTypeError(f"n_classes must be an integer, got {n_classes!r}")
    if n_classes < 2:
        raise ModelError(f"n_classes must be at least 2, got {n_classes}")
    alpha = _positive_parameter(alpha_epsilon, "alpha_epsilon")
    if np.ndim(alpha) not in (0, 1) or (np.ndim(alpha) == 1 and np.shape(alpha)[0] != n_classes):
        raise ModelError(
            f"alpha_epsilon must be a scalar or have shape ({n_classes},), got shape {np.shape(alpha)}"
        )
    labels = _label_array(labels, "labels")
    outside = (labels < 0) | (labels >= n_classes)
    if np.any(outside):
        bad = _first_index(outside)
        raise DataError(f"labels must lie in 0..{n_classes - 1}, got {int(labels[bad])} at index {bad}")
    one_hot = (labels[..., None] == np.arange(n_classes)).astype(float)
    return gamma_log_basis(alpha + one_hot, 1.0, method)


@functools.lru_cache(maxsize=64)
def _binary_pseudo_observations(alpha: float, beta: float, method: str) -> tuple:
    """``(means, variances)`` of the labels 0 and 1 (arrays (2,), read-only): Beta(α, β + 1) and Beta(α + 1, β)."""
    means, variances = beta_logit_basis(alpha + np.array([0.0, 1.0]), beta + np.array([1.0, 0.0]), method)
    means, variances = np.array(means), np.array(variances)
    means.flags.writeable = variances.flags.writeable = False
    return means, variances


def logistic_pseudo_observations(y, alpha_epsilon=0.1, beta_epsilon=None, method="moment"):
    """Gaussian pseudo-observations of the logit for binary labels (§3.3).

    The label ``y`` turns the prior ``Beta(α_ε, β_ε)`` into
    ``Beta(α_ε + y, β_ε + 1 − y)``, and :func:`beta_logit_basis` approximates
    its logit by ``N(target, variance)``.

    Parameters
    ----------
    y : array_like, shape (N,)
        Labels in ``{0, 1}`` (booleans and ``0.0``/``1.0`` are accepted). Any shape works.
    alpha_epsilon, beta_epsilon : float or array_like broadcasting with ``y``
        The Beta prior's shapes (> 0); ``beta_epsilon`` defaults to ``alpha_epsilon``.
    method : str
        One of :data:`METHODS`.

    Returns
    -------
    targets, variances : float arrays of shape (N,)
    """
    method = _check_method(method)
    alpha = _positive_parameter(alpha_epsilon, "alpha_epsilon")
    beta = alpha if beta_epsilon is None else _positive_parameter(beta_epsilon, "beta_epsilon")
    y = _label_array(y, "y")
    outside = (y != 0) & (y != 1)
    if np.any(outside):
        bad = _first_index(outside)
        raise DataError(f"y must be 0 or 1, got {int(y[bad])} at index {bad}")
    if np.ndim(alpha) == 0 and np.ndim(beta) == 0:
        # one Beta per label value: two approximations, kept per (α_ε, β_ε, method) (a streaming learner asks for
        # them with every observation, and "variational" solves a Newton iteration each time), then indexed
        means, variances = _binary_pseudo_observations(float(alpha), float(beta), method)
        return means[y][()], variances[y][()]
    return beta_logit_basis(alpha + y, beta + 1.0 - y, method)

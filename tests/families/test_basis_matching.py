"""Gaussian approximations in the log and logit bases against their formulas, quadrature, optimisation and Monte Carlo.

Independent oracles:

* the Appendix A closed forms, written out again here with :mod:`scipy.special`;
* :func:`scipy.integrate.quad` on the transformed densities ``p_ψ`` (in log space): their mean and variance
  (moment), their mode from :mod:`scipy.optimize` and curvature there by finite differences (laplace), and
  ``KL(N(μ, σ²) ‖ p_ψ)`` minimised by Nelder–Mead (variational);
* a trapezoid rule in ψ on a fine grid (spectrally accurate for these analytic integrands), for the
  variational objective of the Beta at 1000 solutions;
* draws of ``Beta(a, b)`` for the logit-basis moments.
"""
import warnings

import numpy as np
import pytest
from scipy import integrate, optimize, special

from fgraph.errors import DataError, ModelError, NumericalError
from fgraph.families import basis_matching as bm

SHAPES = [(0.05, 1.0), (0.05, 50.0), (0.7, 0.3), (1.0, 1.0), (3.0, 2.5), (50.0, 0.05), (50.0, 50.0)]
IDS = [f"a={a}-b={b}" for a, b in SHAPES]


# ---- the transformed densities, in log space ----


def gamma_log_density(psi, a, b):
    """log of Gamma(e^ψ; a, b) e^ψ (−inf where e^ψ overflows: quad probes ψ up to ~1e308)."""
    with np.errstate(over="ignore"):
        return a * psi - b * np.exp(psi) + a * np.log(b) - special.gammaln(a)


def beta_log_density(psi, a, b):
    """log of Beta(σ(ψ); a, b) σ(ψ)(1 − σ(ψ)) = a log σ(ψ) + b log σ(−ψ) − log B(a, b)."""
    return -a * np.logaddexp(0.0, -psi) - b * np.logaddexp(0.0, psi) - special.betaln(a, b)


def density_moments(log_density, mode):
    """Mean and variance of exp(log_density) by quad, split at the mode (the tails are of very different widths)."""

    def moment(k, centre=0.0):
        f = lambda psi: (psi - centre) ** k * np.exp(log_density(psi))
        options = dict(limit=500, epsabs=1e-13, epsrel=1e-12)
        return integrate.quad(f, -np.inf, mode, **options)[0] + integrate.quad(f, mode, np.inf, **options)[0]

    mass = moment(0)
    mean = moment(1) / mass
    return mean, moment(2, mean) / mass


def laplace_oracle(log_density, guess):
    mode = optimize.minimize_scalar(lambda p: -log_density(p), bracket=(guess - 1.0, guess + 1.0),
                                    tol=1e-12).x
    h = 1e-3
    # five-point stencil: truncation O(h⁴), rounding ~1e-16 |log p| / h²
    f = [log_density(mode + k * h) for k in (-2, -1, 0, 1, 2)]
    curvature = (-f[0] + 16 * f[1] - 30 * f[2] + 16 * f[3] - f[4]) / (12 * h * h)
    return mode, -1.0 / curvature


def kl_to(log_density, mu, log_var, breakpoint):
    """KL(N(μ, σ²) ‖ p) = −½ log(2πe σ²) − E_q[log p], the expectation by quad in z = (ψ − μ)/σ."""
    sd = np.exp(0.5 * log_var)
    z0 = (breakpoint - mu) / sd
    points = [z0] if abs(z0) < 40 else None
    with warnings.catch_warnings():
        # the requested 1e-14 is at the edge of double precision; the KL noise it leaves is ~1e-14
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        expected = integrate.quad(lambda z: np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi) * log_density(mu + sd * z),
                                  -40.0, 40.0, points=points, limit=500, epsabs=1e-14, epsrel=1e-14)[0]
    return -0.5 * np.log(2 * np.pi * np.e) - 0.5 * log_var - expected


def variational_oracle(log_density, start, breakpoint):
    mu0, var0 = start
    sd0 = np.sqrt(var0)
    # search in (μ/σ₀, log σ²), where the KL's curvature is of order one
    objective = lambda x: kl_to(log_density, x[0] * sd0, x[1], breakpoint)
    x = np.array([mu0 / sd0 + 0.3, np.log(var0) - 0.4])  # deliberately off the answer
    for _ in range(3):  # restarts shrink Nelder–Mead's simplex onto the minimum
        x = optimize.minimize(objective, x, method="Nelder-Mead",
                              options=dict(xatol=1e-10, fatol=1e-15, maxiter=4000)).x
    return x[0] * sd0, np.exp(x[1])


def assert_same_gaussian(got, expected, tol):
    """Means compared in units of the standard deviation, variances relatively."""
    (mu, var), (mu_ref, var_ref) = got, expected
    assert abs(mu - mu_ref) <= tol * np.sqrt(var_ref), (mu, mu_ref)
    assert abs(var - var_ref) <= tol * var_ref, (var, var_ref)


# ---- closed forms against Appendix A ----


@pytest.mark.parametrize("a, b", SHAPES, ids=IDS)
def test_gamma_closed_forms_are_appendix_a(a, b):
    expected = {
        "laplace": (np.log(a / b), 1 / a),
        "variational": (np.log(a / b) - 0.5 / a, 1 / a),
        "moment": (special.digamma(a) - np.log(b), special.polygamma(1, a)),
        "moment-original": (np.log(a / b) - 0.5 * np.log(1 + 1 / a), np.log(1 + 1 / a)),
    }
    for method, (mu, var) in expected.items():
        got = bm.gamma_log_basis(a, b, method)
        np.testing.assert_allclose(got, (mu, var), rtol=1e-13, atol=1e-14, err_msg=method)


@pytest.mark.parametrize("a, b", SHAPES, ids=IDS)
def test_beta_closed_forms_are_appendix_a(a, b):
    expected = {
        "laplace": (np.log(a / b), (a + b) / (a * b)),
        "moment": (special.digamma(a) - special.digamma(b), special.polygamma(1, a) + special.polygamma(1, b)),
        # log-normal moment matches of Gamma(a, 1) and Gamma(b, 1), differenced
        "moment-original": (np.log(a) - 0.5 * np.log(1 + 1 / a) - np.log(b) + 0.5 * np.log(1 + 1 / b),
                            np.log(1 + 1 / a) + np.log(1 + 1 / b)),
    }
    for method, (mu, var) in expected.items():
        got = bm.beta_logit_basis(a, b, method)
        np.testing.assert_allclose(got, (mu, var), rtol=1e-13, atol=1e-14, err_msg=method)


def test_methods_are_the_four_of_the_paper():
    assert bm.METHODS == ("laplace", "variational", "moment", "moment-original")


def test_closed_forms_broadcast():
    a = np.array([[0.5], [2.0], [40.0]])
    b = np.array([0.1, 1.0, 7.0, 30.0])
    for method in bm.METHODS:
        for function in (bm.gamma_log_basis, bm.beta_logit_basis):
            mean, var = function(a, b, method)
            assert mean.shape == var.shape == (3, 4)
            assert mean.dtype == var.dtype == np.float64
            for i, j in [(0, 0), (2, 3), (1, 2)]:
                np.testing.assert_allclose((mean[i, j], var[i, j]), function(a[i, 0], b[j], method), rtol=1e-9)


# ---- quadrature oracles ----


@pytest.mark.parametrize("a, b", SHAPES, ids=IDS)
def test_gamma_moment_and_laplace_match_the_log_density(a, b):
    log_density = lambda psi: gamma_log_density(psi, a, b)
    mode, var = laplace_oracle(log_density, np.log(a / b) + 0.3)
    assert_same_gaussian(bm.gamma_log_basis(a, b, "laplace"), (mode, var), 1e-6)
    mean, var = density_moments(log_density, mode)
    assert_same_gaussian(bm.gamma_log_basis(a, b, "moment"), (mean, var), 1e-8)


@pytest.mark.parametrize("a, b", SHAPES, ids=IDS)
def test_beta_moment_and_laplace_match_the_logit_density(a, b):
    log_density = lambda psi: beta_log_density(psi, a, b)
    mode, var = laplace_oracle(log_density, np.log(a / b) + 0.3)
    assert_same_gaussian(bm.beta_logit_basis(a, b, "laplace"), (mode, var), 1e-6)
    mean, var = density_moments(log_density, mode)
    assert_same_gaussian(bm.beta_logit_basis(a, b, "moment"), (mean, var), 1e-8)


VARIATIONAL_SHAPES = [(0.05, 0.05), (0.05, 3.0), (1.0, 1.0), (4.0, 0.5), (50.0, 20.0)]


@pytest.mark.parametrize("a, b", VARIATIONAL_SHAPES, ids=[f"a={a}-b={b}" for a, b in VARIATIONAL_SHAPES])
def test_gamma_variational_minimises_the_kl(a, b):
    log_density = lambda psi: gamma_log_density(psi, a, b)
    oracle = variational_oracle(log_density, bm.gamma_log_basis(a, b, "laplace"), np.log(a / b))
    assert_same_gaussian(bm.gamma_log_basis(a, b, "variational"), oracle, 2e-6)


@pytest.mark.parametrize("a, b", VARIATIONAL_SHAPES, ids=[f"a={a}-b={b}" for a, b in VARIATIONAL_SHAPES])
def test_beta_variational_minimises_the_kl(a, b):
    log_density = lambda psi: beta_log_density(psi, a, b)
    oracle = variational_oracle(log_density, bm.beta_logit_basis(a, b, "moment"), 0.0)
    assert_same_gaussian(bm.beta_logit_basis(a, b, "variational"), oracle, 2e-6)


@pytest.mark.parametrize("a, b", SHAPES, ids=IDS)
def test_gamma_moment_original_matches_the_gamma_mean_and_variance(a, b):
    mu, var = bm.gamma_log_basis(a, b, "moment-original")
    sd = np.sqrt(var)

    def lognormal_moment(k):
        f = lambda z: np.exp(-0.5 * z * z + k * (mu + sd * z)) / np.sqrt(2 * np.pi)
        return integrate.quad(f, -40, 40, points=[k * sd], limit=200, epsabs=0, epsrel=1e-13)[0]

    mean = lognormal_moment(1)
    np.testing.assert_allclose(mean, a / b, rtol=1e-9)
    np.testing.assert_allclose(lognormal_moment(2) - mean**2, a / b**2, rtol=1e-8)


# ---- the binary construction ----


@pytest.mark.parametrize("method", ["laplace", "moment", "moment-original"])
@pytest.mark.parametrize("a, b", SHAPES, ids=IDS)
def test_beta_is_the_difference_of_two_gamma_logs(a, b, method):
    # logit(ω₁/(ω₁ + ω₀)) = log ω₁ − log ω₀: exact for laplace and moment, the definition for moment-original
    mean_1, var_1 = bm.gamma_log_basis(a, 1.0, method)
    mean_0, var_0 = bm.gamma_log_basis(b, 1.0, method)
    np.testing.assert_allclose(bm.beta_logit_basis(a, b, method), (mean_1 - mean_0, var_1 + var_0), rtol=1e-13,
                               atol=1e-14)


def test_variational_is_not_the_difference_of_two_gamma_logs():
    mean_1, var_1 = bm.gamma_log_basis(2.0, 1.0, "variational")
    mean_0, var_0 = bm.gamma_log_basis(0.5, 1.0, "variational")
    mean, var = bm.beta_logit_basis(2.0, 0.5, "variational")
    # KL(q ‖ p) is not additive over a difference of independent variables, unlike means, variances and modes
    assert abs(mean - (mean_1 - mean_0)) > 0.01 and abs(var - (var_1 + var_0)) > 0.1


@pytest.mark.parametrize("a, b", [(2.0, 5.0), (0.7, 3.0), (10.0, 1.5)])
def test_beta_moment_matches_logit_of_beta_draws(a, b):
    draws = np.random.default_rng(int(100 * a + b)).beta(a, b, size=1_000_000)
    logits = np.log(draws) - np.log1p(-draws)
    count = logits.size
    mean, var = bm.beta_logit_basis(a, b, "moment")
    assert abs(logits.mean() - mean) < 5.0 * logits.std() / np.sqrt(count)
    squared = (logits - logits.mean()) ** 2
    assert abs(squared.mean() - var) < 5.0 * squared.std() / np.sqrt(count)


# ---- pseudo-observations ----


@pytest.mark.parametrize("method", bm.METHODS)
def test_softmax_pseudo_observations_use_the_dirichlet_posterior(method):
    labels = np.array([2, 0, 1, 2, 3])
    targets, variances = bm.softmax_pseudo_observations(labels, 4, alpha_epsilon=0.1, method=method)
    assert targets.shape == variances.shape == (5, 4)
    hit, miss = bm.gamma_log_basis(1.1, 1.0, method), bm.gamma_log_basis(0.1, 1.0, method)
    for n, label in enumerate(labels):
        for k in range(4):
            expected = hit if k == label else miss
            np.testing.assert_allclose((targets[n, k], variances[n, k]), expected, rtol=1e-14)


def test_softmax_pseudo_observations_take_one_alpha_per_class():
    alpha = np.array([0.1, 0.2, 0.5])
    targets, variances = bm.softmax_pseudo_observations([1, 0], 3, alpha_epsilon=alpha, method="moment")
    concentration = np.array([[0.1, 1.2, 0.5], [1.1, 0.2, 0.5]])
    np.testing.assert_allclose(targets, special.digamma(concentration), rtol=1e-14)
    np.testing.assert_allclose(variances, special.polygamma(1, concentration), rtol=1e-14)


def test_softmax_pseudo_observations_default_alpha_is_a_tenth():
    targets, _ = bm.softmax_pseudo_observations([0], 2)
    np.testing.assert_allclose(targets, [[special.digamma(1.1), special.digamma(0.1)]], rtol=1e-14)


@pytest.mark.parametrize("method", bm.METHODS)
def test_logistic_pseudo_observations_use_the_beta_posterior(method):
    y = np.array([1, 0, 0, 1, 1])
    targets, variances = bm.logistic_pseudo_observations(y, alpha_epsilon=0.2, method=method)
    assert targets.shape == variances.shape == (5,)
    # β_ε defaults to α_ε: y = 1 gives Beta(1.2, 0.2), y = 0 gives Beta(0.2, 1.2)
    positive, negative = bm.beta_logit_basis(1.2, 0.2, method), bm.beta_logit_basis(0.2, 1.2, method)
    for n in range(5):
        np.testing.assert_allclose((targets[n], variances[n]), positive if y[n] else negative, rtol=1e-12)
    # with α_ε = β_ε the two labels are mirror images on the logit axis
    np.testing.assert_allclose(positive, (-negative[0], negative[1]), rtol=1e-9, atol=1e-12)


def test_logistic_pseudo_observations_take_a_separate_beta():
    targets, variances = bm.logistic_pseudo_observations([1, 0], alpha_epsilon=0.1, beta_epsilon=0.4,
                                                         method="laplace")
    np.testing.assert_allclose(targets, [np.log(1.1 / 0.4), np.log(0.1 / 1.4)], rtol=1e-14)
    np.testing.assert_allclose(variances, [1.5 / (1.1 * 0.4), 1.5 / (0.1 * 1.4)], rtol=1e-14)


# ---- the variational Newton ----


def logistic_normal_reference(mu, sd):
    """E[h], E[σ], E[σ′], E[σ″], E[σ‴] under N(mu, sd²) by quad in z, split where ψ = 0."""
    s = lambda x: special.expit(x)
    d1 = lambda x: s(x) * s(-x)
    functions = [lambda x: np.logaddexp(0.0, -x), s, d1, lambda x: d1(x) * (1 - 2 * s(x)),
                 lambda x: d1(x) * (1 - 6 * d1(x))]
    z0 = -mu / sd
    points = [z0] if abs(z0) < 40 else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)  # 1e-15 is at the edge of double precision
        return [integrate.quad(lambda z: np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi) * f(mu + sd * z), -40, 40,
                               points=points, limit=500, epsabs=1e-15, epsrel=1e-14)[0] for f in functions]


def test_logistic_normal_expectations_on_both_quadrature_rules():
    mus, sds = [-60.0, -5.0, 0.0, 1.0, 20.0], [0.05, 0.5, 1.4, 1.6, 3.0, 10.0, 30.0, 150.0]
    grid = [(m, s) for m in mus for s in sds]
    got = bm._logistic_normal_expectations(np.array([g[0] for g in grid]), np.array([g[1] for g in grid]))
    for j, (m, s) in enumerate(grid):
        np.testing.assert_allclose(got[:, j], logistic_normal_reference(m, s), rtol=0, atol=1e-11,
                                   err_msg=f"mu={m} sd={s}")


def objective_by_trapezoid(a, b, mu, log_var):
    """F = −½ s + b μ + (a + b) E_q[log(1 + e^{−ψ})] with E_q by the trapezoid rule on a fine ψ grid.

    The integrand is analytic in |Im ψ| < π and Gaussian-tailed, so with a step below both 1/4 and σ/4 the
    rule's error is ~exp(−2π²/step) relative: far below rounding.
    """
    sd = np.exp(0.5 * log_var)
    step = min(0.25, sd / 4)
    psi = np.arange(mu - 14 * sd, mu + 14 * sd + step, step)
    weights = np.exp(-0.5 * ((psi - mu) / sd) ** 2) / (sd * np.sqrt(2 * np.pi)) * step
    return -0.5 * log_var + b * mu + (a + b) * (weights @ np.logaddexp(0.0, -psi))


def scaled_gradient_by_differences(a, b, mu, log_var, delta=1e-4):
    """(σ ∂F/∂μ, ∂F/∂s) by central differences of the trapezoid F: the coordinates where the Hessian is ~1."""
    sd = np.exp(0.5 * log_var)
    f = lambda m, s: objective_by_trapezoid(a, b, m, s)
    return ((f(mu + delta * sd, log_var) - f(mu - delta * sd, log_var)) / (2 * delta),
            (f(mu, log_var + delta) - f(mu, log_var - delta)) / (2 * delta))


def test_variational_derivatives_match_finite_differences():
    rng = np.random.default_rng(3)
    a = np.exp(rng.uniform(np.log(0.02), np.log(50), 40))
    b = np.exp(rng.uniform(np.log(0.02), np.log(50), 40))
    mu = rng.normal(0.0, 5.0, 40)
    log_var = rng.uniform(np.log(0.01), np.log(1e4), 40)  # σ from 0.1 to 100: both quadrature rules
    value, gradient, hessian = bm._variational_derivatives(a, b, mu, log_var)
    sd = np.exp(0.5 * log_var)
    delta = 1e-4
    for j in range(40):
        assert abs(value[j] - objective_by_trapezoid(a[j], b[j], mu[j], log_var[j])) < 1e-10 * (1 + abs(value[j]))
        g_u, g_s = scaled_gradient_by_differences(a[j], b[j], mu[j], log_var[j], delta)
        np.testing.assert_allclose([sd[j] * gradient[0][j], gradient[1][j]], [g_u, g_s], rtol=1e-6, atol=1e-7)
    # the Hessian against differences of the gradient (both from the module: this checks its formulas)
    for shift, column in (((delta * sd, 0.0), (0, 1)), ((0.0, delta), (1, 2))):
        plus = bm._variational_derivatives(a, b, mu + shift[0], log_var + shift[1])[1]
        minus = bm._variational_derivatives(a, b, mu - shift[0], log_var - shift[1])[1]
        scale = sd if shift[1] == 0.0 else 1.0  # derivative in μ/σ, not μ
        for k, row in enumerate(column):
            numeric = (plus[k] - minus[k]) / (2 * delta)
            analytic = hessian[row] * scale
            np.testing.assert_allclose(numeric, analytic, rtol=1e-5, atol=1e-8 * np.max(np.abs(analytic)))


def test_variational_newton_converges_over_a_thousand_shapes():
    rng = np.random.default_rng(2024)
    a = np.exp(rng.uniform(np.log(0.01), np.log(100.0), 1000))
    b = np.exp(rng.uniform(np.log(0.01), np.log(100.0), 1000))
    mu, var = bm.beta_logit_basis(a, b, "variational")
    assert mu.shape == var.shape == (1000,) and np.all(np.isfinite(mu)) and np.all(var > 0)
    log_var = np.log(var)
    worst = 0.0
    for j in range(1000):
        worst = max(worst, *map(abs, scaled_gradient_by_differences(a[j], b[j], mu[j], log_var[j])))
    assert worst < 1e-6
    # and the optimum's two conditions: E_q[σ(ψ)] is the Beta mean, 1/σ² = (a + b) E_q[σ′(ψ)]
    _, e_p, e_d1, _, _ = bm._logistic_normal_expectations(mu, np.sqrt(var))
    np.testing.assert_allclose(e_p, a / (a + b), rtol=1e-8)
    np.testing.assert_allclose((a + b) * var * e_d1, 1.0, rtol=1e-8)


def test_variational_beta_broadcasts_and_keeps_shapes():
    mean, var = bm.beta_logit_basis(np.array([[0.3], [3.0]]), np.array([0.5, 5.0, 50.0]), "variational")
    assert mean.shape == var.shape == (2, 3)
    np.testing.assert_allclose((mean[1, 2], var[1, 2]), bm.beta_logit_basis(3.0, 50.0, "variational"), rtol=1e-9)
    scalar = bm.beta_logit_basis(2.0, 2.0, "variational")
    assert np.shape(scalar[0]) == () and abs(scalar[0]) < 1e-12


def test_variational_newton_that_cannot_converge_says_so(monkeypatch):
    monkeypatch.setattr(bm, "NEWTON_MAX_ITERATIONS", 1)
    with pytest.raises(NumericalError, match=r"method='variational'.*did not converge"):
        bm.beta_logit_basis([0.01, 5.0], [0.02, 1.0], "variational")


# ---- bad input ----


@pytest.mark.parametrize("function", [bm.gamma_log_basis, bm.beta_logit_basis])
def test_unknown_method_lists_the_known_ones(function):
    with pytest.raises(ModelError, match=r"unknown method 'mode'.*laplace, variational, moment, moment-original"):
        function(1.0, 1.0, "mode")


@pytest.mark.parametrize("bad, pattern", [(0.0, r"must be strictly positive, got 0\.0"),
                                          (-1.0, r"must be strictly positive, got -1\.0"),
                                          (np.nan, "contains NaN or infinite"), (np.inf, "contains NaN or infinite")])
def test_bad_shapes_and_rates(bad, pattern):
    with pytest.raises(ModelError, match="shape " + pattern):
        bm.gamma_log_basis([1.0, bad], 1.0)
    with pytest.raises(ModelError, match="rate " + pattern):
        bm.gamma_log_basis(1.0, bad)
    with pytest.raises(ModelError, match="b " + pattern):
        bm.beta_logit_basis(1.0, [2.0, bad], "variational")
    with pytest.raises(ModelError, match="alpha_epsilon " + pattern):
        bm.softmax_pseudo_observations([0, 1], 2, alpha_epsilon=bad)
    with pytest.raises(ModelError, match="beta_epsilon " + pattern):
        bm.logistic_pseudo_observations([0, 1], beta_epsilon=bad)


def test_bad_softmax_settings():
    with pytest.raises(ModelError, match=r"alpha_epsilon must be a scalar or have shape \(3,\)"):
        bm.softmax_pseudo_observations([0, 1], 3, alpha_epsilon=[0.1, 0.1])
    with pytest.raises(ModelError, match="n_classes must be at least 2"):
        bm.softmax_pseudo_observations([0, 0], 1)
    with pytest.raises(ModelError, match="n_classes must be an integer"):
        bm.softmax_pseudo_observations([0, 1], 2.0)
    with pytest.raises(ModelError, match="unknown method 'exact'"):
        bm.softmax_pseudo_observations([0, 1], 2, method="exact")


def test_bad_labels_name_the_first_offender():
    with pytest.raises(DataError, match=r"labels must lie in 0\.\.2, got 3 at index \(2,\)"):
        bm.softmax_pseudo_observations([0, 1, 3, -1], 3)
    with pytest.raises(DataError, match=r"labels must lie in 0\.\.2, got -1 at index \(1,\)"):
        bm.softmax_pseudo_observations([0, -1, 3], 3)
    with pytest.raises(DataError, match=r"labels must be integers, got 1\.5 at index \(1,\)"):
        bm.softmax_pseudo_observations([0.0, 1.5], 3)
    with pytest.raises(DataError, match=r"labels contains NaN .*index \(0,\)"):
        bm.softmax_pseudo_observations([np.nan, 1.0], 3)
    with pytest.raises(DataError, match="labels must be integers, got an array of dtype <U1"):
        bm.softmax_pseudo_observations(["a", "b"], 3)
    # whole-valued floats are labels
    np.testing.assert_array_equal(bm.softmax_pseudo_observations([1.0], 3)[0], bm.softmax_pseudo_observations([1], 3)[0])


def test_bad_binary_labels_name_the_first_offender():
    with pytest.raises(DataError, match=r"y must be 0 or 1, got 2 at index \(2,\)"):
        bm.logistic_pseudo_observations([0, 1, 2, 1])
    with pytest.raises(DataError, match=r"y must be 0 or 1, got -1 at index \(0,\)"):
        bm.logistic_pseudo_observations([-1, 1])
    with pytest.raises(DataError, match=r"y contains NaN .*index \(1,\)"):
        bm.logistic_pseudo_observations([1.0, np.nan])
    with pytest.raises(DataError, match=r"y must be integers, got 0\.5 at index \(0,\)"):
        bm.logistic_pseudo_observations([0.5, 1.0])
    with pytest.raises(ModelError, match="unknown method 'probit'"):
        bm.logistic_pseudo_observations([0, 1], method="probit")
    np.testing.assert_array_equal(bm.logistic_pseudo_observations([True, False])[0],
                                  bm.logistic_pseudo_observations([1, 0])[0])

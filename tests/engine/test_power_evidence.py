"""A node power ω under belief propagation: the evidence ∫ p(x) f(y | x)^ω dx, against its closed form and
quadrature. The powered message's log-scale enters it, so it must be kept where sum-product terms read it."""
import numpy as np
import pytest
from scipy import integrate, stats

import fgraph as fg
from fgraph.nodes import Normal


@pytest.mark.parametrize("omega", [0.3, 0.75, 1.0])
def test_the_evidence_with_a_powered_likelihood_equals_its_closed_form(omega):
    """x ~ N(0, 1), N(y | x, v)^ω = (2πv)^((1−ω)/2) ω^(−1/2) N(y | x, v/ω): Z = that constant · N(y | 0, 1 + v/ω)."""
    y, v = 1.3, 2.0
    with fg.Model() as model:
        x = Normal("x", mean=0.0, var=1.0)
        Normal("y", mean=x, var=v, observed=y, power=omega)
    result = fg.infer(model)
    closed = (0.5 * (1.0 - omega) * np.log(2 * np.pi * v) - 0.5 * np.log(omega)
              + stats.norm.logpdf(y, 0.0, np.sqrt(1.0 + v / omega)))
    quadrature, _ = integrate.quad(lambda t: stats.norm.pdf(t) * stats.norm.pdf(y, t, np.sqrt(v)) ** omega,
                                   -30, 30, epsabs=1e-14)
    assert closed == pytest.approx(np.log(quadrature), rel=1e-9)
    assert result.log_evidence == pytest.approx(closed, rel=1e-10)


def test_identical_nodes_of_different_powers_keep_their_own_powers():
    """Many observations of x through identical nodes, half of them powered: N(y_i | x, v)^ω_i is
    N(y_i | x, v/ω_i) up to a constant, so the posterior is the conjugate one with variances v/ω_i, and the
    evidence the product of the constants times the marginal likelihood of those variances."""
    rng = np.random.default_rng(7)
    ys = rng.normal(0.8, 1.0, size=12)
    omegas = np.where(np.arange(12) % 2 == 0, 0.4, 1.0)
    v = 1.5
    with fg.Model() as model:
        x = Normal("x", mean=0.0, var=1.0)
        for i, (y, omega) in enumerate(zip(ys, omegas)):
            Normal(f"y{i}", mean=x, var=v, observed=y, power=omega)
    result = fg.infer(model)
    precision = 1.0 + np.sum(omegas / v)
    mean = np.sum(omegas * ys / v) / precision
    posterior = result.marginal("x")
    assert float(posterior.mean) == pytest.approx(mean, rel=1e-12)
    assert float(posterior.var) == pytest.approx(1.0 / precision, rel=1e-12)
    variances = v / omegas
    constants = np.sum(0.5 * (1.0 - omegas) * np.log(2 * np.pi * v) - 0.5 * np.log(omegas))
    marginal = stats.multivariate_normal(np.zeros(12), np.diag(variances) + np.ones((12, 12))).logpdf(ys)
    assert result.log_evidence == pytest.approx(constants + marginal, rel=1e-10)

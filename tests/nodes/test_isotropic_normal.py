"""IsotropicNormal node: the average energy against Monte Carlo and at point masses, the evidence of a conjugate
model, DSL validation."""
import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln

import fgraph as fg
from fgraph.errors import ModelError
from fgraph.families import MvNormalMeanCovariance, PointMass
from fgraph.families.gamma import Gamma as GammaFamily
from fgraph.nodes import Gamma, IsotropicNormal, Wishart
from fgraph.nodes.isotropic_normal import IsotropicNormalNode
from tests.rules.tables import energy


def test_energy_against_monte_carlo():
    """U = −E[log N(out | mean, τ⁻¹ I)] under independent q(out) q(mean) q(τ), a batch of two."""
    rng = np.random.default_rng(0)
    q_out = MvNormalMeanCovariance(np.array([[1.0, -1.0, 0.5], [0.0, 2.0, 1.0]]),
                                   np.array([np.diag([0.3, 0.2, 0.1]), 0.5 * np.eye(3)]))
    q_mean = MvNormalMeanCovariance(np.array([0.2, 0.0, -0.3]), np.array([[0.4, 0.1, 0.0], [0.1, 0.3, 0.0],
                                                                            [0.0, 0.0, 0.2]]))
    q_precision = GammaFamily(np.array([3.0, 1.5]), np.array([2.0, 0.5]))
    value = energy(IsotropicNormalNode, {"q_out": q_out, "q_mean": q_mean, "q_precision": q_precision})
    count = 400_000
    out, mean, tau = q_out.sample(rng, count), q_mean.sample(rng, count), q_precision.sample(rng, count)
    squared = np.sum((out - mean[:, None]) ** 2, axis=-1)
    draws = -(-1.5 * np.log(2 * np.pi) + 1.5 * np.log(tau) - 0.5 * tau * squared)
    np.testing.assert_allclose(value, draws.mean(0), atol=5 * draws.std(0).max() / np.sqrt(count))


def test_energy_at_point_masses_is_minus_the_log_factor():
    out, mean, tau = np.array([0.3, -1.2]), np.array([1.0, 0.5]), 2.5
    value = energy(IsotropicNormalNode, {"q_out": PointMass(out, 1), "q_mean": PointMass(mean, 1),
                                         "q_precision": PointMass(tau)})
    np.testing.assert_allclose(value, -stats.multivariate_normal.logpdf(out, mean, np.eye(2) / tau), rtol=1e-12)


def test_the_evidence_of_points_around_a_known_mean_with_a_gamma_precision():
    """x_i ~ N(0, τ⁻¹ I_d), τ ~ Gamma(a, b): BP gives the posterior Gamma(a + nd/2, b + S/2) and the exact evidence
    (2π)^(−nd/2) bᵃ Γ(a + nd/2) / (Γ(a) (b + S/2)^(a + nd/2)), S = Σ ‖x_i‖²."""
    rng = np.random.default_rng(1)
    n, d, a, b = 7, 3, 2.0, 1.5
    x = rng.normal(scale=0.7, size=(n, d))
    with fg.Model() as model:
        tau = Gamma("tau", a, b)
        IsotropicNormal("x", np.zeros(d), tau, observed=x)
    result = fg.infer(model, algorithm="bp")
    S = np.sum(x * x)
    q = result.marginal("tau")
    np.testing.assert_allclose([q.shape, q.rate], [a + n * d / 2, b + S / 2], rtol=1e-12)
    expected = (-n * d / 2 * np.log(2 * np.pi) + a * np.log(b) + gammaln(a + n * d / 2) - gammaln(a)
                - (a + n * d / 2) * np.log(b + S / 2))
    np.testing.assert_allclose(result.log_evidence, expected, rtol=1e-12)


def test_constructor_errors():
    with fg.Model():
        W = Wishart("W", 3.0, np.eye(2))
        with pytest.raises(ModelError, match="precision must be a scalar variable"):
            IsotropicNormal("x", np.zeros(2), W)
        with pytest.raises(ModelError, match="vector"):
            IsotropicNormal("y", 0.0, 1.0)
        with pytest.raises(ModelError, match="positive"):
            IsotropicNormal("z", np.zeros(2), -1.0)

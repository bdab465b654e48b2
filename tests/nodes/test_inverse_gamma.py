"""The inverse-gamma node: average energy U = -E[log InverseGamma(out | α, β)], constructor checks."""
import numpy as np
import pytest
from scipy import stats

import fgraph as fg
from fgraph.families import GammaShapeLikelihood, InverseGamma, PointMass
from fgraph.families.gamma import Gamma
from fgraph.nodes import InverseGamma as InverseGammaVariable
from fgraph.nodes.inverse_gamma import InverseGammaNode
from tests.rules.tables import energy

SAMPLE_COUNT = 400_000
STANDARD_ERRORS = 5.0


def test_energy_with_clamped_interfaces_is_minus_log_density():
    x = np.array([0.5, 2.0, 7.0])
    result = energy(InverseGammaNode, {"q_out": PointMass(x), "q_shape": PointMass(2.5), "q_scale": PointMass(3.0)})
    np.testing.assert_allclose(result, -stats.invgamma(a=2.5, scale=3.0).logpdf(x), rtol=1e-12)


def test_energy_against_monte_carlo():
    """Independent draws of (out, α, β) from their marginals (scipy's samplers): the mean of -log f within 5 SE."""
    q_out, q_shape, q_scale = InverseGamma(4.0, 3.0), Gamma(6.0, 2.0), Gamma(5.0, 2.5)
    rng = np.random.default_rng(0)
    out = stats.invgamma(a=4.0, scale=3.0).rvs(SAMPLE_COUNT, random_state=rng)
    shape = stats.gamma(a=6.0, scale=0.5).rvs(SAMPLE_COUNT, random_state=rng)
    scale = stats.gamma(a=5.0, scale=0.4).rvs(SAMPLE_COUNT, random_state=rng)
    minus_log_f = -stats.invgamma(a=shape, scale=scale).logpdf(out)
    result = energy(InverseGammaNode, {"q_out": q_out, "q_shape": q_shape, "q_scale": q_scale})
    assert abs(result - minus_log_f.mean()) < STANDARD_ERRORS * minus_log_f.std() / np.sqrt(SAMPLE_COUNT)


def test_energy_with_a_shape_marginal_of_its_own_family():
    """E[log Γ(α)] enters through the GammaShapeLikelihood's quadrature; the rest is linear in E[α]."""
    q_shape = GammaShapeLikelihood(2.0, -4.5, 10.0)
    q_out, q_scale = PointMass(1.5), PointMass(2.0)
    result = energy(InverseGammaNode, {"q_out": q_out, "q_shape": q_shape, "q_scale": q_scale})
    # U(α) = -(α log 2 - log Γ(α) - (α + 1) log 1.5 - 2/1.5), averaged over α by the family (checked against
    # adaptive quadrature in tests/families/test_gamma_shape.py)
    expected = -(q_shape.mean * np.log(2.0) - q_shape.mean_log_gamma - (q_shape.mean + 1.0) * np.log(1.5) - 2.0 / 1.5)
    np.testing.assert_allclose(result, expected, rtol=1e-13)


def test_constructor_shapes_and_checks():
    with fg.Model() as model:
        v = InverseGammaVariable("v", shape=3.0, scale=2.0)
        InverseGammaVariable("x", shape=2.0, scale=v, observed=np.ones((4, 3)))
    assert model["x"].batch_shape == (4, 3) and model["v"].batch_shape == ()
    with pytest.raises(fg.ModelError, match="node 'y', parameter 'scale'"):
        with fg.Model():
            InverseGammaVariable("y", shape=1.0, scale=[1.0, 0.0])
    with pytest.raises(fg.DataError, match="'y'.*out must be strictly positive"):
        with fg.Model():
            InverseGammaVariable("y", shape=1.0, scale=1.0, observed=[1.0, -2.0])

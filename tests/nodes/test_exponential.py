"""The exponential node: average energy U = −E[log rate] + E[rate] E[out], constructor checks."""
import numpy as np
import pytest
from scipy import integrate

import fgraph as fg
from fgraph.families import PointMass
from fgraph.families.gamma import Gamma
from fgraph.nodes import Exponential
from fgraph.nodes.exponential import ExponentialNode
from tests.rules.tables import energy


def quadrature_energy(q_out: Gamma, q_rate: Gamma) -> float:
    """−∫∫ q(out) q(rate) log(rate e^{−rate out}) by nested quadrature."""
    def inner(rate):
        value, _ = integrate.quad(lambda out: np.exp(q_out.logpdf(out)) * (np.log(rate) - rate * out), 0.0, np.inf)
        return np.exp(q_rate.logpdf(rate)) * value

    value, _ = integrate.quad(inner, 0.0, np.inf, epsrel=1e-10)
    return -value


@pytest.mark.parametrize("q_out, q_rate", [(Gamma(2.0, 3.0), Gamma(4.0, 2.0)), (Gamma(1.5, 0.5), Gamma(3.0, 6.0))])
def test_energy_against_quadrature(q_out, q_rate):
    np.testing.assert_allclose(energy(ExponentialNode, {"q_out": q_out, "q_rate": q_rate}),
                               quadrature_energy(q_out, q_rate), rtol=1e-7)


def test_energy_with_clamped_interfaces_is_minus_log_density():
    # out = [0.5, 2] observed, rate = 3 clamped: U = −log(3 e^{−3 x})
    x = np.array([0.5, 2.0])
    result = energy(ExponentialNode, {"q_out": PointMass(x), "q_rate": PointMass(3.0)})
    np.testing.assert_allclose(result, -(np.log(3.0) - 3.0 * x), rtol=1e-12)


def test_constructor_shapes_and_checks():
    with fg.Model() as model:
        rate = Exponential("rate", rate=2.0)
        Exponential("x", rate=rate, observed=np.ones((4, 3)))
    assert model["x"].batch_shape == (4, 3) and model["rate"].batch_shape == ()
    with pytest.raises(fg.ModelError, match="node 'y', parameter 'rate'"):
        with fg.Model():
            Exponential("y", rate=[1.0, 0.0])
    with pytest.raises(fg.DataError, match="'y'.*out must be strictly positive"):
        with fg.Model():
            Exponential("y", rate=1.0, observed=[1.0, 0.0])

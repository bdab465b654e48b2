"""Table test of the NormalMeanPrecision rules towards ``mean`` (the factor is symmetric in out and mean)."""
import numpy as np
import pytest

from fgraph.families import NormalMeanPrecision, NormalMeanVariance, PointMass
from fgraph.families.gamma import Gamma
from fgraph.nodes.normal import NormalMeanPrecision as Node
from tests.rules.tables import assert_message, message, normal

# E[log τ] for τ ~ Gamma(4, 2) is digamma(4) - log 2 = 11/6 - γ - log 2, and E[τ] = 2.
GAMMA_4_2_LOG_SCALE = 0.5 * ((11.0 / 6.0 - np.euler_gamma - np.log(2.0)) - np.log(2.0))

CASES = [
    pytest.param({"m_out": NormalMeanPrecision(-1.0, 2.0), "q_precision": PointMass(0.5)}, normal(-1.0, 2.5), id="sp"),
    pytest.param({"m_out": NormalMeanVariance(3.0, 1.0), "q_precision": Gamma(4.0, 2.0)},
                 normal(3.0, 1.5, GAMMA_4_2_LOG_SCALE), id="structured-gamma"),
    # observed out: N(y | mean, 1/τ) = N(mean | y, 1/τ), log-scale 0
    pytest.param({"q_out": PointMass(2.0), "q_precision": PointMass(4.0)}, normal(2.0, 0.25), id="observed-out"),
    pytest.param({"q_out": NormalMeanVariance(1.0, 3.0), "q_precision": Gamma(1.0, 2.0)}, normal(1.0, 2.0), id="mf-gamma"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_mean(inputs, expected):
    assert_message(message(Node, "mean", inputs), expected)


def test_mean_field_of_one_element_equals_a_batch_of_one():
    """One element (the plate collapsed to its data's moments) takes a float path: the batched message's numbers."""
    from fgraph.plates import EmpiricalMoments
    from fgraph.rules.normal_mean_precision.mean import mean_field

    data = np.array([0.5, 2.0, -1.25, 3.5])
    q_precision = Gamma(3.0, 2.0)
    one = mean_field(EmpiricalMoments(data, 0, 1), q_precision)
    batch = mean_field(EmpiricalMoments(data[:, None], 0, 1), q_precision)
    assert type(one) is NormalMeanVariance and one.batch_shape == () and batch.batch_shape == (1,)
    assert float(one.mean) == float(batch.mean[0]) == pytest.approx(1.1875, rel=1e-15)  # the data's mean
    assert float(one.var) == float(batch.var[0]) == pytest.approx(2.0 / 3.0, rel=1e-15)  # 1 / E[τ], E[τ] = 3/2
    assert one.normalised() is one  # log-scale 0, the shared zero

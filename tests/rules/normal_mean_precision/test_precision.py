"""Table test of the NormalMeanPrecision rules towards ``precision``: Gamma(τ | 3/2, S/2), S = E[(out - mean)²].

For clamped out and mean the log-scale is ∫ (2π)^(-1/2) τ^(1/2) exp(-τ S/2) dτ = (2π)^(-1/2) Γ(3/2) (2/S)^(3/2)
= S^(-3/2), which makes the message exact; a variational message (a latent out or mean) is defined up to a
constant and carries log-scale 0.
"""
import numpy as np
import pytest

from fgraph.families import MvNormalMeanCovariance, NormalMeanVariance, PointMass
from fgraph.nodes.normal import NormalMeanPrecision as Node
from tests.rules.tables import assert_message, gamma, message

CASES = [
    # S = (3 - 1)² = 4
    pytest.param({"q_out": PointMass(3.0), "q_mean": PointMass(1.0)}, gamma(1.5, 2.0, -1.5 * np.log(4.0)), id="point-masses"),
    # S = (1 - 0)² + 2 + 1 = 4
    pytest.param({"q_out": NormalMeanVariance(1.0, 2.0), "q_mean": NormalMeanVariance(0.0, 1.0)},
                 gamma(1.5, 2.0), id="normals"),
    # S = (2 - 1)² + 0.5 = 1.5
    pytest.param({"q_out": PointMass(2.0), "q_mean": NormalMeanVariance(1.0, 0.5)},
                 gamma(1.5, 0.75), id="observed-out"),
    pytest.param({"q_out": PointMass([3.0, 0.0]), "q_mean": PointMass(1.0)},
                 gamma(1.5, [2.0, 0.5], -1.5 * np.log([4.0, 1.0])), id="batched"),
    # joint q(out, mean): S = 2 - 2 * 0.5 + 1 + (1 - 0)² = 3
    pytest.param({"q_out_mean": MvNormalMeanCovariance([1.0, 0.0], [[2.0, 0.5], [0.5, 1.0]])},
                 gamma(1.5, 1.5, -1.5 * np.log(3.0)), id="structured"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_precision(inputs, expected):
    assert_message(message(Node, "precision", inputs), expected)


def test_mean_field_of_one_element_is_a_plain_gamma_equal_to_a_batch_of_one():
    """One element (a collapsed plate) takes a float path: the batched message's parameters, to the last bit."""
    from fgraph.families.gamma import Gamma, GammaNatural
    from fgraph.rules.normal_mean_precision.precision import mean_field

    q_mean = NormalMeanVariance(-0.2, 0.9)
    one = mean_field(NormalMeanVariance(1.3, 0.4), q_mean)
    batch = mean_field(NormalMeanVariance([1.3], [0.4]), q_mean)
    assert type(one) is Gamma and isinstance(batch, GammaNatural) and one.batch_shape == ()
    assert float(one.shape) == float(batch.shape[0]) == 1.5
    assert float(one.rate) == float(batch.rate[0])
    assert float(one.rate) == pytest.approx(0.5 * (1.5**2 + 0.4 + 0.9), rel=1e-15)  # S = (1.3 + 0.2)² + 0.4 + 0.9
    assert float(one.log_scale) == 0.0

"""GaussianLinear node: DSL validation and the average energy computed by hand."""
import numpy as np
import pytest

import fgraph as fg
from fgraph.errors import ModelError
from fgraph.families import NormalMeanVariance, PointMass
from fgraph.nodes import Linear, Normal
from fgraph.nodes.gaussian_linear import GaussianLinear
from tests.rules.tables import TOLERANCE, energy

LOG_2PI = np.log(2.0 * np.pi)


def test_batch_shape_from_data_and_previous():
    with fg.Model() as model:
        x = Normal("x", mean=np.zeros(4), var=1.0)
        y = Linear("y", x, 0.5, 2.0)
        z = Linear("z", x, 0.5, 2.0, observed=np.ones(4))
    assert y.batch_shape == (4,) and z.batch_shape == (4,) and z.observed
    assert model.nodes[1].gain == 0.5


@pytest.mark.parametrize("gain, var, message", [(0.0, 1.0, "zero gain"), ([1.0, 2.0], 1.0, "finite number"),
                                                (1.0, -1.0, "strictly positive")])
def test_invalid_parameters_are_reported(gain, var, message):
    with fg.Model():
        x = Normal("x", mean=0.0, var=1.0)
        with pytest.raises(ModelError, match=message):
            Linear("y", x, gain, var)


# U = ½ (log 2π + log v + E[(out - a in)²] / v), a = 2, v = 2, out = 3
ENERGY_CASES = [
    # (3 - 2)² = 1
    pytest.param({"q_out": PointMass(3.0), "q_in": PointMass(1.0), "q_var": PointMass(2.0)},
                 0.5 * (LOG_2PI + np.log(2.0) + 0.5), id="point-masses"),
    # (3 - 2)² + 4 * 1/2 = 3
    pytest.param({"q_out": PointMass(3.0), "q_in": NormalMeanVariance(1.0, 0.5), "q_var": PointMass(2.0)},
                 0.5 * (LOG_2PI + np.log(2.0) + 1.5), id="normal-in"),
    # 1 + 1 (variance of out) + 2 = 4
    pytest.param({"q_out": NormalMeanVariance(3.0, 1.0), "q_in": NormalMeanVariance(1.0, 0.5), "q_var": PointMass(2.0)},
                 0.5 * (LOG_2PI + np.log(2.0) + 2.0), id="normals"),
]


@pytest.mark.parametrize("inputs, expected", ENERGY_CASES)
def test_average_energy(inputs, expected):
    np.testing.assert_allclose(energy(GaussianLinear, inputs, gain=2.0), expected, **TOLERANCE)

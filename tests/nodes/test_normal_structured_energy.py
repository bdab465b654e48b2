"""The average energies of the normal nodes under the joint marginal q(out, mean) of a structured cluster,
worked out by hand: U = ½ (log 2π ∓ E[log τ or log v]) + ½ E[τ or 1/v] E[(out − mean)²], with
E[(out − mean)²] = (E out − E mean)² + Var out + Var mean − 2 Cov(out, mean)."""
import numpy as np
import pytest

from fgraph.families import InverseGamma, MvNormalMeanCovariance, PointMass
from fgraph.families.gamma import Gamma
from fgraph.nodes.normal import NormalMeanPrecision, NormalMeanVariance
from tests.rules.tables import TOLERANCE, energy

LOG_2PI = np.log(2.0 * np.pi)
# means (1, 0.5), variances 0.5 and 0.3, covariance 0.2: E[(out − mean)²] = 0.25 + 0.5 + 0.3 − 0.4 = 0.65
JOINT = MvNormalMeanCovariance([1.0, 0.5], [[0.5, 0.2], [0.2, 0.3]])
# the same marginals without correlation: 0.25 + 0.8 = 1.05
INDEPENDENT = MvNormalMeanCovariance([1.0, 0.5], [[0.5, 0.0], [0.0, 0.3]])

CASES = [
    # τ ~ Gamma(2, 1): E τ = 2, E log τ = ψ(2) = 1 − γ
    pytest.param(NormalMeanPrecision, {"q_out_mean": JOINT, "q_precision": Gamma(2.0, 1.0)},
                 0.5 * LOG_2PI - 0.5 * (1.0 - np.euler_gamma) + 0.65, id="precision-gamma"),
    pytest.param(NormalMeanPrecision, {"q_out_mean": INDEPENDENT, "q_precision": Gamma(2.0, 1.0)},
                 0.5 * LOG_2PI - 0.5 * (1.0 - np.euler_gamma) + 1.05, id="precision-gamma-uncorrelated"),
    # τ = 4 known
    pytest.param(NormalMeanPrecision, {"q_out_mean": JOINT, "q_precision": PointMass(4.0)},
                 0.5 * (LOG_2PI - np.log(4.0)) + 2.0 * 0.65, id="precision-point-mass"),
    # v ~ InverseGamma(3, 2): E[1/v] = 3/2, E log v = log 2 − ψ(3) = log 2 − 3/2 + γ
    pytest.param(NormalMeanVariance, {"q_out_mean": JOINT, "q_var": InverseGamma(3.0, 2.0)},
                 0.5 * (LOG_2PI + np.log(2.0) - 1.5 + np.euler_gamma) + 0.75 * 0.65, id="variance-inverse-gamma"),
    pytest.param(NormalMeanVariance, {"q_out_mean": JOINT, "q_var": PointMass(0.5)},
                 0.5 * (LOG_2PI + np.log(0.5)) + 0.65, id="variance-point-mass"),
]


@pytest.mark.parametrize("node_type, inputs, expected", CASES)
def test_average_energy_of_the_joint_marginal(node_type, inputs, expected):
    np.testing.assert_allclose(energy(node_type, inputs), expected, **TOLERANCE)


def test_a_batch_of_joint_marginals():
    """One energy per element: the second pair has means (0, 0), unit variances, covariance 0.5: E = 1."""
    joint = MvNormalMeanCovariance(np.array([[1.0, 0.5], [0.0, 0.0]]),
                                   np.array([[[0.5, 0.2], [0.2, 0.3]], [[1.0, 0.5], [0.5, 1.0]]]))
    result = energy(NormalMeanPrecision, {"q_out_mean": joint, "q_precision": PointMass(4.0)}, batch_shape=(2,))
    np.testing.assert_allclose(result, 0.5 * (LOG_2PI - np.log(4.0)) + 2.0 * np.array([0.65, 1.0]), **TOLERANCE)

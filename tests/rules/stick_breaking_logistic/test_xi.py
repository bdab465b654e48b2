"""Message of the stick-breaking logistic node to ``xi``: the point mass at c_k = sqrt(E[ψ_k²]), one per stick.

β_0 ~ N([1, −2], [[0.5, 0.1], [0.1, 0.3]]) (E[ββᵀ] = [[1.5, −1.9], [−1.9, 4.3]]),
β_1 ~ N([0.5, 1], diag(0.2, 0.1)) (E[ββᵀ] = [[0.45, 0.5], [0.5, 1.1]]).
"""
import numpy as np
import pytest

from fgraph.families import MvNormalMeanCovariance, PointMass
from fgraph.families.mixture import Mixture
from fgraph.nodes.stick_breaking_logistic import StickBreakingLogisticNode
from tests.rules.tables import assert_message, message, point_mass

INTERFACES = ("out", "input", "xi", "coefficients1", "coefficients2")
STICKS = (MvNormalMeanCovariance([1.0, -2.0], [[0.5, 0.1], [0.1, 0.3]]),
          MvNormalMeanCovariance([0.5, 1.0], [[0.2, 0.0], [0.0, 0.1]]))

CASES = [
    # x̃ = [2, 1]: x̃ᵀE[β_0β_0ᵀ]x̃ = 6 − 7.6 + 4.3 = 2.7; x̃ᵀE[β_1β_1ᵀ]x̃ = 1.8 + 2 + 1.1 = 4.9
    pytest.param({"q_input": PointMass(np.array([2.0]), 1),
                  "q_coefficients": STICKS}, point_mass(np.sqrt([2.7, 4.9])), id="known-input"),
    # x ~ N(1, 0.5): E[x̃x̃ᵀ] = [[1.5, 1], [1, 1]]: 2.25 − 3.8 + 4.3 = 2.75; 0.675 + 1 + 1.1 = 2.775
    pytest.param({"q_input": MvNormalMeanCovariance([1.0], [[0.5]]),
                  "q_coefficients": STICKS}, point_mass(np.sqrt([2.75, 2.775])), id="latent-input"),
    # known coefficients: c_k = |ψ_k| = |[1, −1]·[2, 1]|, |[0.5, −3]·[2, 1]| = 1, 2
    pytest.param({"q_input": PointMass(np.array([2.0]), 1),
                  "q_coefficients": (PointMass(np.array([1.0, -1.0]), 1), PointMass(np.array([0.5, -3.0]), 1))},
                 point_mass([1.0, 2.0]), id="known-coefficients"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_xi(inputs, expected):
    result = message(StickBreakingLogisticNode, "xi", inputs, interfaces=INTERFACES)
    assert_message(result, expected)
    assert result.event_shape == (2,)


def test_a_plate_has_one_tilt_per_element_and_stick():
    rows = np.array([[2.0], [0.0], [-1.0]])
    result = message(StickBreakingLogisticNode, "xi",
                     {"q_input": PointMass(rows, 1),
                      "q_coefficients": STICKS}, interfaces=INTERFACES, batch_shape=(3,))
    # x̃ = [0, 1]: E[β₀²] = 4.3, 1.1;  x̃ = [−1, 1]: 1.5 + 3.8 + 4.3 = 9.6, 0.45 − 1 + 1.1 = 0.55
    np.testing.assert_allclose(result.value, np.sqrt([[2.7, 4.9], [4.3, 1.1], [9.6, 0.55]]), rtol=1e-14)


def test_a_mixture_input_enters_by_its_moments():
    """The CMN's hidden layer is a mixture of Gaussians: ¼ N(1, 0.5) + ¾ N(−1, 0.2) has E[x] = −0.5 and
    E[x²] = ¼·1.5 + ¾·1.2 = 1.275, so E[x̃x̃ᵀ] = [[1.275, −0.5], [−0.5, 1]]:
    tr(E[β_0β_0ᵀ] ·) = 1.9125 + 1.9 + 4.3 = 8.1125,  tr(E[β_1β_1ᵀ] ·) = 0.57375 − 0.5 + 1.1 = 1.17375."""
    mixture = Mixture(np.log([0.25, 0.75]), [MvNormalMeanCovariance([1.0], [[0.5]]),
                                             MvNormalMeanCovariance([-1.0], [[0.2]])])
    result = message(StickBreakingLogisticNode, "xi", {"q_input": mixture, "q_coefficients": STICKS},
                     interfaces=INTERFACES)
    np.testing.assert_allclose(result.value, np.sqrt([8.1125, 1.17375]), rtol=1e-14)

"""Table test of IsotropicNormal towards ``precision``: Gamma(τ | d/2 + 1, S/2), S = E[‖out − mean‖²].

For a known out and mean the log-scale is log ∫ (2π)^(−d/2) τ^(d/2) e^(−τS/2) dτ = −(d/2) log 2π + log Γ(d/2 + 1)
− (d/2 + 1) log(S/2) (checked by quadrature below); a variational message carries log-scale 0.
"""
import numpy as np
import pytest
from scipy import integrate

from fgraph.families import MvNormalMeanCovariance, PointMass
from fgraph.nodes.isotropic_normal import IsotropicNormalNode as Node
from tests.rules.tables import assert_message, gamma, message

LOG_2PI = np.log(2.0 * np.pi)

CASES = [
    # d = 2, S = 3² + 4² = 25: Gamma(2, 12.5), log-scale −log 2π + log Γ(2) − 2 log 12.5
    pytest.param({"q_out": PointMass(np.array([3.0, 4.0]), 1), "q_mean": PointMass(np.zeros(2), 1)},
                 gamma(2.0, 12.5, -LOG_2PI - 2.0 * np.log(12.5)), id="clamped"),
    # d = 3, S = ‖(1, 1, 1) − (1, 0, 0)‖² = 2: Gamma(5/2, 1), log-scale −(3/2) log 2π + log Γ(5/2) − 0
    pytest.param({"q_out": PointMass(np.ones(3), 1), "q_mean": PointMass(np.array([1.0, 0.0, 0.0]), 1)},
                 gamma(2.5, 1.0, -1.5 * LOG_2PI + np.log(0.75 * np.sqrt(np.pi))), id="clamped-3d"),
    # latent out N((1, 2), diag(1/2, 1/4)), known mean 0: S = 1 + 4 + 3/4 = 5.75
    pytest.param({"q_out": MvNormalMeanCovariance(np.array([1.0, 2.0]), np.diag([0.5, 0.25])),
                  "q_mean": PointMass(np.zeros(2), 1)}, gamma(2.0, 2.875), id="latent-out"),
    # both latent: + tr Cov[mean] = 1 + 1: S = 5.75 + 2 − 2 E[out]ᵀE[mean] + ‖E[mean]‖² with E[mean] = (1, 0):
    # ‖(1, 2) − (1, 0)‖² + 0.75 + 2 = 4 + 2.75 = 6.75
    pytest.param({"q_out": MvNormalMeanCovariance(np.array([1.0, 2.0]), np.diag([0.5, 0.25])),
                  "q_mean": MvNormalMeanCovariance(np.array([1.0, 0.0]), np.eye(2))}, gamma(2.0, 3.375),
                 id="both-latent"),
    # a batch of two outs around one mean: S = (25, 1)
    pytest.param({"q_out": PointMass(np.array([[3.0, 4.0], [0.0, 1.0]]), 1), "q_mean": PointMass(np.zeros(2), 1)},
                 gamma([2.0, 2.0], [12.5, 0.5], -LOG_2PI - 2.0 * np.log([12.5, 0.5])), id="batched"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_precision(inputs, expected):
    assert_message(message(Node, "precision", inputs), expected)


@pytest.mark.parametrize("d, squared", [(1, 0.7), (2, 25.0), (5, 3.0)])
def test_the_clamped_log_scale_is_the_integral_of_the_factor(d, squared):
    out = np.zeros(d)
    out[0] = np.sqrt(squared)
    result = message(Node, "precision", {"q_out": PointMass(out, 1), "q_mean": PointMass(np.zeros(d), 1)})
    value, _ = integrate.quad(lambda t: (2 * np.pi) ** (-d / 2) * t ** (d / 2) * np.exp(-t * squared / 2), 0, np.inf)
    np.testing.assert_allclose(result.log_scale, np.log(value), rtol=1e-9)

"""Wishart node: DSL validation and the average energy computed by hand."""
import numpy as np
import pytest

import fgraph as fg
from fgraph.errors import ModelError
from fgraph.families import PointMass, Wishart as WishartFamily
from fgraph.nodes import Wishart
from fgraph.nodes.wishart import WishartNode
from tests.rules.tables import TOLERANCE, energy


def test_event_shape():
    with fg.Model():
        precision = Wishart("precision", df=5.0, scale=np.eye(3))
    assert precision.event_shape == (3, 3) and precision.batch_shape == ()


@pytest.mark.parametrize(
    "df, scale, message",
    [(1.0, np.eye(3), "greater than d - 1"), (4.0, np.array([[1.0, 2.0], [2.0, 1.0]]), "positive definite"),
     (-1.0, np.eye(1), "greater than d - 1")],
    ids=["too-few-degrees", "indefinite-scale", "negative-df"],
)
def test_invalid_parameters_are_reported(df, scale, message):
    with fg.Model():
        with pytest.raises(ModelError, match=message):
            Wishart("precision", df=df, scale=scale)


# U = -[(ν - d - 1)/2 E log|X| - tr(S^-1 E[X])/2 - ν d/2 log 2 - ν/2 log|S| - log Γ_d(ν/2)], Γ_2(3/2) = Γ_2(2) = π/2
ENERGY_CASES = [
    # ν = 3, d = 2, S = I, E[X] = 5 diag(1, 2): 15/2 + 3 log 2 + log(π/2)
    pytest.param({"q_out": WishartFamily(5.0, np.diag([1.0, 2.0])), "q_df": PointMass(3.0), "q_scale": PointMass(np.eye(2), 2)},
                 7.5 + 3.0 * np.log(2.0) + np.log(np.pi / 2.0), id="df-3"),
    # ν = 4: E log|X| = ψ(5/2) + ψ(2) + 2 log 2 + log 2 = 11/3 - 2γ + log 2
    pytest.param({"q_out": WishartFamily(5.0, np.diag([1.0, 2.0])), "q_df": PointMass(4.0), "q_scale": PointMass(np.eye(2), 2)},
                 -0.5 * (11.0 / 3.0 - 2.0 * np.euler_gamma + np.log(2.0)) + 7.5 + 4.0 * np.log(2.0) + np.log(np.pi / 2.0),
                 id="df-4"),
]


@pytest.mark.parametrize("inputs, expected", ENERGY_CASES)
def test_average_energy(inputs, expected):
    np.testing.assert_allclose(energy(WishartNode, inputs), expected, **TOLERANCE)


def test_average_energy_at_a_point_is_minus_the_log_density():
    value = np.array([[2.0, 0.3], [0.3, 1.0]])
    scale = np.array([[1.0, 0.2], [0.2, 0.5]])
    inputs = {"q_out": PointMass(value, 2), "q_df": PointMass(4.5), "q_scale": PointMass(scale, 2)}
    np.testing.assert_allclose(energy(WishartNode, inputs), -WishartFamily(4.5, scale).logpdf(value), **TOLERANCE)

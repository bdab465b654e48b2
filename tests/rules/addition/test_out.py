"""Table test of the addition rules towards ``out``: means add, (co)variances add, log-scale 0.

With both inputs known (observed or constant) the sum is known: a point mass at in1 + in2, log-scale 0.
The cases marked ReactiveMP are inputs and outputs of ReactiveMP.jl test/rules/addition/out_tests.jl.
"""
import numpy as np
import pytest

from fgraph.families import (
    MvNormalMeanCovariance,
    MvNormalMeanPrecision,
    NormalMeanPrecision,
    NormalMeanVariance,
    NormalWeightedMeanPrecision,
    PointMass,
)
from fgraph.nodes.addition import Addition, MvAddition
from tests.rules.tables import assert_message, message, mv_normal, normal, point_mass

CASES = [
    pytest.param(Addition, {"m_in1": NormalMeanVariance(1.0, 2.0), "m_in2": NormalMeanVariance(3.0, 4.0)},
                 normal(4.0, 6.0), id="sp"),
    # precision 2 -> variance 1/2
    pytest.param(Addition, {"m_in1": NormalMeanPrecision(-1.0, 2.0), "m_in2": NormalMeanVariance(0.5, 0.5)},
                 normal(-0.5, 1.0), id="sp-precision"),
    pytest.param(Addition, {"m_in1": NormalMeanVariance(1.0, 2.0), "q_in2": PointMass(5.0)}, normal(6.0, 2.0), id="constant-in2"),
    pytest.param(Addition, {"q_in1": PointMass(-1.0), "m_in2": NormalMeanVariance(3.0, 4.0)}, normal(2.0, 4.0), id="constant-in1"),
    pytest.param(Addition, {"m_in1": NormalMeanVariance([0.0, 1.0], 1.0), "q_in2": PointMass([1.0, 1.0])},
                 normal([1.0, 2.0], [1.0, 1.0]), id="constant-batched"),
    pytest.param(MvAddition, {"m_in1": MvNormalMeanCovariance([1.0, 2.0], np.eye(2)),
                              "m_in2": MvNormalMeanCovariance([0.0, 1.0], [[1.0, 0.5], [0.5, 1.0]])},
                 mv_normal([1.0, 3.0], [[2.0, 0.5], [0.5, 2.0]]), id="mv-sp"),
    pytest.param(MvAddition, {"m_in1": MvNormalMeanCovariance([1.0, 2.0], np.eye(2)), "q_in2": PointMass([1.0, 1.0], 1)},
                 mv_normal([2.0, 3.0], np.eye(2)), id="mv-constant-in2"),
    pytest.param(MvAddition, {"q_in1": PointMass([1.0, -1.0], 1), "m_in2": MvNormalMeanCovariance([0.0, 0.0], 2.0 * np.eye(2))},
                 mv_normal([1.0, -1.0], 2.0 * np.eye(2)), id="mv-constant-in1"),
    # both inputs known
    pytest.param(Addition, {"q_in1": PointMass(1.0), "q_in2": PointMass(1.0)}, point_mass(2.0), id="reactivemp-known-inputs"),
    pytest.param(Addition, {"q_in1": PointMass([1.5, -2.0]), "q_in2": PointMass(0.5)}, point_mass([2.0, -1.5]),
                 id="known-inputs-batched"),
    pytest.param(MvAddition, {"q_in1": PointMass([2.0], 1), "q_in2": PointMass([-2.0], 1)}, point_mass([0.0]),
                 id="reactivemp-mv-known-inputs"),
    pytest.param(MvAddition, {"q_in1": PointMass([[1.0, 2.0], [3.0, 4.0]], 1), "q_in2": PointMass([1.0, -1.0], 1)},
                 point_mass([[2.0, 1.0], [4.0, 3.0]]), id="mv-known-inputs-batched"),
    # ReactiveMP: NormalMeanPrecision(4, 7) + PointMass(1) -> NormalMeanPrecision(5, 7)
    pytest.param(Addition, {"m_in1": NormalMeanPrecision(4.0, 7.0), "q_in2": PointMass(1.0)}, normal(5.0, 1.0 / 7.0),
                 id="reactivemp-precision-constant"),
    # ReactiveMP: PointMass(-3) + NormalWeightedMeanPrecision(8, 4) -> NormalMeanVariance(-1, 1/4)
    pytest.param(Addition, {"q_in1": PointMass(-3.0), "m_in2": NormalWeightedMeanPrecision(8.0, 4.0)}, normal(-1.0, 0.25),
                 id="reactivemp-constant-weighted"),
    # ReactiveMP: NormalMeanPrecision(2, 2) + NormalMeanPrecision(-1, 3) -> NormalMeanVariance(1, 5/6)
    pytest.param(Addition, {"m_in1": NormalMeanPrecision(2.0, 2.0), "m_in2": NormalMeanPrecision(-1.0, 3.0)},
                 normal(1.0, 5.0 / 6.0), id="reactivemp-precisions"),
    # ReactiveMP: MvNormalMeanPrecision([-4, 3], [[3, 2], [2, 4]]) + PointMass([-2, 1]) -> same precision, mean [-6, 4]
    # (covariance [[4, -2], [-2, 3]] / 8)
    pytest.param(MvAddition, {"m_in1": MvNormalMeanPrecision([-4.0, 3.0], [[3.0, 2.0], [2.0, 4.0]]),
                              "q_in2": PointMass([-2.0, 1.0], 1)},
                 mv_normal([-6.0, 4.0], np.array([[4.0, -2.0], [-2.0, 3.0]]) / 8.0), id="reactivemp-mv-precision-constant"),
    # ReactiveMP: MvNormalMeanPrecision([1, 0], diag(2, 1)) + MvNormalMeanPrecision([1, -7], diag(2, 3))
    # -> MvNormalMeanCovariance([2, -7], diag(1, 4/3))
    pytest.param(MvAddition, {"m_in1": MvNormalMeanPrecision([1.0, 0.0], np.diag([2.0, 1.0])),
                              "m_in2": MvNormalMeanPrecision([1.0, -7.0], np.diag([2.0, 3.0]))},
                 mv_normal([2.0, -7.0], np.diag([1.0, 4.0 / 3.0])), id="reactivemp-mv-precisions"),
]


@pytest.mark.parametrize("node_type, inputs, expected", CASES)
def test_out(node_type, inputs, expected):
    assert_message(message(node_type, "out", inputs), expected)


def test_known_vector_inputs_give_a_point_mass_on_vectors():
    result = message(MvAddition, "out", {"q_in1": PointMass([[1.0, 2.0], [3.0, 4.0]], 1), "q_in2": PointMass([1.0, -1.0], 1)})
    assert (result.event_ndim, result.event_shape, result.batch_shape) == (1, (2,), (2,))

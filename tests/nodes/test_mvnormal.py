"""MvNormal nodes: DSL validation, event shapes, and average energies computed by hand."""
import numpy as np
import pytest

import fgraph as fg
from fgraph.errors import ModelError
from fgraph.families import MvNormalMeanCovariance, PointMass, Wishart
from fgraph.nodes import MvNormal
from fgraph.nodes.mvnormal import MvNormalMeanCovariance as MeanCovarianceNode
from fgraph.nodes.mvnormal import MvNormalMeanPrecision as MeanPrecisionNode
from tests.rules.tables import TOLERANCE, energy

LOG_2PI = np.log(2.0 * np.pi)


def test_event_and_batch_shapes():
    with fg.Model() as model:
        x = MvNormal("x", mean=np.zeros(3), cov=np.eye(3))
        y = MvNormal("y", mean=x, precision=2.0 * np.eye(3), observed=np.ones((5, 3)))
    assert x.event_shape == (3,) and x.batch_shape == ()
    assert y.event_shape == (3,) and y.batch_shape == (5,)
    assert isinstance(model.nodes[0], MeanCovarianceNode) and isinstance(model.nodes[1], MeanPrecisionNode)


@pytest.mark.parametrize(
    "keywords, message",
    [
        ({"mean": np.zeros(2), "cov": np.array([[1.0, 2.0], [2.0, 1.0]])}, "positive definite"),
        ({"mean": np.zeros(2), "cov": np.array([[1.0, 0.5], [0.0, 1.0]])}, "symmetric"),
        ({"mean": np.zeros(2), "precision": -np.eye(2)}, "positive definite"),
        ({"mean": np.zeros(2), "cov": np.eye(3)}, "must match"),
        ({"mean": 0.0, "cov": np.eye(1)}, "vector"),
    ],
    ids=["indefinite", "asymmetric", "negative-precision", "dimension-mismatch", "scalar-mean"],
)
def test_invalid_parameters_are_reported(keywords, message):
    with fg.Model():
        with pytest.raises(ModelError, match=message):
            MvNormal("x", **keywords)


def test_exactly_one_matrix_keyword():
    with fg.Model():
        with pytest.raises(ValueError, match="exactly one"):
            MvNormal("x", mean=np.zeros(2))
        with pytest.raises(ValueError, match="exactly one"):
            MvNormal("x", mean=np.zeros(2), cov=np.eye(2), precision=np.eye(2))


# U = ½ (d log 2π + E log|Σ| + tr(E[Σ^-1] S)) and ½ (d log 2π - E log|Λ| + tr(E[Λ] S)), S = E[(out - mean)(out - mean)^T]
ENERGY_CASES = [
    # S = (1, 2)(1, 2)^T, Σ = diag(1, 4): ½ (2 log 2π + log 4 + 1 + 1)
    pytest.param(MeanCovarianceNode,
                 {"q_out": PointMass([1.0, 2.0], 1), "q_mean": PointMass([0.0, 0.0], 1), "q_cov": PointMass(np.diag([1.0, 4.0]), 2)},
                 LOG_2PI + np.log(2.0) + 1.0, id="covariance-point-masses"),
    # S = I + diag(1, 0) = diag(2, 1): tr = 2 + 1/4
    pytest.param(MeanCovarianceNode,
                 {"q_out": MvNormalMeanCovariance([1.0, 0.0], np.eye(2)), "q_mean": PointMass([0.0, 0.0], 1),
                  "q_cov": PointMass(np.diag([1.0, 4.0]), 2)},
                 LOG_2PI + np.log(2.0) + 1.125, id="covariance-normal-out"),
    # Λ = diag(2, 1); S = diag(1/2, 1) + (1, -1)(1, -1)^T = [[3/2, -1], [-1, 2]]; tr(Λ S) = 5
    pytest.param(MeanPrecisionNode,
                 {"q_out": MvNormalMeanCovariance([1.0, 0.0], np.diag([0.5, 1.0])), "q_mean": PointMass([0.0, 1.0], 1),
                  "q_precision": PointMass(np.diag([2.0, 1.0]), 2)},
                 0.5 * (2.0 * LOG_2PI - np.log(2.0) + 5.0), id="precision-point-mass"),
    # Λ ~ Wishart(4, I/2): E[Λ] = 2I, E log|Λ| = ψ(2) + ψ(3/2) = 3 - 2γ - 2 log 2; S = (1, 1)(1, 1)^T, tr = 4
    pytest.param(MeanPrecisionNode,
                 {"q_out": PointMass([1.0, 1.0], 1), "q_mean": PointMass([0.0, 0.0], 1), "q_precision": Wishart(4.0, 0.5 * np.eye(2))},
                 LOG_2PI + 0.5 + np.euler_gamma + np.log(2.0), id="precision-wishart"),
]


@pytest.mark.parametrize("node_type, inputs, expected", ENERGY_CASES)
def test_average_energy(node_type, inputs, expected):
    np.testing.assert_allclose(energy(node_type, inputs), expected, **TOLERANCE)

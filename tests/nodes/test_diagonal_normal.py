"""The DiagonalNormal node: average energy against N scalar normal energies, constructor checks."""
import numpy as np
import pytest

import fgraph as fg
from fgraph.errors import DataError
from fgraph.families import MvNormalMeanCovariance, PointMass
from fgraph.families.gaussian_process import MvNormalDiagonal
from fgraph.nodes import DiagonalNormal
from fgraph.nodes.diagonal_normal import DiagonalNormalNode
from tests.rules.tables import energy


def test_energy_is_the_sum_of_scalar_normal_energies():
    variances = np.array([0.5, 2.0, 1.5])
    q_out = MvNormalMeanCovariance([1.0, 0.0, -1.0], [[1.0, 0.2, 0.0], [0.2, 2.0, 0.1], [0.0, 0.1, 0.5]])
    q_mean = MvNormalDiagonal([0.5, 0.5, 0.5], [0.3, 0.2, 0.1])
    result = energy(DiagonalNormalNode, {"q_out": q_out, "q_mean": q_mean, "q_variances": PointMass(variances, 1)})
    # −E log N(y | m, v) = ½ (log 2π v + (Var y + Var m + (E y − E m)²) / v), term by term
    spread = np.diag(q_out.cov) + q_mean.variances + (q_out.mean - q_mean.mean) ** 2
    np.testing.assert_allclose(result, np.sum(0.5 * (np.log(2 * np.pi * variances) + spread / variances)), rtol=1e-13)


def test_energy_with_point_masses_is_minus_the_log_density():
    y, m, v = np.array([1.0, 2.0]), np.array([0.0, 2.5]), np.array([0.5, 2.0])
    result = energy(DiagonalNormalNode, {"q_out": PointMass(y, 1), "q_mean": PointMass(m, 1),
                                         "q_variances": PointMass(v, 1)})
    np.testing.assert_allclose(result, -np.sum(-0.5 * np.log(2 * np.pi * v) - (y - m) ** 2 / (2 * v)), rtol=1e-13)


def test_constructor_checks_the_variances():
    with fg.Model():
        y = DiagonalNormal("y", mean=np.zeros(3), variances=np.ones(3))
        assert y.event_shape == (3,)
    with fg.Model(), pytest.raises((DataError, fg.ModelError), match="variances"):
        DiagonalNormal("y", mean=np.zeros(3), variances=np.array([1.0, -1.0, 1.0]))

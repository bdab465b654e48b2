"""Dirichlet node: average energy, event shape, validation."""
import numpy as np
import pytest
from scipy import integrate, stats

import fgraph as fg
from fgraph.families import Dirichlet as DirichletDistribution, PointMass
from fgraph.nodes import Dirichlet
from fgraph.nodes.dirichlet import DirichletNode
from tests.rules.tables import energy


def test_energy_against_integration_k2():
    """q(out) = Dir(2, 3) has out_0 ~ Beta(2, 3); U = -E[log Dir(out | 1.5, 4)] by quadrature over out_0."""
    alpha = np.array([1.5, 4.0])
    expected, _ = integrate.quad(
        lambda u: -stats.beta.pdf(u, 2.0, 3.0) * stats.dirichlet.logpdf([u, 1.0 - u], alpha), 1e-12, 1.0 - 1e-12
    )
    result = energy(DirichletNode, {"q_out": DirichletDistribution([2.0, 3.0]), "q_alpha": PointMass(alpha, 1)})
    np.testing.assert_allclose(result, expected, rtol=1e-8)


def test_energy_at_a_vertex():
    # out = (1, 0, 0) with alpha = (2, 1, 1): -log(Γ(4) / Γ(2)) = -log 6 (the zero coordinates have weight 0)
    result = energy(DirichletNode, {"q_out": PointMass([1.0, 0.0, 0.0], 1), "q_alpha": PointMass([2.0, 1.0, 1.0], 1)})
    np.testing.assert_allclose(result, -np.log(6.0), rtol=1e-12)


def test_event_shape_and_validation():
    with fg.Model():
        theta = Dirichlet("theta", alpha=np.ones((4, 3)))
        assert theta.event_shape == (3,) and theta.batch_shape == (4,)
        with pytest.raises(fg.ModelError, match="'alpha'.*strictly positive"):
            Dirichlet("bad", alpha=[1.0, 0.0])

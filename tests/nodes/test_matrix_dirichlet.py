"""MatrixDirichlet node: average energy, event shape, validation."""
import numpy as np
import pytest
from scipy import integrate, stats

import fgraph as fg
from fgraph.families import MatrixDirichlet as MatrixDirichletDistribution, PointMass
from fgraph.nodes import MatrixDirichlet
from fgraph.nodes.matrix_dirichlet import MatrixDirichletNode
from tests.rules.tables import energy


def test_energy_against_integration():
    """Columns are independent Betas for K_out = 2: U = -Σ_j E[log Beta(A_0j | alpha_0j, alpha_1j)] by quadrature."""
    beta = np.array([[2.0, 0.7], [3.0, 1.5]])
    alpha = np.array([[1.5, 1.0], [4.0, 2.0]])
    expected = sum(
        integrate.quad(lambda u: -stats.beta.pdf(u, *beta[:, j]) * stats.beta.logpdf(u, *alpha[:, j]), 1e-14, 1.0 - 1e-14)[0]
        for j in range(2)
    )
    result = energy(MatrixDirichletNode, {"q_out": MatrixDirichletDistribution(beta), "q_alpha": PointMass(alpha, 2)})
    np.testing.assert_allclose(result, expected, rtol=1e-7)


def test_event_shape_and_validation():
    with fg.Model():
        matrix = MatrixDirichlet("A", alpha=np.ones((3, 2)))
        assert matrix.event_shape == (3, 2) and matrix.batch_shape == ()
        with pytest.raises(fg.ModelError, match="'alpha'.*strictly positive"):
            MatrixDirichlet("bad", alpha=-np.ones((2, 2)))

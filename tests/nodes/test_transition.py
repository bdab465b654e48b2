"""Transition node: average energies (mean-field, structured, fixed matrix), DSL and validation."""
import numpy as np
import pytest

import fgraph as fg
from fgraph.families import Categorical as CategoricalDistribution, Contingency, PointMass
from fgraph.families import MatrixDirichlet as MatrixDirichletDistribution
from fgraph.nodes import Categorical, MatrixDirichlet, Transition
from fgraph.nodes.transition import TransitionNode
from tests.rules.tables import energy
from tests.rules.transition.brute_force import geometric_mean_matrix_by_quadrature

ALPHA = np.array([[0.8, 2.0], [1.5, 1.0]])
A = np.array([[0.9, 0.2], [0.1, 0.8]])


def test_mean_field_energy_against_quadrature():
    """-Σ_ij E[out_i] E[in_j] E[log A_ij], E[log A] by quadrature."""
    q_out, q_in = np.array([0.3, 0.7]), np.array([0.6, 0.4])
    mean_log = np.log(geometric_mean_matrix_by_quadrature(ALPHA))
    expected = -np.sum(np.outer(q_out, q_in) * mean_log)
    result = energy(TransitionNode, {"q_out": CategoricalDistribution(q_out), "q_in": CategoricalDistribution(q_in),
                                     "q_matrix": MatrixDirichletDistribution(ALPHA)})
    np.testing.assert_allclose(result, expected, rtol=1e-8)


def test_structured_energy_against_quadrature():
    table = np.array([[0.1, 0.2], [0.3, 0.4]])
    expected = -np.sum(table * np.log(geometric_mean_matrix_by_quadrature(ALPHA)))
    result = energy(TransitionNode, {"q_out_in": Contingency(table), "q_matrix": MatrixDirichletDistribution(ALPHA)})
    np.testing.assert_allclose(result, expected, rtol=1e-8)


def test_fixed_matrix_energy():
    # out = e_0 observed, q(in) = (1/2, 1/2), A = [[1, 1/2], [0, 1/2]]: -(½ log 1 + ½ log ½) = ½ log 2;
    # the structural zero A_10 has weight 0 and adds nothing
    result = energy(TransitionNode, {"q_out": PointMass([1.0, 0.0], 1), "q_in": CategoricalDistribution([0.5, 0.5]),
                                     "q_matrix": PointMass([[1.0, 0.5], [0.0, 0.5]], 2)})
    np.testing.assert_allclose(result, 0.5 * np.log(2.0), rtol=1e-12)
    # batched over the node, the (unbatched) fixed matrix broadcasts: rows A[0, :] . q_in and A[1, :] . q_in
    result = energy(TransitionNode, {"q_out": PointMass(np.eye(2), 1), "q_in": CategoricalDistribution([[1.0, 0.0], [0.0, 1.0]]),
                                     "q_matrix": PointMass(A, 2)})
    np.testing.assert_allclose(result, [-np.log(0.9), -np.log(0.8)], rtol=1e-12)


def test_observed_labels_and_event_shapes():
    emission = np.array([[0.7, 0.1], [0.2, 0.3], [0.1, 0.6]])  # 3 symbols x 2 states
    with fg.Model() as model:
        s = Categorical("s", [0.5, 0.5])
        y = Transition("y", s, emission, observed=2)
        matrix = MatrixDirichlet("B", np.ones((2, 2)))
        z = Transition("z", s, matrix)
    assert y.event_shape == (3,) and z.event_shape == (2,)
    np.testing.assert_array_equal(model.data["y"], [0.0, 0.0, 1.0])


@pytest.mark.parametrize("matrix, words", [
    ([[0.5, 0.5], [0.6, 0.5]], "column-stochastic"),
    ([[1.2, 0.5], [-0.2, 0.5]], "non-negative"),
])
def test_rejects_an_invalid_fixed_matrix(matrix, words):
    with fg.Model():
        s = Categorical("s", [0.5, 0.5])
        with pytest.raises(ValueError, match=f"matrix.*{words}"):
            Transition("t", s, matrix)


def test_rejects_a_matrix_of_the_wrong_width():
    with fg.Model():
        s = Categorical("s", [0.2, 0.3, 0.5])
        with pytest.raises(fg.ModelError, match="3"):
            Transition("t", s, A)


def test_rejects_labels_outside_the_output_range():
    with fg.Model():
        s = Categorical("s", [0.5, 0.5])
        with pytest.raises(fg.DataError, match="0..1"):
            Transition("y", s, A, observed=[0, 2])

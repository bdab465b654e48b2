"""Transition node rules towards ``in`` (module ``rules/transition/in_.py``).

The backward message is g(in = e_j) = Σ_i f̃_ij π_out,i, returned as Cat(g / Σ g) with log-scale log Σ_j g_j
(f̃ = A for a fixed matrix, Ã = exp E[log A] for a MatrixDirichlet q(A)); mean-field: ∝ exp(Σ_i E[out_i] E[log A_ij]).

Hand values: A = [[.5, .1], [.3, .3], [.2, .6]], π_out = (.2, .3, .5):
g = (.1 + .09 + .1, .02 + .09 + .3) = (.29, .41), Σ = .7.
Ã for alpha = [[1, 2], [1, 1]] is [[e^-1, e^-1/2], [e^-1, e^-3/2]] (see test_out.py).
"""
import numpy as np
import pytest

from fgraph.families import Categorical, MatrixDirichlet, PointMass
from fgraph.nodes.transition import TransitionNode
from tests.rules.tables import assert_message, message
from tests.rules.transition.brute_force import geometric_mean_matrix_by_quadrature, summed_over_out

A = np.array([[0.5, 0.1], [0.3, 0.3], [0.2, 0.6]])
ALPHA = np.array([[1.0, 2.0], [1.0, 1.0]])
E = np.e
# structured, π_out = (1/2, 1/2): g = (e^-1, ½ (e^-1/2 + e^-3/2))
STRUCTURED_WEIGHTS = np.array([E**-1, 0.5 * (E**-0.5 + E**-1.5)])
# mean-field, E[out] = (1/4, 3/4): log w = (-1, -1/8 - 9/8) = (-1, -5/4)
MEAN_FIELD_P0 = 1.0 / (1.0 + np.exp(-0.25))


def categorical(p, log_scale=0.0):
    return {"family": Categorical, "probabilities": p, "log_scale": log_scale}


CASES = [
    pytest.param({"m_out": Categorical([0.2, 0.3, 0.5]), "q_matrix": PointMass(A, 2)},
                 categorical([0.29 / 0.7, 0.41 / 0.7], np.log(0.7)), id="sp"),
    # rows of A: e_0 -> (.5, .1), Σ .6; e_2 -> (.2, .6), Σ .8
    pytest.param({"m_out": Categorical([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]), "q_matrix": PointMass(A, 2)},
                 categorical([[5 / 6, 1 / 6], [0.25, 0.75]], np.log([0.6, 0.8])), id="sp-batched"),
    pytest.param({"q_out": PointMass([0.0, 0.0, 1.0], 1), "q_matrix": PointMass(A, 2)},
                 categorical([0.25, 0.75], np.log(0.8)), id="observed-out"),
    pytest.param({"m_out": Categorical([0.5, 0.5]), "q_matrix": MatrixDirichlet(ALPHA)},
                 categorical(STRUCTURED_WEIGHTS / STRUCTURED_WEIGHTS.sum(), np.log(STRUCTURED_WEIGHTS.sum())),
                 id="structured"),
    pytest.param({"q_out": Categorical([0.25, 0.75]), "q_matrix": MatrixDirichlet(ALPHA)},
                 categorical([MEAN_FIELD_P0, 1.0 - MEAN_FIELD_P0]), id="mf"),
    # observed out under a MatrixDirichlet (mean-field): exp E[log A_1j] = (e^-1, e^-3/2), normalised
    pytest.param({"q_out": PointMass([0.0, 1.0], 1), "q_matrix": MatrixDirichlet(ALPHA)},
                 categorical([1.0 / (1.0 + np.exp(-0.5)), 1.0 - 1.0 / (1.0 + np.exp(-0.5))]), id="mf-observed-out"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_in(inputs, expected):
    assert_message(message(TransitionNode, "in", inputs), expected)


@pytest.mark.parametrize("pi_out", [[0.2, 0.3, 0.5], [0.0, 1.0, 0.0]])
def test_sum_product_against_enumeration(pi_out):
    """message(e_j) exp(log_scale) = Σ_i f(e_i, e_j, A) π_out,i."""
    result = message(TransitionNode, "in", {"m_out": Categorical(pi_out), "q_matrix": PointMass(A, 2)})
    expected = summed_over_out(A, np.asarray(pi_out))
    np.testing.assert_allclose(np.exp(result.log_scale + result.logpdf(np.eye(2))), expected, rtol=1e-12)


def test_observed_out_against_enumeration():
    y = np.array([0.0, 1.0, 0.0])
    result = message(TransitionNode, "in", {"q_out": PointMass(y, 1), "q_matrix": PointMass(A, 2)})
    expected = summed_over_out(A, y)
    np.testing.assert_allclose(np.exp(result.log_scale + result.logpdf(np.eye(2))), expected, rtol=1e-12)


def test_structured_against_enumeration_and_quadrature():
    alpha = np.array([[0.8, 2.0, 3.0], [1.5, 1.0, 0.6]])
    pi_out = np.array([0.35, 0.65])
    result = message(TransitionNode, "in", {"m_out": Categorical(pi_out), "q_matrix": MatrixDirichlet(alpha)})
    expected = summed_over_out(geometric_mean_matrix_by_quadrature(alpha), pi_out)
    np.testing.assert_allclose(np.exp(result.log_scale + result.logpdf(np.eye(3))), expected, rtol=1e-8)

"""Discrete transition node: f(out, in, matrix) = Cat(out | A in) = prod_ij A_ij**(out_i in_j).

``out`` (length K_out) and ``in`` (length K_in) are one-hot vectors and
``matrix`` ``A`` is a column-stochastic ``K_out x K_in`` matrix:
``A_ij = P(out = e_i | in = e_j)``, every column sums to one. Event ranks
are 1, 1 and 2. The matrix is either a fixed constant (validated) or a
variable, typically with a MatrixDirichlet prior. With the matrix fixed the
node is the transition (or emission) factor of a hidden Markov model.

Average energies cover the mean-field factorisation ``(out)(in)(matrix)``
(including a fixed matrix, which arrives as a point mass) and the structured
one ``(out, in)(matrix)``, whose joint marginal is a :class:`Contingency`.
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Contingency, Distribution
from fgraph.families.categorical import SIMPLEX_TOLERANCE
from fgraph.model import Variable, random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy
from fgraph.support import COLUMN_STOCHASTIC, ONE_HOT
from fgraph.nodes.categorical import num_categories_of, one_hot_observations, times_log

__all__ = ["Transition", "TransitionNode"]


def check_transition_matrix(value, name: str = "matrix") -> None:
    """Raise ValueError unless ``value`` (``(..., K_out, K_in)``) is non-negative with columns summing to one."""
    if np.any(value < 0.0):
        raise ValueError(f"{name} must be non-negative, got minimum {np.min(value)!r}")
    deviation = np.max(np.abs(value.sum(axis=-2) - 1.0))
    if deviation > SIMPLEX_TOLERANCE:
        raise ValueError(
            f"{name} must be column-stochastic (every column sums to one within {SIMPLEX_TOLERANCE:g}), "
            f"but a column sum is off by {deviation:.3g}; A[i, j] is P(out = i | in = j)"
        )


class TransitionNode(FactorNode):
    interfaces = ("out", "in", "matrix")
    event_ndims = {"out": 1, "in": 1, "matrix": 2}
    support = {"out": ONE_HOT, "in": ONE_HOT, "matrix": COLUMN_STOCHASTIC}

    @classmethod
    def out_event_shape(cls, parameters) -> tuple:
        return (num_categories_of(parameters["matrix"], axis=-2),)


def Transition(name, in_, matrix, observed=None, batch_shape=None, power=1.0):
    """A one-hot variable ``name ~ Cat(A in_)``: the next state (or emission) of a discrete chain.

    Parameters
    ----------
    in_ : Variable or one-hot array, event shape ``(K_in,)``
        The conditioning state (``in`` is a Python keyword, hence the underscore).
    matrix : array ``(..., K_out, K_in)`` or Variable
        Column-stochastic: ``matrix[i, j] = P(out = i | in = j)``.
    observed : integer labels (shape ``batch``) or one-hot array (``batch + (K_out,)``), optional
    """
    num_out = num_categories_of(matrix, axis=-2)
    num_in = num_categories_of(matrix, axis=-1)
    given = in_.event_shape if isinstance(in_, Variable) else np.shape(in_)[-1:]
    if tuple(given) != (num_in,):
        raise ModelError(
            f"Transition {name!r}: the matrix has {num_in} column(s) (K_in) but in_ has event shape {tuple(given)}"
        )
    if observed is not None and observed is not True and observed is not False:
        observed = one_hot_observations(name, observed, num_out)
    return random_variable(TransitionNode, name, {"in": in_, "matrix": matrix}, observed, batch_shape, power)


def expected_log_likelihood(counts, q_matrix: Distribution):
    """``sum_ij counts_ij E[log A_ij]`` (shape: batch), with ``0 log 0 = 0`` for structural zeros of A."""
    return times_log(counts, q_matrix.mean_log).sum(axis=(-2, -1))


@average_energy(TransitionNode)
def _transition_energy_mean_field(q_out: Distribution, q_in: Distribution, q_matrix: Distribution):
    """``-sum_ij E[out_i] E[in_j] E[log A_ij]`` (independent marginals; a fixed matrix is a point mass)."""
    counts = q_out.mean[..., :, None] * q_in.mean[..., None, :]
    return -expected_log_likelihood(counts, q_matrix)


@average_energy(TransitionNode)
def _transition_energy_structured(q_out_in: Contingency, q_matrix: Distribution):
    """``-sum_ij q(out = i, in = j) E[log A_ij]`` under the joint marginal of the cluster (out, in)."""
    return -expected_log_likelihood(q_out_in.probabilities, q_matrix)
